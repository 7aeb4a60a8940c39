"""File retention as RocketMQ 4.9.4 schedules it (``storage.md`` §13, §8.6).

RocketMQ deletes whole files, oldest first, in two scheduled tasks of ``DefaultMessageStore``:

* ``cleanFilesPeriodically`` (first run after 60 s, then every ``cleanResourceInterval`` ms):
  ``CleanCommitLogService`` then ``CleanConsumeQueueService``;
* the *disk check* (first run after 1 s, then every 10 s, on its own thread):
  ``CleanCommitLogService.isSpaceFull``, which only sets or clears the DISK_FULL running flag.

Theory of operation of one clean round, as the 4.9.4 source has it:

1. ``timeup``: the local hour of day is one of ``deleteWhen``'s ``;``-separated hours. Entries
   are parsed left to right with ``Integer.parseInt`` and the first match answers, so a bad
   entry only hurts when it is reached — then the exception ends the CommitLog part of the
   round before step 2 (no deletion, no disk rule, no countdown), every round, until fixed.
2. ``spacefull`` (``isSpaceToDelete``, see :func:`space_verdict`): the used ratio of the
   CommitLog partition, then — only if that one did not already answer — of the ConsumeQueue
   partition. Above 0.90 the store is marked disk full (puts answer SERVICE_NOT_AVAILABLE),
   above 0.85 files are cleaned *immediately*, at or below 0.85 the DISK_FULL flag is cleared;
   above ``diskMaxUsedSpaceRatio`` (clamped to 10..95 %) — or when the ratio is negative (the
   path is missing or unreadable) — ``spacefull`` is true.
3. ``manualDelete``: ``executeDeleteFilesManually`` arms a countdown of 20 rounds; each round
   that deletes (for whatever reason) while it is armed uses up one.
4. If any of the three: delete CommitLog files, oldest first, never the last one, at most 10,
   ``deleteCommitLogFilesInterval`` ms apart, stopping at the first file that is neither
   expired (``lastModified + fileReservedTime h <= now``) nor cleaned immediately
   (``cleanFileForciblyEnable && cleanImmediately``). A manual delete alone does *not* clean
   immediately: it only lifts the ``deleteWhen`` hour.
5. ``CleanConsumeQueueService``: only when the CommitLog min offset grew since its last action
   (it starts from 0): per queue, delete leading files whose last unit points below it (never
   the last), correct the queue's min offset, ``deleteConsumeQueueFilesInterval`` ms after each
   queue that lost files; then the index files whose ``endPhyOffset`` is below it (never the last).

The disk check (:meth:`CleanCommitLogService.is_space_full`) marks disk full above 0.90 and
clears it at or below 0.90 — on the CommitLog partition only. So a store marked full becomes
writeable again at the next disk check that sees the CommitLog partition at or below 90 %, or
the next clean round that sees it (and the ConsumeQueue partition, when that is looked at) at or
below 85 %.

Where ours differs, for want of Java's reference counts: RocketMQ keeps a deleted file mapped
until its last reader releases it (forcibly after ``destroyMapedFileIntervalForcibly``, 120 s;
``redeleteHangedFile`` retries every ``redeleteHangedFileInterval``, 120 s); ours closes and
unlinks it at once, so nothing can hang and those two settings are unused. Because our reput
thread reads the mapping directly, a CommitLog file is not deleted before the reput has
dispatched it to its end (RocketMQ deletes it anyway and its reput jumps to the new min offset,
so those messages never reach a ConsumeQueue). A reader (``get_message``) that picked a file just
before it was closed can still fail with StoreClosedError in the threaded mode. One CommitLog
directory (no 4.9.x multi-path CommitLog). The hour of day comes from the store's injected clock, in ``time_zone`` (the
machine's local zone by default, as the JVM's ``Calendar.getInstance()``); used ratios come from
an injectable probe so that a test can play a full disk without filling one.

Layout: pure rules first (no I/O), then :func:`partition_used_ratio` (``os.statvfs``), then the
services that act on a :class:`~pymq_ref.store.message_store.MessageStore`. This module must not
touch the put/append/flush paths, delete anything in a read-only store, or read wall time
except to pace its threads.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from typing import Callable

from pymq_ref.store.errors import ReadOnlyStoreError, StoreError
from pymq_ref.store.mapped_file import DELETE_FILES_BATCH_MAX

_log = logging.getLogger(__name__)

#: ``CleanCommitLogService.MAX_MANUAL_DELETE_FILE_TIMES``
MAX_MANUAL_DELETE_FILE_TIMES = 20
#: ``-Drocketmq.broker.diskSpaceWarningLevelRatio`` (a JVM system property, not a config field)
DISK_SPACE_WARNING_LEVEL_RATIO = 0.90
#: ``-Drocketmq.broker.diskSpaceCleanForciblyRatio``
DISK_SPACE_CLEAN_FORCIBLY_RATIO = 0.85
#: ``addScheduleTask``: the first ``cleanFilesPeriodically`` runs 60 s after start
CLEAN_FILES_INITIAL_DELAY_MS = 60_000
#: ``addScheduleTask``: the disk check runs 1 s after start, then every 10 s (not configurable)
DISK_CHECK_INITIAL_DELAY_MS = 1_000
DISK_CHECK_INTERVAL_MS = 10_000
HOUR_MS = 3_600_000


class RetentionError(StoreError, ValueError):
    """A retention setting or argument RocketMQ would not accept."""


class DeleteWhenFormatError(RetentionError):
    """An entry of ``deleteWhen`` that ``Integer.parseInt`` rejects (RocketMQ's round then fails
    with a NumberFormatException, logged as "service has exception")."""

    def __init__(self, delete_when: str, entry: str, index: int):
        self.delete_when, self.entry, self.index = delete_when, entry, index
        super().__init__(f"deleteWhen {delete_when!r}: entry {index} ({entry!r}) is not a decimal int "
                         f"(expected ';'-separated hours of day such as \"04\" or \"04;16\")")


# -- pure rules ------------------------------------------------------------------------------
_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1


def java_parse_int(text: str) -> int:
    """``Integer.parseInt(text)``: an optional ``+``/``-`` then one or more decimal digits (any
    Unicode decimal digit of the BMP, as ``Character.digit``), no blanks, no ``_``, within the
    int range. Raises :class:`ValueError` otherwise (Java: NumberFormatException)."""
    start = 1 if text[:1] in ("+", "-") else 0
    digits = text[start:]
    if not digits:
        raise ValueError(f"For input string: {text!r}")
    value = 0
    for ch in digits:
        if ord(ch) > 0xFFFF or not ch.isdecimal():  # a supplementary digit is two chars in Java
            raise ValueError(f"For input string: {text!r}")
        value = value * 10 + int(ch)
    if text[0] == "-":
        value = -value
    if not _INT_MIN <= value <= _INT_MAX:
        raise ValueError(f"For input string: {text!r}")
    return value


def java_split(text: str, sep: str) -> list[str]:
    """``String.split(sep)`` for a one-char literal separator: no match gives ``[text]`` (even
    for ``""``); otherwise trailing empty strings are dropped (leading ones are kept)."""
    parts = text.split(sep)
    if len(parts) == 1:
        return parts
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def is_time_to_delete(delete_when: str, hour_of_day: int) -> bool:
    """``UtilAll.isItTimeToDo(deleteWhen)`` at ``hour_of_day`` (0–23).

    ``"04"`` and ``"4"`` and ``"+4"`` mean 4 o'clock; ``"04;16"`` two hours; ``";"`` no hour
    (always False); an entry that is not an int raises :class:`DeleteWhenFormatError` — but only
    when reached: ``"04;x"`` is True at 4 o'clock and raises at any other hour. Hours outside
    0–23 are accepted and never match.
    """
    if not 0 <= hour_of_day <= 23:
        raise RetentionError(f"hour_of_day must be 0..23 (Calendar.HOUR_OF_DAY), got {hour_of_day}")
    for index, entry in enumerate(java_split(delete_when, ";")):
        try:
            hour = java_parse_int(entry)
        except ValueError:
            raise DeleteWhenFormatError(delete_when, entry, index) from None
        if hour == hour_of_day:
            return True
    return False


def resolve_time_zone(zone: str | tzinfo | None) -> tzinfo | None:
    """``None`` or ``"local"``: the machine's zone (returned as None); ``"UTC"``; an IANA name."""
    if zone is None or isinstance(zone, tzinfo):
        return zone
    if zone == "local":
        return None
    if zone.upper() == "UTC":
        return timezone.utc
    from zoneinfo import ZoneInfo

    return ZoneInfo(zone)


