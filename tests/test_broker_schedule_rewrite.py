"""Put-time delay rewrite (``CommitLog.asyncPutMessage``; test vector 6 of test_formats_vectors) through the real
store put path, and the level parser."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pymq_ref.formats.message import decode_record, encode_message
from pymq_ref.formats.properties import (JavaHashMap, encode_properties, hashmap_order, hashmap_properties,
                                       java_hashmap_order)
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.delay import (DEFAULT_MESSAGE_DELAY_LEVEL, SCHEDULE_TOPIC, DelayLevelFormatError,
                                  InvalidDelayLevelError, parse_delay_level, parse_java_integer, transform_delay_level)
from pymq_ref.store.commit_log import PutMessageStatus
from store_helpers import UNIQ, open_store, vector3_message

VECTOR6_HEX = (
    "00000102DAA320A769C865ED000000020000000000000000000000000000000000000000000000000000018BCFE568007F0000010000C350"
    "0000018BCFE5687B7F00000100002A9F0000000000000000000000000000000E48656C6C6F20526F636B65744D51135343484544554C455F"
    "544F5049435F5858585800865245414C5F544F50494301546F70696354657374024B455953014B45593102554E49515F4B45590137463030"
    "3030303131323334303030304142434430303030303036343030303102434C55535445520144656661756C74436C75737465720244454C41"
    "590133025741495401747275650254414753015461674102" "5245414C5F5149440130")
VECTOR6_CQ_HEX = "0000000000000000" "00000102" "0000018BCFE58F8B"
TABLE = parse_delay_level(DEFAULT_MESSAGE_DELAY_LEVEL)


def broker_map(client_props: dict[str, str], cluster: str = "DefaultCluster") -> tuple[dict, str]:
    """What the 4.9.x SendMessageProcessor hands the store: the map (fresh HashMap of the request
    string + CLUSTER, WAIT removed and put back) and the stored string (the map without WAIT)."""
    m = JavaHashMap(client_props.items())
    m["CLUSTER"] = cluster
    text = None
    if "WAIT" in m:
        wait = m.pop("WAIT")
        text = encode_properties(dict(m.items()))
        m["WAIT"] = wait
    else:
        text = encode_properties(dict(m.items()))
    return dict(m.items()), text


def test_vector6_through_the_store_put_path(tmp_path):
    props, text = broker_map({"TAGS": "TagA", "KEYS": "KEY1", "WAIT": "true", "DELAY": "3", "UNIQ_KEY": UNIQ})
    assert "WAIT" not in text  # without a delay the broker stores no WAIT ...
    store = open_store(tmp_path, ManualClock(1_700_000_000_123))
    res = store.put_message(vector3_message(properties=props, properties_string=text))
    assert res.ok and res.append_result.wrote_bytes == 258
    data = (tmp_path / "commitlog" / "00000000000000000000").read_bytes()
    assert data[:258].hex().upper() == VECTOR6_HEX  # ... but the re-serialised parked record has it
    cq = (tmp_path / "consumequeue" / SCHEDULE_TOPIC / "2" / "00000000000000000000").read_bytes()
    assert cq[:20].hex().upper() == VECTOR6_CQ_HEX
    assert store.get_max_offset_in_queue("TopicTest", 0) == 0  # nothing in the real queue yet
    store.shutdown()


def test_plain_send_is_not_rewritten(tmp_path):
    props, text = broker_map({"TAGS": "TagA", "KEYS": "KEY1", "WAIT": "true", "UNIQ_KEY": UNIQ})
    store = open_store(tmp_path, ManualClock(1_700_000_000_123))
    res = store.put_message(vector3_message(properties=props, properties_string=text))
    rec = store.look_message_by_offset(res.append_result.wrote_offset)
    assert rec.topic == "TopicTest" and "REAL_TOPIC" not in rec.properties and "WAIT" not in rec.properties
    store.shutdown()


@pytest.mark.parametrize("level,queue_id,stored_delay", [(1, 0, "1"), (18, 17, "18"), (19, 17, "18"), (999, 17, "18")])
def test_levels_map_to_queues_and_clamp(level, queue_id, stored_delay):
    rec = transform_delay_level(vector3_message(properties={"DELAY": str(level), "TAGS": "A"}, queue_id=3), TABLE)
    assert (rec.topic, rec.queue_id) == (SCHEDULE_TOPIC, queue_id)
    assert rec.properties["DELAY"] == stored_delay
    assert rec.properties["REAL_TOPIC"] == "TopicTest" and rec.properties["REAL_QID"] == "3"
    assert rec.body == b"Hello RocketMQ" and rec.properties_string is None


@pytest.mark.parametrize("props,sys_flag", [
    ({"DELAY": "0"}, 0), ({"DELAY": "-2"}, 0), ({}, 0), ({"DELAY": "3"}, 0x4), ({"DELAY": "3"}, 0xC)])
def test_no_rewrite(props, sys_flag):
    rec = vector3_message(properties=props, sys_flag=sys_flag)
    assert transform_delay_level(rec, TABLE) is rec


def test_commit_type_is_rewritten():
    rec = transform_delay_level(vector3_message(properties={"DELAY": "2"}, sys_flag=0x8), TABLE)
    assert rec.topic == SCHEDULE_TOPIC and rec.queue_id == 1


def test_bad_delay_property_is_illegal(tmp_path):
    with pytest.raises(InvalidDelayLevelError, match="'3s'"):
        transform_delay_level(vector3_message(properties={"DELAY": "3s"}), TABLE)
    store = open_store(tmp_path, ManualClock(1_700_000_000_123))
    res = store.put_message(vector3_message(properties={"DELAY": " 3"}))
    assert res.status is PutMessageStatus.MESSAGE_ILLEGAL and "DELAY" in res.error
    assert store.get_max_phy_offset() == 0  # nothing stored
    store.shutdown()


def test_batch_with_delay_is_rejected(tmp_path):
    from pymq_ref.formats.batch import BatchEntry, encode_batch
    store = open_store(tmp_path, ManualClock(1_700_000_000_123))
    body = encode_batch([BatchEntry(body=b"a", properties={"UNIQ_KEY": "U1"})])
    res = store.put_messages(vector3_message(body=body, properties={"DELAY": "2", "CLUSTER": "C"}))
    assert res.status is PutMessageStatus.MESSAGE_ILLEGAL
    store.shutdown()


def test_parked_record_put_verbatim_keeps_its_bytes(tmp_path):
    """pymq-ref difference (documented): a record already in SCHEDULE_TOPIC_XXXX is not re-parked."""
    props = {"REAL_TOPIC": "TopicTest", "KEYS": "KEY1", "UNIQ_KEY": UNIQ, "CLUSTER": "DefaultCluster",
             "DELAY": "3", "WAIT": "true", "TAGS": "TagA", "REAL_QID": "0"}
    store = open_store(tmp_path, ManualClock(1_700_000_000_123))
    store.put_message(vector3_message(topic=SCHEDULE_TOPIC, queue_id=2, properties=props))
    data = (tmp_path / "commitlog" / "00000000000000000000").read_bytes()
    assert data[:258].hex().upper() == VECTOR6_HEX
    store.shutdown()


# -- the level table ----------------------------------------------------------------------------

def test_default_table():
    assert TABLE == {1: 1000, 2: 5000, 3: 10000, 4: 30000, 5: 60000, 6: 120000, 7: 180000, 8: 240000,
                     9: 300000, 10: 360000, 11: 420000, 12: 480000, 13: 540000, 14: 600000, 15: 1200000,
                     16: 1800000, 17: 3600000, 18: 7200000}


def test_custom_tables():
    assert parse_delay_level("1d 2h 3m 4s") == {1: 86_400_000, 2: 7_200_000, 3: 180_000, 4: 4000}
    assert parse_delay_level("500s") == {1: 500_000}
    assert parse_delay_level("1s 2s ") == {1: 1000, 2: 2000}  # Java's split drops trailing empties
    assert parse_delay_level("+1s 01m") == {1: 1000, 2: 60_000}  # Long.parseLong accepts these


@pytest.mark.parametrize("text,index", [("", 0), ("1s  5s", 1), (" 1s", 0), ("1x", 0), ("1S", 0), ("s", 0),
                                        ("1.5s", 0), ("1s 2", 1), ("1_0s", 0), ("1s\t2s", 0)])
def test_bad_tables(text, index):
    with pytest.raises(DelayLevelFormatError) as e:
        parse_delay_level(text)
    assert e.value.index == index and repr(text) in str(e.value)


@given(st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from("smhd")), min_size=1, max_size=40))
def test_parser_roundtrip(levels):
    text = " ".join(f"{n}{u}" for n, u in levels)
    unit = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
    assert parse_delay_level(text) == {i + 1: n * unit[u] for i, (n, u) in enumerate(levels)}


@given(st.text(max_size=12))
def test_parse_java_integer_matches_java_rules(text):
    value = parse_java_integer(text)
    body = text[1:] if text[:1] in ("+", "-") else text
    ok = bool(body) and body.isdecimal() and -(2**31) <= int(text if text[:1] != "+" else body) <= 2**31 - 1
    assert (value is not None) == ok
    if ok:
        assert value == int(text if text[:1] != "+" else body)


_KEY = st.text(st.characters(min_codepoint=33, max_codepoint=0x2FF), min_size=1, max_size=8)


@settings(max_examples=200)
@given(st.lists(_KEY, unique=True, max_size=30), st.lists(_KEY, max_size=4))
def test_fast_hashmap_order_equals_javahashmap(keys, extra):
    m = JavaHashMap((k, "v") for k in keys)
    for k in extra:
        m[k] = "w"
    assert list(hashmap_properties(dict.fromkeys(keys, "v"), dict.fromkeys(extra, "w"))) == list(m)
    assert java_hashmap_order(keys) == list(JavaHashMap((k, "v") for k in keys))
    assert list(hashmap_order(dict.fromkeys(keys, "v"))) == list(JavaHashMap((k, "v") for k in keys))


@settings(max_examples=100)
@given(st.dictionaries(_KEY.filter(lambda k: k not in ("DELAY", "REAL_TOPIC", "REAL_QID")), _KEY, max_size=12),
       st.integers(1, 40), st.integers(0, 7))
def test_rewrite_property(props, level, qid):
    props = dict(props, DELAY=str(level))
    order = java_hashmap_order(props)
    src = vector3_message(properties={k: props[k] for k in order}, queue_id=qid)
    out = transform_delay_level(src, TABLE)
    m = JavaHashMap(src.properties.items())
    if level > 18:
        m["DELAY"] = "18"
    m["REAL_TOPIC"] = "TopicTest"
    m["REAL_QID"] = str(qid)
    assert list(out.properties.items()) == list(m.items())
    assert out.queue_id == min(level, 18) - 1
    assert decode_record(encode_message(out), with_spans=False).properties == out.properties
