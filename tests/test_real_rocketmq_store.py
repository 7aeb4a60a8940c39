"""Our decoders against a store written by the real Apache RocketMQ 4.9.4 store classes.

The fixture (tests/data/rocketmq-4.9.4/store, see tests/data/rocketmq-4.9.4/README.md) was written by RocketMQ's own
DefaultMessageStore; its messages.jsonl holds what RocketMQ returned for every put and read back
itself. Nothing in it comes from pymq_ref.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pymq_ref import oracle
from pymq_ref.formats.consume_queue import decode_cq_unit
from pymq_ref.tools.segments import open_readonly, walk_segment

STORE = Path(__file__).parent / "data" / "rocketmq-4.9.4" / "store"
EXPECTED = [json.loads(line) for line in (STORE.parent / "messages.jsonl").read_text(encoding="utf-8").splitlines()]


def host(java_text: str) -> oracle.Host:
    """Java prints IPv6 as [0:0:0:0:0:0:0:1]:port; ours is the compressed [::1]:port form."""
    return oracle.Host.parse(java_text)


def pymq(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pymq_ref.cli", *args], capture_output=True, text=True)


def decoded_records() -> dict[int, oracle.MessageRecord]:
    records = {}
    for segment in sorted((STORE / "commitlog").iterdir()):
        with open_readonly(segment) as buf:
            for item in walk_segment(buf, base=int(segment.name)):
                if isinstance(item, oracle.MessageRecord):
                    records[item.phy_offset] = item
                    assert oracle.encode_message(item) == bytes(buf[item.phy_offset - int(segment.name):][:item.total_size])
    return records


def test_every_record_matches_what_rocketmq_returned():
    records = decoded_records()
    assert len(records) == len(EXPECTED) == 135
    for want in EXPECTED:
        got = records[want["physicalOffset"]]
        assert got.crc_ok and got.total_size == want["wroteBytes"]
        assert (got.topic, got.queue_id, got.queue_offset) == (want["topic"], want["queueId"], want["queueOffset"])
        assert (got.sys_flag, got.flag, got.reconsume_times) == (want["sysFlag"], want["flag"], want["reconsumeTimes"])
        assert (got.store_timestamp, got.born_timestamp) == (want["storeTimestamp"], want["bornTimestamp"])
        assert (got.born_host, got.store_host) == (host(want["bornHost"]), host(want["storeHost"]))
        assert got.body_crc == want["bodyCRC"] and got.body == base64.b64decode(want["bodyBase64"])
        assert got.prepared_transaction_offset == want["preparedTransactionOffset"]
        assert got.msg_id == want["msgId"] and got.properties_string == want["propertiesString"]
        assert list(got.properties.items()) == [tuple(p) for p in dict((k, v) for k, v in want["properties"]).items()]


def test_stored_property_order_is_java_hashmap_order():
    """Re-serialising each stored map through JavaHashMap (with WAIT put and removed) gives RocketMQ's exact bytes."""
    for want in EXPECTED:
        if want["kind"] != "plain":
            continue
        stored = oracle.decode_properties(want["propertiesString"])
        replay = oracle.JavaHashMap({**stored, "WAIT": "true"})
        del replay["WAIT"]
        assert oracle.encode_properties(replay) == want["propertiesString"]


def test_inspect_decodes_every_segment_and_blank():
    blanks = []
    messages = 0
    for segment in sorted((STORE / "commitlog").iterdir()):
        result = pymq("inspect", str(segment), "--format", "jsonl")
        assert result.returncode == 0, result.stderr
        objects = [json.loads(line) for line in result.stdout.splitlines()]
        messages += sum(o["type"] == "message" for o in objects)
        blanks += [(o["phy_offset"], o["total_size"]) for o in objects if o["type"] == "blank"]
    assert messages == 135
    assert blanks == [(64939, 597), (130069, 1003), (194246, 2362)]


def test_consume_queue_units_point_at_their_records():
    records = decoded_records()
    for want in EXPECTED:
        unit_info = want.get("consumeQueueEntry")
        if not unit_info:
            continue
        path = STORE / unit_info["file"]
        with open_readonly(path) as buf:
            unit = decode_cq_unit(buf, unit_info["byteOffsetInFile"])
        assert (unit.phy_offset, unit.size, unit.tags_code) == (
            unit_info["commitLogOffset"], unit_info["size"], unit_info["tagsCode"])
        record = records[unit.phy_offset]
        if record.topic != "SCHEDULE_TOPIC_XXXX":
            assert unit.tags_code == record.tags_code
        else:  # CommitLog.checkMessageAndReturnSize: the deliver time (level 3 = 10 s after the store time)
            assert unit.tags_code == record.store_timestamp + 10_000


def test_store_summary_matches_rocketmq_reopen():
    doc = json.loads(pymq("inspect", str(STORE), "--format", "json").stdout)
    assert (doc["commitlog"]["min_offset"], doc["commitlog"]["max_offset"]) == (0, 216023)
    maxima = {(t, int(q)): info["max_offset"] for t, v in doc["topics"].items() for q, info in v["queues"].items()}
    assert maxima == {("TopicTest", 0): 61, ("TopicTest", 1): 22, ("TopicTest", 2): 22, ("TopicTest", 3): 24,
                      ("SCHEDULE_TOPIC_XXXX", 2): 3, ("OtherTopic", 0): 3}
    assert [i["entries"] for i in doc["index"]] == [199, 89]


@pytest.mark.parametrize("index_file", sorted(p.name for p in (STORE / "index").iterdir()))
def test_index_entries_hash_the_keys_of_their_records(index_file):
    records = decoded_records()
    result = pymq("inspect", str(STORE / "index" / index_file), "--format", "jsonl")
    assert result.returncode == 0, result.stderr
    entries = [json.loads(line) for line in result.stdout.splitlines() if '"index_entry"' in line]
    assert entries
    for entry in entries:
        record = records[entry["phy_offset"]]
        keys = [record.uniq_key] + record.keys
        assert entry["key_hash"] in {oracle.index_key_hash(f"{record.topic}#{k}") for k in keys if k}
