"""RocketMQ 5.x timer-wheel files: the TimerLog unit, the TimerWheel slot, the ``timercheck`` file.

The book's reference appendix, §Timer files;
``store/src/main/java/org/apache/rocketmq/store/timer/{TimerLog,Slot,TimerWheel,TimerCheckpoint}.java`` (5.1.4).
Big-endian.

TimerLog unit (``TimerLog.UNIT_SIZE`` = 52), one per enqueued timer, appended to ``timerlog/``:

======  ====  ====  ===================================================================
offset  size  type  field
======  ====  ====  ===================================================================
0       4     int   ``size`` (always 52)
4       8     long  ``prev_pos``: TimerLog offset of the previous unit of the same slot (-1: none)
12      4     int   ``magic``: 1 default (always set) | 2 roll | 4 delete
16      8     long  ``curr_write_time_ms``: the wheel's write time when enqueued
24      4     int   ``delayed_delta``: delayed time − curr_write_time_ms
28      8     long  ``offset_py``: CommitLog offset of the timer-topic record
36      4     int   ``size_py``: its size
40      4     int   ``real_topic_hash``: ``REAL_TOPIC.hashCode()`` (metrics; 0 without REAL_TOPIC)
44      8     long  ``reserved`` (0)
======  ====  ====  ===================================================================

When a unit does not fit (``52 + 16 > remaining``) the file ends with a 16-byte blank
``int remaining, long 0, int BLANK_MAGIC_CODE`` (-875286124, the CommitLog blank magic).

TimerWheel slot (``Slot.SIZE`` = 32), ``slots_total × 2`` of them in the ``timerwheel`` file;
the slot of time *t* is ``t / precision % (slots_total × 2)``:

======  ====  ====  ===================================================================
0       8     long  ``time / precision`` — the slot is valid for *t* only if this equals ``t / precision``
8       8     long  ``first_pos``: first TimerLog unit of the slot
16      8     long  ``last_pos``: last unit — the head of the backward ``prev_pos`` chain
24      4     int   ``num``: messages in the slot (delete markers count −1)
28      4     int   ``magic`` (unused, 0)
======  ====  ====  ===================================================================

``timercheck`` (4096-byte mapped file): longs ``last_read_time_ms``@0, ``last_timer_log_flush_pos``@8,
``last_timer_queue_offset``@16, ``master_timer_queue_offset``@24, then data version
``state_version``@32, ``timestamp``@40, ``counter``@48.

Pure: bytes in, values and spans out. No I/O.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from pymq_ref.errors import BadMagicError, EncodeError, SizeMismatchError, TruncatedError
from pymq_ref.formats.spans import Span

TIMER_LOG_UNIT_SIZE = 52          # TimerLog.UNIT_SIZE
TIMER_LOG_MIN_BLANK_LEN = 16      # TimerLog.MIN_BLANK_LEN
UNIT_PRE_SIZE_FOR_MSG = 28        # where offset_py starts
UNIT_PRE_SIZE_FOR_METRIC = 40     # where real_topic_hash starts
TIMER_LOG_BLANK_MAGIC_CODE = (0xBBCCDDEE ^ (1880681586 + 8)) - (1 << 32)  # -875286124
MAGIC_DEFAULT, MAGIC_ROLL, MAGIC_DELETE = 1, 2, 4
SLOT_SIZE = 32                    # Slot.SIZE
TIMER_WHEEL_TTL_DAY = 7
DAY_SECS = 86400
DEFAULT_SLOTS_TOTAL = TIMER_WHEEL_TTL_DAY * DAY_SECS  # 604800, independent of the precision
TIMER_CHECKPOINT_FILE_SIZE = 4096
BLANK, IGNORE = -1, -2            # TimerWheel.BLANK / IGNORE

TIMER_LOG_UNIT = struct.Struct(">iqiqiqiiq")
TIMER_LOG_BLANK = struct.Struct(">iqi")
SLOT = struct.Struct(">qqqii")
TIMER_CHECKPOINT = struct.Struct(">qqqqqqq")

_UNIT_FIELDS = (("size", 0, 4, "size"), ("prev_pos", 4, 8, "link"), ("magic", 12, 4, "magic"),
                ("curr_write_time_ms", 16, 8, "timestamp"), ("delayed_delta", 24, 4, "timestamp"),
                ("offset_py", 28, 8, "offset"), ("size_py", 36, 4, "size"),
                ("real_topic_hash", 40, 4, "hash"), ("reserved", 44, 8, "blank"))
_SLOT_FIELDS = (("time_div_precision", 0, 8, "timestamp"), ("first_pos", 8, 8, "link"),
                ("last_pos", 16, 8, "link"), ("num", 24, 4, "count"), ("magic", 28, 4, "magic"))
_CHECKPOINT_FIELDS = ("last_read_time_ms", "last_timer_log_flush_pos", "last_timer_queue_offset",
                      "master_timer_queue_offset", "state_version", "timestamp", "counter")


def is_magic_ok(magic: int) -> bool:
    """``TimerMessageStore.isMagicOK``: only the low four bits may be set."""
    return (magic | 0xF) == 0xF


def wheel_length(slots_total: int = DEFAULT_SLOTS_TOTAL) -> int:
    """Bytes of the ``timerwheel`` file: ``slots_total × 2 × 32`` (38,707,200 by default)."""
    return slots_total * 2 * SLOT_SIZE


def slot_index(time_ms: int, precision_ms: int = 1000, slots_total: int = DEFAULT_SLOTS_TOTAL) -> int:
    """``TimerWheel.getSlotIndex``: ``time / precision % (slots_total × 2)`` (Java int division, t >= 0)."""
    return time_ms // precision_ms % (slots_total * 2)


def _spans(base: int, fields, values) -> tuple[Span, ...]:
    return tuple(Span(base + off, length, name, kind, value) for (name, off, length, kind), value in zip(fields, values))


# -- TimerLog unit ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class TimerLogUnit:
    prev_pos: int
    magic: int
    curr_write_time_ms: int
    delayed_delta: int
    offset_py: int
    size_py: int
    real_topic_hash: int = 0
    reserved: int = 0
    size: int = TIMER_LOG_UNIT_SIZE
    spans: tuple[Span, ...] = ()

    @property
    def delayed_time_ms(self) -> int:
        """The slot time the unit was filed under (``curr_write_time_ms + delayed_delta``)."""
        return self.curr_write_time_ms + self.delayed_delta

    @property
    def need_roll(self) -> bool:
        return bool(self.magic & MAGIC_ROLL)

    @property
    def need_delete(self) -> bool:
        return bool(self.magic & MAGIC_DELETE)


@dataclass(frozen=True, slots=True)
class TimerLogBlank:
    """The 16-byte filler at the end of a full TimerLog file; ``remaining`` bytes to the end."""

    remaining: int
    spans: tuple[Span, ...] = ()


def encode_timer_log_unit(unit: TimerLogUnit) -> bytes:
    """The 52 bytes of one TimerLog unit (``TimerMessageStore.doEnqueue``); EncodeError when out of range."""
    try:
        return TIMER_LOG_UNIT.pack(unit.size, unit.prev_pos, unit.magic, unit.curr_write_time_ms, unit.delayed_delta,
                                   unit.offset_py, unit.size_py, unit.real_topic_hash, unit.reserved)
    except struct.error as exc:
        raise EncodeError("timer_log_unit", "fields", "values that fit their Java int/long types", str(exc)) from None


def encode_timer_log_blank(remaining: int) -> bytes:
    """The 16-byte blank that fills a TimerLog file's tail of ``remaining`` bytes (``TimerLog.append``)."""
    if remaining < TIMER_LOG_MIN_BLANK_LEN:
        raise EncodeError("timer_log_blank", "remaining", f">= {TIMER_LOG_MIN_BLANK_LEN}", remaining)
    return TIMER_LOG_BLANK.pack(remaining, 0, TIMER_LOG_BLANK_MAGIC_CODE)


