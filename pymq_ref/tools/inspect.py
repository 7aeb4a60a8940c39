"""``pymq inspect``: decode a store file read-only and print it as text, HTML, JSON or JSON lines.

Output only; all decoding is done by :mod:`pymq_ref.formats` through
:func:`pymq_ref.tools.segments.walk_segment`. Exit status: 0 clean, 1 when the file has
findings (a record failing validation, a CRC mismatch), 2 when it cannot be read.
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
from .segments import EndOfData, Finding, open_readonly, segment_base, walk_segment

FORMATS = ("text", "html", "json", "jsonl")


class InspectError(Exception):
    """The file cannot be inspected at all (missing, unreadable, an unsupported kind)."""


@dataclass(frozen=True, slots=True)
class InspectOptions:
    format: str = "text"
    at: int | None = None
    limit: int | None = None


def inspect_path(path: str | os.PathLike, options: InspectOptions, out: TextIO = sys.stdout) -> int:
    """Print ``path`` in ``options.format``; return the exit status."""
    path = Path(path)
    if not path.exists():
        raise InspectError(f"{path}: no such file or directory")
    if path.is_dir():
        raise InspectError(f"{path}: is a directory; give one CommitLog segment file "
                           f"(e.g. {path / 'commitlog' / ('0' * 20)})")
    try:
        with open_readonly(path) as buf:
            return _inspect_segment(path, buf, options, out)
    except PermissionError as exc:
        raise InspectError(f"{path}: cannot read: {exc.strerror}") from None


def _inspect_segment(path: Path, buf, options: InspectOptions, out: TextIO) -> int:
    base = segment_base(path)
    start = 0
    if options.at is not None:
        if not base <= options.at < base + max(len(buf), 1):
            raise InspectError(f"--at {options.at}: expected an absolute offset within this segment "
                               f"[{base}, {base + len(buf)})")
        start = options.at - base
    want_spans = options.format in ("text", "html")
    items = walk_segment(buf, base=base, start=start, with_spans=want_spans)
    items = _limited(items, options.limit)
    render = {"text": _text, "html": _html, "json": _json, "jsonl": _jsonl}[options.format]
    findings = render(path, buf, base, items, out)
    return 1 if findings else 0


def _limited(items: Iterable, limit: int | None):
    """Stop after ``limit`` records; findings attached to the last record still come through."""
    if limit is None:
        yield from items
        return
    count = 0
    for item in items:
        if isinstance(item, (MessageRecord, BlankRecord)):
            if count == limit:
                return
            count += 1
        yield item


def _jsonl(path, buf, base, items, out) -> int:
    findings = 0
    for item in items:
        if isinstance(item, Finding):
            findings += 1
            _warn(path, item)
        if isinstance(item, EndOfData):
            continue
        out.write(json.dumps(item.to_json(), ensure_ascii=False) + "\n")
    return findings


def _json(path, buf, base, items, out) -> int:
    doc = {"file": str(path), "base_offset": base, "file_size": len(buf), "records": [], "findings": [],
           "end_of_data": None}
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


def _text(path, buf, base, items, out) -> int:
    from ..viz.hexview import hexview

    findings = 0
    out.write(f"{path}  (segment base {base}, {len(buf)} bytes)\n\n")
    for item in items:
        if isinstance(item, MessageRecord):
            title = (f"message @ {item.phy_offset}: {item.total_size} bytes, topic {item.topic}, "
                     f"queue {item.queue_id}, queue offset {item.queue_offset}, msg id {item.msg_id}")
            view = hexview(buf, item.spans, base=base, start=item.spans[0].offset, end=item.spans[-1].end,
                           title=title, legend=False)
            out.write(view.text() + "\n\n")
        elif isinstance(item, BlankRecord):
            out.write(f"END_OF_FILE blank @ {item.phy_offset}: {item.total_size} bytes to the end of the segment\n")
        elif isinstance(item, EndOfData):
            out.write(f"end of written data @ {item.phy_offset} (zeros follow: a live segment)\n")
        else:
            findings += 1
            out.write(f"{'ERROR' if item.fatal else 'WARNING'} @ {item.phy_offset}: {item.reason}\n")
            _warn(path, item)
    return findings


def _html(path, buf, base, items, out) -> int:
    from ..viz.hexview import hexview

    findings = 0
    parts = []
    for item in items:
        if isinstance(item, MessageRecord):
            title = f"message @ {item.phy_offset} — topic {item.topic}, queue {item.queue_id}, offset {item.queue_offset}"
            parts.append(hexview(buf, item.spans, base=base, start=item.spans[0].offset, end=item.spans[-1].end,
                                 title=title, structure="message").html())
        elif isinstance(item, BlankRecord):
            parts.append(hexview(buf, item.spans, base=base, start=item.phy_offset,
                                 end=min(item.phy_offset + 64, base + len(buf)),
                                 title=f"END_OF_FILE blank @ {item.phy_offset} ({item.total_size} bytes)").html())
        elif isinstance(item, EndOfData):
            parts.append(f"<p>End of written data @ {item.phy_offset} (zeros follow: a live segment).</p>")
        else:
            findings += 1
            parts.append(f'<p class="pymq-finding"><b>{"ERROR" if item.fatal else "WARNING"}</b> '
                         f"@ {item.phy_offset}: {html.escape(item.reason)}</p>")
            _warn(path, item)
    title = html.escape(f"pymq inspect {path.name}")
    out.write(f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title></head>\n<body>\n'
              f"<h1>{title}</h1>\n<p>segment base {base}, {len(buf)} bytes</p>\n"
              + "\n".join(parts) + "\n</body></html>\n")
    return findings


def _warn(path: Path, finding: Finding) -> None:
    print(f"pymq inspect: {path}: {'error' if finding.fatal else 'warning'}: {finding.reason}", file=sys.stderr)
