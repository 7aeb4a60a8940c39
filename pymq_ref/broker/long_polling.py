"""``PullRequestHoldService``: pulls that found nothing wait here for a message (long polling).

A PULL_MESSAGE that finds nothing new (PULL_NOT_FOUND) with the SUSPEND flag is not answered;
it is held under ``topic@queueId``
(``broker/src/main/java/org/apache/rocketmq/broker/longpolling/PullRequestHoldService.java``). It is answered — by
re-running the
pull in "no suspend" mode — when:

* the store dispatches a new message for that queue (``notifyMessageArriving`` from the reput /
  dispatch, via :meth:`on_message_arriving`) whose offset is beyond the request's and which
  passes the request's filter (tags code, then properties for SQL92); or
* the periodic check (every 5 s with long polling, ``shortPollingTimeMills`` without) sees the
  queue's max offset beyond the request's, or the hold time expired.

Callbacks, not threads: the store's notification (which may come from under the put lock)
only schedules a ``call_later(0, …)`` on the broker's scheduler; the re-run happens there.
Call order: ``start()`` → ``suspend_pull_request`` / notifications … → ``shutdown()`` (which
answers nothing; held requests are dropped like RocketMQ's on shutdown).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from pymq_ref.store.clock import Clock
from pymq_ref.store.dispatch import DispatchRequest
from pymq_ref.store.message_store import MessageStore

from .config import BrokerConfig
from .scheduler import Scheduler, Timer

TOPIC_QUEUEID_SEPARATOR = "@"
LONG_POLLING_CHECK_INTERVAL = 5000


@dataclass
class PullRequest:
    """A held pull: the request to re-run, its filter, and when it was suspended."""

    request: Any  # pymq_ref.broker.pull.PullMessageRequest
    callback: Callable[[Any], None]
    timeout_millis: int
    suspend_timestamp: int
    pull_from_this_offset: int
    message_filter: Any
    answered: bool = field(default=False, compare=False)


class PullRequestHoldService:
    def __init__(self, config: BrokerConfig, clock: Clock, scheduler: Scheduler, store: MessageStore,
                 execute_request_when_wakeup: Callable[[PullRequest], None]):
        self.config = config
        self.clock = clock
        self.scheduler = scheduler
        self.store = store
        self.execute_request_when_wakeup = execute_request_when_wakeup
        self.pull_request_table: dict[str, list[PullRequest]] = {}
        self._lock = threading.RLock()
        self._timer: Timer | None = None
        self._stopped = True

    @staticmethod
    def build_key(topic: str, queue_id: int) -> str:
        return f"{topic}{TOPIC_QUEUEID_SEPARATOR}{queue_id}"

    @property
    def check_interval(self) -> int:
        return LONG_POLLING_CHECK_INTERVAL if self.config.long_polling_enable else self.config.short_polling_time_mills

    def start(self) -> None:
        self._stopped = False
        self._timer = self.scheduler.call_later(self.check_interval, self._tick)

    def shutdown(self) -> None:
        self._stopped = True
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self.pull_request_table.clear()

    def held_count(self) -> int:
        with self._lock:
            return sum(len(v) for v in self.pull_request_table.values())

    def suspend_pull_request(self, topic: str, queue_id: int, pull_request: PullRequest) -> None:
        with self._lock:
            self.pull_request_table.setdefault(self.build_key(topic, queue_id), []).append(pull_request)

    def _tick(self) -> None:
        if self._stopped:
            return
        try:
            self.check_hold_request()
        finally:
            if not self._stopped:
                self._timer = self.scheduler.call_later(self.check_interval, self._tick)

    def check_hold_request(self) -> None:
        with self._lock:
            keys = list(self.pull_request_table)
        for key in keys:
            topic, _, qid = key.rpartition(TOPIC_QUEUEID_SEPARATOR)
            if topic and qid.lstrip("-").isdigit():
                self.notify_message_arriving(topic, int(qid), self.store.get_max_offset_in_queue(topic, int(qid)))

    # -- the store's MessageArrivingListener -------------------------------------------------
    def on_message_arriving(self, req: DispatchRequest) -> None:
        """Called by the store for every dispatched record (possibly under its put lock)."""
        if not self.config.long_polling_enable or self._stopped:
            return
        key = self.build_key(req.topic, req.queue_id)
        with self._lock:
            if key not in self.pull_request_table:
                return
        args = (req.topic, req.queue_id, req.consume_queue_offset + 1, req.tags_code, req.store_timestamp,
                dict(req.properties))
        self.scheduler.call_later(0, lambda: self.notify_message_arriving(*args))

    def notify_message_arriving(self, topic: str, queue_id: int, max_offset: int, tags_code: int | None = None,
                                msg_store_time: int = 0, properties: dict | None = None) -> None:
        key = self.build_key(topic, queue_id)
        with self._lock:
            requests = self.pull_request_table.pop(key, None)
        if not requests:
            return
        keep = []
        for pr in requests:
            newest = max_offset
            if newest <= pr.pull_from_this_offset:
                newest = self.store.get_max_offset_in_queue(topic, queue_id)
            if newest > pr.pull_from_this_offset:
                match = pr.message_filter.is_matched_by_consume_queue(tags_code)
                if match and properties is not None and hasattr(pr.message_filter, "is_matched_by_commit_log"):
                    match = pr.message_filter.is_matched_by_commit_log(properties)
                if match:
                    self.execute_request_when_wakeup(pr)
                    continue
            if self.clock.now_ms() >= pr.suspend_timestamp + pr.timeout_millis:
                self.execute_request_when_wakeup(pr)
                continue
            keep.append(pr)
        if keep:
            with self._lock:
                self.pull_request_table.setdefault(key, []).extend(keep)
