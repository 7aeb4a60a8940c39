"""Retention as RocketMQ 4.9.4 schedules it (``pymq_ref.store.retention``): the pure rules
(``deleteWhen``, the disk ratios, ``RunningFlags``), then rounds against real stores with an
injected disk probe and clock, then the threaded mode."""

from __future__ import annotations

import os
import shutil
import threading
import time
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pymq_ref.errors import PymqError
from pymq_ref.formats.batch import BatchEntry, encode_batch
from pymq_ref.formats.message import MessageRecord
from pymq_ref.store import retention as R
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.commit_log import PutMessageStatus
from pymq_ref.store.errors import ReadOnlyStoreError
from pymq_ref.store.message_store import MessageStore
from pymq_ref.store.clean_service import RetentionOptions, partition_used_ratio
from pymq_ref.store.retention import (DeleteWhenFormatError, RetentionError, RunningFlags, SpaceVerdict,
                                      is_time_to_delete, space_verdict)
from store_helpers import msg, small_config

TZ = "Asia/Shanghai"  # UTC+8, no DST: deterministic hours


def at(hour: int, minute: int = 30) -> int:
    """Epoch ms of 2024-03-10 hour:minute in TZ."""
    return int(datetime(2024, 3, 10, hour, minute, tzinfo=ZoneInfo(TZ)).timestamp() * 1000)


NOON = at(12)  # not the default deleteWhen hour (04)
EXPIRED_MTIME = NOON - 73 * 3_600_000  # older than fileReservedTime (72 h) at NOON


# -- pure rules --------------------------------------------------------------------------------
@pytest.mark.parametrize("text,value", [
    ("04", 4), ("4", 4), ("+4", 4), ("-0", 0), ("-1", -1), ("23", 23), ("0004", 4),
    ("2147483647", 2147483647), ("-2147483648", -2147483648),
    ("\u0664", 4),  # ARABIC-INDIC DIGIT FOUR: Character.digit accepts any BMP decimal digit
    ("\uff10\uff14", 4),  # FULLWIDTH 0 4
])
def test_java_parse_int_accepts(text, value):
    assert R.java_parse_int(text) == value


@pytest.mark.parametrize("text", [
    "", "+", "-", " 4", "4 ", "4\n", "4.0", "0x4", "1_0", "four", "2147483648", "-2147483649", "++4", "4-",
    "\U0001d7d2",  # MATHEMATICAL BOLD DIGIT FOUR: a surrogate pair in Java, not a digit
])
def test_java_parse_int_rejects_like_java(text):
    with pytest.raises(ValueError):
        R.java_parse_int(text)


@pytest.mark.parametrize("text,parts", [
    ("04", ["04"]), ("", [""]), ("04;16", ["04", "16"]), ("04;", ["04"]), ("04;;", ["04"]),
    (";", []), (";;", []), (";04", ["", "04"]), ("04;;16", ["04", "", "16"]),
])
def test_java_split(text, parts):
    assert R.java_split(text, ";") == parts


@pytest.mark.parametrize("when,hour,expected", [
    ("04", 4, True), ("04", 5, False), ("04", 16, False), ("4", 4, True), ("+4", 4, True),
    ("04;16", 16, True), ("16;04", 4, True), ("04;16", 0, False), ("00", 0, True), ("23", 23, True),
    ("24", 0, False), ("-1", 23, False),
    ("04;", 4, True), (";", 4, False), (";;", 0, False),
    ("04;xx", 4, True),  # the first match answers before the bad entry is parsed
    ("\u0660\u0664", 4, True),
])
def test_is_time_to_delete(when, hour, expected):
    assert is_time_to_delete(when, hour) is expected


@pytest.mark.parametrize("when,hour,entry,index", [
    ("xx", 4, "xx", 0), ("04;xx", 5, "xx", 1), ("xx;04", 4, "xx", 0), ("", 4, "", 0), (";04", 4, "", 0),
    (" 04", 4, " 04", 0), ("04 ;16", 16, "04 ", 0), ("04,16", 4, "04,16", 0), ("4.5", 4, "4.5", 0),
])
def test_is_time_to_delete_bad_entry_raises_when_reached(when, hour, entry, index):
    with pytest.raises(DeleteWhenFormatError) as ei:
        is_time_to_delete(when, hour)
    e = ei.value
    assert isinstance(e, PymqError) and (e.delete_when, e.entry, e.index) == (when, entry, index)
    assert repr(entry) in str(e)


@pytest.mark.parametrize("hour", [-1, 24, 100])
def test_is_time_to_delete_rejects_impossible_hours(hour):
    with pytest.raises(RetentionError):
        is_time_to_delete("04", hour)


@pytest.mark.parametrize("configured,clamped", [(-5, 10), (0, 10), (9, 10), (10, 10), (75, 75), (95, 95),
                                                (96, 95), (100, 95)])
