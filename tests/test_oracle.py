"""The oracle's public surface and its field-level diff."""

from __future__ import annotations

from pymq_ref import oracle


def record(**changes) -> oracle.MessageRecord:
    fields = dict(topic="TopicTest", body=b"0", properties={"KEYS": "k1", "TAGS": "order-created"},
                  born_host=oracle.Host("127.0.0.1", 50000), store_timestamp=1700000000123)
    fields.update(changes)
    return oracle.MessageRecord(**fields)


def test_every_exported_name_exists_and_is_documented():
    for name in oracle.__all__:
        obj = getattr(oracle, name)
        if callable(obj) and not isinstance(obj, type(oracle.MESSAGE_MAGIC_CODE)):
            assert obj.__doc__, name


def test_equal_records_have_no_difference():
    data = oracle.encode_message(record())
    assert oracle.diff_message(data, bytearray(data)) == []


def test_an_unmasked_crc_is_named_with_both_values():
    good = oracle.encode_message(record())
    bad = oracle.encode_message(record(body_crc=0xF4DBDF21 - 2**32))  # crc32("0") kept as a signed int, unmasked
    (difference,) = oracle.diff_message(good, bad)
    assert (difference.path, difference.offset) == ("body_crc", 8)
    assert str(difference) == "body_crc at 8: expected 74DBDF21 (1960566561), got F4DBDF21 (-186917087)"


def test_property_order_is_reported_per_entry():
    good = oracle.encode_message(record())
    swapped = oracle.encode_message(record(properties={"TAGS": "order-created", "KEYS": "k1"}))
    paths = [d.path for d in oracle.diff_message(good, swapped)]
    assert paths == ["properties.KEYS", "properties.TAGS"]


def test_a_longer_actual_record_shifts_the_layout():
    good = oracle.encode_message(record())
    longer = oracle.encode_message(record(topic="TopicTest2"))
    paths = [d.path for d in oracle.diff_message(good, longer)]
    assert paths[0] == "total_size" and "topic_length" in paths and paths[-1] == "(after the record)"


def test_undecodable_actual_bytes_are_compared_byte_wise():
    good = oracle.encode_message(record())
    garbage = bytes(len(good))
    differences = oracle.diff_message(good, garbage)
    assert differences[0].path == "total_size" and differences[0].actual_value is None
