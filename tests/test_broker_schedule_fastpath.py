"""Delay-level delivery fast paths agree with the reference codecs: the shared property plan
(``broker.property_plan``) vs a hand-built JavaHashMap, and the service's CommitLog reader vs
``message_timeup(look_message_by_offset(...))``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pymq_ref.broker.property_plan import rebuild_properties
from pymq_ref.broker.schedule import ScheduledMessageError, ScheduleMessageService, message_timeup
from pymq_ref.broker.scheduler import ManualScheduler
from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import MessageRecord, decode_record, encode_message
from pymq_ref.formats.properties import JavaHashMap, decode_properties
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.delay import SCHEDULE_TOPIC
from store_helpers import msg, open_store

_KEYS = ["KEYS", "UNIQ_KEY", "TAGS", "WAIT", "DELAY", "REAL_TOPIC", "REAL_QID", "CLUSTER", "a", "bb", "X1",
         "MIN_OFFSET", "zz", "k13", "k14", "k15"]


def _hashmap(stored: dict, added: list[tuple[str, str]]) -> JavaHashMap:
    m = JavaHashMap(stored.items())
    for k, v in added:
        m[k] = v
    return m


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_KEYS), unique=True),
       st.lists(st.sampled_from(["", "a\x01", "\x01v", "KEYS\x01d", "v\x01with\x01sep"])),
       st.lists(st.sampled_from(_KEYS), unique=True, max_size=3),
       st.lists(st.sampled_from(_KEYS), unique=True, max_size=3), st.booleans())
def test_rebuild_matches_a_java_hashmap(keys, junk, added, drop, shuffle):
    """Text = the HashMap (stored entries, then the puts) serialised; memory = same order without
    ``drop`` — whatever the stored text looks like (duplicates, empty or value-less entries)."""
    entries = [f"{k}\x01{i}" for i, k in enumerate(keys)]
    if not shuffle:  # stored already in HashMap order: the identity plan
        entries = [f"{k}\x01{v}" for k, v in JavaHashMap(decode_properties("\x02".join(entries)).items()).items()]
    raw = "\x02".join(entries + junk)
    props = decode_properties(raw)
    added_values = [f"n{i}" for i in range(len(added))]
    text, memory, text_map = rebuild_properties(props, raw, tuple(added), added_values, tuple(drop))
    m = _hashmap(props, list(zip(added, added_values)))
    assert text == "\x02".join(f"{k}\x01{v}" for k, v in m.items())
    assert list(memory.items()) == [(k, v) for k, v in m.items() if k not in drop]
    assert list(text_map.items()) == list(decode_properties(text).items())  # what the store dispatches from
    if not shuffle and not junk and not added:
        assert text is raw  # nothing to rebuild


def _parked(store, rec):
    r = store.put_message(rec).append_result
    return r.wrote_offset, r.wrote_bytes


def test_reader_agrees_with_message_timeup_of_a_decoded_record(tmp_path):
    """The fast reader (plain v1 IPv4 records) and its fallback (IPv6 hosts) give what
    ``message_timeup(store.look_message_by_offset(phy, size))`` gives, with the map of its text;
    bad offsets/sizes -> None."""
    clock = ManualClock(1_700_000_000_123)
    store = open_store(tmp_path, clock, message_delay_level="1s 5s")
    svc = ScheduleMessageService(store, ManualScheduler(clock))
    restore = svc._restorer()
    v6 = msg(2, DELAY="1").replace(born_host=Host("::1", 5), sys_flag=0x10)
    records = [msg(1, DELAY="1"), v6, msg(3, size=0, DELAY="2", WAIT="true"), msg(4, queue_id=3, DELAY="9")]
    for rec in records:
        phy, size = _parked(store, rec)
        expected = message_timeup(store.look_message_by_offset(phy, size))
        got, text_map = restore(phy, size)
        assert got == expected and got.properties_string == expected.properties_string
        assert list(text_map.items()) == list(decode_properties(got.properties_string).items())
        assert list(got.properties.items()) == list(expected.properties.items())
        assert "DELAY" not in got.properties and got.properties["WAIT"] == "false"
        assert restore(phy, size - 1) is None  # TOTALSIZE disagrees with the unit: decode_record refuses
        assert restore(phy + 1, size) is None
    assert restore(10**9, 100) is None
    store.shutdown()


def test_reader_raises_like_message_timeup_for_bad_real_qid(tmp_path):
    clock = ManualClock(1_700_000_000_123)
    store = open_store(tmp_path, clock, message_delay_level="1s 5s")
    svc = ScheduleMessageService(store, ManualScheduler(clock))
    text = "DELAY\x011\x02REAL_TOPIC\x01T\x02REAL_QID\x01x1"
    phy, size = _parked(store, MessageRecord(topic=SCHEDULE_TOPIC, body=b"b", properties=decode_properties(text),
                                             properties_string=text))
    with pytest.raises(ScheduledMessageError, match="REAL_QID 'x1'"):
        message_timeup(store.look_message_by_offset(phy, size))
    with pytest.raises(ScheduledMessageError, match="REAL_QID 'x1'"):
        svc._restorer()(phy, size)
    store.shutdown()


def test_value_with_a_separator_is_kept_verbatim():
    """Java's ``messageProperties2String`` does not escape: a decoded value holding 0x01 goes back as it was."""
    text = "TAGS\x01a\x01b\x02REAL_TOPIC\x01T\x02REAL_QID\x010\x02DELAY\x011"
    stored = decode_record(encode_message(MessageRecord(topic=SCHEDULE_TOPIC, body=b"x", properties=decode_properties(text),
                                                        properties_string=text)), 0, with_spans=False)
    out = message_timeup(stored)
    m = JavaHashMap(stored.properties.items())
    assert out.properties_string == "\x02".join(f"{k}\x01{v}" for k, v in m.items())
    assert out.properties["TAGS"] == "a\x01b"


def test_reader_answers_none_for_a_file_retention_deleted_under_it(tmp_path):
    """The reader goes through ``MappedFileQueue.read``: a CommitLog file closed after the lookup
    (retention, threaded mode) is gone, not an error — for the fast path and the decoded path."""
    clock = ManualClock(1_700_000_000_123)
    store = open_store(tmp_path, clock, message_delay_level="1s 5s")
    restore = ScheduleMessageService(store, ManualScheduler(clock))._restorer()
    v4 = _parked(store, msg(1, DELAY="1"))
    v6 = _parked(store, msg(2, DELAY="1").replace(born_host=Host("::1", 5), sys_flag=0x10))
    while len(store.commit_log.queue.files) < 2:
        _parked(store, msg(3, size=200, DELAY="1"))
    assert restore(*v4) is not None and restore(*v6) is not None
    store.commit_log.queue.files[0].destroy()  # still listed: the moment between lookup and pop
    assert restore(*v4) is None and restore(*v6) is None
    store.commit_log.queue.files.pop(0)
    store.shutdown()
