"""The two ways a push consumer hands pulled messages to the user's listener
(``ConsumeMessageConcurrentlyService``, ``ConsumeMessageOrderlyService``).

* :class:`ConcurrentConsumeService` — batches of ``consume_message_batch_max_size`` run in
  parallel (at most ``consume_thread_max`` at once); a batch that fails (RECONSUME_LATER, an
  exception, or messages after ``context.ack_index``) is sent back to the broker
  (CONSUMER_SEND_MSG_BACK → ``%RETRY%<group>`` after a delay level), re-published by the client if
  that fails, re-consumed locally after 5 s if even that fails; then the process queue's lowest
  unfinished offset is committed.
  A message whose listener runs longer than ``consume_timeout`` minutes (15) is sent back with delay
  level 3 and dropped from the process queue, so it cannot hold the committed offset forever.
* :class:`OrderlyConsumeService` — one consumer task per queue at a time, in offset order, and only
  while the queue is locked on its broker (clustering); SUSPEND_CURRENT_QUEUE_A_MOMENT puts the
  messages back and retries after ``suspend_current_queue_time_millis``; a message that reached
  ``max_reconsume_times`` goes to the retry topic (and from there to the DLQ) and counts as done.

Listeners are ``listener(msgs, context) -> status`` — a plain function (run in a thread pool of
``consume_thread_max`` threads, like Java's consume threads) or a coroutine function (run on the loop).
"""

from __future__ import annotations

import asyncio
import enum
import inspect
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pymq_ref.formats import properties as P
from pymq_ref.formats.message_queue import MessageQueue

from ..message import (CONSUME_START_TIME, MAX_RECONSUME_TIMES, RECONSUME_TIME, Message, MessageExt, retry_topic)
from .process_queue import ProcessQueue

log = logging.getLogger("pymq_ref.client")

MAX_INT = 2**31 - 1


class ConsumeConcurrentlyStatus(str, enum.Enum):
    CONSUME_SUCCESS = "CONSUME_SUCCESS"
    RECONSUME_LATER = "RECONSUME_LATER"


class ConsumeOrderlyStatus(str, enum.Enum):
    SUCCESS = "SUCCESS"
    SUSPEND_CURRENT_QUEUE_A_MOMENT = "SUSPEND_CURRENT_QUEUE_A_MOMENT"
    COMMIT = "COMMIT"  # deprecated in 4.9.4, manual-commit mode only
    ROLLBACK = "ROLLBACK"


@dataclass
class ConsumeConcurrentlyContext:
    message_queue: MessageQueue
    delay_level_when_next_consume: int = 0  # 0: the broker picks 3 + reconsumeTimes
    ack_index: int = MAX_INT


@dataclass
class ConsumeOrderlyContext:
    message_queue: MessageQueue
    auto_commit: bool = True
    suspend_current_queue_time_millis: int = -1


class _ListenerRunner:
    def __init__(self, listener, threads: int):
        self.listener = listener
        self.is_async = inspect.iscoroutinefunction(listener) or inspect.iscoroutinefunction(
            getattr(listener, "__call__", None))
        self.executor = None if self.is_async else ThreadPoolExecutor(threads, thread_name_prefix="ConsumeMessageThread")

    async def __call__(self, msgs, context):
        if self.is_async:
            return await self.listener(msgs, context)
        return await asyncio.get_running_loop().run_in_executor(self.executor, self.listener, msgs, context)

    def shutdown(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)


