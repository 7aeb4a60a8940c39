"""Random read-only access to many store files at once, with a bound on open mappings.

A store can have thousands of ConsumeQueue files; the doctor and the query tool jump between
them. :class:`ReadOnlyMaps` keeps at most ``limit`` files mapped (least recently used first
out), each opened with :func:`pymq_ref.tools.segments.open_readonly` (``O_RDONLY``,
``ACCESS_READ``). It never writes. Call order: construct → ``get(path)`` … → ``close()`` (or use it
as a context manager).
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from .segments import open_readonly


class ReadOnlyMaps:
    def __init__(self, limit: int = 256):
        self.limit = limit
        self._open: OrderedDict[Path, tuple] = OrderedDict()

    def get(self, path: Path):
        """The read-only buffer of ``path`` (``b""`` for an empty file)."""
        entry = self._open.get(path)
        if entry is not None:
            self._open.move_to_end(path)
            return entry[1]
        ctx = open_readonly(path)
        buf = ctx.__enter__()
        self._open[path] = (ctx, buf)
        while len(self._open) > self.limit:
            _, (old_ctx, _) = self._open.popitem(last=False)
            old_ctx.__exit__(None, None, None)
        return buf

    def close(self) -> None:
        while self._open:
            _, (ctx, _) = self._open.popitem()
            ctx.__exit__(None, None, None)

    def __enter__(self) -> "ReadOnlyMaps":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def first_nonzero(buf, start: int, end: int, chunk: int = 1 << 20) -> int | None:
    """Position of the first non-zero byte in ``buf[start:end]``, or None (C-speed compares)."""
    zeros = bytes(chunk)
    pos = start
    while pos < end:
        n = min(chunk, end - pos)
        block = buf[pos:pos + n]
        if block != (zeros if n == chunk else zeros[:n]):
            return pos + n - len(block.lstrip(b"\0"))
        pos += n
    return None


def last_nonzero(buf, start: int, end: int, chunk: int = 1 << 20) -> int | None:
    """Position of the last non-zero byte in ``buf[start:end]``, or None."""
    zeros = bytes(chunk)
    pos = end
    while pos > start:
        n = min(chunk, pos - start)
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