def test_get_disk_max_used_space_ratio_clamps_to_10_95(configured, clamped):
    assert R.get_disk_max_used_space_ratio(configured) == clamped


@pytest.mark.parametrize("total,free,usable,ratio", [
    (100, 25, 25, 0.75),       # exact
    (1000, 100, 50, 0.95),     # used 900 / (900 + 50) = 94.7 % -> rounded up to 95
    (1000, 1000, 1000, 0.0),   # empty
    (1000, 0, 0, 1.0),         # full
    (10_000, 1501, 1001, 0.9),  # 8499 / 9500 = 89.46 % -> 90
    (10_000, 1499, 999, 0.9),   # 8501 / 9500 = 89.48 % -> 90 (not > 0.90: no disk full)
    (0, 0, 0, -1.0),           # no size
    (100, 100, 0, -1.0),       # used + usable = 0: Java's division by zero, caught -> -1
])
def test_disk_partition_space_used_percent(total, free, usable, ratio):
    assert R.disk_partition_space_used_percent(total, free, usable) == ratio


F, T, N = False, True, None
V = SpaceVerdict


@pytest.mark.parametrize("physic,logics,max_used,expected", [
    # CommitLog partition answers (logics not looked at)
    (0.80, 0.50, 0.75, V(T, F, F, F)),  # over the limit: reclaim, disk OK
    (0.80, 0.95, 0.75, V(T, F, F, F)),  # a full ConsumeQueue partition is never seen
    (0.86, 0.50, 0.75, V(T, T, N, F)),  # > 0.85: clean immediately, flag left as it was
    (0.85, 0.50, 0.75, V(T, F, F, F)),  # == 0.85 is not above it
    (0.90, 0.50, 0.75, V(T, T, N, F)),  # == 0.90: not disk full
    (0.91, 0.50, 0.75, V(T, T, T, F)),  # > 0.90: disk full
    (-1.0, 0.95, 0.75, V(T, F, F, F)),  # path missing: reclaim (expired files only), disk OK
    # CommitLog partition under the limit: the ConsumeQueue partition decides
    (0.75, 0.50, 0.75, V(F, F, F, T)),  # == limit is not over it
    (0.50, 0.76, 0.75, V(T, F, F, T)),
    (0.50, 0.87, 0.75, V(T, T, F, T)),  # the CommitLog partition's "disk OK" stands
    (0.50, 0.92, 0.75, V(T, T, T, T)),
    (0.50, -1.0, 0.75, V(T, F, F, T)),
    (0.50, 0.50, 0.75, V(F, F, F, T)),
    # diskMaxUsedSpaceRatio 95: both partitions are looked at and the last flag operation wins
    (0.92, 0.50, 0.95, V(F, T, F, T)),  # CommitLog marks full, ConsumeQueue clears it again
    (0.92, 0.87, 0.95, V(F, T, T, T)),  # ConsumeQueue leaves the flag: stays full
    (0.87, 0.92, 0.95, V(F, T, T, T)),
    (0.87, 0.50, 0.95, V(F, T, F, T)),  # cleanImmediately from the CommitLog partition survives
    (0.96, 0.50, 0.95, V(T, T, T, F)),
    (0.10, 0.11, 0.10, V(T, F, F, T)),  # the clamped minimum (10 %)
])
def test_space_verdict(physic, logics, max_used, expected):
    assert space_verdict(physic, logics, max_used) == expected


def test_space_verdict_takes_the_system_property_ratios():
    assert space_verdict(0.81, 0.5, 0.75, clean_forcibly_ratio=0.80) == V(T, T, N, F)
    assert space_verdict(0.81, 0.5, 0.75, clean_forcibly_ratio=0.70, warning_ratio=0.80) == V(T, T, T, F)


ratios = st.sampled_from([-1.0]) | st.integers(0, 100).map(lambda p: p / 100.0)


@given(ratios, ratios, st.integers(10, 95).map(lambda p: p / 100.0))
def test_space_verdict_properties(physic, logics, max_used):
    v = space_verdict(physic, logics, max_used)
    physic_answers = physic < 0 or physic > max_used
    assert v.logics_checked is (not physic_answers)
    assert v.is_space_to_delete is (physic_answers or logics < 0 or logics > max_used)
    assert v.clean_immediately is (physic > 0.85 or (not physic_answers and logics > 0.85))
    last = logics if v.logics_checked else physic
    if last > 0.90 or last <= 0.85:
        assert v.disk_full is (last > 0.90)  # the partition looked at last sets or clears the flag


@pytest.mark.parametrize("physic,full", [(0.92, True), (0.91, True), (0.90, False), (0.88, False), (-1.0, False)])
def test_is_space_full_verdict(physic, full):
    assert R.is_space_full_verdict(physic) is full


def test_disk_util_formats_like_the_broker_remark():
    assert R.disk_util(0.92, 0.5, -1) == "CL:  0.92 CQ:  0.50 INDEX: -1.00"


