"""ScheduleMessageService: per-level delivery, timing, corrections, progress file, restarts (4.9.4
``ScheduleMessageService``)."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pymq_ref.broker.schedule import DelayOffsetFileError, ScheduleMessageService
from pymq_ref.broker.scheduler import ManualScheduler
from pymq_ref.formats import fastjson
from pymq_ref.formats.hashing import tags_code
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.delay import SCHEDULE_TOPIC, DelayLevelFormatError
from pymq_ref.store.message_store import MessageStore
from store_helpers import UNIQ, msg, open_store, small_config, vector3_message

T0 = 1_700_000_000_000
DELAYS = {1: 1000, 2: 5000, 3: 10000}


def setup(tmp_path, levels="1s 5s 10s", **kw):
    clock = ManualClock(T0)
    store = open_store(tmp_path, clock, message_delay_level=levels, **kw)
    sched = ManualScheduler(clock)
    return clock, store, sched, ScheduleMessageService(store, sched)


def delivered(store, topic="T", queue_id=0):
    out, off = [], 0
    while True:
        res = store.get_message("g", topic, queue_id, off, 32)
        if not res.buffers:
            return out
        out += res.records()
        off = res.next_begin_offset


def test_a_consume_queue_file_boundary_costs_one_more_poll(tmp_path):
    """4.9.4's ``DeliverDelayedMessageTimerTask`` reads one ConsumeQueue file's tail per run and
    then always waits DELAY_FOR_A_WHILE (100 ms): a due message in the next file goes out one
    poll later than its neighbour (files of 10 units here)."""
    clock, store, sched, svc = setup(tmp_path)
    svc.start()
    due = {}
    for i, gap in enumerate([0] * 9 + [1, 0]):  # units 0-9 fill the first file, unit 10 opens the next
        sched.advance(gap)
        due[f"U{i:08d}"] = store.put_message(msg(i, DELAY="1")).append_result.store_timestamp + 1000
    sched.advance(12_000)
    late = {r.uniq_key: r.store_timestamp - due[r.uniq_key] for r in delivered(store)}
    assert [late[f"U{i:08d}"] for i in range(9)] == [0] * 9  # due at 1000: delivered at the 1000 poll
    assert late["U00000009"] == 99  # due at 1001, found not due at 1000: the next poll, 1100
    assert late["U00000010"] == 199  # due at 1001 too, but in the next file: the poll after, 1200
    svc.shutdown()
    store.shutdown()


def test_vector6_parked_then_delivered(tmp_path):
    clock, store, sched, svc = setup(tmp_path, levels="1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h")
    clock.set(1_700_000_000_123)
    props = {"KEYS": "KEY1", "UNIQ_KEY": UNIQ, "CLUSTER": "DefaultCluster", "DELAY": "3", "WAIT": "true", "TAGS": "TagA"}
    parked = store.put_message(vector3_message(properties=props))
    assert parked.append_result.wrote_bytes == 258
    svc.start()
    sched.advance(9_999)
    assert delivered(store, "TopicTest") == []
    sched.advance(200)
    [rec] = delivered(store, "TopicTest")
    stored = store.look_message_by_offset(0)
    assert rec.properties_string == stored.properties_string  # DELAY, REAL_TOPIC, REAL_QID, WAIT kept
    assert list(rec.properties) == ["REAL_TOPIC", "KEYS", "UNIQ_KEY", "CLUSTER", "DELAY", "WAIT", "TAGS", "REAL_QID"]
    assert (rec.topic, rec.queue_id, rec.body, rec.born_timestamp, rec.born_host) == (
        "TopicTest", 0, b"Hello RocketMQ", stored.born_timestamp, stored.born_host)
    assert rec.total_size == 258 - 10  # topic SCHEDULE_TOPIC_XXXX (19) -> TopicTest (9)
    assert 1_700_000_010_123 <= rec.store_timestamp <= 1_700_000_010_223
    unit = store.find_consume_queue("TopicTest", 0).get_unit(0)
    assert unit.tags_code == tags_code("TagA") and unit.phy_offset == rec.phy_offset
    assert svc.offset_table == {3: 1}
    svc.shutdown()
    assert fastjson.loads(open(tmp_path / "config" / "delayOffset.json").read()) == {"offsetTable": {3: 1}}
    store.shutdown()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 3000), st.integers(1, 4)), min_size=1, max_size=25))
def test_delivery_timing_and_fifo(tmp_path_factory, puts):
    """Every message arrives once, no earlier than store time + delay(level) and at most one poll
    (100 ms) later; within a level in put order. Level 4 (> max 3) is clamped to 3. (ConsumeQueue
    files of 64 units: no file boundary, which costs one more poll — see the next test.)"""
    clock, store, sched, svc = setup(tmp_path_factory.mktemp("s"), mapped_file_size_consume_queue=64 * 20)
    svc.start()
    expect = {}
    for i, (gap, level) in enumerate(puts):
        sched.advance(gap)
        res = store.put_message(msg(i, DELAY=str(level)))
        expect[f"U{i:08d}"] = (res.append_result.store_timestamp + DELAYS[min(level, 3)], min(level, 3))
    sched.advance(12_000)
    got = delivered(store)
    assert sorted(r.uniq_key for r in got) == sorted(expect)
    for r in got:
        due, _ = expect[r.uniq_key]
        assert due <= r.store_timestamp <= due + 100
    for level in (1, 2, 3):
        order = [r.uniq_key for r in got if expect[r.uniq_key][1] == level]
        assert order == sorted(order)  # i increases with put order
    assert svc.offset_table == {lv: sum(1 for _, l in expect.values() if l == lv) for lv in (1, 2, 3)
                                if any(l == lv for _, l in expect.values())}
    svc.shutdown()
    store.shutdown()


def test_first_run_after_one_second_then_every_100ms(tmp_path):
    clock, store, sched, svc = setup(tmp_path, levels="1s")
    store.put_message(msg(0, DELAY="1"))  # due at T0 + 1000
    clock.set(T0)
    svc.start()
    assert svc.execute_on_timeup(1, 0) == (0, 100)  # not due yet: same unit, 100 ms later
    sched.advance(999)
    assert delivered(store) == []
    sched.advance(1)
    assert [r.store_timestamp for r in delivered(store)] == [T0 + 1000]
    assert svc.execute_on_timeup(1, 1) == (1, 100)  # nothing new: stays
    assert svc.execute_on_timeup(1, 7) == (1, 100)  # beyond max: reset to max
    svc.shutdown()
    store.shutdown()


def test_correct_deliver_timestamp_after_clock_moved_back(tmp_path):
    clock, store, sched, svc = setup(tmp_path)
    clock.set(T0 + 3_600_000)
    store.put_message(msg(0, DELAY="3"))  # tagsCode = T0 + 1h + 10 s
    clock.set(T0)
    svc.start()
    assert svc.correct_deliver_timestamp(3, T0, T0 + 3_600_000 + 10_000) == T0
    assert svc.correct_deliver_timestamp(3, T0, T0 + 10_000) == T0 + 10_000
    sched.advance(1000)
    assert [r.store_timestamp for r in delivered(store)] == [T0 + 1000]  # far future => now
    svc.shutdown()
    store.shutdown()


def test_half_topic_is_never_delivered(tmp_path):
    clock, store, sched, svc = setup(tmp_path)
    store.put_message(msg(0, topic="RMQ_SYS_TRANS_HALF_TOPIC", DELAY="1"))
    store.put_message(msg(1, DELAY="1"))
    svc.start()
    sched.advance(2000)
    assert svc.stats.discarded_half == 1
    assert store.get_max_offset_in_queue("RMQ_SYS_TRANS_HALF_TOPIC", 0) == 0
    assert [r.uniq_key for r in delivered(store)] == ["U00000001"]
    svc.shutdown()
    store.shutdown()


def test_failed_put_retries_the_same_unit(tmp_path):
    """A put that fails (here: a write store whose body limit is smaller) is retried every 100 ms and
    the level's progress does not move — RocketMQ's sync mode blocks the level the same way."""
    clock, store, sched, _ = setup(tmp_path / "a")
    small = MessageStore.open(small_config(tmp_path / "b", max_message_size=4), clock)
    svc = ScheduleMessageService(store, sched, write_store=small)
    store.put_message(msg(0, DELAY="1", size=10))
    svc.start()
    sched.advance(1500)
    assert svc.stats.put_failures == 6 and svc.offset_table.get(1) is None
    assert svc.execute_on_timeup(1, 0) == (0, 100)
    svc.shutdown()
    small.shutdown()
    store.shutdown()


def test_broken_parked_record_is_retried_not_skipped(tmp_path):
    clock, store, sched, svc = setup(tmp_path)
    store.put_message(msg(0, topic=SCHEDULE_TOPIC, queue_id=0, DELAY="1"))  # parked verbatim: no REAL_TOPIC
    svc.start()
    sched.advance(1300)
    assert len(svc.stats.errors) == 4 and "REAL_TOPIC" in svc.stats.errors[0]
    assert svc.offset_table == {}
    svc.shutdown()
    store.shutdown()


def test_custom_levels_and_bad_levels(tmp_path):
    clock, store, sched, svc = setup(tmp_path / "a", levels="3s 1s")
    store.put_message(msg(0, DELAY="1"))
    store.put_message(msg(1, DELAY="2"))
    svc.start()
    sched.advance(3100)
    assert [(r.uniq_key, r.store_timestamp - T0) for r in delivered(store)] == [("U00000001", 1000), ("U00000000", 3000)]
    svc.shutdown()
    store.shutdown()
    with pytest.raises(ValueError, match="1w"):  # the store already refuses such a string at load
        open_store(tmp_path / "b", clock, message_delay_level="1s 1w")
    store = open_store(tmp_path / "c", clock)
    bad = ScheduleMessageService(store, sched, small_config(tmp_path / "c", message_delay_level="1s 1w"))
    with pytest.raises(DelayLevelFormatError, match="1w"):
        bad.start()
    store.shutdown()


# -- delayOffset.json ---------------------------------------------------------------------------

def test_progress_file_every_10s_and_at_shutdown(tmp_path):
    clock, store, sched, svc = setup(tmp_path)
    path = tmp_path / "config" / "delayOffset.json"
    for i in range(3):
        store.put_message(msg(i, DELAY="1"))
    svc.start()
    sched.advance(9_999)
    assert not path.exists() and svc.offset_table == {1: 3}
    sched.advance(1)
    assert path.read_text() == "{\n\t\"offsetTable\":{1:3\n\t}\n}"
    store.put_message(msg(3, DELAY="2"))
    sched.advance(6_000)
    assert fastjson.loads(path.read_text())["offsetTable"] == {1: 3}  # next flush at +20 s
    svc.shutdown()
    assert fastjson.loads(path.read_text())["offsetTable"] == {1: 3, 2: 1}
    assert fastjson.loads((tmp_path / "config" / "delayOffset.json.bak").read_text())["offsetTable"] == {1: 3}
    store.shutdown()


def test_load_clamps_and_falls_back_to_bak(tmp_path):
    clock, store, sched, svc = setup(tmp_path)
    for i in range(4):
        store.put_message(msg(i, DELAY="1"))
    cfg = tmp_path / "config"
    cfg.mkdir(exist_ok=True)
    (cfg / "delayOffset.json").write_text("{not json")
    (cfg / "delayOffset.json.bak").write_text('{"offsetTable":{"1":99,"2":-5,"7":3}}')
    svc.load()
    assert svc.offset_table == {1: 4, 2: -5, 7: 3}  # level 1 clamped to max; level 2 has no queue yet
    (cfg / "delayOffset.json").write_text('{"offsetTable":{"1":"x"}}')
    with pytest.raises(DelayOffsetFileError, match="offsetTable"):
        ScheduleMessageService(store, sched).load()
    store.shutdown()


# -- restart in the middle of delivery --------------------------------------------------------

@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 25_000), st.lists(st.integers(1, 3), min_size=1, max_size=40))
def test_kill_in_the_middle_then_restart(tmp_path_factory, kill_at, levels):
    """Kill the service at a random moment (no persist), restart on the same store: every parked
    message is delivered, duplicates only for units at or after the level's persisted offset."""
    root = tmp_path_factory.mktemp("k")
    clock, store, sched, svc = setup(root)
    for i, level in enumerate(levels):
        store.put_message(msg(i, DELAY=str(level)))
        clock.advance(300)
    svc.start()
    sched.advance(kill_at)
    persisted = dict(svc.file.offset_table) if (root / "config" / "delayOffset.json").exists() else {}
    on_disk = fastjson.loads((root / "config" / "delayOffset.json").read_text())["offsetTable"] if persisted else {}
    assert on_disk == persisted
    before = [r.uniq_key for r in delivered(store)]
    svc.started = False  # killed: its timers never run again and nothing is persisted
    sched2 = ManualScheduler(clock)
    svc2 = ScheduleMessageService(store, sched2)
    svc2.start()
    sched2.advance(30_000)
    after = [r.uniq_key for r in delivered(store)]
    assert after[:len(before)] == before
    assert sorted(set(after)) == sorted(f"U{i:08d}" for i in range(len(levels)))  # none lost
    dups = [k for k in after if after.count(k) > 1]
    for key in set(dups):
        i = int(key[1:])
        level = levels[i]
        unit = sum(1 for lv in levels[:i] if lv == level)
        assert unit >= on_disk.get(level, 0) and after.count(key) == 2  # only after the persisted offset
    svc2.shutdown()
    final = fastjson.loads((root / "config" / "delayOffset.json").read_text())["offsetTable"]
    assert final == {lv: levels.count(lv) for lv in set(levels)}
    store.shutdown()


