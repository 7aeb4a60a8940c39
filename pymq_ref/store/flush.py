"""Flush services: how appended bytes reach the disk
(``store/src/main/java/org/apache/rocketmq/store/CommitLog.java``: ``FlushRealTimeService``,
``GroupCommitService``, ``CommitRealTimeService``).

* :class:`GroupCommitService` (SYNC_FLUSH): a put waits until "flushed >= my end"; one
  ``fdatasync`` serves every put appended before it (leader/follower: the first waiting put
  flushes for all, see the class; puts awaited on an asyncio loop share one round per loop
  turn). A put not served within ``sync_flush_timeout`` ms, or whose flush failed, gets
  FLUSH_DISK_TIMEOUT.
* :class:`FlushRealTimeService` (ASYNC_FLUSH): every ``flush_interval_commit_log`` ms flush if
  at least ``flush_commit_log_least_pages`` pages are dirty; a full flush every
  ``flush_commit_log_thorough_interval`` ms; a full flush at shutdown.
* :class:`CommitRealTimeService` (ASYNC_FLUSH with the transient store pool): every
  ``commit_interval_commit_log`` ms, or when a put wakes it, write at least
  ``commit_commit_log_least_pages`` pages of the write buffer to the file (everything once
  ``commit_commit_log_thorough_interval`` ms passed since the last commit); everything at shutdown.
* :class:`FlushConsumeQueueService`: ConsumeQueues every ``flush_interval_consume_queue`` ms
  (least pages 2), full flush plus checkpoint every ``flush_consume_queue_thorough_interval``.

Thread timing uses real time (these are shells around the same flush calls the deterministic
mode makes on demand). Call order for each: construct → ``start()`` → … → ``shutdown()``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time

_log = logging.getLogger(__name__)


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


class GroupCommitService(_Service):
    """SYNC_FLUSH group commit: a put returns PUT_OK only after its bytes are on disk, and one
    ``fdatasync`` serves every put appended before it.

    *RocketMQ's mechanism* (``CommitLog.GroupCommitService``): each waiting put enqueues a
    ``GroupCommitRequest(nextOffset)`` with a future; a service thread swaps its read/write
    request lists (waking at least every 10 ms), flushes up to twice (to cover a file roll),
    completes every request with "flushed >= nextOffset" (PUT_OK) or not (FLUSH_DISK_TIMEOUT),
    and the put waits on its future for ``syncFlushTimeout`` (5000 ms) at most.

    *Ours differs, for the GIL*: handing every round to a service thread costs extra thread
    switches and GIL hand-offs per put (enqueue, notify the service, the service takes the GIL,
    completes one future per request, each writer takes the GIL again), and under 16 writers
    that overhead, not the disk, was the bottleneck. So the puts flush for themselves
    (leader/follower): all state is one shared counter, ``commit_log.queue.flushed_where``
    ("flushed up to"), plus one :class:`threading.Condition` and a ``flushing`` flag.

    * A put ending at ``E`` returns at once if ``flushed_where >= E``.
    * Else, if nobody is flushing, it becomes the *leader*: it first lets the puts released by
      the previous round come back with their next put (at most as long as the last flush
      took; see :meth:`_lead`), then flushes everything appended so far (``max_wrote_position``
      when the round starts, one flush per file so a roll is covered) outside the condition's
      lock (``fdatasync`` releases the GIL), then notifies every waiter once.
    * Otherwise it is a *follower*: it waits on the condition until ``flushed_where >= E``, or
      becomes the next leader when the current round did not cover it.
    * Puts awaited on an asyncio loop (``async_put_message``) do not block their thread: they
      share one round per loop turn, see :meth:`flushed_async`.

    Same guarantees as RocketMQ: PUT_OK only when ``flushed_where >= E`` after an fsync that
    started after the record was appended; a put that waited longer than ``timeout_ms`` (or
    whose flush failed) gets FLUSH_DISK_TIMEOUT — a follower when its wait times out, a leader
    when its own flush finishes late or raises (a leader stuck in the kernel cannot return
    before the syscall does; its followers still time out on time). ``rounds`` counts the
    flush rounds, as the service's ``doCommit`` calls, and ``flush_seconds`` their flush time.

    The background thread (``start``) is only the fallback RocketMQ's service also is: it
    flushes within 10 ms after :meth:`wakeup` (puts with ``WAIT=false``) and once more at
    ``shutdown`` (stragglers), never while a leader is flushing. ``shutdown`` never waits on a
    stuck flush for more than ``shutdown_timeout_s``.

    Call order: construct → ``start()`` → ``flush_and_wait`` / ``wakeup`` (any thread),
    ``flushed_async`` (on a running loop) … → ``shutdown()``.
    """

    name = "GroupCommitService"
    #: how often the fallback thread looks for unflushed bytes (the service's 10 ms wait)
    interval_s = 0.01

    def __init__(self, commit_log, on_flushed=None, *, shutdown_timeout_s: float = 10.0):
        super().__init__()
        self.commit_log = commit_log
        self.on_flushed = on_flushed  # called with the queue's store timestamp after each round
        self.shutdown_timeout_s = shutdown_timeout_s
        lock = threading.Lock()
        self._cond = threading.Condition(lock)  # followers wait here for the end of a round
        self._gathered = threading.Condition(lock)  # a gathering leader waits here
        self._flushing = False  # a leader (or the fallback thread) owns the next/current round
        self._waiting = 0  # puts inside flush_and_wait, leader included
        self._returning = 0  # puts released by the last round not yet back with their next put
        self._gathering = False
        self._last_flush_s = 0.0
        self._wake = threading.Event()
        self.rounds = 0
        self.flush_seconds = 0.0  # time spent in rounds' flush calls (the GIL's return included)
        self.last_error: BaseException | None = None
        #: per asyncio loop: the (next_offset, future) of the puts its next round serves
        self._loop_waiters: dict[asyncio.AbstractEventLoop, list] = {}

    def wakeup(self) -> None:
        self._wake.set()

    def flushed_async(self, next_offset: int, timeout_ms: int) -> asyncio.Future:
        """For puts awaited on an asyncio loop (``async_put_message``): a future that becomes
        True once ``flushed_where >= next_offset``, False on timeout or a failed flush.

        The first put that needs a flush schedules one round on its loop with ``call_soon``;
        the round runs after every callback already queued, so the puts of the tasks that were
        ready to run join it. The round is :meth:`flush_and_wait` on the loop's own thread: one
        ``fdatasync`` for all of them (it releases the GIL, so the reput thread works
        meanwhile), then one ``set_result`` per put. Unlike a thread per writer, no put costs a
        thread wake-up, which on a 2-vCPU VM costs more than the put itself
        (``bench/bench_group_commit.py`` measures both kinds of writer). The loop does block for that one ``fdatasync``, as RocketMQ's netty
        threads never do; its timeout counts from the round's start, in the same loop turn as
        the puts.
        """
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        waiters = self._loop_waiters.get(loop)
        if waiters is None:
            self._loop_waiters[loop] = waiters = []
            loop.call_soon(self._loop_round, loop, timeout_ms)
        waiters.append((next_offset, fut))
        return fut

    def _loop_round(self, loop: asyncio.AbstractEventLoop, timeout_ms: int) -> None:
        waiters = self._loop_waiters.pop(loop)
        ok = False
        try:
            ok = self.flush_and_wait(max(end for end, _ in waiters), timeout_ms)
        finally:
            for _, fut in waiters:
                if not fut.done():  # a cancelled put keeps its record, it just stopped waiting
                    fut.set_result(ok)

    def flush_and_wait(self, next_offset: int, timeout_ms: int) -> bool:
        """Return once ``flushed_where >= next_offset`` (True), or False on timeout or a failed flush."""
        queue = self.commit_log.queue
        if queue.flushed_where >= next_offset:
            return True
        deadline = time.monotonic() + timeout_ms / 1000
        cond = self._cond
        with cond:
            if self._returning:
                self._returning -= 1
                if not self._returning and self._gathering:
                    self._gathered.notify()
            self._waiting += 1
            try:
                while queue.flushed_where < next_offset:
                    if self._flushing:  # follower: the current round may cover us
                        remaining = deadline - time.monotonic()
                        if remaining <= 0:
                            return False
                        cond.wait(remaining)
                        continue
                    if not self._lead(deadline) or time.monotonic() > deadline:
                        return False  # failed, or flushed too late: RocketMQ's waiter has given up by now
                return True
            finally:
                self._waiting -= 1

    def _lead(self, deadline: float) -> bool:
        """One round led by the calling put (lock held on entry and on return).

        *Gathering*: the puts the previous round released are usually about to come back with
        their next put; a round started before they append serves half the writers, the next
        round the other half (one put per writer per two flushes). So the leader first waits —
        at most as long as the last flush took — until they are back, then flushes for all.
        """
        cond = self._cond
        self._flushing = True
        ok = False
        try:
            if self._returning:
                self._gathering = True
                limit = min(time.monotonic() + self._last_flush_s, deadline)
                while self._returning:
                    remaining = limit - time.monotonic()
                    if remaining <= 0:
                        break
                    self._gathered.wait(remaining)
                self._gathering = False
                self._returning = 0
            served = self._waiting  # every waiting put appended before this round starts
            cond.release()
            try:
                started = time.monotonic()
                ok = self._flush_round()
                self._last_flush_s = time.monotonic() - started
            finally:
                cond.acquire()
            if ok:
                self._returning = served
        finally:
            self._flushing = False
            cond.notify_all()
        return ok

    def _flush_round(self) -> bool:
        """Flush everything appended so far (the caller holds the ``flushing`` flag); False on error."""
        queue = self.commit_log.queue
        started = time.perf_counter()
        try:
            target = queue.max_wrote_position
            for _ in range(len(queue.files) + 1):  # one flush per file: covers a roll
                if queue.flushed_where >= target:
                    break
                queue.flush(0)
        except Exception as e:  # RocketMQ logs the error; the waiting puts get FLUSH_DISK_TIMEOUT
            self.last_error = e
            return False
        finally:
            self.flush_seconds += time.perf_counter() - started
        self.rounds += 1
        if self.on_flushed is not None and queue.store_timestamp > 0:
            self.on_flushed(queue.store_timestamp)
        return True

    def _flush_if_idle(self) -> None:
        queue = self.commit_log.queue
        if queue.flushed_where >= queue.max_wrote_position:
            return
        cond = self._cond
        with cond:
            if self._flushing:
                return  # a leader is at it
            self._flushing = True
        try:
            self._flush_round()
        finally:
            with cond:
                self._flushing = False
                cond.notify_all()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.interval_s)
            self._wake.clear()
            self._flush_if_idle()
        self._flush_if_idle()  # stragglers: nobody waits for a timeout at shutdown

    def shutdown(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=self.shutdown_timeout_s)  # a stuck flush: give up waiting
            self._thread = None


class CommitRealTimeService(_Service):
    """``CommitLog.CommitRealTimeService``: moves appended bytes from the transient pool's write
    buffer into the CommitLog file, where readers (reput) and the flush service can see them.

    A round: least pages is ``least_pages``, or 0 when ``thorough_interval_ms`` passed since the
    last commit; ``queue.commit(least)``; if something was committed, the last-commit time is
    now (RocketMQ also wakes the flush service, which — with ``flushCommitLogTimed``, the
    default — sleeps its interval anyway, as ours does). Then it waits ``interval_ms`` or until
    :meth:`wakeup` (every ASYNC put calls it). At shutdown: ``commit(0)`` until nothing is left,
    10 tries at most. It must not flush: durability stays the flush service's job.
    """

    name = "CommitRealTimeService"

    def __init__(self, commit_log, interval_ms: int = 200, least_pages: int = 4, thorough_interval_ms: int = 200):
        super().__init__()
        self.commit_log = commit_log
        self.interval_ms = interval_ms
        self.least_pages = least_pages
        self.thorough_interval_ms = thorough_interval_ms
        self._wake = threading.Event()
        self._last_commit = 0.0
        self.last_error: BaseException | None = None

    def wakeup(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        queue = self.commit_log.queue
        while not self._stop.is_set():
            self._wake.clear()  # a put's wakeup during the round makes the next wait return at once
            least = self.least_pages
            begin = time.monotonic()
            if (begin - self._last_commit) * 1000 >= self.thorough_interval_ms:
                self._last_commit = begin
                least = 0
            try:
                if not queue.commit(least):  # False: something was committed
                    self._last_commit = time.monotonic()
            except Exception as e:  # RocketMQ logs it and goes on with the next round
                self.last_error = e
                _log.error("%s: commit failed: %s", self.name, e)
            self._wake.wait(self.interval_ms / 1000)
        for _ in range(10):  # RETRY_TIMES_OVER
            if queue.commit(0):
                break


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
