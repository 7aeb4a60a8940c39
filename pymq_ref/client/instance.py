"""``MQClientInstance``: the connections, routes and timers one client process shares with its
producers and consumers (``client/impl/factory/MQClientInstance.java``).

Theory of operation. An instance owns one :class:`~pymq_ref.remoting.transport.RemotingClient`
(one TCP connection per name server or broker address), the cached topic routes and the broker
address table built from them, and the periodic work of 4.9.4:

==========================  ============  ==========================================================
task                        period        what
==========================  ============  ==========================================================
route refresh               30 s          GET_ROUTEINFO_BY_TOPIC for every topic a member uses
heartbeat                   30 s          drop brokers no route mentions; HEART_BEAT to the others
offset persistence          5 s           consumers push their offsets (UPDATE_CONSUMER_OFFSET)
rebalance                   20 s          consumers re-allocate queues; woken early by a broker's
                                          NOTIFY_CONSUMER_IDS_CHANGED or a member's start
==========================  ============  ==========================================================

Brokers call the client back on its own connections: CHECK_TRANSACTION_STATE (to the
transaction producer of the message's PGROUP), NOTIFY_CONSUMER_IDS_CHANGED, GET_CONSUMER_RUNNING_INFO
(a minimal answer), PUSH_REPLY_MESSAGE_TO_CLIENT (request-reply).

Members (producers, consumers) register by group; each is an object with ``group`` and the
hooks the instance calls (see :class:`ProducerMember` / :class:`ConsumerMember`).

Legal call order: ``await start()`` (idempotent) … ``await shutdown()``; shutdown cancels every task
it started and closes every connection, and always returns. Everything runs on the event loop that
called ``start``; nothing here blocks it.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from typing import Callable, Protocol

from pymq_ref.formats import properties as P
from pymq_ref.formats.message import decode_message
from pymq_ref.formats.message_queue import MessageQueue
from pymq_ref.remoting.bodies.bean import encode_body
from pymq_ref.remoting.bodies.consumer import ConsumerRunningInfo
from pymq_ref.remoting.bodies.heartbeat import HeartbeatData, ProducerData
from pymq_ref.remoting.bodies.route import TopicRouteData
from pymq_ref.remoting.codes import RequestCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.dispatch import RequestDispatcher
from pymq_ref.remoting.errors import RemotingError
from pymq_ref.remoting.headers.clients import GetConsumerRunningInfoRequestHeader, NotifyConsumerIdsChangedRequestHeader
from pymq_ref.remoting.headers.send import ReplyMessageRequestHeader
from pymq_ref.remoting.headers.transaction import CheckTransactionStateRequestHeader
from pymq_ref.remoting.transport import RemotingClient

from . import requests as R
from .config import ClientConfig
from .errors import MQClientError, NO_NAME_SERVER_EXCEPTION, StateError
from .fault import TopicPublishInfo
from .message import MessageExt

log = logging.getLogger("pymq_ref.client")

PERM_READ, PERM_WRITE = 0x4, 0x2
MASTER_ID = 0
CLIENT_INNER_PRODUCER_GROUP = "CLIENT_INNER_PRODUCER"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class ProducerMember(Protocol):
    group: str

    def publish_topics(self) -> list[str]: ...

    def update_topic_publish_info(self, topic: str, info: TopicPublishInfo) -> None: ...

    def check_transaction_state(self, addr: str, msg: MessageExt, header) -> None: ...


class ConsumerMember(Protocol):
    group: str

    def consumer_data(self): ...

    def subscribe_topics(self) -> list[str]: ...

    def update_topic_subscribe_info(self, topic: str, mqs: set[MessageQueue]) -> None: ...

    async def do_rebalance(self) -> None: ...

    async def persist_consumer_offset(self) -> None: ...


def route_to_publish_info(topic: str, route: TopicRouteData) -> TopicPublishInfo:
    """``topicRouteData2TopicPublishInfo``: the writable queues of brokers that have a master, by broker
    name; or the ``orderTopicConf`` list when the name server gave one."""
    if route.order_topic_conf:
        mqs = []
        for item in route.order_topic_conf.split(";"):
            name, _, num = item.partition(":")
            mqs += [MessageQueue(topic, name, i) for i in range(int(num))]
        return TopicPublishInfo(mqs, order_topic=True)
    masters = {b.broker_name for b in route.broker_datas or () if (b.broker_addrs or {}).get(MASTER_ID)}
    mqs, datas = [], []
    for q in sorted(route.queue_datas or (), key=lambda q: q.broker_name.encode("utf-16-be")):
        datas.append((q.broker_name, q.write_queue_nums))
        if q.perm & PERM_WRITE and q.broker_name in masters:
            mqs += [MessageQueue(topic, q.broker_name, i) for i in range(q.write_queue_nums)]
    return TopicPublishInfo(mqs, datas)


def route_to_subscribe_info(topic: str, route: TopicRouteData) -> set[MessageQueue]:
    """``topicRouteData2TopicSubscribeInfo``: the readable queues of every broker of the route."""
    return {MessageQueue(topic, q.broker_name, i) for q in route.queue_datas or () if q.perm & PERM_READ
            for i in range(q.read_queue_nums)}


def _route_key(route: TopicRouteData):
    """What ``topicRouteDataIsChange`` compares (queue and broker data sorted by broker name)."""
    queues = sorted((q.broker_name, q.read_queue_nums, q.write_queue_nums, q.perm, q.topic_sys_flag)
                    for q in route.queue_datas or ())
    brokers = sorted((b.broker_name, b.cluster, tuple(sorted((b.broker_addrs or {}).items())))
                     for b in route.broker_datas or ())
    return route.order_topic_conf, queues, brokers


def _publish_ok(producer, topic: str) -> bool:
    info = getattr(producer, "topic_publish_info", {}).get(topic)
    return info is not None and info.ok()


class MQClientInstance:
    """See the module docstring."""

    def __init__(self, config: ClientConfig, *, clock: Callable[[], int] = now_ms):
        self.config = config
        self.client_id = config.build_client_id()
        self.clock = clock
        self.dispatcher = RequestDispatcher()
        self.dispatcher.register_all({
            RequestCode.CHECK_TRANSACTION_STATE: self._on_check_transaction_state,
            RequestCode.NOTIFY_CONSUMER_IDS_CHANGED: self._on_notify_consumer_ids_changed,
            RequestCode.GET_CONSUMER_RUNNING_INFO: self._on_get_consumer_running_info,
            RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT: self._on_push_reply_message,
        })
        self.remoting = RemotingClient(self.dispatcher, name=f"client {self.client_id}")
        self.route_table: dict[str, TopicRouteData] = {}
        self.broker_addr_table: dict[str, dict[int, str]] = {}
        self.broker_version_table: dict[str, int] = {}
        self.producers: dict[str, ProducerMember] = {}
        self.consumers: dict[str, ConsumerMember] = {}
        self.reply_futures: dict[str, asyncio.Future] = {}  # request-reply: correlation id -> future
        self._tasks: set[asyncio.Task] = set()
        self._rebalance_wakeup: asyncio.Event | None = None
        self._route_lock: asyncio.Lock | None = None
        self._namesrv_index = random.randrange(1 << 16)
        self.running = False
        self.stopped = False

    # -- lifecycle --------------------------------------------------------------------------
    async def start(self) -> None:
        if self.stopped:
            raise StateError(f"client instance {self.client_id} was shut down; make a new one")
        if self.running:
            return
        if not self.config.namesrv_list():
            raise MQClientError("no name server address: set namesrv_addr", NO_NAME_SERVER_EXCEPTION)
        self.running = True
        self._rebalance_wakeup = asyncio.Event()
        self._route_lock = asyncio.Lock()
        c = self.config
        self._every(0.01, c.poll_name_server_interval, self.update_all_routes, "route refresh")
        self._every(1.0, c.heartbeat_broker_interval, self._clean_and_heartbeat, "heartbeat")
        self._every(c.persist_consumer_offset_interval, c.persist_consumer_offset_interval,
                    self.persist_all_consumer_offsets, "offset persistence")
        self._spawn(self._rebalance_loop(), "rebalance")

    async def shutdown(self) -> None:
        """Stop the timers, say goodbye to the brokers (UNREGISTER_CLIENT per group), close connections."""
        if self.stopped:
            return
        self.stopped = True
        self.running = False
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        for future in self.reply_futures.values():
            if not future.done():
                future.cancel()
        await self.remoting.close()

    def _spawn(self, coro, name: str) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coro, name=f"{self.client_id} {name}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _every(self, first: float, period: float, job, name: str) -> None:
        async def loop():
            await asyncio.sleep(first)
            while self.running:
                try:
                    await job()
                except asyncio.CancelledError:
                    raise
                except Exception as e:  # a periodic task logs and carries on, as ScheduledExecutorService jobs do
                    log.warning("%s: %s failed: %s", self.client_id, name, e)
                await asyncio.sleep(period)
        self._spawn(loop(), name)

    # -- members ----------------------------------------------------------------------------
    def register_producer(self, producer: ProducerMember) -> None:
        if producer.group in self.producers:
            raise MQClientError(f"The producer group[{producer.group}] has been created before, specify another name please.")
        self.producers[producer.group] = producer

    def register_consumer(self, consumer: ConsumerMember) -> None:
        if consumer.group in self.consumers:
            raise MQClientError(f"The consumer group[{consumer.group}] has been created before, specify another name please.")
        self.consumers[consumer.group] = consumer

    async def unregister(self, producer_group: str | None = None, consumer_group: str | None = None) -> None:
        """Forget a member and tell every broker (UNREGISTER_CLIENT, errors ignored)."""
        if producer_group:
            self.producers.pop(producer_group, None)
        if consumer_group:
            self.consumers.pop(consumer_group, None)
        request = R.unregister_client(self.client_id, producer_group, consumer_group)
        for addrs in list(self.broker_addr_table.values()):
            for addr in list(addrs.values()):
                try:
                    await self.remoting.invoke(addr, request, self.config.mq_client_api_timeout)
                except (RemotingError, OSError) as e:
                    log.info("%s: unregister from %s failed: %s", self.client_id, addr, e)

    @property
    def idle(self) -> bool:
        return not self.producers and not self.consumers

    # -- name server ------------------------------------------------------------------------
    async def invoke_namesrv(self, request: RemotingCommand, timeout: float | None = None) -> RemotingCommand:
        """Ask the name servers in turn (starting at a random one, as ``NettyRemotingClient`` does)."""
        addrs = self.config.namesrv_list()
        last: Exception | None = None
        for i in range(len(addrs)):
            addr = addrs[(self._namesrv_index + i) % len(addrs)]
            try:
                response = await self.remoting.invoke(addr, request, timeout or self.config.mq_client_api_timeout)
                self._namesrv_index = (self._namesrv_index + i) % len(addrs)
                return response
            except (RemotingError, OSError) as e:
                last = e
        raise last if last is not None else MQClientError("no name server", NO_NAME_SERVER_EXCEPTION)

    async def fetch_route(self, topic: str) -> TopicRouteData | None:
        return R.read_route(await self.invoke_namesrv(R.get_route(topic)))

    async def update_topic_route(self, topic: str, route: TopicRouteData | None = None) -> bool:
        """``updateTopicRouteInfoFromNameServer``: fetch (unless given), and if it changed (or a member
        lacks it) rebuild the broker table and the members' publish / subscribe info. False when the
        name server has no route for the topic."""
        async with self._route_lock:
            if route is None:
                route = await self.fetch_route(topic)
            if route is None:
                return False
            old = self.route_table.get(topic)
            changed = old is None or _route_key(old) != _route_key(route)
            if not changed:  # isPublishTopicNeedUpdate / isSubscribeTopicNeedUpdate
                changed = any(not _publish_ok(p, topic) for p in self.producers.values()
                              if topic in p.publish_topics()) or any(
                    topic not in getattr(c, "topic_subscribe_info", {}) for c in self.consumers.values()
                    if topic in c.subscribe_topics())
            if changed:
                for b in route.broker_datas or ():
                    self.broker_addr_table[b.broker_name] = dict(b.broker_addrs or {})
                publish = route_to_publish_info(topic, route)
                for p in self.producers.values():
                    p.update_topic_publish_info(topic, publish)
                subscribe = route_to_subscribe_info(topic, route)
                for c in self.consumers.values():
                    c.update_topic_subscribe_info(topic, subscribe)
                self.route_table[topic] = route
            return True

    async def update_all_routes(self) -> None:
        topics = {t for c in self.consumers.values() for t in c.subscribe_topics()}
        topics |= {t for p in self.producers.values() for t in p.publish_topics()}
        for topic in sorted(topics):
            try:
                await self.update_topic_route(topic)
            except (RemotingError, OSError, MQClientError) as e:
                log.info("%s: route refresh of %s failed: %s", self.client_id, topic, e)

    # -- brokers ----------------------------------------------------------------------------
    def find_broker_address_in_publish(self, broker_name: str) -> str | None:
        return (self.broker_addr_table.get(broker_name) or {}).get(MASTER_ID)

    def find_broker_address_in_subscribe(self, broker_name: str, broker_id: int = MASTER_ID,
                                         only_this_broker: bool = False) -> str | None:
        addrs = self.broker_addr_table.get(broker_name) or {}
        addr = addrs.get(broker_id)
        if addr is None and broker_id != MASTER_ID:
            addr = addrs.get(broker_id + 1)
        if addr is None and not only_this_broker and addrs:
            addr = next(iter(addrs.values()))
        return addr

    def find_broker_addr_by_topic(self, topic: str) -> str | None:
        route = self.route_table.get(topic)
        if route is None or not route.broker_datas:
            return None
        return random.choice(route.broker_datas).select_broker_addr()

    async def find_consumer_id_list(self, topic: str, group: str) -> list[str]:
        addr = self.find_broker_addr_by_topic(topic)
        if addr is None:
            await self.update_topic_route(topic)
            addr = self.find_broker_addr_by_topic(topic)
        if addr is None:
            return []
        response = await self.remoting.invoke(addr, R.get_consumer_list(group), self.config.mq_client_api_timeout)
        return R.read_consumer_list(response, addr)

    def heartbeat_data(self) -> HeartbeatData:
        return HeartbeatData(client_id=self.client_id,
                             producer_data_set=[ProducerData(group_name=g) for g in sorted(self.producers)]
                             + [ProducerData(group_name=CLIENT_INNER_PRODUCER_GROUP)],
                             consumer_data_set=[c.consumer_data() for _, c in sorted(self.consumers.items())])

    async def send_heartbeat_to_all_brokers(self) -> None:
        """HEART_BEAT to every known broker address (only masters when there is no consumer)."""
        if self.idle:
            return
        request = R.heartbeat(self.heartbeat_data())
        for name, addrs in list(self.broker_addr_table.items()):
            for broker_id, addr in list(addrs.items()):
                if broker_id != MASTER_ID and not self.consumers:
                    continue
                try:
                    response = await self.remoting.invoke(addr, request, self.config.mq_client_api_timeout)
                    R.check(response, addr)
                    self.broker_version_table[addr] = response.version
                except Exception as e:
                    log.info("%s: heartbeat to %s (%s) failed: %s", self.client_id, name, addr, e)

    def clean_offline_brokers(self) -> None:
        live = {addr for route in self.route_table.values() for b in route.broker_datas or ()
                for addr in (b.broker_addrs or {}).values()}
        for name in list(self.broker_addr_table):
            addrs = {i: a for i, a in self.broker_addr_table[name].items() if a in live}
            if addrs:
                self.broker_addr_table[name] = addrs
            else:
                del self.broker_addr_table[name]

    async def _clean_and_heartbeat(self) -> None:
        self.clean_offline_brokers()
        await self.send_heartbeat_to_all_brokers()

    async def persist_all_consumer_offsets(self) -> None:
        for consumer in list(self.consumers.values()):
            try:
                await consumer.persist_consumer_offset()
            except Exception as e:
                log.info("%s: persisting offsets of %s failed: %s", self.client_id, consumer.group, e)

    # -- rebalance --------------------------------------------------------------------------
    def rebalance_immediately(self) -> None:
        if self._rebalance_wakeup is not None:
            self._rebalance_wakeup.set()

    async def do_rebalance(self) -> None:
        for consumer in list(self.consumers.values()):
            try:
                await consumer.do_rebalance()
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.warning("%s: rebalance of %s failed: %s", self.client_id, consumer.group, e)

    async def _rebalance_loop(self) -> None:
        # not asyncio.wait_for: on Python 3.11 it can swallow the shutdown's cancel when the wakeup
        # (NOTIFY_CONSUMER_IDS_CHANGED) is set at the same moment, and shutdown then waits forever
        while self.running:
            waiter = asyncio.ensure_future(self._rebalance_wakeup.wait())
            try:
                await asyncio.wait({waiter}, timeout=self.config.rebalance_interval)
            finally:
                waiter.cancel()
            if not self.running:
                return
            self._rebalance_wakeup.clear()
            await self.do_rebalance()

    # -- requests from brokers --------------------------------------------------------------
    def _on_check_transaction_state(self, request: RemotingCommand, channel):
        header = request.header(CheckTransactionStateRequestHeader)
        record = decode_message(request.body or b"", with_spans=False)
        msg = MessageExt.from_record(record)
        group = msg.properties.get(P.PGROUP)
        producer = self.producers.get(group) if group else None
        if producer is None:
            log.info("%s: CHECK_TRANSACTION_STATE for group %s: no such producer here", self.client_id, group)
            return None
        producer.check_transaction_state(channel.remote_address, msg, header)
        return None

    def _on_notify_consumer_ids_changed(self, request: RemotingCommand, channel):
        header = request.header(NotifyConsumerIdsChangedRequestHeader)
        log.info("%s: consumer ids of %s changed (from %s): rebalance now", self.client_id, header.consumer_group,
                 channel.remote_address if channel else "?")
        self.rebalance_immediately()
        return None

    def _on_get_consumer_running_info(self, request: RemotingCommand, channel):
        header = request.header(GetConsumerRunningInfoRequestHeader)
        consumer = self.consumers.get(header.consumer_group)
        if consumer is None:
            return RemotingCommand.response(1, f"The Consumer Group <{header.consumer_group}> not exist in this consumer")
        info = consumer.running_info() if hasattr(consumer, "running_info") else ConsumerRunningInfo()
        return RemotingCommand.response(0, body=encode_body(info))

    def _on_push_reply_message(self, request: RemotingCommand, channel):
        h = request.header(ReplyMessageRequestHeader)
        body = request.body or b""
        if h.sys_flag and h.sys_flag & 0x1:
            import zlib
            body = zlib.decompress(body)
        props = P.decode_properties(h.properties or "")
        correlation = props.get("CORRELATION_ID")
        future = self.reply_futures.get(correlation)
        if future is not None and not future.done():
            future.set_result(MessageExt(h.topic, body, props, h.queue_id or 0, -1, -1, h.sys_flag or 0,
                                         h.born_timestamp or 0, h.born_host or "", h.store_timestamp or 0,
                                         h.store_host or "", h.reconsume_times or 0, "", h.flag or 0))
        return RemotingCommand.response(0)
