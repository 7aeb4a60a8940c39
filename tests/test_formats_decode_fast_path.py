"""decode_record's fast path (``with_spans=False``, v1, IPv4 hosts) agrees with the general path.

The general path (``with_spans=True``) owns every check and error; the fast path must return
the same record for good bytes and step aside (so the same typed error is raised) for bad ones,
on every buffer type a caller may pass (bytes, bytearray, memoryview, mmap).
"""

from __future__ import annotations

import mmap

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pymq_ref.errors import FormatError
from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import (MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2, MessageRecord, decode_record,
                                      encode_blank, encode_message, iter_records)

prop_text = st.text(st.characters(blacklist_characters="\x01\x02", blacklist_categories=("Cs",)), min_size=1, max_size=12)


@st.composite
def v4_records(draw):
    topic = draw(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30)
                 .filter(lambda t: len(t.encode()) <= 127))
    return MessageRecord(
        topic=topic, body=draw(st.binary(max_size=40)), properties=draw(st.dictionaries(prop_text, prop_text, max_size=5)),
        queue_id=draw(st.integers(-5, 5)), queue_offset=draw(st.integers(0, 2**40)), phy_offset=draw(st.integers(0, 2**40)),
        sys_flag=draw(st.sampled_from([0, 0x1, 0x4, 0x8])), born_timestamp=draw(st.integers(0, 2**42)),
        born_host=Host("10.0.0.1", 4000), store_timestamp=draw(st.integers(0, 2**42)),
        store_host=Host("127.0.0.1", 10911),
        magic_code=draw(st.sampled_from([MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2])),
        body_crc=draw(st.none() | st.integers(0, 2**31 - 1)),
    )


def _outcome(buf, pos, *, with_spans, check_crc):
    try:
        record = decode_record(buf, pos, base=1000, with_spans=with_spans, check_crc=check_crc)
    except FormatError as exc:
        return ("error", type(exc).__name__, str(exc))
    if isinstance(record, MessageRecord):
        return ("record", tuple(record[:18]))  # every field but spans
    return ("other", record if record is None else (record.phy_offset, record.total_size))


def _buffers(raw: bytes):
    mm = mmap.mmap(-1, max(len(raw), 1))
    mm[:len(raw)] = raw
    return [raw, bytearray(raw), memoryview(raw), mm], mm


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(v4_records(), st.data())
def test_fast_path_agrees_with_general_path(record, data):
    raw = bytearray(b"\x00" * data.draw(st.integers(0, 3)) + encode_message(record) + encode_blank(8))
    start = len(raw) - len(encode_message(record)) - 8
    size = len(raw) - start - 8
    # mutate the length fields, magic, sysflag and a few random bytes
    topic_len_at = 88 + len(record.body)
    props_len_at = topic_len_at + 1 + len(record.topic.encode())
    hot = [0, 1, 2, 3, 4, 7, 36, 39, 84, 85, 86, 87, topic_len_at, props_len_at, props_len_at + 1]
    for _ in range(data.draw(st.integers(0, 3))):
        at = start + data.draw(st.sampled_from(hot) | st.integers(0, size - 1))
        if 0 <= at < len(raw):
            raw[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.sampled_from([len(raw), start + size, start + size - 1]) | st.integers(start, len(raw)))
    raw = bytes(raw[:cut])
    buffers, mm = _buffers(raw)
    try:
        for check_crc in (False, True):
            expected = _outcome(raw, start, with_spans=True, check_crc=check_crc)
            for buf in buffers:
                assert _outcome(buf, start, with_spans=False, check_crc=check_crc) == expected
    finally:
        del buffers
        mm.close()


def test_fast_path_returns_bytes_from_every_buffer_type():
    record = MessageRecord(topic="T", body=b"body", properties={"KEYS": "k", "TAGS": "a"}, born_host=Host("10.0.0.1", 1))
    raw = encode_message(record)
    buffers, mm = _buffers(raw)
    try:
        for buf in buffers:
            got = decode_record(buf, 0, with_spans=False, check_crc=True)
            assert type(got.body) is bytes and got.body == b"body"
            assert got == decode_record(raw, 0, with_spans=True)
            assert got.properties_string == "KEYS\x01k\x02TAGS\x01a"
        walked = list(iter_records(memoryview(raw + encode_blank(8)), end=len(raw)))
        assert [type(r) for r in walked] == [MessageRecord]
    finally:
        del buffers
        mm.close()
