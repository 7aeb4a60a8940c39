"""The IndexFile layout: a 40-byte header, a table of hash slots, then 20-byte entries.

The book's reference appendix, §IndexFile; ``store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java``,
``index/IndexHeader.java``. Big-endian throughout::

    +----------------------+----------------------------------+-------------------------------+
    | header (40 bytes)    | hash slots: hashSlotNum x 4 B    | entries: indexNum x 20 B      |
    +----------------------+----------------------------------+-------------------------------+

Header:

======  ====  ==================  ==========================================================
offset  size  field               meaning
======  ====  ==================  ==========================================================
0       8     begin_timestamp     store timestamp (ms) of the first entry (or inherited)
8       8     end_timestamp       store timestamp (ms) of the last entry
16      8     begin_phy_offset    CommitLog offset of the first entry (or inherited)
24      8     end_phy_offset      CommitLog offset of the last entry
32      4     hash_slot_count     number of slots that became non-empty
36      4     index_count         next entry number (entries + 1); 0 in a brand-new file
======  ====  ==================  ==========================================================

Slot ``i`` (an int at ``40 + 4*i``) holds the number of the newest entry of its bucket, 0 = empty.
Entry number ``n >= 1`` lives at ``40 + 4*hashSlotNum + 20*n`` — entry 0 is never written:

======  ====  ===========  ==============================================================
offset  size  field        meaning
======  ====  ===========  ==============================================================
0       4     key_hash     ``abs(String.hashCode(topic#key))`` (``MIN_VALUE`` -> 0)
4       8     phy_offset   CommitLog offset of the message
12      4     time_diff    ``(storeTimestamp - beginTimestamp) / 1000``: **seconds**
16      4     prev_index   previous head of the bucket chain (0 = end)
======  ====  ===========  ==============================================================

This module is pure: no file access. The store's ``IndexFile`` uses it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo

from pymq_ref.errors import EncodeError, TruncatedError
from pymq_ref.formats.spans import Span

INDEX_HEADER_SIZE = 40
HASH_SLOT_SIZE = 4
INDEX_ENTRY_SIZE = 20
DEFAULT_MAX_HASH_SLOT_NUM = 5_000_000
DEFAULT_MAX_INDEX_NUM = 20_000_000
INT_MAX = 2**31 - 1

HEADER = struct.Struct(">qqqqii")
ENTRY = struct.Struct(">iqii")
SLOT = struct.Struct(">i")


def index_file_size(hash_slot_num: int = DEFAULT_MAX_HASH_SLOT_NUM,
                    index_num: int = DEFAULT_MAX_INDEX_NUM) -> int:
    """``40 + hashSlotNum*4 + indexNum*20`` (420,000,040 with the defaults)."""
    return INDEX_HEADER_SIZE + hash_slot_num * HASH_SLOT_SIZE + index_num * INDEX_ENTRY_SIZE


def slot_position(slot: int) -> int:
    """Byte position of hash slot ``slot``."""
    return INDEX_HEADER_SIZE + slot * HASH_SLOT_SIZE


def entry_position(number: int, hash_slot_num: int) -> int:
    """Byte position of entry ``number`` (numbers start at 1)."""
    return INDEX_HEADER_SIZE + hash_slot_num * HASH_SLOT_SIZE + number * INDEX_ENTRY_SIZE


def time_diff_seconds(store_timestamp: int, begin_timestamp: int) -> int:
    """The entry's timeDiff as ``IndexFile.putKey`` computes it (Java long division, clamped)."""
    if begin_timestamp <= 0:
        return 0
    delta = store_timestamp - begin_timestamp
    diff = abs(delta) // 1000 * (1 if delta >= 0 else -1)  # truncate toward zero like Java
    if diff > INT_MAX:
        return INT_MAX
    if diff < 0:
        return 0
    return diff


