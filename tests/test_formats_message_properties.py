"""Property-based tests of the message codec: round trips, spans, the construct spec, fuzzed bytes."""

from __future__ import annotations

from datetime import timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pymq_ref.errors import EncodeError, FormatError
from pymq_ref.formats.batch import BatchEntry, batch_properties, decode_batch, encode_batch
from pymq_ref.formats.hashing import body_crc
from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import (MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2, MESSAGE_SCHEMA, BlankRecord,
                                      MessageRecord, decode_message, decode_record, encode_blank, encode_message,
                                      iter_records, message_length)
from pymq_ref.formats.msgid import (UniqKey, UniqKeyGenerator, encode_uniq_key, month_start_ms,
                                    nearly_time_from_uniq_key, offset_msg_id, parse_offset_msg_id, parse_uniq_key)
from pymq_ref.formats.properties import JavaHashMap, decode_properties, encode_properties
from pymq_ref.formats.spans import innermost, walk

int32 = st.integers(-2**31, 2**31 - 1)
int64 = st.integers(-2**63, 2**63 - 1)
ipv4 = st.ip_addresses(v=4).map(str)
ipv6 = st.ip_addresses(v=6).map(str)
port = st.integers(0, 65535)
# property text: any characters but the separators and lone surrogates
prop_text = st.text(st.characters(blacklist_characters="\x01\x02", blacklist_categories=("Cs",)), min_size=1, max_size=20)
properties = st.dictionaries(prop_text, prop_text, max_size=8)
bodies = st.one_of(st.binary(max_size=64), st.binary(min_size=4096, max_size=70000))


@st.composite
def records(draw, v2=None):
    born_v6, store_v6 = draw(st.booleans()), draw(st.booleans())
    use_v2 = draw(st.booleans()) if v2 is None else v2
    topic_chars = st.characters(blacklist_categories=("Cs",))
    topic = draw(st.text(topic_chars, min_size=1, max_size=200 if use_v2 else 30)
                 .filter(lambda t: len(t.encode()) <= (32767 if use_v2 else 127)))
    sys_flag = draw(st.integers(0, 0xF) | st.sampled_from([0x100, 0x300])) | (0x10 if born_v6 else 0) | (0x20 if store_v6 else 0)
    return MessageRecord(
        topic=topic, body=draw(bodies), properties=draw(properties),
        queue_id=draw(int32), flag=draw(int32), queue_offset=draw(int64), phy_offset=draw(int64),
        sys_flag=sys_flag, born_timestamp=draw(int64),
        born_host=Host(draw(ipv6 if born_v6 else ipv4), draw(port)),
        store_timestamp=draw(int64), store_host=Host(draw(ipv6 if store_v6 else ipv4), draw(port)),
        reconsume_times=draw(int32), prepared_transaction_offset=draw(int64),
        magic_code=MESSAGE_MAGIC_CODE_V2 if use_v2 else MESSAGE_MAGIC_CODE,
        body_crc=draw(st.none() | st.integers(0, 2**31 - 1)),
    )


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(records())
def test_record_round_trip(record):
    data = encode_message(record)
    decoded = decode_message(data)
    assert decoded.total_size == len(data) == message_length(
        record.sys_flag, len(record.body), len(record.topic.encode()), len(encode_properties(record.properties).encode()),
        record.magic_code == MESSAGE_MAGIC_CODE_V2)
    expected_crc = body_crc(record.body) if record.body_crc is None else record.body_crc
    assert decoded.body_crc == expected_crc
    assert decoded.crc_ok == (expected_crc == body_crc(record.body))
    for name in ("topic", "body", "properties", "queue_id", "flag", "queue_offset", "phy_offset", "sys_flag",
                 "born_timestamp", "born_host", "store_timestamp", "store_host", "reconsume_times",
                 "prepared_transaction_offset", "magic_code"):
        assert getattr(decoded, name) == getattr(record, name), name
    assert list(decoded.properties) == list(record.properties)
    assert encode_message(decoded) == data


@settings(max_examples=200)
@given(records(), st.integers(0, 4096))
def test_spans_tile_the_record(record, base):
    data = encode_message(record)
    decoded = decode_message(data, base=base)
    top = decoded.spans
    assert top[0].offset == base and top[-1].end == base + len(data)
    for before, after in zip(top, top[1:]):
        assert before.end == after.offset  # no gaps, no overlaps
    for span in top:
        for child in span.children:
            assert span.offset <= child.offset and child.end <= span.end
        if span.path in ("body", "topic"):
            raw = data[span.offset - base:span.end - base]
            assert raw == (record.body if span.path == "body" else record.topic.encode())
    for offset in (base, base + len(data) - 1):
        assert innermost(top, offset) is not None


