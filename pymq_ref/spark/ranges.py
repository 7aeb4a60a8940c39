"""Byte ranges of CommitLog segments, and the resynchronising walk that makes them independent.

Why ranges
----------
A real segment is 1 GiB. Spark's ``binaryFile`` source would put a whole file into one JVM
array, so the Spark reader instead splits every segment into ``(file, start, end)`` ranges
(:func:`plan_ranges`) and lets each Python worker map its file read-only and decode only its
range. A range is the unit of parallelism: a 1 GiB segment with 64 MiB ranges is 16 tasks.

Which records a range owns
--------------------------
A range owns the records that **start** inside ``[start, end)``. Records do not know where
ranges are cut, so a range that begins mid-record must find the first record boundary on
its own. The rule (:func:`is_boundary`) is local — it looks only at the bytes at one
position, never at where the range starts or ends — so every range reaches the same verdict
about a position as a walk from the start of the segment does:

* position 0 of a segment is a boundary (RocketMQ never splits a record over two files),
  though the record there must pass the same test as every other;
* any other position ``p`` is a boundary when ``decode_record`` succeeds there (magic code,
  TOTALSIZE equal to the size recomputed from the field lengths, every length inside the
  record) **and** the record is *self-locating*: its PHYSICALOFFSET field equals
  ``segment_base + p`` — RocketMQ writes each record's own CommitLog offset into it. A blank
  must instead be exactly as long as the rest of the file.

The walk (:func:`walk_range`) applies the same test to every record it reaches by following
TOTALSIZE, so "reachable by the chain" and "found by a resync" agree. Checking the chain of
following records up to the range end (a rule that depends on where the range ends) would
not: with damage inside the chain, ranges cut differently would disagree. The 8-byte
self-location check is what makes a local rule safe: a random position passes it with odd
about 2^-64 on top of the magic code and the length checks.

Candidates are found with one regular-expression search for the magic codes (C speed), so a range mostly costs one
decode per record. When a record fails (damage) or zeros appear where a record should be,
the walk yields a :class:`Gap` and resynchronises at the next boundary, searching up to the
end of the *file*. A gap belongs to the range whose chain ran into it (the range of the
record just before it), even when the gap itself starts past that range's end: only that
range knows where the gap begins. A range that begins inside a gap, or inside the zero
tail, just starts at the next boundary. Zeros with no record after
them are the unwritten tail, not a gap. Hence the union over any cut of a segment into
ranges equals the whole-file walk ``walk_range(buf, 0, len(buf))`` — records and gaps;
``tests/test_spark_ranges.py`` checks this with hypothesis over random cuts, on clean and
damaged segments, and on RocketMQ's own files.

Limit, stated plainly: a message *body* that embeds a well-formed record whose
PHYSICALOFFSET equals its own absolute position would be taken for a boundary by a range cut
inside that body. That takes deliberately crafted bytes; a walk from 0 never looks inside
bodies. (The ConsumeQueues could break such ties, at the cost of reading them.)

Pure: buffers in, records out. The only I/O helper is :func:`plan_ranges`, which ``stat``s.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from ..errors import FormatError
from ..formats.message import BlankRecord, MessageRecord, decode_record

_MAGICS = (b"\xda\xa3\x20\xa7", b"\xda\xa3\x20\xab", b"\xcb\xd4\x31\x94")  # v1, v2, blank
_ANY_MAGIC = re.compile(b"|".join(re.escape(m) for m in _MAGICS))
#: Default range length: 64 MiB (16 tasks per 1 GiB segment).
DEFAULT_RANGE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class SegmentRange:
    """Bytes ``[start, end)`` of the segment file ``path`` whose first byte is CommitLog offset ``base``."""

    path: str
    base: int
    start: int
    end: int
    file_size: int


@dataclass(frozen=True, slots=True)
class Gap:
    """Bytes ``[position, position + length)`` of a segment that a walk skipped: a record there failed
    to decode (``reason``) and the walk resynchronised at the next boundary (or the range end)."""

    position: int
    length: int
    reason: str


def plan_ranges(files: list[tuple[str, int]], range_bytes: int = DEFAULT_RANGE_BYTES) -> list[SegmentRange]:
    """Cut every ``(path, base)`` segment into ranges of at most ``range_bytes`` (never reads data)."""
    if range_bytes < 1:
        raise ValueError(f"range_bytes must be positive, got {range_bytes}")
    out = []
    for path, base in files:
        size = os.stat(path).st_size
        for start in range(0, size, range_bytes):
            out.append(SegmentRange(path, base, start, min(size, start + range_bytes), size))
    return out


def _self_locating(buf, pos: int, base: int):
    """The record at ``pos`` if it decodes and sits where it says; False if not; None for zeros."""
    try:
        record = decode_record(buf, pos, base=base, with_spans=False)
    except FormatError:
        return False
    if record is None:
        return None
    if isinstance(record, BlankRecord):
        return record if record.total_size == len(buf) - pos else False
    return record if record.phy_offset == base + pos else False


def is_boundary(buf, pos: int, base: int) -> bool:
    """The local boundary rule of this module's docstring (position 0 always is one)."""
    return pos == 0 or bool(_self_locating(buf, pos, base))


