"""MessageStore: the store facade (``DefaultMessageStore``) over CommitLog, ConsumeQueues, IndexFiles.

Legal call order::

    store = MessageStore(config, clock)      # nothing touched yet
    store.load()                             # map files, recover (normal or abnormal)
    store.start()                            # lock file, abort file, reput catch-up, threads
    store.put_message(...) / get_message(...) / query_message(...) ...   # any order, any thread
    await store.async_put_message(...)       # the same put, from a task on an asyncio loop
    store.shutdown()                         # flush, checkpoint, delete abort, unlock

``MessageStore.open(config, clock, ...)`` does ``load()`` + ``start()`` (read-only: ``load()`` only);
the store is also a context manager that shuts down on exit. Calls after ``shutdown()`` raise
:class:`~pymq_ref.store.errors.StoreClosedError` (puts answer SERVICE_NOT_AVAILABLE).

Two ways to run:

* ``threads=False`` (default, deterministic): no background thread. Each put dispatches inline
  (ConsumeQueue + index built under the put lock from the put's own data), SYNC_FLUSH flushes
  inline, ASYNC_FLUSH flushes only when :meth:`flush` or :meth:`shutdown` is called. With a
  :class:`~pymq_ref.store.clock.ManualClock` every run writes the same bytes.
* ``threads=True``: like the broker — a reput thread reads the CommitLog back and dispatches, a
  flush thread (ASYNC) or a group-commit thread (SYNC), a ConsumeQueue flush thread, and the
  retention threads (:mod:`pymq_ref.store.clean_service`; the deterministic mode runs a retention
  round only when told: ``clean_service.run_once(now_ms)``).
  ``inline_dispatch=True`` keeps dispatch on the put path while flushing in the background.

With ``transient_store_pool_enable`` (ASYNC_FLUSH, not a SLAVE) appends go to a write buffer and
become readable only once committed (:class:`~pymq_ref.store.mapped_file.TransientStorePool`):
dispatch then always follows the commit — ``CommitRealTimeService`` and the reput thread with
threads, :meth:`MessageStore.commit` (or ``flush``/``shutdown``) in the deterministic mode.

``read_only=True`` opens any store directory (ours or a real RocketMQ one) for inspection:
nothing is created, locked, truncated or deleted; recovery only computes where valid data ends.
"""

from __future__ import annotations

import dataclasses

import enum
import itertools
import fcntl
import logging
import os
import threading
from dataclasses import dataclass, field
from typing import Callable

from pymq_ref.formats.consume_queue import EXT_MAX_ADDR
from pymq_ref.formats.hashing import java_string_hash
from pymq_ref.formats.message import MessageRecord, decode_record
from pymq_ref.formats.msgid import parse_offset_msg_id
from pymq_ref.formats.properties import DELAY, decode_properties
from pymq_ref.store import fileio, recovery
from pymq_ref.store.checkpoint import StoreCheckpoint
from pymq_ref.store.clock import Clock, SystemClock
from pymq_ref.store.commit_log import (CommitLog, PutMessageResult, PutMessageStatus, encode_batch_for_append,
                                       encode_for_append)
from pymq_ref.store.consume_queue import ConsumeQueue
from pymq_ref.store.consume_queue_ext import ConsumeQueueExt, store_path_consume_queue_ext
from pymq_ref.store.delay import transform_delay_level
from pymq_ref.store.dispatch import (BuildConsumeQueue, BuildIndex, DispatchRequest,
                                    check_message_and_return_size)
from pymq_ref.store.errors import (CreateMappedFileError, MessageIllegalError, PropertiesSizeExceededError,
                                   StoreClosedError, StoreLockedError)
from pymq_ref.store.flush import (CommitRealTimeService, FlushConsumeQueueService, FlushRealTimeService,
                                  GroupCommitService)
from pymq_ref.store.mapped_file import TransientStorePool
from pymq_ref.store.index import IndexService
from pymq_ref.store.clean_service import CleanFilesService, RetentionOptions
from pymq_ref.store.retention import RunningFlags, disk_util
from pymq_ref.store.store_config import BrokerRole, FlushDiskType, MessageStoreConfig
from pymq_ref.errors import FormatError


class GetMessageStatus(enum.Enum):
    FOUND = "FOUND"
    NO_MATCHED_MESSAGE = "NO_MATCHED_MESSAGE"
    MESSAGE_WAS_REMOVING = "MESSAGE_WAS_REMOVING"
    OFFSET_FOUND_NULL = "OFFSET_FOUND_NULL"
    OFFSET_OVERFLOW_BADLY = "OFFSET_OVERFLOW_BADLY"
    OFFSET_OVERFLOW_ONE = "OFFSET_OVERFLOW_ONE"
    OFFSET_TOO_SMALL = "OFFSET_TOO_SMALL"
    NO_MATCHED_LOGIC_QUEUE = "NO_MATCHED_LOGIC_QUEUE"  # never answered: 4.9.4 creates every queue it looks up
    NO_MESSAGE_IN_QUEUE = "NO_MESSAGE_IN_QUEUE"


class TagFilter:
    """Tag subscription as ``ExpressionMessageFilter`` applies it to ConsumeQueue units:
    ``"*"`` (or empty) matches all, otherwise ``(int) tagsCode`` must be in the hash set of the
    ``||``-separated tags. Hash collisions pass (clients re-check the tag string)."""

    def __init__(self, expression: str | None = "*"):
        self.expression = (expression or "*").strip()
        self.match_all = self.expression in ("", "*")
        self.tags = [t.strip() for t in self.expression.split("||") if t.strip()] if not self.match_all else []
        self.code_set = {java_string_hash(t) for t in self.tags}

    def is_matched_by_consume_queue(self, tags_code: int | None) -> bool:
        if tags_code is None or self.match_all:
            return True
        low = tags_code & 0xFFFFFFFF
        return (low - (1 << 32) if low & 0x80000000 else low) in self.code_set


@dataclass
class GetMessageResult:
    status: GetMessageStatus
    next_begin_offset: int
    min_offset: int
    max_offset: int
    buffers: list[bytes] = field(default_factory=list)
    phy_offsets: list[int] = field(default_factory=list)
    #: ``suggestPullingFromSlave``: the last unit read is further behind than memory holds
    suggest_pulling_from_slave: bool = False

    @property
    def message_count(self) -> int:
        return len(self.buffers)

    @property
    def buffer_total_size(self) -> int:
        return sum(map(len, self.buffers))

    def records(self) -> list[MessageRecord]:
        return [decode_record(b, 0, base=o, with_spans=False) for b, o in zip(self.buffers, self.phy_offsets)]


