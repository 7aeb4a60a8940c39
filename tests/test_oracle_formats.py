"""Every format of the oracle API, through its stable names only: round trips on the bytes the real
RocketMQ 4.9.4 wrote (``tests/data/rocketmq-4.9.4*/``, ``corpus/frames/``) and golden values it
answered (the allocation and SQL92 recordings). The docstring of :mod:`pymq_ref.oracle` lists
exactly ``__all__``."""

from __future__ import annotations

import json
import re
import zlib
from functools import cache
from pathlib import Path

import pytest

from pymq_ref import oracle

TESTS = Path(__file__).parent
REAL = TESTS / "data" / "rocketmq-4.9.4"
REAL_EXT = TESTS / "data" / "rocketmq-4.9.4-ext"
FRAMES = TESTS.parent / "corpus" / "frames"
FRAME_INDEX = json.loads((FRAMES / "index.json").read_text())


@cache
def messages() -> list[dict]:
    return [json.loads(line) for line in (REAL / "messages.jsonl").read_text(encoding="utf-8").splitlines()]


def files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


# -- the surface ----------------------------------------------------------------------------------

def test_the_docstring_lists_exactly_the_exported_names():
    doc = oracle.__doc__
    listed_part = doc.split("The names, grouped", 1)[1].split("\n\n", 2)[1]
    listed = re.findall(r"``([A-Za-z_][A-Za-z0-9_]*)``", listed_part)
    assert sorted(listed) == sorted(oracle.__all__)
    assert len(listed) == len(set(listed)), "a name is listed twice"


def test_every_exported_name_resolves():
    assert len(oracle.__all__) == len(set(oracle.__all__))
    for name in oracle.__all__:
        assert getattr(oracle, name) is not None, name


# -- the CommitLog record, ids, properties ------------------------------------------------------

def commitlog_records() -> list:
    out = []
    for seg in files(REAL / "store" / "commitlog"):
        data = seg.read_bytes()
        out += [r for r in oracle.iter_records(data, base=int(seg.name)) if isinstance(r, oracle.MessageRecord)]
    return out


def test_every_real_record_round_trips_and_matches_what_4_9_4_reported():
    records = {r.phy_offset: r for r in commitlog_records()}
    for seg in files(REAL / "store" / "commitlog"):
        data = seg.read_bytes()
        for r in oracle.iter_records(data, base=int(seg.name)):
            if isinstance(r, oracle.MessageRecord):
                start = r.phy_offset - int(seg.name)
                assert oracle.encode_message(r) == data[start:start + r.total_size]
    for m in messages():
        if m["putStatus"] != "PUT_OK" or m["batch"]:
            continue
        r = records[m["physicalOffset"]]
        assert r.total_size == m["wroteBytes"] == oracle.message_length(
            r.sys_flag, len(r.body), len(r.topic.encode()), len(r.properties_string.encode()),
            r.magic_code == oracle.MESSAGE_MAGIC_CODE_V2)
        assert r.properties_string == m["propertiesString"]
        assert oracle.decode_properties(m["propertiesString"]) == dict(m["properties"])
        assert r.crc_ok and r.body_crc == oracle.body_crc(r.body)
        host, offset = oracle.parse_offset_msg_id(m["msgId"])
        assert offset == m["physicalOffset"] and oracle.offset_msg_id(r.store_host, r.phy_offset) == m["msgId"]
        assert oracle.transaction_type(r.sys_flag) == m["sysFlag"] & 0xC
        if m.get("tags"):
            assert oracle.tags_code(m["tags"]) == m["tagsCodeAtPut"] or r.topic == oracle.SCHEDULE_TOPIC


# -- ConsumeQueue, ConsumeQueueExt ---------------------------------------------------------------

