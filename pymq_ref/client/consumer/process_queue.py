"""``ProcessQueue``: the messages a push consumer has pulled from one queue and not yet finished
(``client/impl/consumer/ProcessQueue.java``).

It decides three things the rest of the consumer only obeys:

* **flow control** — ``msg_count``, ``msg_size`` (body bytes) and :meth:`max_span` (last − first
  cached offset) against the consumer's thresholds;
* **the offset to commit** — :meth:`remove_messages` returns the smallest offset still cached, or
  ``max offset seen + 1`` when nothing is left: a slow message holds the committed offset back, so a
  crash re-delivers rather than loses (at-least-once);
* **orderly consumption** — :meth:`take_messages` moves the first messages to a "consuming" map,
  :meth:`commit` finishes them, :meth:`make_message_to_consume_again` puts them back; the broker
  lock's state (``locked``, ``last_lock_timestamp``) lives here too.

Pure state; times come from the caller (milliseconds). No I/O, no locks (one event loop owns it).
"""

from __future__ import annotations

from bisect import bisect_left, insort

REBALANCE_LOCK_MAX_LIVE_TIME = 30_000  # rocketmq.client.rebalance.lockMaxLiveTime
REBALANCE_LOCK_INTERVAL = 20_000  # rocketmq.client.rebalance.lockInterval
PULL_MAX_IDLE_TIME = 120_000  # rocketmq.client.pull.pullMaxIdleTime


class ProcessQueue:
    def __init__(self, now: int = 0):
        self._msgs: dict[int, object] = {}
        self._keys: list[int] = []  # sorted offsets of _msgs
        self._consuming: dict[int, object] = {}  # orderly: taken, not yet committed
        self.msg_count = 0
        self.msg_size = 0
        self.queue_offset_max = 0
        self.dropped = False
        self.consuming = False  # orderly: a consume task is scheduled or running
        self.locked = False
        self.last_lock_timestamp = now
        self.last_pull_timestamp = now
        self.last_consume_timestamp = now
        self.try_unlock_times = 0
        self.msg_acc_cnt = 0

    # -- pulled messages in ------------------------------------------------------------------
    def put_messages(self, msgs) -> bool:
        """Cache pulled messages; True when an orderly consumer should schedule a consume task."""
        added = 0
        for m in msgs:
            off = m.queue_offset
            if off in self._msgs:
                continue
            self._msgs[off] = m
            if not self._keys or off > self._keys[-1]:
                self._keys.append(off)
            else:
                insort(self._keys, off)
            added += 1
            self.msg_size += len(m.body)
            self.queue_offset_max = off
        self.msg_count += added
        dispatch = False
        if self._msgs and not self.consuming:
            dispatch = True
            self.consuming = True
        if msgs:
            last = msgs[-1]
            max_offset = last.properties.get("MAX_OFFSET")
            if max_offset is not None:
                acc = int(max_offset) - last.queue_offset
                if acc > 0:
                    self.msg_acc_cnt = acc
        return dispatch

    def max_span(self) -> int:
        return self._keys[-1] - self._keys[0] if self._keys else 0

    @property
    def cached_offsets(self) -> list[int]:
        return list(self._keys)

    # -- concurrent consumption --------------------------------------------------------------
    def remove_messages(self, msgs, now: int = 0) -> int:
        """Forget consumed messages; the offset to commit (see the module docstring), −1 if none was cached."""
        result = -1
        if self._msgs:
            result = self.queue_offset_max + 1
            removed = 0
            for m in msgs:
                prev = self._msgs.pop(m.queue_offset, None)
                if prev is not None:
                    i = bisect_left(self._keys, m.queue_offset)
                    del self._keys[i]
                    removed += 1
                    self.msg_size -= len(prev.body)
            self.msg_count -= removed
            if self._keys:
                result = self._keys[0]
        self.last_consume_timestamp = now
        return result

    # -- orderly consumption -----------------------------------------------------------------
    def take_messages(self, batch_size: int, now: int = 0) -> list:
        self.last_consume_timestamp = now
        taken = []
        while self._keys and len(taken) < batch_size:
            off = self._keys.pop(0)
            m = self._msgs.pop(off)
            self._consuming[off] = m
            taken.append(m)
        if not taken:
            self.consuming = False
        return taken

    def commit(self) -> int:
        """Finish the taken messages; the offset to commit (last taken + 1), −1 if none."""
        if not self._consuming:
            return -1
        offset = max(self._consuming) + 1
        self.msg_count -= len(self._consuming)
        self.msg_size -= sum(len(m.body) for m in self._consuming.values())
        self._consuming.clear()
        return offset

    def make_message_to_consume_again(self, msgs) -> None:
        for m in msgs:
            if self._consuming.pop(m.queue_offset, None) is not None:
                self._msgs[m.queue_offset] = m
                insort(self._keys, m.queue_offset)

    def expired_messages(self, now: int, timeout_ms: int, limit: int = 16) -> list:
        """``cleanExpiredMsg``'s pick: up to ``limit`` of the oldest cached messages whose consumption
        started (property CONSUME_START_TIME) more than ``timeout_ms`` ago, oldest first."""
        out = []
        for off in self._keys[:limit]:
            started = self._msgs[off].properties.get("CONSUME_START_TIME")
            if started is None or now - int(started) <= timeout_ms:
                break
            out.append(self._msgs[off])
        return out

    def has_temp_message(self) -> bool:
        return bool(self._msgs)

    def clear(self) -> None:
        self._msgs.clear()
        self._keys.clear()
        self._consuming.clear()
        self.msg_count = self.msg_size = 0
        self.queue_offset_max = 0

    # -- lock and liveness -------------------------------------------------------------------
    def is_lock_expired(self, now: int) -> bool:
        return now - self.last_lock_timestamp > REBALANCE_LOCK_MAX_LIVE_TIME

    def is_pull_expired(self, now: int) -> bool:
        return now - self.last_pull_timestamp > PULL_MAX_IDLE_TIME

    def __repr__(self) -> str:
        return (f"ProcessQueue(count={self.msg_count}, size={self.msg_size}, span={self.max_span()}, "
                f"locked={self.locked}, dropped={self.dropped})")