@dataclass
class QueryMessageResult:
    messages: list[MessageRecord]
    index_last_update_timestamp: int = 0
    index_last_update_phyoffset: int = 0


def _record_properties(data: bytes) -> dict[str, str]:
    try:
        return decode_record(data, 0, with_spans=False).properties
    except FormatError:
        return {}


_log = logging.getLogger(__name__)
_PUT_OK = PutMessageStatus.PUT_OK
_INT_MAX = 2**31 - 1
_LOCKED_DIRS: set[str] = set()
_LOCKED_DIRS_GUARD = threading.Lock()


class MessageStore:
    def __init__(self, config: MessageStoreConfig | None = None, clock: Clock | None = None, *,
                 read_only: bool = False, threads: bool = False, inline_dispatch: bool | None = None,
                 retention: RetentionOptions | None = None):
        self.config = config or MessageStoreConfig()
        self.clock = clock or SystemClock()
        self.read_only = read_only
        self.threads = threads
        self.inline_dispatch = (not threads) if inline_dispatch is None else inline_dispatch
        if read_only:
            self.inline_dispatch = False
        c = self.config
        self.root = c.store_path_root_dir
        self.delay_table = c.delay_level_table
        #: ``TransientStorePool`` when ``transientStorePoolEnable`` is in effect (ASYNC_FLUSH, not a
        #: SLAVE): appends then become readable only when committed, so dispatch follows the
        #: commit (reput), never the put
        self.transient_pool = (TransientStorePool(c.transient_store_pool_size, c.mapped_file_size_commit_log)
                               if c.is_transient_store_pool_enable() and not read_only else None)
        if self.transient_pool is not None:
            self.inline_dispatch = False
        self.commit_log = CommitLog(c.store_path_commit_log_dir, c.mapped_file_size_commit_log, self.clock,
                                    read_only=read_only, delay_table=self.delay_table,
                                    max_message_size=c.max_message_size,
                                    inline_dispatch=self._dispatch_many if self.inline_dispatch else None,
                                    transient_pool=self.transient_pool,
                                    fast_fail_if_no_buffer=c.fast_fail_if_no_buffer_in_store_pool)
        self.consume_queue_table: dict[str, dict[int, ConsumeQueue]] = {}
        self.checkpoint: StoreCheckpoint | None = None
        self.index_service = IndexService(os.path.join(self.root, "index"), c.max_hash_slot_num, c.max_index_num,
                                          self.clock, time_zone=c.index_file_time_zone, read_only=read_only,
                                          max_msgs_num_batch=c.max_msgs_num_batch,
                                          on_file_full=self._on_index_file_full)
        #: ``MessageArrivingListener``: called with each live-dispatched DispatchRequest (after the
        #: dispatchers ran; under the put lock in the inline mode — do not put from it). The
        #: broker's long polling hooks in here.
        self.message_arriving_listener: Callable[[DispatchRequest], None] | None = None
        self.dispatchers = [BuildConsumeQueue(self.find_consume_queue, self._on_cq_unit_written),
                            BuildIndex(self.index_service, c.message_index_enable)]
        self.reput_from_offset = 0
        #: store timestamp of the last ConsumeQueue unit written (the checkpoint's logics timestamp once flushed)
        self._logics_live = 0
        #: what :meth:`load` rebuilt of a power loss's leftovers, one sentence per file
        self.power_loss_repairs: list[str] = []
        self.last_exit_ok = True
        self.recovered_offset = 0
        self._state = "new"
        self._lock_fd: int | None = None
        self._reput_lock = threading.Lock()
        self._services: list = []
        self._reput_thread: threading.Thread | None = None
        self._reput_stop = threading.Event()
        self.group_commit: GroupCommitService | None = None
        self.commit_service: CommitRealTimeService | None = None
        #: what an ASYNC put (or a SYNC put with WAIT=false) wakes: the group commit or the commit service
        self._wake_on_put: Callable[[], None] | None = None
        # read on every put (cheaper than looking the enum member up each time)
        self._sync_flush = c.flush_disk_type is FlushDiskType.SYNC_FLUSH
        #: ``RunningFlags`` (DISK_FULL is set by retention); ``_writeable`` caches ``is_writeable()`` for puts
        self.running_flags = RunningFlags(on_change=self._on_running_flags_changed)
        self._writeable = True
        #: retention (``cleanFilesPeriodically`` + the disk check), see :mod:`pymq_ref.store.clean_service`
        self.clean_service = CleanFilesService(self, retention)

    # -- paths ------------------------------------------------------------------------------
    @property
    def abort_path(self) -> str:
        return os.path.join(self.root, "abort")

    @property
    def consume_queue_dir(self) -> str:
        return os.path.join(self.root, "consumequeue")

    # -- lifecycle --------------------------------------------------------------------------
    @classmethod
    def open(cls, config: MessageStoreConfig | str, clock: Clock | None = None, **kwargs) -> "MessageStore":
        """Load (and, unless read-only, start) the store at ``config`` (a config or a root dir)."""
        if isinstance(config, str):
            config = MessageStoreConfig(store_path_root_dir=config)
        store = cls(config, clock, **kwargs)
        store.load()
        if not store.read_only:
            store.start()
        return store

    def __enter__(self) -> "MessageStore":
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()

    def load(self) -> None:
        """Map every file and recover (``DefaultMessageStore.load``). Raises WrongFileSizeError for a bad segment.

        Unless ``strict_load``, what a power loss leaves behind (the short last files of a chain,
        a short checkpoint, a cut-short file creation) is rebuilt first, one log line per file
        (also in :attr:`power_loss_repairs`), and the recovery is then an abnormal one."""
        if self._state != "new":
            raise StoreClosedError(f"load() called in state {self._state}")
        if not self.read_only:
            fileio.makedirs(self.root)
            self._acquire_lock()
        self.last_exit_ok = not os.path.exists(self.abort_path)
        repair = not self.config.strict_load
        try:
            repairs = self.commit_log.load(repair=repair)
            repairs += self._load_consume_queues(repair)
            self.checkpoint = StoreCheckpoint(os.path.join(self.root, "checkpoint"), read_only=self.read_only)
            repairs += self.checkpoint.repairs
            if repair:
                repairs += self.index_service.repair_power_loss()
            for line in repairs:
                if line not in self.checkpoint.repairs:  # (logged where it was made)
                    _log.warning("power-loss repair: %s", line)
            self.power_loss_repairs = repairs
            if repairs and repair and self.last_exit_ok and not self.read_only:
                _log.warning("power-loss repair: %s: the last run did not end cleanly: recovering abnormally",
                             self.root)
                self.last_exit_ok = False
            self.index_service.load(self.last_exit_ok, self.checkpoint.index_msg_timestamp, drop_empty=repair)
            self._recover()
        except BaseException:
            self._close_files()
            self._release_lock()
            raise
        self._state = "loaded"

    def _acquire_lock(self) -> None:
        """The ``lock`` file: 4 bytes ``lock`` and an exclusive OS lock on byte 0 (as RocketMQ)."""
        path = os.path.realpath(os.path.join(self.root, "lock"))
        with _LOCKED_DIRS_GUARD:
            if path in _LOCKED_DIRS:
                raise StoreLockedError(f"{path}: the store is already open in this process")
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
            except OSError:
                os.close(fd)
                raise StoreLockedError(f"{path}: lock failed, the store is already in use by another process") from None
            os.pwrite(fd, b"lock", 0)
            os.fsync(fd)
            _LOCKED_DIRS.add(path)
            self._lock_fd = fd
            self._lock_path = path

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            with _LOCKED_DIRS_GUARD:
                _LOCKED_DIRS.discard(self._lock_path)
                os.close(self._lock_fd)  # closing releases the lockf lock
                self._lock_fd = None

    def _load_consume_queues(self, repair: bool = False) -> list[str]:
        root = self.consume_queue_dir
        repairs: list[str] = []
        if not os.path.isdir(root):
            return repairs
        for topic in sorted(os.listdir(root)):
            tdir = os.path.join(root, topic)
            if not os.path.isdir(tdir):
                continue
            for qdir in sorted(os.listdir(tdir)):
                if not qdir.lstrip("-").isdigit():
                    continue
                cq = self._new_consume_queue(topic, int(qdir))
                self.consume_queue_table.setdefault(topic, {})[int(qdir)] = cq
                repairs += cq.load(repair=repair)
        return repairs

    def _all_cqs(self) -> list[ConsumeQueue]:
        return [cq for qs in self.consume_queue_table.values() for cq in qs.values()]

    def _recover(self) -> None:
        c = self.config
        strict = c.strict_load
        cqs = self._all_cqs()
        for cq in cqs:
            cq.recover(step_back=not strict)
        max_phy_cq = max((cq.max_physic_offset for cq in cqs), default=-1)
        if self.last_exit_ok or self.read_only:
            self.recovered_offset = recovery.recover_normally(
                self.commit_log, cqs, check_crc=c.check_crc_on_recover, delay_table=self.delay_table,
                max_phy_offset_of_cq=max_phy_cq, reject_torn=not strict)
        else:
            # No delay table: 4.9.4's load() recovers before ScheduleMessageService parses its delay
            # levels (maxDelayLevel is still 0), so the SCHEDULE_TOPIC_XXXX units this recovery
            # dispatches carry the TAGS hash, not the delivery time (the schedule service then
            # delivers those messages at once). Reput after start() uses the table again.
            # pymq-ref's default: start early enough that every index entry is rebuilt, i.e. as
            # messageIndexSafe does and at the latest where the last index file kept ends
            index_end = None
            if not strict and c.message_index_enable:
                files = self.index_service.files
                index_end = files[-1].end_phy_offset if files else 0
            self.recovered_offset = recovery.recover_abnormally(
                self.commit_log, cqs, self.checkpoint, self._dispatch, check_crc=c.check_crc_on_recover,
                delay_table={}, max_phy_offset_of_cq=max_phy_cq,
                message_index_enable=c.message_index_enable,
                message_index_safe=c.message_index_safe or not strict, start_at_most=index_end,
                rebuild_units=not strict, reject_torn=not strict)
        if not strict and not self.read_only:
            if c.message_index_enable:
                self._drop_index_beyond(self.recovered_offset)
            if not self.last_exit_ok:
                self._settle_checkpoint()
        self.recover_topic_queue_table()

    def _settle_checkpoint(self) -> None:
        """pymq-ref: after recovery no checkpoint timestamp is after the newest message kept (a
        power loss under ASYNC_FLUSH can take messages the ConsumeQueues or a full index file had
        already been synced with), and after an abnormal recovery what it rebuilt is synced
        before the checkpoint says so; otherwise a second power loss could start the next
        recovery too late."""
        cp = self.checkpoint
        newest = recovery.last_store_timestamp(self.commit_log, self.recovered_offset)
        for cq in self._all_cqs():
            for _ in range(len(cq.queue.files) + 1):
                if cq.flush(0):
                    break
        self.index_service.flush()
        full = [f for f in self.index_service.files if f.is_write_full]
        cp.physic_msg_timestamp = cp.logics_msg_timestamp = newest
        cp.index_msg_timestamp = min(cp.index_msg_timestamp, full[-1].end_timestamp if full else 0, newest)
        cp.flush()

    def _drop_index_beyond(self, end: int) -> None:
        """pymq-ref: index entries must not point past the recovered CommitLog end, and none below
        it may be missing. An index file is synced when it fills, whatever the CommitLog's flush has
        reached, so under ASYNC_FLUSH a power loss can keep entries of records it lost (4.9.4 keeps
        them: its queries then answer offsets that hold no message); and a second power loss during
        this repair can keep a later file whose deletion was not yet durable while the rebuilt one
        is lost. So the first file that ends at or past ``end`` and every file after it are
        deleted, and the entries after the last record the kept files index are rebuilt from the
        CommitLog (that record's own keys too, when the last kept file filled up in its middle)."""
        service = self.index_service
        first = next((i for i, f in enumerate(service.files) if f.end_phy_offset >= end), None)
        if first is None:
            return
        doomed = service.files[first:]
        last_kept = next((f for f in reversed(service.files[:first]) if f.index_count > 1), None)
        with service.lock:
            del service.files[first:]
            for f in doomed:
                f.destroy()
        fileio.sync_dir(service.directory)
        start = last_kept.end_phy_offset if last_kept is not None else self.commit_log.min_offset
        _log.warning("recovery: %s: %d index file(s) pointed past the recovered CommitLog end %d: "
                     "deleted, their entries from offset %d rebuilt", service.directory, len(doomed), end, start)
        for req in recovery.requests_between(self.commit_log, start, end):
            if last_kept is not None and req.commit_log_offset == start:
                req = _keys_missing_from(last_kept, req)
            service.build_index(req)

    def recover_topic_queue_table(self) -> None:
        table = {}
        min_phy = self.commit_log.min_offset
        for cq in self._all_cqs():
            table[f"{cq.topic}-{cq.queue_id}"] = cq.max_offset_in_queue
            cq.correct_min_offset(min_phy)
        self.commit_log.topic_queue_table = table

    def start(self) -> None:
        """Create ``abort``, catch the derived files up with the CommitLog, start threads."""
        if self._state != "loaded":
            raise StoreClosedError(f"start() called in state {self._state}")
        if self.read_only:
            raise StoreClosedError("a read-only store is not started")
        c = self.config
        fileio.create_empty(self.abort_path)  # durable: a power loss must not make the next start look clean
        max_phy = max((cq.max_physic_offset for cq in self._all_cqs()), default=0)
        self.reput_from_offset = max(max_phy, self.commit_log.min_offset, 0)
        self.do_reput()
        self.recover_topic_queue_table()
        if self.threads:
            on_flushed = self._on_commit_log_flushed
            if c.flush_disk_type is FlushDiskType.SYNC_FLUSH:
                self.group_commit = GroupCommitService(self.commit_log, on_flushed)
                self._services.append(self.group_commit)
                self._wake_on_put = self.group_commit.wakeup
            else:
                if self.transient_pool is not None:  # stopped before the flush service, as in CommitLog.shutdown
                    self.commit_service = CommitRealTimeService(
                        self.commit_log, c.commit_interval_commit_log, c.commit_commit_log_least_pages,
                        c.commit_commit_log_thorough_interval)
                    self._services.append(self.commit_service)
                    self._wake_on_put = self.commit_service.wakeup
                self._services.append(FlushRealTimeService(
                    self.commit_log, c.flush_interval_commit_log, c.flush_commit_log_least_pages,
                    c.flush_commit_log_thorough_interval, on_flushed))
            self._services.append(FlushConsumeQueueService(self, c.flush_interval_consume_queue,
                                                           c.flush_consume_queue_least_pages,
                                                           c.flush_consume_queue_thorough_interval))
            self._services.insert(0, self.clean_service)  # first to stop at shutdown
            for s in self._services:
                s.start()
            if not self.inline_dispatch:
                self._reput_thread = threading.Thread(target=self._reput_loop, name="ReputMessageService",
                                                      daemon=True)
                self._reput_thread.start()
        self._state = "running"

    def shutdown(self) -> None:
        """Stop threads, flush everything, write the checkpoint, delete ``abort``, unlock."""
        if self._state in ("shutdown", "new"):
            self._state = "shutdown"
            return
        running = self._state == "running"
        self._state = "shutdown"
        if self._reput_thread is not None:
            self._reput_stop.set()
            self._reput_thread.join(timeout=10)
        for s in self._services:
            s.shutdown()
        if running:
            self._commit_all()
            self.do_reput()
            self.flush()
            # RocketMQ keeps the abort file (next start recovers abnormally) when not writeable
            if self.running_flags.is_writeable() and self.dispatch_behind_bytes() == 0:
                try:
                    fileio.remove(self.abort_path, durable=True)
                except FileNotFoundError:
                    pass
        self._close_files()
        if self.transient_pool is not None:
            self.transient_pool.destroy()
        self._release_lock()

    def _close_files(self) -> None:
        self.commit_log.shutdown()
        for cq in self._all_cqs():
            cq.shutdown()
        self.index_service.shutdown()
        if self.checkpoint is not None:
            self.checkpoint.close()

    def _check_running(self) -> None:
        if self._state != "running" and not (self.read_only and self._state == "loaded"):
            raise StoreClosedError(f"the store is {self._state}")

    # -- dispatch ---------------------------------------------------------------------------
    def _dispatch(self, req: DispatchRequest) -> None:
        for d in self.dispatchers:
            d.dispatch(req)
        if self.message_arriving_listener is not None and self._state == "running":
            self.message_arriving_listener(req)

    def _dispatch_many(self, reqs: list[DispatchRequest]) -> None:
        listener = self.message_arriving_listener
        dispatchers = self.dispatchers
        for req in reqs:
            for d in dispatchers:
                d.dispatch(req)
            if listener is not None:
                listener(req)
        self.reput_from_offset = req.commit_log_offset + req.msg_size  # the last one

    def _on_cq_unit_written(self, store_timestamp: int) -> None:
        self._logics_live = store_timestamp
        if self.config.strict_load and self.checkpoint is not None:
            # 4.9.4 sets the checkpoint's field itself, so a checkpoint written at an index roll
            # names units not yet synced
            self.checkpoint.logics_msg_timestamp = store_timestamp

    def _on_index_file_full(self, end_timestamp: int) -> None:
        if self.checkpoint is not None:
            self.checkpoint.index_msg_timestamp = end_timestamp
            self.checkpoint.flush()

    def _on_commit_log_flushed(self, store_timestamp: int) -> None:
        if self.checkpoint is not None:
            self.checkpoint.physic_msg_timestamp = store_timestamp

    def _new_consume_queue(self, topic: str, queue_id: int) -> ConsumeQueue:
        """A ConsumeQueue, with its ConsumeQueueExt in ``consumequeue_ext/`` when
        ``enableConsumeQueueExt`` (as the Java constructor does)."""
        c = self.config
        ext = None
        if c.enable_consume_queue_ext:
            ext = ConsumeQueueExt(topic, queue_id, store_path_consume_queue_ext(self.root),
                                  c.mapped_file_size_consume_queue_ext, c.bit_map_length_consume_queue_ext,
                                  read_only=self.read_only)
        return ConsumeQueue(topic, queue_id, self.consume_queue_dir, c.mapped_file_size_consume_queue_rounded,
                            read_only=self.read_only, ext=ext)

    def find_consume_queue(self, topic: str, queue_id: int, create: bool = True) -> ConsumeQueue | None:
        qs = self.consume_queue_table.get(topic)
        cq = qs.get(queue_id) if qs else None
        if cq is None and create and not self.read_only:
            cq = self._new_consume_queue(topic, queue_id)
            self.consume_queue_table.setdefault(topic, {})[queue_id] = cq
        return cq

    def clean_unused_topic(self, topics: set[str]) -> list[str]:
        """``cleanUnusedTopic``: destroy the consume queues of every topic not in ``topics`` (except
        ``SCHEDULE_TOPIC_XXXX`` and the transaction op topic) and forget their next queue offsets,
        so a topic created again starts at offset 0. The CommitLog keeps the messages. Returns the
        topics cleaned."""
        self._check_running()
        keep = {"SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRANS_OP_HALF_TOPIC"}
        cleaned = []
        with self._reput_lock:
            for topic in [t for t in self.consume_queue_table if t not in topics and t not in keep
                          and not t.startswith("%LMQ%")]:
                for cq in self.consume_queue_table.pop(topic).values():
                    cq.destroy()
                    self.commit_log.topic_queue_table.pop(f"{topic}-{cq.queue_id}", None)
                cleaned.append(topic)
        return cleaned

    def dispatch_behind_bytes(self) -> int:
        return max(0, self.commit_log.max_offset - self.reput_from_offset)

    def do_reput(self) -> int:
        """Dispatch every record between ``reput_from_offset`` and the CommitLog end; returns how many."""
        count = 0
        cl = self.commit_log
        with self._reput_lock:
            if self.reput_from_offset < cl.min_offset:
                self.reput_from_offset = cl.min_offset
            while self.reput_from_offset < cl.max_offset:
                mf = cl.queue.find_mapped_file_by_offset(self.reput_from_offset)
                if mf is None:
                    break
                base = mf.file_from_offset
                pos = self.reput_from_offset - base
                end = mf.read_position
                advanced = False
                mm = mf.mm
                while pos < end:
                    size, req, ok = check_message_and_return_size(mm, pos, False, self.delay_table)
                    if ok:
                        if size == 0:  # blank: next file
                            pos = mf.file_size
                            break
                        self._dispatch(req)
                        count += 1
                        pos += size
                        advanced = True
                    elif size > 0:
                        pos += size  # RocketMQ skips a record whose size does not add up
                    else:
                        pos = end  # master: skip the rest of this file's readable region
                        break
                new_from = base + pos
                if new_from == self.reput_from_offset and not advanced:
                    break
                self.reput_from_offset = new_from
        return count

    def _reput_loop(self) -> None:
        while not self._reput_stop.wait(0.001):
            self.do_reput()

    # -- committing and flushing -------------------------------------------------------------
    def commit(self, least_pages: int = 0) -> int:
        """``CommitRealTimeService``'s work, on demand (transient store pool): write the write
        buffers' new bytes into the CommitLog files — at least ``least_pages`` pages of the
        last file, or all of them with 0 — and, without a reput thread, dispatch what became
        readable. Returns how many bytes were committed (0 without a pool: nothing to do)."""
        self._check_running()
        if self.transient_pool is None:
            return 0
        queue = self.commit_log.queue
        before = queue.committed_where
        for _ in range(len(queue.files) + 1):
            if queue.commit(least_pages):
                break
        if self._reput_thread is None:
            self.do_reput()
        return queue.committed_where - before

    def _commit_all(self) -> None:
        if self.transient_pool is not None:
            self.commit_log.queue.commit_all()

    def remain_transient_store_buffer_nums(self) -> int:
        """``remainTransientStoreBufferNumbs``: free write buffers (2**31 - 1 without a pool)."""
        return self.transient_pool.available_buffer_nums() if self.transient_pool is not None else _INT_MAX

    def is_transient_store_pool_deficient(self) -> bool:
        """``isTransientStorePoolDeficient``: no write buffer left (the broker then rejects sends)."""
        return self.remain_transient_store_buffer_nums() == 0

    def flush(self) -> None:
        """Commit (transient pool), then flush the CommitLog, every ConsumeQueue and the index
        files, then the checkpoint."""
        cl = self.commit_log
        if cl.read_only:
            return
        if self.transient_pool is not None:
            self._commit_all()
            if self._reput_thread is None:
                self.do_reput()
        cl.queue.flush_all()
        if cl.queue.store_timestamp > 0:
            self._on_commit_log_flushed(cl.queue.store_timestamp)
        self.flush_consume_queues(0, checkpoint=False)
        self.index_service.flush()
        if self.checkpoint is not None:
            self.checkpoint.flush()

    def flush_consume_queues(self, least_pages: int, checkpoint: bool) -> None:
        """``FlushConsumeQueueService.doFlush``: flush every ConsumeQueue; the store timestamp of the
        last unit written before the flush becomes the checkpoint's logics timestamp (written to
        the file when ``checkpoint``). 4.9.4 flushes at most three files of a queue per round;
        pymq-ref's default flushes every file, since the checkpoint then names them all."""
        logics_ts = self._logics_live
        strict = self.config.strict_load
        for cq in self._all_cqs():
            for _ in range(3 if strict else len(cq.queue.files) + 1):
                if cq.flush(least_pages):
                    break
        if self.checkpoint is not None and least_pages == 0:
            if logics_ts > 0:
                self.checkpoint.logics_msg_timestamp = logics_ts
            if checkpoint:
                self.checkpoint.flush()

    # -- put --------------------------------------------------------------------------------
    def put_message(self, msg: MessageRecord, *, stored_properties: dict[str, str] | None = None) -> PutMessageResult:
        """Store one message (``asyncPutMessage`` + wait). Limits answer MESSAGE_ILLEGAL or
        PROPERTIES_SIZE_EXCEEDED with ``error`` saying which limit.

        Like ``MessageExtBrokerInner``, ``msg.properties`` is the in-memory map (it decides
        ``WAIT``) and ``msg.properties_string``, when set, is the exact text stored (and
        dispatched): the broker stores a string that differs from its map (``WAIT`` dropped on
        a plain send, ``WAIT=false`` / ``UNIQ_KEY`` added to op messages after serialising).
        ``stored_properties``, when given, must be that text's map (``decode_properties`` of it):
        a caller that built the text from a map passes it so the store need not parse the text
        again for dispatch.
        """
        enc = self._encode_put(msg, stored_properties)
        if type(enc) is PutMessageResult:
            return enc
        return self._append(enc)

    async def async_put_message(self, msg: MessageRecord, *,
                                stored_properties: dict[str, str] | None = None) -> PutMessageResult:
        """``asyncPutMessage``: :meth:`put_message` for a caller on an asyncio loop. The append
        happens at once (no ``await`` before it, so puts keep their call order); under SYNC_FLUSH
        the coroutine then waits for the group commit without blocking the loop's other tasks
        (see :meth:`GroupCommitService.flushed_async`)."""
        enc = self._encode_put(msg, stored_properties)
        if type(enc) is PutMessageResult:
            return enc
        return await self._append_async(enc)

    def put_messages(self, batch: MessageRecord) -> PutMessageResult:
        """Store a batch: ``batch.body`` is a SEND_BATCH_MESSAGE body, ``batch.properties`` the
        batch-level properties (incl. CLUSTER); topic/queue/born/store data from ``batch``."""
        enc = self._encode_batch(batch)
        if type(enc) is PutMessageResult:
            return enc
        return self._append(enc)

    async def async_put_messages(self, batch: MessageRecord) -> PutMessageResult:
        """``asyncPutMessages``: :meth:`put_messages` for a caller on an asyncio loop."""
        enc = self._encode_batch(batch)
        if type(enc) is PutMessageResult:
            return enc
        return await self._append_async(enc)

    def _encode_put(self, msg: MessageRecord, stored_properties: dict[str, str] | None = None):
        """The put's bytes (an ``EncodedPut``), or the PutMessageResult that refuses it."""
        if self._state != "running" or self.read_only:
            return PutMessageResult(PutMessageStatus.SERVICE_NOT_AVAILABLE, error=f"the store is {self._state}")
        if not self._writeable:
            return self._not_writeable_result()
        if self.commit_log.begin_time_in_lock and self.is_os_page_cache_busy():
            return self._busy_result()
        try:
            if DELAY in msg.properties:  # (transform_delay_level returns any other message as it is)
                parked = transform_delay_level(msg, self.delay_table)  # CommitLog.asyncPutMessage, before encoding
                if parked is not msg:
                    msg, stored_properties = parked, None  # a new text: the caller's map is not its map
            props_string = msg.properties_string
            enc = encode_for_append(msg, self.config.max_message_size, props_string)
            if props_string is not None:
                enc.properties = (decode_properties(props_string) if stored_properties is None else stored_properties,)
        except PropertiesSizeExceededError as e:
            return PutMessageResult(PutMessageStatus.PROPERTIES_SIZE_EXCEEDED, error=str(e))
        except (MessageIllegalError, FormatError, ValueError) as e:
            return PutMessageResult(PutMessageStatus.MESSAGE_ILLEGAL, error=str(e))
        return enc

    def _encode_batch(self, batch: MessageRecord):
        if self._state != "running" or self.read_only:
            return PutMessageResult(PutMessageStatus.SERVICE_NOT_AVAILABLE, error=f"the store is {self._state}")
        if not self._writeable:
            return self._not_writeable_result()
        if self.commit_log.begin_time_in_lock and self.is_os_page_cache_busy():
            return self._busy_result()
        try:
            return encode_batch_for_append(batch, self.config.max_message_size)
        except PropertiesSizeExceededError as e:
            return PutMessageResult(PutMessageStatus.PROPERTIES_SIZE_EXCEEDED, error=str(e))
        except (MessageIllegalError, FormatError, ValueError) as e:
            return PutMessageResult(PutMessageStatus.MESSAGE_ILLEGAL, error=str(e))

    def _append(self, enc) -> PutMessageResult:
        try:
            result = self.commit_log.append(enc)
        except MessageIllegalError as e:
            return PutMessageResult(PutMessageStatus.MESSAGE_ILLEGAL, error=str(e))
        except CreateMappedFileError as e:
            return PutMessageResult(PutMessageStatus.CREATE_MAPEDFILE_FAILED, error=str(e))
        if self._sync_flush and enc.wait_store_msg_ok:
            end = result.wrote_offset + result.wrote_bytes
            if self.group_commit is not None:
                ok = self.group_commit.flush_and_wait(end, self.config.sync_flush_timeout)
            else:
                ok = self._flush_inline(end)
            if not ok:
                return PutMessageResult(PutMessageStatus.FLUSH_DISK_TIMEOUT, result)
        elif self._wake_on_put is not None:
            self._wake_on_put()
        return PutMessageResult(_PUT_OK, result)

    async def _append_async(self, enc) -> PutMessageResult:
        try:
            result = self.commit_log.append(enc)
        except MessageIllegalError as e:
            return PutMessageResult(PutMessageStatus.MESSAGE_ILLEGAL, error=str(e))
        except CreateMappedFileError as e:
            return PutMessageResult(PutMessageStatus.CREATE_MAPEDFILE_FAILED, error=str(e))
        if self._sync_flush and enc.wait_store_msg_ok:
            end = result.wrote_offset + result.wrote_bytes
            gc = self.group_commit
            if gc is None:
                ok = self._flush_inline(end)
            elif self.commit_log.queue.flushed_where >= end:
                ok = True
            else:
                ok = await gc.flushed_async(end, self.config.sync_flush_timeout)
            if not ok:
                return PutMessageResult(PutMessageStatus.FLUSH_DISK_TIMEOUT, result)
        elif self._wake_on_put is not None:
            self._wake_on_put()
        return PutMessageResult(_PUT_OK, result)

    def _flush_inline(self, end: int) -> bool:
        """SYNC_FLUSH without a group-commit service (``threads=False``): flush now, on this thread."""
        queue = self.commit_log.queue
        with self._reput_lock:
            queue.flush_all()
            self._on_commit_log_flushed(queue.store_timestamp)
        return queue.flushed_where >= end

    # -- get --------------------------------------------------------------------------------
    def get_message(self, group: str, topic: str, queue_id: int, offset: int, max_msg_nums: int = 32,
                    tag_filter: TagFilter | str | None = None) -> GetMessageResult:
        """``DefaultMessageStore.getMessage`` (pull) with RocketMQ's statuses and next offsets."""
        self._check_running()
        if isinstance(tag_filter, str):
            tag_filter = TagFilter(tag_filter)
        by_commit_log = getattr(tag_filter, "is_matched_by_commit_log", None)
        c = self.config
        correct = self._next_offset_correction
        cq = self.find_consume_queue(topic, queue_id, create=False)
        if cq is None:
            # 4.9.4's findConsumeQueue creates the queue (in memory) for any lookup, so an unknown
            # queue reads as an empty one; nothing is created here (the store may be read-only)
            return GetMessageResult(GetMessageStatus.NO_MESSAGE_IN_QUEUE, correct(offset, 0), 0, 0)
        min_off, max_off = cq.min_offset_in_queue, cq.max_offset_in_queue
        if max_off == 0:
            return GetMessageResult(GetMessageStatus.NO_MESSAGE_IN_QUEUE, correct(offset, 0), min_off, max_off)
        if offset < min_off:
            return GetMessageResult(GetMessageStatus.OFFSET_TOO_SMALL, correct(offset, min_off), min_off, max_off)
        if offset == max_off:
            return GetMessageResult(GetMessageStatus.OFFSET_OVERFLOW_ONE, offset, min_off, max_off)
        if offset > max_off:
            return GetMessageResult(GetMessageStatus.OFFSET_OVERFLOW_BADLY, correct(offset, max_off), min_off, max_off)
        max_filter = max(16000, max_msg_nums * 20) // 20
        # getIndexBuffer hands over the file's whole readable tail, but the loop looks at no more
        # than maxFilterMessageCount units: read only those (a long backlog must not cost a pull)
        units = list(itertools.islice(cq.iter_units_from(offset), max_filter))
        if not units:
            return GetMessageResult(GetMessageStatus.OFFSET_FOUND_NULL, correct(offset, cq.roll_next_file(offset)),
                                    min_off, max_off)
        result = GetMessageResult(GetMessageStatus.NO_MATCHED_MESSAGE, offset, min_off, max_off)
        max_offset_py = self.commit_log.max_offset
        memory = self._memory_for_messages()
        next_phy_file_start = None
        phy = 0  # maxPhyOffsetPulling: the last unit looked at
        i = 0
        total = 0
        while i < len(units) and i < max_filter:
            _, phy, size, tags = units[i]
            if next_phy_file_start is not None and phy < next_phy_file_start:
                i += 1
                continue
            n = len(result.buffers)
            if n and total:  # isTheBatchFull: smaller batches for messages no longer in memory
                if max_offset_py - phy > memory:
                    full = (total + size > c.max_transfer_bytes_on_message_in_disk
                            or n > c.max_transfer_count_on_message_in_disk - 1)
                else:
                    full = (total + size > c.max_transfer_bytes_on_message_in_memory
                            or n > c.max_transfer_count_on_message_in_memory - 1)
                if max_msg_nums <= n or full:
                    break
            if tags <= EXT_MAX_ADDR:
                # an ext address: filter by the ext unit's tagsCode; an unreadable ext unit (or no ext
                # file: enableConsumeQueueExt off) makes the tagsCode "not legal": no store-side filter
                ext_unit = cq.get_ext(tags)
                tags = ext_unit.tags_code if ext_unit is not None else None
            if tag_filter is not None and not tag_filter.is_matched_by_consume_queue(tags):
                i += 1
                continue
            data = self.commit_log.get_data(phy, size)
            if data is None:
                if not result.buffers:
                    result.status = GetMessageStatus.MESSAGE_WAS_REMOVING
                next_phy_file_start = self.commit_log.roll_next_file(phy)
                i += 1
                continue
            if by_commit_log is not None and not by_commit_log(_record_properties(data)):
                i += 1  # isMatchedByCommitLog (SQL92 on the stored properties)
                continue
            result.buffers.append(data)
            result.phy_offsets.append(phy)
            total += size
            result.status = GetMessageStatus.FOUND
            next_phy_file_start = None
            i += 1
        result.next_begin_offset = offset + i
        result.suggest_pulling_from_slave = max_offset_py - phy > memory
        return result

    def _next_offset_correction(self, old_offset: int, new_offset: int) -> int:
        """``nextOffsetCorrection``: a SLAVE keeps the requested offset unless offsetCheckInSlave."""
        c = self.config
        return new_offset if c.broker_role is not BrokerRole.SLAVE or c.offset_check_in_slave else old_offset

    def _memory_for_messages(self) -> int:
        """How far behind the CommitLog's end a message may be and still count as in memory
        (``TOTAL_PHYSICAL_MEMORY_SIZE * accessMessageInMemoryMaxRatio / 100``)."""
        c = self.config
        return int(c.total_physical_memory_size * (c.access_message_in_memory_max_ratio / 100.0))

    def check_in_disk_by_consume_offset(self, topic: str, queue_id: int, consume_offset: int) -> bool:
        """``checkInDiskByConsumeOffset``: whether the message at ``consume_offset`` is no longer
        in memory (False when there is no such unit)."""
        cq = self.find_consume_queue(topic, queue_id, create=False)
        unit = cq.get_unit(consume_offset) if cq is not None else None
        if unit is None:
            return False
        return self.commit_log.max_offset - unit.phy_offset > self._memory_for_messages()

    def look_message_by_offset(self, commit_log_offset: int, size: int | None = None) -> MessageRecord | None:
        self._check_running()
        try:
            rec = self.commit_log.look_message_by_offset(commit_log_offset, size)
        except FormatError:
            return None
        return rec if isinstance(rec, MessageRecord) else None

    def view_message(self, offset_msg_id: str) -> MessageRecord | None:
        """Look a message up by its offset msg id (store host + physical offset)."""
        _host, offset = parse_offset_msg_id(offset_msg_id)
        return self.look_message_by_offset(offset)

    def query_message(self, topic: str, key: str, max_num: int = 32, begin: int = 0,
                      end: int = 2**63 - 1) -> QueryMessageResult:
        """``queryMessage`` by key (UNIQ_KEY or a KEYS token) in ``[begin, end]`` store time.

        Unlike 4.9.4 (which leaves it to clients) every candidate is re-read from the CommitLog
        and kept only if its topic and key really match, so hash collisions never leak.
        """
        self._check_running()
        out: dict[int, MessageRecord] = {}
        last_ts, last_phy = 0, 0
        last_query_time = end
        for _ in range(3):
            offsets, ts, phy = self.index_service.query_offset(topic, key, max_num, begin, last_query_time)
            if not offsets:
                break
            offsets.sort()
            last_ts, last_phy = ts, phy
            found = False
            for m, off in enumerate(offsets):
                rec = self.look_message_by_offset(off)
                if rec is None:
                    continue
                if m == 0:
                    last_query_time = rec.store_timestamp
                if rec.topic == topic and (rec.uniq_key == key or key in rec.keys):
                    out[off] = rec
                    found = True
            if found or last_query_time < begin:
                break
        return QueryMessageResult([out[o] for o in sorted(out)][:max_num], last_ts, last_phy)

    # -- offsets ----------------------------------------------------------------------------
    def get_max_offset_in_queue(self, topic: str, queue_id: int) -> int:
        cq = self.find_consume_queue(topic, queue_id, create=False)
        return cq.max_offset_in_queue if cq else 0

    def get_min_offset_in_queue(self, topic: str, queue_id: int) -> int:
        """0 for a queue never written (4.9.4 creates it empty on lookup)."""
        cq = self.find_consume_queue(topic, queue_id, create=False)
        return cq.min_offset_in_queue if cq else 0

    def get_min_phy_offset(self) -> int:
        return self.commit_log.min_offset

    def get_max_phy_offset(self) -> int:
        return self.commit_log.max_offset

    def get_commit_log_offset_in_queue(self, topic: str, queue_id: int, cq_offset: int) -> int:
        cq = self.find_consume_queue(topic, queue_id, create=False)
        unit = cq.get_unit(cq_offset) if cq else None
        return unit.phy_offset if unit else 0

    def search_offset_by_time(self, topic: str, queue_id: int, timestamp: int) -> int:
        """``getOffsetInQueueByTime`` (see :meth:`ConsumeQueue.offset_in_queue_by_time`)."""
        cq = self.find_consume_queue(topic, queue_id, create=False)
        if cq is None:
            return 0
        return cq.offset_in_queue_by_time(timestamp, self.commit_log.pickup_store_timestamp,
                                          self.commit_log.min_offset)

    def get_message_store_timestamp(self, topic: str, queue_id: int, cq_offset: int) -> int:
        cq = self.find_consume_queue(topic, queue_id, create=False)
        unit = cq.get_unit(cq_offset) if cq else None
        return self.commit_log.pickup_store_timestamp(unit.phy_offset, unit.size) if unit else -1

    # -- retention --------------------------------------------------------------------------
    def delete_expired_files(self, now_ms: int | None = None, clean_immediately: bool = False) -> int:
        """One forced deletion, without RocketMQ's schedule or disk rules: CommitLog files older
        than ``file_reserved_time`` hours (every file but the last with ``clean_immediately``; at
        most 10), then the ConsumeQueue and index files below the new CommitLog min offset
        (whether or not it moved). Returns the number of CommitLog files deleted. RocketMQ's
        round — ``deleteWhen``, the disk ratios, the manual countdown — is
        ``clean_service.run_once(now_ms)``."""
        now = self.clock.now_ms() if now_ms is None else now_ms
        svc = self.clean_service
        deleted = svc.clean_commit_log_service.delete_files_by_time(now, clean_immediately)
        svc.clean_consume_queue_service.delete_expired_files(force=True)
        return deleted

    def disk_util(self) -> str:
        """``SendMessageProcessor.diskUtil``: the used ratios of the CommitLog, ConsumeQueue and
        index partitions (-1: unreadable), as the broker's SERVICE_NOT_AVAILABLE remark shows them."""
        clean = self.clean_service.clean_commit_log_service
        probe = clean.options.disk_usage_probe
        return disk_util(probe(clean.physic_path), probe(clean.logics_path), probe(self.index_service.directory))

    def execute_delete_files_manually(self) -> None:
        """``executeDeleteFilesManually``: the next 20 clean rounds delete expired CommitLog
        files whatever the hour (they still keep unexpired ones unless the disk is above 85 %)."""
        self.clean_service.execute_delete_files_manually()

    def _on_running_flags_changed(self, flags: RunningFlags) -> None:
        self._writeable = flags.is_writeable()

    def is_os_page_cache_busy(self) -> bool:
        """``isOSPageCacheBusy``: a put has held the put lock for more than
        ``osPageCacheBusyTimeOutMills`` (1000) ms — RocketMQ's sign that page-cache writes stall.
        (4.9.4 computes ``now - beginTimeInLock`` even when the lock is free, where the difference
        is huge and the answer false; a free lock is answered false here without reading the clock.)"""
        return self.config.os_page_cache_busy_time_out_mills < self._lock_held_ms() < 10_000_000

    def _lock_held_ms(self) -> int:
        begin = self.commit_log.begin_time_in_lock
        return self.clock.now_ms() - begin if begin else 0

    def _busy_result(self) -> PutMessageResult:
        return PutMessageResult(PutMessageStatus.OS_PAGECACHE_BUSY,
                                error=f"a put has held the put lock for more than "
                                      f"{self.config.os_page_cache_busy_time_out_mills} ms (osPageCacheBusyTimeOutMills)")

    def _not_writeable_result(self) -> PutMessageResult:
        """``checkStoreStatus`` when ``runningFlags.isWriteable()`` is false (e.g. disk full)."""
        flags = self.running_flags
        return PutMessageResult(PutMessageStatus.SERVICE_NOT_AVAILABLE,
                                error=f"the store is not writeable (running flags {flags.flag_bits:#x}: "
                                      f"{'|'.join(flags.names())})")


def _keys_missing_from(index_file, req):
    """``req`` keeping only the keys ``index_file`` holds no entry for at ``req``'s offset (the
    record whose keys a full index file split with the next one)."""
    phy = req.commit_log_offset

    def present(key: str) -> bool:
        return phy in index_file.select_phy_offset(f"{req.topic}#{key}", 1 << 30, 0, 1 << 62)

    uniq = None if req.uniq_key is None or present(req.uniq_key) else req.uniq_key
    keys = " ".join(k for k in (req.keys or "").split(" ") if k and not present(k)) or None
    return dataclasses.replace(req, uniq_key=uniq, keys=keys)
