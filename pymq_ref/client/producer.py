"""``DefaultMQProducer``: sending messages as the 4.9.4 Java producer does
(``client/producer/DefaultMQProducer.java``, ``client/impl/producer/DefaultMQProducerImpl.java``).

Theory of operation. A send looks up the topic's *publish info* (its writable queues; the route
comes from the name server, or from the template topic ``TBW102`` when the topic does not exist
yet), picks a queue with :class:`~pymq_ref.client.fault.MQFaultStrategy` (round robin avoiding the
broker of the failed attempt; with ``send_latency_fault_enable``, skipping brokers paused for being
slow or failing), and sends SEND_MESSAGE_V2 to that broker's master. The whole call, retries
included, has ``send_msg_timeout``:

* **sync** — up to ``1 + retry_times_when_send_failed`` attempts; transport errors and the broker
  codes of :data:`RETRY_RESPONSE_CODES` move on to another queue; other broker codes raise at once;
  a stored-but-not-flushed status retries only with ``retry_another_broker_when_not_store_ok``;
* **async** — one attempt plus up to ``retry_times_when_send_async_failed`` re-sends on transport
  failures only (a broker error code is not retried, as in 4.9.4);
* **oneway** — one attempt, no answer, no retry.

Every non-batch message gets a UNIQ_KEY before its first attempt (retries re-use it, so a retried
message may be stored twice under one UNIQ_KEY); bodies of ``compress_msg_body_over_howmuch`` bytes or
more are zlib-compressed (not batches). Selector sends (ordered messages) make one attempt on the
queue the selector picks. ``request`` sends a message and waits for the responder's reply.

Legal call order: ``await start()`` … sends … ``await shutdown()`` (always returns; a send after it
raises :class:`~pymq_ref.client.errors.StateError`). Sends may run concurrently on one event loop.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from typing import Callable, Sequence

from pymq_ref.formats import properties as P
from pymq_ref.formats.hashing import java_string_hash
from pymq_ref.formats.message_queue import MessageQueue
from pymq_ref.formats.msgid import UniqKeyGenerator
from pymq_ref.remoting.errors import RemotingError
from pymq_ref.remoting.transport import format_address, parse_address

from . import requests as R
from .config import ClientConfig
from .errors import MQBrokerError, MQClientError, NoRouteError, RequestTimeoutError, StateError
from .fault import MQFaultStrategy, TopicPublishInfo
from .instance import MQClientInstance, now_ms
from .message import (CORRELATION_ID, MESSAGE_TTL, REPLY_TO_CLIENT, RETRY_GROUP_TOPIC_PREFIX, Message, MessageExt,
                      SendResult, SendStatus, validate_group, validate_message)

log = logging.getLogger("pymq_ref.client")

SYNC, ASYNC, ONEWAY = "sync", "async", "oneway"
#: broker codes after which a sync send tries again (``DefaultMQProducer#retryResponseCodes``)
RETRY_RESPONSE_CODES = frozenset({17, 14, 1, 16, 204, 205})

MessageQueueSelector = Callable[[Sequence[MessageQueue], Message, object], MessageQueue]


def java_hash_code(arg) -> int:
    """``Object.hashCode`` of the usual selector arguments: String, Integer/Long, else Python's hash."""
    if isinstance(arg, str):
        return java_string_hash(arg)
    if isinstance(arg, bool):
        return 1231 if arg else 1237
    if isinstance(arg, int):
        if -2**31 <= arg < 2**31:
            return arg
        v = arg & 0xFFFFFFFFFFFFFFFF
        h = (v ^ (v >> 32)) & 0xFFFFFFFF
        return h - (1 << 32) if h & 0x80000000 else h
    return hash(arg)


def select_by_hash(mqs: Sequence[MessageQueue], msg: Message, arg) -> MessageQueue:
    """``SelectMessageQueueByHash``: ``abs(arg.hashCode() % size)`` (Java remainder)."""
    h = java_hash_code(arg)
    value = abs(h) % len(mqs)
    return mqs[value]