def test_every_real_consume_queue_unit_round_trips_and_points_at_its_record():
    records = {r.phy_offset: r for r in commitlog_records()}
    delay_table = oracle.parse_delay_level(oracle.DEFAULT_MESSAGE_DELAY_LEVEL)
    seen = 0
    for path in files(REAL / "store" / "consumequeue"):
        data = path.read_bytes()
        for pos in range(0, len(data), oracle.CQ_STORE_UNIT_SIZE):
            raw = data[pos:pos + oracle.CQ_STORE_UNIT_SIZE]
            unit = oracle.decode_cq_unit(data, pos)
            assert oracle.encode_cq_unit(unit.phy_offset, unit.size, unit.tags_code) == raw
            if unit.size == 0 and unit.phy_offset == 0:
                continue  # not yet written
            record = records[unit.phy_offset]
            assert unit.size == record.total_size
            topic = path.parent.parent.name
            if topic == oracle.SCHEDULE_TOPIC:  # the tagsCode of a parked message is its delivery time
                level = int(record.properties["DELAY"])
                assert oracle.delay_level_to_queue_id(level) == int(path.parent.name)
                assert unit.tags_code == oracle.compute_deliver_timestamp(level, record.store_timestamp, delay_table)
            else:
                assert unit.tags_code == oracle.tags_code(record.properties.get("TAGS"))
            seen += 1
    assert seen >= 100


def test_every_real_consume_queue_ext_unit_round_trips():
    seen = 0
    for path in files(REAL_EXT / "store" / "consumequeue_ext"):
        data = path.read_bytes()
        for item in oracle.iter_cq_ext_units(data):
            if not isinstance(item, tuple):
                continue  # the end of the units: a filler or zeros
            pos, unit = item
            encoded = oracle.encode_cq_ext_unit(unit.tags_code, unit.msg_store_time, unit.filter_bit_map)
            assert encoded == data[pos:pos + unit.size]
            assert oracle.decode_cq_ext_unit(encoded, 0, with_spans=False) == unit
            seen += 1
    assert seen >= 3
    for offset in (0, 20, 12345678):
        address = oracle.cq_ext_address(offset)
        assert oracle.is_ext_address(address) and oracle.cq_ext_offset(address) == offset
    with pytest.raises(oracle.EncodeError):
        oracle.cq_ext_address(-1)


# -- IndexFile, checkpoint ---------------------------------------------------------------------

def test_every_real_index_file_round_trips_and_finds_the_recorded_keys():
    slots, entries = 100, 200  # the fixture's maxHashSlotNum / maxIndexNum
    keys = {}
    for m in messages():
        for key, present in m.get("indexKeys", {}).items():
            if present:
                keys.setdefault(key, set()).add(m["physicalOffset"])
    found: dict[str, set[int]] = {}
    for path in files(REAL / "store" / "index"):
        data = path.read_bytes()
        assert len(data) == oracle.index_file_size(slots, entries)
        header = oracle.decode_index_header(data)
        assert oracle.encode_index_header(header) == data[:oracle.INDEX_HEADER_SIZE]
        for slot in range(slots):
            value, _ = oracle.decode_index_slot(data, slot)
            at = oracle.index_slot_position(slot)
            assert oracle.encode_index_slot(value) == data[at:at + oracle.HASH_SLOT_SIZE]
        for number in range(1, header.index_count):
            entry = oracle.decode_index_entry(data, oracle.index_entry_position(number, slots))
            at = oracle.index_entry_position(number, slots)
            assert oracle.encode_index_entry(entry) == data[at:at + oracle.INDEX_ENTRY_SIZE]
        for key in keys:  # walk each key's chain as IndexFile.selectPhyOffset does
            key_hash = oracle.index_key_hash(key)
            number, _ = oracle.decode_index_slot(data, key_hash % slots)
            while 0 < number < header.index_count:
                entry = oracle.decode_index_entry(data, oracle.index_entry_position(number, slots))
                if entry.key_hash == key_hash:
                    found.setdefault(key, set()).add(entry.phy_offset)
                number = entry.prev_index
    assert all(keys[k] <= found.get(k, set()) for k in keys)
    assert len(oracle.index_file_name(1795266639741)) == 17
    assert oracle.index_time_diff(1795266640741, 1795266639741) == 1


def test_the_real_checkpoint_round_trips():
    data = (REAL / "store" / "checkpoint").read_bytes()
    cp = oracle.decode_checkpoint(data)
    assert oracle.encode_checkpoint(cp, full_page=False) == data[:24]
    assert oracle.encode_checkpoint(cp) == data
    assert cp.physic_msg_timestamp >= max(m["storeTimestamp"] for m in messages() if m["putStatus"] == "PUT_OK") - 10_000


