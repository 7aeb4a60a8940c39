"""The three files of the 5.x timer wheel: ``timerlog/`` segments, the ``timerwheel`` file, ``config/timercheck``.

Layouts are in :mod:`pymq_ref.formats.timer`; this module only maps files and moves bytes.
Like RocketMQ, the wheel is worked on in a memory copy and reaches its file only in
:meth:`TimerWheel.flush` (the timer flush service, every ``timerFlushIntervalMs``), so after a
crash the file may lag the TimerLog — recovery replays the TimerLog to repair the slots.
"""

from __future__ import annotations

import mmap
import os
import struct

from pymq_ref.formats.timer import (EMPTY_SLOT, IGNORE, SLOT, SLOT_SIZE, TIMER_CHECKPOINT_FILE_SIZE,
                                    TIMER_LOG_BLANK, TIMER_LOG_BLANK_MAGIC_CODE, TIMER_LOG_MIN_BLANK_LEN,
                                    TIMER_LOG_UNIT, TIMER_LOG_UNIT_SIZE, Slot, TimerCheckpointData,
                                    decode_timer_checkpoint, encode_timer_checkpoint, wheel_length)
from pymq_ref.store.errors import WrongFileSizeError
from pymq_ref.store.mapped_file import MappedFileQueue

_SLOT_UNPACK = SLOT.unpack_from
_SLOT_PACK = SLOT.pack_into
_TIME = struct.Struct(">q")
_UNIT_PACK = TIMER_LOG_UNIT.pack_into
_UNIT_UNPACK = TIMER_LOG_UNIT.unpack_from


class TimerLog:
    """Append-only chain of 52-byte units (``TimerLog.java``). Call order: construct → ``load()``
    → recovery truncates → ``append`` / ``read`` … → ``shutdown()``."""

    def __init__(self, directory: str, file_size: int):
        self.file_size = file_size
        self.queue = MappedFileQueue(directory, file_size)

    def load(self) -> None:
        self.queue.load()

    def append(self, data: bytes) -> int:
        """Write ``data`` (one unit) and return its TimerLog offset; a file without room for
        ``len + 16`` bytes is closed with the 16-byte blank first."""
        queue = self.queue
        mf = queue.files[-1] if queue.files else None
        if mf is None or mf.wrote_position >= mf.file_size:
            mf = queue.get_last_mapped_file(0)
        n = len(data)
        pos = mf.wrote_position
        if n + TIMER_LOG_MIN_BLANK_LEN > mf.file_size - pos:
            TIMER_LOG_BLANK.pack_into(mf.mm, pos, mf.file_size - pos, 0, TIMER_LOG_BLANK_MAGIC_CODE)
            mf.wrote_position = mf.file_size
            mf = queue.get_last_mapped_file(0)
            pos = mf.wrote_position
        mf.mm[pos:pos + n] = data
        mf.wrote_position = pos + n
        return mf.file_from_offset + pos

    def append_unit(self, prev_pos: int, magic: int, curr_write_time_ms: int, delayed_delta: int, offset_py: int,
                    size_py: int, real_topic_hash: int) -> int:
        """:meth:`append` of one unit, packed in place (the enqueue's hot path); returns its offset."""
        mf = self.queue.files[-1] if self.queue.files else None
        if mf is None or mf.file_size - mf.wrote_position < TIMER_LOG_UNIT_SIZE + TIMER_LOG_MIN_BLANK_LEN:
            return self.append(TIMER_LOG_UNIT.pack(TIMER_LOG_UNIT_SIZE, prev_pos, magic, curr_write_time_ms,
                                                   delayed_delta, offset_py, size_py, real_topic_hash, 0))
        pos = mf.wrote_position
        _UNIT_PACK(mf.mm, pos, TIMER_LOG_UNIT_SIZE, prev_pos, magic, curr_write_time_ms, delayed_delta,
                   offset_py, size_py, real_topic_hash, 0)
        mf.wrote_position = pos + TIMER_LOG_UNIT_SIZE
        return mf.file_from_offset + pos

    def read_chain(self, last_pos: int) -> list[tuple[int, int, int, int]]:
        """The units of one slot, newest first: follow ``prev_pos`` from ``last_pos`` until -1 (or
        an offset no file holds). Each item is ``(offset_py, size_py, curr_write_time_ms, magic)``."""
        out = []
        find = self.queue.find_mapped_file_by_offset
        lo = hi = 0
        mm = None
        pos = last_pos
        while pos != -1:
            if not lo <= pos < hi:
                mf = find(pos)
                if mf is None:
                    break
                mm, lo = mf.mm, mf.file_from_offset
                hi = lo + mf.file_size
            _size, prev, magic, enq, _delta, off_py, size_py, _h, _r = _UNIT_UNPACK(mm, pos - lo)
            out.append((off_py, size_py, enq, magic))
            pos = prev
        return out

    def buffer_at(self, offset: int):
        """``(mmap, position)`` of the file holding ``offset`` (for the caller to decode), or None."""
        mf = self.queue.find_mapped_file_by_offset(offset)
        if mf is None:
            return None
        return mf.mm, offset - mf.file_from_offset

    def offset_for_last_unit(self) -> int:
        """``getOffsetForLastUnit``: where the last whole unit of a file starts."""
        fs = self.file_size
        return fs - (fs - TIMER_LOG_MIN_BLANK_LEN) % TIMER_LOG_UNIT_SIZE - TIMER_LOG_MIN_BLANK_LEN - TIMER_LOG_UNIT_SIZE

    @property
    def max_offset(self) -> int:
        return self.queue.max_offset

    def flush(self) -> int:
        self.queue.flush_all()
        return self.queue.flushed_where

    def shutdown(self) -> None:
        self.queue.flush_all()
        self.queue.shutdown()