_ZERO_CHUNK = 1 << 22


def _skip_zeros(buf, pos: int, limit: int, data=None) -> int:
    """The first position >= ``pos`` where a record could start, given that a record's magic code
    (bytes 4..7) is never zero: 7 bytes before the first non-zero byte (numpy, ~GB/s on zero tails).
    ``data``: the file's ranges that are not holes (``[(lo, hi)]``, sorted); holes are jumped, not
    read — a pre-allocated 1 GiB segment is mostly holes."""
    size = len(buf)
    stop = min(size, limit + 8)
    for lo, hi in ((0, size),) if data is None else data:
        if hi <= pos:
            continue
        if lo >= stop:
            break
        at, end = max(pos, lo), min(hi, stop)
        step = 1 << 12  # small first: a range cut inside written data finds a non-zero byte at once
        while at < end:
            n = min(step, end - at)
            step = min(step * 4, _ZERO_CHUNK)
            chunk = np.frombuffer(buf, np.uint8, n, at)
            hit = int(np.argmax(chunk != 0)) if chunk.any() else -1
            del chunk  # no view on the mmap may outlive this call
            if hit >= 0:
                return max(pos, at + hit - 7)
            at += n
    return max(pos, stop)


def next_boundary(buf, pos: int, limit: int, base: int, data=None) -> int | None:
    """The first boundary in ``[pos, limit)``, found via the magic codes; None if there is none.

    One regular-expression search for any of the three magic codes finds the nearest candidate and
    stops there (searching for each magic separately would scan to ``limit`` for the ones that do
    not occur, e.g. the blank's, at every range start)."""
    if pos == 0:
        return 0
    pos = _skip_zeros(buf, pos, limit, data)
    stop = min(len(buf), limit + 8)  # a magic code sits 4 bytes into its record
    search = _ANY_MAGIC.search
    while pos < limit:
        hit = search(buf, pos + 4, stop)
        if hit is None:
            return None
        candidate = hit.start() - 4
        if candidate >= limit:
            return None
        if is_boundary(buf, candidate, base):
            return candidate
        pos = candidate + 1
    return None


def walk_range(buf, start: int, end: int, base: int = 0, data=None) -> Iterator[MessageRecord | BlankRecord | Gap]:
    """Records and gaps that belong to ``[start, end)`` of one segment, in order.

    A record belongs to the range it starts in. A gap belongs to the range whose chain runs
    into it (the range of the record before it; the first range for a gap at position 0),
    because only that range can tell where it starts. Stops at the zero tail (end of written
    data) and after a blank. ``walk_range(buf, 0, len(buf))`` is the whole-file walk; any cut
    of ``[0, len(buf))`` into ranges yields the same items in total. ``data``: the file's ranges
    that are not holes (see :func:`_skip_zeros`; the same items, without reading the holes).
    """
    size = len(buf)
    pos = next_boundary(buf, start, end, base, data)
    if pos is None:
        return
    while pos < size:
        reason = None
        try:
            record = decode_record(buf, pos, base=base, with_spans=False)
        except FormatError as exc:
            record, reason = False, str(exc)
        if record is None:
            reason = "zero bytes where a record was expected"
        elif isinstance(record, BlankRecord):
            if record.total_size == size - pos:
                if pos < end:
                    yield record
                return
            reason = (f"blank.total_size at position {pos}: expected {size - pos} "
                      f"(the bytes left in the segment), found {record.total_size}")
        elif record is not False:
            if record.phy_offset == base + pos:
                if pos >= end:
                    return
                yield record
                pos += record.total_size
                continue
            reason = (f"message.phy_offset at position {pos}: expected {base + pos} "
                      f"(the record's own offset), found {record.phy_offset}")
        # Damage (or zeros) where the chain expected a record: this range's gap even when pos >= end.
        resume = next_boundary(buf, pos + 1, size, base, data)
        if resume is None:
            if record is not None:  # damage up to the end of the file
                yield Gap(pos, size - pos, reason)
            return
        yield Gap(pos, resume - pos, reason)
        if resume >= end:
            return
        pos = resume


def segment_file_base(buf, name_base: int | None) -> int:
    """A segment's file-from offset: from its 20-digit name, else from its first record's PHYSICALOFFSET."""
    if name_base is not None:
        return name_base
    try:
        record = decode_record(buf, 0, with_spans=False)
    except FormatError:
        return 0
    return record.phy_offset if isinstance(record, MessageRecord) else 0
