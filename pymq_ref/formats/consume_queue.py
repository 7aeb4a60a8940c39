"""The ConsumeQueue unit: 20 bytes that point from a logical queue offset into the CommitLog.

Layout (the book's reference appendix, §ConsumeQueue unit; ``ConsumeQueue.CQ_STORE_UNIT_SIZE``), big-endian:

======  ====  =====  ==================================================================
offset  size  type   field
======  ====  =====  ==================================================================
0       8     long   ``phy_offset``: CommitLog offset of the record
8       4     int    ``size``: the record's TOTALSIZE
12      8     long   ``tags_code``: Java ``String.hashCode`` of TAGS, sign-extended; for
                     ``SCHEDULE_TOPIC_XXXX`` the delivery timestamp; or an ext address
======  ====  =====  ==================================================================

Unit ``n`` of a queue lives at byte offset ``n * 20`` of the queue's segment chain.

This module is pure: bytes in, values (and spans) out. It never touches files.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterator

from pymq_ref.errors import EncodeError, TruncatedError
from pymq_ref.formats.spans import Span

#: ``ConsumeQueue.CQ_STORE_UNIT_SIZE``
CQ_STORE_UNIT_SIZE = 20
#: Size of the blank filler unit written before the first unit of a queue that starts late.
BLANK_UNIT_SIZE_FIELD = 0x7FFFFFFF
#: ``ConsumeQueueExt.MAX_ADDR = Integer.MIN_VALUE - 1``: tagsCodes at or below are ext addresses.
EXT_MAX_ADDR = -(2**31) - 1
#: Default units per file and default file size (``mappedFileSizeConsumeQueue``).
DEFAULT_UNITS_PER_FILE = 300_000
DEFAULT_FILE_SIZE = DEFAULT_UNITS_PER_FILE * CQ_STORE_UNIT_SIZE

CQ_UNIT = struct.Struct(">qiq")
#: The bytes of a blank filler unit ``(0, 0x7FFFFFFF, 0)``.
BLANK_UNIT = CQ_UNIT.pack(0, BLANK_UNIT_SIZE_FIELD, 0)

_I64 = (-(2**63), 2**63 - 1)
_I32 = (-(2**31), 2**31 - 1)


@dataclass(frozen=True, slots=True)
class CqUnit:
    """One decoded ConsumeQueue unit. ``spans`` is empty when decoded without spans."""

    phy_offset: int
    size: int
    tags_code: int
    spans: tuple[Span, ...] = ()

    @property
    def is_valid(self) -> bool:
        """RocketMQ's recovery test: ``offset >= 0 && size > 0`` (blank fillers count as valid)."""
        return self.phy_offset >= 0 and self.size > 0

    @property
    def is_blank(self) -> bool:
        """A filler unit ``(0, 0x7FFFFFFF, 0)``; readers skip it."""
        return self.size == BLANK_UNIT_SIZE_FIELD

    @property
    def is_empty(self) -> bool:
        """All zero: the unwritten tail of a file."""
        return self.phy_offset == 0 and self.size == 0 and self.tags_code == 0

    @property
    def is_ext_address(self) -> bool:
        return is_ext_address(self.tags_code)


def is_ext_address(tags_code: int) -> bool:
    """``ConsumeQueueExt.isExtAddr``: tagsCode holds a ConsumeQueueExt address."""
    return tags_code <= EXT_MAX_ADDR


def encode_cq_unit(phy_offset: int, size: int, tags_code: int) -> bytes:
    """The 20 bytes of a unit. Raises :class:`EncodeError` on out-of-range values."""
    for name, value, (lo, hi) in (("phy_offset", phy_offset, _I64), ("size", size, _I32),
                                  ("tags_code", tags_code, _I64)):
        if not lo <= value <= hi:
            raise EncodeError("consume_queue_unit", name, f"a value in [{lo}, {hi}]", value)
    return CQ_UNIT.pack(phy_offset, size, tags_code)


def decode_cq_unit(buf, pos: int = 0, *, base: int = 0, with_spans: bool = True) -> CqUnit:
    """Decode the unit at ``buf[pos:pos+20]``; spans are absolute (``base + pos``)."""
    if pos < 0 or len(buf) - pos < CQ_STORE_UNIT_SIZE:
        raise TruncatedError("consume_queue_unit", "phy_offset", base + pos,
                             f"{CQ_STORE_UNIT_SIZE} bytes", f"{max(0, len(buf) - pos)} bytes")
    phy, size, tags = CQ_UNIT.unpack_from(buf, pos)
    if not with_spans:
        return CqUnit(phy, size, tags)
    at = base + pos
    spans = (
        Span(at, 8, "phy_offset", "offset", phy),
        Span(at + 8, 4, "size", "size", size),
        Span(at + 12, 8, "tags_code", "hash", tags),
    )
    return CqUnit(phy, size, tags, spans)


def iter_cq_units(buf, pos: int = 0, end: int | None = None, *, base: int = 0,
                  with_spans: bool = False, stop_at_empty: bool = True) -> Iterator[tuple[int, CqUnit]]:
    """Yield ``(absolute_byte_offset, unit)`` for consecutive units.

    Stops at the end of ``buf`` (or ``end``) and, if ``stop_at_empty``, at the first unit that
    is not valid in RocketMQ's sense (``offset < 0 or size <= 0``) — the unwritten tail.
    """
    end = len(buf) if end is None else end
    end -= (end - pos) % CQ_STORE_UNIT_SIZE
    while pos < end:
        unit = decode_cq_unit(buf, pos, base=base, with_spans=with_spans)
        if stop_at_empty and not unit.is_valid:
            return
        yield base + pos, unit
        pos += CQ_STORE_UNIT_SIZE


def round_file_size(configured: int) -> int:
    """``MessageStoreConfig.getMappedFileSizeConsumeQueue``: round up to a multiple of 20."""
    units = -(-configured // CQ_STORE_UNIT_SIZE)
    return units * CQ_STORE_UNIT_SIZE


# -- executable spec (construct) -------------------------------------------------------------

def _schema():
    import construct as c

    return c.Struct(
        "phy_offset" / c.Int64sb * "CommitLog physical offset of the record (first byte of TOTALSIZE)",
        "size" / c.Int32sb * "TOTALSIZE of the record; 0x7FFFFFFF marks a blank filler unit",
        "tags_code" / c.Int64sb * ("Java String.hashCode of TAGS sign-extended to 64 bits; delivery "
                                   "timestamp for SCHEDULE_TOPIC_XXXX; <= -2^31-1 means a ConsumeQueueExt address"),
    )


CQ_UNIT_SCHEMA = _schema()

try:  # the schema registry is owned by formats/schemas.py
    from pymq_ref.formats.schemas import register as _register
except ImportError:  # pragma: no cover - registry not present yet
    _register = None
if _register is not None:
    _register("consume_queue_unit", CQ_UNIT_SCHEMA)
