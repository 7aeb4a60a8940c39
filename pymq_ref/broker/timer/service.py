"""``TimerMessageStore`` (5.1.4): arbitrary delivery times on a timing wheel (see the book's reference appendix,
§Timer files; 5.1.4 ``store/src/main/java/org/apache/rocketmq/store/timer/TimerMessageStore.java``).

Theory of operation. The put hook (:mod:`.hook`) parks a timer message in ``rmq_sys_wheel_timer``
queue 0 with its slot time in ``TIMER_OUT_MS``. Then two cursors move:

* **enqueue** (``currQueueOffset``): read the timer topic's ConsumeQueue; for each record append a
  52-byte TimerLog unit whose ``prev_pos`` is the slot's current ``last_pos`` and make the unit the
  slot's new ``last_pos`` — each slot is a linked list threaded backwards through the TimerLog.
  A time at least ``timerRollWindowSlot`` slots ahead of the write time is filed *rolled* at the
  window's end (or half of it, near the edge) and re-queued into the timer topic when reached.
  A time already behind the write time is delivered at once.
* **dequeue** (``currReadTimeMs``): for each slot strictly before the write time (the current
  second, rounded down), walk the chain from ``last_pos`` via ``prev_pos``, apply delete markers of
  the slot, and put each message back to its real topic (or, rolled, into the timer topic again),
  oldest first; then move to the next slot.

The wheel (``slots_total × 2`` slots) covers twice the window, so a slot is reused only after its
round is over; a slot whose stored ``time / precision`` is another round's reads as empty.

Persistence as in 5.x: every ``timerFlushIntervalMs`` the TimerLog, the wheel and ``timercheck``
(read time, TimerLog flush position, queue offsets) are flushed. :meth:`recover` replays the
TimerLog from one file before the checkpointed flush position, re-pointing each slot's
``last_pos`` at its newest unit (the chains live in the TimerLog itself), truncates a torn tail,
derives ``currQueueOffset`` from the last unit's record (capped by the checkpoint) and resumes
reading at the checkpointed read time. Delivery is at-least-once: a slot whose read time was not
checkpointed is delivered again, a record whose enqueue was not checkpointed is enqueued again.

Simplified against 5.1.4 (single-threaded on the injected scheduler): the enqueue get/put and
dequeue get/put threads and their queues/latches are merged into direct calls; ``doPut`` retries
at once instead of sleeping 50 ms; a put that needs a retry (SERVICE_NOT_AVAILABLE) stops the
slot and resumes it later from an in-memory cursor (no duplicates unless the process dies); no
warm-up service, no ``timermetrics`` file, no metrics-revision task, no slave role (this is
always the master: ``shouldRunningDequeue``), no TimerLog expiry task.

Call order: construct (opens the files) → ``load()`` (recover) → ``start()`` → the scheduler runs
the tasks (or call :meth:`enqueue` / :meth:`dequeue` / :meth:`flush` by hand) → ``shutdown()``.
"""

from __future__ import annotations

import logging
import os
import struct
from dataclasses import dataclass, field

from pymq_ref.errors import FormatError
from pymq_ref.formats.hashing import java_string_hash
from pymq_ref.formats.message import MESSAGE_MAGIC_CODE, MessageRecord, decode_record, v4_properties_start
from pymq_ref.formats.properties import REAL_TOPIC, UNIQ_KEY, decode_properties
from pymq_ref.formats.timer import (IGNORE, MAGIC_DEFAULT, MAGIC_DELETE, MAGIC_ROLL, TIMER_LOG_BLANK_MAGIC_CODE,
                                    TIMER_LOG_UNIT_SIZE, TimerCheckpointData, is_magic_ok)
from pymq_ref.store.commit_log import PutMessageStatus
from pymq_ref.store.delay import parse_java_long

from .config import TIMER_BLANK_SLOTS, TimerConfig
from .convert import convert_with_map
from .files import TimerCheckpoint, TimerLog, TimerWheel
from .hook import TIMER_DEL_UNIQKEY, TIMER_OUT_MS, TIMER_TOPIC, handle_schedule_message

