"""``RebalanceLockManager`` (4.9.4): which client of a consumer group holds each queue, for orderly
consumption (LOCK_BATCH_MQ / UNLOCK_BATCH_MQ).

A lock is held by one client id; it lives ``lock_max_live_time_ms`` (60 s,
``rocketmq.broker.rebalance.lockMaxLiveTime``) after its holder last locked it, and an expired lock
is taken over by whoever asks next. Locking again renews. Unlocking releases only the caller's own
locks. In memory only (a restarted broker starts with no locks, as 4.9.4).
Pure: the caller passes the time; no I/O, no threads (callers serialise; the broker server runs it
on its loop).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, TypeVar

REBALANCE_LOCK_MAX_LIVE_TIME_MS = 60_000

Q = TypeVar("Q")  # a message queue (hashable)


@dataclass
class LockEntry:
    client_id: str
    last_update_timestamp: int

    def is_expired(self, now_ms: int, max_live_ms: int) -> bool:
        return now_ms - self.last_update_timestamp > max_live_ms


class RebalanceLockManager:
    def __init__(self, lock_max_live_time_ms: int = REBALANCE_LOCK_MAX_LIVE_TIME_MS):
        self.max_live = lock_max_live_time_ms
        self.table: dict[str, dict] = {}  # group -> {mq: LockEntry}

    def is_locked(self, group: str, mq, client_id: str, now_ms: int) -> bool:
        entry = self.table.get(group, {}).get(mq)
        if entry is not None and entry.client_id == client_id and not entry.is_expired(now_ms, self.max_live):
            entry.last_update_timestamp = now_ms
            return True
        return False

    def try_lock_batch(self, group: str, mqs: Iterable[Q], client_id: str, now_ms: int) -> list[Q]:
        """``tryLockBatch``: the queues now locked by ``client_id`` (renewed, new, or taken over)."""
        locked, not_locked = [], []
        for mq in mqs:
            (locked if self.is_locked(group, mq, client_id, now_ms) else not_locked).append(mq)
        if not_locked:
            group_table = self.table.setdefault(group, {})
            for mq in not_locked:
                entry = group_table.get(mq)
                if entry is None or entry.client_id == client_id or entry.is_expired(now_ms, self.max_live):
                    group_table[mq] = LockEntry(client_id, now_ms)
                    locked.append(mq)
        return locked

    def unlock_batch(self, group: str, mqs: Iterable, client_id: str) -> None:
        group_table = self.table.get(group)
        if not group_table:
            return
        for mq in mqs:
            entry = group_table.get(mq)
            if entry is not None and entry.client_id == client_id:
                del group_table[mq]

    def holder(self, group: str, mq, now_ms: int) -> str | None:
        """Who holds ``mq`` now (None when free or expired)."""
        entry = self.table.get(group, {}).get(mq)
        return None if entry is None or entry.is_expired(now_ms, self.max_live) else entry.client_id