class TimerWheel:
    """``slots_total × 2`` slots of 32 bytes (``TimerWheel.java``), kept in memory, flushed on demand.

    Call order: construct (creates or maps the file; a file of another non-zero length raises
    :class:`WrongFileSizeError`) → slot calls … → ``flush()`` … → ``shutdown(flush)``.
    """

    def __init__(self, path: str, slots_total: int, precision_ms: int):
        self.path, self.slots_total, self.precision_ms = path, slots_total, precision_ms
        self.wheel_length = wheel_length(slots_total)
        self._mod = slots_total * 2
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        if os.path.exists(path):
            size = os.path.getsize(path)
            if size not in (0, self.wheel_length):
                raise WrongFileSizeError(path, self.wheel_length, size)
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        os.ftruncate(self._fd, self.wheel_length)
        self._mm = mmap.mmap(self._fd, self.wheel_length, access=mmap.ACCESS_WRITE)
        self.buf = bytearray(self._mm)
        self._dirty: set[int] = set()

    def slot_index(self, time_ms: int) -> int:
        return time_ms // self.precision_ms % self._mod

    def get_raw_slot(self, time_ms: int) -> Slot:
        t, first, last, num, magic = _SLOT_UNPACK(self.buf, self.slot_index(time_ms) * SLOT_SIZE)
        return Slot(t * self.precision_ms, first, last, num, magic)

    def get_slot(self, time_ms: int) -> Slot:
        """The slot of ``time_ms``, or the empty slot (-1, -1, -1) when it holds another round."""
        p = self.precision_ms
        t, first, last, num, magic = _SLOT_UNPACK(self.buf, time_ms // p % self._mod * SLOT_SIZE)
        if t != time_ms // p:
            return EMPTY_SLOT
        return Slot(t * p, first, last, num, magic)

    def slot_values(self, time_ms: int) -> tuple[int, int, int, int] | None:
        """``(first_pos, last_pos, num, magic)`` of :meth:`get_slot` without building a :class:`Slot`;
        None where :meth:`get_slot` answers the empty slot."""
        p = self.precision_ms
        t, first, last, num, magic = _SLOT_UNPACK(self.buf, time_ms // p % self._mod * SLOT_SIZE)
        if t != time_ms // p:
            return None
        return first, last, num, magic

    def put_slot(self, time_ms: int, first_pos: int, last_pos: int, num: int | None = None, magic: int = 0) -> None:
        """``putSlot``: the 5-argument form writes num and magic; the 3-argument form (``num=None``)
        leaves the old num/magic bytes in place, exactly like Java."""
        index = time_ms // self.precision_ms % self._mod
        pos = index * SLOT_SIZE
        if num is None:
            struct.pack_into(">qqq", self.buf, pos, time_ms // self.precision_ms, first_pos, last_pos)
        else:
            _SLOT_PACK(self.buf, pos, time_ms // self.precision_ms, first_pos, last_pos, num, magic)
        self._dirty.add(index)

    def revise_slot(self, time_ms: int, first_pos: int, last_pos: int, force: bool) -> None:
        """``reviseSlot`` (recovery): set first/last of the slot if it is this round's, else (force)
        start it afresh; ``IGNORE`` (-2) leaves a position as it is."""
        index = time_ms // self.precision_ms % self._mod
        pos = index * SLOT_SIZE
        if _TIME.unpack_from(self.buf, pos)[0] != time_ms // self.precision_ms:
            if force:
                self.put_slot(time_ms, first_pos if first_pos != IGNORE else last_pos, last_pos)
            return
        if first_pos != IGNORE:
            _TIME.pack_into(self.buf, pos + 8, first_pos)
        if last_pos != IGNORE:
            _TIME.pack_into(self.buf, pos + 16, last_pos)
        self._dirty.add(index)

    def check_phy_pos(self, time_start_ms: int, max_offset: int) -> int:
        """``checkPhyPos``: the smallest first_pos of this round's slots whose last_pos > ``max_offset``."""
        min_first = 2**63 - 1
        p = self.precision_ms
        start = time_start_ms // p
        for i in range(self._mod):
            t, first, last, _n, _m = _SLOT_UNPACK(self.buf, (start + i) % self._mod * SLOT_SIZE)
            if t == (time_start_ms + i * p) // p and last > max_offset:
                min_first = min(min_first, first)
        return min_first

    def get_num(self, time_ms: int) -> int:
        return self.get_slot(time_ms).num

    def get_all_num(self, time_start_ms: int) -> int:
        total = 0
        p = self.precision_ms
        start = time_start_ms // p
        for i in range(self._mod):
            t, _f, _l, num, _m = _SLOT_UNPACK(self.buf, (start + i) % self._mod * SLOT_SIZE)
            if t == (time_start_ms + i * p) // p:
                total += num
        return total

    def flush(self) -> None:
        """Copy the changed slots into the mapped file and force it to disk."""
        mm, buf = self._mm, self.buf
        for index in sorted(self._dirty):
            pos = index * SLOT_SIZE
            mm[pos:pos + SLOT_SIZE] = buf[pos:pos + SLOT_SIZE]
        self._dirty.clear()
        mm.flush()

    def shutdown(self, flush: bool = True) -> None:
        if flush:
            self.flush()
        self._mm.close()
        os.close(self._fd)


class TimerCheckpoint:
    """``config/timercheck``: a 4096-byte mapped file of seven longs (``TimerCheckpoint.java``)."""

    def __init__(self, path: str):
        self.path = path
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        exists = os.path.exists(path)
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if os.fstat(self._fd).st_size < TIMER_CHECKPOINT_FILE_SIZE:
            os.ftruncate(self._fd, TIMER_CHECKPOINT_FILE_SIZE)
        self._mm = mmap.mmap(self._fd, TIMER_CHECKPOINT_FILE_SIZE, access=mmap.ACCESS_WRITE)
        self.data = decode_timer_checkpoint(self._mm, with_spans=False) if exists else TimerCheckpointData()

    def flush(self) -> None:
        self._mm[:56] = encode_timer_checkpoint(self.data, full_page=False)
        self._mm.flush()

    def shutdown(self) -> None:
        self.flush()
        self._mm.close()
        os.close(self._fd)