def test_running_flags():
    seen = []
    f = RunningFlags(on_change=lambda fl: seen.append(fl.flag_bits))
    assert f.is_writeable() and f.is_readable() and f.is_cq_writeable() and repr(f).endswith("OK)")
    assert f.get_and_make_disk_full() is True  # it was OK
    assert f.get_and_make_disk_full() is False
    assert not f.is_writeable() and f.is_cq_writeable() and f.is_disk_full()
    assert f.flag_bits == 0x10 and f.names() == ["DISK_FULL"]
    assert f.get_and_make_disk_ok() is False  # it was full
    assert f.get_and_make_disk_ok() is True and f.is_writeable()
    assert seen == [0x10, 0]  # called on changes only
    f.make_logics_queue_error()
    assert not f.is_writeable() and not f.is_cq_writeable()
    g = RunningFlags()
    assert g.get_and_make_not_writeable() is True and g.get_and_make_not_writeable() is False
    assert g.get_and_make_writeable() is False and g.is_writeable()
    g.make_index_file_error()
    assert g.names() == ["WRITE_INDEX_FILE_ERROR"] and not g.is_writeable()


# -- time of day ---------------------------------------------------------------------------------
def test_hour_of_day_in_a_fixed_zone():
    assert R.hour_of_day(at(4), ZoneInfo(TZ)) == 4
    assert R.hour_of_day(at(4), R.resolve_time_zone("UTC")) == 20  # the evening before, in UTC
    assert R.resolve_time_zone("local") is None and R.resolve_time_zone(None) is None


@pytest.fixture
def tz_env(monkeypatch):
    yield monkeypatch
    monkeypatch.undo()
    time.tzset()


def test_default_zone_is_the_machines_local_zone(tz_env):
    tz_env.setenv("TZ", "America/New_York")
    time.tzset()
    assert R.hour_of_day(at(4), None) == 15  # 04:30 in Shanghai = 15:30 EST the day before
    assert R.hour_of_day(at(20), None) == 8  # 20:30 in Shanghai = 08:30 EDT (DST began at 02:00)
    assert RetentionOptions().time_zone is None
    tz_env.setenv("TZ", "UTC")
    time.tzset()
    assert R.hour_of_day(at(4), None) == 20


