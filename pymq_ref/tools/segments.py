"""Read-only access to store files, and the walk of one CommitLog segment with its findings.

Everything here opens files with ``O_RDONLY`` and maps them with ``ACCESS_READ``: inspection
never creates, truncates, locks or writes a user's store. Decoding is left to
:mod:`pymq_ref.formats.message`; this module only decides where a walk stops and why.
"""

from __future__ import annotations

import mmap
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..errors import FormatError
from ..formats.message import BlankRecord, MessageRecord, Record, decode_record

SEGMENT_NAME = re.compile(r"^\d{20}$")  # CommitLog / ConsumeQueue segments: start offset, 20 digits
INDEX_NAME = re.compile(r"^\d{17}$")  # IndexFiles: creation time, yyyyMMddHHmmssSSS


@contextmanager
def open_readonly(path: str | os.PathLike):
    """Map ``path`` read-only and yield the buffer (``b""`` for an empty file). Never writes."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            yield b""
            return
        with mmap.mmap(fd, size, access=mmap.ACCESS_READ) as buf:
            yield buf
    finally:
        os.close(fd)


def segment_base(path: str | os.PathLike) -> int:
    """The file-from offset a segment's 20-digit name encodes, or 0 for any other name."""
    name = Path(path).name
    return int(name) if SEGMENT_NAME.match(name) else 0


@dataclass(frozen=True, slots=True)
class Finding:
    """Something wrong at an absolute offset: ``fatal`` findings end the walk."""

    phy_offset: int
    field: str
    reason: str
    fatal: bool = True

    def to_json(self) -> dict:
        return {"type": "error" if self.fatal else "warning", "phy_offset": self.phy_offset,
                "field": self.field, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class EndOfData:
    """Where the written data of a live segment ends (the rest is zeros)."""

    phy_offset: int

    def to_json(self) -> dict:
        return {"type": "end", "phy_offset": self.phy_offset}


def walk_segment(buf, *, base: int = 0, start: int = 0, with_spans: bool = False,
                 check_crc: bool = True) -> Iterator[Record | Finding | EndOfData]:
    """Yield the records of one CommitLog segment, then what ended the walk.

    Ends with the blank record (a full segment), an :class:`EndOfData` (zeros: a live segment,
    not an error), or a fatal :class:`Finding` (a record that fails validation, or a blank
    whose size disagrees with the bytes left in the file). A body CRC mismatch does not stop
    the walk: it is yielded as a non-fatal Finding right after the record.
    """
    pos, size = start, len(buf)
    while pos < size:
        try:
            record = decode_record(buf, pos, base=base, with_spans=with_spans)
        except FormatError as exc:
            yield Finding(exc.offset if exc.offset is not None else base + pos, exc.field, str(exc))
            return
        if record is None:
            yield EndOfData(base + pos)
            return
        yield record
        if isinstance(record, BlankRecord):
            if record.total_size != size - pos:
                yield Finding(base + pos, "total_size",
                              f"blank.total_size at offset {base + pos}: expected {size - pos} "
                              f"(the bytes left in the segment), found {record.total_size}")
            return
        if check_crc and not record.crc_ok:
            yield Finding(base + pos + 8, "body_crc",
                          f"message.body_crc at offset {base + pos + 8}: expected the masked CRC-32 of the body, "
                          f"found {record.body_crc}", fatal=False)
        pos += record.total_size
    yield EndOfData(base + pos)


def messages(items) -> Iterator[MessageRecord]:
    """Only the message records of a walk."""
    return (item for item in items if isinstance(item, MessageRecord))
