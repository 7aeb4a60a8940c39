"""Schedulers: when the broker's periodic services run (delay delivery, transaction checks,
long-polling timeouts, offset persistence ...).

Every service takes a :class:`Scheduler` and never sleeps or starts threads itself, so the same
code runs deterministically in tests and in the book (:class:`ManualScheduler` over a
:class:`~pymq_ref.store.clock.ManualClock`: nothing happens until ``advance``) and in real time
(:class:`ThreadScheduler` over a :class:`~pymq_ref.store.clock.SystemClock`).

Legal call order: create, ``call_at``/``call_later``/``cancel`` any number of times, then
``advance``/``run_due`` (manual) or ``start`` … ``stop`` (threaded). Callbacks run one at a
time, in (due time, scheduling order) order; a callback may schedule further callbacks.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from dataclasses import dataclass, field
from typing import Callable, Protocol

from ..store.clock import Clock, ManualClock, SystemClock


@dataclass(order=True)
class Timer:
    """A scheduled callback; ``cancel()`` it to drop it."""

    due_ms: int
    seq: int
    fn: Callable[[], object] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.cancelled = True


class Scheduler(Protocol):
    clock: Clock

    def call_at(self, due_ms: int, fn: Callable[[], object]) -> Timer: ...

    def call_later(self, delay_ms: int, fn: Callable[[], object]) -> Timer: ...


class _Queue:
    def __init__(self, clock: Clock):
        self.clock = clock
        self._heap: list[Timer] = []
        self._seq = itertools.count()
        self._lock = threading.RLock()

    def call_at(self, due_ms: int, fn: Callable[[], object]) -> Timer:
        timer = Timer(int(due_ms), next(self._seq), fn)
        with self._lock:
            heapq.heappush(self._heap, timer)
        self._wake()
        return timer

    def call_later(self, delay_ms: int, fn: Callable[[], object]) -> Timer:
        return self.call_at(self.clock.now_ms() + max(0, int(delay_ms)), fn)

    def pending(self) -> int:
        """Callbacks scheduled and not cancelled."""
        with self._lock:
            return sum(not t.cancelled for t in self._heap)

    def next_due(self) -> int | None:
        with self._lock:
            while self._heap and self._heap[0].cancelled:
                heapq.heappop(self._heap)
            return self._heap[0].due_ms if self._heap else None

    def _pop_due(self, now: int) -> Timer | None:
        with self._lock:
            while self._heap and (self._heap[0].cancelled or self._heap[0].due_ms <= now):
                timer = heapq.heappop(self._heap)
                if not timer.cancelled:
                    return timer
            return None

    def _wake(self) -> None:
        pass


class ManualScheduler(_Queue):
    """Deterministic: callbacks run only inside :meth:`run_due` and :meth:`advance`."""

    def __init__(self, clock: ManualClock | None = None):
        super().__init__(clock or ManualClock())

    def run_due(self) -> int:
        """Run every callback due at the current time (including ones they schedule for now)."""
        ran = 0
        while (timer := self._pop_due(self.clock.now_ms())) is not None:
            timer.fn()
            ran += 1
        return ran

    def advance(self, ms: int) -> int:
        """Move the clock forward by ``ms``, stopping at each due time to run what is due there."""
        target = self.clock.now_ms() + ms
        ran = self.run_due()
        while (due := self.next_due()) is not None and due <= target:
            if due > self.clock.now_ms():
                self.clock.set(due)
            ran += self.run_due()
        self.clock.set(max(target, self.clock.now_ms()))
        return ran + self.run_due()


class ThreadScheduler(_Queue):
    """Real time: one daemon thread runs callbacks when they fall due. ``stop()`` it when done."""

    def __init__(self, clock: Clock | None = None):
        super().__init__(clock or SystemClock())
        self._cond = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._stopped = False
        self.errors: list[BaseException] = []

    def start(self) -> "ThreadScheduler":
        self._thread = threading.Thread(target=self._run, name="pymq-scheduler", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    def _wake(self) -> None:
        if hasattr(self, "_cond"):
            with self._cond:
                self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._stopped:
                    return
                due = self.next_due()
                now = self.clock.now_ms()
                if due is None or due > now:
                    self._cond.wait(None if due is None else (due - now) / 1000)
                    continue
                timer = self._pop_due(now)
            if timer is not None:
                try:
                    timer.fn()
                except BaseException as exc:  # a failing service must not kill the scheduler
                    self.errors.append(exc)
