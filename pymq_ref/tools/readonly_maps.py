"""Random read-only access to many store files at once, with a bound on open mappings.

A store can have thousands of CommitLog segments, ConsumeQueue files and index files; the doctor
and the query tool jump between them. :class:`ReadOnlyMaps` keeps at most ``limit`` files mapped
(least recently used first out), each opened ``O_RDONLY`` and mapped ``ACCESS_READ``. An evicted
map is not closed by the cache: the cache drops its reference, and the map closes when the last
reference goes — so a caller still reading a buffer it got keeps it valid (a map is never closed
under a view that still uses it), while callers that fetch buffers when they need them (as the
doctor's views do) keep the number of live maps, and of file descriptors (one per map), at
about ``limit``. It never writes. Call order: construct → ``get(path)`` … → ``close()`` (or use it
as a context manager).

:func:`first_nonzero` / :func:`last_nonzero` look for data in a buffer; given the file's path they
skip the holes of a sparse file without reading them (a pre-allocated 1 GiB segment holding a
few records is mostly holes: reading them would fault in a gigabyte of zero pages).
"""

from __future__ import annotations

import mmap
import os
import weakref
from collections import OrderedDict
from pathlib import Path

from ..store.fileio import data_ranges


def map_readonly(path: str | os.PathLike):
    """``path`` mapped read-only (``b""`` for an empty file); the descriptor is closed at once
    (the map keeps its own until it is closed)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        return mmap.mmap(fd, size, access=mmap.ACCESS_READ) if size else b""
    finally:
        os.close(fd)


class ReadOnlyMaps:
    def __init__(self, limit: int = 64):
        self.limit = limit
        self._open: OrderedDict[Path, object] = OrderedDict()
        self._live: weakref.WeakSet = weakref.WeakSet()
        #: maps created, and the most alive at once (the cache's and those still referenced elsewhere)
        self.opened = 0
        self.peak_live = 0

    def get(self, path):
        """The read-only buffer of ``path`` (``b""`` for an empty file)."""
        buf = self._open.get(path)
        if buf is not None:
            self._open.move_to_end(path)
            return buf
        buf = map_readonly(path)
        self._open[path] = buf
        if not isinstance(buf, bytes):
            self.opened += 1
            self._live.add(buf)
            self.peak_live = max(self.peak_live, len(self._live))
        while len(self._open) > self.limit:
            self._open.popitem(last=False)  # dropped, not closed: see the module docstring
        return buf

    def close(self) -> None:
        self._open.clear()

    def __enter__(self) -> "ReadOnlyMaps":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _ranges(path, start: int, end: int) -> list[tuple[int, int]]:
    if path is None:
        return [(start, end)] if start < end else []
    fd = os.open(path, os.O_RDONLY)
    try:
        return data_ranges(fd, start, end)
    finally:
        os.close(fd)


def first_nonzero(buf, start: int, end: int, path=None, chunk: int = 1 << 20) -> int | None:
    """Position of the first non-zero byte in ``buf[start:end]``, or None (C-speed compares;
    with ``path``, the holes of the file are skipped)."""
    zeros = bytes(chunk)
    for lo, hi in _ranges(path, start, end):
        pos = lo
        while pos < hi:
            n = min(chunk, hi - pos)
            block = buf[pos:pos + n]
            if block != (zeros if n == chunk else zeros[:n]):
                return pos + n - len(block.lstrip(b"\0"))
            pos += n
    return None


def last_nonzero(buf, start: int, end: int, path=None, chunk: int = 1 << 20) -> int | None:
    """Position of the last non-zero byte in ``buf[start:end]``, or None (with ``path``, holes skipped)."""
    zeros = bytes(chunk)
    for lo, hi in reversed(_ranges(path, start, end)):
        pos = hi
        while pos > lo:
            n = min(chunk, pos - lo)
            block = buf[pos - n:pos]
            if block != (zeros if n == chunk else zeros[:n]):
                return pos - n + len(block.rstrip(b"\0")) - 1
            pos -= n
    return None


class CommitLogReader:
    """Decode the record at any CommitLog offset of a store's segments, read-only.

    ``segments`` are :class:`~pymq_ref.tools.store_layout.Segment` items in offset order (see
    :func:`~pymq_ref.tools.store_layout.discover`); ``end`` optionally bounds the readable data.
    :meth:`read` returns a :class:`~pymq_ref.formats.message.MessageRecord` or a string saying
    why there is no message record at that offset.
    """

    def __init__(self, segments, file_size: int, maps: ReadOnlyMaps, end: int | None = None):
        self.segments, self.file_size, self.maps, self.end = segments, file_size, maps, end
        self.min_offset = segments[0].base if segments else 0

    def segment_for(self, phy: int):
        segs = self.segments
        if not segs or phy < self.min_offset:
            return None
        i = (phy - self.min_offset) // self.file_size if self.file_size else -1
        if 0 <= i < len(segs) and segs[i].base <= phy < segs[i].base + segs[i].size:
            return segs[i]
        return next((s for s in segs if s.base <= phy < s.base + s.size), None)

    def read(self, phy: int):
        from ..errors import FormatError
        from ..formats.message import MessageRecord, decode_record

        if not self.segments or phy < self.min_offset:
            return f"before the first CommitLog segment ({self.min_offset})"
        seg = self.segment_for(phy)
        if seg is None:
            return "no CommitLog segment holds this offset"
        if self.end is not None and phy >= self.end and seg is self.segments[-1]:
            return f"at or past the end of written data ({self.end})"
        try:
            rec = decode_record(self.maps.get(seg.path), phy - seg.base, base=seg.base, with_spans=False)
        except FormatError as exc:
            return f"not a record start ({exc})"
        if not isinstance(rec, MessageRecord):
            return "not a message record (zeros or an END_OF_FILE blank)"
        if rec.phy_offset != phy:
            return f"a record whose stored PHYSICALOFFSET is {rec.phy_offset}"
        return rec
