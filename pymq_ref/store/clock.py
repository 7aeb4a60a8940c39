"""Clocks: the only source of time for the store.

Everything that stamps or compares times (store timestamps, index file names, retention, flush
intervals in the deterministic mode) asks a :class:`Clock`, so that tests and the book can
produce the same bytes on every run with a :class:`ManualClock`.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    def now_ms(self) -> int:
        """Milliseconds since the epoch."""
        ...


class SystemClock:
    """Wall-clock time (``time.time_ns() // 1_000_000``)."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def __repr__(self) -> str:
        return "SystemClock()"


class ManualClock:
    """A clock that only moves when told to.

    ``step_ms`` > 0 makes every reading advance the clock afterwards (handy to give each put
    a distinct store timestamp). Thread-safe.
    """

    def __init__(self, start_ms: int = 1_700_000_000_000, step_ms: int = 0):
        self._now = start_ms
        self.step_ms = step_ms
        self._lock = threading.Lock()

    def now_ms(self) -> int:
        with self._lock:
            now = self._now
            self._now += self.step_ms
            return now

    def advance(self, ms: int) -> int:
        with self._lock:
            self._now += ms
            return self._now

    def set(self, now_ms: int) -> None:
        with self._lock:
            self._now = now_ms

    def __repr__(self) -> str:
        return f"ManualClock({self._now}, step_ms={self.step_ms})"
