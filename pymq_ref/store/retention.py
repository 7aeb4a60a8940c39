"""File retention as RocketMQ 4.9.4 schedules it
(``store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java``: ``CleanCommitLogService``,
``CleanConsumeQueueService``).

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
so those messages never reach a ConsumeQueue); a reader that looked a file up just before it was
closed finds it gone (the CommitLog read answers None, the ConsumeQueue walk stops), as a Java
reader gets null. One CommitLog directory (no 4.9.x multi-path CommitLog). The hour of day comes from the store's injected clock, in ``time_zone`` (the
machine's local zone by default, as the JVM's ``Calendar.getInstance()``); used ratios come from
an injectable probe so that a test can play a full disk without filling one.

This module is the pure part: the rules, the running flags, no I/O. The disk probe
(``os.statvfs``) and the services that act on a
:class:`~pymq_ref.store.message_store.MessageStore` are in :mod:`pymq_ref.store.clean_service`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from typing import Callable

from pymq_ref.store.errors import StoreError

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