# -- the probe ---------------------------------------------------------------------------------
def test_partition_used_ratio_on_real_paths(tmp_path):
    usage = shutil.disk_usage(tmp_path)  # total, used = total - f_bfree, free = f_bavail
    entire = usage.used + usage.free
    expected = (usage.used * 100 // entire + (1 if usage.used * 100 % entire else 0)) / 100
    assert partition_used_ratio(str(tmp_path)) == expected
    assert 0 <= expected <= 1 and round(expected, 2) == expected
    (tmp_path / "f").write_bytes(b"x")
    assert partition_used_ratio(str(tmp_path / "f")) == expected  # a file: its partition
    assert partition_used_ratio(str(tmp_path / "missing")) == -1
    assert partition_used_ratio("") == -1


# -- rounds against a real store ----------------------------------------------------------------
class Probe:
    """The injected disk probe: ``physic`` for the CommitLog directory, ``logics`` for consumequeue/."""

    def __init__(self, physic: float = 0.5, logics: float = 0.5):
        self.physic, self.logics = physic, logics
        self.paths: list[str] = []

    def __call__(self, path: str) -> float:
        self.paths.append(path)
        if path.endswith("commitlog"):
            return self.physic
        if path.endswith("consumequeue"):
            return self.logics
        if path.endswith("index"):  # only the send path's diskUtil() looks at it
            return self.logics
        raise AssertionError(f"unexpected probe path {path}")


def open_store(tmp_path, probe: Probe, *, start_ms: int = NOON, threads: bool = False, options=None, **cfg):
    opts = dict(disk_usage_probe=probe, time_zone=TZ)
    opts.update(options or {})
    cfg.setdefault("mapped_file_size_consume_queue", 200)  # 10 units a file
    return MessageStore.open(small_config(tmp_path, **cfg), ManualClock(start_ms), threads=threads,
                             retention=RetentionOptions(**opts))


def fill(store, files: int, topic: str = "T", start: int = 0) -> int:
    """Put messages until the CommitLog has ``files`` files; returns how many were put."""
    i = start
    while len(store.commit_log.queue.files) < files:
        assert store.put_message(msg(i, topic=topic, size=100)).status is PutMessageStatus.PUT_OK
        i += 1
    return i - start


def age(store, n: int, mtime_ms: int = EXPIRED_MTIME) -> None:
    for mf in store.commit_log.queue.files[:n]:
        os.utime(mf.path, ns=(mtime_ms * 1_000_000,) * 2)


def names(store) -> list[str]:
    return [mf.file_name for mf in store.commit_log.queue.files]


def logic_files_follow(store) -> bool:
    """ConsumeQueue and index files below the CommitLog min offset are gone (never the last)."""
    min_phy = store.get_min_phy_offset()
    for cq in store._all_cqs():
        for mf in cq.queue.files[:-1]:
            if int.from_bytes(mf.read(mf.file_size - 20, 8), "big") < min_phy:  # its last unit
                return False
        first = cq.get_unit(cq.min_offset_in_queue)
        if first is not None and first.phy_offset < min_phy:
            return False
    return all(f.end_phy_offset >= min_phy for f in store.index_service.files[:-1])


def assert_logic_files_follow(store) -> None:
    assert logic_files_follow(store)


def test_time_not_up_disk_80_deletes_expired_files_only(tmp_path):
    probe = Probe(physic=0.80)
    store = open_store(tmp_path, probe)
    fill(store, 6)
    before = names(store)
    cqs_before = len(store.find_consume_queue("T", 0).queue.files)
    idx_before = len(store.index_service.files)
    age(store, 2)
    r = store.clean_service.run_once()
    assert (r.hour_of_day, r.timeup, r.spacefull, r.clean_at_once, r.error) == (12, False, True, False, None)
    assert r.verdict == V(T, F, F, F) and r.logics_ratio is None  # the CommitLog partition answered
    assert r.commit_log_files_deleted == 2 and names(store) == before[2:]
    assert r.min_offset_grew and r.consume_queue_files_deleted > 0 and r.index_files_deleted > 0
    assert len(store.find_consume_queue("T", 0).queue.files) == cqs_before - r.consume_queue_files_deleted
    assert len(store.index_service.files) == idx_before - r.index_files_deleted
    assert_logic_files_follow(store)
    g = store.get_message("g", "T", 0, 0, 4)
    assert g.status.name == "OFFSET_TOO_SMALL" and g.next_begin_offset == store.get_min_offset_in_queue("T", 0)
    assert store.get_message("g", "T", 0, g.next_begin_offset, 4).status.name == "FOUND"
    r2 = store.clean_service.run_once()  # nothing else is expired
    assert r2.commit_log_files_deleted == 0 and not r2.min_offset_grew
    assert store.put_message(msg(999)).status is PutMessageStatus.PUT_OK
    store.shutdown()


def test_disk_87_deletes_unexpired_files_but_never_the_last_and_at_most_10(tmp_path):
    store = open_store(tmp_path, Probe(physic=0.87))
    fill(store, 14)
    before = names(store)
    r = store.clean_service.run_once()
    assert r.spacefull and r.clean_at_once and r.verdict.disk_full is None
    assert r.commit_log_files_deleted == 10 and names(store) == before[10:]
    r = store.clean_service.run_once()
    assert r.commit_log_files_deleted == 3 and names(store) == before[-1:]  # the last file stays
    assert store.clean_service.run_once().commit_log_files_deleted == 0
    assert_logic_files_follow(store)
    assert store.put_message(msg(999)).status is PutMessageStatus.PUT_OK  # 87 % is not "disk full"
    store.shutdown()


def test_clean_file_forcibly_disabled_keeps_unexpired_files(tmp_path):
    store = open_store(tmp_path, Probe(physic=0.87), clean_file_forcibly_enable=False)
    fill(store, 5)
    age(store, 1)
    r = store.clean_service.run_once()
    assert r.spacefull and not r.clean_at_once and r.commit_log_files_deleted == 1
    store.shutdown()


def _batch(i: int) -> MessageRecord:
    body = encode_batch([BatchEntry(body=b"b%d" % k, properties={"UNIQ_KEY": f"B{i}-{k}"}) for k in range(2)])
    return MessageRecord(topic="T", body=body, queue_id=0, properties={})


def test_disk_92_refuses_puts_until_the_ratio_drops(tmp_path):
    probe = Probe(physic=0.92)
    store = open_store(tmp_path, probe)
    fill(store, 3)
    r = store.clean_service.run_once()
    assert r.verdict.disk_full is True and r.clean_at_once and r.commit_log_files_deleted == 2
    assert store.running_flags.is_disk_full()
    refused = store.put_message(msg(1000))
    assert refused.status is PutMessageStatus.SERVICE_NOT_AVAILABLE and "DISK_FULL" in refused.error
    assert store.put_messages(_batch(1)).status is PutMessageStatus.SERVICE_NOT_AVAILABLE
    max_before = store.get_max_phy_offset()
    # 0.88: the clean round leaves the flag as it is (only <= 0.85 clears it there) ...
    probe.physic = 0.88
    store.clean_service.run_once()
    assert store.put_message(msg(1001)).status is PutMessageStatus.SERVICE_NOT_AVAILABLE
    assert store.get_max_phy_offset() == max_before  # nothing was written
    # ... while the disk check clears it at <= 0.90
    assert store.clean_service.check_disk() is False
    assert store.put_message(msg(1002)).status is PutMessageStatus.PUT_OK
    assert store.put_messages(_batch(2)).status is PutMessageStatus.PUT_OK
    # the disk check sets it too (CommitLog partition only), and a clean round at <= 0.85 clears it
    probe.physic = 0.91
    assert store.clean_service.check_disk() is True
    assert store.put_message(msg(1003)).status is PutMessageStatus.SERVICE_NOT_AVAILABLE
    probe.physic = 0.85
    assert store.clean_service.run_once().verdict.disk_full is False
    assert store.put_message(msg(1004)).status is PutMessageStatus.PUT_OK
    store.shutdown()


def test_a_full_consume_queue_partition(tmp_path):
    probe = Probe(physic=0.50, logics=0.92)
    store = open_store(tmp_path, probe)
    fill(store, 4)
    r = store.clean_service.run_once()
    assert r.verdict == V(T, T, T, T) and r.logics_ratio == 0.92 and r.commit_log_files_deleted == 3
    assert store.put_message(msg(1000)).status is PutMessageStatus.SERVICE_NOT_AVAILABLE
    assert store.clean_service.check_disk() is False  # the disk check only looks at the CommitLog one
    assert store.put_message(msg(1001)).status is PutMessageStatus.PUT_OK
    # a CommitLog partition over the limit answers first: the full ConsumeQueue one is not seen
    probe.physic = 0.80
    r = store.clean_service.run_once()
    assert r.verdict == V(T, F, F, F) and r.logics_ratio is None and not store.running_flags.is_disk_full()
    store.shutdown()


@pytest.mark.parametrize("physic,logics", [(-1.0, 0.5), (0.5, -1.0)])
def test_ratio_minus_one_reclaims_expired_files_every_round(tmp_path, physic, logics):
    probe = Probe(physic=0.92)
    store = open_store(tmp_path, probe)
    fill(store, 6)
    store.clean_service.check_disk()
    assert store.running_flags.is_disk_full()
    probe.physic, probe.logics = physic, logics
    age(store, 2)
    r = store.clean_service.run_once()  # at noon: not the deleteWhen hour
    assert not r.timeup and r.spacefull and not r.clean_at_once and r.verdict.disk_full is False
    assert r.commit_log_files_deleted == 2 and len(store.commit_log.queue.files) == 4
    assert not store.running_flags.is_disk_full()  # -1 marks the disk OK
    age(store, 1)
    assert store.clean_service.run_once().commit_log_files_deleted == 1  # and again next round
    assert store.clean_service.run_once().commit_log_files_deleted == 0  # unexpired files stay
    store.shutdown()


def test_disk_check_with_a_missing_path_marks_ok(tmp_path):
    probe = Probe(physic=0.95)
    store = open_store(tmp_path, probe)
    store.clean_service.check_disk()
    probe.physic = -1.0
    assert store.clean_service.check_disk() is False and store.running_flags.is_writeable()
    store.shutdown()


def test_the_default_probe_reads_the_store_partition(tmp_path):
    store = MessageStore.open(small_config(tmp_path), ManualClock(NOON),
                              retention=RetentionOptions(time_zone=TZ))
    real = partition_used_ratio(store.config.store_path_commit_log_dir)
    r = store.clean_service.run_once()
    assert r.physic_ratio == real and r.error is None
    store.shutdown()


def test_time_up_deletes_expired_files_at_the_configured_hours(tmp_path):
    probe = Probe(physic=0.50)
    store = open_store(tmp_path, probe, start_ms=at(16), delete_when="04;16")
    fill(store, 5)
    age(store, 2)
    clock = store.clock
    clock.set(at(15))
    r = store.clean_service.run_once()
    assert (r.hour_of_day, r.timeup, r.spacefull, r.commit_log_files_deleted) == (15, False, False, 0)
    clock.set(at(16))
    r = store.clean_service.run_once()
    assert (r.timeup, r.clean_at_once, r.commit_log_files_deleted) == (True, False, 2)
    store.shutdown()


def test_clamped_ratio_95_quirk_full_then_ok_in_one_round(tmp_path):
    probe = Probe(physic=0.92, logics=0.50)
    store = open_store(tmp_path, probe, disk_max_used_space_ratio=100)  # read as 95
    fill(store, 4)
    r = store.clean_service.run_once()  # noon
    assert r.verdict == V(F, T, F, T) and not r.spacefull and r.commit_log_files_deleted == 0
    assert store.running_flags.is_writeable()  # the ConsumeQueue partition cleared DISK_FULL again
    store.clock.set(at(4))
    r = store.clean_service.run_once()  # deleteWhen hour + cleanImmediately: unexpired files go
    assert r.timeup and r.clean_at_once and r.commit_log_files_deleted == 3
    store.shutdown()


def test_clamped_ratio_10(tmp_path):
    store = open_store(tmp_path, Probe(physic=0.11, logics=0.0), disk_max_used_space_ratio=5)  # read as 10
    fill(store, 3)
    age(store, 1)
    r = store.clean_service.run_once()
    assert r.spacefull and r.commit_log_files_deleted == 1
    store.shutdown()


def test_malformed_delete_when_stops_the_commit_log_part_of_every_round(tmp_path):
    probe = Probe(physic=0.92)
    store = open_store(tmp_path, probe, delete_when="04;x")
    fill(store, 4)
    age(store, 3)
    store.execute_delete_files_manually()
    r = store.clean_service.run_once()  # noon: "04" does not match, "x" is parsed and fails
    assert isinstance(r.error, DeleteWhenFormatError) and r.error.entry == "x"
    assert r.verdict is None and r.commit_log_files_deleted == 0 and len(store.commit_log.queue.files) == 4
    assert store.running_flags.is_writeable()  # the disk rules were never evaluated
    assert store.clean_service.clean_commit_log_service.manual_delete_file_several_times == 20
    assert store.clean_service.check_disk() is True  # the disk check still works
    store.clock.set(at(4))
    r = store.clean_service.run_once()  # "04" matches before "x" is reached
    assert r.error is None and r.timeup and r.commit_log_files_deleted == 3
    store.shutdown()


def test_manual_deletion_counts_down_over_20_rounds(tmp_path):
    store = open_store(tmp_path, Probe(physic=0.50))
    fill(store, 25)
    svc = store.clean_service
    assert svc.run_once().commit_log_files_deleted == 0  # nothing due: not the hour, disk fine
    age(store, 24)
    assert svc.run_once().commit_log_files_deleted == 0  # expired, but nobody asked
    store.execute_delete_files_manually()
    countdown = lambda: svc.clean_commit_log_service.manual_delete_file_several_times  # noqa: E731
    assert countdown() == 20
    deleted = [svc.run_once().commit_log_files_deleted for _ in range(3)]
    assert deleted == [10, 10, 4] and countdown() == 17  # every round uses one, deleting or not
    fill(store, 5, start=10_000)
    age(store, 1, NOON + 3_600_000)  # not expired: manual deletion does not clean immediately
    rounds = [svc.run_once() for _ in range(17)]
    assert all(r.manual_delete and r.commit_log_files_deleted == 0 for r in rounds) and countdown() == 0
    age(store, 4)
    r = svc.run_once()
    assert not r.manual_delete and r.commit_log_files_deleted == 0  # the countdown is over
    store.execute_delete_files_manually()
    assert svc.run_once().commit_log_files_deleted == 4 and countdown() == 19
    store.shutdown()


def test_consume_queue_service_acts_only_when_the_commit_log_min_offset_grew(tmp_path):
    store = open_store(tmp_path, Probe(physic=0.50))
    for i in range(10):  # queue A/0: exactly one full ConsumeQueue file, written first
        store.put_message(msg(i, topic="A", size=100))
    fill(store, 6, topic="B", start=100)
    a = store.find_consume_queue("A", 0)
    assert len(a.queue.files) == 1
    store.execute_delete_files_manually()
    age(store, 5)
    r = store.clean_service.run_once()
    assert r.commit_log_files_deleted == 5 and r.min_offset_grew
    assert len(a.queue.files) == 1  # every unit is below the min offset, but it is the last file
    fill(store, 2, topic="B", start=500)
    store.put_message(msg(50, topic="A", size=100))  # A's second file: now the first one could go
    assert len(a.queue.files) == 2
    r = store.clean_service.run_once()  # manual countdown: but nothing expired, min offset unchanged
    assert r.commit_log_files_deleted == 0 and not r.min_offset_grew and len(a.queue.files) == 2
    age(store, 1)  # the file before the one holding A's unit 10
    r = store.clean_service.run_once()
    assert r.commit_log_files_deleted == 1 and r.min_offset_grew and r.consume_queue_files_deleted >= 1
    assert len(a.queue.files) == 1 and store.get_min_offset_in_queue("A", 0) == 10
    assert_logic_files_follow(store)
    store.shutdown()


def test_delete_expired_files_still_forces_the_consume_queues(tmp_path):
    store = open_store(tmp_path, Probe())
    for i in range(10):
        store.put_message(msg(i, topic="A", size=100))
    fill(store, 4, topic="B", start=100)
    a = store.find_consume_queue("A", 0)
    assert store.delete_expired_files(clean_immediately=True) == 3
    store.put_message(msg(50, topic="A", size=100))
    assert len(a.queue.files) == 2
    assert store.delete_expired_files() == 0  # min offset did not move; the old API still cleans
    assert len(a.queue.files) == 1
    store.shutdown()


def test_a_commit_log_file_not_yet_dispatched_is_kept(tmp_path):
    store = open_store(tmp_path, Probe(physic=0.87))
    fill(store, 4)
    files = store.commit_log.queue.files
    caught_up = store.reput_from_offset
    store.reput_from_offset = files[1].file_from_offset + 100  # as if the reput were still in file 2
    assert store.clean_service.run_once().commit_log_files_deleted == 1  # RocketMQ would delete 3
    store.reput_from_offset = caught_up
    assert store.clean_service.run_once().commit_log_files_deleted == 2
    store.shutdown()


def test_read_only_store_is_never_cleaned(tmp_path):
    store = open_store(tmp_path, Probe())
    fill(store, 3)
    store.shutdown()
    ro = MessageStore.open(small_config(tmp_path, mapped_file_size_consume_queue=200), ManualClock(NOON),
                           read_only=True, retention=RetentionOptions(disk_usage_probe=Probe(physic=0.95)))
    with pytest.raises(ReadOnlyStoreError):
        ro.clean_service.run_once()
    with pytest.raises(ReadOnlyStoreError):
        ro.delete_expired_files(clean_immediately=True)
    assert len(ro.commit_log.queue.files) == 3
    ro.shutdown()


def _service_threads(ignore=frozenset()) -> list[threading.Thread]:
    """The retention services' threads, but those in ``ignore`` (another test's store may still be
    alive in this process)."""
    return [t for t in threading.enumerate()
            if t.name in ("CleanFilesService", "DiskCheckService") and t not in ignore]


def test_deterministic_mode_runs_nothing_by_itself(tmp_path):
    before = set(_service_threads())
    store = open_store(tmp_path, Probe(physic=0.95))
    fill(store, 3)
    assert store.clean_service.rounds == 0 and store.clean_service.disk_checks == 0
    assert store.put_message(msg(999)).status is PutMessageStatus.PUT_OK
    assert not _service_threads(before)
    store.shutdown()


# -- threaded mode ----------------------------------------------------------------------------
def wait_for(cond, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.005)


FAST = dict(clean_files_initial_delay_ms=0, disk_check_initial_delay_ms=0, disk_check_interval_ms=10)


def test_threaded_mode_runs_rounds_and_disk_checks(tmp_path):
    probe = Probe(physic=0.50)
    store = open_store(tmp_path, probe, threads=True, options=FAST, clean_resource_interval=10,
                       delete_commit_log_files_interval=5, delete_consume_queue_files_interval=1)
    try:
        svc = store.clean_service
        wait_for(lambda: svc.rounds >= 1 and svc.disk_checks >= 1)
        fill(store, 5)
        wait_for(lambda: store.dispatch_behind_bytes() == 0)
        probe.physic = 0.87
        wait_for(lambda: len(store.commit_log.queue.files) == 1)
        wait_for(lambda: len(store.find_consume_queue("T", 0).queue.files) == 1 and logic_files_follow(store))
        probe.physic = 0.92
        wait_for(lambda: store.put_message(msg(1000)).status is PutMessageStatus.SERVICE_NOT_AVAILABLE)
        probe.physic = 0.50
        wait_for(lambda: store.put_message(msg(1001)).status is PutMessageStatus.PUT_OK)
    finally:
        store.shutdown()
    assert not os.path.exists(store.abort_path)


def test_threaded_schedule_uses_rocketmqs_delays_by_default(tmp_path):
    store = open_store(tmp_path, Probe(), threads=True, options={})
    clean, disk = store.clean_service._tasks
    assert (clean.initial_delay_ms, clean.period_ms) == (60_000, 10_000)  # cleanResourceInterval
    assert (disk.initial_delay_ms, disk.period_ms) == (1_000, 10_000)
    store.shutdown()


def test_shutdown_interrupts_a_round_waiting_between_deletions(tmp_path):
    probe = Probe(physic=0.50)
    before = set(_service_threads())
    store = open_store(tmp_path, probe, threads=True, options=FAST, clean_resource_interval=10,
                       delete_commit_log_files_interval=600_000)  # 10 minutes between deletions
    try:
        fill(store, 4)
        probe.physic = 0.87
        wait_for(lambda: len(store.commit_log.queue.files) == 3)  # first deletion done, now pausing
    finally:
        started = time.monotonic()
        store.shutdown()
    assert time.monotonic() - started < 5  # far below the 10-minute pause
    assert not _service_threads(before)
    assert len(os.listdir(store.config.store_path_commit_log_dir)) == 3


# -- readers racing a deletion (threaded mode: a round may delete a file a reader just looked up) --

def test_readers_treat_a_file_deleted_under_them_as_gone(tmp_path):
    """The state a reader sees when retention closes a file between its lookup and its read: the
    CommitLog read answers None and the ConsumeQueue walk stops, as a Java reader gets null."""
    from store_helpers import msg, open_store

    store = open_store(tmp_path, mapped_file_size_commit_log=1024, mapped_file_size_consume_queue=100)
    for i in range(30):
        assert store.put_message(msg(i, size=60)).ok
    cl_queue = store.commit_log.queue
    assert len(cl_queue.files) > 2
    first = cl_queue.files[0]
    cq = store.find_consume_queue("T", 0, create=False)
    units = cq.iter_units_from(0)
    assert next(units)[0] == 0
    cq_first = cq.queue.files[0]
    first.destroy()  # closed and unlinked, still in the list: the lookup returned it before the pop
    cq_first.destroy()
    assert cl_queue.read(first.file_from_offset, 8) is None
    assert list(units) == []
    assert cq.get_unit(0) is None
    assert store.commit_log.get_data(cl_queue.files[1].file_from_offset, 8) is not None  # the others still read
    cl_queue.files.pop(0)
    cq.queue.files.pop(0)
    store.shutdown()


# -- what a full disk means beyond retention ------------------------------------------------------

def test_full_disk_keeps_the_abort_file_at_shutdown(tmp_path):
    """``shutdown`` deletes ``abort`` only when the store is writeable (4.9.4): the next start
    recovers abnormally."""
    probe = Probe(physic=0.92)
    store = open_store(tmp_path, probe)
    fill(store, 2)
    store.clean_service.run_once(NOON)
    assert not store.running_flags.is_writeable()
    store.shutdown()
    assert os.path.exists(os.path.join(str(tmp_path), "abort"))
    reopened = MessageStore.open(small_config(tmp_path, mapped_file_size_consume_queue=200), ManualClock(NOON))
    assert reopened.last_exit_ok is False
    reopened.shutdown()
    assert not os.path.exists(os.path.join(str(tmp_path), "abort"))


def test_a_send_refused_for_a_full_disk_says_so_as_4_9_4_does(tmp_path):
    from broker_helpers import make_broker
    from pymq_ref.broker.response import ServiceNotAvailableError

    probe = Probe(physic=0.50, logics=0.40)
    with make_broker(tmp_path, store_retention=RetentionOptions(disk_usage_probe=probe, time_zone=TZ)) as b:
        assert b.send_message(topic="T", body=b"x").send_status.name == "SEND_OK"
        probe.physic = 0.92
        b.store.clean_service.run_once(b.store.clock.now_ms())
        with pytest.raises(ServiceNotAvailableError) as e:
            b.send_message(topic="T", body=b"y")
        assert ("service not available now. It may be caused by one of the following reasons: the broker's disk "
                "is full [CL:  0.92 CQ:  0.40 INDEX:  0.40], messages are put to the slave, message store has been "
                "shut down, etc.") in str(e.value)
        probe.physic = 0.50
        b.store.clean_service.run_once(b.store.clock.now_ms())
        assert b.send_message(topic="T", body=b"z").send_status.name == "SEND_OK"


def test_consume_queue_ext_files_follow_retention(tmp_path):
    """``correctMinOffset`` → ``truncateByMinAddress``: ext files that end before the ext unit of
    the first live ConsumeQueue unit go with the expired CommitLog files; the rest still filter."""
    from pymq_ref.formats.consume_queue import is_ext_address
    from pymq_ref.formats.consume_queue_ext import undecorate
    from pymq_ref.tools.doctor import run_doctor

    ext_dir = tmp_path / "consumequeue_ext" / "T" / "0"
    store = open_store(tmp_path, Probe(physic=0.80), enable_consume_queue_ext=True,
                       mapped_file_size_consume_queue_ext=200)  # 9 units of 20 bytes + filler a file
    put = fill(store, 6)
    ext_before = sorted(os.listdir(ext_dir))
    assert len(ext_before) == -(-put // 9)
    age(store, 2)
    r = store.clean_service.run_once()
    assert r.commit_log_files_deleted == 2 and r.min_offset_grew
    cq = store.find_consume_queue("T", 0)
    first_live = cq.get_unit(cq.min_offset_in_queue)
    assert is_ext_address(first_live.tags_code)
    live_at = undecorate(first_live.tags_code)
    ext_after = sorted(os.listdir(ext_dir))
    gone = [n for n in ext_before if n not in ext_after]
    assert gone and ext_after == ext_before[len(gone):]  # a prefix of the chain, nothing else
    assert all(int(n) + 200 < live_at for n in gone)  # each ended before the first live ext unit
    assert int(ext_after[0]) + 200 >= live_at  # and the next one did not
    assert [mf.file_name for mf in cq.ext.queue.files] == ext_after
    # the units that are left still resolve through their ext units, by tag
    tags = [x.properties["TAGS"] for x in store.get_message("g", "T", 0, cq.min_offset_in_queue, 32, "Tag1").records()]
    assert tags and set(tags) == {"Tag1"}
    store.shutdown()
    report = run_doctor(str(tmp_path))
    assert report.exit_status == 0, [str(f) for f in report.findings]
    # and after a restart the chain still starts at the same file
    store = open_store(tmp_path, Probe(physic=0.50), enable_consume_queue_ext=True,
                       mapped_file_size_consume_queue_ext=200)
    assert [mf.file_name for mf in store.find_consume_queue("T", 0).ext.queue.files] == ext_after
    store.shutdown()