def decode_timer_log_unit(buf, pos: int = 0, *, base: int = 0, with_spans: bool = True) -> TimerLogUnit | TimerLogBlank:
    """Decode the unit (or end-of-file blank) at ``pos``; spans are absolute (``base + pos``).

    Raises :class:`TruncatedError`, :class:`BadMagicError` (magic bits beyond 0xF) or
    :class:`SizeMismatchError` (size field not 52) — the checks recovery applies.
    """
    at = base + pos
    if pos < 0 or len(buf) - pos < TIMER_LOG_MIN_BLANK_LEN:
        raise TruncatedError("timer_log_unit", "size", at, f"{TIMER_LOG_MIN_BLANK_LEN} bytes",
                             f"{max(0, len(buf) - pos)} bytes")
    size, prev, magic = TIMER_LOG_BLANK.unpack_from(buf, pos)
    if magic == TIMER_LOG_BLANK_MAGIC_CODE:
        spans = _spans(at, (("remaining", 0, 4, "size"), ("zero", 4, 8, "blank"), ("magic", 12, 4, "magic")),
                       (size, prev, magic)) if with_spans else ()
        return TimerLogBlank(size, spans)
    if not is_magic_ok(magic):
        raise BadMagicError("timer_log_unit", "magic", at + 12, "bits within 0xF (1 default, 2 roll, 4 delete)", magic)
    if size != TIMER_LOG_UNIT_SIZE:
        raise SizeMismatchError("timer_log_unit", "size", at, str(TIMER_LOG_UNIT_SIZE), size)
    if len(buf) - pos < TIMER_LOG_UNIT_SIZE:
        raise TruncatedError("timer_log_unit", "curr_write_time_ms", at + 16, f"{TIMER_LOG_UNIT_SIZE} bytes",
                             f"{len(buf) - pos} bytes")
    values = TIMER_LOG_UNIT.unpack_from(buf, pos)
    spans = _spans(at, _UNIT_FIELDS, values) if with_spans else ()
    v = values
    return TimerLogUnit(v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[0], spans)