class DefaultMQProducer:
    """See the module docstring. Settings keep the Java names in snake_case; times in seconds."""

    def __init__(self, group: str = "DEFAULT_PRODUCER", namesrv_addr: str | None = None, *,
                 config: ClientConfig | None = None, instance: MQClientInstance | None = None,
                 send_msg_timeout: float = 3.0, retry_times_when_send_failed: int = 2,
                 retry_times_when_send_async_failed: int = 2, retry_another_broker_when_not_store_ok: bool = False,
                 compress_msg_body_over_howmuch: int = 4096, compress_level: int = 5,
                 max_message_size: int = 4 * 1024 * 1024, send_latency_fault_enable: bool = False,
                 create_topic_key: str = R.DEFAULT_TOPIC, default_topic_queue_nums: int = 4,
                 clock: Callable[[], int] = now_ms):
        self.group = group
        self.config = config.copy() if config is not None else ClientConfig()
        if namesrv_addr:
            self.config.namesrv_addr = namesrv_addr
        self.instance = instance
        self._own_instance = instance is None
        self.send_msg_timeout = send_msg_timeout
        self.retry_times_when_send_failed = retry_times_when_send_failed
        self.retry_times_when_send_async_failed = retry_times_when_send_async_failed
        self.retry_another_broker_when_not_store_ok = retry_another_broker_when_not_store_ok
        self.compress_msg_body_over_howmuch = compress_msg_body_over_howmuch
        self.compress_level = compress_level
        self.max_message_size = max_message_size
        self.create_topic_key = create_topic_key
        self.default_topic_queue_nums = default_topic_queue_nums
        self.clock = clock
        self.fault_strategy = MQFaultStrategy(clock, send_latency_fault_enable=send_latency_fault_enable,
                                              mutate_publish_list_on_fallback=False)
        self.topic_publish_info: dict[str, TopicPublishInfo] = {}
        self._uniq: UniqKeyGenerator | None = None
        self._pending: set[asyncio.Task] = set()
        self.state = "CREATE_JUST"
        self.on_attempt: Callable[[dict], None] | None = None  # observer: one dict per attempt (tests, plots)

    # -- lifecycle --------------------------------------------------------------------------
    async def start(self) -> None:
        if self.state == "RUNNING":
            return
        if self.state != "CREATE_JUST":
            raise StateError(f"The producer service state not OK, maybe started once, {self.state}")
        validate_group(self.group)
        if self.instance is None:
            self.config.change_instance_name_to_pid()
            self.instance = MQClientInstance(self.config)
        self.instance.register_producer(self)
        self.topic_publish_info.setdefault(self.create_topic_key, TopicPublishInfo([]))
        ip = self.instance.config.client_ip
        self._uniq = UniqKeyGenerator(ip if ip.count(".") == 3 else "127.0.0.1", os.getpid() & 0xFFFF,
                                      id(self) & 0x7FFFFFFF, self.clock)
        await self.instance.start()
        self.state = "RUNNING"
        await self.instance.send_heartbeat_to_all_brokers()

    async def shutdown(self) -> None:
        """Wait for nothing: outstanding async sends are cancelled; the instance closes if we own it."""
        if self.state != "RUNNING":
            self.state = "SHUTDOWN_ALREADY"
            return
        self.state = "SHUTDOWN_ALREADY"
        for task in list(self._pending):
            task.cancel()
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)
        try:
            await asyncio.wait_for(self.instance.unregister(producer_group=self.group), 5)
        except (asyncio.TimeoutError, Exception) as e:
            log.info("unregister of producer %s: %s", self.group, e)
        if self._own_instance or self.instance.idle:
            await self.instance.shutdown()

    async def __aenter__(self):
        await self.start()
        return self

    async def __aexit__(self, *exc):
        await self.shutdown()

    def _check_running(self) -> None:
        if self.state != "RUNNING":
            raise StateError(f"The producer service state not OK, {self.state}")

    # -- instance hooks ---------------------------------------------------------------------
    def publish_topics(self) -> list[str]:
        return list(self.topic_publish_info)

    def update_topic_publish_info(self, topic: str, info: TopicPublishInfo) -> None:
        if topic in self.topic_publish_info:
            self.topic_publish_info[topic] = info

    def check_transaction_state(self, addr, msg, header) -> None:
        log.info("producer %s is not a transaction producer; check of %s ignored", self.group, msg.msg_id)

    # -- route ------------------------------------------------------------------------------
    async def find_publish_info(self, topic: str) -> TopicPublishInfo:
        """``tryToFindTopicPublishInfo``: the cached info, else the route, else TBW102's route stored
        under ``topic`` (the broker then creates the topic on the first send)."""
        info = self.topic_publish_info.get(topic)
        if info is None or not info.ok():
            self.topic_publish_info[topic] = TopicPublishInfo([], have_topic_router_info=False)
            await self.instance.update_topic_route(topic)
            info = self.topic_publish_info[topic]
        if info.have_topic_router_info or info.ok():
            return info
        route = await self.instance.fetch_route(self.create_topic_key)
        if route is not None:
            for q in route.queue_datas or ():
                q.read_queue_nums = q.write_queue_nums = min(self.default_topic_queue_nums, q.read_queue_nums)
            await self.instance.update_topic_route(topic, route)
        return self.topic_publish_info[topic]

    async def fetch_publish_message_queues(self, topic: str) -> list[MessageQueue]:
        info = await self.find_publish_info(topic)
        return list(info.message_queue_list)

    # -- sending ----------------------------------------------------------------------------
    def _now(self) -> float:
        return time.monotonic()

    def _prepare(self, msg: Message) -> None:
        validate_message(msg, self.max_message_size)
        if P.UNIQ_KEY not in msg.properties:
            msg.properties[P.UNIQ_KEY] = self._uniq()

    async def send(self, msg: Message, mq: MessageQueue | None = None, *, selector: MessageQueueSelector | None = None,
                   arg=None, timeout: float | None = None) -> SendResult:
        """Sync send (to ``mq`` if given, or the queue ``selector(mqs, msg, arg)`` picks)."""
        self._check_running()
        timeout = self.send_msg_timeout if timeout is None else timeout
        if mq is not None or selector is not None:
            return await self._send_to_queue(msg, mq, selector, arg, SYNC, timeout)
        return await self._send_default(msg, SYNC, timeout)

    def send_async(self, msg: Message, mq: MessageQueue | None = None, *, selector: MessageQueueSelector | None = None,
                   arg=None, timeout: float | None = None,
                   callback: Callable[[SendResult | None, BaseException | None], None] | None = None) -> asyncio.Task:
        """Async send: returns a task resolving to the SendResult; ``callback(result, error)`` runs when done."""
        self._check_running()
        timeout = self.send_msg_timeout if timeout is None else timeout
        if mq is not None or selector is not None:
            coro = self._send_to_queue(msg, mq, selector, arg, ASYNC, timeout)
        else:
            coro = self._send_default(msg, ASYNC, timeout)
        task = asyncio.get_running_loop().create_task(coro)
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        if callback is not None:
            def done(t: asyncio.Task):
                if t.cancelled():
                    return
                e = t.exception()
                callback(None if e else t.result(), e)
            task.add_done_callback(done)
        return task

    async def send_oneway(self, msg: Message, mq: MessageQueue | None = None, *,
                          selector: MessageQueueSelector | None = None, arg=None) -> None:
        self._check_running()
        if mq is not None or selector is not None:
            await self._send_to_queue(msg, mq, selector, arg, ONEWAY, self.send_msg_timeout)
        else:
            await self._send_default(msg, ONEWAY, self.send_msg_timeout)

    async def send_batch(self, msgs: Sequence[Message], mq: MessageQueue | None = None, *,
                         timeout: float | None = None) -> SendResult:
        """``send(Collection<Message>)``: one SEND_BATCH_MESSAGE; same topic and WAIT flag, no delay,
        no retry topic; each message validated and given its own UNIQ_KEY; not compressed."""
        self._check_running()
        batch = self._batch(msgs)
        timeout = self.send_msg_timeout if timeout is None else timeout
        if mq is not None:
            return await self._send_to_queue(batch, mq, None, None, SYNC, timeout)
        return await self._send_default(batch, SYNC, timeout)

    def _batch(self, msgs: Sequence[Message]) -> "_Batch":
        if not msgs:
            raise MQClientError("the message list is empty", 13)
        first = msgs[0]
        for m in msgs:
            if m.get_delay_time_level() > 0:
                raise MQClientError("TimeDelayLevel is not supported for batching", 13)
            if m.topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
                raise MQClientError("Retry Group is not supported for batching", 13)
            if m.topic != first.topic:
                raise MQClientError("The topic of the messages in one batch should be the same", 13)
            if m.properties.get(P.WAIT) != first.properties.get(P.WAIT):
                raise MQClientError("The waitStoreMsgOK of the messages in one batch should the same", 13)
            self._prepare(m)
        body = R.batch_body(msgs)
        batch = _Batch(first.topic, body, properties={P.WAIT: first.properties.get(P.WAIT, "true")})
        batch.messages = list(msgs)
        validate_message(batch, self.max_message_size)
        return batch

    async def _send_default(self, msg: Message, mode: str, timeout: float) -> SendResult | None:
        """``sendDefaultImpl`` (see the module docstring)."""
        begin = self._now()
        if not isinstance(msg, _Batch):
            self._prepare(msg)
        info = self.topic_publish_info.get(msg.topic)
        if info is None or not info.ok():
            info = await self.find_publish_info(msg.topic)
        if not info.ok():
            raise NoRouteError(msg.topic, ", see http://rocketmq.apache.org/docs/faq/")
        times_total = 1 + self.retry_times_when_send_failed if mode == SYNC else 1
        mq: MessageQueue | None = None
        result: SendResult | None = None
        last_error: BaseException | None = None
        brokers_sent: list[str] = []
        times = 0
        for times in range(times_total):
            last_broker = mq.broker_name if mq is not None else None
            mq = self.fault_strategy.select_one_message_queue(info, last_broker)
            brokers_sent.append(mq.broker_name)
            start = self._now()
            if start - begin >= timeout:
                raise MQClientError(f"sendDefaultImpl call timeout: {int((start - begin) * 1000)} ms")
            try:
                result = await self._send_kernel(msg, mq, mode, timeout - (start - begin))
                self._attempt(mq, start, None)
                if mode != SYNC:
                    return result
                if result.send_status != SendStatus.SEND_OK and self.retry_another_broker_when_not_store_ok:
                    continue
                return result
            except (RemotingError, MQClientError, OSError) as e:
                self._attempt(mq, start, e)
                last_error = e
                if mode == ASYNC:
                    return await self._async_retries(msg, mq, info, timeout - (self._now() - begin), e)
                if mode == ONEWAY:
                    raise
                continue
            except MQBrokerError as e:
                self._attempt(mq, start, e)
                last_error = e
                if mode == SYNC and e.code in RETRY_RESPONSE_CODES:
                    continue
                if result is not None:
                    return result
                raise
        if result is not None:
            return result
        cost = int((self._now() - begin) * 1000)
        raise MQClientError(f"Send [{times + 1}] times, still failed, cost [{cost}]ms, Topic: {msg.topic}, "
                            f"BrokersSent: {brokers_sent}: {last_error}") from last_error

    async def _async_retries(self, msg, failed: MessageQueue, info: TopicPublishInfo, remaining: float,
                             error: BaseException) -> SendResult:
        """``MQClientAPIImpl#onExceptionImpl``: re-send to another broker's queue (new opaque) while
        attempts remain and time is left; transport failures only."""
        mq = failed
        for _ in range(self.retry_times_when_send_async_failed):
            if remaining <= 0:
                break
            mq = self.fault_strategy.select_one_message_queue(info, mq.broker_name)
            start = self._now()
            try:
                result = await self._send_kernel(msg, mq, ASYNC, remaining)
                self._attempt(mq, start, None)
                return result
            except (RemotingError, MQClientError, OSError) as e:
                self._attempt(mq, start, e)
                error = e
                remaining -= self._now() - start
        raise error

    def _attempt(self, mq: MessageQueue, start: float, error: BaseException | None) -> None:
        elapsed_ms = int((self._now() - start) * 1000)
        self.fault_strategy.update_fault_item(mq.broker_name, elapsed_ms, error is not None)
        if self.on_attempt is not None:
            self.on_attempt({"time_ms": self.clock(), "broker": mq.broker_name, "queue_id": mq.queue_id,
                             "latency_ms": elapsed_ms, "error": None if error is None else str(error)})

    async def _send_to_queue(self, msg: Message, mq: MessageQueue | None, selector, arg, mode: str,
                             timeout: float) -> SendResult | None:
        """``sendKernelImpl`` on a given queue, or ``sendSelectImpl``: one attempt, no retry."""
        begin = self._now()
        if not isinstance(msg, _Batch):
            self._prepare(msg)
        if mq is None:
            info = await self.find_publish_info(msg.topic)
            if not info.ok():
                raise NoRouteError(msg.topic)
            mq = selector(list(info.message_queue_list), msg, arg)
            if mq is None:
                raise MQClientError("select message queue return null.")
        elif mq.topic != msg.topic:
            raise MQClientError(f"message's topic not equal mq's topic")
        remaining = timeout - (self._now() - begin)
        if remaining <= 0:
            raise MQClientError("sendSelectImpl call timeout")
        start = self._now()
        try:
            result = await self._send_kernel(msg, mq, mode, remaining)
        except (RemotingError, MQClientError, MQBrokerError, OSError) as e:
            self._attempt(mq, start, e)
            raise
        self._attempt(mq, start, None)
        return result

    async def _broker_addr(self, broker_name: str, topic: str) -> str:
        addr = self.instance.find_broker_address_in_publish(broker_name)
        if addr is None:
            await self.find_publish_info(topic)
            await self.instance.update_topic_route(topic)
            addr = self.instance.find_broker_address_in_publish(broker_name)
        if addr is None:
            raise MQClientError(f"The broker[{broker_name}] not exist", 10003)
        if self.instance.config.vip_channel_enabled:
            host, port = parse_address(addr)
            addr = format_address(host, port - 2)
        return addr

    async def _send_kernel(self, msg: Message, mq: MessageQueue, mode: str, timeout: float) -> SendResult | None:
        addr = self.instance.find_broker_address_in_publish(mq.broker_name)
        if addr is None or self.instance.config.vip_channel_enabled:
            addr = await self._broker_addr(mq.broker_name, msg.topic)
        batch = isinstance(msg, _Batch)
        sys_flag = 0
        body = msg.body
        if not batch:
            body, flags = R.maybe_compress(body, self.compress_msg_body_over_howmuch, self.compress_level)
            sys_flag |= flags
        if msg.properties.get(P.TRAN_MSG) == "true":
            sys_flag |= 0x4
        request = R.send_message_fast(
            group=self.group, topic=msg.topic, queue_id=mq.queue_id, sys_flag=sys_flag, born_timestamp=self.clock(),
            flag=msg.flag, properties=P.hashmap_order(msg.properties), body=body, batch=batch,
            default_topic=self.create_topic_key, default_topic_queue_nums=self.default_topic_queue_nums)
        remoting = self.instance.remoting
        if mode == ONEWAY:
            await remoting.invoke_oneway(addr, request)
            return None
        response = await remoting.invoke(addr, request, timeout)
        uniq = ",".join(m.properties.get(P.UNIQ_KEY, "") for m in msg.messages) if batch else msg.uniq_key
        return R.read_send(response, mq, uniq, addr)

    # -- request-reply ----------------------------------------------------------------------
    async def request(self, msg: Message, timeout: float = 3.0, *, mq: MessageQueue | None = None,
                      selector: MessageQueueSelector | None = None, arg=None) -> MessageExt:
        """``request(msg, timeout)``: send with CORRELATION_ID / REPLY_TO_CLIENT / TTL and wait for the
        reply the broker pushes back (PUSH_REPLY_MESSAGE_TO_CLIENT)."""
        self._check_running()
        begin = self._now()
        correlation = str(uuid.uuid4())
        msg.properties[CORRELATION_ID] = correlation
        msg.properties[REPLY_TO_CLIENT] = self.instance.client_id
        msg.properties[MESSAGE_TTL] = str(int(timeout * 1000))
        if msg.topic not in self.instance.route_table:
            await self.find_publish_info(msg.topic)
            await self.instance.send_heartbeat_to_all_brokers()
        future = asyncio.get_running_loop().create_future()
        self.instance.reply_futures[correlation] = future
        try:
            remaining = timeout - (self._now() - begin)
            if mq is not None or selector is not None:
                await self._send_to_queue(msg, mq, selector, arg, ASYNC, remaining)
            else:
                await self._send_default(msg, ASYNC, remaining)
            remaining = timeout - (self._now() - begin)
            try:
                return await asyncio.wait_for(future, max(remaining, 0.001))
            except asyncio.TimeoutError:
                raise RequestTimeoutError(f"send request message to <{msg.topic}> OK, but wait reply message "
                                          f"timeout, {int(timeout * 1000)} ms.") from None
        finally:
            self.instance.reply_futures.pop(correlation, None)


class _Batch(Message):
    """A batch as one message (``MessageBatch``): the encoded entries as body."""

    messages: list[Message]
