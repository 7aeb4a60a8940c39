"""Formats owned by the store: ConsumeQueue unit, IndexFile header/slot/entry, checkpoint, fastjson."""

from __future__ import annotations

import dataclasses
from datetime import timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pymq_ref.errors import EncodeError, TruncatedError
from pymq_ref.formats import checkpoint as cpf
from pymq_ref.formats import consume_queue as cq
from pymq_ref.formats import fastjson
from pymq_ref.formats import index_file as ix

i64 = st.integers(-(2**63), 2**63 - 1)
i32 = st.integers(-(2**31), 2**31 - 1)


# -- ConsumeQueue unit ------------------------------------------------------------------------

def test_cq_unit_vector_4():
    # test vector 4: record 3 at offset 0, size 198, tags "TagA"
    data = cq.encode_cq_unit(0, 198, 2598919)
    assert data.hex().upper() == "0000000000000000" "000000C6" "000000000027A807"
    unit = cq.decode_cq_unit(data, base=0)
    assert (unit.phy_offset, unit.size, unit.tags_code) == (0, 198, 2598919)
    assert [(s.offset, s.length, s.path) for s in unit.spans] == [
        (0, 8, "phy_offset"), (8, 4, "size"), (12, 8, "tags_code")]


def test_cq_unit_vector_6_schedule_topic():
    # test vector 6: SCHEDULE_TOPIC_XXXX unit, tagsCode = deliver timestamp
    data = cq.encode_cq_unit(0, 258, 1700000010123)
    assert data.hex().upper() == "0000000000000000" "00000102" "0000018BCFE58F8B"


def test_cq_unit_negative_tags_code_sign_extended():
    assert cq.encode_cq_unit(5, 10, -392709271)[12:].hex().upper() == "FFFFFFFFE897BB69"


def test_cq_unit_spans_are_absolute_and_errors_typed():
    buf = bytes(10) + cq.encode_cq_unit(7, 8, 9)
    unit = cq.decode_cq_unit(buf, 10, base=6000000)
    assert unit.spans[0].offset == 6000010 and unit.spans[2].offset == 6000022
    with pytest.raises(TruncatedError) as e:
        cq.decode_cq_unit(buf, 15, base=100)
    assert e.value.offset == 115 and e.value.structure == "consume_queue_unit"
    with pytest.raises(EncodeError):
        cq.encode_cq_unit(0, 2**31, 0)


def test_cq_blank_and_validity():
    blank = cq.decode_cq_unit(cq.BLANK_UNIT)
    assert blank.is_blank and blank.is_valid
    assert not cq.decode_cq_unit(bytes(20)).is_valid
    assert cq.is_ext_address(-(2**31) - 1) and not cq.is_ext_address(-(2**31))


def test_cq_iter_stops_at_zero_tail():
    buf = cq.encode_cq_unit(0, 100, 1) + cq.encode_cq_unit(100, 50, 2) + bytes(40)
    assert [(o, u.phy_offset) for o, u in cq.iter_cq_units(buf, base=20)] == [(20, 0), (40, 100)]


def test_cq_round_file_size():
    assert cq.round_file_size(6_000_000) == 6_000_000
    assert cq.round_file_size(101) == 120
    assert cq.round_file_size(20) == 20


@given(i64, i32, i64)
def test_cq_construct_schema_agrees(phy, size, tags):
    data = cq.encode_cq_unit(phy, size, tags)
    parsed = cq.CQ_UNIT_SCHEMA.parse(data)
    assert (parsed.phy_offset, parsed.size, parsed.tags_code) == (phy, size, tags)
    built = cq.CQ_UNIT_SCHEMA.build(dict(phy_offset=phy, size=size, tags_code=tags))
    assert built == data
    unit = cq.decode_cq_unit(built, with_spans=False)
    assert (unit.phy_offset, unit.size, unit.tags_code) == (phy, size, tags)


