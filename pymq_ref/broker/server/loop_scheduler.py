"""``LoopScheduler``: the broker facade's :class:`~pymq_ref.broker.scheduler.Scheduler` on an asyncio loop.

The broker server runs every service callback (long-polling wake-ups, transaction checks, delay
delivery, offset persistence) on the event loop that serves the sockets, so the facade is only
ever touched from one thread and a held pull can be answered straight from its callback. The
store's own threads (reput, flush) may schedule from elsewhere: ``call_at`` is thread-safe
(``call_soon_threadsafe``). A failing callback is logged and does not stop the others.

Must not run callbacks before :meth:`bind` nor after :meth:`close`.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
from typing import Callable

from pymq_ref.broker.scheduler import Timer
from pymq_ref.store.clock import Clock, SystemClock

log = logging.getLogger("pymq_ref.broker.server")


class LoopScheduler:
    def __init__(self, clock: Clock | None = None):
        self.clock = clock or SystemClock()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._seq = itertools.count()
        self._closed = False
        self._handles: set[asyncio.TimerHandle] = set()
        self.errors = 0

    def bind(self, loop: asyncio.AbstractEventLoop) -> "LoopScheduler":
        self.loop = loop
        self._thread = threading.get_ident() if loop.is_running() else None
        return self

    def call_at(self, due_ms: int, fn: Callable[[], object]) -> Timer:
        timer = Timer(int(due_ms), next(self._seq), fn)
        if self._closed or self.loop is None:
            timer.cancel()
            return timer
        try:
            if self._on_loop_thread():
                self._arm(timer)
            else:
                self.loop.call_soon_threadsafe(self._arm, timer)
        except RuntimeError:  # the loop is closed: nothing runs any more
            timer.cancel()
        return timer

    def call_later(self, delay_ms: int, fn: Callable[[], object]) -> Timer:
        return self.call_at(self.clock.now_ms() + max(0, int(delay_ms)), fn)

    def _on_loop_thread(self) -> bool:
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:
            return False

    def _arm(self, timer: Timer) -> None:
        if timer.cancelled or self._closed:
            return
        delay = max(0.0, (timer.due_ms - self.clock.now_ms()) / 1000)
        if delay == 0:
            self.loop.call_soon(self._run, timer, None)
            return
        handle = self.loop.call_later(delay, lambda: self._run(timer, handle))
        self._handles.add(handle)

    def _run(self, timer: Timer, handle) -> None:
        if handle is not None:
            self._handles.discard(handle)
        if timer.cancelled or self._closed:
            return
        try:
            timer.fn()
        except Exception:
            self.errors += 1
            log.exception("broker service callback failed")

    def close(self) -> None:
        """Drop everything still scheduled (the broker is stopping)."""
        self._closed = True
        for handle in list(self._handles):
            handle.cancel()
        self._handles.clear()
