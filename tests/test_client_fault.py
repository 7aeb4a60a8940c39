"""Producer queue selection and latency fault tolerance against RocketMQ 4.9.4's own classes
(tests/data/rocketmq-4.9.4-client-logic, README.md there), the examples of the book's producer
chapter, and properties of the round-robin choice.

Each fault script sets a topic's route, the latency switch, (sometimes) other latency tables and
the start values of the two ThreadLocalIndex counters, then runs timed operations: the
strategy's updateFaultItem and selectOneMessageQueue, the fault table's own updateFaultItem,
isAvailable, remove and pickOneAtLeast, and snapshots of the counters and of the table (in the
order Java's ConcurrentHashMap iterates it). We replay each script on a clock that reads the
script's times and must give every answer Java gave.
"""

from __future__ import annotations

import json
import random
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pymq_ref.client.fault import (
    LATENCY_MAX, NOT_AVAILABLE_DURATION, FaultError, LatencyFaultToleranceImpl, MQFaultStrategy, ThreadLocalIndex,
    TopicPublishInfo)
from pymq_ref.errors import PymqError
from pymq_ref.formats.message_queue import MessageQueue

DATA = Path(__file__).parent / "data" / "rocketmq-4.9.4-client-logic"


@cache
def lines(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines()]


class Clock:
    """A clock the test sets; the code under test only reads it."""

    def __init__(self, now: int = 0):
        self.now = now

    def __call__(self) -> int:
        return self.now


def replay(script: dict, paths: dict | None = None) -> tuple[list, list]:
    """Our answers to a script's operations and the final snapshot; ``paths`` counts the selects
    made while every broker of the route was paused, and those that changed the publish list."""
    clock = Clock(script["t0"])
    tables = script["tables"] or (LATENCY_MAX, NOT_AVAILABLE_DURATION)
    lft = LatencyFaultToleranceImpl(clock, ThreadLocalIndex(script["worst"]))
    strategy = MQFaultStrategy(clock, send_latency_fault_enable=script["enable"], latency_max=tables[0],
                               not_available_duration=tables[1], latency_fault_tolerance=lft)
    route = [(broker, n) for broker, n in script["route"]]
    info = TopicPublishInfo([MessageQueue(script["topic"], b, q) for b, n in route for q in range(n)], route,
                            ThreadLocalIndex(script["send"]))

    def snapshot() -> list:
        return [info.send_which_queue.value, lft.which_item_worst.value,
                [[it.name, it.current_latency, it.start_timestamp] for it in lft.items()]]

    out = []
    for dt, kind, *args in script["ops"]:
        clock.now += dt
        if kind == "u":
            out.append(strategy.update_fault_item(args[0], args[1], args[2]))
        elif kind == "s":
            before = list(info.message_queue_list)
            if paths is not None and script["enable"]:
                paths["all paused"] += not any(lft.is_available(b) for b, _ in route)
            mq = strategy.select_one_message_queue(info, args[0])
            if paths is not None:
                paths["list changed"] += before != info.message_queue_list
            pos = next((i for i, x in enumerate(info.message_queue_list) if x is mq), -1)
            out.append([pos, mq.broker_name, mq.queue_id])
        elif kind == "d":
            out.append(lft.update_fault_item(args[0], args[1], args[2]))
        elif kind == "a":
            out.append(lft.is_available(args[0]))
        elif kind == "r":
            out.append(lft.remove(args[0]))
        elif kind == "p":
            out.append(lft.pick_one_at_least())
        elif kind == "t":
            out.append(snapshot())
        else:
            raise AssertionError(f"unknown op {kind}")
    return out, snapshot()


def test_the_fixture_exercises_every_path():
    scripts = lines("fault.jsonl")
    ops = [op[1] for s in scripts for op in s["ops"]]
    assert len(scripts) >= 300 and len(ops) >= 5000
    assert {"u", "s", "d", "a", "r", "p", "t"} <= set(ops)
    paths = {"all paused": 0, "list changed": 0}
    for script in scripts:
        replay(script, paths)
    assert paths["all paused"] >= 80 and paths["list changed"] >= 40, paths


@pytest.mark.parametrize("chunk", range(4))
def test_every_recorded_script(chunk):
    for script in lines("fault.jsonl")[chunk::4]:
        out, final = replay(script)
        for i, (op, got, expected) in enumerate(zip(script["ops"], out, script["java"]["out"])):
            assert got == expected, (script["id"], i, op)
        assert final == script["java"]["final"], script["id"]


def test_not_available_durations():
    for script in lines("durations.jsonl"):
        tables = script["tables"] or (LATENCY_MAX, NOT_AVAILABLE_DURATION)
        strategy = MQFaultStrategy(Clock(), latency_max=tables[0], not_available_duration=tables[1])
        got = [strategy.compute_not_available_duration(x) for x in script["latencies"]]
        assert got == script["java"]["durations"], script["id"]


# -- the book's examples -------------------------------------------------------------------------
def test_latency_table_examples():
    clock = Clock(1000)
    strategy = MQFaultStrategy(clock, send_latency_fault_enable=True)
    assert [strategy.compute_not_available_duration(x) for x in (80, 600, 2500)] == [0, 30000, 120000]
    strategy.update_fault_item("broker-a", 80, isolation=False)
    strategy.update_fault_item("broker-b", 3000, isolation=True)  # an exception: 30000 ms -> 600 s
    lft = strategy.latency_fault_tolerance
    assert {it.name: (it.current_latency, it.start_timestamp) for it in lft.items()} == {
        "broker-a": (80, 1000), "broker-b": (3000, 601000)}
    assert [it.name for it in lft.items()] == ["broker-b", "broker-a"]  # ConcurrentHashMap bins 24 and 27
    assert lft.is_available("broker-a") and not lft.is_available("broker-b") and lft.is_available("broker-z")
    clock.now = 601000
    assert lft.is_available("broker-b")


