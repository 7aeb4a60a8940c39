"""ConsumeQueue: the per-(topic, queueId) log of 20-byte units pointing into the CommitLog.

``store/src/main/java/org/apache/rocketmq/store/ConsumeQueue.java``; the unit: the book's reference appendix,
§ConsumeQueue unit. A queue lives in ``consumequeue/{topic}/{queueId}/`` as
a :class:`~pymq_ref.store.mapped_file.MappedFileQueue` of files of ``units_per_file * 20`` bytes.
Logical offset ``n`` is the unit at byte offset ``20 * n``.

ConsumeQueues are *derived*: the dispatcher writes them from CommitLog records
(:meth:`ConsumeQueue.put_message_position_info`), recovery truncates them, and they can always be
rebuilt by replaying the CommitLog. The unit layout is in :mod:`pymq_ref.formats.consume_queue`.

With a :class:`~pymq_ref.store.consume_queue_ext.ConsumeQueueExt` (``enableConsumeQueueExt``)
each unit's tagsCode field holds the address of an ext unit carrying the real tagsCode and the
store time (``putMessagePositionInfoWrapper``); load, recovery, min-offset correction, flush and
destroy take the ext file along, as 4.9.4 does. Without one nothing here touches ext files.
"""

from __future__ import annotations

import os
from typing import Callable, Iterator

from pymq_ref.formats.consume_queue import (BLANK_UNIT, CQ_STORE_UNIT_SIZE, CQ_UNIT, EXT_MAX_ADDR, CqUnit,
                                            decode_cq_unit)
from pymq_ref.formats.consume_queue_ext import CqExtUnit
from pymq_ref.store.consume_queue_ext import ConsumeQueueExt
from pymq_ref.store.mapped_file import MappedFile, MappedFileQueue

_pack_into = CQ_UNIT.pack_into
_unpack_from = CQ_UNIT.unpack_from


