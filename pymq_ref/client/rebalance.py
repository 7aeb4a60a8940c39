"""Rebalance: which queues this consumer owns, and the start and stop of each
(``client/impl/consumer/RebalanceImpl.java``, ``RebalancePushImpl``, ``RebalanceLitePullImpl``).

Theory of operation. For every subscribed topic (with ``%RETRY%<group>`` for clustering push
consumers) a rebalance round computes the *target* queues:

* broadcasting — every readable queue of the topic;
* clustering — ``strategy.allocate(group, myClientId, sorted(queues), sorted(GET_CONSUMER_LIST_BY_GROUP))``
  with a pure strategy of :mod:`pymq_ref.client.allocate` (AVG by default).

Then it reconciles the process-queue table: an owned queue that is no longer a target is dropped
(offset persisted, orderly: unlocked); a push queue not pulled for 120 s is dropped and re-created;
a target not owned is (orderly: locked on its broker first, skipped if the lock fails) started at
the owner's ``compute_pull_from_where`` offset. Rounds run every 20 s, when the broker sends
NOTIFY_CONSUMER_IDS_CHANGED, and when a consumer starts.

The owner (push or lite pull consumer) supplies the I/O hooks; this module decides. Every round's
outcome is appended to :attr:`RebalanceImpl.history` (chapters and tests watch queues move).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

from pymq_ref.formats.message_queue import MessageQueue
from pymq_ref.remoting.bodies.heartbeat import SubscriptionData
from pymq_ref.remoting.errors import RemotingError

from . import requests as R
from .allocate import AllocateError, AllocateMessageQueueAveragely, AllocateMessageQueueStrategy
from .consumer.process_queue import ProcessQueue
from .errors import MQBrokerError, MQClientError

log = logging.getLogger("pymq_ref.client")

CLUSTERING, BROADCASTING = "CLUSTERING", "BROADCASTING"
LOCK_TIMEOUT = 1.0  # s, RebalanceImpl#lock


@dataclass
class PullRequest:
    consumer_group: str
    message_queue: MessageQueue
    process_queue: ProcessQueue
    next_offset: int
    previously_locked: bool = False


@dataclass(frozen=True)
class RebalanceRound:
    """What one round decided for one topic (for observers: tests, plots, the book)."""

    time_ms: int
    topic: str
    client_id: str
    consumer_ids: tuple[str, ...]
    allocated: tuple[MessageQueue, ...]
    added: tuple[MessageQueue, ...]
    removed: tuple[MessageQueue, ...]


class RebalanceOwner(Protocol):
    consume_type: str  # CONSUME_PASSIVELY (push) or CONSUME_ACTIVELY (pull)

    async def compute_pull_from_where(self, mq: MessageQueue) -> int: ...

    async def remove_unnecessary_message_queue(self, mq: MessageQueue, pq: ProcessQueue) -> bool: ...

    async def message_queue_changed(self, topic: str, mq_all: set[MessageQueue], mq_divided: set[MessageQueue]) -> None: ...

    def dispatch_pull_requests(self, requests: list[PullRequest]) -> None: ...


class RebalanceImpl:
    def __init__(self, owner: RebalanceOwner, instance, group: str, message_model: str = CLUSTERING,
                 strategy: AllocateMessageQueueStrategy | None = None):
        self.owner = owner
        self.instance = instance
        self.group = group
        self.message_model = message_model
        self.strategy = strategy or AllocateMessageQueueAveragely()
        self.subscription_inner: dict[str, SubscriptionData] = {}
        self.topic_subscribe_info: dict[str, set[MessageQueue]] = {}
        self.process_queue_table: dict[MessageQueue, ProcessQueue] = {}
        self.history: list[RebalanceRound] = []
        self.max_history = 1000

    # -- a round ------------------------------------------------------------------------------
    async def do_rebalance(self, is_order: bool) -> None:
        for topic in list(self.subscription_inner):
            try:
                await self.rebalance_by_topic(topic, is_order)
            except (MQClientError, MQBrokerError, RemotingError, AllocateError, OSError) as e:
                if not topic.startswith("%RETRY%"):
                    log.info("%s: rebalance of %s failed: %s", self.group, topic, e)
        self.truncate_message_queue_not_my_topic()

    async def rebalance_by_topic(self, topic: str, is_order: bool) -> None:
        mq_set = self.topic_subscribe_info.get(topic)
        if self.message_model == BROADCASTING:
            if not mq_set:
                return
            target, cids = set(mq_set), (self.instance.client_id,)
        else:
            cids = await self.instance.find_consumer_id_list(topic, self.group)
            if not mq_set or not cids:
                return
            mq_all = sorted(mq_set)
            cids = tuple(sorted(cids))
            target = set(self.strategy.allocate(self.group, self.instance.client_id, mq_all, list(cids)))
        before = {mq for mq in self.process_queue_table if mq.topic == topic}
        changed, requests = await self.update_process_queue_table_in_rebalance(topic, target, is_order)
        after = {mq for mq in self.process_queue_table if mq.topic == topic}
        self._record(topic, cids, target, after - before, before - after)
        if changed:
            # 4.9.4 dispatches the new pull requests first and heartbeats after, so the first pulls
            # often meet SUBSCRIPTION_NOT_LATEST (25) and wait 3 s; heartbeating first avoids that
            await self.owner.message_queue_changed(topic, set(mq_set), target)
        self.owner.dispatch_pull_requests(requests)

    def _record(self, topic, cids, target, added, removed) -> None:
        self.history.append(RebalanceRound(self.instance.clock(), topic, self.instance.client_id, tuple(cids),
                                           tuple(sorted(target)), tuple(sorted(added)), tuple(sorted(removed))))
        del self.history[:-self.max_history]

    async def update_process_queue_table_in_rebalance(self, topic: str, mq_set: set[MessageQueue],
                                                      is_order: bool) -> tuple[bool, list[PullRequest]]:
        changed = False
        now = self.instance.clock()
        for mq, pq in list(self.process_queue_table.items()):
            if mq.topic != topic:
                continue
            if mq not in mq_set:
                pq.dropped = True
                if await self.owner.remove_unnecessary_message_queue(mq, pq):
                    self.process_queue_table.pop(mq, None)
                    changed = True
            elif pq.is_pull_expired(now) and self.owner.consume_type == "CONSUME_PASSIVELY":
                pq.dropped = True
                if await self.owner.remove_unnecessary_message_queue(mq, pq):
                    self.process_queue_table.pop(mq, None)
                    changed = True
                    log.warning("%s: %s was not pulled for a long time; dropped and re-created", self.group, mq)
        requests = []
        for mq in sorted(mq_set):
            if mq in self.process_queue_table:
                continue
            if is_order and not await self.lock(mq):
                continue
            self.remove_dirty_offset(mq)
            pq = ProcessQueue(self.instance.clock())
            next_offset = await self.owner.compute_pull_from_where(mq)
            if next_offset < 0:
                log.info("%s: no start offset for %s this round", self.group, mq)
                continue
            if mq in self.process_queue_table:
                continue
            self.process_queue_table[mq] = pq
            requests.append(PullRequest(self.group, mq, pq, next_offset))
            changed = True
        return changed, requests

    def remove_dirty_offset(self, mq: MessageQueue) -> None:
        store = getattr(self.owner, "offset_store", None)
        if store is not None:
            store.remove_offset(mq)

    def truncate_message_queue_not_my_topic(self) -> None:
        for mq, pq in list(self.process_queue_table.items()):
            if mq.topic not in self.subscription_inner:
                pq.dropped = True
                self.process_queue_table.pop(mq, None)

    # -- broker locks (orderly) ---------------------------------------------------------------
    def _lock_addr(self, broker_name: str) -> str | None:
        return self.instance.find_broker_address_in_subscribe(broker_name, 0, True)

    async def lock(self, mq: MessageQueue) -> bool:
        addr = self._lock_addr(mq.broker_name)
        if addr is None:
            return False
        try:
            response = await self.instance.remoting.invoke(
                addr, R.lock_batch(self.group, self.instance.client_id, [mq]), LOCK_TIMEOUT)
            locked = R.read_lock_batch(response, addr)
        except (RemotingError, MQBrokerError, OSError) as e:
            log.info("%s: lock of %s failed: %s", self.group, mq, e)
            return False
        now = self.instance.clock()
        for m in locked:
            pq = self.process_queue_table.get(m)
            if pq is not None:
                pq.locked = True
                pq.last_lock_timestamp = now
        return mq in locked

    async def lock_all(self) -> None:
        by_broker: dict[str, set[MessageQueue]] = {}
        for mq in self.process_queue_table:
            by_broker.setdefault(mq.broker_name, set()).add(mq)
        now = self.instance.clock()
        for broker, mqs in by_broker.items():
            addr = self._lock_addr(broker)
            if addr is None:
                continue
            try:
                response = await self.instance.remoting.invoke(
                    addr, R.lock_batch(self.group, self.instance.client_id, mqs), LOCK_TIMEOUT)
                locked = R.read_lock_batch(response, addr)
            except (RemotingError, MQBrokerError, OSError) as e:
                log.info("%s: lockAll on %s failed: %s", self.group, broker, e)
                continue
            for mq in mqs:
                pq = self.process_queue_table.get(mq)
                if pq is None:
                    continue
                if mq in locked:
                    pq.locked = True
                    pq.last_lock_timestamp = now
                else:
                    pq.locked = False

    async def unlock(self, mq: MessageQueue, oneway: bool) -> None:
        addr = self._lock_addr(mq.broker_name)
        if addr is None:
            return
        request = R.unlock_batch(self.group, self.instance.client_id, [mq], oneway)
        try:
            if oneway:
                await self.instance.remoting.invoke_oneway(addr, request)
            else:
                await self.instance.remoting.invoke(addr, request, LOCK_TIMEOUT)
        except (RemotingError, OSError) as e:
            log.info("%s: unlock of %s failed: %s", self.group, mq, e)

    async def unlock_all(self, oneway: bool) -> None:
        by_broker: dict[str, set[MessageQueue]] = {}
        for mq in self.process_queue_table:
            by_broker.setdefault(mq.broker_name, set()).add(mq)
        for broker, mqs in by_broker.items():
            addr = self._lock_addr(broker)
            if addr is None:
                continue
            request = R.unlock_batch(self.group, self.instance.client_id, mqs, oneway)
            try:
                if oneway:
                    await self.instance.remoting.invoke_oneway(addr, request)
                else:
                    await self.instance.remoting.invoke(addr, request, LOCK_TIMEOUT)
            except (RemotingError, OSError) as e:
                log.info("%s: unlockAll on %s failed: %s", self.group, broker, e)
            for mq in mqs:
                pq = self.process_queue_table.get(mq)
                if pq is not None:
                    pq.locked = False