# -- IndexFile --------------------------------------------------------------------------------

def test_index_header_vector_7():
    header = ix.IndexHeader(1700000000123, 1700000000123, 0, 0, 2, 3)
    assert ix.encode_index_header(header).hex().upper() == (
        "0000018BCFE5687B" "0000018BCFE5687B" "0000000000000000" "0000000000000000" "00000002" "00000003")
    back = ix.decode_index_header(ix.encode_index_header(header), base=0)
    assert back.index_count == 3 and len(back.spans) == 6 and back.spans[5].offset == 36


def test_index_entry_vector_7():
    entry = ix.IndexEntry(453792245, 0, 0, 0)
    assert ix.encode_index_entry(entry).hex().upper() == "1B0C51F5" "0000000000000000" "00000000" "00000000"
    assert ix.entry_position(1, 5_000_000) == 20000060
    assert ix.entry_position(2, 5_000_000) == 20000080
    assert ix.slot_position(3792245) == 15169020
    assert ix.slot_position(1969516) == 7878104
    assert ix.index_file_size() == 420_000_040


def test_index_entry_decode_and_slot():
    buf = bytearray(ix.index_file_size(4, 3))
    pos = ix.entry_position(2, 4)
    buf[pos:pos + 20] = ix.encode_index_entry(ix.IndexEntry(5, 6, 7, 1))
    buf[ix.slot_position(1):ix.slot_position(1) + 4] = (2).to_bytes(4, "big")
    e = ix.decode_index_entry(buf, pos, base=1000, number=2)
    assert (e.key_hash, e.phy_offset, e.time_diff, e.prev_index) == (5, 6, 7, 1)
    assert e.spans[0].path == "entry[2].key_hash" and e.spans[0].offset == 1000 + pos
    value, span = ix.decode_slot(buf, 1)
    assert value == 2 and span.offset == 44
    with pytest.raises(TruncatedError):
        ix.decode_index_entry(buf, len(buf) - 10)


def test_index_time_diff_rules():
    assert ix.time_diff_seconds(1700000000123, 0) == 0
    assert ix.time_diff_seconds(1700000001999, 1700000000123) == 1
    assert ix.time_diff_seconds(1700000000000, 1700000000123) == 0  # negative -> 0
    assert ix.time_diff_seconds(2**62, 1) == 2**31 - 1


def test_index_file_name():
    assert ix.index_file_name(1700000000123) == "20231114221320123"
    assert ix.index_file_name(1700000000123, timezone(timedelta(hours=8))) == "20231115061320123"


def test_index_time_matched():
    h = ix.IndexHeader(begin_timestamp=100, end_timestamp=200)
    assert h.time_matched(0, 2**63 - 1)
    assert h.time_matched(150, 160) and h.time_matched(50, 100) and h.time_matched(200, 300)
    assert not h.time_matched(201, 300) and not h.time_matched(0, 99)
    assert ix.IndexHeader().effective_index_count == 1


@given(i64, i64, i64, i64, i32, i32)
def test_index_header_construct_agrees(a, b, c, d, e, f):
    header = ix.IndexHeader(a, b, c, d, e, f)
    data = ix.encode_index_header(header)
    assert ix.INDEX_HEADER_SCHEMA.build(dict(
        begin_timestamp=a, end_timestamp=b, begin_phy_offset=c, end_phy_offset=d,
        hash_slot_count=e, index_count=f)) == data
    assert dataclasses.replace(ix.decode_index_header(ix.INDEX_HEADER_SCHEMA.build(
        ix.INDEX_HEADER_SCHEMA.parse(data)), with_spans=False)) == header


@given(i32, i64, i32, i32)
def test_index_entry_construct_agrees(kh, phy, diff, prev):
    data = ix.encode_index_entry(ix.IndexEntry(kh, phy, diff, prev))
    p = ix.INDEX_ENTRY_SCHEMA.parse(data)
    assert (p.key_hash, p.phy_offset, p.time_diff, p.prev_index) == (kh, phy, diff, prev)
    assert ix.INDEX_ENTRY_SCHEMA.build(p) == data