def _java_div(a: int, b: int) -> int:
    """Java integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


class ConsumeQueue:
    """One logical queue.

    Call order: construct → ``load()`` → ``recover()`` → ``put_message_position_info`` /
    reads … → ``flush`` … → ``shutdown()``. ``max_physic_offset`` is the end (offset + size) of
    the last unit's record; the dispatcher uses it to skip records already indexed.
    """

    def __init__(self, topic: str, queue_id: int, root_dir: str, file_size: int, *, read_only: bool = False,
                 ext: ConsumeQueueExt | None = None):
        self.topic = topic
        self.queue_id = queue_id
        self.file_size = file_size
        self.directory = os.path.join(root_dir, topic, str(queue_id))
        self.queue = MappedFileQueue(self.directory, file_size, read_only=read_only)
        self.max_physic_offset = -1
        self.min_logic_offset = 0
        #: store timestamp of the last unit written (feeds the checkpoint's logicsMsgTimestamp)
        self.last_store_timestamp = 0
        #: the ext file chain (``enableConsumeQueueExt``), else None: Java's isExtRead/WriteEnable
        self.ext = ext

    # -- load / recover ---------------------------------------------------------------------
    def load(self, *, repair: bool = False) -> list[str]:
        """Map the files (see :meth:`MappedFileQueue.load`); the power-loss repairs made."""
        repairs = self.queue.load(repair=repair)
        if self.ext is not None:
            repairs += self.ext.load(repair=repair)
        return repairs

    def recover(self, *, step_back: bool = False) -> None:
        """``ConsumeQueue.recover``: from the third-last file, keep units while ``offset >= 0 and size > 0``.

        With ``step_back`` (pymq-ref's default store; 4.9.4 does not) a third-last file whose
        first unit was never made durable is not where the queue ends: files are flushed in
        order, so after a power loss more than the last three may hold only zeros. Recovery then
        starts from the newest earlier file whose first unit is written.
        """
        files = self.queue.files
        if not files:
            return
        index = max(0, len(files) - 3)
        if step_back:
            while index > 0:
                phy, sz, _tags = _unpack_from(files[index].mm, 0)
                if phy >= 0 and sz > 0:
                    break
                index -= 1
        mf = files[index]
        process_offset = mf.file_from_offset
        mapped_offset = 0
        max_ext_addr = 1
        while True:
            mm = mf.mm
            pos = 0
            size = self.file_size
            while pos + CQ_STORE_UNIT_SIZE <= size:
                phy, sz, tags = _unpack_from(mm, pos)
                if phy >= 0 and sz > 0:
                    pos += CQ_STORE_UNIT_SIZE
                    mapped_offset = pos
                    self.max_physic_offset = phy + sz
                    if tags <= EXT_MAX_ADDR:
                        max_ext_addr = tags
                else:
                    break
            if pos == size:  # the whole file is valid
                index += 1
                if index >= len(files):
                    break
                mf = files[index]
                process_offset = mf.file_from_offset
                mapped_offset = 0
            else:
                break
        process_offset += mapped_offset
        self.queue.set_flushed_where(process_offset)
        self.truncate_files_to(process_offset)
        if self.ext is not None:
            # the ext file ends after the unit the last valid ConsumeQueue unit points at
            self.ext.recover()
            self.ext.truncate_by_max_address(max_ext_addr)

    def truncate_files_to(self, logic_byte_offset: int) -> None:
        """Positions end at ``logic_byte_offset``; later files deleted (``truncateDirtyFiles``)."""
        self.queue.truncate_dirty_files(logic_byte_offset)

    def truncate_dirty_logic_files(self, phy_offset: int) -> None:
        """``ConsumeQueue.truncateDirtyLogicFiles``: drop every unit whose CommitLog offset is ``>= phy_offset``.

        The ext file is left as it is: 4.9.4's ``truncateDirtyLogicFiles`` returns from inside its
        loop whenever a file keeps a unit, before its ``truncateByMaxAddress`` call, which it only
        reaches after deleting every file (with no address to truncate by). Ext units of the dropped
        units stay behind, unreferenced; later units are appended after them.
        """
        self.max_physic_offset = phy_offset
        while True:
            mf = self.queue.last
            if mf is None:
                break
            mm = mf.mm
            pos = 0
            kept_end = None
            while pos + CQ_STORE_UNIT_SIZE <= self.file_size:
                phy, sz, _tags = _unpack_from(mm, pos)
                if pos == 0 and phy >= phy_offset:
                    break
                if phy >= 0 and sz > 0 and phy < phy_offset:
                    kept_end = pos + CQ_STORE_UNIT_SIZE
                    self.max_physic_offset = phy + sz
                    pos += CQ_STORE_UNIT_SIZE
                    if pos == self.file_size:
                        break
                else:
                    break
            if kept_end is None:
                # the first unit already points past phy_offset (or the file is empty): drop the file
                self.queue.delete_last_file()
                continue
            mf.set_positions(kept_end)
            if not mf.read_only and mf.zero_from(kept_end):
                mf.sync()
            self.queue.set_flushed_where(min(self.queue.flushed_where, mf.file_from_offset + kept_end))
            break

    # -- offsets ----------------------------------------------------------------------------
    @property
    def min_offset_in_queue(self) -> int:
        return self.min_logic_offset // CQ_STORE_UNIT_SIZE

    @property
    def max_offset_in_queue(self) -> int:
        """Next logical offset to be written."""
        return self.queue.max_offset // CQ_STORE_UNIT_SIZE

    def correct_min_offset(self, phy_min_offset: int) -> None:
        """``correctMinOffset``: first unit of the first file pointing at or after the CommitLog min."""
        mf = self.queue.first
        if mf is None:
            return
        mm = mf.mm
        end = mf.read_position
        for pos in range(0, end - end % CQ_STORE_UNIT_SIZE, CQ_STORE_UNIT_SIZE):
            phy, _sz, tags = _unpack_from(mm, pos)
            if phy >= phy_min_offset:
                self.min_logic_offset = mf.file_from_offset + pos
                if self.ext is not None and tags <= EXT_MAX_ADDR:
                    # ext files ending before the first live unit's ext unit go (truncateByMinAddress)
                    self.ext.truncate_by_min_address(tags)
                return

    # -- writing (dispatch) -----------------------------------------------------------------
    def put_message_position_info(self, offset: int, size: int, tags_code: int, cq_offset: int,
                                  store_timestamp: int = 0, filter_bit_map: bytes | None = None) -> bool:
        """``ConsumeQueue.putMessagePositionInfo``. Returns True when the unit is written or already present.

        With an ext file (``putMessagePositionInfoWrapper``) an ext unit ``(tags_code,
        store_timestamp, filter_bit_map)`` is appended first and its address replaces
        ``tags_code`` in the unit; if the ext put fails the plain tagsCode is stored. As in 4.9.4
        the ext unit is written even when the unit itself turns out to be a duplicate.
        """
        ext = self.ext
        if ext is not None:
            address = ext.put(tags_code, store_timestamp, filter_bit_map)
            if address <= EXT_MAX_ADDR:
                tags_code = address
        if offset + size <= self.max_physic_offset:
            return True  # already built
        expect = cq_offset * CQ_STORE_UNIT_SIZE
        files = self.queue.files
        mf = files[-1] if files else None
        if mf is None or mf.wrote_position == mf.file_size:
            mf = self._file_for(expect)
            if mf is None:
                return False
        pos = mf.wrote_position
        if cq_offset != 0:
            if pos == 0 and mf.first_create_in_queue:
                self.min_logic_offset = expect
                self.queue.set_flushed_where(expect)
                self._fill_pre_blank(mf, expect)
                pos = mf.wrote_position
            if expect < pos + mf.file_from_offset:
                return True  # duplicate
            # expect > current is a RocketMQ "[BUG]" log: still appended at the current end
        _pack_into(mf.mm, pos, offset, size, tags_code)
        mf.wrote_position = pos + CQ_STORE_UNIT_SIZE
        self.max_physic_offset = offset + size
        if store_timestamp:
            self.last_store_timestamp = store_timestamp
        return True

    def _file_for(self, expect: int) -> MappedFile | None:
        last = self.queue.last
        if last is not None and not last.is_full:
            return last
        return self.queue.get_last_mapped_file(expect)

    def _fill_pre_blank(self, mf: MappedFile, until: int) -> None:
        end = until % self.file_size
        blanks = BLANK_UNIT * ((end - mf.wrote_position) // CQ_STORE_UNIT_SIZE)
        mf.append(blanks)

    # -- reading ----------------------------------------------------------------------------
    def get_ext(self, address: int) -> CqExtUnit | None:
        """``getExt``: the ext unit at ``address``; None without an ext file or when unreadable."""
        ext = self.ext
        return ext.get(address) if ext is not None else None

    def get_unit(self, index: int, *, with_spans: bool = False) -> CqUnit | None:
        """The unit at logical offset ``index`` if it has been written, else None."""
        byte_offset = index * CQ_STORE_UNIT_SIZE
        if index < 0 or byte_offset < self.min_logic_offset:
            return None
        mf = self.queue.find_mapped_file_by_offset(byte_offset)
        if mf is None:
            return None
        pos = byte_offset - mf.file_from_offset
        if pos + CQ_STORE_UNIT_SIZE > mf.read_position:
            return None
        try:
            return decode_cq_unit(mf.mm, pos, base=mf.file_from_offset, with_spans=with_spans)
        except ValueError:  # "mmap closed": retention deleted the file after the lookup
            if mf.closed:
                return None
            raise

    def iter_units_from(self, index: int) -> Iterator[tuple[int, int, int, int]]:
        """Yield ``(logical_offset, phy_offset, size, tags_code)`` from ``index`` to the end of
        the file holding it (``getIndexBuffer`` returns one file's readable tail)."""
        byte_offset = index * CQ_STORE_UNIT_SIZE
        if index < 0 or byte_offset < self.min_logic_offset:
            return
        mf = self.queue.find_mapped_file_by_offset(byte_offset)
        if mf is None:
            return
        mm = mf.mm
        end = mf.read_position
        pos = byte_offset - mf.file_from_offset
        while pos + CQ_STORE_UNIT_SIZE <= end:
            try:
                phy, size, tags = _unpack_from(mm, pos)
            except ValueError:  # "mmap closed": retention deleted the file meanwhile; the rest is gone
                if mf.closed:
                    return
                raise
            yield (mf.file_from_offset + pos) // CQ_STORE_UNIT_SIZE, phy, size, tags
            pos += CQ_STORE_UNIT_SIZE

    def roll_next_file(self, index: int) -> int:
        """First logical offset of the next file (``rollNextFile``)."""
        units = self.file_size // CQ_STORE_UNIT_SIZE
        return index + units - index % units

    def offset_in_queue_by_time(self, timestamp: int, pickup_store_timestamp: Callable[[int, int], int],
                                min_physic_offset: int) -> int:
        """``getOffsetInQueueByTime`` (4.9.4), quirks included.

        The file is chosen by *file modification time* (the first file modified at or after
        ``timestamp``, else the last). Inside it a binary search over the readable units compares
        the record store timestamps (``pickup_store_timestamp(phy, size)``, -1 when unreadable):
        an exact hit wins; otherwise the unit whose timestamp is nearer to ``timestamp`` (a tie
        goes to the earlier unit); if every unit is later, the earliest examined; if every
        unit is earlier, the latest examined. Units below ``min_physic_offset`` are skipped. An
        unreadable record returns 0. An empty file yields ``(fileFromOffset - 1) / 20`` in Java
        integer arithmetic (0 for the first file).
        """
        mf = self.queue.get_mapped_file_by_time(timestamp)
        if mf is None:
            return 0
        low = self.min_logic_offset - mf.file_from_offset if self.min_logic_offset > mf.file_from_offset else 0
        high = mf.read_position - CQ_STORE_UNIT_SIZE
        target = left = right = -1
        left_value = right_value = -1
        mm = mf.mm
        while high >= low:
            mid = (low + high) // (2 * CQ_STORE_UNIT_SIZE) * CQ_STORE_UNIT_SIZE
            phy, size, _tags = _unpack_from(mm, mid)
            if phy < min_physic_offset:
                low = mid + CQ_STORE_UNIT_SIZE
                left = mid
                continue
            store_time = pickup_store_timestamp(phy, size)
            if store_time < 0:
                return 0
            if store_time == timestamp:
                target = mid
                break
            if store_time > timestamp:
                high = mid - CQ_STORE_UNIT_SIZE
                right, right_value = mid, store_time
            else:
                low = mid + CQ_STORE_UNIT_SIZE
                left, left_value = mid, store_time
        if target != -1:
            offset = target
        elif left_value == -1:
            offset = right
        elif right_value == -1:
            offset = left
        else:
            offset = right if abs(timestamp - left_value) > abs(timestamp - right_value) else left
        return _java_div(mf.file_from_offset + offset, CQ_STORE_UNIT_SIZE)

    # -- maintenance ------------------------------------------------------------------------
    def flush(self, least_pages: int = 0) -> bool:
        result = self.queue.flush(least_pages)
        if self.ext is not None:
            result = self.ext.flush(least_pages) and result
        return result

    def delete_expired_file(self, phy_min_offset: int) -> int:
        deleted = self.queue.delete_expired_file_by_offset(phy_min_offset, CQ_STORE_UNIT_SIZE)
        self.correct_min_offset(phy_min_offset)
        return deleted

    def destroy(self) -> None:
        self.max_physic_offset = -1
        self.min_logic_offset = 0
        self.queue.destroy()
        if self.ext is not None:
            self.ext.destroy()

    def shutdown(self) -> None:
        self.queue.shutdown()
        if self.ext is not None:
            self.ext.shutdown()

    def __repr__(self) -> str:
        return (f"ConsumeQueue({self.topic!r}, {self.queue_id}, min={self.min_offset_in_queue}, "
                f"max={self.max_offset_in_queue}, maxPhy={self.max_physic_offset})")