# -- TimerWheel slot ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Slot:
    """A decoded slot; ``time_ms`` is the stored ``time / precision`` times the precision."""

    time_ms: int
    first_pos: int
    last_pos: int
    num: int = 0
    magic: int = 0
    spans: tuple[Span, ...] = ()

    @property
    def is_empty(self) -> bool:
        return self.time_ms == -1


EMPTY_SLOT = Slot(-1, -1, -1)


def encode_slot(time_ms: int, first_pos: int, last_pos: int, num: int = 0, magic: int = 0,
                precision_ms: int = 1000) -> bytes:
    """``TimerWheel.putSlot`` (5-argument form): the slot stores ``time / precision``."""
    try:
        return SLOT.pack(time_ms // precision_ms, first_pos, last_pos, num, magic)
    except struct.error as exc:
        raise EncodeError("timer_wheel_slot", "fields", "values that fit their Java int/long types", str(exc)) from None


def decode_raw_slot(buf, pos: int = 0, precision_ms: int = 1000, *, base: int = 0, with_spans: bool = True) -> Slot:
    """``getRawSlot``: the slot at ``pos`` as stored (no validity check)."""
    if pos < 0 or len(buf) - pos < SLOT_SIZE:
        raise TruncatedError("timer_wheel_slot", "time_div_precision", base + pos, f"{SLOT_SIZE} bytes",
                             f"{max(0, len(buf) - pos)} bytes")
    values = SLOT.unpack_from(buf, pos)
    spans = _spans(base + pos, _SLOT_FIELDS, values) if with_spans else ()
    return Slot(values[0] * precision_ms, values[1], values[2], values[3], values[4], spans)


def decode_slot_for(buf, time_ms: int, precision_ms: int = 1000, slots_total: int = DEFAULT_SLOTS_TOTAL,
                    *, with_spans: bool = False) -> Slot:
    """``TimerWheel.getSlot(time)``: the slot of ``time_ms`` in a whole-wheel buffer, or
    :data:`EMPTY_SLOT` when the slot holds another round's time (stale or never written)."""
    pos = slot_index(time_ms, precision_ms, slots_total) * SLOT_SIZE
    slot = decode_raw_slot(buf, pos, precision_ms, base=0, with_spans=with_spans)
    return slot if slot.time_ms == time_ms // precision_ms * precision_ms else EMPTY_SLOT


# -- timercheck ---------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class TimerCheckpointData:
    last_read_time_ms: int = 0
    last_timer_log_flush_pos: int = 0
    last_timer_queue_offset: int = 0
    master_timer_queue_offset: int = 0
    state_version: int = 0
    timestamp: int = 0
    counter: int = 0
    spans: tuple[Span, ...] = ()


def encode_timer_checkpoint(cp: TimerCheckpointData, *, full_page: bool = True) -> bytes:
    """The ``timercheck`` file (``TimerCheckpoint.flush``): seven longs, padded to a page by default."""
    data = TIMER_CHECKPOINT.pack(*(getattr(cp, n) for n in _CHECKPOINT_FIELDS))
    return data + bytes(TIMER_CHECKPOINT_FILE_SIZE - len(data)) if full_page else data


def decode_timer_checkpoint(buf, pos: int = 0, *, base: int = 0, with_spans: bool = True) -> TimerCheckpointData:
    """The seven longs of a ``timercheck`` file at ``buf[pos]``; TruncatedError when short."""
    if pos < 0 or len(buf) - pos < TIMER_CHECKPOINT.size:
        raise TruncatedError("timer_checkpoint", "last_read_time_ms", base + pos, f"{TIMER_CHECKPOINT.size} bytes",
                             f"{max(0, len(buf) - pos)} bytes")
    values = TIMER_CHECKPOINT.unpack_from(buf, pos)
    spans = tuple(Span(base + pos + 8 * i, 8, n, "offset" if "offset" in n or "pos" in n else
                       ("count" if n in ("counter", "state_version") else "timestamp"), v)
                  for i, (n, v) in enumerate(zip(_CHECKPOINT_FIELDS, values))) if with_spans else ()
    return TimerCheckpointData(*values, spans=spans)


# -- executable spec (construct) ------------------------------------------------------------------

def _schemas():
    import construct as c

    unit = c.Struct(
        "size" / c.Int32sb * "unit size, always 52 (TimerLog.UNIT_SIZE)",
        "prev_pos" / c.Int64sb * "TimerLog offset of the previous unit filed in the same slot; -1 ends the chain",
        "magic" / c.Int32sb * "bits: 1 default (always set), 2 roll (re-queue, not due yet), 4 delete marker",
        "curr_write_time_ms" / c.Int64sb * "the wheel's write time (ms) when the timer was enqueued",
        "delayed_delta" / c.Int32sb * "slot time minus curr_write_time_ms (ms)",
        "offset_py" / c.Int64sb * "CommitLog offset of the rmq_sys_wheel_timer record",
        "size_py" / c.Int32sb * "size of that CommitLog record",
        "real_topic_hash" / c.Int32sb * "Java hashCode of the REAL_TOPIC property (metrics), 0 without it",
        "reserved" / c.Int64sb * "reserved, written as 0",
    )
    blank = c.Struct(
        "remaining" / c.Int32sb * "bytes from here to the end of the TimerLog file",
        "zero" / c.Int64sb * "0",
        "magic" / c.Int32sb * "TimerLog.BLANK_MAGIC_CODE = 0xBBCCDDEE ^ (1880681586 + 8) = -875286124",
    )
    slot = c.Struct(
        "time_div_precision" / c.Int64sb * "slot time divided by timerPrecisionMs; valid only for times with this quotient",
        "first_pos" / c.Int64sb * "TimerLog offset of the first unit filed in this slot",
        "last_pos" / c.Int64sb * "TimerLog offset of the last unit: the head of the backward prev_pos chain",
        "num" / c.Int32sb * "number of timers in the slot (a delete marker counts -1)",
        "magic" / c.Int32sb * "unused, 0",
    )
    check = c.Struct(*[n / c.Int64sb * d for n, d in (
        ("last_read_time_ms", "the dequeue position: every slot before it has been delivered"),
        ("last_timer_log_flush_pos", "TimerLog flushed-where when the checkpoint was taken"),
        ("last_timer_queue_offset", "next rmq_sys_wheel_timer CQ offset to enqueue (min with master's)"),
        ("master_timer_queue_offset", "the master's committed timer queue offset"),
        ("state_version", "data version: state machine version"),
        ("timestamp", "data version: time of the last change"),
        ("counter", "data version: change counter"))])
    return unit, blank, slot, check


TIMER_LOG_UNIT_SCHEMA, TIMER_LOG_BLANK_SCHEMA, SLOT_SCHEMA, TIMER_CHECKPOINT_SCHEMA = _schemas()

try:  # the schema registry is owned by formats/schemas.py
    from pymq_ref.formats.schemas import register as _register
except ImportError:  # pragma: no cover
    _register = None
if _register is not None:
    _register("timer_log_unit", TIMER_LOG_UNIT_SCHEMA)
    _register("timer_log_blank", TIMER_LOG_BLANK_SCHEMA)
    _register("timer_wheel_slot", SLOT_SCHEMA)
    _register("timer_checkpoint", TIMER_CHECKPOINT_SCHEMA)