@settings(max_examples=200)
@given(records())
def test_construct_schema_agrees_with_codec(record):
    data = encode_message(record)
    parsed = MESSAGE_SCHEMA.parse(data)
    decoded = decode_message(data)
    for span in decoded.spans:
        value = parsed[span.path]
        if span.path.endswith("host"):
            assert Host.from_bytes(value) == span.value
        elif span.path == "topic":
            assert value.decode() == span.value
        elif span.path == "properties":
            assert decode_properties(value.decode()) == span.value
        else:
            assert value == span.value, span.path
    assert MESSAGE_SCHEMA.build(parsed) == data


@settings(max_examples=500)
@given(st.binary(max_size=300))
def test_random_bytes_raise_only_typed_errors(data):
    try:
        record = decode_record(data, with_spans=True, check_crc=True)
    except FormatError as exc:
        assert exc.offset >= 0 and exc.field and exc.expected
    else:
        assert record is None or isinstance(record, (MessageRecord, BlankRecord))


@settings(max_examples=300)
@given(records(), st.data())
def test_mutated_records_raise_only_typed_errors(record, data):
    raw = bytearray(encode_message(record))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(raw)))
    try:
        for _ in iter_records(bytes(raw[:cut]), check_crc=True, with_spans=True):
            pass
    except FormatError as exc:
        assert str(exc).startswith(exc.structure)


def test_zeros_end_the_written_data():
    one = encode_message(MessageRecord(topic="T", body=b"x"))
    segment = one + bytes(100)
    assert [type(r) for r in iter_records(segment)] == [MessageRecord]
    assert decode_record(bytes(3)) is None


def test_errors_name_field_offset_and_expectation():
    data = bytearray(encode_message(MessageRecord(topic="T", body=b"abc")))
    data[4] ^= 0xFF
    try:
        decode_record(bytes(data), base=1000)
    except FormatError as exc:
        assert (exc.field, exc.offset) == ("magic_code", 1004)
        assert "0xDAA320A7" in str(exc)
    else:
        raise AssertionError("bad magic accepted")
    data[4] ^= 0xFF
    data[8] ^= 0x01
    try:
        decode_record(bytes(data), check_crc=True)
    except FormatError as exc:
        assert exc.field == "body_crc" and exc.offset == 8
    else:
        raise AssertionError("bad crc accepted")


def test_segment_walk_with_blank():
    first = encode_message(MessageRecord(topic="T", body=b"a" * 10))
    segment = first + encode_blank(160 - len(first))
    segment += bytes(160 - len(segment))
    walked = list(iter_records(segment, base=1 << 30))
    assert [type(r) for r in walked] == [MessageRecord, BlankRecord]
    assert walked[1] == BlankRecord((1 << 30) + len(first), 160 - len(first))


def test_encode_rejects_inconsistent_records():
    for bad in (MessageRecord(topic="x" * 128), MessageRecord(topic=""),
                MessageRecord(topic="T", born_host=Host("::1", 1)),
                MessageRecord(topic="T", sys_flag=0x20),
                MessageRecord(topic="T", properties={"K": "v" * 40000}),
                MessageRecord(topic="T", properties={"K\x01": "v"}),
                MessageRecord(topic="T", queue_id=2**31)):
        try:
            encode_message(bad)
        except EncodeError as exc:
            assert str(exc).startswith(("cannot encode message.", "cannot encode properties.["))
        else:
            raise AssertionError(f"encoded {bad!r}")
    assert len(encode_message(MessageRecord(topic="x" * 128, magic_code=MESSAGE_MAGIC_CODE_V2))) == 91 + 1 + 128


def test_non_canonical_properties_string_round_trips():
    text = "A\x01\x02B\x01x\x02\x02B\x01y\x02"  # empty value, empty segment, duplicate key, trailing separator
    record = MessageRecord(topic="T", properties=decode_properties(text), properties_string=text)
    assert record.properties == {"B": "y"}
    data = encode_message(record)
    assert decode_message(data).properties_string == text
    assert encode_message(decode_message(data)) == data


@given(st.lists(st.tuples(prop_text, prop_text), max_size=40), st.data())
def test_java_hashmap_keeps_every_entry(pairs, data):
    m = JavaHashMap()
    model = {}
    for key, value in pairs:
        m[key] = value
        model[key] = value
        if model and data.draw(st.booleans()):
            victim = data.draw(st.sampled_from(sorted(model)))
            del m[victim]
            del model[victim]
    assert dict(m.items()) == model