def test_truncated_units_raise_typed_errors():
    for decode in (oracle.decode_cq_unit, oracle.decode_index_header, oracle.decode_checkpoint,
                   oracle.decode_timer_log_unit, oracle.decode_timer_slot, oracle.decode_timer_checkpoint):
        with pytest.raises(oracle.TruncatedError):
            decode(b"\x00" * 3, 0)
    with pytest.raises(oracle.EncodeError):
        oracle.encode_index_slot(2**31)
    with pytest.raises(oracle.EncodeError):
        oracle.encode_index_entry(oracle.IndexEntry(2**31, 0, 0, 0))


# -- the 5.x timer files -------------------------------------------------------------------------

def test_timer_units_round_trip_and_keep_5_1_4_constants():
    unit = oracle.TimerLogUnit(prev_pos=-1, magic=1, curr_write_time_ms=1700000000000, delayed_delta=5000,
                               offset_py=4096, size_py=230, real_topic_hash=oracle.java_string_hash("TopicTest"))
    raw = oracle.encode_timer_log_unit(unit)
    assert len(raw) == 52 and oracle.decode_timer_log_unit(raw, 0, with_spans=False) == unit
    blank = oracle.decode_timer_log_unit(oracle.encode_timer_log_blank(100), 0, with_spans=False)
    assert isinstance(blank, oracle.TimerLogBlank) and blank.remaining == 100
    assert oracle.encode_timer_log_blank(100)[12:16] == (0xBBCCDDEE ^ (1880681586 + 8)).to_bytes(4, "big")
    slot_raw = oracle.encode_timer_slot(1700000005000, 0, 52, 2)
    slot = oracle.decode_timer_slot(slot_raw, 0, with_spans=False)
    assert (slot.time_ms, slot.first_pos, slot.last_pos, slot.num) == (1700000005000, 0, 52, 2)
    assert oracle.timer_slot_index(1700000005000) == 1700000005 % (2 * 7 * 86400)  # two turns of the wheel
    cp = oracle.TimerCheckpoint(1700000000000, 104, 7, 7, 1, 1700000000000, 3)
    assert oracle.decode_timer_checkpoint(oracle.encode_timer_checkpoint(cp), 0, with_spans=False) == cp
    assert len(oracle.encode_timer_checkpoint(cp)) == 4096


# -- config JSON ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["TopicConfigSerializeWrapper", "ConsumerOffsetSerializeWrapper",
                                  "DelayOffsetSerializeWrapper"])
def test_config_files_as_4_9_4_persists_them_read_and_write_back(name, tmp_path):
    text = (FRAMES / "bodies" / f"{name}.pretty.bin").read_text(encoding="utf-8")  # ConfigManager#persist
    value = oracle.loads_config_json(text)
    assert oracle.dumps_config_json(value) == text
    path = tmp_path / "config.json"
    path.write_text("{ not json")
    (tmp_path / "config.json.bak").write_text(text)
    assert oracle.read_config_file(str(path)) == value  # a torn file falls back to the .bak, as 4.9.4 does


def test_object_keys_read_with_the_tolerant_reader():
    text = (FRAMES / "bodies" / "OffsetSerializeWrapper.pretty.bin").read_text(encoding="utf-8")
    table = oracle.parse_fastjson(text)["offsetTable"]
    assert {(k["brokerName"], k["queueId"]): v for k, v in table.items()} == {("broker-b", 3): 7, ("broker-a", 0): 10}
    with pytest.raises(oracle.JsonSyntaxError):
        oracle.parse_fastjson("{" * 10_000)


# -- remoting --------------------------------------------------------------------------------------

REFUSED = {("POP_MESSAGE_5x.request.code_overflow", "ROCKETMQ")}  # a code the binary header cannot carry