# -- checkpoint -------------------------------------------------------------------------------

def test_checkpoint_roundtrip_and_derived():
    cp = cpf.Checkpoint(1700000005000, 1700000004000, 1700000001000)
    data = cpf.encode_checkpoint(cp)
    assert len(data) == 4096 and data[24:] == bytes(4072)
    back = cpf.decode_checkpoint(data)
    assert back.physic_msg_timestamp == 1700000005000 and back.spans[2].offset == 16
    assert back.min_timestamp == 1700000001000
    assert back.min_timestamp_index == 1700000001000
    assert cpf.Checkpoint(1000, 5000, 0).min_timestamp == 0
    with pytest.raises(TruncatedError):
        cpf.decode_checkpoint(bytes(23))


@given(i64, i64, i64)
def test_checkpoint_construct_agrees(a, b, c):
    data = cpf.encode_checkpoint(cpf.Checkpoint(a, b, c), full_page=False)
    assert cpf.CHECKPOINT_SCHEMA.build(cpf.CHECKPOINT_SCHEMA.parse(data)) == data
    back = cpf.decode_checkpoint(cpf.CHECKPOINT_SCHEMA.build(dict(
        physic_msg_timestamp=a, logics_msg_timestamp=b, index_msg_timestamp=c)), with_spans=False)
    assert (back.physic_msg_timestamp, back.logics_msg_timestamp, back.index_msg_timestamp) == (a, b, c)


# -- fastjson ---------------------------------------------------------------------------------

def test_fastjson_consumer_offset_style():
    text = fastjson.dumps({"offsetTable": {"TopicTest@g": {0: 12, 1: 9}, "x@y": {0: 2}}})
    assert text == ('{\n\t"offsetTable":{\n\t\t"TopicTest@g":{0:12,1:9\n\t\t},\n'
                    '\t\t"x@y":{0:2\n\t\t}\n\t}\n}')
    assert fastjson.loads(text) == {"offsetTable": {"TopicTest@g": {0: 12, 1: 9}, "x@y": {0: 2}}}


def test_fastjson_bean_alphabetical_and_nulls_skipped():
    @dataclasses.dataclass
    class Bean:
        topic_name: str
        read_queue_nums: int = 16
        order: bool = False
        skipped: str | None = None

    text = fastjson.dumps({"t": Bean("T")})
    assert text == '{\n\t"t":{\n\t\t"order":false,\n\t\t"readQueueNums":16,\n\t\t"topicName":"T"\n\t}\n}'


def test_fastjson_reader_tolerance():
    assert fastjson.loads('{1:0,2:15, -3 : 4}') == {1: 0, 2: 15, -3: 4}
    assert fastjson.loads('{"a":"x,1:y","b":{}}') == {"a": "x,1:y", "b": {}}
    assert fastjson.loads('{topic:"t",queueId:0}') == {"topic": "t", "queueId": 0}
    assert fastjson.dumps({}) == "{}" and fastjson.dumps([]) == "[]"
    assert fastjson.dumps("a\"\n\x01") == '"a\\"\\n\\u0001"'
    with pytest.raises(ValueError):
        fastjson.loads("{")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    | st.dictionaries(st.integers(-100, 100), inner, min_size=1, max_size=4),
    max_leaves=12,
)


def _strip_none(v):
    if isinstance(v, dict):
        return {k: _strip_none(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_strip_none(x) for x in v]
    return v


@given(json_values)
def test_fastjson_roundtrip(value):
    if value is None:
        return
    assert fastjson.loads(fastjson.dumps(value)) == _strip_none(value)
    assert fastjson.loads(fastjson.dumps(value, pretty=False)) == _strip_none(value)
