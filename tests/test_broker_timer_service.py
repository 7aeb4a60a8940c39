"""5.x timer wheel: the put hook, enqueue/dequeue timing, rolling, delete markers, file bytes, restarts."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pymq_ref.broker.scheduler import ManualScheduler
from pymq_ref.broker.timer import (TIMER_TOPIC, TimerConfig, TimerMessageRejected, TimerMessageStore,
                                   handle_schedule_message)
from pymq_ref.formats.hashing import java_string_hash
from pymq_ref.formats.properties import JavaHashMap
from pymq_ref.formats.timer import (TIMER_LOG_BLANK_MAGIC_CODE, TimerLogBlank, decode_raw_slot,
                                    decode_timer_checkpoint, decode_timer_log_unit)
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.delay import SCHEDULE_TOPIC
from store_helpers import msg, open_store

T0 = 1_700_000_000_500
CFG = dict(timer_slots_total=120, timer_roll_window_slot=30, mapped_file_size_timer_log=52 * 20 + 16)


def setup(root, clock=None, **kw):
    clock = clock or ManualClock(T0)
    store = open_store(root, clock, mapped_file_size_commit_log=64 * 1024)
    return clock, store, *make_timer(store, clock, **kw)


def make_timer(store, clock, **kw):
    sched = ManualScheduler(clock)
    tms = TimerMessageStore(store, sched, TimerConfig(**{**CFG, **kw}))
    tms.load()
    tms.start()
    return sched, tms


def put_timer(tms, store, i, **props):
    res = store.put_message(tms.handle_schedule_message(msg(i, **props)))
    assert res.ok
    return res


def delivered(store, topic="T"):
    out, off = [], 0
    while True:
        res = store.get_message("g", topic, 0, off, 32)
        if not res.buffers:
            return out
        out += res.records()
        off = res.next_begin_offset


# -- the put hook -------------------------------------------------------------------------------

def test_hook_rewrites_into_the_timer_topic():
    rec = msg(1, TIMER_DELAY_SEC="5")
    out = handle_schedule_message(rec, T0)
    assert (out.topic, out.queue_id) == (TIMER_TOPIC, 0)
    assert out.properties["TIMER_OUT_MS"] == str((T0 + 5000) // 1000 * 1000)
    assert out.properties["REAL_TOPIC"] == "T" and out.properties["REAL_QID"] == "0"
    m = JavaHashMap(rec.properties.items())
    m["TIMER_OUT_MS"], m["REAL_TOPIC"], m["REAL_QID"] = out.properties["TIMER_OUT_MS"], "T", "0"
    assert list(out.properties) == list(m)
    exact = handle_schedule_message(msg(1, TIMER_DELIVER_MS="1700000010000"), T0)
    assert exact.properties["TIMER_OUT_MS"] == "1700000009000"  # an exact second goes one slot earlier
    assert handle_schedule_message(msg(1, TIMER_DELAY_MS="1234"), T0).properties["TIMER_OUT_MS"] == "1700000001000"


@pytest.mark.parametrize("props,status", [
    ({"TIMER_DELAY_SEC": "x"}, "WHEEL_TIMER_MSG_ILLEGAL"),
    ({"TIMER_DELAY_SEC": str(3 * 86400 + 1)}, "WHEEL_TIMER_MSG_ILLEGAL"),
    ({"TIMER_DELIVER_MS": "1", "TIMER_DEL_UNIQKEY": "U"}, "WHEEL_TIMER_MSG_ILLEGAL")])
def test_hook_rejections(props, status):
    with pytest.raises(TimerMessageRejected) as e:
        handle_schedule_message(msg(1, **props), T0)
    assert e.value.status == status


def test_hook_disabled_past_and_delay_level():
    with pytest.raises(TimerMessageRejected, match="WHEEL_TIMER_NOT_ENABLE"):
        handle_schedule_message(msg(1, TIMER_DELAY_MS="10"), T0, TimerConfig(timer_wheel_enable=False))
    past = msg(1, TIMER_DELIVER_MS=str(T0 - 1))
    assert handle_schedule_message(past, T0) is past
    both = handle_schedule_message(msg(1, TIMER_DELAY_SEC="9", DELAY="2"), T0)
    assert both.topic == "T" and "TIMER_DELAY_SEC" not in both.properties and both.properties["DELAY"] == "2"
    half = msg(1, TIMER_DELAY_SEC="9").replace(sys_flag=0x4)
    assert handle_schedule_message(half, T0) is half


def test_delay_level_still_goes_to_schedule_topic(tmp_path):
    clock, store, sched, tms = setup(tmp_path)
    res = put_timer(tms, store, 1, TIMER_DELAY_SEC="9", DELAY="2")
    assert store.look_message_by_offset(res.append_result.wrote_offset).topic == SCHEDULE_TOPIC
    tms.shutdown()
    store.shutdown()


# -- timing ---------------------------------------------------------------------------------------

@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 900), st.integers(1, 150_000)), min_size=1, max_size=30))
def test_every_timer_fires_once_not_early(tmp_path_factory, plan):
    """Each message is delivered exactly once, never before its time and at most one precision
    (+ one 100 ms poll) late — also when its delay exceeds the 30-slot roll window."""
    clock, store, sched, tms = setup(tmp_path_factory.mktemp("t"))
    due, delays = {}, {}
    for i, (gap, delay) in enumerate(plan):
        delays[f"U{i:08d}"] = delay
        sched.advance(gap)
        put_timer(tms, store, i, TIMER_DELAY_MS=str(delay))
        due[f"U{i:08d}"] = clock.now_ms() + delay
    sched.advance(160_000)
    got = delivered(store)
    assert sorted(r.uniq_key for r in got) == sorted(due)
    for r in got:
        assert due[r.uniq_key] <= r.store_timestamp <= due[r.uniq_key] + 1000 + 100
        assert r.properties["REAL_TOPIC"] == "T"  # kept in the bytes, like delay levels
        rolls = int(r.properties.get("TIMER_ROLL_TIMES", "0"))
        if delays[r.uniq_key] >= 32_000:
            assert rolls > 0  # beyond the 30-slot window: parked and re-queued at least once
        elif delays[r.uniq_key] <= 28_000:
            assert rolls == 0
    assert tms.stats.errors == []
    tms.shutdown()
    store.shutdown()


def test_slot_chain_bytes(tmp_path):
    clock, store, sched, tms = setup(tmp_path)
    offsets = [put_timer(tms, store, i, TIMER_DELAY_MS="5000").append_result.wrote_offset for i in range(3)]
    sched.advance(100)  # enqueue
    tms.flush()
    log = (tmp_path / "timerlog" / "00000000000000000000").read_bytes()
    units = [decode_timer_log_unit(log, 52 * i) for i in range(3)]
    assert [u.prev_pos for u in units] == [-1, 0, 52]
    assert [u.offset_py for u in units] == offsets
    assert {u.real_topic_hash for u in units} == {java_string_hash("T")}
    assert {u.delayed_time_ms for u in units} == {(T0 + 5000) // 1000 * 1000}
    assert units[0].curr_write_time_ms == T0 // 1000 * 1000
    wheel = (tmp_path / "timerwheel").read_bytes()
    assert len(wheel) == 120 * 2 * 32
    t = (T0 + 5000) // 1000 * 1000
    slot = decode_raw_slot(wheel, (t // 1000 % 240) * 32)
    assert (slot.time_ms, slot.first_pos, slot.last_pos, slot.num) == (t, 0, 104, 3)
    cp = decode_timer_checkpoint((tmp_path / "config" / "timercheck").read_bytes())
    assert cp.last_timer_queue_offset == 3 - 1 or cp.last_timer_queue_offset == 3
    tms.shutdown()
    store.shutdown()


def test_timer_log_rolls_with_a_blank(tmp_path):
    clock, store, sched, tms = setup(tmp_path)
    for i in range(25):
        put_timer(tms, store, i, TIMER_DELAY_MS=str(2000 + i))
    sched.advance(100)
    tms.flush()
    first = (tmp_path / "timerlog" / "00000000000000000000").read_bytes()
    blank = decode_timer_log_unit(first, 52 * 20)
    assert isinstance(blank, TimerLogBlank) and blank.remaining == 16
    assert int.from_bytes(first[52 * 20 + 12:52 * 20 + 16], "big", signed=True) == TIMER_LOG_BLANK_MAGIC_CODE
    assert (tmp_path / "timerlog" / f"{52 * 20 + 16:020d}").exists()
    sched.advance(5000)
    assert len(delivered(store)) == 25
    tms.shutdown()
    store.shutdown()


def test_delete_marker_cancels_in_the_same_slot(tmp_path):
    clock, store, sched, tms = setup(tmp_path)
    put_timer(tms, store, 1, TIMER_DELAY_SEC="5")
    put_timer(tms, store, 2, TIMER_DELAY_SEC="5")
    put_timer(tms, store, 3, TIMER_DELAY_SEC="5", TIMER_DEL_UNIQKEY="U00000001")
    sched.advance(7000)
    assert [r.uniq_key for r in delivered(store)] == ["U00000002"]
    assert tms.stats.deleted == 1
    tms.shutdown()
    store.shutdown()


def test_already_due_at_enqueue_is_delivered_at_once(tmp_path):
    clock, store, sched, tms = setup(tmp_path)
    put_timer(tms, store, 1, TIMER_DELAY_MS="600")  # slot T0//1000*1000 = behind the write time? no: same
    tms.state = 0  # pause the service while time passes
    clock.advance(5000)
    tms.state = 1
    tms.maybe_move_write_time()
    tms.enqueue(0)
    assert tms.stats.delivered_at_enqueue == 1 and len(delivered(store)) == 1
    tms.shutdown()
    store.shutdown()


# -- restarts -------------------------------------------------------------------------------------

def test_clean_restart_no_loss_no_duplicates(tmp_path):
    clock, store, sched, tms = setup(tmp_path)
    for i in range(20):
        put_timer(tms, store, i, TIMER_DELAY_MS=str(1000 + 700 * i))
    sched.advance(6000)
    before = len(delivered(store))
    assert 0 < before < 20
    tms.shutdown()  # the wheel file is not flushed at shutdown (as 5.1.4): recovery replays the TimerLog
    sched2, tms2 = make_timer(store, clock)
    sched2.advance(20_000)
    keys = [r.uniq_key for r in delivered(store)]
    assert sorted(keys) == sorted(f"U{i:08d}" for i in range(20)) and len(keys) == 20
    tms2.shutdown()
    store.shutdown()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 40_000), st.lists(st.integers(500, 60_000), min_size=1, max_size=25))
def test_kill_and_recover(tmp_path_factory, kill_at, delays):
    """Kill the timer service without flushing at a random moment, recover on the same store: none
    lost; a duplicate is only a message first delivered after the last checkpoint (<= 1 s + a poll
    before the kill), or re-enqueued because its queue offset was not checkpointed."""
    root = tmp_path_factory.mktemp("k")
    clock, store, sched, tms = setup(root)
    for i, d in enumerate(delays):
        put_timer(tms, store, i, TIMER_DELAY_MS=str(d))
        sched.advance(137)
    sched.advance(kill_at)
    killed_at = clock.now_ms()
    cp = decode_timer_checkpoint((root / "config" / "timercheck").read_bytes(), with_spans=False)
    first = {r.uniq_key: r.store_timestamp for r in delivered(store)}
    tms.state = 0  # killed: no flush, no checkpoint; its mmaps stay as the OS has them
    sched2, tms2 = make_timer(store, clock)
    sched2.advance(70_000)
    keys = [r.uniq_key for r in delivered(store)]
    assert set(keys) == {f"U{i:08d}" for i in range(len(delays))}
    for key in {k for k in keys if keys.count(k) > 1}:
        i = int(key[1:])
        not_committed = i >= cp.last_timer_queue_offset
        assert key not in first or first[key] >= cp.last_read_time_ms or not_committed, (key, first.get(key), cp)
        assert key not in first or first[key] >= killed_at - 1100 or not_committed
    tms2.shutdown()
    store.shutdown()


def test_recovery_truncates_a_torn_timer_log(tmp_path):
    clock, store, sched, tms = setup(tmp_path)
    for i in range(3):
        put_timer(tms, store, i, TIMER_DELAY_SEC="9")
    sched.advance(1500)
    tms.state = 0
    path = tmp_path / "timerlog" / "00000000000000000000"
    with open(path, "r+b") as f:
        f.seek(3 * 52)
        f.write(b"\x00\x00\x00\x34" + b"\xff" * 20)  # half a unit with a bad magic
    sched2, tms2 = make_timer(store, clock)
    assert tms2.timer_log.max_offset == 3 * 52
    assert path.read_bytes()[3 * 52:4 * 52] == bytes(52)
    sched2.advance(10_000)
    assert sorted(r.uniq_key for r in delivered(store)) == [f"U{i:08d}" for i in range(3)]
    tms2.shutdown()
    store.shutdown()


# -- the fast paths agree with the reference codecs ---------------------------------------------

_KEYS = ["KEYS", "UNIQ_KEY", "TAGS", "WAIT", "TIMER_OUT_MS", "TIMER_ENQUEUE_MS", "TIMER_DEQUEUE_MS",
         "TIMER_ROLL_TIMES", "TIMER_DELAY_SEC", "a", "bb", "X1", "MIN_OFFSET", "zz", "k13", "k14"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_KEYS), unique=True), st.lists(st.sampled_from(["", "a\x01", "\x01v", "KEYS\x01d"])),
       st.booleans(), st.sampled_from([-1, 1_700_000_000_000]))
def test_convert_matches_a_java_hashmap_built_by_hand(keys, junk, roll, enqueue_time):
    """Text and map of ``convert`` = a JavaHashMap of the decoded record with the three puts, whatever
    the stored text looks like (duplicates and empty entries included)."""
    from pymq_ref.broker.timer import convert
    from pymq_ref.formats.message import MessageRecord, decode_record, encode_message
    from pymq_ref.formats.properties import decode_properties
    text = "\x02".join([f"{k}\x01{i}" for i, k in enumerate(keys)] + ["REAL_TOPIC\x01T", "REAL_QID\x013"] + junk)
    stored = decode_record(encode_message(MessageRecord(topic=TIMER_TOPIC, body=b"b", properties=decode_properties(text),
                                                        properties_string=text)), 0, with_spans=False)
    assert stored.properties_string == text
    out = convert(stored, enqueue_time, roll, 1_700_000_009_000)
    m = JavaHashMap(stored.properties.items())
    if enqueue_time != -1:
        m["TIMER_ENQUEUE_MS"] = str(enqueue_time)
    if roll:
        m["TIMER_ROLL_TIMES"] = str(int(m.get("TIMER_ROLL_TIMES", "0")) + 1)
    m["TIMER_DEQUEUE_MS"] = "1700000009000"
    assert out.properties_string == "\x02".join(f"{k}\x01{v}" for k, v in m.items())
    expected = {k: v for k, v in m.items() if roll or k not in ("REAL_TOPIC", "REAL_QID")}
    expected["WAIT"] = "false"
    assert list(out.properties.items()) == list(expected.items())
    assert (out.topic, out.queue_id) == ((TIMER_TOPIC, 0) if roll else ("T", 3))
    from pymq_ref.broker.timer.convert import convert_with_map
    same, text_map = convert_with_map(stored, enqueue_time, roll, 1_700_000_009_000)
    assert same == out and list(text_map.items()) == list(decode_properties(out.properties_string).items())


def test_enqueue_reader_agrees_with_decode_record(tmp_path):
    """The enqueue reads only the properties field; IPv6 hosts, other records and bad sizes fall back."""
    from pymq_ref.formats.hosts import Host
    clock, store, _sched, tms = setup(tmp_path)
    full, props_only = tms._commit_log_reader(), tms._commit_log_reader(properties_only=True)
    v6 = msg(2, TIMER_DELAY_SEC="5").replace(born_host=Host("::1", 5), sys_flag=0x10)
    for rec in (msg(1, TIMER_DELAY_SEC="5"), v6, msg(3, size=0, TIMER_DELAY_MS="7")):
        r = store.put_message(tms.handle_schedule_message(rec)).append_result
        assert props_only(r.wrote_offset, r.wrote_bytes) == full(r.wrote_offset, r.wrote_bytes).properties
        assert props_only(r.wrote_offset, r.wrote_bytes - 1) is None  # TOTALSIZE disagrees: decode_record refuses
        assert props_only(r.wrote_offset + 1, r.wrote_bytes) is None
    assert props_only(10**9, 100) is None
