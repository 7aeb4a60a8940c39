"""``TimerMessageStore`` (5.1.4): arbitrary delivery times on a timing wheel (``delay.md`` §7).

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

from pymq_ref.formats.hashing import java_string_hash
from pymq_ref.formats.properties import REAL_TOPIC
from pymq_ref.formats.timer import (IGNORE, MAGIC_DEFAULT, MAGIC_DELETE, MAGIC_ROLL, TIMER_LOG_BLANK_MAGIC_CODE,
                                    TIMER_LOG_UNIT, TIMER_LOG_UNIT_SIZE, TimerCheckpointData, is_magic_ok)
from pymq_ref.store.commit_log import PutMessageStatus
from pymq_ref.store.delay import parse_java_long

from .config import TIMER_BLANK_SLOTS, TimerConfig
from .convert import convert
from .files import TimerCheckpoint, TimerLog, TimerWheel
from .hook import TIMER_DEL_UNIQKEY, TIMER_OUT_MS, TIMER_TOPIC, handle_schedule_message

log = logging.getLogger(__name__)

INITIAL, RUNNING, SHUTDOWN = 0, 1, 3
PUT_OK, PUT_NEED_RETRY, PUT_NO_RETRY = 0, 1, 2
_UNIT = TIMER_LOG_UNIT.unpack_from
_HEAD = struct.Struct(">iqi").unpack_from
_DELAY = struct.Struct(">qi").unpack_from
_PY = struct.Struct(">qi").unpack_from


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
        read = 0
        last_queue_offset = None
        for logical, phy, size, _tags in cq.iter_units_from(offset):
            msg = self._message(phy, size)
            if msg is None:
                self.stats.missing += 1
            else:
                delayed = parse_java_long(msg.properties.get(TIMER_OUT_MS) or "")
                if delayed is None:
                    raise ValueError(f"timer record at {phy}: TIMER_OUT_MS {msg.properties.get(TIMER_OUT_MS)!r}")
                self.put_message_to_timer_wheel(phy, size, delayed, self.clock.now_ms(), msg)
                last_queue_offset = logical
            self.curr_queue_offset = logical
            read += 1
        self.curr_queue_offset = offset + read
        if last_queue_offset is not None:
            self.commit_queue_offset = last_queue_offset  # as the 5.x put service: the last one handled
        return read > 0

    def put_message_to_timer_wheel(self, offset_py: int, size_py: int, delayed: int, enqueue_time: int, msg) -> None:
        if self.should_running_dequeue and delayed < self.curr_write_time_ms:
            if self.dequeue_put(msg, enqueue_time, MAGIC_DEFAULT) == PUT_NEED_RETRY:
                raise RuntimeError("store not available for an already-due timer")
            self.stats.delivered_at_enqueue += 1
            return
        if not self.do_enqueue(offset_py, size_py, delayed, msg):
            raise RuntimeError("TimerLog append failed")

    def do_enqueue(self, offset_py: int, size_py: int, delayed: int, msg) -> bool:
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
        props = msg.properties
        is_delete = TIMER_DEL_UNIQKEY in props
        if is_delete:
            magic |= MAGIC_DELETE
        real_topic = props.get(REAL_TOPIC)
        slot = self.wheel.get_slot(delayed)
        unit = TIMER_LOG_UNIT.pack(TIMER_LOG_UNIT_SIZE, slot.last_pos, magic, write_ms, delayed - write_ms,
                                   offset_py, size_py, java_string_hash(real_topic) if real_topic else 0, 0)
        pos = self.timer_log.append(unit)
        self.wheel.put_slot(delayed, pos if slot.first_pos == -1 else slot.first_pos, pos,
                            slot.num - 1 if is_delete else slot.num + 1, slot.magic)
        self.stats.enqueued += 1
        return True

    # -- dequeue ----------------------------------------------------------------------------------
    def dequeue(self) -> int:
        """One slot: -1 nothing to do now (or retry later), 0 empty slot skipped, 1 slot delivered."""
        if self.config.timer_stop_dequeue or self.state != RUNNING or not self.should_running_dequeue:
            return -1
        if self.curr_read_time_ms >= self.curr_write_time_ms:
            return -1
        slot = self.wheel.get_slot(self.curr_read_time_ms)
        if slot.time_ms == -1:
            self.move_read_time()
            return 0
        deletes: list[tuple] = []
        normals: list[tuple] = []
        pos = slot.last_pos
        while pos != -1:
            located = self.timer_log.buffer_at(pos)
            if located is None:
                break
            mm, p = located
            _size, prev, magic, enq, delta, off_py, size_py, _h, _r = _UNIT(mm, p)
            req = (off_py, size_py, enq, magic)
            if magic & MAGIC_DELETE and not magic & MAGIC_ROLL:
                deletes.append(req)
            else:
                normals.append(req)
            pos = prev
        normals.reverse()  # oldest first (the chain runs newest to oldest)
        delete_keys = set()
        for off_py, size_py, _enq, _magic in deletes:
            msg = self._message(off_py, size_py)
            if msg is not None and TIMER_DEL_UNIQKEY in msg.properties:
                delete_keys.add(msg.properties[TIMER_DEL_UNIQKEY])
        start = 0
        if self._slot_cursor is not None and self._slot_cursor[0] == self.curr_read_time_ms:
            start = self._slot_cursor[1]
        for i in range(start, len(normals)):
            off_py, size_py, enq, magic = normals[i]
            msg = self._message(off_py, size_py)
            if msg is None:
                self.stats.missing += 1
                continue
            uniq = msg.properties.get("UNIQ_KEY")
            if uniq is not None and uniq in delete_keys:
                self.stats.deleted += 1
                continue
            if self.dequeue_put(msg, enq, magic) == PUT_NEED_RETRY:
                self._slot_cursor = (self.curr_read_time_ms, i)
                return -1
        self._slot_cursor = None
        self.move_read_time()
        return 1

    def dequeue_put(self, msg, enqueue_time: int, magic: int) -> int:
        roll = bool(magic & MAGIC_ROLL)
        inner = convert(msg, enqueue_time, roll, self.clock.now_ms())
        result = self.do_put(inner, roll)
        if result == PUT_OK:
            if not roll:
                self.stats.delivered += 1
        else:
            self.stats.put_failures += 1
        return result

    def do_put(self, message, roll: bool) -> int:
        if not roll and TIMER_DEL_UNIQKEY in message.properties:
            return PUT_NO_RETRY  # a delete marker is never delivered
        for _ in range(4):
            status = self.store.put_message(message).status
            if status is PutMessageStatus.PUT_OK:
                return PUT_OK
            if status is PutMessageStatus.SERVICE_NOT_AVAILABLE:
                return PUT_NEED_RETRY
            if status in (PutMessageStatus.MESSAGE_ILLEGAL, PutMessageStatus.PROPERTIES_SIZE_EXCEEDED):
                return PUT_NO_RETRY
        return PUT_NO_RETRY