log = logging.getLogger(__name__)

INITIAL, RUNNING, SHUTDOWN = 0, 1, 3
PUT_OK, PUT_NEED_RETRY, PUT_NO_RETRY = 0, 1, 2
_BATCH = 64  # records of a slot read and converted ahead of their puts
_HEAD = struct.Struct(">iqi").unpack_from
_DELAY = struct.Struct(">qi").unpack_from
_PY = struct.Struct(">qi").unpack_from
_SIZE_MAGIC_SYSFLAG = struct.Struct(">ii28xi").unpack_from  # TOTALSIZE, MAGICCODE, SYSFLAG (@36)
_INT = struct.Struct(">i").unpack_from


@dataclass
class TimerStats:
    enqueued: int = 0
    rolled: int = 0
    delivered: int = 0
    delivered_at_enqueue: int = 0   # already due when enqueued: put at once
    deleted: int = 0                # suppressed by a delete marker of the same slot
    missing: int = 0
    put_failures: int = 0
    errors: list[str] = field(default_factory=list)


class TimerMessageStore:
    def __init__(self, store, scheduler, config: TimerConfig | None = None, *, root: str | None = None):
        self.store = store
        self.scheduler = scheduler
        self.clock = scheduler.clock
        self.config = c = config or TimerConfig()
        self.root = root or store.config.store_path_root_dir
        self.precision_ms = c.timer_precision_ms
        self.slots_total = c.timer_slots_total
        self.roll_window_slots = c.roll_window_slots
        self.timer_log_file_size = c.mapped_file_size_timer_log
        self.wheel = TimerWheel(os.path.join(self.root, "timerwheel"), self.slots_total, self.precision_ms)
        self.timer_log = TimerLog(os.path.join(self.root, "timerlog"), self.timer_log_file_size)
        self.checkpoint = TimerCheckpoint(os.path.join(self.root, "config", "timercheck"))
        self.state = INITIAL
        self.should_running_dequeue = True
        self.curr_read_time_ms = self.curr_write_time_ms = self.commit_read_time_ms = 0
        self.curr_queue_offset = self.commit_queue_offset = 0
        self.last_commit_read_time_ms = self.last_commit_queue_offset = 0
        self.stats = TimerStats()
        self._timers: list = []
        self._slot_cursor: tuple[int, int] | None = None
        self._topic_hashes: dict[str, int] = {}  # REAL_TOPIC -> String.hashCode (the unit's metrics field)

    # -- helpers ----------------------------------------------------------------------------------
    def format_time_ms(self, t: int) -> int:
        return t // self.precision_ms * self.precision_ms

    def maybe_move_write_time(self) -> None:
        now = self.format_time_ms(self.clock.now_ms())
        if self.curr_write_time_ms < now:
            self.curr_write_time_ms = now

    def move_read_time(self) -> None:
        self.curr_read_time_ms += self.precision_ms
        self.commit_read_time_ms = self.curr_read_time_ms

    def is_reject(self, deliver_ms: int) -> bool:
        """Flow control per slot (default limit Integer.MAX_VALUE: never). Deterministic here: the
        random band between limit and 2×limit is treated as accepted."""
        return self.wheel.get_num(deliver_ms) >= self.config.timer_congest_num_each_slot * 2

    def handle_schedule_message(self, record):
        """The put hook with this wheel's clock and flow control (see :func:`.hook.handle_schedule_message`)."""
        return handle_schedule_message(record, self.clock.now_ms(), self.config, self.is_reject)

    def _message(self, offset_py: int, size_py: int):
        return self.store.look_message_by_offset(offset_py, size_py)

    def _commit_log_reader(self, properties_only: bool = False):
        """``(offset, size) -> MessageRecord | None``: :meth:`MessageStore.look_message_by_offset`
        for one enqueue/dequeue pass — the same answers (None for an unreadable or non-message
        record) without the per-call facade checks; the record is copied out and decoded without spans.

        ``properties_only``: the function answers the record's property map instead (what the
        enqueue needs: ``TIMER_OUT_MS``, ``REAL_TOPIC``, ``TIMER_DEL_UNIQKEY``), read straight from
        the properties field of a plain v1 IPv4 record whose lengths add up; anything else goes
        through :func:`decode_record`, so the answers are the same."""
        read_bytes = self.store.commit_log.queue.read  # None: unreadable, or a file deleted meanwhile

        def read(offset: int, size: int):
            data = read_bytes(offset, size) if size > 0 else None
            if data is None:
                return None
            if properties_only and size >= 91:
                total, magic, sys_flag = _SIZE_MAGIC_SYSFLAG(data)
                if total == size and magic == MESSAGE_MAGIC_CODE and not sys_flag & 0x30:
                    props_at = v4_properties_start(data, _INT(data, 84)[0])  # BODYLENGTH (IPv4 hosts: at 84)
                    if props_at is not None:
                        return decode_properties(data[props_at:].decode("utf-8", "surrogateescape"))
            try:
                rec = decode_record(data, 0, base=offset, with_spans=False)
            except FormatError:
                return None
            if rec.__class__ is not MessageRecord:
                return None
            return rec.properties if properties_only else rec
        return read

    # -- lifecycle --------------------------------------------------------------------------------
    def load(self) -> bool:
        self.timer_log.load()
        self.recover()
        return True

    def start(self) -> None:
        if self.state == RUNNING:
            return
        self.maybe_move_write_time()
        self.state = RUNNING
        self._timers = [self.scheduler.call_later(0, self._enqueue_task),
                        self.scheduler.call_later(0, self._dequeue_task),
                        self.scheduler.call_later(self.config.timer_flush_interval_ms, self._flush_task)]

    def shutdown(self) -> None:
        """As 5.1.4: checkpoint, flush the TimerLog and ``timercheck``; the wheel file is *not*
        flushed (recovery rebuilds what it misses from the TimerLog)."""
        if self.state == SHUTDOWN:
            return
        self.state = SHUTDOWN
        for t in self._timers:
            t.cancel()
        self.prepare_timer_checkpoint()
        self.timer_log.shutdown()
        self.checkpoint.shutdown()
        self.wheel.shutdown(flush=False)

    def _poll_ms(self) -> int:
        return 100 * self.precision_ms // 1000

    def _enqueue_task(self) -> None:
        if self.state != RUNNING:
            return
        worked = False
        try:
            worked = self.enqueue(0)
        except Exception as exc:
            log.error("timer enqueue: %s", exc)
            self.stats.errors.append(f"enqueue: {exc}")
        if not worked:
            self.commit_queue_offset = self.curr_queue_offset
        self.maybe_move_write_time()
        self._timers[0] = self.scheduler.call_later(0 if worked else self._poll_ms(), self._enqueue_task)

    def _dequeue_task(self) -> None:
        if self.state != RUNNING:
            return
        result = -1
        try:
            for _ in range(4096):  # empty slots cost one check each: batch them per callback
                result = self.dequeue()
                if result != 0:
                    break
        except Exception as exc:
            log.error("timer dequeue: %s", exc)
            self.stats.errors.append(f"dequeue: {exc}")
        self._timers[1] = self.scheduler.call_later(self._poll_ms() if result == -1 else 0, self._dequeue_task)

    def _flush_task(self) -> None:
        if self.state != RUNNING:
            return
        self.flush()
        self._timers[2] = self.scheduler.call_later(self.config.timer_flush_interval_ms, self._flush_task)

    def flush(self) -> None:
        """``TimerFlushService`` once: checkpoint values, TimerLog, wheel, ``timercheck``."""
        self.prepare_timer_checkpoint()
        self.timer_log.flush()
        self.wheel.flush()
        self.checkpoint.flush()

    def prepare_timer_checkpoint(self) -> None:
        cp = self.checkpoint.data
        state_version, timestamp, counter = cp.state_version, cp.timestamp, cp.counter
        master = cp.master_timer_queue_offset
        if self.should_running_dequeue:
            master = self.commit_queue_offset
            if (self.commit_read_time_ms != self.last_commit_read_time_ms
                    or self.commit_queue_offset != self.last_commit_queue_offset):
                timestamp, counter = self.clock.now_ms(), counter + 1  # DataVersion.nextVersion(0)
                self.last_commit_read_time_ms = self.commit_read_time_ms
                self.last_commit_queue_offset = self.commit_queue_offset
        self.checkpoint.data = TimerCheckpointData(
            self.commit_read_time_ms, self.timer_log.queue.flushed_where, min(self.commit_queue_offset, master),
            master, state_version, timestamp, counter)

    # -- recovery ---------------------------------------------------------------------------------
    def recover(self) -> None:
        cp = self.checkpoint.data
        last_flush_pos = cp.last_timer_log_flush_pos
        if self.timer_log.queue.last is not None:
            last_flush_pos -= self.timer_log_file_size
        process_offset = self.recover_and_revise(max(0, last_flush_pos), True)
        self.timer_log.queue.set_flushed_where(process_offset)
        queue_offset = self.revise_queue_offset(process_offset)
        self.curr_queue_offset = cp.last_timer_queue_offset if queue_offset == -1 else queue_offset + 1
        self.curr_queue_offset = min(self.curr_queue_offset, cp.master_timer_queue_offset)
        p = self.precision_ms
        floor = self.format_time_ms(self.clock.now_ms()) - self.slots_total * p + TIMER_BLANK_SLOTS * p
        self.curr_read_time_ms = max(cp.last_read_time_ms, floor)
        min_first = self.wheel.check_phy_pos(self.curr_read_time_ms, process_offset)
        if min_first < process_offset:
            log.warning("timer recheck because of minFirst %d < processOffset %d", min_first, process_offset)
            self.recover_and_revise(min_first, False)
        self.commit_read_time_ms = self.curr_read_time_ms
        self.commit_queue_offset = self.curr_queue_offset
        self.prepare_timer_checkpoint()

    def recover_and_revise(self, begin: int, check: bool) -> int:
        """Replay TimerLog units from the file holding ``begin``: each valid unit becomes its slot's
        ``last_pos``. With ``check`` the scan stops at the first bad unit and the TimerLog is
        truncated there. Returns the offset where valid data ends."""
        files = self.timer_log.queue.files
        if not files:
            return 0
        index = len(files) - 1
        while index >= 0 and begin < files[index].file_from_offset:
            index -= 1
        index = max(index, 0)
        check_offset = files[index].file_from_offset
        for mf in files[index:]:
            limit = mf.file_size if check else mf.read_position
            mm, position, stop = mf.mm, 0, False
            while position < limit:
                if limit - position < 16:
                    stop = True
                    break
                size, _prev, magic = _HEAD(mm, position)
                if magic == TIMER_LOG_BLANK_MAGIC_CODE:
                    break
                if check and (not is_magic_ok(magic) or size != TIMER_LOG_UNIT_SIZE):
                    stop = True
                    break
                if limit - position < 28:
                    stop = True
                    break
                write_ms, delta = _DELAY(mm, position + 16)
                if size == TIMER_LOG_UNIT_SIZE and is_magic_ok(magic):
                    self.wheel.revise_slot(write_ms + delta, IGNORE, mf.file_from_offset + position, True)
                position += TIMER_LOG_UNIT_SIZE
            check_offset = mf.file_from_offset + position
            if stop:
                break
        if check:
            self.timer_log.queue.truncate_dirty_files(check_offset)
        return check_offset

    def revise_queue_offset(self, process_offset: int) -> int:
        """The timer-topic queue offset of the record behind the last TimerLog unit, or -1."""
        at = process_offset - (TIMER_LOG_UNIT_SIZE - 28)
        located = self.timer_log.buffer_at(at) if at >= 0 else None
        if located is None:
            return -1
        mm, pos = located
        if pos + 12 > len(mm):
            return -1
        offset_py, size_py = _PY(mm, pos)
        msg = self._message(offset_py, size_py) if size_py > 0 else None
        if msg is None:
            return -1
        cq = self.store.find_consume_queue(TIMER_TOPIC, msg.queue_id, create=False)
        if cq is None:
            return msg.queue_offset
        tmp = msg.queue_offset
        for _ in range(20000):
            if tmp < 0:
                break
            unit = cq.get_unit(tmp)
            if unit is not None and unit.phy_offset == offset_py and unit.size == size_py:
                return tmp
            tmp -= 1
        return msg.queue_offset

    # -- enqueue ----------------------------------------------------------------------------------
    def enqueue(self, queue_id: int = 0) -> bool:
        """Move records of the timer topic's queue into the wheel; True if any unit was read."""
        if self.config.timer_stop_enqueue or self.state != RUNNING:
            return False
        cq = self.store.find_consume_queue(TIMER_TOPIC, queue_id, create=False)
        if cq is None:
            return False
        if self.curr_queue_offset < cq.min_offset_in_queue:
            self.curr_queue_offset = cq.min_offset_in_queue
        offset = self.curr_queue_offset
        read_properties = self._commit_log_reader(properties_only=True)
        read = 0
        last_queue_offset = None
        for logical, phy, size, _tags in cq.iter_units_from(offset):
            props = read_properties(phy, size)
            if props is None:
                self.stats.missing += 1
            else:
                raw = props.get(TIMER_OUT_MS)
                delayed = parse_java_long(raw or "")
                if delayed is None:
                    raise ValueError(f"timer record at {phy}: TIMER_OUT_MS {raw!r}")
                self.put_message_to_timer_wheel(phy, size, delayed, props)
                last_queue_offset = logical
            self.curr_queue_offset = logical
            read += 1
        self.curr_queue_offset = offset + read
        if last_queue_offset is not None:
            self.commit_queue_offset = last_queue_offset  # as the 5.x put service: the last one handled
        return read > 0

    def put_message_to_timer_wheel(self, offset_py: int, size_py: int, delayed: int, properties,
                                   enqueue_time: int | None = None) -> None:
        """File the record at ``offset_py`` (``properties``: its property map): delivered at once
        when already behind the write time, else a TimerLog unit. ``enqueue_time`` (the
        TimerRequest's, for the at-once delivery) defaults to the clock's now."""
        if self.should_running_dequeue and delayed < self.curr_write_time_ms:
            if enqueue_time is None:
                enqueue_time = self.clock.now_ms()
            msg = self._message(offset_py, size_py)
            if msg is None:
                self.stats.missing += 1
                return
            if self.dequeue_put(msg, enqueue_time, MAGIC_DEFAULT) == PUT_NEED_RETRY:
                raise RuntimeError("store not available for an already-due timer")
            self.stats.delivered_at_enqueue += 1
            return
        if not self.do_enqueue(offset_py, size_py, delayed, properties):
            raise RuntimeError("TimerLog append failed")

    def do_enqueue(self, offset_py: int, size_py: int, delayed: int, props) -> bool:
        write_ms = self.curr_write_time_ms
        window = self.roll_window_slots * self.precision_ms
        magic = MAGIC_DEFAULT
        if delayed - write_ms >= window:
            magic |= MAGIC_ROLL
            if delayed - write_ms - window < self.roll_window_slots // 3 * self.precision_ms:
                delayed = write_ms + self.roll_window_slots // 2 * self.precision_ms
            else:
                delayed = write_ms + window
            self.stats.rolled += 1
        is_delete = TIMER_DEL_UNIQKEY in props
        if is_delete:
            magic |= MAGIC_DELETE
        real_topic = props.get(REAL_TOPIC)
        if real_topic:
            topic_hash = self._topic_hashes.get(real_topic)
            if topic_hash is None:
                topic_hash = java_string_hash(real_topic)
                if len(self._topic_hashes) < 4096:
                    self._topic_hashes[real_topic] = topic_hash
        else:
            topic_hash = 0
        wheel = self.wheel
        slot = wheel.slot_values(delayed)
        first, last, num, slot_magic = slot if slot is not None else (-1, -1, 0, 0)
        pos = self.timer_log.append_unit(last, magic, write_ms, delayed - write_ms, offset_py, size_py, topic_hash)
        wheel.put_slot(delayed, pos if first == -1 else first, pos, num - 1 if is_delete else num + 1, slot_magic)
        self.stats.enqueued += 1
        return True

    # -- dequeue ----------------------------------------------------------------------------------
    def dequeue(self) -> int:
        """One slot: -1 nothing to do now (or retry later), 0 empty slot skipped, 1 slot delivered."""
        if self.config.timer_stop_dequeue or self.state != RUNNING or not self.should_running_dequeue:
            return -1
        read_ms = self.curr_read_time_ms
        if read_ms >= self.curr_write_time_ms:
            return -1
        slot = self.wheel.slot_values(read_ms)
        if slot is None:
            self.move_read_time()
            return 0
        units = self.timer_log.read_chain(slot[1])  # (offset_py, size_py, enqueue ms, magic), newest first
        units.reverse()  # delivered oldest first
        read_message = self._commit_log_reader()
        delete_keys = set()
        if any(u[3] & MAGIC_DELETE for u in units):  # delete markers of this slot act first
            normals = []
            for unit in units:
                magic = unit[3]
                if magic & MAGIC_DELETE and not magic & MAGIC_ROLL:
                    msg = read_message(unit[0], unit[1])
                    if msg is not None and TIMER_DEL_UNIQKEY in msg.properties:
                        delete_keys.add(msg.properties[TIMER_DEL_UNIQKEY])
                else:
                    normals.append(unit)
        else:
            normals = units
        start = 0
        if self._slot_cursor is not None and self._slot_cursor[0] == read_ms:
            start = self._slot_cursor[1]
        stats, now_ms, put_converted = self.stats, self.clock.now_ms, self._put_converted
        for batch_start in range(start, len(normals), _BATCH):
            # read and convert a batch first, then put it (5.x: the dequeue-get thread converts,
            # the dequeue-put thread puts): the reads jump around the CommitLog, the puts append
            # to its end — grouping each kind keeps the caches warm for it
            pending = []
            for i, unit in enumerate(normals[batch_start:batch_start + _BATCH], batch_start):
                msg = read_message(unit[0], unit[1])
                if msg is None:
                    stats.missing += 1
                    continue
                if delete_keys and msg.properties.get(UNIQ_KEY) in delete_keys:
                    stats.deleted += 1
                    continue
                roll = unit[3] & MAGIC_ROLL != 0
                pending.append((i, *convert_with_map(msg, unit[2], roll, now_ms()), roll))
            for i, message, text_map, roll in pending:
                if put_converted(message, roll, text_map) == PUT_NEED_RETRY:
                    self._slot_cursor = (read_ms, i)
                    return -1
        self._slot_cursor = None
        self.move_read_time()
        return 1

    def dequeue_put(self, msg, enqueue_time: int, magic: int) -> int:
        """Convert the timer record ``msg`` and put it (its real topic, or the timer topic when rolled)."""
        roll = magic & MAGIC_ROLL != 0
        message, text_map = convert_with_map(msg, enqueue_time, roll, self.clock.now_ms())
        return self._put_converted(message, roll, text_map)

    def _put_converted(self, message, roll: bool, stored_properties: dict | None = None) -> int:
        result = self.do_put(message, roll, stored_properties)
        if result == PUT_OK:
            if not roll:
                self.stats.delivered += 1
        else:
            self.stats.put_failures += 1
        return result

    def do_put(self, message, roll: bool, stored_properties: dict | None = None) -> int:
        if not roll and TIMER_DEL_UNIQKEY in message.properties:
            return PUT_NO_RETRY  # a delete marker is never delivered
        for _ in range(4):
            status = self.store.put_message(message, stored_properties=stored_properties).status
            if status is PutMessageStatus.PUT_OK:
                return PUT_OK
            if status is PutMessageStatus.SERVICE_NOT_AVAILABLE:
                return PUT_NEED_RETRY
            if status in (PutMessageStatus.MESSAGE_ILLEGAL, PutMessageStatus.PROPERTIES_SIZE_EXCEEDED):
                return PUT_NO_RETRY
        return PUT_NO_RETRY