def test_restart_resumes_from_persisted_offsets_without_duplicates(tmp_path):
    clock, store, sched, svc = setup(tmp_path)
    for i in range(6):
        store.put_message(msg(i, DELAY=str(1 + i % 2)))
    svc.start()
    sched.advance(3000)  # level 1 all delivered, level 2 not yet
    svc.shutdown()  # clean: persists {1: 3}
    store.shutdown()
    store = open_store(tmp_path, clock, message_delay_level="1s 5s 10s")
    sched = ManualScheduler(clock)
    svc = ScheduleMessageService(store, sched)
    svc.start()
    sched.advance(6000)
    keys = [r.uniq_key for r in delivered(store)]
    assert len(keys) == len(set(keys)) == 6
    svc.shutdown()
    store.shutdown()


def test_kill_before_first_persist_redelivers_exactly_what_was_delivered(tmp_path):
    clock, store, sched, svc = setup(tmp_path)
    for i in range(4):
        store.put_message(msg(i, DELAY="1"))
    store.put_message(msg(4, DELAY="3"))
    svc.start()
    sched.advance(9_000)  # level 1 delivered, nothing persisted yet
    svc.started = False
    assert not (tmp_path / "config" / "delayOffset.json").exists()
    sched2 = ManualScheduler(clock)
    svc2 = ScheduleMessageService(store, sched2)
    svc2.start()
    sched2.advance(5_000)
    keys = [r.uniq_key for r in delivered(store)]
    assert keys == [f"U{i:08d}" for i in range(4)] * 2 + ["U00000004"]
    svc2.shutdown()
    store.shutdown()