def reset_retry_and_namespace(msgs: list[MessageExt], group: str) -> list[MessageExt]:
    """``resetRetryAndNamespace``: a message from ``%RETRY%<group>`` shows its original topic;
    every message gets CONSUME_START_TIME."""
    out = []
    retry = retry_topic(group)
    now = str(time.time_ns() // 1_000_000)
    for m in msgs:
        origin = m.properties.get(P.RETRY_TOPIC)
        if origin and m.topic == retry:
            m = m.with_(topic=origin)
        m.properties[CONSUME_START_TIME] = now
        out.append(m)
    return out


class _ServiceBase:
    def __init__(self, consumer, listener):
        self.consumer = consumer
        self.runner = _ListenerRunner(listener, consumer.consume_thread_max)
        self.tasks: set[asyncio.Task] = set()
        self.stopped = False

    def spawn(self, coro, delay: float = 0.0) -> None:
        if self.stopped:
            coro.close()
            return

        async def later():
            try:
                await asyncio.sleep(delay)
            except asyncio.CancelledError:
                coro.close()  # cancelled before it started: not "never awaited"
                raise
            await coro
        task = asyncio.get_running_loop().create_task(later() if delay else coro)
        self.tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("%s: consume task failed: %r", self.consumer.group, task.exception())

    async def shutdown(self) -> None:
        self.stopped = True
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)
        self.runner.shutdown()

    async def send_message_back(self, msg: MessageExt, delay_level: int, broker_name: str | None) -> bool:
        """CONSUMER_SEND_MSG_BACK, else re-publish to the retry topic ourselves (``sendMessageBack``)."""
        c = self.consumer
        try:
            await c.send_back_to_broker(msg, delay_level, broker_name)
            return True
        except Exception as e:
            log.info("%s: send back of %s failed (%s); re-publishing", c.group, msg.msg_id, e)
        try:
            props = dict(msg.properties)
            props.setdefault(P.ORIGIN_MESSAGE_ID, msg.msg_id)
            props.setdefault(P.RETRY_TOPIC, msg.topic)
            props[RECONSUME_TIME] = str(msg.reconsume_times + 1)
            props[MAX_RECONSUME_TIMES] = str(c.get_max_reconsume_times())
            props.pop(P.UNIQ_KEY, None)
            props[P.DELAY] = str(3 + msg.reconsume_times)
            retry = Message(retry_topic(c.group), msg.body, properties=props, flag=msg.flag)
            await c.inner_producer_send(retry)
            return True
        except Exception as e:
            log.info("%s: re-publish of %s failed: %s", c.group, msg.msg_id, e)
            return False


class ConcurrentConsumeService(_ServiceBase):
    def __init__(self, consumer, listener):
        super().__init__(consumer, listener)
        self.semaphore = asyncio.Semaphore(consumer.consume_thread_max)
        self.expired_sent_back: list[MessageExt] = []
        period = consumer.consume_timeout * 60
        self.spawn(self._clean_expired_loop(period), delay=period)

    async def _clean_expired_loop(self, period: float) -> None:
        """``cleanExpireMsg`` every ``consume_timeout`` minutes: a message whose listener has run longer
        than that is sent back with delay level 3 and dropped from its process queue."""
        c = self.consumer
        while True:
            for mq, pq in list(c.rebalance.process_queue_table.items()):
                for m in pq.expired_messages(c.clock(), int(c.consume_timeout * 60_000)):
                    if await self.send_message_back(m, 3, mq.broker_name):
                        self.expired_sent_back.append(m)
                        # 4.9.4 leaves the offset to the next consumption or empty pull; moving it now is the same value
                        offset = pq.remove_messages([m], c.clock())
                        if offset >= 0 and not pq.dropped:
                            c.offset_store.update_offset(mq, offset, True)
            await asyncio.sleep(period)

    def submit(self, msgs: list[MessageExt], pq: ProcessQueue, mq: MessageQueue, dispatch: bool) -> None:
        n = self.consumer.consume_message_batch_max_size
        for i in range(0, len(msgs), n):
            self.spawn(self._consume(msgs[i:i + n], pq, mq))

    async def _consume(self, msgs, pq: ProcessQueue, mq: MessageQueue) -> None:
        if pq.dropped:
            return
        c = self.consumer
        context = ConsumeConcurrentlyContext(mq)
        async with self.semaphore:
            if pq.dropped:
                return
            shown = reset_retry_and_namespace(msgs, c.group)
            try:
                status = await self.runner(shown, context)
            except Exception as e:
                log.warning("%s: listener raised on %s: %r", c.group, mq, e)
                status = None
        if status is None:
            status = ConsumeConcurrentlyStatus.RECONSUME_LATER
        c.stats_consumed(len(msgs), status == ConsumeConcurrentlyStatus.CONSUME_SUCCESS)
        if pq.dropped:
            return  # the queue moved to another consumer: it re-consumes from the committed offset
        await self._process_result(ConsumeConcurrentlyStatus(status), context, msgs, pq, mq)

    async def _process_result(self, status, context, msgs, pq: ProcessQueue, mq: MessageQueue) -> None:
        c = self.consumer
        if status == ConsumeConcurrentlyStatus.CONSUME_SUCCESS:
            ack_index = min(context.ack_index, len(msgs) - 1)
        else:
            ack_index = -1
        done = list(msgs)
        if c.message_model == "BROADCASTING":
            for m in msgs[ack_index + 1:]:
                log.warning("%s: BROADCASTING, the message %s consume failed, drop it", c.group, m.msg_id)
        else:
            failed = []
            for m in msgs[ack_index + 1:]:
                if not await self.send_message_back(m, context.delay_level_when_next_consume, mq.broker_name):
                    failed.append(m)
            if failed:
                for m in failed:
                    done.remove(m)
                self.spawn(self._consume([m.with_(reconsume_times=m.reconsume_times + 1) for m in failed], pq, mq),
                           delay=5.0)
        offset = pq.remove_messages(done, c.clock())
        if offset >= 0 and not pq.dropped:
            c.offset_store.update_offset(mq, offset, True)