def hour_of_day(now_ms: int, zone: tzinfo | None = None) -> int:
    """``Calendar.HOUR_OF_DAY`` of ``now_ms`` in ``zone`` (None: local time)."""
    return datetime.fromtimestamp(now_ms // 1000, tz=zone).hour


def get_disk_max_used_space_ratio(configured: int) -> int:
    """``MessageStoreConfig.getDiskMaxUsedSpaceRatio``: the setting clamped to 10..95 (percent)."""
    return 10 if configured < 10 else 95 if configured > 95 else configured


def disk_partition_space_used_percent(total: int, free: int, usable: int) -> float:
    """``UtilAll.getDiskPartitionSpaceUsedPercent`` from the partition's byte counts:
    ``used = total - free`` (blocks reserved for root count as used, through ``usable``),
    ``ceil(100 * used / (used + usable)) / 100``; -1 when the partition has no size."""
    if total <= 0:
        return -1.0
    used = total - free
    entire = used + usable
    if entire == 0:  # Java: ArithmeticException, caught -> -1
        return -1.0
    percent = used * 100 // entire + (1 if used * 100 % entire else 0)
    return percent / 100.0


@dataclass(frozen=True, slots=True)
class SpaceVerdict:
    """What one ``isSpaceToDelete`` call decides."""

    #: its answer (the round's ``spacefull``)
    is_space_to_delete: bool
    #: ``cleanImmediately``: delete even unexpired files (if ``cleanFileForciblyEnable``)
    clean_immediately: bool
    #: the DISK_FULL running flag afterwards: True = ``getAndMakeDiskFull``, False =
    #: ``getAndMakeDiskOK``, None = left as it was
    disk_full: bool | None
    #: False when the CommitLog partition already answered (the ConsumeQueue one is not looked at)
    logics_checked: bool


def space_verdict(physic_ratio: float, logics_ratio: float, max_used_ratio: float,
                  clean_forcibly_ratio: float = DISK_SPACE_CLEAN_FORCIBLY_RATIO,
                  warning_ratio: float = DISK_SPACE_WARNING_LEVEL_RATIO) -> SpaceVerdict:
    """``CleanCommitLogService.isSpaceToDelete`` on two used ratios (0..1, or -1 = unknown).

    ``max_used_ratio`` is ``getDiskMaxUsedSpaceRatio() / 100.0``. Every comparison is strict.
    Each partition in turn: > ``warning_ratio`` marks disk full and cleans immediately,
    > ``clean_forcibly_ratio`` cleans immediately (flag untouched), otherwise marks disk OK;
    then a negative ratio or one > ``max_used_ratio`` answers True at once. The ConsumeQueue
    partition is looked at only when the CommitLog one did not answer, and its flag operation
    comes last: with ``max_used_ratio`` 0.95, a CommitLog partition at 0.92 marks disk full
    and a ConsumeQueue partition at 0.50 clears it again in the same call.
    """
    disk_full: bool | None = None
    clean = False
    for logics, ratio in ((False, physic_ratio), (True, logics_ratio)):
        if ratio > warning_ratio:
            disk_full, clean = True, True
        elif ratio > clean_forcibly_ratio:
            clean = True
        else:
            disk_full = False
        if ratio < 0 or ratio > max_used_ratio:
            return SpaceVerdict(True, clean, disk_full, logics)
    return SpaceVerdict(False, clean, disk_full, True)


def is_space_full_verdict(physic_ratio: float, warning_ratio: float = DISK_SPACE_WARNING_LEVEL_RATIO) -> bool:
    """``CleanCommitLogService.isSpaceFull`` (the 10 s disk check): True (mark disk full) when the
    CommitLog partition is above ``warning_ratio``, else False (mark disk OK — also for -1)."""
    return physic_ratio > warning_ratio


def disk_util(physic_ratio: float, logics_ratio: float, index_ratio: float) -> str:
    """The ``[…]`` part of the broker's SERVICE_NOT_AVAILABLE remark for a put
    (``SendMessageProcessor.diskUtil``), e.g. ``"CL:  0.92 CQ:  0.92 INDEX:  0.92"``."""
    return f"CL: {physic_ratio:5.2f} CQ: {logics_ratio:5.2f} INDEX: {index_ratio:5.2f}"


class RunningFlags:
    """``RunningFlags``: the store's health bits. Puts need ``is_writeable()`` (none of
    NOT_WRITEABLE, WRITE_LOGICS_QUEUE_ERROR, WRITE_INDEX_FILE_ERROR, DISK_FULL); ConsumeQueue
    writes ignore DISK_FULL (``is_cq_writeable``). ``on_change(flags)`` is called after every
    change (the store caches ``is_writeable()`` for its put path). Thread-safe."""

    NOT_READABLE_BIT = 1
    NOT_WRITEABLE_BIT = 1 << 1
    WRITE_LOGICS_QUEUE_ERROR_BIT = 1 << 2
    WRITE_INDEX_FILE_ERROR_BIT = 1 << 3
    DISK_FULL_BIT = 1 << 4
    _NAMES = ((NOT_READABLE_BIT, "NOT_READABLE"), (NOT_WRITEABLE_BIT, "NOT_WRITEABLE"),
              (WRITE_LOGICS_QUEUE_ERROR_BIT, "WRITE_LOGICS_QUEUE_ERROR"),
              (WRITE_INDEX_FILE_ERROR_BIT, "WRITE_INDEX_FILE_ERROR"), (DISK_FULL_BIT, "DISK_FULL"))
    _WRITE_BLOCKERS = NOT_WRITEABLE_BIT | WRITE_LOGICS_QUEUE_ERROR_BIT | WRITE_INDEX_FILE_ERROR_BIT | DISK_FULL_BIT

    def __init__(self, on_change: Callable[["RunningFlags"], None] | None = None):
        self.flag_bits = 0
        self.on_change = on_change
        self._lock = threading.Lock()

    def _update(self, set_bits: int = 0, clear_bits: int = 0) -> int:
        with self._lock:
            before = self.flag_bits
            self.flag_bits = (before | set_bits) & ~clear_bits
            changed = self.flag_bits != before
        if changed and self.on_change is not None:
            self.on_change(self)
        return before

    def names(self) -> list[str]:
        return [name for bit, name in self._NAMES if self.flag_bits & bit]

    def is_readable(self) -> bool:
        return not self.flag_bits & self.NOT_READABLE_BIT

    def is_writeable(self) -> bool:
        return not self.flag_bits & self._WRITE_BLOCKERS

    def is_cq_writeable(self) -> bool:
        return not self.flag_bits & (self._WRITE_BLOCKERS & ~self.DISK_FULL_BIT)

    def is_disk_full(self) -> bool:
        return bool(self.flag_bits & self.DISK_FULL_BIT)

    def get_and_make_disk_full(self) -> bool:
        """Set DISK_FULL; True if it was clear (the disk *was* OK)."""
        return not self._update(set_bits=self.DISK_FULL_BIT) & self.DISK_FULL_BIT

    def get_and_make_disk_ok(self) -> bool:
        """Clear DISK_FULL; True if it was already clear."""
        return not self._update(clear_bits=self.DISK_FULL_BIT) & self.DISK_FULL_BIT

    def get_and_make_writeable(self) -> bool:
        """Clear NOT_WRITEABLE; returns the previous ``is_writeable()``."""
        before = self._update(clear_bits=self.NOT_WRITEABLE_BIT)
        return not before & self._WRITE_BLOCKERS

    def get_and_make_not_writeable(self) -> bool:
        before = self._update(set_bits=self.NOT_WRITEABLE_BIT)
        return not before & self._WRITE_BLOCKERS

    def make_logics_queue_error(self) -> None:
        self._update(set_bits=self.WRITE_LOGICS_QUEUE_ERROR_BIT)

    def make_index_file_error(self) -> None:
        self._update(set_bits=self.WRITE_INDEX_FILE_ERROR_BIT)

    def __repr__(self) -> str:
        return f"RunningFlags({self.flag_bits:#x} {'|'.join(self.names()) or 'OK'})"


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
        return os.path.join(self.store.config.store_path_root_dir, "consumequeue")

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
