"""The ConsumeQueueExt unit, its end-of-file filler and the ext *address* (RocketMQ 4.9.4).

The book's reference appendix, §ConsumeQueueExt unit;
``store/src/main/java/org/apache/rocketmq/store/ConsumeQueueExt.java``. With ``enableConsumeQueueExt`` a ConsumeQueue
keeps a side file per queue, ``consumequeue_ext/{topic}/{queueId}/``, of variable-length units;
the 20-byte ConsumeQueue unit then stores an *ext address* instead of the tagsCode.

Unit layout, big-endian (``CqExtUnit.write``):

======  =====  =====  ================================================================
offset  size   type   field
======  =====  =====  ================================================================
0       2      short  ``size``: whole unit length = 20 + ``bit_map_size``
2       8      long   ``tags_code``: the tagsCode the ConsumeQueue unit would have held
10      8      long   ``msg_store_time``: the record's STORETIMESTAMP
18      2      short  ``bit_map_size``: length of the filter bitmap in bytes (0: none)
20      n      bytes  ``filter_bit_map`` (only with ``enableCalcFilterBitMap``)
======  =====  =====  ================================================================

Units follow each other from the start of a file. A unit is only written when it leaves at
least ``END_BLANK_DATA_LENGTH`` (4) bytes free at the end of the file; otherwise the writer
puts the short ``-1`` (``ff ff``) at the write position — the *filler* — and goes on in the
next file. Readers stop at a size ``<= 0``: the filler, or the zeros of the unwritten tail.

Address: ``address = file offset + Long.MIN_VALUE`` (``decorate``); a value is an ext address
when ``value <= Integer.MIN_VALUE - 1`` (``MAX_ADDR``), so real tagsCodes (sign-extended
ints, or schedule timestamps) can never be taken for one.

Pure: bytes in, values (and spans) out. It never touches files (see
:mod:`pymq_ref.store.consume_queue_ext`).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterator

from pymq_ref.errors import EncodeError, FormatError, SizeMismatchError, TruncatedError
from pymq_ref.formats.spans import Span
from pymq_ref.formats.consume_queue import EXT_MAX_ADDR, is_ext_address

STRUCTURE = "consume_queue_ext_unit"
#: ``CqExtUnit.MIN_EXT_UNIT_SIZE``: size short + two longs + bitmap size short.
MIN_EXT_UNIT_SIZE = 20
#: ``CqExtUnit.MAX_EXT_UNIT_SIZE`` (``Short.MAX_VALUE``).
MAX_EXT_UNIT_SIZE = 32767
#: ``ConsumeQueueExt.END_BLANK_DATA_LENGTH``: bytes always left free at the end of a file.
END_BLANK_DATA_LENGTH = 4
#: The end-of-file filler: ``putShort((short) -1)`` at the write position.
FILLER = b"\xff\xff"
FILLER_SIZE_FIELD = -1
LONG_MIN = -(2**63)
#: ``ConsumeQueueExt.MAX_ADDR`` (one definition, shared with the ConsumeQueue unit codec)
MAX_ADDR = EXT_MAX_ADDR
#: ``ConsumeQueueExt.MAX_REAL_OFFSET = MAX_ADDR - Long.MIN_VALUE``: the largest file offset.
MAX_REAL_OFFSET = MAX_ADDR - LONG_MIN
#: ``MessageStoreConfig`` defaults (4.9.4).
DEFAULT_FILE_SIZE = 48 * 1024 * 1024
DEFAULT_BIT_MAP_LENGTH = 64  # bits; the writer's buffer is bitMapLength / 8 bytes

EXT_HEAD = struct.Struct(">hqqh")
_SIZE = struct.Struct(">h")
_I64 = (-(2**63), 2**63 - 1)


is_ext_addr = is_ext_address  # ``ConsumeQueueExt.isExtAddr``: ``value <= Integer.MIN_VALUE - 1``


def decorate(offset: int) -> int:
    """File offset → ext address (``decorate``; an address is returned unchanged, as Java does).

    Raises :class:`EncodeError` for an offset outside ``[0, MAX_REAL_OFFSET]``."""
    if is_ext_addr(offset):
        return offset
    if not 0 <= offset <= MAX_REAL_OFFSET:
        raise EncodeError("consume_queue_ext_address", "offset", f"a file offset in [0, {MAX_REAL_OFFSET}]", offset)
    return offset + LONG_MIN


def undecorate(address: int) -> int:
    """Ext address → file offset (``unDecorate``; a non-address is returned unchanged, as Java does)."""
    return address - LONG_MIN if is_ext_addr(address) else address


@dataclass(frozen=True, slots=True)
class CqExtUnit:
    """One decoded ext unit. ``filter_bit_map`` is None when ``bit_map_size < 1`` (``getFilterBitMap``)."""

    size: int
    tags_code: int
    msg_store_time: int
    bit_map_size: int
    filter_bit_map: bytes | None = None
    spans: tuple[Span, ...] = ()


def ext_unit_size(filter_bit_map: bytes | None) -> int:
    """``calcUnitSize``: 20 + bitmap length."""
    return MIN_EXT_UNIT_SIZE + (len(filter_bit_map) if filter_bit_map else 0)


def encode_ext_unit(tags_code: int, msg_store_time: int, filter_bit_map: bytes | None = None) -> bytes:
    """The bytes of a unit (``CqExtUnit.write``). Raises :class:`EncodeError` on out-of-range
    values or a unit longer than ``MAX_EXT_UNIT_SIZE`` (the writer then refuses the unit)."""
    for name, value in (("tags_code", tags_code), ("msg_store_time", msg_store_time)):
        if not isinstance(value, int) or not _I64[0] <= value <= _I64[1]:
            raise EncodeError(STRUCTURE, name, f"a long in [{_I64[0]}, {_I64[1]}]", value)
    bit_map = bytes(filter_bit_map) if filter_bit_map else b""
    size = MIN_EXT_UNIT_SIZE + len(bit_map)
    if size > MAX_EXT_UNIT_SIZE:
        raise EncodeError(STRUCTURE, "filter_bit_map",
                          f"at most {MAX_EXT_UNIT_SIZE - MIN_EXT_UNIT_SIZE} bytes (unit size <= {MAX_EXT_UNIT_SIZE})",
                          f"{len(bit_map)} bytes")
    return EXT_HEAD.pack(size, tags_code, msg_store_time, len(bit_map)) + bit_map


def read_size_field(buf, pos: int, *, base: int = 0) -> int:
    """The size short at ``pos`` (``readBySkip``): > 0 a unit, -1 the filler, 0 unwritten."""
    if pos < 0 or len(buf) - pos < 2:
        raise TruncatedError(STRUCTURE, "size", base + pos, "2 bytes", f"{max(0, len(buf) - pos)} bytes")
    return _SIZE.unpack_from(buf, pos)[0]


def decode_ext_unit(buf, pos: int = 0, *, base: int = 0, with_spans: bool = True, strict: bool = True) -> CqExtUnit:
    """Decode the unit at ``buf[pos:]``; spans are absolute (``base + pos``).

    Raises :class:`FormatError` when the size field is not a unit (``<= 0``: the filler or the
    unwritten tail), :class:`TruncatedError` when the buffer ends inside the unit, and — if
    ``strict`` — :class:`SizeMismatchError` when ``size != 20 + bit_map_size``. 4.9.4's reader
    (``CqExtUnit.read``) does not check that sum: ``strict=False`` reads as it does.
    """
    size = read_size_field(buf, pos, base=base)
    if size < 1:
        what = "the end-of-file filler (-1)" if size == FILLER_SIZE_FIELD else f"size {size}"
        raise FormatError(STRUCTURE, "size", base + pos, f"a unit size >= {MIN_EXT_UNIT_SIZE}", what)
    if len(buf) - pos < MIN_EXT_UNIT_SIZE:
        raise TruncatedError(STRUCTURE, "tags_code", base + pos + 2, f"{MIN_EXT_UNIT_SIZE} bytes of unit header",
                             f"{len(buf) - pos} bytes")
    size, tags, store_time, bm_size = EXT_HEAD.unpack_from(buf, pos)
    if strict and size != MIN_EXT_UNIT_SIZE + max(bm_size, 0):
        raise SizeMismatchError(STRUCTURE, "size", base + pos,
                                f"20 + bit_map_size = {MIN_EXT_UNIT_SIZE + max(bm_size, 0)}", size)
    if strict and bm_size < 0:
        raise FormatError(STRUCTURE, "bit_map_size", base + pos + 18, "a bitmap length >= 0", bm_size)
    bit_map = None
    if bm_size >= 1:
        start = pos + MIN_EXT_UNIT_SIZE
        if len(buf) - start < bm_size:
            raise TruncatedError(STRUCTURE, "filter_bit_map", base + start, f"{bm_size} bytes",
                                 f"{len(buf) - start} bytes")
        bit_map = bytes(buf[start:start + bm_size])
    if not with_spans:
        return CqExtUnit(size, tags, store_time, bm_size, bit_map)
    at = base + pos
    spans = [Span(at, 2, "size", "size", size), Span(at + 2, 8, "tags_code", "hash", tags),
             Span(at + 10, 8, "msg_store_time", "timestamp", store_time),
             Span(at + 18, 2, "bit_map_size", "size", bm_size)]
    if bit_map is not None:
        spans.append(Span(at + 20, bm_size, "filter_bit_map", "flag", bit_map.hex()))
    return CqExtUnit(size, tags, store_time, bm_size, bit_map, tuple(spans))


@dataclass(frozen=True, slots=True)
class ExtEnd:
    """Where the units of one ext file end: ``kind`` is ``"filler"`` (``ff ff`` at ``offset``),
    ``"zeros"`` (the unwritten tail starts at ``offset``) or ``"file_end"`` (no room for a size)."""

    offset: int
    kind: str
    spans: tuple[Span, ...] = ()


def iter_ext_units(buf, pos: int = 0, *, base: int = 0, with_spans: bool = False,
                   strict: bool = True) -> Iterator[tuple[int, CqExtUnit] | ExtEnd]:
    """Yield ``(absolute offset, unit)`` for consecutive units from ``pos``, then one :class:`ExtEnd`.

    This is the walk of ``ConsumeQueueExt.recover`` (a size ``<= 0`` ends a file). A malformed
    unit raises :class:`FormatError` (see :func:`decode_ext_unit`).
    """
    n = len(buf)
    while True:
        if n - pos < 2:
            yield ExtEnd(base + pos, "file_end")
            return
        size = _SIZE.unpack_from(buf, pos)[0]
        if size <= 0:
            if size == FILLER_SIZE_FIELD:
                spans = (Span(base + pos, 2, "filler", "blank", size),) if with_spans else ()
                yield ExtEnd(base + pos, "filler", spans)
            else:
                yield ExtEnd(base + pos, "zeros")
            return
        unit = decode_ext_unit(buf, pos, base=base, with_spans=with_spans, strict=strict)
        yield base + pos, unit
        pos += size


# -- executable spec (construct) -------------------------------------------------------------

def _schema():
    import construct as c

    return c.Struct(
        "size" / c.Int16sb * "length of the whole unit: 20 + bit_map_size (-1 here is the end-of-file filler)",
        "tags_code" / c.Int64sb * "tagsCode of the message (Java String.hashCode of TAGS, sign-extended), "
                                  "which the ConsumeQueue unit replaces by this unit's address",
        "msg_store_time" / c.Int64sb * "STORETIMESTAMP of the message, ms since the epoch",
        "bit_map_size" / c.Int16sb * "length in bytes of the filter bitmap that follows (0: none)",
        "filter_bit_map" / c.Bytes(c.this.bit_map_size) * ("bloom-filter bitmap of the consumer groups whose "
                                                           "SQL92 filter matches (enableCalcFilterBitMap only)"),
    )


EXT_UNIT_SCHEMA = _schema()

try:  # the schema registry is owned by formats/schemas.py
    from pymq_ref.formats.schemas import register as _register
except ImportError:  # pragma: no cover
    _register = None
if _register is not None:
    _register(STRUCTURE, EXT_UNIT_SCHEMA)