class OrderlyConsumeService(_ServiceBase):
    MAX_TIME_CONSUME_CONTINUOUSLY = 60.0  # s, rocketmq.client.maxTimeConsumeContinuously

    def __init__(self, consumer, listener):
        super().__init__(consumer, listener)
        self.queue_locks: dict[MessageQueue, asyncio.Lock] = {}

    def submit(self, msgs, pq: ProcessQueue, mq: MessageQueue, dispatch: bool) -> None:
        if dispatch:
            self.spawn(self._consume(pq, mq))

    def submit_later(self, pq: ProcessQueue, mq: MessageQueue, delay_ms: int) -> None:
        delay = min(max(delay_ms, 10), 30000) / 1000 if delay_ms != -1 else \
            self.consumer.suspend_current_queue_time_millis / 1000
        self.spawn(self._consume(pq, mq), delay=delay)

    async def _try_lock_later(self, pq: ProcessQueue, mq: MessageQueue, delay: float) -> None:
        await asyncio.sleep(delay)
        locked = await self.consumer.rebalance.lock(mq)
        self.submit_later(pq, mq, 10 if locked else 3000)

    async def _consume(self, pq: ProcessQueue, mq: MessageQueue) -> None:
        if pq.dropped:
            return
        c = self.consumer
        lock = self.queue_locks.setdefault(mq, asyncio.Lock())
        async with lock:
            clustering = c.message_model == "CLUSTERING"
            if clustering and (not pq.locked or pq.is_lock_expired(c.clock())):
                if not pq.dropped:
                    self.spawn(self._try_lock_later(pq, mq, 0.01))
                return
            begin = time.monotonic()
            while not pq.dropped:
                if clustering and (not pq.locked or pq.is_lock_expired(c.clock())):
                    self.spawn(self._try_lock_later(pq, mq, 0.01))
                    return
                if time.monotonic() - begin > self.MAX_TIME_CONSUME_CONTINUOUSLY:
                    self.submit_later(pq, mq, 10)
                    return
                msgs = pq.take_messages(c.consume_message_batch_max_size, c.clock())
                if not msgs:
                    return
                shown = reset_retry_and_namespace(msgs, c.group)
                context = ConsumeOrderlyContext(mq)
                try:
                    status = await self.runner(shown, context)
                except Exception as e:
                    log.warning("%s: orderly listener raised on %s: %r", c.group, mq, e)
                    status = None
                if pq.dropped:
                    return
                if status is None or status in (ConsumeOrderlyStatus.ROLLBACK, "ROLLBACK"):
                    status = ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT
                status = ConsumeOrderlyStatus(status)
                c.stats_consumed(len(msgs), status != ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT)
                if not await self._process_result(msgs, status, context, pq, mq):
                    return

    async def _process_result(self, msgs, status, context, pq: ProcessQueue, mq: MessageQueue) -> bool:
        """True to keep consuming this queue now."""
        c = self.consumer
        offset = -1
        if status in (ConsumeOrderlyStatus.SUCCESS, ConsumeOrderlyStatus.COMMIT):
            offset = pq.commit()
            keep_going = True
        else:
            if await self._check_reconsume_times(msgs):
                pq.make_message_to_consume_again(msgs)
                self.submit_later(pq, mq, context.suspend_current_queue_time_millis)
                keep_going = False
            else:
                offset = pq.commit()
                keep_going = True
        if offset >= 0 and not pq.dropped:
            c.offset_store.update_offset(mq, offset, False)
        return keep_going

    async def _check_reconsume_times(self, msgs: list[MessageExt]) -> bool:
        """True to suspend (retry locally); messages over ``max_reconsume_times`` go to the retry topic."""
        c = self.consumer
        suspend = False
        for i, m in enumerate(msgs):
            if m.reconsume_times >= c.get_max_reconsume_times():
                props = dict(m.properties)
                props[RECONSUME_TIME] = str(m.reconsume_times)
                if not await self.send_message_back(m.with_(properties=props), 0, None):
                    suspend = True
                    msgs[i] = m.with_(reconsume_times=m.reconsume_times + 1)
            else:
                suspend = True
                msgs[i] = m.with_(reconsume_times=m.reconsume_times + 1)
        return suspend
