"""ConsumeQueueExt: the per-queue side file of variable-length units (RocketMQ 4.9.4, optional).

``store/src/main/java/org/apache/rocketmq/store/ConsumeQueueExt.java``; the unit: the book's reference appendix,
§ConsumeQueueExt unit. Created by a :class:`~pymq_ref.store.consume_queue.
ConsumeQueue` only when ``enableConsumeQueueExt`` is true; it lives in
``{root}/consumequeue_ext/{topic}/{queueId}/`` as a :class:`~pymq_ref.store.mapped_file.MappedFileQueue`
of ``mappedFileSizeConsumeQueueExt``-byte files (48 MiB by default, not rounded). The unit layout,
the filler and the address encoding are in :mod:`pymq_ref.formats.consume_queue_ext`.

Behaviour kept from 4.9.4, quirks included:

* ``put`` answers an ext address, or ``1`` (not an address) when the unit is too large, the
  address space is exhausted, or three attempts fail; the caller then stores the plain tagsCode.
* A unit that would leave fewer than 4 bytes at the end of a file is not split: the filler
  ``ff ff`` goes at the write position, the file counts as full, the unit goes to the next file.
* ``recover`` walks every file to the first size ``<= 0`` and truncates after the last file's
  units; the ConsumeQueue then truncates to the unit its last valid unit points at
  (``truncate_by_max_address``). ``truncate_by_min_address`` deletes whole files whose end is
  *strictly* below the address (retention).
* The filter bitmap is only written when the caller gives one: 4.9.4 fills it in the dispatcher
  of ``enableCalcFilterBitMap`` (the broker's ``CommitLogDispatcherCalcBitMap``), which pymq-ref
  does not have, so units written by the store carry no bitmap (``bit_map_size = 0``).

pymq-ref differences: ``get`` answers None (instead of Java's ``BufferUnderflowException``) for a
unit whose bytes run past the readable end; truncation zeroes the dirty tail (as every
:class:`MappedFileQueue` truncation in pymq-ref does).

This module must not know about ConsumeQueue units or the CommitLog.
"""

from __future__ import annotations

import logging
import os

from pymq_ref.errors import FormatError
from pymq_ref.formats.consume_queue_ext import (END_BLANK_DATA_LENGTH, FILLER, MAX_EXT_UNIT_SIZE, MAX_REAL_OFFSET,
                                                MIN_EXT_UNIT_SIZE, CqExtUnit, decode_ext_unit, decorate,
                                                encode_ext_unit, is_ext_addr, read_size_field, undecorate)
from pymq_ref.store.mapped_file import MappedFile, MappedFileQueue

_log = logging.getLogger(__name__)

#: what ``put`` answers when nothing was written (``1`` is never an ext address)
PUT_FAILED = 1


def store_path_consume_queue_ext(root_dir: str) -> str:
    """``StorePathConfigHelper.getStorePathConsumeQueueExt``: ``{root}/consumequeue_ext``."""
    return os.path.join(root_dir, "consumequeue_ext")


