"""Recovery: making the CommitLog and its derived files consistent after a restart.

``store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java`` (``recover``) and ``CommitLog.java``.
Functions, not a class, so that the chapter on recovery can call each step:

* :func:`check_record` — ``checkMessageAndReturnSize``: one record → (size, request, ok);
* :func:`recover_normally` — after a clean shutdown: from the third-last file, CRC-check, cut at
  the first bad record;
* :func:`recover_abnormally` — after a crash (``abort`` file present): start from the newest file
  whose first record is older than the checkpoint allows, and *dispatch* every good record;
* :func:`truncate_dirty_logic_files` — drop ConsumeQueue units beyond the CommitLog's end.

Both recoveries end with the CommitLog cut at ``process_offset``: positions set there, the rest
of that file zeroed, later files deleted.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping

from pymq_ref.formats.message import MESSAGE_MAGIC_CODE
from pymq_ref.store.dispatch import DispatchRequest, check_message_and_return_size

def check_record(buf, pos: int, base: int, check_crc: bool, delay_table: Mapping[int, int]):
    """``(size, request_or_None, success)`` as ``checkMessageAndReturnSize`` returns it.

    A blank is ``(0, None, True)``; zeros or bad magic ``(-1, None, False)``; a size mismatch
    ``(TOTALSIZE, None, False)``; a CRC mismatch or truncation ``(-1, None, False)``. (``base``,
    the segment's first offset, is kept for callers; the request carries the record's own
    PHYSICALOFFSET.) See :func:`pymq_ref.store.dispatch.check_message_and_return_size`.
    """
    return check_message_and_return_size(buf, pos, check_crc, delay_table)


def _scan(commit_log, start_index: int, check_crc: bool, delay_table, dispatch: Callable | None,
          reject_torn: bool = False) -> int:
    files = commit_log.queue.files
    index = start_index
    with_request = dispatch is not None
    while True:
        mf = files[index]
        pos = 0
        with memoryview(mf.mm) as buf:  # slices of a view: the CRC reads the body in place
            while True:
                size, req, ok = check_message_and_return_size(buf, pos, check_crc, delay_table, with_request,
                                                              reject_torn)
                if not ok or size <= 0:
                    break
                pos += size
                if with_request:
                    dispatch(req)
        if ok and size == 0 and index + 1 < len(files):  # a blank: go on with the next file
            index += 1
            continue
        return mf.file_from_offset + pos


def requests_between(commit_log, start: int, end: int):
    """The dispatch requests of the records in ``[start, end)`` (``start`` a record's offset), in
    log order, going on across blanks; stops at the first record that does not check out."""
    queue = commit_log.queue
    offset = max(start, commit_log.min_offset)
    while offset < end:
        mf = queue.find_mapped_file_by_offset(offset)
        if mf is None:
            return
        pos = offset - mf.file_from_offset
        limit = min(mf.file_size, end - mf.file_from_offset)
        with memoryview(mf.mm) as buf:
            while pos < limit:
                size, req, ok = check_message_and_return_size(buf, pos, False, {}, True)
                if not ok:
                    return
                if size == 0:  # a blank: the next file
                    pos = mf.file_size
                    break
                yield req
                pos += size
        offset = mf.file_from_offset + pos


def last_store_timestamp(commit_log, end: int) -> int:
    """The store timestamp of the last record before CommitLog offset ``end`` (0 if there is none)."""
    queue = commit_log.queue
    for mf in reversed(queue.files):
        if mf.file_from_offset >= end:
            continue
        last = 0
        for req in requests_between(commit_log, mf.file_from_offset, min(end, mf.file_from_offset + mf.file_size)):
            last = req.store_timestamp
        if last:
            return last
    return 0


def _finish(commit_log, process_offset: int, consume_queues: Iterable, max_phy_offset_of_cq: int) -> None:
    commit_log.queue.set_flushed_where(process_offset)
    commit_log.queue.truncate_dirty_files(process_offset)
    if max_phy_offset_of_cq >= process_offset:
        truncate_dirty_logic_files(consume_queues, process_offset)


def truncate_dirty_logic_files(consume_queues: Iterable, phy_offset: int) -> None:
    for cq in consume_queues:
        cq.truncate_dirty_logic_files(phy_offset)


def recover_normally(commit_log, consume_queues: list, *, check_crc: bool = True,
                     delay_table: Mapping[int, int] | None = None, max_phy_offset_of_cq: int = -1,
                     reject_torn: bool = False) -> int:
    """``CommitLog.recoverNormally``. Returns the end of valid data. No dispatch (the reput service catches up).
    ``reject_torn``: see :func:`pymq_ref.store.dispatch.check_message_and_return_size`."""
    files = commit_log.queue.files
    if not files:
        commit_log.queue.set_flushed_where(0)
        for cq in consume_queues:
            cq.destroy()
        return 0
    process_offset = _scan(commit_log, max(0, len(files) - 3), check_crc, delay_table or {}, None, reject_torn)
    _finish(commit_log, process_offset, consume_queues, max_phy_offset_of_cq)
    return process_offset


def is_mapped_file_matched_recover(mf, checkpoint, *, message_index_enable: bool = True,
                                   message_index_safe: bool = False) -> bool:
    """``isMappedFileMatchedRecover``: may abnormal recovery start at this file?"""
    mm = mf.mm
    if int.from_bytes(mm[4:8], "big", signed=True) != MESSAGE_MAGIC_CODE:
        return False
    sys_flag = int.from_bytes(mm[36:40], "big", signed=True)
    pos = 68 if sys_flag & 0x10 else 56
    store_timestamp = int.from_bytes(mm[pos:pos + 8], "big", signed=True)
    if store_timestamp == 0:
        return False
    if message_index_enable and message_index_safe:
        return store_timestamp <= checkpoint.min_timestamp_index
    return store_timestamp <= checkpoint.min_timestamp


def recover_abnormally(commit_log, consume_queues: list, checkpoint, dispatch: Callable[[DispatchRequest], None], *,
                       check_crc: bool = True, delay_table: Mapping[int, int] | None = None,
                       max_phy_offset_of_cq: int = -1, message_index_enable: bool = True,
                       message_index_safe: bool = False, start_at_most: int | None = None,
                       rebuild_units: bool = False, reject_torn: bool = False) -> int:
    """``CommitLog.recoverAbnormally``. Returns the end of valid data; every good record from the start file is
    dispatched.

    pymq-ref's options (4.9.4 has neither): ``start_at_most``, a CommitLog offset the dispatch
    must not start after — the start file is then at the latest the one holding it (the first
    file if none does); ``rebuild_units``, drop every ConsumeQueue unit pointing at or after the
    start file before dispatching, so that the dispatch writes them again. Units written after
    the checkpoint's last ConsumeQueue flush may be torn by a power loss (a 20-byte unit can
    straddle two disk sectors, one written and one not), and 4.9.4's dispatch keeps whatever
    unit it finds in place; ``reject_torn``, see :func:`pymq_ref.store.dispatch.check_message_and_return_size`."""
    files = commit_log.queue.files
    if not files:
        commit_log.queue.set_flushed_where(0)
        for cq in consume_queues:
            cq.destroy()
        return 0
    start = 0
    for index in range(len(files) - 1, -1, -1):
        if is_mapped_file_matched_recover(files[index], checkpoint, message_index_enable=message_index_enable,
                                          message_index_safe=message_index_safe):
            start = index
            break
    if start_at_most is not None:
        while start > 0 and files[start].file_from_offset > start_at_most:
            start -= 1
    if rebuild_units:
        truncate_dirty_logic_files(consume_queues, files[start].file_from_offset)
    process_offset = _scan(commit_log, start, check_crc, delay_table or {}, dispatch, reject_torn)
    _finish(commit_log, process_offset, consume_queues, max_phy_offset_of_cq)
    return process_offset
