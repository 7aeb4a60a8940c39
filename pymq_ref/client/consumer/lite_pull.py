"""``DefaultLitePullConsumer``: pull-style consumption with ``poll()``
(``client/consumer/DefaultLitePullConsumer.java``, ``client/impl/consumer/DefaultLitePullConsumerImpl.java``).

Two ways to get queues: ``subscribe(topic, expression)`` lets rebalance assign them (as for the
push consumer, but CONSUME_ACTIVELY and without a retry topic); ``assign(queues)`` takes exactly the
given queues, with no rebalance. Either way one background pull task per queue fills a buffer
(``pull_batch_size`` 10, brokers hold pulls 20 s); ``poll(timeout)`` hands out one pulled batch at a time
and records, per queue, the offset after it (the lowest offset not yet handed out). With
``auto_commit`` those offsets are committed every ``auto_commit_interval`` (5 s) on a later ``poll``;
``commit_sync()`` commits at once. ``seek(mq, offset)`` restarts a queue's pulling at ``offset``.

Flow control: more than ``pull_threshold_for_all`` (10,000) buffered messages in all, or the
per-queue thresholds of the push consumer → the queue's pulls wait 50 ms.

Legal call order: ``subscribe`` or ``assign`` → ``await start()`` → ``poll`` / ``commit_sync`` /
``seek`` … → ``await shutdown()``.
"""

from __future__ import annotations

import asyncio
import time

from pymq_ref.formats.message_queue import MessageQueue
from pymq_ref.remoting.bodies.heartbeat import ConsumeType

from ..errors import MQClientError, StateError
from ..message import MessageExt
from ..rebalance import PullRequest
from .process_queue import ProcessQueue
from .push import PULL_TIME_DELAY_WHEN_FLOW_CONTROL, DefaultMQPushConsumer


