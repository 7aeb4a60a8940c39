"""Consumer allocation strategies against RocketMQ 4.9.4's own classes
(tests/data/rocketmq-4.9.4-client-logic, README.md there), the worked examples of the book's
rebalance chapter, and properties: AVG and AVG_BY_CIRCLE partition the queues, consistent hashing
moves queues only to a consumer that joins.

Each fixture scenario gives a topic's route groups, a shuffle, the client ids and whether
RebalanceImpl-style sorting applies; Java answered, for every strategy and every current client
id (each member of cidAll and a few others: a stranger, "", null), the positions of the queues
it returned or the IllegalArgumentException it threw.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pymq_ref.client.allocate import (
    AllocateError, AllocateMachineRoomNearby, AllocateMessageQueueAveragely, AllocateMessageQueueAveragelyByCircle,
    AllocateMessageQueueByConfig, AllocateMessageQueueByMachineRoom, AllocateMessageQueueConsistentHash,
    PrefixMachineRoomResolver, java_split, md5_hash, strategy_for_name)
from pymq_ref.errors import PymqError
from pymq_ref.formats.hashing import java_string_hash
from pymq_ref.formats.message_queue import MessageQueue

DATA = Path(__file__).parent / "data" / "rocketmq-4.9.4-client-logic"
DIGITS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
GROUP = "GID_client_logic"
HASHES = {"hashCode": java_string_hash, "hashCode&63": lambda key: java_string_hash(key) & 63}
KEYS = ["AVG", "AVG_BY_CIRCLE", "CH10", "CHv", "CHh", "CONFIG", "MACHINE_ROOM", "NEARBY_AVG", "NEARBY_AVG_BY_CIRCLE",
        "NEARBY_CH10"]


@cache
def scenarios() -> list[dict]:
    return [json.loads(line) for line in (DATA / "allocate.jsonl").read_text(encoding="utf-8").splitlines()]


def positions(text: str | None) -> list[int] | None:
    return None if text is None else [DIGITS.index(ch) for ch in text]


def inputs(s: dict) -> tuple[list[MessageQueue] | None, list[str] | None]:
    """mqAll and cidAll as RebalanceImpl hands them over (sorted unless the scenario says not)."""
    return _inputs(s["id"])


@cache
def _inputs(n: int) -> tuple[list[MessageQueue] | None, list[str] | None]:
    s = scenarios()[n]
    mq_all = None
    if s["groups"] is not None:
        mq_all = [MessageQueue(topic, broker, q) for topic, broker, n in s["groups"] for q in range(n)]
        if s["perm"] is not None:
            mq_all = [mq_all[i] for i in positions(s["perm"])]
    cid_all = s["cids"]
    if s["sort"]:
        mq_all = None if mq_all is None else sorted(mq_all)
        cid_all = None if cid_all is None else sorted(cid_all, key=lambda c: c.encode("utf-16-be", "surrogatepass"))
    return mq_all, cid_all


def build(key: str, s: dict):
    nearby = PrefixMachineRoomResolver("-")
    return {
        "AVG": lambda: AllocateMessageQueueAveragely(),
        "AVG_BY_CIRCLE": lambda: AllocateMessageQueueAveragelyByCircle(),
        "CH10": lambda: AllocateMessageQueueConsistentHash(10),
        "CHv": lambda: AllocateMessageQueueConsistentHash(s["vnodes"]),
        "CHh": lambda: AllocateMessageQueueConsistentHash(s["hash"][0], HASHES[s["hash"][1]]),
        "CONFIG": lambda: AllocateMessageQueueByConfig([MessageQueue(*t) for t in s["config"]]),
        "MACHINE_ROOM": lambda: AllocateMessageQueueByMachineRoom(s["idcs"]),
        "NEARBY_AVG": lambda: AllocateMachineRoomNearby(AllocateMessageQueueAveragely(), nearby),
        "NEARBY_AVG_BY_CIRCLE": lambda: AllocateMachineRoomNearby(AllocateMessageQueueAveragelyByCircle(), nearby),
        "NEARBY_CH10": lambda: AllocateMachineRoomNearby(AllocateMessageQueueConsistentHash(10), nearby),
    }[key]()


def ours(strategy, current, mq_all, cid_all):
    try:
        return strategy.allocate(GROUP, current, mq_all, cid_all)
    except AllocateError as e:
        return {"class": "IllegalArgumentException", "message": str(e)}


def test_the_fixture_covers_every_family_1000_times():
    assert len(scenarios()) >= 1000
    assert all(set(s["java"]["results"]) == set(KEYS) for s in scenarios())
    names = json.loads((DATA / "names.json").read_text())
    assert {key: build(key, {"vnodes": 1, "hash": [1, "hashCode"], "config": [], "idcs": []}).get_name()
            for key in KEYS} == names


def test_sorting_is_java_s():
    """Collections.sort of MessageQueue / String orders UTF-16 units (astral chars before U+FF01)."""
    for s in scenarios():
        if not s["sort"]:
            continue
        raw = [MessageQueue(t, b, q) for t, b, n in s["groups"] or () for q in range(n)]
        if s["perm"] is not None:
            raw = [raw[i] for i in positions(s["perm"])]
        mq_all, cid_all = inputs(s)
        if mq_all is not None:
            assert [raw[i] for i in positions(s["java"]["mq_order"])] == mq_all, s["id"]
        if cid_all is not None:
            assert [s["cids"][i] for i in positions(s["java"]["cid_order"])] == cid_all, s["id"]


@pytest.mark.parametrize("key", KEYS)
def test_every_recorded_case(key):
    checked = 0
    for s in scenarios():
        java = s["java"]
        answer = java["results"][key]
        if isinstance(answer, dict) and "new" in answer:  # the constructor threw
            with pytest.raises(AllocateError) as e:
                build(key, s)
            assert str(e.value) == java["errors"][answer["new"]]["message"]
            continue
        strategy = build(key, s)
        mq_all, cid_all = inputs(s)
        queries = list(cid_all or ()) + s["extra"]
        if isinstance(answer, dict):
            answer = [answer["all"]] * len(queries)
        assert len(answer) == len(queries)
        pool = [MessageQueue(*t) for t in s["config"]] if key == "CONFIG" else mq_all
        for current, expected in zip(queries, answer):
            if isinstance(expected, int):
                expected = java["errors"][expected]
            else:
                expected = [pool[i] for i in positions(expected)]
            assert ours(strategy, current, mq_all, cid_all) == expected, (s["id"], key, current)
            checked += 1
    assert checked >= 1000


# -- the worked examples -------------------------------------------------------------------------
def q(broker: str, queue: int, topic: str = "TopicTest") -> MessageQueue:
    return MessageQueue(topic, broker, queue)


MQ8 = [q("broker-a", i) for i in range(4)] + [q("broker-b", i) for i in range(4)]
CIDS3 = ["10.0.0.1@A", "10.0.0.2@B", "10.0.0.3@C"]


def names(mqs: list[MessageQueue]) -> str:
    return " ".join(f"{mq.broker_name[-1]}{mq.queue_id}" for mq in mqs)


@pytest.mark.parametrize("strategy, expected", [
    (AllocateMessageQueueAveragely(), ["a0 a1 a2", "a3 b0 b1", "b2 b3"]),
    (AllocateMessageQueueAveragelyByCircle(), ["a0 a3 b2", "a1 b0 b3", "a2 b1"]),
    (AllocateMessageQueueConsistentHash(), ["a0 b0", "a2 b1", "a1 a3 b2 b3"]),
])
def test_worked_example_two_brokers_three_consumers(strategy, expected):
    assert [names(strategy.allocate("G", cid, MQ8, CIDS3)) for cid in CIDS3] == expected


def test_more_consumers_than_queues():
    mqs = [q("broker-a", i) for i in range(5)]
    cids = [f"c{i}" for i in range(8)]
    for strategy in (AllocateMessageQueueAveragely(), AllocateMessageQueueAveragelyByCircle()):
        got = [strategy.allocate("G", cid, mqs, cids) for cid in cids]
        assert got == [[mqs[i]] for i in range(5)] + [[], [], []]


def test_machine_room_example():
    mqs = sorted(q(b, i) for b in ("room1@broker-a", "room2@broker-b", "broker-c") for i in range(3))
    cids = ["c0", "c1", "c2", "c3"]
    strategy = AllocateMessageQueueByMachineRoom({"room1", "room2"})
    got = {cid: [(mq.broker_name, mq.queue_id) for mq in strategy.allocate("G", cid, mqs, cids)] for cid in cids}
    assert got == {
        "c0": [("room1@broker-a", 0), ("room2@broker-b", 1)],
        "c1": [("room1@broker-a", 1), ("room2@broker-b", 2)],
        "c2": [("room1@broker-a", 2)],
        "c3": [("room2@broker-b", 0)],
    }


def test_machine_room_nearby_example():
    mqs = [q(b, i) for b in ("hz-broker1", "sh-broker1") for i in range(4)]
    cids = ["hz-c1", "hz-c2"]
    strategy = AllocateMachineRoomNearby(AllocateMessageQueueAveragely(), PrefixMachineRoomResolver())
    assert strategy.get_name() == "MACHINE_ROOM_NEARBY-AVG"
    got = {cid: [(mq.broker_name, mq.queue_id) for mq in strategy.allocate("G", cid, mqs, cids)] for cid in cids}
    assert got == {
        "hz-c1": [("hz-broker1", 0), ("hz-broker1", 1), ("sh-broker1", 0), ("sh-broker1", 1)],
        "hz-c2": [("hz-broker1", 2), ("hz-broker1", 3), ("sh-broker1", 2), ("sh-broker1", 3)],
    }


def test_md5_ring_samples():
    assert md5_hash("10.0.0.1@A-0") == 2601033215
    assert md5_hash("MessageQueue [topic=TopicTest, brokerName=broker-a, queueId=0]") == 1987926524


def test_config_ignores_its_inputs():
    fixed = [q("broker-x", 3)]
    assert AllocateMessageQueueByConfig(fixed).allocate("G", None, None, None) == fixed


def test_checks_and_errors():
    avg = AllocateMessageQueueAveragely()
    for current, mqs, cids, message in [("", MQ8, CIDS3, "currentCID is empty"),
                                        (None, MQ8, CIDS3, "currentCID is empty"),
                                        ("c", [], CIDS3, "mqAll is null or mqAll empty"),
                                        ("c", MQ8, None, "cidAll is null or cidAll empty")]:
        with pytest.raises(AllocateError, match=f"^{message}$") as e:
            avg.allocate("G", current, mqs, cids)
        assert isinstance(e.value, PymqError) and isinstance(e.value, ValueError)
    assert avg.allocate("G", "stranger", MQ8, CIDS3) == []
    with pytest.raises(AllocateError, match="^illegal virtualNodeCnt :-2$"):
        AllocateMessageQueueConsistentHash(-2)
    nearby = AllocateMachineRoomNearby(avg, PrefixMachineRoomResolver())
    with pytest.raises(AllocateError, match=r"^Machine room is null for mq MessageQueue \[topic=T, brokerName=-b"):
        nearby.allocate("G", "x-c", [q("-b", 0, "T")], ["x-c"])
    with pytest.raises(AllocateError, match="^Machine room is null for consumer id -c$"):
        nearby.allocate("G", "x-c", [q("x-b", 0)], ["-c", "x-c"])


def test_java_split_drops_trailing_empty_parts():
    assert java_split("a@b", "@") == ["a", "b"]
    assert java_split("a@b@", "@") == ["a", "b"]
    assert java_split("a@", "@") == ["a"]
    assert java_split("@b", "@") == ["", "b"]
    assert java_split("@", "@") == []
    assert java_split("", "@") == [""]
    assert java_split("a@@b", "@") == ["a", "", "b"]


def test_strategy_by_name():
    resolver = PrefixMachineRoomResolver()
    for name in ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "CONFIG"):
        assert strategy_for_name(name).get_name() == name
    assert strategy_for_name("MACHINE_ROOM", consumeridcs={"hz"}).get_name() == "MACHINE_ROOM"
    assert strategy_for_name("AllocateMessageQueueAveragelyByCircle").get_name() == "AVG_BY_CIRCLE"
    nearby = strategy_for_name("MACHINE_ROOM_NEARBY-CONSISTENT_HASH", resolver=resolver, virtual_node_cnt=3)
    assert nearby.get_name() == "MACHINE_ROOM_NEARBY-CONSISTENT_HASH" and nearby.inner.virtual_node_cnt == 3
    assert strategy_for_name("CONFIG", message_queue_list=[q("b", 1)]).allocate("G", "", [], []) == [q("b", 1)]
    for bad, options in [("ROUND_ROBIN", {}), ("MACHINE_ROOM", {}), ("MACHINE_ROOM_NEARBY-AVG", {}),
                         ("MACHINE_ROOM_NEARBY-", {"resolver": resolver})]:
        with pytest.raises(AllocateError):
            strategy_for_name(bad, **options)


# -- properties ----------------------------------------------------------------------------------
def cluster(n_queues: int, n_consumers: int) -> tuple[list[MessageQueue], list[str]]:
    mqs = sorted(q(f"broker-{i % 3}", i // 3) for i in range(n_queues))
    return mqs, sorted(f"10.0.0.{i}@{i}" for i in range(n_consumers))


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 64), st.integers(1, 25), st.sampled_from(["AVG", "AVG_BY_CIRCLE"]))
def test_every_queue_has_exactly_one_owner(n_queues, n_consumers, kind):
    mqs, cids = cluster(n_queues, n_consumers)
    strategy = strategy_for_name(kind)
    shares = [strategy.allocate("G", cid, mqs, cids) for cid in cids]
    assert sorted(mq for share in shares for mq in share) == mqs  # nothing twice, nothing left over
    sizes = [len(share) for share in shares]
    assert max(sizes) - min(sizes) <= 1
    if kind == "AVG":  # contiguous blocks in cidAll order, the bigger ones first
        assert [mq for share in shares for mq in share] == mqs and sizes == sorted(sizes, reverse=True)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["hz", "sh", "bj"]), st.integers(1, 8)), min_size=1, max_size=5),
       st.lists(st.sampled_from(["hz", "sh", "gz"]), min_size=1, max_size=8),
       st.sampled_from(["AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH"]))
def test_machine_room_nearby_gives_every_queue_one_owner(brokers, rooms, inner):
    mqs = sorted(q(f"{room}-broker{i}", k) for i, (room, n) in enumerate(brokers) for k in range(n))
    cids = sorted(f"{room}-10.0.0.{i}@{i}" for i, room in enumerate(rooms))
    strategy = AllocateMachineRoomNearby(strategy_for_name(inner), PrefixMachineRoomResolver())
    shares = {cid: strategy.allocate("G", cid, mqs, cids) for cid in cids}
    assert sorted(mq for share in shares.values() for mq in share) == mqs
    for cid, share in shares.items():  # a room with consumers keeps its queues
        assert all(mq.broker_name[:2] == cid[:2] or mq.broker_name[:2] not in rooms for mq in share)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 48), st.integers(1, 12), st.integers(1, 20))
def test_consistent_hash_moves_queues_only_to_a_consumer_that_joins(n_queues, n_consumers, vnodes):
    mqs, cids = cluster(n_queues, n_consumers)
    strategy = AllocateMessageQueueConsistentHash(vnodes)
    newcomer = "10.0.1.99@new"
    before = {mq: cid for cid in cids for mq in strategy.allocate("G", cid, mqs, cids)}
    after_cids = sorted(cids + [newcomer])
    after = {mq: cid for cid in after_cids for mq in strategy.allocate("G", cid, mqs, after_cids)}
    assert set(before) == set(after) == set(mqs)
    moved = [mq for mq in mqs if before[mq] != after[mq]]
    assert all(after[mq] == newcomer for mq in moved)


def test_consistent_hash_moves_fewer_queues_than_avg():
    mqs, cids = cluster(96, 8)
    grown = sorted(cids + ["10.0.1.99@new"])

    def moved(strategy):
        owner = lambda cs: {mq: c for c in cs for mq in strategy.allocate("G", c, mqs, cs)}  # noqa: E731
        a, b = owner(cids), owner(grown)
        return sum(a[mq] != b[mq] for mq in mqs)

    assert moved(AllocateMessageQueueConsistentHash(50)) < moved(AllocateMessageQueueAveragely()) / 2


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(["room1@b1", "room2@b2", "b3", "room3@b4", "room1@b5@", "@b6"]), min_size=1,
                max_size=6, unique=True), st.integers(1, 9), st.sets(st.sampled_from(["room1", "room2", "room3", ""])))
def test_machine_room_shares_exactly_the_eligible_queues(brokers, n_consumers, idcs):
    mqs = sorted(q(b, i) for b in brokers for i in range(3))
    cids = [f"c{i}" for i in range(n_consumers)]
    strategy = AllocateMessageQueueByMachineRoom(idcs)
    owned = [mq for cid in cids for mq in strategy.allocate("G", cid, mqs, cids)]
    assert sorted(owned) == strategy.eligible(mqs)