def test_switch_off_records_nothing_and_avoids_the_last_broker():
    info = TopicPublishInfo([MessageQueue("T", b, q) for b in ("a", "b") for q in range(2)],
                            send_which_queue=ThreadLocalIndex(0))
    strategy = MQFaultStrategy(Clock())
    strategy.update_fault_item("a", 99999, isolation=True)
    assert strategy.latency_fault_tolerance.items() == []
    assert [strategy.select_one_message_queue(info, None).queue_id for _ in range(4)] == [1, 0, 1, 0]  # a1 b0 b1 a0
    picks = [strategy.select_one_message_queue(info, "a") for _ in range(3)]
    assert [(mq.broker_name, mq.queue_id) for mq in picks] == [("b", 0), ("b", 1), ("b", 0)]


def test_one_broker_only_retries_on_it():
    info = TopicPublishInfo([MessageQueue("T", "a", q) for q in range(3)], send_which_queue=ThreadLocalIndex(0))
    assert [info.select_one_message_queue("a").queue_id for _ in range(2)] == [1, 2]  # 3 misses, then the next


def test_fallback_writes_into_the_publish_list_like_4_9_4_or_not():
    for mutate in (True, False):
        queues = [MessageQueue("T", "a", 0), MessageQueue("T", "b", 0)]
        info = TopicPublishInfo(queues, [("a", 1), ("b", 4)], ThreadLocalIndex(0))
        strategy = MQFaultStrategy(Clock(0), send_latency_fault_enable=True, mutate_publish_list_on_fallback=mutate)
        strategy.update_fault_item("a", 200, isolation=True)
        strategy.update_fault_item("b", 100, isolation=True)
        # counter 1: positions 1 (b) and 0 (a) are both paused; the better half of the table is b
        # (lower latency); counter 2 picks position 0, counter 3 the queue id 3 % 4
        mq = strategy.select_one_message_queue(info, None)
        assert mq == MessageQueue("T", "b", 3)
        assert info.message_queue_list[0] == (mq if mutate else MessageQueue("T", "a", 0))
        assert info.send_which_queue.value == 3


def test_a_broker_without_writable_queues_is_forgotten():
    info = TopicPublishInfo([MessageQueue("T", "a", 0)], [("a", 1)], ThreadLocalIndex(0))
    strategy = MQFaultStrategy(Clock(0), send_latency_fault_enable=True)
    lft = strategy.latency_fault_tolerance
    strategy.update_fault_item("a", 5000, isolation=False)  # 180 s
    lft.update_fault_item("z", 1, 10**6)                    # brokers of another topic
    lft.update_fault_item("y", 2, 10**6)
    # all paused; the better half of (z, y, a) is z, which has no queue here: dropped, plain round-robin
    assert strategy.select_one_message_queue(info, None) == MessageQueue("T", "a", 0)
    assert sorted(it.name for it in lft.items()) == ["a", "y"]


def test_thread_local_index_wraps_like_a_java_int():
    index = ThreadLocalIndex(2**31 - 2)
    assert [index.increment_and_get() for _ in range(3)] == [2**31 - 1, 0, 1]
    assert index.value == -(2**31) + 1
    seeded = [ThreadLocalIndex(rng=random.Random(7)).value for _ in range(2)]
    assert seeded[0] == seeded[1] and seeded[0] >= 0


def test_empty_publish_list_is_a_typed_error():
    for enable in (False, True):
        strategy = MQFaultStrategy(Clock(), send_latency_fault_enable=enable)
        with pytest.raises(FaultError) as e:
            strategy.select_one_message_queue(TopicPublishInfo([]), None)
        assert isinstance(e.value, PymqError) and isinstance(e.value, ValueError)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=2, max_size=5), st.integers(-(2**31), 2**31 - 1), st.integers(0, 4))
def test_retry_never_returns_the_last_broker_when_another_exists(counts, start, last):
    brokers = [f"broker-{i}" for i in range(len(counts))]
    info = TopicPublishInfo([MessageQueue("T", b, q) for b, n in zip(brokers, counts) for q in range(n)],
                            send_which_queue=ThreadLocalIndex(start))
    last_broker = brokers[last % len(brokers)]
    for _ in range(20):
        assert info.select_one_message_queue(last_broker).broker_name != last_broker


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.integers(0, 2**31 - 1),
       st.lists(st.tuples(st.integers(0, 3), st.integers(0, 20000), st.booleans()), max_size=6))
def test_with_the_switch_on_an_available_broker_is_always_preferred(counts, start, failures):
    clock = Clock(10**6)
    brokers = [f"broker-{i}" for i in range(len(counts))]
    info = TopicPublishInfo([MessageQueue("T", b, q) for b, n in zip(brokers, counts) for q in range(n)],
                            list(zip(brokers, counts)), ThreadLocalIndex(start))
    strategy = MQFaultStrategy(clock, send_latency_fault_enable=True)
    for which, latency, isolation in failures:
        strategy.update_fault_item(brokers[which % len(brokers)], latency, isolation)
    available = {b for b in brokers if strategy.latency_fault_tolerance.is_available(b)}
    mq = strategy.select_one_message_queue(info, None)
    if available:
        assert mq.broker_name in available
    else:
        assert mq.broker_name in brokers
