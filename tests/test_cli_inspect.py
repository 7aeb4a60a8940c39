"""`pymq inspect` on real files: segments we write, damaged copies, and (when present) a store written
by the real RocketMQ 4.9.4 store code (tests/data/rocketmq-4.9.4/store)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pymq_ref import oracle
from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import MessageRecord, encode_blank, encode_message

SEGMENT = 4096


def pymq(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pymq_ref.cli", *args], capture_output=True, text=True, cwd=cwd)


def write_segments(directory: Path, count: int = 30, size: int = SEGMENT) -> list[MessageRecord]:
    """Records put the way the store puts them: consecutive offsets, rolling with a blank (length + 8 rule)."""
    commitlog = directory / "commitlog"
    commitlog.mkdir(parents=True)
    files: dict[int, bytearray] = {}
    records, phy = [], 0
    for i in range(count):
        record = MessageRecord(
            topic="TopicTest" if i % 3 else "订单", body=os.urandom(i * 37 % 700), queue_id=i % 4, queue_offset=i // 4,
            properties={"KEYS": f"k{i} k{i}b", "TAGS": "TagA" if i % 2 else "TagB", "UNIQ_KEY": f"{i:032X}"},
            born_host=Host("::1", 50000) if i == 7 else Host("10.1.2.3", 50000), sys_flag=0x10 if i == 7 else 0,
            born_timestamp=1700000000000 + i, store_timestamp=1700000000100 + i)
        length = len(encode_message(record))
        if phy % size + length + 8 > size:  # does not fit: blank, then the next file
            files.setdefault(phy - phy % size, bytearray(size))[phy % size:phy % size + 8] = encode_blank(size - phy % size)
            phy += size - phy % size
        record = record.replace(phy_offset=phy)
        data = encode_message(record)
        segment = files.setdefault(phy - phy % size, bytearray(size))
        segment[phy % size:phy % size + len(data)] = data
        records.append(oracle.decode_message(data, base=phy))
        phy += len(data)
    for start, segment in files.items():
        (commitlog / f"{start:020d}").write_bytes(segment)
    return records


def jsonl(result: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_jsonl_decodes_every_record_of_every_segment(tmp_path):
    records = write_segments(tmp_path)
    files = sorted((tmp_path / "commitlog").iterdir())
    assert len(files) >= 3
    seen = []
    for f in files:
        result = pymq("inspect", str(f), "--format", "jsonl")
        assert result.returncode == 0, result.stderr
        objects = jsonl(result)
        if f != files[-1]:
            assert objects[-1]["type"] == "blank"
            assert objects[-1]["phy_offset"] + objects[-1]["total_size"] == int(f.name) + SEGMENT
        seen += [o for o in objects if o["type"] == "message"]
    assert [o["phy_offset"] for o in seen] == [r.phy_offset for r in records]
    for obj, record in zip(seen, records):
        assert obj == record.to_json()
        assert base64.b64decode(obj["body_base64"]) == record.body
    required = {"phy_offset", "total_size", "magic_code", "body_crc", "crc_ok", "queue_id", "flag", "queue_offset",
                "sys_flag", "born_timestamp", "born_host", "store_timestamp", "store_host", "reconsume_times",
                "prepared_transaction_offset", "topic", "properties", "body_base64", "msg_id"}
    assert required <= set(seen[0])
    assert seen[7]["born_host"] == "[::1]:50000" and seen[0]["topic"] == "订单"
    assert seen[1]["msg_id"] == oracle.offset_msg_id(Host("127.0.0.1", 10911), seen[1]["phy_offset"])


def test_at_and_limit(tmp_path):
    records = write_segments(tmp_path)
    first = sorted((tmp_path / "commitlog").iterdir())[0]
    second = [r for r in records if r.phy_offset < SEGMENT][1]
    objects = jsonl(pymq("inspect", str(first), "--format", "jsonl", "--at", hex(second.phy_offset), "--limit", "2"))
    assert [o["phy_offset"] for o in objects] == [second.phy_offset, second.phy_offset + second.total_size]
    bad = pymq("inspect", str(first), "--at", str(10 * SEGMENT))
    assert bad.returncode == 2 and "expected an absolute offset within this file" in bad.stderr


def test_json_text_and_html_formats(tmp_path):
    write_segments(tmp_path)
    f = sorted((tmp_path / "commitlog").iterdir())[0]
    doc = json.loads(pymq("inspect", str(f), "--format", "json").stdout)
    assert doc["base_offset"] == 0 and doc["file_size"] == SEGMENT and doc["findings"] == []
    assert doc["records"][-1]["type"] == "blank"
    text = pymq("inspect", str(f), "--limit", "1").stdout
    assert "total_size" in text and "00000000  00 00" in text
    page = pymq("inspect", str(f), "--format", "html", "--limit", "2").stdout
    assert page.startswith("<!DOCTYPE html>") and page.count('class="pymq-hexview') >= 2


def test_live_segment_ends_at_zeros_without_error(tmp_path):
    records = write_segments(tmp_path)
    last = sorted((tmp_path / "commitlog").iterdir())[-1]
    result = pymq("inspect", str(last), "--format", "json")
    doc = json.loads(result.stdout)
    assert result.returncode == 0
    assert doc["end_of_data"] == records[-1].phy_offset + records[-1].total_size
    assert doc["records"][-1]["type"] == "message"


def test_bad_record_reported_with_offset_and_reason_then_stop(tmp_path):
    records = write_segments(tmp_path)
    f = sorted((tmp_path / "commitlog").iterdir())[0]
    victim = [r for r in records if r.phy_offset < SEGMENT][2]
    data = bytearray(f.read_bytes())
    data[victim.phy_offset + 4] ^= 0x55  # break the magic code
    f.write_bytes(data)
    result = pymq("inspect", str(f), "--format", "jsonl")
    assert result.returncode == 1
    objects = jsonl(result)
    assert [o["type"] for o in objects] == ["message", "message", "error"]
    assert objects[-1]["phy_offset"] == victim.phy_offset + 4 and objects[-1]["field"] == "magic_code"
    assert f"offset {victim.phy_offset + 4}" in result.stderr and "expected 0xDAA320A7" in result.stderr


def test_crc_mismatch_is_reported_but_walk_continues(tmp_path):
    records = write_segments(tmp_path)
    f = sorted((tmp_path / "commitlog").iterdir())[0]
    victim = next(r for r in records if r.body)
    data = bytearray(f.read_bytes())
    data[victim.phy_offset + 88] ^= 1  # first body byte (IPv4 hosts)
    f.write_bytes(data)
    result = pymq("inspect", str(f), "--format", "jsonl")
    assert result.returncode == 1
    objects = jsonl(result)
    assert objects[-1]["type"] == "blank"
    assert [o["crc_ok"] for o in objects if o["type"] == "message"].count(False) == 1
    assert "warning" in result.stderr


def test_inspect_never_writes(tmp_path):
    write_segments(tmp_path)
    files = sorted((tmp_path / "commitlog").iterdir())
    before = {f: (hashlib.sha256(f.read_bytes()).hexdigest(), f.stat().st_mtime_ns) for f in files}
    for f in files:
        f.chmod(stat.S_IRUSR)  # read-only: a write attempt would fail loudly (even root's mmap honours O_RDONLY)
    for f in files:
        for fmt in ("text", "json", "jsonl", "html"):
            assert pymq("inspect", str(f), "--format", fmt).returncode == 0
    assert {f: (hashlib.sha256(f.read_bytes()).hexdigest(), f.stat().st_mtime_ns) for f in files} == before
    assert sorted((tmp_path / "commitlog").iterdir()) == files


def test_unreadable_inputs_exit_2(tmp_path):
    assert pymq("inspect", str(tmp_path / "missing")).returncode == 2
    result = pymq("inspect", str(tmp_path))
    assert result.returncode == 2 and "not a store directory" in result.stderr
    empty = tmp_path / "00000000000000000000"
    empty.write_bytes(b"")
    assert pymq("inspect", str(empty), "--format", "jsonl").returncode == 0
    assert pymq("inspect", "--limit", "x", str(empty)).returncode == 2


def test_help_names_every_option():
    text = pymq("inspect", "--help").stdout
    for option in ("--format", "--at", "--limit", "text", "jsonl"):
        assert option in text


def test_unrecognised_file_asks_for_kind(tmp_path):
    stray = tmp_path / "notes.txt"
    stray.write_text("hello")
    result = pymq("inspect", str(stray))
    assert result.returncode == 2 and "--kind" in result.stderr


def write_derived_files(root: Path, records: list[MessageRecord]) -> None:
    """ConsumeQueue units, a small IndexFile, a checkpoint and a config file for ``records`` (formats only)."""
    from pymq_ref.formats import fastjson
    from pymq_ref.formats.checkpoint import Checkpoint, encode_checkpoint
    from pymq_ref.formats.consume_queue import encode_cq_unit
    from pymq_ref.formats.hashing import index_key_hash
    from pymq_ref.formats.index_file import (IndexEntry, IndexHeader, encode_index_entry, encode_index_header,
                                             entry_position, index_file_size, slot_position)

    queues: dict[tuple[str, int], bytearray] = {}
    for r in records:
        queues.setdefault((r.topic, r.queue_id), bytearray()).extend(encode_cq_unit(r.phy_offset, r.total_size, r.tags_code))
    for (topic, queue_id), units in queues.items():
        d = root / "consumequeue" / topic / str(queue_id)
        d.mkdir(parents=True)
        (d / ("0" * 20)).write_bytes(bytes(units) + bytes(20 * 50 - len(units)))
    slots, entries = 10, 40
    index = bytearray(index_file_size(slots, entries))
    heads: dict[int, int] = {}
    number = 1
    for r in records[:5]:
        for key in [r.uniq_key] + r.keys:
            h = index_key_hash(f"{r.topic}#{key}")
            at = entry_position(number, slots)
            index[at:at + 20] = encode_index_entry(IndexEntry(h, r.phy_offset, 0, heads.get(h % slots, 0)))
            heads[h % slots] = number
            number += 1
    for slot, head in heads.items():
        index[slot_position(slot):slot_position(slot) + 4] = head.to_bytes(4, "big")
    index[:40] = encode_index_header(IndexHeader(records[0].store_timestamp, records[4].store_timestamp, 0,
                                                 records[4].phy_offset, len(heads), number))
    (root / "index").mkdir()
    (root / "index" / "20231114221320100").write_bytes(index)
    (root / "checkpoint").write_bytes(encode_checkpoint(Checkpoint(1700000000100, 1700000000101, 0)))
    (root / "config").mkdir()
    (root / "config" / "delayOffset.json").write_text(fastjson.dumps({"offsetTable": {1: 0, 3: 15}}))


def test_every_store_file_kind_and_the_store_summary(tmp_path):
    records = write_segments(tmp_path)
    write_derived_files(tmp_path, records)
    cq_file = tmp_path / "consumequeue" / "TopicTest" / "1" / ("0" * 20)
    units = jsonl(pymq("inspect", str(cq_file), "--format", "jsonl"))
    expected = [r for r in records if (r.topic, r.queue_id) == ("TopicTest", 1)]
    assert [(u["phy_offset"], u["size"], u["tags_code"]) for u in units] == [
        (r.phy_offset, r.total_size, r.tags_code) for r in expected]
    assert [u["queue_offset"] for u in units] == list(range(len(expected)))
    assert "tags_code" in pymq("inspect", str(cq_file), "--limit", "1").stdout

    index = jsonl(pymq("inspect", str(tmp_path / "index" / "20231114221320100"), "--format", "jsonl"))
    assert index[0]["type"] == "index_header" and index[0]["max_hash_slot_num"] == 10
    entries = [o for o in index if o["type"] == "index_entry"]
    assert len(entries) == index[0]["index_count"] - 1 == 15
    assert {e["phy_offset"] for e in entries} == {r.phy_offset for r in records[:5]}

    cp = jsonl(pymq("inspect", str(tmp_path / "checkpoint"), "--format", "jsonl"))
    assert cp == [{"type": "checkpoint", "physic_msg_timestamp": 1700000000100, "logics_msg_timestamp": 1700000000101,
                   "index_msg_timestamp": 0, "min_timestamp": 1699999997100, "min_timestamp_index": 0}]
    config = jsonl(pymq("inspect", str(tmp_path / "config" / "delayOffset.json"), "--format", "jsonl"))
    assert config[0]["content"] == {"offsetTable": {"1": 0, "3": 15}}

    summary = json.loads(pymq("inspect", str(tmp_path), "--format", "json").stdout)
    assert summary["commitlog"]["max_offset"] == records[-1].phy_offset + records[-1].total_size
    assert summary["topics"]["TopicTest"]["queues"]["1"] == {"files": 1, "min_offset": 0, "max_offset": len(expected)}
    assert sum(t["messages"] for t in summary["topics"].values()) == len(records)
    assert summary["index"][0]["entries"] == 15 and summary["abort_file"] is False
    assert summary["config"] == {"delayOffset.json": {"offsetTable": 2}} and summary["findings"] == []
    text = pymq("inspect", str(tmp_path)).stdout
    assert "queue 1: offsets [0, " in text and "index: 1 file(s)" in text
