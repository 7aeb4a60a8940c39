"""``ScheduleMessageService``: delivering the messages parked in ``SCHEDULE_TOPIC_XXXX``
(``store/src/main/java/org/apache/rocketmq/store/schedule/ScheduleMessageService.java``).

Theory of operation. Each delay level *L* owns queue ``L - 1`` of ``SCHEDULE_TOPIC_XXXX``. All
messages of a level have the same delay, so in store order they are also in delivery order:
the queue is FIFO in time and nothing ever needs sorting. The ConsumeQueue unit of a parked
message carries its delivery time in the tagsCode field (computed at dispatch,
``CommitLog.checkMessageAndReturnSize``),
so a level's task reads units from its offset and stops at the first one that is not due:

* ``start()`` loads ``config/delayOffset.json``, clamps each offset into its queue's
  ``[min, max]`` and schedules one task per level after ``FIRST_DELAY_TIME`` (1 s), plus the
  persistence task (first after 10 s, then every ``flushDelayOffsetInterval``).
* A task (:meth:`execute_on_timeup`, 4.9.4 sync mode) walks the units of one CQ file from its
  offset: a unit not yet due ends the run (again 100 ms later, same unit); a due unit's record
  is read from the CommitLog (straight from the mapping for a plain v1 IPv4 record, else through
  ``decode_record`` — the same answers as ``lookMessageByOffset``), turned back into the real
  message (:func:`message_timeup`) and put;
  on success the level's progress becomes ``unit + 1``. A failed put retries the unit 100 ms later;
  an exception while delivering retries the same unit 100 ms later; an exception outside (e.g.
  the queue lookup) retries the task's first unit after 10 s.
* ``shutdown()`` stops the tasks and persists ``delayOffset.json``.

Delivery is at-least-once: progress reaches the file at most every 10 s, so after a crash every
unit after the last persisted offset is delivered again (what RocketMQ does too).

Not implemented: ``enableScheduleAsyncDeliver`` (4.9.4's pipelined puts; default false — our
store's puts are synchronous, so only the sync mode is meaningful here) and the master/slave
role switch (the broker decides whether to start this service). 4.8.0's variant (one Timer,
sleeping exactly until the next unit is due) is described in the book, not implemented.

Call order: construct → (``load()``) → ``start()`` → the scheduler runs the tasks → ``shutdown()``.
Never sleeps or starts threads: everything runs on the injected scheduler.
"""

from __future__ import annotations

import itertools
import logging
import struct
from dataclasses import dataclass, field
from typing import Callable

from pymq_ref.errors import FormatError, PymqError
from pymq_ref.formats.consume_queue import EXT_MAX_ADDR
from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import MESSAGE_MAGIC_CODE, MessageRecord, decode_record, v4_properties_start
from pymq_ref.formats.properties import decode_properties
from pymq_ref.store.config_files import DELAY_OFFSET_JSON, OffsetTableFile
from pymq_ref.store.delay import SCHEDULE_TOPIC, delay_level_to_queue_id, parse_delay_level
from pymq_ref.store.dispatch import compute_deliver_timestamp

from ..java_maps import chm_order
from .timeup import timeup_fields

log = logging.getLogger(__name__)

FIRST_DELAY_TIME = 1000
DELAY_FOR_A_WHILE = 100
DELAY_FOR_A_PERIOD = 10_000
WAIT_FOR_SHUTDOWN = 5000
DELAY_FOR_A_SLEEP = 10  # async mode only
RMQ_SYS_TRANS_HALF_TOPIC = "RMQ_SYS_TRANS_HALF_TOPIC"

#: a v1 record with IPv4 hosts up to its body: TOTALSIZE, MAGICCODE, FLAG, SYSFLAG, BORNTIMESTAMP,
#: BORNHOST, STOREHOST, RECONSUMETIMES, BODYLENGTH (the rest skipped)
_V4_FIXED = struct.Struct(">ii8xi16xiq8s8x8si8xi")
#: 8-byte host field -> Host, for the few hosts there are
_HOSTS: dict[bytes, Host] = {}


