"""Flush services: how appended bytes reach the disk (``storage.md`` §12).

* :class:`GroupCommitService` (SYNC_FLUSH): each waiting put enqueues "flushed >= my end";
  one thread swaps the request list, flushes once for all of them (twice if a file rolled),
  and wakes them. A request not served within ``sync_flush_timeout`` ms fails with
  FLUSH_DISK_TIMEOUT.
* :class:`FlushRealTimeService` (ASYNC_FLUSH): every ``flush_interval_commit_log`` ms flush if
  at least ``flush_commit_log_least_pages`` pages are dirty; a full flush every
  ``flush_commit_log_thorough_interval`` ms; a full flush at shutdown.
* :class:`FlushConsumeQueueService`: ConsumeQueues every ``flush_interval_consume_queue`` ms
  (least pages 2), full flush plus checkpoint every ``flush_consume_queue_thorough_interval``.

Thread timing uses real time (these are shells around the same flush calls the deterministic
mode makes on demand). Call order for each: construct → ``start()`` → … → ``shutdown()``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field


class _Service:
    name = "service"

    def __init__(self):
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def _run(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def shutdown(self) -> None:
        self._stop.set()
        self.wakeup()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def wakeup(self) -> None:
        pass


@dataclass(slots=True)
class FlushRequest:
    next_offset: int
    done: threading.Event = field(default_factory=threading.Event)
    ok: bool = False


class GroupCommitService(_Service):
    name = "GroupCommitService"

    def __init__(self, commit_log, on_flushed=None):
        super().__init__()
        self.commit_log = commit_log
        self.on_flushed = on_flushed  # called with the queue's store timestamp after each round
        self._cond = threading.Condition()
        self._requests: list[FlushRequest] = []
        self.rounds = 0

    def wakeup(self) -> None:
        with self._cond:
            self._cond.notify()

    def flush_and_wait(self, next_offset: int, timeout_ms: int) -> bool:
        """Enqueue "flushed >= next_offset" and wait; False on timeout."""
        req = FlushRequest(next_offset)
        with self._cond:
            self._requests.append(req)
            self._cond.notify()
        if not req.done.wait(timeout_ms / 1000):
            return False
        return req.ok

    def _serve(self, batch: list[FlushRequest]) -> None:
        queue = self.commit_log.queue
        for req in batch:
            flushed = queue.flushed_where >= req.next_offset
            for _ in range(2):
                if flushed:
                    break
                queue.flush(0)
                flushed = queue.flushed_where >= req.next_offset
            req.ok = flushed
            req.done.set()
        self.rounds += 1
        if self.on_flushed is not None and queue.store_timestamp > 0:
            self.on_flushed(queue.store_timestamp)

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._requests and not self._stop.is_set():
                    self._cond.wait(0.01)
                batch, self._requests = self._requests, []
            if batch:
                self._serve(batch)
            elif self._stop.is_set():
                break
        # serve stragglers so no writer waits for its timeout
        with self._cond:
            batch, self._requests = self._requests, []
        if batch:
            self._serve(batch)


class FlushRealTimeService(_Service):
    name = "FlushRealTimeService"

    def __init__(self, commit_log, interval_ms: int = 500, least_pages: int = 4,
                 thorough_interval_ms: int = 10_000, on_flushed=None):
        super().__init__()
        self.commit_log = commit_log
        self.interval_ms = interval_ms
        self.least_pages = least_pages
        self.thorough_interval_ms = thorough_interval_ms
        self.on_flushed = on_flushed
        self._last_thorough = time.monotonic()

    def _run(self) -> None:
        queue = self.commit_log.queue
        while not self._stop.wait(self.interval_ms / 1000):
            least = self.least_pages
            now = time.monotonic()
            if (now - self._last_thorough) * 1000 >= self.thorough_interval_ms:
                self._last_thorough = now
                least = 0
            queue.flush(least)
            if least == 0 and self.on_flushed is not None and queue.store_timestamp > 0:
                self.on_flushed(queue.store_timestamp)
        for _ in range(10):  # shutdown: flush everything (RocketMQ retries up to 10 times)
            if queue.flush(0):
                break
        if self.on_flushed is not None and queue.store_timestamp > 0:
            self.on_flushed(queue.store_timestamp)


class FlushConsumeQueueService(_Service):
    name = "FlushConsumeQueueService"

    def __init__(self, store, interval_ms: int = 1000, least_pages: int = 2, thorough_interval_ms: int = 60_000):
        super().__init__()
        self.store = store
        self.interval_ms = interval_ms
        self.least_pages = least_pages
        self.thorough_interval_ms = thorough_interval_ms
        self._last_thorough = time.monotonic()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_ms / 1000):
            now = time.monotonic()
            thorough = (now - self._last_thorough) * 1000 >= self.thorough_interval_ms
            if thorough:
                self._last_thorough = now
            self.store.flush_consume_queues(0 if thorough else self.least_pages, checkpoint=thorough)
