"""The load-balancing views of chapters 12-13 (pymq_ref/viz/rebalance.py): the pure tables agree
with the allocation strategies, the stepper walks the rounds, the diagram and the plot draw what
they were given."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from pymq_ref.client.allocate import (AllocateMessageQueueAveragely, AllocateMessageQueueAveragelyByCircle,
                                      AllocateMessageQueueByConfig)
from pymq_ref.formats.message_queue import MessageQueue
from pymq_ref.viz.rebalance import (RebalanceStepper, assignment, assignment_diagram, assignment_text, moves,
                                    send_timeline)

MQS = [MessageQueue("T", b, q) for b in ("broker-a", "broker-b") for q in range(4)]


def test_assignment_matches_each_consumers_own_allocation():
    cids = ["c2", "c1", "c3"]
    owners = assignment(AllocateMessageQueueAveragely(), list(reversed(MQS)), cids)
    assert list(owners) == sorted(MQS)
    assert all(len(v) == 1 for v in owners.values())
    for cid in cids:
        mine = AllocateMessageQueueAveragely().allocate("g", cid, sorted(MQS), sorted(cids))
        assert {mq for mq, v in owners.items() if v == (cid,)} == set(mine)


def test_text_lists_owners_orphans_and_shared_queues():
    class Fixed:
        def allocate(self, group, cid, mq_all, cid_all):
            return AllocateMessageQueueByConfig(MQS[:3] if cid == "c1" else MQS[2:4]).allocate(group, cid, mq_all, cid_all)

    owners = assignment(Fixed(), MQS, ["c1", "c2"])
    assert owners[MQS[2]] == ("c1", "c2")
    text = assignment_text(owners, ["c1", "c2"])
    assert text.splitlines() == [
        "c1   3 | broker-a/0 broker-a/1 broker-a/2",
        "c2   2 | broker-a/2 broker-a/3",
        "(nobody)   4 | broker-b/0 broker-b/1 broker-b/2 broker-b/3",
    ]
    g = assignment_diagram(owners, ["c1", "c2"])
    assert g.source.count("->") == 5 and "#DC2626" in g.source  # the shared queue is marked


def test_moves_and_stepper_rounds():
    one = assignment(AllocateMessageQueueAveragely(), MQS, ["c1"])
    two = assignment(AllocateMessageQueueAveragelyByCircle(), MQS, ["c1", "c2"])
    moved = moves(one, two)
    assert [mq for mq, _, _ in moved] == [mq for mq in sorted(MQS) if two[mq] == ("c2",)]
    assert all(a == ("c1",) and b == ("c2",) for _, a, b in moved)
    stepper = RebalanceStepper([("c1 alone", one, ["c1"]), ("c2 joins", two, ["c1", "c2"], "a note")], title="t")
    assert len(stepper) == 2
    first = stepper.text(0)
    assert first.startswith("t\n1 / 2: c1 alone\nc1   8 |") and "moved" not in first
    second = stepper.text(5)  # clamps to the last round
    assert "2 / 2: c2 joins\na note\n" in second and "broker-a/1 c1 -> c2" in second
    assert "red border" in stepper.rounds[1].html()


def test_send_timeline_draws_every_attempt():
    attempts = [{"broker": b, "latency_ms": lat, "error": err}
                for b, lat, err in [("broker-a", 3, None), ("broker-b", 700, None), ("broker-a", 0, "refused")]]
    fig = send_timeline(attempts, events=[(2, "stop")], title="x")
    top, bottom = fig.axes
    assert sum(len(c.get_offsets()) for c in top.collections) == 3
    assert [t.get_text() for t in top.get_yticklabels()] == ["broker-a", "broker-b"]
    assert bottom.get_yscale() == "log"
    import matplotlib.pyplot as plt
    plt.close(fig)