class ConsumeQueueExt:
    """The ext file chain of one (topic, queueId).

    Call order: construct → ``load()`` → ``recover()`` (then the ConsumeQueue's
    ``truncate_by_max_address``) → ``put`` / ``get`` … → ``flush`` … → ``shutdown()`` (or
    ``destroy()``).
    """

    def __init__(self, topic: str, queue_id: int, store_path: str, file_size: int, bit_map_length: int = 64, *,
                 read_only: bool = False):
        self.topic = topic
        self.queue_id = queue_id
        self.file_size = file_size
        #: bits of the filter bitmap the broker would compute (sizes Java's write buffer only)
        self.bit_map_length = bit_map_length
        self.directory = os.path.join(store_path, topic, str(queue_id))
        self.queue = MappedFileQueue(self.directory, file_size, read_only=read_only)

    # -- addresses ---------------------------------------------------------------------------
    @property
    def max_address(self) -> int:
        """``getMaxAddress``: the address the next unit would get in the last file."""
        last = self.queue.last
        return decorate(0 if last is None else last.file_from_offset + last.wrote_position)

    @property
    def min_address(self) -> int:
        """``getMinAddress``: the address of the first byte of the first file."""
        first = self.queue.first
        return decorate(0 if first is None else first.file_from_offset)

    # -- load / recover ------------------------------------------------------------------------
    def load(self, *, repair: bool = False) -> list[str]:
        return self.queue.load(repair=repair)

    def recover(self) -> None:
        """Walk every file's units up to the first size ``<= 0``; truncate after the last file's."""
        files = self.queue.files
        if not files:
            return
        mf = files[-1]
        end = 0
        for mf in files:
            end = self._scan_end(mf)
        process_offset = mf.file_from_offset + end
        self.queue.set_flushed_where(process_offset)
        self.queue.truncate_dirty_files(process_offset)

    def _scan_end(self, mf: MappedFile) -> int:
        """Position of the first size ``<= 0`` in ``mf`` (``readBySkip`` until then)."""
        mm, pos, limit = mf.mm, 0, self.file_size
        while pos + 2 <= limit:
            size = read_size_field(mm, pos)
            if size <= 0:
                return pos
            if pos + size > limit:  # a damaged size: Java's position() would throw here; stop
                return pos
            pos += size
        return pos

    # -- writing -------------------------------------------------------------------------------
    def put(self, tags_code: int, msg_store_time: int, filter_bit_map: bytes | None = None) -> int:
        """Append a unit; its ext address, or :data:`PUT_FAILED` (``1``)."""
        size = MIN_EXT_UNIT_SIZE + (len(filter_bit_map) if filter_bit_map else 0)
        if size > MAX_EXT_UNIT_SIZE:
            _log.error("ext unit of %d bytes is larger than %d", size, MAX_EXT_UNIT_SIZE)
            return PUT_FAILED
        if self.queue.max_offset + size > MAX_REAL_OFFSET:
            _log.warning("ext address space exhausted at %d", self.queue.max_offset)
            return PUT_FAILED
        try:
            data = encode_ext_unit(tags_code, msg_store_time, filter_bit_map)
        except ValueError as exc:
            _log.error("cannot encode ext unit: %s", exc)
            return PUT_FAILED
        for _ in range(3):
            mf = self.queue.get_last_mapped_file(0)
            if mf is None:
                continue
            wrote = mf.wrote_position
            if size > self.file_size - wrote - END_BLANK_DATA_LENGTH:
                self._fill_to_end(mf, wrote)
                continue
            if mf.append(data):
                return decorate(mf.file_from_offset + wrote)
        return PUT_FAILED

    def _fill_to_end(self, mf: MappedFile, wrote: int) -> None:
        """``fullFillToEnd``: the short -1 at the write position, the file is full."""
        mf.write_at(wrote, FILLER)
        mf.wrote_position = self.file_size

    # -- reading -------------------------------------------------------------------------------
    def get(self, address: int) -> CqExtUnit | None:
        """The unit at ``address``; None when it is not an address, not in a file, beyond the
        written data, or not a unit (size ``< 1``)."""
        if not is_ext_addr(address):
            return None
        real = undecorate(address)
        mf = self.queue.find_mapped_file_by_offset(real, real == 0)
        if mf is None:
            return None
        pos = real % self.file_size
        end = mf.read_position
        if not 0 <= pos < end:
            return None
        try:
            view = memoryview(mf.mm)[:end]
            try:
                return decode_ext_unit(view, pos, base=mf.file_from_offset, with_spans=False, strict=False)
            finally:
                view.release()
        except FormatError:
            return None
        except ValueError:  # "mmap closed": retention deleted the file after the lookup
            if mf.closed:
                return None
            raise

    # -- truncation / maintenance --------------------------------------------------------------
    def truncate_by_max_address(self, max_address: int) -> None:
        """Keep everything up to the end of the unit at ``max_address`` (nothing if it is unreadable)."""
        if not is_ext_addr(max_address):
            return
        unit = self.get(max_address)
        if unit is None:
            _log.error("[BUG] ext address %d of %s-%d not found", max_address, self.topic, self.queue_id)
            return
        self.queue.truncate_dirty_files(undecorate(max_address) + unit.size)

    def truncate_by_min_address(self, min_address: int) -> int:
        """Delete the files whose end is below ``min_address``; the number deleted."""
        if not is_ext_addr(min_address) or self.queue.read_only:
            return 0
        real = undecorate(min_address)
        keep, deleted = [], 0
        for mf in self.queue.files:
            if mf.file_from_offset + self.file_size < real:
                mf.destroy()
                deleted += 1
            else:
                keep.append(mf)
        self.queue.files = keep
        return deleted

    def flush(self, least_pages: int = 0) -> bool:
        return self.queue.flush(least_pages)

    def destroy(self) -> None:
        self.queue.destroy()

    def shutdown(self) -> None:
        self.queue.shutdown()

    def __repr__(self) -> str:
        return f"ConsumeQueueExt({self.topic!r}, {self.queue_id}, files={len(self.queue)})"
