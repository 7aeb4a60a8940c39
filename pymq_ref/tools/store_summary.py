"""A read-only summary of a whole store directory: files, topics, queues, offsets, checkpoint.

Works on a store written by pymq_ref or by a real RocketMQ broker (see the book's reference appendix, §Store
layout). Which files
exist is :func:`pymq_ref.tools.store_layout.discover`'s job (the same walk ``pymq doctor``
uses, with its layout problems: stray files, bad names, wrong sizes, gaps); this module only
reads what the summary shows — the CommitLog's [min, max) offsets, each queue's [min, max)
logical offsets, index headers, the checkpoint and a digest of each config file. Every file is
opened read-only (:func:`~pymq_ref.tools.segments.open_readonly`); it never takes the store's
``lock`` and never writes.

The document (:func:`summarize_store`):

* ``commitlog.findings`` — sentences: the layout errors of the CommitLog chain (``commitlog/…``)
  and what stopped the walk of the last segment. ``pymq inspect STORE`` exits 1 when there are any;
* ``findings`` — every layout problem ``discover`` found, as the doctor reports them
  (``severity``, ``code``, ``file``, ``offset``, ``reason``).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import FormatError
from ..formats import fastjson
from ..formats.consume_queue import CQ_STORE_UNIT_SIZE, decode_cq_unit
from ..formats.consume_queue_ext import ExtEnd, iter_ext_units
from ..formats.index_file import INDEX_HEADER_SIZE, decode_index_header
from ..formats.message import BlankRecord
from .segments import EndOfData, Finding, open_readonly, walk_segment
from .store_files import walk_checkpoint
from .store_layout import STORE_MARKERS, Problem, Segment, StoreLayout, discover


def is_store_root(path: Path) -> bool:
    """Whether ``path`` looks like a store root (the test :func:`discover` applies)."""
    return path.is_dir() and any((path / name).exists() for name in STORE_MARKERS)


def _is_commitlog_error(problem: Problem) -> bool:
    """Layout problems that are CommitLog findings (they set ``inspect``'s exit status)."""
    return problem.severity == "error" and (problem.file == "commitlog" or problem.file.startswith("commitlog/"))


def commitlog_summary(segments: list[Segment], problems: list[Problem] = ()) -> dict:
    """Files and [min, max) offsets; max = end of the written data of the last segment."""
    doc = {"files": [{"name": s.path.name, "size": s.size} for s in segments], "min_offset": 0, "max_offset": 0,
           "findings": [f"{p.file}: {p.reason}" for p in problems if _is_commitlog_error(p)]}
    if not segments:
        return doc
    doc["min_offset"] = segments[0].base
    last = segments[-1]
    end = last.base
    with open_readonly(last.path) as buf:
        for item in walk_segment(buf, base=last.base, check_crc=False):
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


def consume_queue_summary(segments: list[Segment]) -> dict:
    """Files and [min, max) logical offsets of one queue (blank filler units excluded from min)."""
    doc = {"files": len(segments), "min_offset": 0, "max_offset": 0}
    if not segments:
        return doc
    first, last = segments[0], segments[-1]
    with open_readonly(first.path) as buf:
        for pos in range(0, len(buf) - CQ_STORE_UNIT_SIZE + 1, CQ_STORE_UNIT_SIZE):
            unit = decode_cq_unit(buf, pos, with_spans=False)
            if unit.is_empty or not unit.is_blank:
                doc["min_offset"] = (first.base + pos) // CQ_STORE_UNIT_SIZE
                break
    with open_readonly(last.path) as buf:
        lo, hi = 0, len(buf) // CQ_STORE_UNIT_SIZE  # units are written contiguously: find the first empty one
        while lo < hi:
            mid = (lo + hi) // 2
            if decode_cq_unit(buf, mid * CQ_STORE_UNIT_SIZE, with_spans=False).is_empty:
                hi = mid
            else:
                lo = mid + 1
        doc["max_offset"] = last.base // CQ_STORE_UNIT_SIZE + lo
    return doc


def consume_queue_ext_summary(segments: list[Segment]) -> dict:
    """Files and the [min, max) offsets of one ConsumeQueueExt chain (an address is ``offset +
    Long.MIN_VALUE``): min is the first file's start, max the end of the units of the last file."""
    doc = {"files": len(segments), "min_offset": 0, "max_offset": 0, "units_in_last_file": 0}
    if not segments:
        return doc
    first, last = segments[0], segments[-1]
    doc["min_offset"] = first.base
    doc["max_offset"] = last.base
    with open_readonly(last.path) as buf:
        try:
            for item in iter_ext_units(buf, base=last.base):
                if isinstance(item, ExtEnd):
                    doc["max_offset"] = item.offset
                else:
                    doc["units_in_last_file"] += 1
        except FormatError as exc:
            doc["error"] = str(exc)
            doc["max_offset"] = None
    return doc


def index_summary(seg: Segment) -> dict:
    """Entries and the header's time range of one IndexFile (None when it has no header)."""
    with open_readonly(seg.path) as buf:
        header = decode_index_header(buf, with_spans=False) if len(buf) >= INDEX_HEADER_SIZE else None
    return {"file": seg.path.name, "size": seg.size,
            "entries": max(0, header.index_count - 1) if header else None,
            "begin_timestamp": header.begin_timestamp if header else None,
            "end_timestamp": header.end_timestamp if header else None}


def checkpoint_summary(path: Path) -> dict:
    """The checkpoint's timestamps, or ``{"error": ...}`` when it cannot be decoded."""
    with open_readonly(path) as buf:
        try:
            return next(iter(walk_checkpoint(buf, path))).to_json()
        except FormatError as exc:
            return {"error": str(exc)}


def config_summary(path: Path) -> dict:
    """How many topics / offsets / groups a config JSON file holds, or ``{"error": ...}``."""
    with open_readonly(path) as buf:
        data = bytes(buf)
    try:
        content = fastjson.loads(data.decode("utf-8")) if data else None
    except ValueError as exc:  # (UnicodeDecodeError is a ValueError)
        return {"error": str(exc)}
    return _config_digest(content)


def summarize_store(root: Path, layout: StoreLayout | None = None) -> dict:
    """Everything an operator wants at a glance, as one JSON-able document.

    ``layout`` is a :func:`discover` result to reuse; by default the store is discovered here
    (raises :class:`~pymq_ref.tools.store_layout.StoreUnreadable` when ``root`` is not a store).
    """
    layout = discover(root) if layout is None else layout
    doc: dict = {"type": "store", "root": str(root), "abort_file": layout.abort,
                 "commitlog": commitlog_summary(layout.commitlog, layout.problems), "topics": {}, "index": [],
                 "checkpoint": None, "config": {}, "findings": [p.to_json() for p in layout.problems]}
    by_topic: dict[str, list] = {topic: [] for topic in layout.topics}
    for qdir in layout.queues:
        by_topic[qdir.topic].append(qdir)
    for topic, qdirs in by_topic.items():
        queues = {q.queue_id: consume_queue_summary(q.segments) for q in sorted(qdirs, key=lambda q: q.queue_id)}
        doc["topics"][topic] = {"queues": queues,
                                "messages": sum(q["max_offset"] - q["min_offset"] for q in queues.values())}
    if layout.ext_queues:
        doc["consumequeue_ext"] = {"file_size": layout.cq_ext_file_size, "queues": {
            f"{q.topic}/{q.queue_id}": consume_queue_ext_summary(q.segments)
            for q in sorted(layout.ext_queues, key=lambda q: (q.topic, q.queue_id))}}
    doc["index"] = [index_summary(seg) for seg in layout.index_files]
    if layout.checkpoint is not None:
        doc["checkpoint"] = checkpoint_summary(layout.checkpoint)
    for path in layout.config_files:
        doc["config"][path.name] = config_summary(path)
    return doc


def _config_digest(content) -> dict:
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
    ext = doc.get("consumequeue_ext")
    if ext:
        lines.append(f"consumequeue_ext: {len(ext['queues'])} queue(s), files of {ext['file_size']} bytes")
        for name, q in ext["queues"].items():
            if "error" in q:
                lines.append(f"  {name}: {q['files']} file(s)  ! {q['error']}")
            else:
                lines.append(f"  {name}: offsets [{q['min_offset']}, {q['max_offset']}), {q['files']} file(s)")
    lines.append(f"index: {len(doc['index'])} file(s)")
    lines += [f"  {i['file']}: {i['entries']} entries, {i['begin_timestamp']} .. {i['end_timestamp']}" for i in doc["index"]]
    cp = doc["checkpoint"]
    if cp and "error" in cp:
        lines.append(f"checkpoint: ! {cp['error']}")
    elif cp:
        lines.append(f"checkpoint: physic {cp['physic_msg_timestamp']}, logics {cp['logics_msg_timestamp']}, "
                     f"index {cp['index_msg_timestamp']}")
    for name, digest in doc["config"].items():
        lines.append(f"config/{name}: {digest}")
    # layout problems not already listed under the CommitLog
    rest = [Problem(**{k: f.get(k) for k in ("code", "file", "offset", "reason", "severity")})
            for f in doc.get("findings", ())]
    rest = [p for p in rest if not _is_commitlog_error(p)]
    if rest:
        lines.append(f"layout: {len(rest)} problem(s)")
        lines += [f"  ! {p.text()}" for p in rest]
    return "\n".join(lines) + "\n"