def index_file_name(now_ms: int, tz: tzinfo = timezone.utc) -> str:
    """``UtilAll.timeMillisToHumanString``: ``yyyyMMddHHmmssSSS`` in ``tz``.

    RocketMQ uses the JVM's local time zone; we default to UTC so that the book produces the
    same file names on every machine (pass another ``tz`` to mimic a broker's zone).
    """
    t = datetime.fromtimestamp(now_ms // 1000, tz)
    return f"{t.year:04d}{t.month:02d}{t.day:02d}{t.hour:02d}{t.minute:02d}{t.second:02d}{now_ms % 1000:03d}"


@dataclass(frozen=True, slots=True)
class IndexHeader:
    begin_timestamp: int = 0
    end_timestamp: int = 0
    begin_phy_offset: int = 0
    end_phy_offset: int = 0
    hash_slot_count: int = 0
    index_count: int = 0
    spans: tuple[Span, ...] = ()

    @property
    def effective_index_count(self) -> int:
        """``IndexHeader.load``: a stored count <= 0 is read as 1 (the next entry number)."""
        return self.index_count if self.index_count > 0 else 1

    def time_matched(self, begin: int, end: int) -> bool:
        """``IndexFile.isTimeMatched``: does ``[begin, end]`` meet this file's time range?"""
        b, e = self.begin_timestamp, self.end_timestamp
        return (begin < b and end > e) or (b <= begin <= e) or (b <= end <= e)


@dataclass(frozen=True, slots=True)
class IndexEntry:
    key_hash: int
    phy_offset: int
    time_diff: int
    prev_index: int
    spans: tuple[Span, ...] = ()


def encode_index_header(header: IndexHeader) -> bytes:
    """The 40 header bytes (``IndexHeader.updateByteBuffer``); raises EncodeError for out-of-range values."""
    try:
        return HEADER.pack(header.begin_timestamp, header.end_timestamp, header.begin_phy_offset,
                           header.end_phy_offset, header.hash_slot_count, header.index_count)
    except struct.error as exc:
        raise EncodeError("index_header", "fields", "values that fit their Java int/long types", str(exc)) from None


def decode_index_header(buf, pos: int = 0, *, base: int = 0, with_spans: bool = True) -> IndexHeader:
    """The header at ``buf[pos]`` (``IndexHeader.load``); raises TruncatedError when short."""
    if pos < 0 or len(buf) - pos < INDEX_HEADER_SIZE:
        raise TruncatedError("index_header", "begin_timestamp", base + pos,
                             f"{INDEX_HEADER_SIZE} bytes", f"{max(0, len(buf) - pos)} bytes")
    values = HEADER.unpack_from(buf, pos)
    if not with_spans:
        return IndexHeader(*values)
    at = base + pos
    spans = (
        Span(at, 8, "begin_timestamp", "timestamp", values[0]),
        Span(at + 8, 8, "end_timestamp", "timestamp", values[1]),
        Span(at + 16, 8, "begin_phy_offset", "offset", values[2]),
        Span(at + 24, 8, "end_phy_offset", "offset", values[3]),
        Span(at + 32, 4, "hash_slot_count", "count", values[4]),
        Span(at + 36, 4, "index_count", "count", values[5]),
    )
    return IndexHeader(*values, spans=spans)


def encode_index_entry(entry: IndexEntry) -> bytes:
    """The 20 bytes of one entry (``IndexFile.putKey``); raises EncodeError for out-of-range values."""
    try:
        return ENTRY.pack(entry.key_hash, entry.phy_offset, entry.time_diff, entry.prev_index)
    except struct.error as exc:
        raise EncodeError("index_entry", "fields", "values that fit their Java int/long types", str(exc)) from None


def decode_index_entry(buf, pos: int, *, base: int = 0, with_spans: bool = True,
                       number: int | None = None) -> IndexEntry:
    """Decode the entry at ``buf[pos:pos+20]`` (use :func:`entry_position` to find ``pos``)."""
    if pos < 0 or len(buf) - pos < INDEX_ENTRY_SIZE:
        raise TruncatedError("index_entry", "key_hash", base + pos,
                             f"{INDEX_ENTRY_SIZE} bytes", f"{max(0, len(buf) - pos)} bytes")
    kh, phy, diff, prev = ENTRY.unpack_from(buf, pos)
    if not with_spans:
        return IndexEntry(kh, phy, diff, prev)
    at = base + pos
    prefix = "" if number is None else f"entry[{number}]."
    spans = (
        Span(at, 4, prefix + "key_hash", "hash", kh),
        Span(at + 4, 8, prefix + "phy_offset", "offset", phy),
        Span(at + 12, 4, prefix + "time_diff", "timestamp", diff),
        Span(at + 16, 4, prefix + "prev_index", "link", prev),
    )
    return IndexEntry(kh, phy, diff, prev, spans)


def encode_slot(value: int) -> bytes:
    """The 4 bytes of one hash slot: the number of the newest entry of its bucket (0 = empty)."""
    try:
        return SLOT.pack(value)
    except struct.error:
        raise EncodeError("index_slot", "value", "an entry number that fits a Java int", value) from None


def decode_slot(buf, slot: int, *, base: int = 0, with_spans: bool = True) -> tuple[int, Span | None]:
    """The value of hash slot ``slot`` (0 = empty) and its span."""
    pos = slot_position(slot)
    if slot < 0 or len(buf) - pos < HASH_SLOT_SIZE:
        raise TruncatedError("index_slot", f"slot[{slot}]", base + pos, "4 bytes",
                             f"{max(0, len(buf) - pos)} bytes")
    (value,) = SLOT.unpack_from(buf, pos)
    return value, (Span(base + pos, 4, f"slot[{slot}]", "link", value) if with_spans else None)


# -- executable spec (construct) -------------------------------------------------------------

def _schemas():
    import construct as c

    header = c.Struct(
        "begin_timestamp" / c.Int64sb * "store timestamp (ms) of the first entry, or inherited from the previous file",
        "end_timestamp" / c.Int64sb * "store timestamp (ms) of the newest entry",
        "begin_phy_offset" / c.Int64sb * "CommitLog offset of the first entry, or inherited",
        "end_phy_offset" / c.Int64sb * "CommitLog offset of the newest entry",
        "hash_slot_count" / c.Int32sb * "number of hash slots that became non-empty",
        "index_count" / c.Int32sb * "next entry number (= entries + 1); 0 in a brand-new file",
    )
    entry = c.Struct(
        "key_hash" / c.Int32sb * "abs(Java String.hashCode(topic#key)), Integer.MIN_VALUE -> 0",
        "phy_offset" / c.Int64sb * "CommitLog offset of the indexed message",
        "time_diff" / c.Int32sb * "(storeTimestamp - header.beginTimestamp) / 1000, in seconds",
        "prev_index" / c.Int32sb * "previous entry number in the same hash slot, 0 = end of chain",
    )
    return header, entry


INDEX_HEADER_SCHEMA, INDEX_ENTRY_SCHEMA = _schemas()

try:  # the schema registry is owned by formats/schemas.py
    from pymq_ref.formats.schemas import register as _register
except ImportError:  # pragma: no cover - registry not present yet
    _register = None
if _register is not None:
    _register("index_header", INDEX_HEADER_SCHEMA)
    _register("index_entry", INDEX_ENTRY_SCHEMA)
