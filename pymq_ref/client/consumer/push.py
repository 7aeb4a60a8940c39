"""``DefaultMQPushConsumer``: the consumer that pulls in a loop and pushes to a listener
(``client/consumer/DefaultMQPushConsumer.java``, ``client/impl/consumer/DefaultMQPushConsumerImpl.java``).

Theory of operation. Rebalance (:mod:`pymq_ref.client.rebalance`) gives the consumer its queues;
each owned queue gets a :class:`~pymq_ref.client.rebalance.PullRequest` and one pull-loop task here.
A pull asks the broker for up to ``pull_batch_size`` messages from ``next_offset`` and lets the broker
hold it up to 15 s when nothing is there (long polling; the client waits 30 s). Before pulling, flow
control checks the queue's :class:`~.process_queue.ProcessQueue`: more than
``pull_threshold_for_queue`` messages, ``pull_threshold_size_for_queue`` MiB or (concurrently) an
offset span over ``consume_concurrently_max_span`` → try again in 50 ms; an orderly queue not locked →
3 s. A pull that fails → 3 s. Found messages go to the consume service (:mod:`.consume`); offsets
go to the offset store and reach the broker every 5 s (and in the pull's ``commitOffset``).

Where a new queue starts (``consume_from_where``, when the group has no offset on the broker):
LAST_OFFSET → the queue's max offset (the retry topic: 0), FIRST_OFFSET → 0, TIMESTAMP → the offset
of ``consume_timestamp`` (``yyyyMMddHHmmss``, default 30 minutes ago).

Legal call order: ``subscribe`` (any number) and ``register_message_listener`` (once), then
``await start()``, then ``await shutdown()`` — which stops pulling, waits for no listener, persists
offsets, unlocks orderly queues, unregisters and always returns.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from typing import Callable

from pymq_ref.formats.message_queue import MessageQueue
from pymq_ref.remoting.bodies.consumer import ConsumerRunningInfo, ProcessQueueInfo
from pymq_ref.remoting.bodies.heartbeat import (EXPRESSION_TAG, ConsumeFromWhere, ConsumeType, ConsumerData,
                                                MessageModel)
from pymq_ref.remoting.errors import RemotingError

from .. import requests as R
from ..allocate import AllocateMessageQueueStrategy, strategy_for_name
from ..config import ClientConfig
from ..errors import MQBrokerError, MQClientError, StateError
from ..instance import MQClientInstance, now_ms
from ..message import Message, MessageExt, retry_topic, validate_group
from ..rebalance import CLUSTERING, PullRequest, RebalanceImpl
from .consume import ConcurrentConsumeService, OrderlyConsumeService
from .offset_store import READ_FROM_MEMORY, READ_FROM_STORE, LocalFileOffsetStore, RemoteBrokerOffsetStore
from .process_queue import ProcessQueue

log = logging.getLogger("pymq_ref.client")

BROKER_SUSPEND_MAX_TIME_MILLIS = 15_000
CONSUMER_TIMEOUT_MILLIS_WHEN_SUSPEND = 30.0  # s
PULL_TIME_DELAY_WHEN_EXCEPTION = 3.0  # s
PULL_TIME_DELAY_WHEN_FLOW_CONTROL = 0.05
PULL_TIME_DELAY_WHEN_SUSPEND = 1.0
OFFSET_ILLEGAL_REMOVE_DELAY = 10.0


def default_consume_timestamp(now_ms_value: int) -> str:
    t = datetime.datetime.fromtimestamp(now_ms_value / 1000 - 30 * 60)
    return t.strftime("%Y%m%d%H%M%S")


def parse_consume_timestamp(text: str) -> int:
    """``UtilAll.parseDate(yyyyMMddHHmmss)`` in local time → epoch ms."""
    return int(datetime.datetime.strptime(text, "%Y%m%d%H%M%S").timestamp() * 1000)


class DefaultMQPushConsumer:
    consume_type = ConsumeType.CONSUME_PASSIVELY.value
    needs_listener = True
    subscribes_retry_topic = True

    def __init__(self, group: str, namesrv_addr: str | None = None, *, config: ClientConfig | None = None,
                 instance: MQClientInstance | None = None, message_model: str = CLUSTERING,
                 consume_from_where: str = ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET.value,
                 consume_timestamp: str | None = None,
                 allocate_strategy: AllocateMessageQueueStrategy | str | None = None,
                 consume_thread_max: int = 20, consume_concurrently_max_span: int = 2000,
                 pull_threshold_for_queue: int = 1000, pull_threshold_size_for_queue: int = 100,
                 pull_threshold_for_topic: int = -1, pull_threshold_size_for_topic: int = -1,
                 pull_interval: float = 0.0, consume_message_batch_max_size: int = 1, pull_batch_size: int = 32,
                 post_subscription_when_pull: bool = False, max_reconsume_times: int = -1,
                 suspend_current_queue_time_millis: int = 1000, consume_timeout: float = 15.0,
                 offset_store_dir: str | None = None,
                 broker_suspend_max_time_millis: int = BROKER_SUSPEND_MAX_TIME_MILLIS,
                 clock: Callable[[], int] = now_ms):
        self.group = group
        self.config = config.copy() if config is not None else ClientConfig()
        if namesrv_addr:
            self.config.namesrv_addr = namesrv_addr
        self.instance = instance
        self._own_instance = instance is None
        self.message_model = MessageModel(message_model).value
        self.consume_from_where = ConsumeFromWhere(consume_from_where).value
        self.consume_timestamp = consume_timestamp or default_consume_timestamp(clock())
        if isinstance(allocate_strategy, str):
            allocate_strategy = strategy_for_name(allocate_strategy)
        self.allocate_strategy = allocate_strategy
        self.consume_thread_max = consume_thread_max
        self.consume_concurrently_max_span = consume_concurrently_max_span
        self.pull_threshold_for_queue = pull_threshold_for_queue
        self.pull_threshold_size_for_queue = pull_threshold_size_for_queue
        self.pull_threshold_for_topic = pull_threshold_for_topic
        self.pull_threshold_size_for_topic = pull_threshold_size_for_topic
        self.pull_interval = pull_interval
        self.consume_message_batch_max_size = consume_message_batch_max_size
        self.pull_batch_size = pull_batch_size
        self.post_subscription_when_pull = post_subscription_when_pull
        self.max_reconsume_times = max_reconsume_times
        self.suspend_current_queue_time_millis = suspend_current_queue_time_millis
        self.consume_timeout = consume_timeout  # minutes
        self.offset_store_dir = offset_store_dir
        self.broker_suspend_max_time_millis = broker_suspend_max_time_millis
        self.clock = clock
        self.listener = None
        self.orderly = False
        self.subscriptions: dict[str, tuple[str, str]] = {}  # topic -> (expression, type)
        self.rebalance: RebalanceImpl | None = None
        self.offset_store = None
        self.consume_service = None
        self.pull_tasks: dict[MessageQueue, asyncio.Task] = {}
        self.pull_from_which_node: dict[MessageQueue, int] = {}
        self.topic_subscribe_info: dict[str, set[MessageQueue]] = {}
        self.paused = False
        self.state = "CREATE_JUST"
        self.consumed_ok = 0
        self.consumed_failed = 0
        self._inner_producer = None
        self._tasks: set[asyncio.Task] = set()

    # -- configuration ------------------------------------------------------------------------
    def subscribe(self, topic: str, expression: str = "*", expression_type: str = EXPRESSION_TAG) -> None:
        self.subscriptions[topic] = (expression, expression_type)
        if self.rebalance is not None:
            self._add_subscription(topic, expression, expression_type)
            self.instance.rebalance_immediately()

    def unsubscribe(self, topic: str) -> None:
        self.subscriptions.pop(topic, None)
        if self.rebalance is not None:
            self.rebalance.subscription_inner.pop(topic, None)

    def register_message_listener(self, listener, *, orderly: bool = False) -> None:
        """``listener(msgs, context)`` returning a ``ConsumeConcurrentlyStatus`` (or, orderly, a
        ``ConsumeOrderlyStatus``); plain function or coroutine function."""
        self.listener = listener
        self.orderly = orderly

    def get_max_reconsume_times(self) -> int:
        if self.max_reconsume_times == -1:
            return 2**31 - 1 if self.orderly else 16
        return self.max_reconsume_times

    # -- lifecycle ----------------------------------------------------------------------------
    async def start(self) -> None:
        if self.state != "CREATE_JUST":
            raise StateError(f"The PushConsumer service state not OK, maybe started once, {self.state}")
        validate_group(self.group)
        if self.listener is None and self.needs_listener:
            raise MQClientError("messageListener is null")
        if self.message_model == CLUSTERING:
            self.config.change_instance_name_to_pid()
        if self.instance is None:
            self.instance = MQClientInstance(self.config, clock=self.clock)
        self.rebalance = RebalanceImpl(self, self.instance, self.group, self.message_model,
                                       self.allocate_strategy)
        for topic, (expression, kind) in self.subscriptions.items():
            self._add_subscription(topic, expression, kind)
        if self.message_model == CLUSTERING:
            if self.subscribes_retry_topic:
                self._add_subscription(retry_topic(self.group), "*", EXPRESSION_TAG)
            self.offset_store = RemoteBrokerOffsetStore(self.instance, self.group)
        else:
            self.offset_store = LocalFileOffsetStore(self.offset_store_dir, self.instance.client_id, self.group)
        await self.offset_store.load()
        self.consume_service = self._make_consume_service()
        self.instance.register_consumer(self)
        self.state = "RUNNING"
        await self.instance.start()
        for topic in list(self.rebalance.subscription_inner):
            try:
                await self.instance.update_topic_route(topic)
            except (RemotingError, MQClientError, OSError) as e:
                log.info("%s: route of %s: %s", self.group, topic, e)
        if self.orderly and self.message_model == CLUSTERING:
            self._spawn(self._lock_all_loop())
        try:
            await self.check_client_in_broker()
        except BaseException:
            await self.shutdown()
            raise
        await self.instance.send_heartbeat_to_all_brokers()
        self.instance.rebalance_immediately()

    async def check_client_in_broker(self) -> None:
        """CHECK_CLIENT_CONFIG for every SQL92 subscription, to one broker of its topic: a broker that
        cannot filter by SQL (``enablePropertyFilter=false``) or a bad expression fails ``start``."""
        for topic, sub in self.rebalance.subscription_inner.items():
            if sub.expression_type in (None, EXPRESSION_TAG):
                continue
            addr = self.instance.find_broker_addr_by_topic(topic)
            if addr is None:
                continue
            response = await self.instance.remoting.invoke(
                addr, R.check_client_config(self.instance.client_id, self.group, sub),
                self.instance.config.mq_client_api_timeout)
            if response.code != 0:
                raise MQClientError(f"Check client in broker error, maybe because you use {sub.expression_type} "
                                    f"filter, but server has not been upgraded: {response.remark}")

    async def shutdown(self) -> None:
        if self.state != "RUNNING":
            self.state = "SHUTDOWN_ALREADY"
            return
        self.state = "SHUTDOWN_ALREADY"
        for task in list(self._tasks) + list(self.pull_tasks.values()):
            task.cancel()
        await asyncio.gather(*self._tasks, *self.pull_tasks.values(), return_exceptions=True)
        self.pull_tasks.clear()
        if self.consume_service is not None:
            await self.consume_service.shutdown()
        for pq in self.rebalance.process_queue_table.values():
            pq.dropped = True
        try:
            await asyncio.wait_for(self.persist_consumer_offset(), 5)
            if self.orderly and self.message_model == CLUSTERING:
                await asyncio.wait_for(self.rebalance.unlock_all(False), 5)
            await asyncio.wait_for(self.instance.unregister(consumer_group=self.group), 5)
        except (asyncio.TimeoutError, Exception) as e:
            log.info("%s: shutdown clean-up: %s", self.group, e)
        if self._inner_producer is not None:
            await self._inner_producer.shutdown()
        if self._own_instance or self.instance.idle:
            await self.instance.shutdown()

    async def __aenter__(self):
        await self.start()
        return self

    async def __aexit__(self, *exc):
        await self.shutdown()

    def _make_consume_service(self):
        service = OrderlyConsumeService if self.orderly else ConcurrentConsumeService
        return service(self, self.listener)

    def _spawn(self, coro) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _add_subscription(self, topic: str, expression: str, kind: str) -> None:
        self.rebalance.subscription_inner[topic] = R.build_subscription(topic, expression, kind, self.clock())

    async def _lock_all_loop(self) -> None:
        await asyncio.sleep(1.0)
        while True:
            try:
                await self.rebalance.lock_all()
            except Exception as e:
                log.info("%s: lockAll: %s", self.group, e)
            await asyncio.sleep(20.0)

    def suspend(self) -> None:
        self.paused = True

    def resume(self) -> None:
        self.paused = False

    # -- instance hooks -----------------------------------------------------------------------
    def subscribe_topics(self) -> list[str]:
        return list(self.rebalance.subscription_inner) if self.rebalance else []

    def update_topic_subscribe_info(self, topic: str, mqs: set[MessageQueue]) -> None:
        if self.rebalance is not None and topic in self.rebalance.subscription_inner:
            self.rebalance.topic_subscribe_info[topic] = mqs
            self.topic_subscribe_info[topic] = mqs

    def consumer_data(self) -> ConsumerData:
        return ConsumerData(group_name=self.group, consume_type=ConsumeType(self.consume_type),
                            message_model=MessageModel(self.message_model),
                            consume_from_where=ConsumeFromWhere(self.consume_from_where),
                            subscription_data_set=list(self.rebalance.subscription_inner.values()), unit_mode=False)

    async def do_rebalance(self) -> None:
        if self.state == "RUNNING" and not self.paused:
            await self.rebalance.do_rebalance(self.orderly)

    async def persist_consumer_offset(self) -> None:
        if self.offset_store is not None and self.rebalance is not None:
            await self.offset_store.persist_all(set(self.rebalance.process_queue_table))

    def running_info(self) -> ConsumerRunningInfo:
        info = ConsumerRunningInfo()
        info.properties = {"PROP_CONSUME_TYPE": self.consume_type, "PROP_CONSUMEORDERLY": str(self.orderly).lower(),
                           "PROP_THREADPOOL_CORE_SIZE": str(self.consume_thread_max),
                           "PROP_CONSUMER_START_TIMESTAMP": str(self.clock())}
        info.subscription_set = list(self.rebalance.subscription_inner.values())
        for mq, pq in self.rebalance.process_queue_table.items():
            keys = pq.cached_offsets
            info.mq_table[mq] = ProcessQueueInfo(
                commit_offset=self.offset_store.offset_table.get(mq, -1), cached_msg_min_offset=keys[0] if keys else 0,
                cached_msg_max_offset=keys[-1] if keys else 0, cached_msg_count=pq.msg_count,
                cached_msg_size_in_mi_b=pq.msg_size // (1024 * 1024), locked=pq.locked,
                try_unlock_times=pq.try_unlock_times, last_lock_timestamp=pq.last_lock_timestamp, droped=pq.dropped,
                last_pull_timestamp=pq.last_pull_timestamp, last_consume_timestamp=pq.last_consume_timestamp)
        return info

    def stats_consumed(self, n: int, ok: bool) -> None:
        if ok:
            self.consumed_ok += n
        else:
            self.consumed_failed += n

    # -- rebalance hooks ----------------------------------------------------------------------
    async def compute_pull_from_where(self, mq: MessageQueue) -> int:
        """``RebalancePushImpl#computePullFromWhereWithException`` (see the module docstring)."""
        last = await self.offset_store.read_offset(mq, READ_FROM_STORE)
        if last >= 0:
            return last
        if last != -1:
            return -1
        where = self.consume_from_where
        try:
            if where == ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET:
                return 0
            if where == ConsumeFromWhere.CONSUME_FROM_TIMESTAMP:
                if mq.topic.startswith("%RETRY%"):
                    return await self._max_offset(mq)
                return await self._search_offset(mq, parse_consume_timestamp(self.consume_timestamp))
            if mq.topic.startswith("%RETRY%"):
                return 0
            return await self._max_offset(mq)
        except (MQBrokerError, MQClientError, RemotingError, OSError) as e:
            log.info("%s: start offset of %s: %s", self.group, mq, e)
            return -1

    async def _broker_call(self, mq: MessageQueue, request, reader):
        addr = self.instance.find_broker_address_in_publish(mq.broker_name)
        if addr is None:
            await self.instance.update_topic_route(mq.topic)
            addr = self.instance.find_broker_address_in_publish(mq.broker_name)
        if addr is None:
            raise MQClientError(f"The broker[{mq.broker_name}] not exist", 10003)
        response = await self.instance.remoting.invoke(addr, request, self.instance.config.mq_client_api_timeout)
        return reader(response, addr)

    async def _max_offset(self, mq: MessageQueue) -> int:
        return await self._broker_call(mq, R.get_max_offset(mq), R.read_max_offset)

    async def _search_offset(self, mq: MessageQueue, timestamp: int) -> int:
        return await self._broker_call(mq, R.search_offset(mq, timestamp), R.read_search_offset)

    async def remove_unnecessary_message_queue(self, mq: MessageQueue, pq: ProcessQueue) -> bool:
        await self.offset_store.persist(mq)
        self.offset_store.remove_offset(mq)
        task = self.pull_tasks.pop(mq, None)
        if task is not None:
            task.cancel()
        if self.orderly and self.message_model == CLUSTERING:
            if pq.has_temp_message():
                self._spawn(self._unlock_later(mq, 20.0))
            else:
                await self.rebalance.unlock(mq, True)
        return True

    async def _unlock_later(self, mq: MessageQueue, delay: float) -> None:
        await asyncio.sleep(delay)
        await self.rebalance.unlock(mq, True)

    async def message_queue_changed(self, topic, mq_all, mq_divided) -> None:
        """Per-queue thresholds from the per-topic ones; heartbeat so brokers see the new subVersion."""
        sub = self.rebalance.subscription_inner.get(topic)
        if sub is not None:
            sub.sub_version = self.clock()
        n = len(self.rebalance.process_queue_table)
        if n:
            if self.pull_threshold_for_topic != -1:
                self.pull_threshold_for_queue = max(1, self.pull_threshold_for_topic // n)
            if self.pull_threshold_size_for_topic != -1:
                self.pull_threshold_size_for_queue = max(1, self.pull_threshold_size_for_topic // n)
        await self.instance.send_heartbeat_to_all_brokers()

    def dispatch_pull_requests(self, requests: list[PullRequest]) -> None:
        for req in requests:
            old = self.pull_tasks.get(req.message_queue)
            if old is not None:
                old.cancel()
            self.pull_tasks[req.message_queue] = asyncio.get_running_loop().create_task(self._pull_loop(req))

    # -- the pull loop ------------------------------------------------------------------------
    async def _pull_loop(self, req: PullRequest) -> None:
        try:
            while self.state == "RUNNING" and not req.process_queue.dropped:
                delay = await self.pull_message(req)
                if delay is None:
                    return
                if delay > 0:
                    await asyncio.sleep(delay)
        finally:
            if self.pull_tasks.get(req.message_queue) is asyncio.current_task():
                del self.pull_tasks[req.message_queue]

    async def pull_message(self, req: PullRequest) -> float | None:
        """One step of ``pullMessage``: the delay before the next pull (seconds), None to stop."""
        pq, mq = req.process_queue, req.message_queue
        if pq.dropped:
            return None
        pq.last_pull_timestamp = self.clock()
        if self.paused:
            return PULL_TIME_DELAY_WHEN_SUSPEND
        if pq.msg_count > self.pull_threshold_for_queue:
            return PULL_TIME_DELAY_WHEN_FLOW_CONTROL
        if pq.msg_size > self.pull_threshold_size_for_queue * 1024 * 1024:
            return PULL_TIME_DELAY_WHEN_FLOW_CONTROL
        if not self.orderly:
            if pq.max_span() > self.consume_concurrently_max_span:
                return PULL_TIME_DELAY_WHEN_FLOW_CONTROL
        else:
            if not pq.locked:
                return PULL_TIME_DELAY_WHEN_EXCEPTION
            if not req.previously_locked:
                offset = await self.compute_pull_from_where(mq)
                if offset < 0:
                    return PULL_TIME_DELAY_WHEN_EXCEPTION
                req.next_offset = offset
                req.previously_locked = True
        sub = self.rebalance.subscription_inner.get(mq.topic)
        if sub is None:
            return PULL_TIME_DELAY_WHEN_EXCEPTION
        commit_offset = 0
        if self.message_model == CLUSTERING:
            commit_offset = await self.offset_store.read_offset(mq, READ_FROM_MEMORY)
        sub_expression = sub.sub_string if self.post_subscription_when_pull and not sub.class_filter_mode else None
        sys_flag = R.pull_sys_flag(commit_offset > 0, True, sub_expression is not None, sub.class_filter_mode)
        try:
            broker_id = self.pull_from_which_node.get(mq, 0)
            addr = self.instance.find_broker_address_in_subscribe(mq.broker_name, broker_id, False)
            if addr is None:
                await self.instance.update_topic_route(mq.topic)
                addr = self.instance.find_broker_address_in_subscribe(mq.broker_name, broker_id, False)
            if addr is None:
                raise MQClientError(f"The broker[{mq.broker_name}] not exist", 10003)
            request = R.pull_message(
                group=self.group, mq=mq, queue_offset=req.next_offset, max_msg_nums=self.pull_batch_size,
                sys_flag=sys_flag, commit_offset=max(commit_offset, 0),
                suspend_timeout_millis=self.broker_suspend_max_time_millis, subscription=sub_expression,
                sub_version=sub.sub_version, expression_type=sub.expression_type)
            response = await self.instance.remoting.invoke(addr, request, CONSUMER_TIMEOUT_MILLIS_WHEN_SUSPEND)
            result = R.read_pull(response, mq, sub, addr)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            if not mq.topic.startswith("%RETRY%"):
                log.info("%s: pull of %s failed: %s", self.group, mq, e)
            return PULL_TIME_DELAY_WHEN_EXCEPTION
        self.pull_from_which_node[mq] = result.suggest_which_broker_id
        if result.status == R.FOUND:
            req.next_offset = result.next_begin_offset
            if not result.messages:
                return 0.0
            self.on_found(req, result.messages)
            return self.pull_interval
        if result.status in (R.NO_NEW_MSG, R.NO_MATCHED_MSG):
            req.next_offset = result.next_begin_offset
            if pq.msg_count == 0:
                self.offset_store.update_offset(mq, req.next_offset, True)
            return 0.0
        # OFFSET_ILLEGAL
        log.warning("%s: offset %s of %s is illegal; the broker suggests %s", self.group, req.next_offset, mq,
                    result.next_begin_offset)
        req.next_offset = result.next_begin_offset
        pq.dropped = True
        self._spawn(self._offset_illegal(req))
        return None

    def on_found(self, req: PullRequest, messages: list[MessageExt]) -> None:
        dispatch = req.process_queue.put_messages(messages)
        self.consume_service.submit(messages, req.process_queue, req.message_queue, dispatch)

    async def _offset_illegal(self, req: PullRequest) -> None:
        await asyncio.sleep(OFFSET_ILLEGAL_REMOVE_DELAY)
        mq = req.message_queue
        self.offset_store.update_offset(mq, req.next_offset, False)
        await self.offset_store.persist(mq)
        self.rebalance.process_queue_table.pop(mq, None)

    # -- retry ----------------------------------------------------------------------------------
    async def send_back_to_broker(self, msg: MessageExt, delay_level: int, broker_name: str | None) -> None:
        addr = self.instance.find_broker_address_in_publish(broker_name) if broker_name else None
        if addr is None:
            addr = msg.store_host
        request = R.send_back(group=self.group, msg=msg, delay_level=delay_level,
                              max_reconsume_times=self.get_max_reconsume_times())
        response = await self.instance.remoting.invoke(addr, request, 5.0)
        R.check(response, addr)

    async def inner_producer_send(self, msg: Message) -> None:
        from ..producer import DefaultMQProducer
        if self._inner_producer is None:
            self._inner_producer = DefaultMQProducer(f"CLIENT_INNER_PRODUCER_{self.group}"[:255].replace("%", "_"),
                                                     instance=self.instance)
            await self._inner_producer.start()
        await self._inner_producer.send(msg)
