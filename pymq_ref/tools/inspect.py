"""``pymq inspect``: print any store file (or a whole store) as text, HTML, JSON or JSON lines.

Output only: decoding is done by :mod:`pymq_ref.formats` through the walkers of
:mod:`pymq_ref.tools.store_files`; files are opened read-only. Exit status: 0 clean, 1 when
the file has findings (a record failing validation, a CRC mismatch ...), 2 when it cannot be
read at all.
"""

from __future__ import annotations

import html
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, TextIO

from ..formats.message import BlankRecord, MessageRecord
from .segments import EndOfData, Finding, open_readonly, segment_base
from .store_files import KINDS, WALKERS, UnknownFileKind, detect_kind, safe_walk
from .store_summary import is_store_root, render_summary, summarize_store

FORMATS = ("text", "html", "json", "jsonl")


class InspectError(Exception):
    """The path cannot be inspected at all (missing, unreadable, not a store file)."""


@dataclass(frozen=True, slots=True)
class InspectOptions:
    format: str = "text"
    at: int | None = None
    limit: int | None = None
    kind: str | None = None
    hash_slots: int | None = None
    index_num: int | None = None


def inspect_path(path: str | os.PathLike, options: InspectOptions, out: TextIO | None = None) -> int:
    """Print ``path`` in ``options.format`` (to ``out``, default the current stdout); return the exit status."""
    out = sys.stdout if out is None else out
    path = Path(path)
    if not path.exists():
        raise InspectError(f"{path}: no such file or directory")
    if path.is_dir():
        if not is_store_root(path):
            raise InspectError(f"{path}: not a store directory (no commitlog/, consumequeue/ or checkpoint); "
                               f"give a store root or one store file")
        return _inspect_store(path, options, out)
    try:
        kind = options.kind or detect_kind(path)
    except UnknownFileKind as exc:
        raise InspectError(str(exc)) from None
    try:
        with open_readonly(path) as buf:
            return _inspect_file(path, kind, buf, options, out)
    except PermissionError as exc:
        raise InspectError(f"{path}: cannot read: {exc.strerror}") from None


def _inspect_store(root: Path, options: InspectOptions, out: TextIO) -> int:
    doc = summarize_store(root)
    if options.format == "text":
        out.write(render_summary(doc))
    elif options.format == "html":
        out.write(_page(f"store {root.name}", f"<pre>{html.escape(render_summary(doc))}</pre>"))
    else:
        out.write(json.dumps(doc, ensure_ascii=False, indent=2 if options.format == "json" else None) + "\n")
    # the doctor's rule: every finding but a note counts; an undecodable checkpoint too
    layout = [f for f in doc["findings"] if f.get("severity") != "note"]
    checkpoint_error = isinstance(doc["checkpoint"], dict) and "error" in doc["checkpoint"]
    return 1 if doc["commitlog"]["findings"] or layout or checkpoint_error else 0


def _inspect_file(path: Path, kind: str, buf, options: InspectOptions, out: TextIO) -> int:
    base = segment_base(path) if kind in ("commitlog", "consumequeue", "consumequeue_ext") else 0
    start = 0
    if options.at is not None:
        if not base <= options.at < base + max(len(buf), 1):
            raise InspectError(f"--at {options.at}: expected an absolute offset within this file "
                               f"[{base}, {base + len(buf)})")
        if kind not in ("commitlog", "consumequeue", "consumequeue_ext"):
            raise InspectError(f"--at applies to CommitLog, ConsumeQueue and ConsumeQueueExt files, not to a {kind} file")
        start = options.at - base
    items = safe_walk(WALKERS[kind], buf, path, start=start, hash_slots=options.hash_slots,
                      index_num=options.index_num)
    items = _limited(items, options.limit)
    render = {"text": _text, "html": _html, "json": _json, "jsonl": _jsonl}[options.format]
    findings = render(path, kind, buf, base, items, out)
    return 1 if findings else 0


def _limited(items: Iterable, limit: int | None):
    """Stop after ``limit`` decoded items; a finding about the last one still comes through."""
    if limit is None:
        yield from items
        return
    count = 0
    for item in items:
        if not isinstance(item, (Finding, EndOfData)):
            if count == limit:
                return
            count += 1
        yield item


