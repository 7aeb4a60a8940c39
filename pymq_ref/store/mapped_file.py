"""MappedFile and MappedFileQueue: the only code that maps store segments into memory.

A *segment* is a fixed-size file named by the 20-digit logical offset of its first byte
(``store/src/main/java/org/apache/rocketmq/store/MappedFileQueue.java``). A :class:`MappedFileQueue` is the ordered
chain of segments of one log
(the CommitLog, or one ConsumeQueue). Each :class:`MappedFile` tracks three positions:

* ``wrote_position``  — bytes appended;
* ``committed_position`` — bytes in the file's page cache, the most readers may see;
* ``flushed_position`` — bytes known to be on disk (``fdatasync``).

Theory of operation: appends copy bytes into the mapping (one copy, no syscall), so committed
is wrote; ``flush`` syncs the dirty pages only when enough pages are dirty (``leastPages``),
exactly like RocketMQ's ``MappedFile.isAbleToFlush``. A segment is created at its full size
(sparse), so a reader always finds zeros after the last record, and that size is made durable
before the segment is used (:func:`pymq_ref.store.fileio.create_file`).

With a :class:`TransientStorePool` (``transientStorePoolEnable``, CommitLog only) a new
segment borrows a *write buffer* from the pool: appends go to that buffer, and ``commit``
writes the new bytes to the file (``FileChannel.write``, here ``pwrite``) — only then can
readers see them, and only then can ``flush`` sync them. Once the whole segment is committed
the buffer goes back to the pool. A segment mapped at load time never has one (as 4.9.4).

Read-only mode (``read_only=True``) opens files with ``O_RDONLY`` and maps them with
``ACCESS_READ``: it never creates, extends, truncates or deletes anything. Loading refuses a
segment of the wrong size with :class:`~pymq_ref.store.errors.WrongFileSizeError`, except, when
asked to repair, the short last files a power loss leaves (:func:`power_loss_tail`); inspection
tools can call :func:`scan_segment_files` to list such files instead.

This module must not know about record layouts: it moves bytes.
"""

from __future__ import annotations

import collections
import logging
import mmap
import os
import re
import sys
import threading
from dataclasses import dataclass
from typing import Iterable

from pymq_ref.store import fileio
from pymq_ref.store.errors import ReadOnlyStoreError, StoreClosedError, WrongFileSizeError

OS_PAGE_SIZE = 4096
#: ``MappedFileQueue.DELETE_FILES_BATCH_MAX``
DELETE_FILES_BATCH_MAX = 10
_SEGMENT_NAME = re.compile(r"^\d{20}$")
_USE_FDATASYNC = sys.platform.startswith("linux") and hasattr(os, "fdatasync")
_log = logging.getLogger(__name__)


def offset_to_file_name(offset: int) -> str:
    """``UtilAll.offset2FileName``: 20 digits, zero padded."""
    return f"{offset:020d}"


@dataclass(frozen=True, slots=True)
class SegmentFileInfo:
    """One entry of :func:`scan_segment_files`."""

    path: str
    file_from_offset: int | None  # None when the name is not a 20-digit offset
    size: int
    expected_size: int

    @property
    def ok(self) -> bool:
        return self.file_from_offset is not None and self.size == self.expected_size


def power_loss_tail(segments: list[SegmentFileInfo], file_size: int) -> list[SegmentFileInfo]:
    """The last files of a chain that are shorter than ``file_size`` and hold only zeros, with no
    file of the right size after them: what a power loss leaves of segments whose size was never
    synced (0 bytes) — nothing in them was durable. A short file holding data, one followed by a
    full file, or one that is too long is real damage and not part of it."""
    tail: list[SegmentFileInfo] = []
    for info in reversed(segments):
        if info.size >= file_size or not fileio.is_all_zero(info.path):
            break
        tail.append(info)
    return tail[::-1]


def scan_segment_files(directory: str, file_size: int) -> list[SegmentFileInfo]:
    """List every file of a segment directory with its size check, without opening any file."""
    if not os.path.isdir(directory):
        return []
    out = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            continue
        start = int(name) if _SEGMENT_NAME.match(name) else None
        out.append(SegmentFileInfo(path, start, os.path.getsize(path), file_size))
    return out