def command_from_inputs(case: dict, java_frame: bytes, stype: str) -> oracle.RemotingCommand:
    """The command a header case describes (its typed header, ext fields, opaque, remark…)."""
    cls = case["headerClass"] and oracle.HEADER_CLASSES[case["headerClass"].rsplit(".", 1)[1]]
    hlen = int.from_bytes(java_frame[4:8], "big") & 0xFFFFFF
    body = java_frame[8 + hlen:] or None
    header = None
    if cls:
        attrs = {f.name: f.attr for f in cls.FIELDS}
        values = {attrs[k]: (oracle.body_crc(body) if body else 0) if v == "$bodyCrc32" else v
                  for k, v in case["fields"].items()}
        header = cls(**values)
    common = dict(opaque=case["opaque"], remark=case["remark"], language=oracle.LanguageCode[case.get("language", "JAVA")],
                  version=case.get("version", 401), ext_fields=case.get("extFields"))
    if case["kind"] == "response":
        cmd = oracle.RemotingCommand.response(case["code"], header=header, body=body, **common)
    else:
        cmd = oracle.RemotingCommand.request(case["code"], header, body, oneway=case.get("oneway", False), **common)
    return cmd.with_(serialize_type=oracle.SerializeType[stype])


def test_every_golden_header_frame_encodes_to_java_s_bytes_and_decodes_as_java_read_it():
    checked = 0
    for entry in FRAME_INDEX["headers"]:
        expected = json.loads((FRAMES / "headers" / entry["expected"]).read_text(encoding="utf-8"))
        for stype, name in entry["files"].items():
            frame = (FRAMES / "headers" / name).read_bytes()
            assert oracle.frame_length(frame) == len(frame)
            cmd = command_from_inputs(expected["input"], frame, stype)
            if (entry["case"], stype) in REFUSED:
                with pytest.raises(oracle.EncodeError):
                    oracle.encode_frame(cmd)
            else:
                assert oracle.encode_frame(cmd) == frame, (entry["case"], stype)
            decoded = oracle.decode_frame(frame).command
            java = expected["decoded"][stype]
            assert (decoded.code, decoded.opaque, decoded.remark) == (
                java["command"]["code"], java["command"]["opaque"], java["command"]["remark"])
            cls = entry["headerClass"] and oracle.HEADER_CLASSES[entry["headerClass"].rsplit(".", 1)[1]]
            if cls and "header" in java:
                assert decoded.header(cls).values() == java["header"], entry["case"]
            checked += 1
    assert checked >= 250


def test_every_header_and_body_class_of_4_9_4_has_a_name():
    assert {c.rsplit(".", 1)[1] for c in FRAME_INDEX["headerClasses"]} <= set(oracle.HEADER_CLASSES)
    assert {b["class"].rsplit(".", 1)[1] for b in FRAME_INDEX["bodies"]} <= set(oracle.BODY_CLASSES)
    assert oracle.request_code_name(10) == "SEND_MESSAGE" == oracle.RequestCode(10).name
    assert oracle.response_code_name(17) == "TOPIC_NOT_EXIST" == oracle.ResponseCode(17).name


def test_golden_bodies_decode_and_encode_back_to_java_s_bytes():
    checked = 0
    for entry in FRAME_INDEX["bodies"]:
        cls = oracle.BODY_CLASSES[entry["class"].rsplit(".", 1)[1]]
        expected = json.loads((FRAMES / "bodies" / entry["expected"]).read_text(encoding="utf-8"))
        for encoding in ("default", "standard"):
            if encoding not in entry["files"] or not expected["encodings"][encoding].get("reencodedSame", True):
                continue
            data = (FRAMES / "bodies" / entry["files"][encoding]).read_bytes()
            assert oracle.encode_body(oracle.decode_body(cls, data), standard=encoding == "standard") == data
            checked += 1
        if "compressed" in entry["files"]:
            data = (FRAMES / "bodies" / entry["files"]["compressed"]).read_bytes()
            body = oracle.decode_register_body(data, compressed=True)
            assert oracle.encode_register_body(body, compressed=True) == data
            assert zlib.decompress(data)
    assert checked >= 50
    with pytest.raises(oracle.BodyError):
        oracle.decode_body(oracle.BODY_CLASSES["TopicConfigSerializeWrapper"], b"{]")


def test_header_of_and_body_of_pick_the_classes_of_a_code():
    entry = next(e for e in FRAME_INDEX["headers"] if e["case"] == "SEND_MESSAGE.request")
    cmd = oracle.decode_frame((FRAMES / "headers" / entry["files"]["JSON"]).read_bytes()).command
    assert type(oracle.header_of(cmd)).__name__ == "SendMessageRequestHeader"
    with pytest.raises(oracle.FrameError):
        oracle.decode_frame(b"\x00\x00\x00\x04\x00\x00\x00\x09")


