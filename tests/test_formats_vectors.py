"""Test vectors (records whose bytes were checked against RocketMQ 4.9.4), reproduced byte for byte from
pymq_ref.formats."""

from __future__ import annotations

import struct

import pytest

from pymq_ref.formats.hashing import body_crc, index_key_hash, java_string_hash, tags_code
from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import (BLANK_MAGIC_CODE, MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2, BlankRecord,
                                      MessageRecord, decode_message, decode_record, encode_blank, encode_message)
from pymq_ref.formats.msgid import offset_msg_id, parse_offset_msg_id, parse_uniq_key
from pymq_ref.formats.properties import JavaHashMap, decode_properties, encode_properties

UNIQ = "7F00000112340000ABCD000000640001"
BORN = Host("127.0.0.1", 50000)
STORE = Host("127.0.0.1", 10911)

VECTOR_3 = (
    "000000C6DAA320A769C865ED000000000000000000000000000000000000000000000000000000000000018BCFE568007F000001"
    "0000C3500000018BCFE5687B7F00000100002A9F0000000000000000000000000000000E48656C6C6F20526F636B65744D5109"
    "546F7069635465737400544B455953014B45593102554E49515F4B45590137463030303030313132333430303030414243443030"
    "3030303036343030303102434C55535445520144656661756C74436C757374657202544147530154616741"
)
VECTOR_5 = (
    "00000087DAA320A774DBDF210000000000000000000000000000000000000000000000C6000000000000018BCFE5687B7F000001"
    "00002A9F0000018BCFE5687C7F00000100002A9F00000000000000000000000000000001301B524D515F5359535F5452414E535F"
    "4F505F48414C465F544F504943001057414954017472756502544147530164"
)
VECTOR_6 = (
    "00000102DAA320A769C865ED000000020000000000000000000000000000000000000000000000000000018BCFE568007F000001"
    "0000C3500000018BCFE5687B7F00000100002A9F0000000000000000000000000000000E48656C6C6F20526F636B65744D5113"
    "5343484544554C455F544F5049435F5858585800865245414C5F544F50494301546F70696354657374024B455953014B455931"
    "02554E49515F4B455901374630303030303131323334303030304142434430303030303036343030303102434C555354455201"
    "44656661756C74436C75737465720244454C415901330257414954017472756502544147530154616741025245414C5F514944"
    "0130"
)


def client_map(**extra: str) -> JavaHashMap:
    """The producer's property map: TAGS, KEYS, WAIT, (extra), UNIQ_KEY, in the Java client's put order."""
    props = JavaHashMap()
    props["TAGS"] = "TagA"
    props["KEYS"] = "KEY1"
    props["WAIT"] = "true"
    for key, value in extra.items():
        props[key] = value
    props["UNIQ_KEY"] = UNIQ
    return props


def broker_map(wire: str) -> tuple[JavaHashMap, str]:
    """What a 4.9.4 broker does with the request's properties (SendMessageProcessor.asyncSendMessage)."""
    props = JavaHashMap(decode_properties(wire))
    props["CLUSTER"] = "DefaultCluster"
    wait = props.pop("WAIT")
    stored = encode_properties(props)
    props["WAIT"] = wait  # put back: moves to the end of its bucket
    return props, stored


def vector3_record(**changes) -> MessageRecord:
    _, stored = broker_map(encode_properties(client_map()))
    fields = dict(topic="TopicTest", body=b"Hello RocketMQ", properties=decode_properties(stored),
                  born_timestamp=1700000000000, born_host=BORN, store_timestamp=1700000000123, store_host=STORE)
    fields.update(changes)
    return MessageRecord(**fields)


@pytest.mark.parametrize("text, code, on_disk", [
    ("TagA", 2598919, "000000000027A807"),
    ("你好", 652829, "000000000009F61D"),
    ("d", 100, "0000000000000064"),
    ("order-created", -392709271, "FFFFFFFFE897BB69"),
    ("a\U0001F600", 1866116, "00000000001C7984"),
])
def test_hashes_and_tags_codes(text, code, on_disk):
    assert java_string_hash(text) == code
    assert struct.pack(">q", tags_code(text)).hex().upper() == on_disk


def test_empty_tag_is_not_hashed():
    assert tags_code("") == 0 and tags_code(None) == 0


def test_index_key_hash():
    assert java_string_hash("polygenelubricants") == -2**31
    assert index_key_hash("polygenelubricants") == 0
    assert java_string_hash("TopicTest#KEY1") == -1656969516
    assert index_key_hash("TopicTest#KEY1") == 1656969516


def test_body_crc_is_masked():
    assert body_crc(b"Hello RocketMQ") == 1774740973
    assert body_crc(b"0") == 0x74DBDF21 == 1960566561