class MappedFile:
    """One memory-mapped segment file.

    Call order: construct (opens and maps) → append / read / flush … → ``close()`` or
    ``destroy()``. After close, every operation raises :class:`StoreClosedError`.
    """

    __slots__ = ("path", "file_name", "file_size", "file_from_offset", "read_only", "mm", "append_buffer",
                 "write_buffer", "transient_pool", "wrote_position", "flushed_position", "store_timestamp",
                 "committed_store_timestamp",
                 "first_create_in_queue", "_committed", "_fd", "_closed")

    def __init__(self, path: str, file_size: int, *, read_only: bool = False, create: bool = True,
                 transient_pool: "TransientStorePool | None" = None):
        self.path = path
        self.file_name = os.path.basename(path)
        self.file_size = file_size
        self.file_from_offset = int(self.file_name) if _SEGMENT_NAME.match(self.file_name) else 0
        self.read_only = read_only
        exists = os.path.exists(path)
        if read_only or not create:
            if not exists:
                raise FileNotFoundError(path)
        if exists:
            actual = os.path.getsize(path)
            if actual != file_size:
                raise WrongFileSizeError(path, file_size, actual)
        if read_only:
            self._fd = os.open(path, os.O_RDONLY)
            self.mm = mmap.mmap(self._fd, file_size, access=mmap.ACCESS_READ)
        else:
            if exists:
                self._fd = os.open(path, os.O_RDWR)
            else:
                # created at full size under a temporary name, synced, renamed, directory synced:
                # neither a crash nor a power loss can leave a short segment behind
                self._fd = fileio.create_file(path, file_size)
            self.mm = mmap.mmap(self._fd, file_size, access=mmap.ACCESS_WRITE)
        #: the transient pool's buffer appends go to until all of it is committed (else None)
        self.write_buffer = transient_pool.borrow_buffer() if transient_pool is not None and not read_only else None
        self.transient_pool = transient_pool if self.write_buffer is not None else None
        #: where appends copy their bytes: the write buffer, or the mapping itself
        self.append_buffer = self.mm if self.write_buffer is None else self.write_buffer
        self.wrote_position = 0
        self._committed = 0  # meaningful only while there is a write buffer
        self.flushed_position = 0
        self.store_timestamp = 0  # store timestamp of the last message appended (CommitLog only)
        #: with a write buffer: the store timestamp of a message known to be committed (what a flush covers)
        self.committed_store_timestamp = 0
        self.first_create_in_queue = False  # created when its queue had no file (ConsumeQueue pre-blank rule)
        self._closed = False

    # -- positions --------------------------------------------------------------------------
    @property
    def committed_position(self) -> int:
        return self.wrote_position if self.write_buffer is None else self._committed

    @property
    def read_position(self) -> int:
        """How far readers may read (``getReadPosition``): the committed position."""
        return self.wrote_position if self.write_buffer is None else self._committed

    def set_positions(self, position: int) -> None:
        """Set wrote/committed/flushed to ``position`` (recovery, truncation)."""
        self.wrote_position = self.flushed_position = self._committed = position

    @property
    def is_full(self) -> bool:
        return self.wrote_position == self.file_size

    @property
    def remaining(self) -> int:
        return self.file_size - self.wrote_position

    @property
    def closed(self) -> bool:
        return self._closed

    # -- writing ----------------------------------------------------------------------------
    def _check_writable(self) -> None:
        if self._closed:
            raise StoreClosedError(f"{self.path} is closed")
        if self.read_only:
            raise ReadOnlyStoreError(f"{self.path} is open read-only")

    def append(self, data) -> bool:
        """Copy ``data`` at the write position; False (nothing written) if it does not fit."""
        self._check_writable()
        pos = self.wrote_position
        end = pos + len(data)
        if end > self.file_size:
            return False
        self.append_buffer[pos:end] = data
        self.wrote_position = end
        return True

    def write_at(self, pos: int, data) -> None:
        """Overwrite bytes at ``pos`` without moving positions (headers, zeroing)."""
        self._check_writable()
        self.mm[pos:pos + len(data)] = data

    def zero_from(self, pos: int) -> bool:
        """Zero bytes ``[pos, file_size)`` that are not already zero (dirty tail truncation); the
        holes of a sparse file are skipped, not read. True when something was zeroed."""
        self._check_writable()
        chunk = 1 << 20
        zeros = bytes(chunk)
        changed = False
        for start, end in fileio.data_ranges(self._fd, pos, self.file_size):
            at = start
            while at < end:
                n = min(chunk, end - at)
                if self.mm[at:at + n] != zeros[:n]:
                    self.mm[at:at + n] = zeros[:n]
                    changed = True
                at += n
        return changed

    def sync(self) -> None:
        """Make every byte of the file durable now, whatever the positions say (recovery's zeroing)."""
        self._check_writable()
        if _USE_FDATASYNC:
            fileio.sync_data(self._fd, self.path)
        else:  # pragma: no cover - non-Linux
            self.mm.flush()

    # -- committing (transient store pool) -------------------------------------------------
    def is_able_to_commit(self, least_pages: int) -> bool:
        """``MappedFile.isAbleToCommit``: the same page rule as flushing, wrote vs committed."""
        committed, write = self._committed, self.wrote_position
        if self.is_full:
            return True
        if least_pages > 0:
            return (write // OS_PAGE_SIZE) - (committed // OS_PAGE_SIZE) >= least_pages
        return write > committed

    def commit(self, least_pages: int = 0) -> int:
        """``MappedFile.commit``: write the buffer's uncommitted bytes to the file if allowed by
        ``least_pages``; give the buffer back once the whole segment is committed. Returns the
        committed position (without a write buffer: the wrote position, nothing to do)."""
        buf = self.write_buffer
        if buf is None:
            return self.wrote_position
        if self._closed:
            return self._committed
        if self.is_able_to_commit(least_pages):
            ts = self.store_timestamp  # read before the end: its message lies below that end
            start, end = self._committed, self.wrote_position
            if end > start:
                with memoryview(buf) as view:  # FileChannel.write(writeBuffer[start:end]) at start
                    _write_fully(self._fd, view[start:end], start)
                self._committed = end
                self.committed_store_timestamp = ts
        if self._committed == self.file_size:
            self._release_write_buffer()
        return self._committed

    def _release_write_buffer(self) -> None:
        buf, pool = self.write_buffer, self.transient_pool
        self.write_buffer = self.transient_pool = None
        self.append_buffer = self.mm
        if pool is not None and buf is not None:
            pool.return_buffer(buf)

    # -- flushing ---------------------------------------------------------------------------
    def is_able_to_flush(self, least_pages: int) -> bool:
        """``MappedFile.isAbleToFlush`` (up to the read position: with a write buffer, what is committed)."""
        flushed, write = self.flushed_position, self.read_position
        if self.is_full:
            return write > flushed or flushed < self.file_size
        if least_pages > 0:
            return (write // OS_PAGE_SIZE) - (flushed // OS_PAGE_SIZE) >= least_pages
        return write > flushed

    def flush(self, least_pages: int = 0) -> int:
        """Sync the dirty range if allowed by ``least_pages``; returns the flushed position."""
        if self._closed:
            return self.flushed_position
        if self.is_able_to_flush(least_pages):
            write = self.read_position
            if not self.read_only and write > self.flushed_position:
                if _USE_FDATASYNC:
                    # Linux: one page cache, so fdatasync writes the mmap's dirty pages too, and
                    # unlike mmap.flush it releases the GIL (other writers keep appending).
                    fileio.sync_data(self._fd, self.path)
                else:
                    start = self.flushed_position - self.flushed_position % mmap.PAGESIZE
                    self.mm.flush(start, write - start)
            self.flushed_position = write
        return self.flushed_position

    # -- reading ----------------------------------------------------------------------------
    def read(self, pos: int, size: int) -> bytes:
        """A copy of ``size`` bytes at ``pos`` (clipped to the file)."""
        if self._closed:
            raise StoreClosedError(f"{self.path} is closed")
        return self.mm[pos:pos + size]

    def last_modified_ms(self) -> int:
        """The file's mtime (``File.lastModified``), used by time-based lookups and retention."""
        return os.stat(self.path).st_mtime_ns // 1_000_000

    def touch(self, now_ms: int) -> None:
        """Set the file's mtime (mmap writes do not always update it promptly)."""
        if not self.read_only and not self._closed:
            os.utime(self._fd if os.utime in os.supports_fd else self.path, ns=(now_ms * 1_000_000,) * 2)

    # -- lifecycle --------------------------------------------------------------------------
    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._release_write_buffer()  # uncommitted bytes are lost, as when the process dies
        try:
            self.mm.close()
        finally:
            os.close(self._fd)

    def destroy(self) -> None:
        """Close and delete the file."""
        if self.read_only:
            raise ReadOnlyStoreError(f"{self.path} is open read-only")
        self.close()
        try:
            fileio.remove(self.path)
        except FileNotFoundError:
            pass

    def __repr__(self) -> str:
        committed = "" if self.write_buffer is None else f", committed={self._committed}"
        return (f"MappedFile({self.file_name}, size={self.file_size}, wrote={self.wrote_position}{committed}, "
                f"flushed={self.flushed_position}{', ro' if self.read_only else ''})")


def _write_fully(fd: int, data: memoryview, offset: int) -> None:
    """``pwrite`` all of ``data`` at ``offset`` (a short write continues where it stopped)."""
    while len(data):
        n = os.pwrite(fd, data, offset)
        data, offset = data[n:], offset + n


class TransientStorePool:
    """``TransientStorePool``: ``pool_size`` write buffers of one CommitLog segment each.

    RocketMQ allocates direct buffers and locks them in RAM (``mlock``) so appends never fault;
    here each buffer is an anonymous mapping (zero pages until touched; not locked). A borrowed
    buffer still holds the bytes of the segment it served before, as in Java, and ``commit``
    writes ``[committed, wrote)`` — after an end-of-file blank (8 bytes, but ``wrote`` jumps to
    the end) that range carries those old bytes into the new file. Readers stop at the blank,
    so they never see them; a 4.9.4 store written with the pool has them too.
    ``borrow_buffer`` answers None when the pool is empty (the new segment then takes appends
    directly, as a 4.9.4 ``MappedFile`` whose ``writeBuffer`` is null).

    Call order: construct (allocates) → ``borrow_buffer`` / ``return_buffer`` (any thread) → ``destroy()``.
    """

    def __init__(self, pool_size: int, file_size: int):
        if pool_size < 0 or file_size <= 0:
            raise ValueError(f"transient store pool: expected pool_size >= 0 and file_size > 0, got "
                             f"{pool_size} and {file_size}")
        self.pool_size = pool_size
        self.file_size = file_size
        self._available = collections.deque(mmap.mmap(-1, file_size) for _ in range(pool_size))
        self._lock = threading.Lock()

    def borrow_buffer(self) -> "mmap.mmap | None":
        with self._lock:
            buf = self._available.popleft() if self._available else None
            left = len(self._available)
        if left < self.pool_size * 0.4:
            _log.warning("TransientStorePool only remain %d sheets.", left)
        return buf

    def return_buffer(self, buf) -> None:
        with self._lock:
            self._available.appendleft(buf)

    def available_buffer_nums(self) -> int:
        """``availableBufferNums`` (for a store without a pool, ``MessageStore`` answers 2**31 - 1)."""
        return len(self._available)

    def destroy(self) -> None:
        with self._lock:
            while self._available:
                self._available.popleft().close()


class MappedFileQueue:
    """The ordered chain of equal-sized segments of one log.

    Call order: construct → ``load()`` (existing files) → recovery sets positions
    (``set_positions_after_recovery`` / ``truncate_dirty_files``) → appends via
    ``get_last_mapped_file`` / ``find_mapped_file_by_offset`` … → ``shutdown()``.
    """

    def __init__(self, directory: str, file_size: int, *, read_only: bool = False,
                 transient_pool: TransientStorePool | None = None, fast_fail_if_no_buffer: bool = False):
        self.directory = directory
        self.file_size = file_size
        self.read_only = read_only
        #: new segments borrow a write buffer here (CommitLog with ``transientStorePoolEnable``)
        self.transient_pool = transient_pool
        #: ``fastFailIfNoBufferInStorePool``: refuse to create a segment when the pool is empty
        self.fast_fail_if_no_buffer = fast_fail_if_no_buffer
        self._commit_lock = threading.Lock()  # the commit service and an on-demand commit may race
        self.files: list[MappedFile] = []
        self.flushed_where = 0
        self.committed_where = 0
        self.store_timestamp = 0  # store timestamp covered by the last *full* flush

    # -- loading ----------------------------------------------------------------------------
    def load(self, *, repair: bool = False) -> list[str]:
        """Map every segment (sorted by name), each provisionally full (``doLoad``).

        Raises :class:`WrongFileSizeError` on the first file of the wrong size, naming it — as
        RocketMQ 4.9.4 refuses to start — unless ``repair`` and the file is what a power loss
        leaves behind: one of the *last* files of the chain, shorter than a segment and holding
        only zeros (see :func:`power_loss_tail`): nothing durable is in it. Those are deleted
        (read-only: left out of the chain). Returns one sentence per file so treated (the caller
        logs them).
        Files whose names are not 20-digit offsets are ignored (RocketMQ would fail); a
        ``*.creating`` file (a creation cut short) is deleted unless read-only.
        """
        infos = scan_segment_files(self.directory, self.file_size)
        repairs: list[str] = []
        if not self.read_only:
            for info in infos:
                if info.path.endswith(fileio.CREATING_SUFFIX):
                    fileio.remove(info.path, durable=True)
                    repairs.append(f"{info.path}: deleted (a segment creation cut short by a crash)")
        segments = [info for info in infos if info.file_from_offset is not None]
        tail = power_loss_tail(segments, self.file_size) if repair else []
        keep = segments[:len(segments) - len(tail)]
        for info in keep:
            if info.size != self.file_size:
                self.shutdown()
                raise WrongFileSizeError(info.path, self.file_size, info.size)
        for info in tail:
            what = f"{info.path}: {info.size} bytes instead of {self.file_size}"
            if self.read_only:
                repairs.append(f"{what}, holding nothing (left by a power loss): ignored")
            else:
                fileio.remove(info.path, durable=True)
                repairs.append(f"{what}, holding nothing (a file created but never synced before a power "
                               f"loss): deleted")
        for info in keep:
            mf = MappedFile(info.path, self.file_size, read_only=self.read_only, create=False)
            mf.set_positions(self.file_size)
            self.files.append(mf)
        return repairs

    # -- lookup -----------------------------------------------------------------------------
    @property
    def first(self) -> MappedFile | None:
        return self.files[0] if self.files else None

    @property
    def last(self) -> MappedFile | None:
        return self.files[-1] if self.files else None

    def get_last_mapped_file(self, start_offset: int = 0, need_create: bool = True) -> MappedFile | None:
        """The last file; creates one when there is none or it is full (``getLastMappedFile``).
        None when a new file is needed but the transient pool is empty and ``fast_fail_if_no_buffer``
        (4.9.4's allocate service then creates nothing); an ``OSError`` if creating it fails."""
        last = self.files[-1] if self.files else None
        if last is not None and not last.is_full:
            return last
        if not need_create:
            return last
        if self.read_only:
            raise ReadOnlyStoreError(f"{self.directory} is open read-only")
        if last is None:
            create_offset = start_offset - start_offset % self.file_size
        else:
            create_offset = last.file_from_offset + self.file_size
        pool = self.transient_pool
        if pool is not None and self.fast_fail_if_no_buffer and pool.available_buffer_nums() == 0:
            return None
        mf = MappedFile(os.path.join(self.directory, offset_to_file_name(create_offset)), self.file_size,
                        transient_pool=pool)
        mf.first_create_in_queue = not self.files
        self.files.append(mf)
        return mf

    def find_mapped_file_by_offset(self, offset: int, return_first_on_not_found: bool = False) -> MappedFile | None:
        """The file with ``file_from_offset <= offset < file_from_offset + file_size``."""
        files = self.files
        if not files:
            return None
        first = files[0]
        if first.file_from_offset <= offset < files[-1].file_from_offset + self.file_size:
            index = offset // self.file_size - first.file_from_offset // self.file_size
            if 0 <= index < len(files):
                mf = files[index]
                if mf.file_from_offset <= offset < mf.file_from_offset + self.file_size:
                    return mf
            for mf in files:
                if mf.file_from_offset <= offset < mf.file_from_offset + self.file_size:
                    return mf
        return first if return_first_on_not_found else None

    def get_mapped_file_by_time(self, timestamp: int) -> MappedFile | None:
        """``getMappedFileByTime``: the first file modified at or after ``timestamp``, else the last."""
        for mf in self.files:
            if mf.last_modified_ms() >= timestamp:
                return mf
        return self.files[-1] if self.files else None

    @property
    def min_offset(self) -> int:
        """Start of the first file, or -1 when empty."""
        return self.files[0].file_from_offset if self.files else -1

    @property
    def max_offset(self) -> int:
        """End of readable data (``getMaxOffset``)."""
        last = self.last
        return last.file_from_offset + last.read_position if last else 0

    @property
    def max_wrote_position(self) -> int:
        last = self.last
        return last.file_from_offset + last.wrote_position if last else 0

    def remain_how_many_data_to_commit(self) -> int:
        return self.max_wrote_position - self.committed_where

    def remain_how_many_data_to_flush(self) -> int:
        return self.max_offset - self.flushed_where

    def roll_next_file(self, offset: int) -> int:
        return offset + self.file_size - offset % self.file_size

    def read(self, offset: int, size: int) -> bytes | None:
        """Bytes ``[offset, offset+size)`` if they lie in one file's readable region."""
        mf = self.find_mapped_file_by_offset(offset)
        if mf is None:
            return None
        pos = offset - mf.file_from_offset
        if pos + size > mf.read_position:
            return None
        try:
            return mf.read(pos, size)
        except (StoreClosedError, ValueError):  # ValueError: "mmap closed or invalid"
            if mf.closed:  # retention deleted the file after the lookup: gone, as a Java reader gets null
                return None
            raise

    # -- committing and flushing -------------------------------------------------------------
    def commit(self, least_pages: int = 0) -> bool:
        """Commit the file holding ``committed_where`` (``MappedFileQueue.commit``); True when
        nothing was committed. One file per call: after a roll, the next call goes on."""
        with self._commit_lock:
            mf = self.find_mapped_file_by_offset(self.committed_where, self.committed_where == 0)
            if mf is None:
                return True
            where = mf.file_from_offset + mf.commit(least_pages)
            nothing = where == self.committed_where
            self.committed_where = where
            return nothing

    def commit_all(self) -> None:
        """Commit until every appended byte is in the files (shutdown, on-demand commits)."""
        for _ in range(len(self.files) + 1):
            if self.committed_where >= self.max_wrote_position:
                break
            self.commit(0)

    def flush(self, least_pages: int = 0) -> bool:
        """Flush the file holding ``flushed_where``; True when nothing was flushed (like RocketMQ)."""
        mf = self.find_mapped_file_by_offset(self.flushed_where, self.flushed_where == 0)
        if mf is None:
            return True
        # the newest message the flush covers: with a write buffer, a committed one (4.9.4 takes the
        # newest appended, which may still be in the buffer: its checkpoint can run ahead of the file)
        ts = mf.store_timestamp if mf.write_buffer is None else mf.committed_store_timestamp
        where = mf.file_from_offset + mf.flush(least_pages)
        nothing = where == self.flushed_where
        self.flushed_where = where
        self.committed_where = max(self.committed_where, where)
        if least_pages == 0:
            self.store_timestamp = ts
        return nothing

    def flush_all(self) -> None:
        """Flush until everything readable (committed) is on disk (shutdown, SYNC flush)."""
        for _ in range(len(self.files) + 1):
            self.flush(0)
            if self.flushed_where >= self.max_offset:
                break

    # -- truncation and deletion ------------------------------------------------------------
    def truncate_dirty_files(self, offset: int) -> None:
        """``truncateDirtyFiles``: positions of the file holding ``offset`` set to it, later files deleted.

        pymq-ref also zeroes the dirty bytes after ``offset`` in that file, so that the
        "zeros end the data" rule holds for every later reader (RocketMQ leaves them and
        overwrites them with the next appends; its ``truncateDirtyLogicFiles`` can then revive a
        stale ConsumeQueue unit behind the appended ones — tests/data/rocketmq-4.9.4-recovery,
        ``random_1``). The zeroing and the deletions are made durable at once: bytes cut off by
        a recovery must not come back after a later power loss as if they were data.
        """
        keep = []
        deleted = False
        for mf in self.files:
            tail = mf.file_from_offset + self.file_size
            if tail > offset:
                if offset >= mf.file_from_offset:
                    pos = offset % self.file_size
                    mf.set_positions(pos)
                    if not self.read_only and mf.zero_from(pos):
                        mf.sync()
                    keep.append(mf)
                else:
                    if not self.read_only:
                        mf.destroy()
                        deleted = True
                    else:
                        mf.close()
            else:
                keep.append(mf)
        if deleted:
            fileio.sync_dir(self.directory)
        self.files = keep
        self.flushed_where = min(self.flushed_where, offset)
        self.committed_where = min(self.committed_where, offset)

    def set_flushed_where(self, offset: int) -> None:
        self.flushed_where = self.committed_where = offset

    def delete_last_file(self) -> None:
        """Delete the last file, durably (read-only: only forget it). The flush and commit
        positions come back to its start at the latest: a file created again there is new."""
        if self.files:
            mf = self.files.pop()
            self.flushed_where = min(self.flushed_where, mf.file_from_offset)
            self.committed_where = min(self.committed_where, mf.file_from_offset)
            if self.read_only:
                mf.close()
            else:
                mf.destroy()
                fileio.sync_dir(self.directory)

    def delete_expired_file_by_time(self, expired_ms: int, now_ms: int, clean_immediately: bool = False,
                                    max_batch: int = DELETE_FILES_BATCH_MAX) -> int:
        """``deleteExpiredFileByTime``: delete leading files (never the last) with
        ``last_modified + expired_ms <= now``; stop at the first one that is not expired."""
        deleted = 0
        while len(self.files) > 1 and deleted < max_batch:
            mf = self.files[0]
            if now_ms >= mf.last_modified_ms() + expired_ms or clean_immediately:
                self.files.pop(0).destroy()
                deleted += 1
            else:
                break
        return deleted

    def delete_expired_file_by_offset(self, offset: int, unit_size: int) -> int:
        """``deleteExpiredFileByOffset`` (ConsumeQueues): delete leading files (never the last)
        whose last unit points below CommitLog offset ``offset``."""
        deleted = 0
        while len(self.files) > 1:
            mf = self.files[0]
            last_unit_phy = int.from_bytes(mf.read(self.file_size - unit_size, 8), "big", signed=True)
            if last_unit_phy < offset:
                self.files.pop(0).destroy()
                deleted += 1
            else:
                break
        return deleted

    def destroy(self) -> None:
        """Delete every file (and the directory if it ends up empty); read-only: only forget them."""
        if self.read_only:
            self.shutdown()
            self.files = []
            return
        for mf in self.files:
            mf.destroy()
        self.files = []
        self.flushed_where = self.committed_where = 0
        try:
            fileio.current.rmdir(self.directory)
        except OSError:
            pass

    def shutdown(self) -> None:
        for mf in self.files:
            mf.close()

    def __iter__(self) -> Iterable[MappedFile]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)