# -- allocation, filters, delay, retry -----------------------------------------------------------

DIGITS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def test_allocation_strategies_answer_as_4_9_4_on_recorded_rebalances():
    lines = (TESTS / "data" / "rocketmq-4.9.4-client-logic" / "allocate.jsonl").read_text(encoding="utf-8")
    checked = 0
    for line in lines.splitlines()[:200]:
        s = json.loads(line)
        if s["groups"] is None or s["cids"] is None or not s["sort"]:
            continue
        mq_all = sorted(oracle.MessageQueue(t, b, q) for t, b, n in s["groups"] for q in range(n))
        cid_all = sorted(s["cids"], key=lambda c: c.encode("utf-16-be", "surrogatepass"))
        for key, name in (("AVG", "AVG"), ("AVG_BY_CIRCLE", "AVG_BY_CIRCLE"), ("CH10", "CONSISTENT_HASH")):
            answer = s["java"]["results"][key]
            if isinstance(answer, dict):
                continue
            strategy = oracle.strategy_for_name(name)
            for cid, expected in zip(cid_all, answer):
                if isinstance(expected, int):
                    with pytest.raises(oracle.AllocateError):
                        strategy.allocate("GID_client_logic", cid, mq_all, cid_all)
                    continue
                got = strategy.allocate("GID_client_logic", cid, mq_all, cid_all)
                assert got == [mq_all[DIGITS.index(c)] for c in expected], (s["id"], key, cid)
                checked += 1
    assert checked >= 300


def test_sql92_and_tag_filters_answer_as_4_9_4():
    lines = (TESTS / "data" / "sql92-4.9.4" / "vectors.jsonl").read_text(encoding="utf-8").splitlines()
    for line in lines[::7]:
        case = json.loads(line)
        try:
            compiled = oracle.compile_sql92(case["e"])
        except oracle.FilterSyntaxError:
            assert case["r"] == "C", case
            continue
        try:
            value = compiled.evaluate(case["p"])
        except oracle.FilterTypeError:
            assert case["r"] == "E", case
            continue
        assert {True: "T", False: "F", None: "N"}[value] == case["r"], case
    sub = oracle.parse_tag_expression("TagA || TagB")
    assert sub.codes == (oracle.tags_code("TagA"), oracle.tags_code("TagB"))
    tag_filter = oracle.build_filter("TAG", "TagA || TagB")
    assert tag_filter.is_matched_by_consume_queue(oracle.tags_code("TagB"))
    assert not tag_filter.is_matched_by_consume_queue(oracle.tags_code("TagC"))
    with pytest.raises(oracle.TagExpressionError):
        oracle.parse_tag_expression("||")


def test_delay_levels_and_the_retry_ladder():
    table = oracle.parse_delay_level(oracle.DEFAULT_MESSAGE_DELAY_LEVEL)
    assert len(table) == 18 and table[1] == 1000 and table[3] == 10_000 and table[18] == 7_200_000
    assert oracle.queue_id_to_delay_level(oracle.delay_level_to_queue_id(5)) == 5
    assert oracle.compute_deliver_timestamp(3, 1_700_000_000_000, table) == 1_700_000_010_000
    # the documented 4.x retry ladder: 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h
    ladder = [delay for _, _, delay in oracle.retry_schedule(table)]
    assert ladder == [s * 1000 for s in (10, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800,
                                         3600, 7200)]
    assert oracle.retry_delay_level(0) == 3 and oracle.retry_delay_level(4, requested_level=2) == 2
    record = oracle.MessageRecord(topic="TopicTest", body=b"x", properties={"DELAY": "3", "TAGS": "TagA"},
                                  born_host=oracle.Host("127.0.0.1", 50000), store_timestamp=1_700_000_000_000)
    parked = oracle.transform_delay_level(record, table)
    assert parked.topic == oracle.SCHEDULE_TOPIC and parked.queue_id == 2
    assert parked.properties["REAL_TOPIC"] == "TopicTest"