def _host(raw: bytes) -> Host:
    host = _HOSTS.get(raw)
    if host is None:
        host = Host.from_bytes(raw)
        if len(_HOSTS) < 4096:
            _HOSTS[raw] = host
    return host


class DelayOffsetFileError(PymqError):
    """``delayOffset.json`` parsed but does not hold ``{level: offset}`` integers."""


@dataclass
class ScheduleStats:
    """Counters for the book and the tests (RocketMQ logs these events)."""

    delivered: int = 0
    not_due: int = 0
    missing: int = 0            # lookMessageByOffset returned null: skipped
    discarded_half: int = 0     # REAL_TOPIC was the transaction half topic: logged and dropped
    put_failures: int = 0
    errors: list[str] = field(default_factory=list)


class ScheduleMessageService:
    """Delay-level delivery over a :class:`~pymq_ref.store.message_store.MessageStore`.

    ``store`` is read from (ConsumeQueues, CommitLog) and, unless ``write_store`` is given, written
    to (RocketMQ's ``writeMessageStore``). ``config`` defaults to ``store.config`` and supplies
    ``message_delay_level``, ``flush_delay_offset_interval``, ``store_path_root_dir``.
    ``on_deliver(level, unit_offset, put_result)`` is called after each successful put.
    """

    def __init__(self, store, scheduler, config=None, *, write_store=None,
                 on_deliver: Callable[[int, int, object], None] | None = None):
        self.store = store
        self.scheduler = scheduler
        self.clock = scheduler.clock
        self.config = config or store.config
        self.write_store = write_store or store
        self.on_deliver = on_deliver
        self.delay_level_table: dict[int, int] = {}
        self.offset_table: dict[int, int] = {}
        self.max_delay_level = 0
        self.file = OffsetTableFile(self.config.store_path_root_dir, DELAY_OFFSET_JSON)
        self.stats = ScheduleStats()
        self.started = False
        self._timers: dict[object, object] = {}
        if getattr(self.config, "enable_schedule_async_deliver", False):
            log.warning("enableScheduleAsyncDeliver is not implemented; delivering in sync mode")

    # -- levels -------------------------------------------------------------------------------
    def parse_delay_level(self) -> None:
        """``parseDelayLevel``; raises :class:`~pymq_ref.store.delay.DelayLevelFormatError`.

        With the store's own config this is the store's ``delay_table`` (the one the put-time
        rewrite and dispatch use: one table, as RocketMQ's store asks this service for it)."""
        if self.config is self.store.config:
            self.delay_level_table = self.store.delay_table
        else:
            self.delay_level_table = parse_delay_level(self.config.message_delay_level)
        self.max_delay_level = max(self.delay_level_table)

    def compute_deliver_timestamp(self, level: int, store_timestamp: int) -> int:
        return compute_deliver_timestamp(level, store_timestamp, self.delay_level_table)

    def correct_deliver_timestamp(self, level: int, now: int, deliver_timestamp: int) -> int:
        """A deliver time beyond ``now + delay(level)`` (clock moved back, bad value) means now."""
        return now if deliver_timestamp > now + self.delay_level_table[level] else deliver_timestamp

    # -- progress -----------------------------------------------------------------------------
    def load(self) -> bool:
        """Read ``delayOffset.json`` (or its ``.bak``), parse the levels, clamp the offsets."""
        if self.file.load():
            table = {}
            for level, offset in (self.file.offset_table or {}).items():
                try:
                    table[int(level)] = int(offset)
                except (TypeError, ValueError):
                    raise DelayOffsetFileError(
                        f"{self.file.path}: offsetTable entry {level!r}: {offset!r} is not level:offset integers") from None
            self.offset_table.update(table)
        self.parse_delay_level()
        self.correct_delay_offset()
        return True

    def correct_delay_offset(self) -> None:
        """Clamp each stored offset into ``[cqMinOffset, cqMaxOffset]`` of its queue."""
        for level in self.delay_level_table:
            current = self.offset_table.get(level)
            cq = self.store.find_consume_queue(SCHEDULE_TOPIC, delay_level_to_queue_id(level), create=False)
            if current is None or cq is None:
                continue
            lo, hi = cq.min_offset_in_queue, cq.max_offset_in_queue
            corrected = lo if current < lo else hi if current > hi else current
            if corrected != current:
                log.error("correct delay offset [delayLevel %d] from %d to %d", level, current, corrected)
                self.offset_table[level] = corrected

    def encode(self) -> dict:
        return {"offsetTable": {k: self.offset_table[k] for k in chm_order(self.offset_table, 32)}}

    def persist(self) -> None:
        """Write ``config/delayOffset.json`` (tmp, bak, rename)."""
        self.file.offset_table = self.encode()["offsetTable"]
        self.file.persist()

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        if self.started:
            return
        self.started = True
        self.load()
        for level in self.delay_level_table:
            self._schedule(level, self.offset_table.get(level, 0), FIRST_DELAY_TIME)
        interval = self.config.flush_delay_offset_interval
        self._schedule_persist(self.clock.now_ms() + 10_000, interval)

    def shutdown(self) -> None:
        """Stop the tasks and persist the progress. A no-op unless started."""
        if not self.started:
            return
        self.started = False
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self.persist()

    def _schedule(self, level: int, offset: int, delay_ms: int) -> None:
        self._timers[level] = self.scheduler.call_later(delay_ms, lambda: self._run(level, offset))

    def _schedule_persist(self, due: int, interval: int) -> None:
        def run() -> None:
            if not self.started:
                return
            try:
                self.persist()
            except Exception as exc:  # scheduleAtFixedRate keeps going after a logged failure
                log.error("persist delayOffset.json failed: %s", exc)
                self.stats.errors.append(f"persist: {exc}")
            self._schedule_persist(due + interval, interval)
        self._timers["persist"] = self.scheduler.call_at(due, run)

    def _run(self, level: int, offset: int) -> None:
        """``DeliverDelayedMessageTimerTask.run``."""
        if not self.started:
            return
        try:
            next_offset, delay = self.execute_on_timeup(level, offset)
        except Exception as exc:
            log.error("executeOnTimeup level %d offset %d: %s", level, offset, exc)
            self.stats.errors.append(f"level {level} offset {offset}: {exc}")
            next_offset, delay = offset, DELAY_FOR_A_PERIOD
        if self.started:
            self._schedule(level, next_offset, delay)

    # -- reading a parked record --------------------------------------------------------------
    def _restorer(self) -> Callable[[int, int], tuple[MessageRecord, dict] | None]:
        """``(phy, size) -> (message to put, the map of its properties text)``:
        ``message_timeup(store.look_message_by_offset(phy, size))`` for one run — None where the
        lookup answers None (unreadable, not a message), the same
        :class:`~.timeup.ScheduledMessageError` for a bad ``REAL_TOPIC``/``REAL_QID``.

        A plain v1 record with IPv4 hosts whose lengths add up to ``size`` is read straight from
        the CommitLog mapping (its fields, body and properties text; no parked record is built,
        no spans); anything else goes through :func:`decode_record`, so the answers are the same."""
        store = self.store
        check_running = store._check_running  # what look_message_by_offset checks first
        read = store.commit_log.queue.read  # None for an unreadable range or a file deleted meanwhile
        fixed = _V4_FIXED.unpack_from
        hosts = _HOSTS

        def restore(phy: int, size: int) -> tuple[MessageRecord, dict] | None:
            check_running()
            data = read(phy, size) if size > 0 else None
            if data is None:
                return None
            if size >= 91:
                total, magic, flag, sys_flag, born_ts, born_raw, store_raw, reconsume, body_len = fixed(data)
                if total == size and magic == MESSAGE_MAGIC_CODE and not sys_flag & 0x30 and body_len >= 0:
                    props_at = v4_properties_start(data, body_len)
                    if props_at is not None:
                        raw = data[props_at:].decode("utf-8", "surrogateescape")
                        return timeup_fields(decode_properties(raw), raw, data[88:88 + body_len], flag, sys_flag,
                                             born_ts, hosts.get(born_raw) or _host(born_raw),
                                             hosts.get(store_raw) or _host(store_raw), reconsume, phy)
            try:
                rec = decode_record(data, 0, base=phy, with_spans=False)
            except FormatError:
                return None
            if rec.__class__ is not MessageRecord:
                return None
            return timeup_fields(rec.properties, rec.properties_string, rec.body, rec.flag, rec.sys_flag,
                                 rec.born_timestamp, rec.born_host, rec.store_host, rec.reconsume_times,
                                 rec.phy_offset)
        return restore

    # -- one run of a level --------------------------------------------------------------------
    def execute_on_timeup(self, level: int, offset: int) -> tuple[int, int]:
        """One task run for ``level`` from CQ offset ``offset``; returns ``(next offset, delay ms)``
        — what RocketMQ schedules next. Usable on its own to step a level by hand."""
        cq = self.store.find_consume_queue(SCHEDULE_TOPIC, delay_level_to_queue_id(level), create=False)
        if cq is None:
            return offset, DELAY_FOR_A_WHILE
        units = cq.iter_units_from(offset)
        first = next(units, None)
        if first is None:  # getIndexBuffer returned null: outside the queue, or nothing new
            lo, hi = cq.min_offset_in_queue, cq.max_offset_in_queue
            reset = lo if lo > offset else hi if hi < offset else offset
            if reset != offset:
                log.error("schedule CQ offset invalid. offset=%d, min=%d, max=%d, level=%d", offset, lo, hi, level)
            return reset, DELAY_FOR_A_WHILE
        next_offset = offset
        read = 0
        clock, stats, store, put = self.clock, self.stats, self.store, self.write_store.put_message
        restore = self._restorer()
        max_delay = self.delay_level_table[level]
        try:
            for logical, phy, size, tags in itertools.chain((first,), units):
                if not self.started:
                    break
                read += 1
                if tags <= EXT_MAX_ADDR:  # isExtAddr: a ConsumeQueueExt address: recompute from the store time
                    tags = self.compute_deliver_timestamp(
                        level, store.commit_log.pickup_store_timestamp(phy, size))
                now = clock.now_ms()
                deliver = now if tags > now + max_delay else tags  # correctDeliverTimestamp
                next_offset = logical
                if deliver - now > 0:
                    stats.not_due += 1
                    return next_offset, DELAY_FOR_A_WHILE
                restored = restore(phy, size)
                if restored is None:
                    stats.missing += 1
                    continue
                inner, stored_properties = restored
                if inner.topic == RMQ_SYS_TRANS_HALF_TOPIC:
                    log.error("[BUG] the real topic of schedule msg is %s, discard the msg", inner.topic)
                    stats.discarded_half += 1
                    continue
                result = put(inner, stored_properties=stored_properties)
                if not result.ok:
                    stats.put_failures += 1
                    return next_offset, DELAY_FOR_A_WHILE
                self.offset_table[level] = logical + 1
                stats.delivered += 1
                if self.on_deliver is not None:
                    self.on_deliver(level, logical, result)
            next_offset = offset + read  # units are consecutive from ``offset``
        except Exception as exc:  # caught inside executeOnTimeup: retry this unit soon
            log.error("ScheduleMessageService, messageTimeup execute error, offset = %d: %s", next_offset, exc)
            self.stats.errors.append(f"level {level} unit {next_offset}: {exc}")
        return next_offset, DELAY_FOR_A_WHILE
