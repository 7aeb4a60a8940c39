"""Our recovery against RocketMQ 4.9.4's, over the damaged stores of ``recovery_scenarios``.

tests/data/rocketmq-4.9.4-recovery/<scenario>.jsonl is what the unmodified 4.9.4 store classes
reported after opening a copy of the scenario (``load()``, ``start()``, reput to the end): min/max
physical offset, ``[min, max)`` of every queue, every unit with the message at its offset, and
the store's raw ``queryMessage`` answer for every key (README.md there). Our store opens another
copy and must report the same, field for field.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import recovery_scenarios as R
from store_helpers import tree_digest
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.message_store import MessageStore

DATA = Path(__file__).parent / "data" / "rocketmq-4.9.4-recovery"


@pytest.fixture(scope="module")
def bases(tmp_path_factory):
    """The base stores, each checked against the hashes of the one RocketMQ read."""
    root = tmp_path_factory.mktemp("recovery")
    for name, build in R.BASES.items():
        build(root / name)
        assert tree_digest(root / name) == json.loads((DATA / f"{name}.sha256.json").read_text()), \
            f"the {name} store changed: RocketMQ's answers no longer apply (tools/rocketmq_harness/regenerate.py recovery)"
    return root


def test_every_scenario_has_rocketmq_answer():
    assert sorted(p.stem for p in DATA.glob("*.jsonl")) == sorted(R.SCENARIOS)


#: where pymq_ref knowingly differs (test below)
DEVIATIONS = {"random_1"}


@pytest.mark.parametrize("scenario", sorted(set(R.SCENARIOS) - DEVIATIONS))
def test_recovery_keeps_what_rocketmq_keeps(bases, tmp_path, scenario):
    root = tmp_path / scenario
    R.make(bases, scenario, root)
    ours = R.comparable(R.readback(root))
    rocketmq = R.comparable([json.loads(line) for line in (DATA / f"{scenario}.jsonl").read_text().splitlines()])
    assert ours[0] == rocketmq[0]
    assert ours[1] == rocketmq[1]
    assert ours[2] == rocketmq[2]
    assert ours[3] == rocketmq[3] and len(ours[3]) == 1  # the checkpoint the shutdown wrote


def test_doctor_warns_about_delayed_units_rebuilt_by_abnormal_recovery(bases, tmp_path):
    """After ``delayed_units_lost`` (ours or RocketMQ's recovery: the same bytes) the two units
    carry TAGS hashes: a warning each, not a mismatch, and still counted as matched."""
    from pymq_ref.tools.doctor import run_doctor

    root = tmp_path / "store"
    R.make(bases, "delayed_units_lost", root)
    with MessageStore.open(R.config(root), ManualClock(R.T0 + 10**6)) as store:
        cq = store.find_consume_queue("SCHEDULE_TOPIC_XXXX", 2, create=False)
        assert [cq.get_unit(i).tags_code for i in range(2)] == [2598919, 2598920]  # hash("TagA"), hash("TagB")
        assert store.get_message_store_timestamp("SCHEDULE_TOPIC_XXXX", 2, 0) > 0
    report = run_doctor(str(root))
    assert [(f.code, f.severity) for f in report.findings] == [("cq_delay_unit_tags_hash", "warning")] * 2
    assert "not the delivery time" in report.findings[0].reason
    assert report.counts["consumequeue"]["units_matched"] == 4 and report.exit_status == 1


def test_a_truncated_consume_queue_keeps_no_stale_units(bases, tmp_path):
    """``random_1``: unit 2 of queue 0's first ConsumeQueue file zeroed, then a crash.
    ConsumeQueue recovery cuts the queue at unit 2; abnormal recovery appends the re-dispatched
    units 10 and 11 there. 4.9.4 leaves the old bytes after a cut, and its
    ``truncateDirtyLogicFiles`` rescans the file from its start, so the stale unit 4 (phy 3072)
    after them comes back as queue offset 4. pymq_ref zeroes what it cuts: queue 0 ends at 4.
    Everything else is the same."""
    root = tmp_path / "store"
    R.make(bases, "random_1", root)
    ours = R.comparable(R.readback(root))
    rocketmq = R.comparable([json.loads(line) for line in (DATA / "random_1.jsonl").read_text().splitlines()])
    stale = ("TopicR", 0, 4, 3072, 358, 2598920)
    assert [u[:6] for u in rocketmq[1] if u[:6] not in [o[:6] for o in ours[1]]] == [stale]
    assert [u for u in rocketmq[1] if u[:6] != stale] == ours[1]
    assert rocketmq[0]["queues"]["TopicR/0"] == [0, 5] and ours[0]["queues"]["TopicR/0"] == [0, 4]
    assert [u[3] for u in ours[1] if u[:2] == ("TopicR", 0)] == [0, 601, 7484, 8192]