class DefaultLitePullConsumer(DefaultMQPushConsumer):
    consume_type = ConsumeType.CONSUME_ACTIVELY.value
    needs_listener = False
    subscribes_retry_topic = False

    def __init__(self, group: str, namesrv_addr: str | None = None, *, pull_batch_size: int = 10,
                 auto_commit: bool = True, auto_commit_interval: float = 5.0, pull_threshold_for_all: int = 10000,
                 broker_suspend_max_time_millis: int = 20_000, **kwargs):
        super().__init__(group, namesrv_addr, pull_batch_size=pull_batch_size,
                         broker_suspend_max_time_millis=broker_suspend_max_time_millis, **kwargs)
        self.auto_commit = auto_commit
        self.auto_commit_interval = auto_commit_interval
        self.pull_threshold_for_all = pull_threshold_for_all
        self.assigned: list[MessageQueue] | None = None
        self.buffer: asyncio.Queue | None = None
        self.buffered = 0
        self.consumer_offsets: dict[MessageQueue, int] = {}
        self.seek_offsets: dict[MessageQueue, int] = {}
        self._next_auto_commit = 0.0

    def _make_consume_service(self):
        return None

    def assign(self, mqs) -> None:
        """Consume exactly these queues (no rebalance); their topics are subscribed with ``*``."""
        self.assigned = sorted(set(mqs))
        for mq in self.assigned:
            self.subscriptions.setdefault(mq.topic, ("*", "TAG"))
            if self.rebalance is not None and mq.topic not in self.rebalance.subscription_inner:
                self._add_subscription(mq.topic, "*", "TAG")
        if self.state == "RUNNING":
            asyncio.get_running_loop().create_task(self._start_assigned())

    async def start(self) -> None:
        self.buffer = asyncio.Queue()
        await super().start()
        self._next_auto_commit = time.monotonic() + self.auto_commit_interval
        if self.assigned is not None:
            await self._start_assigned()

    async def shutdown(self) -> None:
        if self.state == "RUNNING" and self.auto_commit:
            self._commit_to_store()
        await super().shutdown()

    async def do_rebalance(self) -> None:
        if self.assigned is None:
            await super().do_rebalance()

    async def _start_assigned(self) -> None:
        table = self.rebalance.process_queue_table
        for mq in list(table):
            if mq not in self.assigned:
                table.pop(mq).dropped = True
                task = self.pull_tasks.pop(mq, None)
                if task is not None:
                    task.cancel()
        for topic in sorted({mq.topic for mq in self.assigned}):
            await self.instance.update_topic_route(topic)
        await self.instance.send_heartbeat_to_all_brokers()
        requests = []
        for mq in self.assigned:
            if mq in table:
                continue
            offset = await self.compute_pull_from_where(mq)
            if offset < 0:
                raise MQClientError(f"no start offset for {mq}")
            pq = table[mq] = ProcessQueue(self.clock())
            requests.append(PullRequest(self.group, mq, pq, offset))
        self.dispatch_pull_requests(requests)

    async def compute_pull_from_where(self, mq: MessageQueue) -> int:
        seek = self.seek_offsets.pop(mq, None)
        if seek is not None:
            return seek
        return await super().compute_pull_from_where(mq)

    async def remove_unnecessary_message_queue(self, mq: MessageQueue, pq: ProcessQueue) -> bool:
        self.consumer_offsets.pop(mq, None)
        return await super().remove_unnecessary_message_queue(mq, pq)

    async def pull_message(self, req: PullRequest):
        if self.buffered > self.pull_threshold_for_all:
            return PULL_TIME_DELAY_WHEN_FLOW_CONTROL
        return await super().pull_message(req)

    def on_found(self, req: PullRequest, messages: list[MessageExt]) -> None:
        req.process_queue.put_messages(messages)
        self.buffered += len(messages)
        self.buffer.put_nowait((req.message_queue, req.process_queue, messages))

    async def poll(self, timeout: float = 5.0) -> list[MessageExt]:
        """The next pulled batch (one queue's messages), or [] after ``timeout`` seconds."""
        if self.state != "RUNNING":
            raise StateError(f"The consumer not running, {self.state}")
        if self.auto_commit and time.monotonic() >= self._next_auto_commit:
            self._commit_to_store()
            self._next_auto_commit = time.monotonic() + self.auto_commit_interval
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return []
            try:
                mq, pq, msgs = await asyncio.wait_for(self.buffer.get(), remaining)
            except asyncio.TimeoutError:
                return []
            self.buffered -= len(msgs)
            if pq.dropped:
                continue
            offset = pq.remove_messages(msgs, self.clock())
            if offset >= 0:
                self.consumer_offsets[mq] = offset
            return msgs

    def _commit_to_store(self) -> None:
        for mq, offset in self.consumer_offsets.items():
            if mq in self.rebalance.process_queue_table:
                self.offset_store.update_offset(mq, offset, False)

    async def commit_sync(self) -> None:
        self._commit_to_store()
        await self.persist_consumer_offset()

    async def committed(self, mq: MessageQueue) -> int:
        from .offset_store import READ_FROM_STORE
        return await self.offset_store.read_offset(mq, READ_FROM_STORE)

    async def seek(self, mq: MessageQueue, offset: int) -> None:
        """Pull ``mq`` from ``offset`` next (what was buffered for it is dropped)."""
        table = self.rebalance.process_queue_table
        if mq not in table:
            raise MQClientError(f"The message queue is not in assigned list, may be rebalancing, message queue: {mq}")
        old = table.pop(mq)
        old.dropped = True
        task = self.pull_tasks.pop(mq, None)
        if task is not None:
            task.cancel()
        pq = table[mq] = ProcessQueue(self.clock())
        self.consumer_offsets[mq] = offset
        self.dispatch_pull_requests([PullRequest(self.group, mq, pq, offset)])

    async def fetch_message_queues(self, topic: str) -> set[MessageQueue]:
        """``fetchMessageQueues``: the topic's readable queues from the name server."""
        from ..instance import route_to_subscribe_info
        route = await self.instance.fetch_route(topic)
        if route is None:
            raise MQClientError(f"Can not find Message Queue for this topic, {topic}")
        return route_to_subscribe_info(topic, route)
