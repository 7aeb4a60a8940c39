"""``QueueLockManager`` (5.x ``PopMessageProcessor.QueueLockManager``): a try-lock per POP key.

The key is ``topic@group@queueId``. A POP that cannot take a queue's lock skips that queue (it
never waits), so two consumers of one group never hand out the same offsets. A lock held longer
than ``lock_time`` is considered abandoned and may be taken. Thread-safe; no I/O.
"""

from __future__ import annotations

import threading

from pymq_ref.store.clock import Clock


def lock_key(topic: str, group: str, queue_id: int) -> str:
    return f"{topic}@{group}@{queue_id}"


class QueueLockManager:
    def __init__(self, clock: Clock, lock_time: int = 5000):
        self.clock = clock
        self.lock_time = lock_time
        self._held: dict[str, int] = {}
        self._lock = threading.Lock()

    def try_lock(self, key: str) -> bool:
        now = self.clock.now_ms()
        with self._lock:
            since = self._held.get(key)
            if since is not None and now - since <= self.lock_time:
                return False
            self._held[key] = now
            return True

    def unlock(self, key: str) -> None:
        with self._lock:
            self._held.pop(key, None)

    def is_locked(self, key: str) -> bool:
        with self._lock:
            return key in self._held
