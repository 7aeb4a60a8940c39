"""A read-only summary of a whole store directory: files, topics, queues, offsets, checkpoint.

Works on a store written by pymq_ref or by a real RocketMQ broker (storage.md §1). It reads
every file read-only and decodes with :mod:`pymq_ref.formats`; it never takes the store's
``lock`` and never writes.
"""

from __future__ import annotations

from pathlib import Path

from ..formats import fastjson
from ..formats.consume_queue import CQ_STORE_UNIT_SIZE, decode_cq_unit
from ..formats.index_file import decode_index_header
from ..formats.message import BlankRecord
from .segments import EndOfData, Finding, SEGMENT_NAME, open_readonly, walk_segment
from .store_files import walk_checkpoint


def is_store_root(path: Path) -> bool:
    return path.is_dir() and any((path / name).exists() for name in ("commitlog", "consumequeue", "checkpoint"))


def _segments(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if SEGMENT_NAME.match(p.name)) if directory.is_dir() else []


def commitlog_summary(directory: Path) -> dict:
    """Files and [min, max) offsets; max = end of the written data of the last segment."""
    files = _segments(directory)
    doc = {"files": [{"name": f.name, "size": f.stat().st_size} for f in files], "min_offset": 0, "max_offset": 0,
           "findings": []}
    if not files:
        return doc
    sizes = {f.stat().st_size for f in files}
    if len(sizes) > 1:
        doc["findings"].append(f"segments of different sizes: {sorted(sizes)}")
    doc["min_offset"] = int(files[0].name)
    last = files[-1]
    with open_readonly(last) as buf:
        end = int(last.name)
        for item in walk_segment(buf, base=int(last.name), check_crc=False):
            if isinstance(item, EndOfData):
                end = item.phy_offset
            elif isinstance(item, BlankRecord):
                end = item.phy_offset + item.total_size
            elif isinstance(item, Finding):
                doc["findings"].append(item.reason)
                end = item.phy_offset
                break
    doc["max_offset"] = end
    return doc


def consume_queue_summary(queue_dir: Path) -> dict:
    """Files and [min, max) logical offsets of one queue (blank filler units excluded from min)."""
    files = _segments(queue_dir)
    doc = {"files": len(files), "min_offset": 0, "max_offset": 0}
    if not files:
        return doc
    with open_readonly(files[0]) as buf:
        base = int(files[0].name)
        for pos in range(0, len(buf) - CQ_STORE_UNIT_SIZE + 1, CQ_STORE_UNIT_SIZE):
            unit = decode_cq_unit(buf, pos, with_spans=False)
            if unit.is_empty or not unit.is_blank:
                doc["min_offset"] = (base + pos) // CQ_STORE_UNIT_SIZE
                break
    with open_readonly(files[-1]) as buf:
        base = int(files[-1].name)
        lo, hi = 0, len(buf) // CQ_STORE_UNIT_SIZE  # units are written contiguously: find the first empty one
        while lo < hi:
            mid = (lo + hi) // 2
            if decode_cq_unit(buf, mid * CQ_STORE_UNIT_SIZE, with_spans=False).is_empty:
                hi = mid
            else:
                lo = mid + 1
        doc["max_offset"] = base // CQ_STORE_UNIT_SIZE + lo
    return doc


def summarize_store(root: Path) -> dict:
    """Everything an operator wants at a glance, as one JSON-able document."""
    doc: dict = {"type": "store", "root": str(root), "abort_file": (root / "abort").exists(),
                 "commitlog": commitlog_summary(root / "commitlog"), "topics": {}, "index": [], "checkpoint": None,
                 "config": {}}
    cq_root = root / "consumequeue"
    if cq_root.is_dir():
        for topic_dir in sorted(p for p in cq_root.iterdir() if p.is_dir()):
            queues = {}
            for queue_dir in sorted((p for p in topic_dir.iterdir() if p.is_dir() and p.name.isdigit()), key=lambda p: int(p.name)):
                queues[int(queue_dir.name)] = consume_queue_summary(queue_dir)
            doc["topics"][topic_dir.name] = {"queues": queues,
                                             "messages": sum(q["max_offset"] - q["min_offset"] for q in queues.values())}
    index_dir = root / "index"
    if index_dir.is_dir():
        for f in sorted(index_dir.iterdir()):
            if f.is_file():
                with open_readonly(f) as buf:
                    header = decode_index_header(buf, with_spans=False) if len(buf) >= 40 else None
                doc["index"].append({"file": f.name, "size": f.stat().st_size,
                                     "entries": max(0, header.index_count - 1) if header else None,
                                     "begin_timestamp": header.begin_timestamp if header else None,
                                     "end_timestamp": header.end_timestamp if header else None})
    if (root / "checkpoint").is_file():
        with open_readonly(root / "checkpoint") as buf:
            doc["checkpoint"] = next(iter(walk_checkpoint(buf, root / "checkpoint"))).to_json()
    config_dir = root / "config"
    if config_dir.is_dir():
        for f in sorted(config_dir.glob("*.json")):
            try:
                content = fastjson.loads(f.read_text(encoding="utf-8")) if f.stat().st_size else None
                doc["config"][f.name] = _config_digest(f.name, content)
            except ValueError as exc:
                doc["config"][f.name] = {"error": str(exc)}
    return doc


def _config_digest(name: str, content) -> dict:
    if not isinstance(content, dict):
        return {"entries": 0}
    for key in ("topicConfigTable", "offsetTable", "subscriptionGroupTable"):
        if isinstance(content.get(key), dict):
            return {key: len(content[key])}
    return {"keys": sorted(map(str, content))}


def render_summary(doc: dict) -> str:
    """The summary as text for a terminal."""
    log = doc["commitlog"]
    lines = [f"store {doc['root']}" + ("  (abort file present: last shutdown was not clean)" if doc["abort_file"] else ""),
             f"commitlog: {len(log['files'])} file(s), offsets [{log['min_offset']}, {log['max_offset']})"]
    lines += [f"  {f['name']}  {f['size']} bytes" for f in log["files"]]
    lines += [f"  ! {finding}" for finding in log["findings"]]
    lines.append(f"consumequeue: {len(doc['topics'])} topic(s)")
    for topic, info in doc["topics"].items():
        lines.append(f"  {topic}: {info['messages']} message(s)")
        for queue_id, q in info["queues"].items():
            lines.append(f"    queue {queue_id}: offsets [{q['min_offset']}, {q['max_offset']}), {q['files']} file(s)")
    lines.append(f"index: {len(doc['index'])} file(s)")
    lines += [f"  {i['file']}: {i['entries']} entries, {i['begin_timestamp']} .. {i['end_timestamp']}" for i in doc["index"]]
    if doc["checkpoint"]:
        cp = doc["checkpoint"]
        lines.append(f"checkpoint: physic {cp['physic_msg_timestamp']}, logics {cp['logics_msg_timestamp']}, "
                     f"index {cp['index_msg_timestamp']}")
    for name, digest in doc["config"].items():
        lines.append(f"config/{name}: {digest}")
    return "\n".join(lines) + "\n"