def test_magic_codes():
    assert struct.pack(">i", MESSAGE_MAGIC_CODE).hex().upper() == "DAA320A7"
    assert struct.pack(">i", MESSAGE_MAGIC_CODE_V2).hex().upper() == "DAA320AB"
    assert struct.pack(">i", BLANK_MAGIC_CODE).hex().upper() == "CBD43194"
    assert encode_blank(100).hex().upper() == "00000064CBD43194"
    assert decode_record(encode_blank(100), base=500, with_spans=False) == BlankRecord(500, 100)


def test_vector_3_property_order():
    wire = encode_properties(client_map())
    assert list(decode_properties(wire)) == ["KEYS", "UNIQ_KEY", "WAIT", "TAGS"]
    _, stored = broker_map(wire)
    assert stored == f"KEYS\x01KEY1\x02UNIQ_KEY\x01{UNIQ}\x02CLUSTER\x01DefaultCluster\x02TAGS\x01TagA"
    assert len(stored.encode()) == 84


def test_vector_3_record_bytes():
    data = encode_message(vector3_record())
    assert data.hex().upper() == VECTOR_3
    record = decode_message(data)
    assert record.total_size == 198
    assert record.msg_id == "7F00000100002A9F0000000000000000"
    assert record.crc_ok and record.tags == "TagA" and record.keys == ["KEY1"] and record.uniq_key == UNIQ
    assert encode_message(record) == data


def test_vector_3_field_offsets():
    spans = {s.path: s for s in decode_message(bytes.fromhex(VECTOR_3)).spans}
    expected = {"total_size": 0x00, "magic_code": 0x04, "body_crc": 0x08, "queue_id": 0x0C, "flag": 0x10,
                "queue_offset": 0x14, "phy_offset": 0x1C, "sys_flag": 0x24, "born_timestamp": 0x28,
                "born_host": 0x30, "store_timestamp": 0x38, "store_host": 0x40, "reconsume_times": 0x48,
                "prepared_transaction_offset": 0x4C, "body_length": 0x54, "body": 0x58, "topic_length": 0x66,
                "topic": 0x67, "properties_length": 0x70, "properties": 0x72}
    assert {path: spans[path].offset for path in expected} == expected
    assert spans["properties"].end == 198


def test_vector_3_ipv6_variant():
    record = vector3_record(born_host=Host("::1", 50000), store_host=Host("::1", 10911), sys_flag=0x30)
    data = encode_message(record)
    assert len(data) == 222
    decoded = decode_message(data)
    assert decoded.msg_id == "0000000000000000000000000000000100002A9F0000000000000000"
    assert str(decoded.born_host) == "[::1]:50000"
    assert parse_offset_msg_id(decoded.msg_id) == (Host("::1", 10911), 0)


def test_vector_3_v2_variant():
    data = encode_message(vector3_record(magic_code=MESSAGE_MAGIC_CODE_V2))
    assert len(data) == 199
    assert data[4:8].hex().upper() == "DAA320AB"
    assert data[0x66:0x68] == b"\x00\x09"
    assert decode_message(data).topic == "TopicTest"


def test_vector_5_transaction_op_record():
    record = MessageRecord(topic="RMQ_SYS_TRANS_OP_HALF_TOPIC", body=b"0", properties={"WAIT": "true", "TAGS": "d"},
                           phy_offset=198, born_timestamp=1700000000123, born_host=STORE,
                           store_timestamp=1700000000124, store_host=STORE)
    data = encode_message(record)
    assert data.hex().upper() == VECTOR_5
    assert decode_message(data, base=198).total_size == 135


def test_vector_6_delayed_message_property_order():
    props, _ = broker_map(encode_properties(client_map(DELAY="3")))
    props["REAL_TOPIC"] = "TopicTest"
    props["REAL_QID"] = "0"
    stored = encode_properties(props)
    assert stored == ("REAL_TOPIC\x01TopicTest\x02KEYS\x01KEY1\x02UNIQ_KEY\x01" + UNIQ
                      + "\x02CLUSTER\x01DefaultCluster\x02DELAY\x013\x02WAIT\x01true\x02TAGS\x01TagA\x02REAL_QID\x010")
    record = vector3_record(topic="SCHEDULE_TOPIC_XXXX", queue_id=2, properties=dict(props.items()))
    assert encode_message(record).hex().upper() == VECTOR_6


def test_offset_msg_id_round_trip():
    assert offset_msg_id(STORE, 0) == "7F00000100002A9F0000000000000000"
    assert parse_offset_msg_id("7F00000100002A9F00000000000000C6") == (STORE, 198)


def test_uniq_key_parts():
    key = parse_uniq_key(UNIQ)
    assert (key.ip, key.pid, key.class_loader_hash, key.time_ms, key.counter) == ("127.0.0.1", 0x1234, 0xABCD, 100, 1)
    assert str(key) == UNIQ
