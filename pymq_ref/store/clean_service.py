"""The retention services: the disk probe and the scheduled clean rounds of a MessageStore.

The rules they apply are :mod:`pymq_ref.store.retention` (pure; its docstring tells one round
step by step). Here: :func:`partition_used_ratio` (``os.statvfs``, as
``UtilAll.getDiskPartitionSpaceUsedPercent``), :class:`CleanCommitLogService`,
:class:`CleanConsumeQueueService`, and :class:`CleanFilesService`, which runs both on a thread in
the store's threaded mode (plus the 10 s disk check) and exposes ``run_once(now_ms)`` for the
deterministic mode.

Must not: touch the put/append/flush paths, delete anything in a read-only store, or read wall
time except to pace its threads.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from datetime import tzinfo
from typing import Callable

from pymq_ref.store.errors import ReadOnlyStoreError
from pymq_ref.store.mapped_file import DELETE_FILES_BATCH_MAX
from pymq_ref.store.retention import (CLEAN_FILES_INITIAL_DELAY_MS, DISK_CHECK_INITIAL_DELAY_MS, DISK_CHECK_INTERVAL_MS,
                                      DISK_SPACE_CLEAN_FORCIBLY_RATIO, DISK_SPACE_WARNING_LEVEL_RATIO, HOUR_MS,
                                      MAX_MANUAL_DELETE_FILE_TIMES, RetentionError, SpaceVerdict,
                                      disk_partition_space_used_percent, get_disk_max_used_space_ratio, hour_of_day,
                                      is_space_full_verdict, is_time_to_delete, resolve_time_zone, space_verdict)

_log = logging.getLogger(__name__)

# -- I/O: the disk probe -----------------------------------------------------------------------
def partition_used_ratio(path: str) -> float:
    """``UtilAll.getDiskPartitionSpaceUsedPercent(path)`` via ``os.statvfs``: the used ratio of
    the partition holding ``path``, rounded *up* to a whole percent; -1 when ``path`` is empty,
    missing or unreadable (as Java)."""
    if not path:
        return -1.0
    try:
        if not os.path.exists(path):
            return -1.0
        st = os.statvfs(path)
    except OSError:
        return -1.0
    return disk_partition_space_used_percent(st.f_blocks * st.f_frsize, st.f_bfree * st.f_frsize,
                                             st.f_bavail * st.f_frsize)


# -- the services ------------------------------------------------------------------------------
@dataclass(frozen=True)
class RetentionOptions:
    """What RocketMQ takes from the JVM rather than ``MessageStoreConfig``, plus the test hooks.

    ``disk_usage_probe(path) -> ratio`` replaces :func:`partition_used_ratio` (tests play 0.87,
    0.92, -1 …); ``time_zone`` is the JVM default zone (``None``/"local": this machine's);
    the two ratios are the ``-Drocketmq.broker.…`` system properties; the delays pace the
    threaded mode (RocketMQ: 60 s, then ``cleanResourceInterval``; the disk check 1 s, then 10 s).
    """

    disk_usage_probe: Callable[[str], float] = partition_used_ratio
    time_zone: str | tzinfo | None = None
    disk_space_warning_level_ratio: float = DISK_SPACE_WARNING_LEVEL_RATIO
    disk_space_clean_forcibly_ratio: float = DISK_SPACE_CLEAN_FORCIBLY_RATIO
    clean_files_initial_delay_ms: int = CLEAN_FILES_INITIAL_DELAY_MS
    disk_check_initial_delay_ms: int = DISK_CHECK_INITIAL_DELAY_MS
    disk_check_interval_ms: int = DISK_CHECK_INTERVAL_MS


#: ``pause(ms) -> stop``: wait between deletions; True means "the service is stopping, give up"
Pause = Callable[[int], bool]


@dataclass
class CleanRound:
    """What one ``cleanFilesPeriodically`` round saw and did."""

    now_ms: int
    hour_of_day: int | None = None
    timeup: bool = False
    spacefull: bool = False
    manual_delete: bool = False
    clean_at_once: bool = False
    verdict: SpaceVerdict | None = None
    physic_ratio: float | None = None
    logics_ratio: float | None = None
    commit_log_files_deleted: int = 0
    #: CleanConsumeQueueService acted (the CommitLog min offset grew since it last did)
    min_offset_grew: bool = False
    consume_queue_files_deleted: int = 0
    index_files_deleted: int = 0
    #: what ended the CommitLog part early (RocketMQ logs "service has exception"), e.g. a bad deleteWhen
    error: Exception | None = None


class CleanCommitLogService:
    """``DefaultMessageStore.CleanCommitLogService``: when to delete CommitLog files, the disk
    rules, the manual-delete countdown. Holds no thread (see :class:`CleanFilesService`)."""

    def __init__(self, store, options: RetentionOptions):
        self.store = store
        self.options = options
        self.time_zone = resolve_time_zone(options.time_zone)
        self.manual_delete_file_several_times = 0
        self.clean_immediately = False

    @property
    def physic_path(self) -> str:
        """``getStorePathPhysic``: the CommitLog directory."""
        return self.store.config.store_path_commit_log_dir

    @property
    def logics_path(self) -> str:
        """``getStorePathLogic``: ``{root}/consumequeue``."""
        return self.store.consume_queue_dir

    def execute_delete_files_manually(self) -> None:
        """``executeDeleteFilesManually``: the next 20 rounds delete expired files whatever the hour."""
        self.manual_delete_file_several_times = MAX_MANUAL_DELETE_FILE_TIMES

    def is_time_to_delete(self, now_ms: int) -> bool:
        return is_time_to_delete(self.store.config.delete_when, hour_of_day(now_ms, self.time_zone))

    def is_space_to_delete(self, round_: CleanRound | None = None) -> SpaceVerdict:
        """Probe both partitions, apply the verdict to the running flags, remember ``cleanImmediately``."""
        o = self.options
        probe = o.disk_usage_probe
        physic, logics = probe(self.physic_path), probe(self.logics_path)
        max_used = get_disk_max_used_space_ratio(self.store.config.disk_max_used_space_ratio) / 100.0
        verdict = space_verdict(physic, logics, max_used, o.disk_space_clean_forcibly_ratio,
                                o.disk_space_warning_level_ratio)
        self.clean_immediately = verdict.clean_immediately
        self._apply_disk_flag(verdict.disk_full, physic if not verdict.logics_checked else logics)
        if round_ is not None:
            round_.physic_ratio = physic
            round_.logics_ratio = logics if verdict.logics_checked else None
        return verdict

    def is_space_full(self) -> bool:
        """``isSpaceFull``, the disk check: mark disk full above the warning ratio, else OK."""
        physic = self.options.disk_usage_probe(self.physic_path)
        full = is_space_full_verdict(physic, self.options.disk_space_warning_level_ratio)
        self._apply_disk_flag(full, physic)
        return full

    def _apply_disk_flag(self, full: bool | None, ratio: float) -> None:
        flags = self.store.running_flags
        if full is True:
            if flags.get_and_make_disk_full():
                _log.error("disk maybe full soon (used %.2f), so mark disk full", ratio)
        elif full is False:
            if not flags.get_and_make_disk_ok():
                _log.info("disk space OK (used %.2f), so mark disk ok", ratio)

    def delete_files_by_time(self, now_ms: int, clean_immediately: bool, interval_ms: int = 0,
                             pause: Pause | None = None) -> int:
        """``CommitLog.deleteExpiredFile`` → ``MappedFileQueue.deleteExpiredFileByTime``: delete
        leading files older than ``fileReservedTime`` hours (all of them with
        ``clean_immediately``) — never the file that was last when the round started, at most
        10, ``interval_ms`` apart, stopping at the first one kept. Unlike RocketMQ it also stops
        at a file the reput has not dispatched to its end (see the module docstring)."""
        store = self.store
        if store.read_only:
            raise ReadOnlyStoreError("retention deletes files: the store is open read-only")
        queue = store.commit_log.queue
        expired_ms = store.config.file_reserved_time * HOUR_MS
        candidates = min(DELETE_FILES_BATCH_MAX, len(queue.files) - 1)
        deleted = 0
        while deleted < candidates:
            first = queue.files[0]
            if first.file_from_offset + first.file_size > store.reput_from_offset:
                break  # the reput thread may still be reading it
            if not queue.delete_expired_file_by_time(expired_ms, now_ms, clean_immediately, max_batch=1):
                break
            deleted += 1
            if deleted < candidates and interval_ms > 0 and pause is not None and pause(interval_ms):
                break
        return deleted

    def delete_expired_files(self, now_ms: int, pause: Pause | None = None,
                             round_: CleanRound | None = None) -> CleanRound:
        """``deleteExpiredFiles``: one round's decision and deletion (raises on a bad ``deleteWhen``)."""
        r = round_ if round_ is not None else CleanRound(now_ms)
        config = self.store.config
        r.hour_of_day = hour_of_day(now_ms, self.time_zone)
        r.timeup = is_time_to_delete(config.delete_when, r.hour_of_day)
        r.verdict = self.is_space_to_delete(r)
        r.spacefull = r.verdict.is_space_to_delete
        r.manual_delete = self.manual_delete_file_several_times > 0
        if r.timeup or r.spacefull or r.manual_delete:
            if r.manual_delete:
                self.manual_delete_file_several_times -= 1
            r.clean_at_once = config.clean_file_forcibly_enable and self.clean_immediately
            r.commit_log_files_deleted = self.delete_files_by_time(
                now_ms, r.clean_at_once, config.delete_commit_log_files_interval, pause)
            if not r.commit_log_files_deleted and r.spacefull:
                _log.warning("disk space will be full soon, but no CommitLog file could be deleted")
        return r

    def run(self, now_ms: int, pause: Pause | None = None, round_: CleanRound | None = None) -> CleanRound:
        """``run``: :meth:`delete_expired_files`, an exception logged and kept in ``error``."""
        r = round_ if round_ is not None else CleanRound(now_ms)
        try:
            self.delete_expired_files(now_ms, pause, r)
        except Exception as e:  # RocketMQ: "CleanCommitLogService service has exception."
            _log.warning("CleanCommitLogService service has exception: %s", e)
            r.error = e
        return r


class CleanConsumeQueueService:
    """``DefaultMessageStore.CleanConsumeQueueService``: ConsumeQueue and index files follow the
    CommitLog's min offset — only in rounds where that offset grew."""

    def __init__(self, store):
        self.store = store
        self.last_physical_min_offset = 0

    def delete_expired_files(self, pause: Pause | None = None, *, force: bool = False,
                             round_: CleanRound | None = None) -> CleanRound:
        """``deleteExpiredFiles``; ``force`` acts even if the min offset did not grow (for
        :meth:`MessageStore.delete_expired_files`, which RocketMQ does not have)."""
        store = self.store
        r = round_ if round_ is not None else CleanRound(0)
        if store.read_only:
            raise ReadOnlyStoreError("retention deletes files: the store is open read-only")
        min_offset = store.commit_log.min_offset
        r.min_offset_grew = min_offset > self.last_physical_min_offset
        if not (r.min_offset_grew or force):
            return r
        if r.min_offset_grew:
            self.last_physical_min_offset = min_offset
        interval = store.config.delete_consume_queue_files_interval
        for cq in store._all_cqs():  # (dispatch only writes a queue's last file, never deleted here)
            n = cq.delete_expired_file(min_offset)
            r.consume_queue_files_deleted += n
            if n > 0 and interval > 0 and pause is not None and pause(interval):
                return r
        r.index_files_deleted = store.index_service.delete_expired_file(min_offset)
        return r


class _PeriodicTask:
    """``scheduleAtFixedRate`` on a thread: ``task()`` after ``initial_delay_ms``, then every
    ``period_ms`` counted from the previous *scheduled* start (a late run is followed at once
    by the next); an exception is logged and the schedule goes on. Stops when ``stop`` is set."""

    def __init__(self, name: str, task: Callable[[], object], initial_delay_ms: int, period_ms: int,
                 stop: threading.Event):
        if period_ms <= 0:
            raise RetentionError(f"{name}: the period must be > 0 ms, got {period_ms}")
        self.name, self.task = name, task
        self.initial_delay_ms, self.period_ms = initial_delay_ms, period_ms
        self._stop = stop
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        next_at = time.monotonic() + max(0, self.initial_delay_ms) / 1000
        while not self._stop.wait(max(0.0, next_at - time.monotonic())):
            try:
                self.task()
            except Exception:
                _log.exception("%s failed", self.name)
            next_at += self.period_ms / 1000

    def join(self, timeout: float) -> None:
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None


class CleanFilesService:
    """The store's retention: ``cleanFilesPeriodically`` (:meth:`run_once`) and the disk check
    (:meth:`check_disk`), plus ``executeDeleteFilesManually``.

    Deterministic mode: nothing runs by itself; call :meth:`run_once` (``now_ms`` defaults to
    the store's clock) and :meth:`check_disk`; no pause between deletions. Threaded mode
    (``MessageStore(threads=True)`` calls :meth:`start`): a clean thread runs :meth:`run_once`
    after ``clean_files_initial_delay_ms`` then every ``clean_resource_interval`` ms, pausing
    ``delete_*_files_interval`` ms between deletions; a disk-check thread runs :meth:`check_disk`.
    ``shutdown`` interrupts a pause and joins both.

    Call order: construct (store not loaded yet) → [``start()``] → ``run_once`` /
    ``check_disk`` / ``execute_delete_files_manually`` on a running store … → [``shutdown()``].
    """

    name = "CleanFilesService"

    def __init__(self, store, options: RetentionOptions | None = None):
        self.store = store
        self.options = options or RetentionOptions()
        self.clean_commit_log_service = CleanCommitLogService(store, self.options)
        self.clean_consume_queue_service = CleanConsumeQueueService(store)
        self.rounds = 0
        self.disk_checks = 0
        self.last_round: CleanRound | None = None
        self._stop = threading.Event()
        self._pause: Pause | None = None
        self._tasks: list[_PeriodicTask] = []

    def execute_delete_files_manually(self) -> None:
        self.clean_commit_log_service.execute_delete_files_manually()

    def run_once(self, now_ms: int | None = None) -> CleanRound:
        """One ``cleanFilesPeriodically`` round: the CommitLog part (errors kept in ``error``),
        then the ConsumeQueue/index part."""
        store = self.store
        store._check_running()
        if store.read_only:
            raise ReadOnlyStoreError("retention deletes files: the store is open read-only")
        now = store.clock.now_ms() if now_ms is None else now_ms
        r = CleanRound(now)
        self.clean_commit_log_service.run(now, self._pause, r)
        if not self._stop.is_set():
            self.clean_consume_queue_service.delete_expired_files(self._pause, round_=r)
        self.rounds += 1
        self.last_round = r
        return r

    def check_disk(self) -> bool:
        """The 10 s disk check (``isSpaceFull``); True when the store is now marked disk full."""
        self.disk_checks += 1
        return self.clean_commit_log_service.is_space_full()

    # -- threaded mode ----------------------------------------------------------------------
    def start(self) -> None:
        o = self.options
        self._stop.clear()
        self._pause = lambda ms: self._stop.wait(ms / 1000)
        self._tasks = [
            _PeriodicTask("CleanFilesService", self._scheduled_round, o.clean_files_initial_delay_ms,
                          self.store.config.clean_resource_interval, self._stop),
            _PeriodicTask("DiskCheckService", self.check_disk, o.disk_check_initial_delay_ms,
                          o.disk_check_interval_ms, self._stop),
        ]
        for t in self._tasks:
            t.start()

    def _scheduled_round(self) -> None:
        if self.store._state == "running":  # not in the moment between store shutdown and ours
            self.run_once()

    def shutdown(self) -> None:
        self._stop.set()
        for t in self._tasks:
            t.join(timeout=10)
        self._tasks = []
        self._pause = None