def _title(item) -> str:
    if isinstance(item, MessageRecord):
        return (f"message @ {item.phy_offset}: {item.total_size} bytes, topic {item.topic}, queue {item.queue_id}, "
                f"queue offset {item.queue_offset}, msg id {item.msg_id}")
    if isinstance(item, BlankRecord):
        return f"END_OF_FILE blank @ {item.phy_offset}: {item.total_size} bytes to the end of the segment"
    if isinstance(item, EndOfData):
        return f"end of written data @ {item.phy_offset}"
    return item.title


def _structure(kind: str, item) -> str | None:
    if isinstance(item, MessageRecord):
        return "message"
    if kind == "consumequeue_ext" and getattr(item, "json", {}).get("type") != "cq_ext_unit":
        return None
    return {"consumequeue": "consume_queue_unit", "consumequeue_ext": "consume_queue_ext_unit",
            "checkpoint": "checkpoint"}.get(kind)


def _jsonl(path, kind, buf, base, items, out) -> int:
    findings = 0
    for item in items:
        if isinstance(item, Finding):
            findings += 1
            _warn(path, item)
        if isinstance(item, EndOfData):
            continue
        out.write(json.dumps(item.to_json(), ensure_ascii=False) + "\n")
    return findings


def _json(path, kind, buf, base, items, out) -> int:
    doc = {"file": str(path), "kind": kind, "base_offset": base, "file_size": len(buf), "records": [],
           "findings": [], "end_of_data": None}
    for item in items:
        if isinstance(item, Finding):
            doc["findings"].append(item.to_json())
            _warn(path, item)
        elif isinstance(item, EndOfData):
            doc["end_of_data"] = item.phy_offset
        else:
            doc["records"].append(item.to_json())
    json.dump(doc, out, ensure_ascii=False, indent=2)
    out.write("\n")
    return len(doc["findings"])


def _text(path, kind, buf, base, items, out) -> int:
    from ..viz.hexview import hexview

    findings = 0
    out.write(f"{path}  ({kind}, base offset {base}, {len(buf)} bytes)\n\n")
    for item in items:
        if isinstance(item, Finding):
            findings += 1
            out.write(f"{'ERROR' if item.fatal else 'WARNING'} @ {item.phy_offset}: {item.reason}\n")
            _warn(path, item)
        elif isinstance(item, EndOfData):
            out.write(f"end of written data @ {item.phy_offset} (zeros follow)\n")
        elif isinstance(item, BlankRecord) or not item.spans:
            out.write(_title(item) + "\n")
        else:
            view = hexview(buf, item.spans, base=base, start=item.spans[0].offset, end=item.spans[-1].end,
                           title=_title(item), legend=False)
            out.write(view.text() + "\n\n")
    return findings


def _html(path, kind, buf, base, items, out) -> int:
    from ..viz.hexview import hexview

    findings = 0
    parts = []
    for item in items:
        if isinstance(item, Finding):
            findings += 1
            parts.append(f'<p class="pymq-finding"><b>{"ERROR" if item.fatal else "WARNING"}</b> '
                         f"@ {item.phy_offset}: {html.escape(item.reason)}</p>")
            _warn(path, item)
        elif isinstance(item, EndOfData):
            parts.append(f"<p>End of written data @ {item.phy_offset} (zeros follow).</p>")
        elif isinstance(item, BlankRecord):
            parts.append(hexview(buf, item.spans, base=base, start=item.phy_offset,
                                 end=min(item.phy_offset + 64, base + len(buf)), title=_title(item)).html())
        elif item.spans:
            parts.append(hexview(buf, item.spans, base=base, start=item.spans[0].offset, end=item.spans[-1].end,
                                 title=_title(item), structure=_structure(kind, item)).html())
        else:
            parts.append(f"<pre>{html.escape(json.dumps(item.to_json(), ensure_ascii=False, indent=1))}</pre>")
    out.write(_page(f"pymq inspect {path.name}", f"<p>{kind}, base offset {base}, {len(buf)} bytes</p>\n" + "\n".join(parts)))
    return findings


def _page(title: str, body: str) -> str:
    title = html.escape(title)
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title></head>\n<body>\n'
            f"<h1>{title}</h1>\n{body}\n</body></html>\n")


def _warn(path: Path, finding: Finding) -> None:
    print(f"pymq inspect: {path}: {'error' if finding.fatal else 'warning'}: {finding.reason}", file=sys.stderr)


__all__ = ["FORMATS", "KINDS", "InspectError", "InspectOptions", "inspect_path"]