def test_java_hashmap_orders_by_bucket():
    # KEYS -> bucket 7, UNIQ_KEY and CLUSTER -> 12 (insertion order), TAGS -> 14 (Java 8 HashMap order)
    m = JavaHashMap([("TAGS", "1"), ("CLUSTER", "2"), ("UNIQ_KEY", "3"), ("KEYS", "4")])
    assert list(m) == ["KEYS", "CLUSTER", "UNIQ_KEY", "TAGS"]


@given(st.lists(st.tuples(st.binary(max_size=100), properties, int32), max_size=6), st.text(max_size=10))
def test_batch_round_trip(entries, extra):
    batch = [BatchEntry(body=b, properties=p, flag=f) for b, p, f in entries]
    data = encode_batch(batch)
    decoded = decode_batch(data)
    assert [(e.body, e.properties, e.flag) for e in decoded] == [(e.body, e.properties, e.flag) for e in batch]
    assert encode_batch(decoded) == data
    assert all(s.path.startswith("[") for e in decoded for s in walk(e.spans))


def test_batch_properties_separator_rule():
    assert batch_properties("A\x011", "CLUSTER\x01c") == "A\x011\x02CLUSTER\x01c"
    assert batch_properties("A\x011\x02", "CLUSTER\x01c") == "A\x011\x02CLUSTER\x01c"
    assert batch_properties("", "CLUSTER\x01c") == "CLUSTER\x01c"
    assert batch_properties("A\x011", "") == "A\x011"


@given(st.one_of(ipv4, ipv6), port, int64)
def test_offset_msg_id_round_trip(ip, p, offset):
    msg_id = offset_msg_id(Host(ip, p), offset)
    assert len(msg_id) == (56 if ":" in ip else 32) and msg_id == msg_id.upper()
    assert parse_offset_msg_id(msg_id) == (Host(ip, p), offset)


@given(st.one_of(ipv4, ipv6), st.integers(0, 0xFFFF), int32, int32, st.integers(0, 0xFFFF))
def test_uniq_key_round_trip(ip, pid, loader, time_ms, counter):
    key = UniqKey(ip, pid, loader, time_ms, counter)
    assert parse_uniq_key(encode_uniq_key(key)) == key


def test_uniq_key_generator_follows_the_month():
    now = [1700000000123]  # 2023-11-14T22:13:20.123Z
    gen = UniqKeyGenerator("10.0.0.1", 42, 0x1234, lambda: now[0], tz=timezone.utc)
    first, second = parse_uniq_key(gen()), parse_uniq_key(gen())
    assert first.time_ms == now[0] - month_start_ms(now[0]) and (first.counter, second.counter) == (0, 1)
    assert nearly_time_from_uniq_key(encode_uniq_key(first), now[0] + 5) == now[0]
    now[0] = 1701388800000 + 7  # 2023-12-01T00:00:00.007Z: a new month
    assert parse_uniq_key(gen()).time_ms == 7


def test_bad_ids_are_explained():
    for text in ("XYZ", "G" * 32):
        for parse in (parse_offset_msg_id, parse_uniq_key):
            try:
                parse(text)
            except ValueError as exc:
                assert "expected" in str(exc)
            else:
                raise AssertionError(text)


def test_record_value_semantics():
    record = MessageRecord(topic="T", body=bytearray(b"abc"), properties={"A": "1"})
    assert record.body == b"abc" and isinstance(record.body, bytes)
    decoded = decode_message(encode_message(record), with_spans=True)
    plain = decode_message(encode_message(record), with_spans=False)
    assert decoded == plain and not decoded != plain  # spans and properties_string do not count
    moved = decoded.replace(queue_offset=5)
    assert moved != decoded and moved.queue_offset == 5 and decoded.queue_offset == 0
    changed = decoded.replace(properties={"B": "2"})
    assert decode_message(encode_message(changed)).properties == {"B": "2"}
    assert "spans" not in repr(decoded) and "topic='T'" in repr(decoded)
    try:
        decoded.topic = "U"
    except AttributeError:
        pass
    else:
        raise AssertionError("records must be immutable")


def test_hashes_of_text_from_invalid_utf8_follow_java():
    """Undecodable bytes are kept as surrogate escapes; Java hashes them as U+FFFD."""
    from pymq_ref.formats.hashing import index_key_hash, java_string_hash, tags_code

    odd = b"Tag\xff".decode("utf-8", "surrogateescape")
    assert java_string_hash(odd) == java_string_hash("Tag\ufffd")
    assert tags_code(odd) == java_string_hash("Tag\ufffd") and index_key_hash("T#" + odd) >= 0
    assert java_string_hash("\ud800") == 0xD800  # a lone surrogate a Java String can hold
    record = MessageRecord(topic="T", properties={"TAGS": odd}, body=b"x")
    assert decode_message(encode_message(record)).tags_code == java_string_hash("Tag\ufffd")
