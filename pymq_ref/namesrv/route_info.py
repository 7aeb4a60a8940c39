"""``RouteInfoManager``: the name server's route tables and every change to them (4.9.4).

Tables (``namesrv/src/main/java/org/apache/rocketmq/namesrv/routeinfo/RouteInfoManager.java``):

===================  ====================================================================
topic_queue_table    topic -> broker name -> :class:`QueueData` (what each master serves)
broker_addr_table    broker name -> :class:`BrokerData` (cluster, broker id -> address)
cluster_addr_table   cluster -> broker names
broker_live_table    broker address -> :class:`BrokerLiveInfo` (last heartbeat, data version,
                     the connection it registered on, HA address)
filter_server_table  broker address -> filter server addresses (legacy)
===================  ====================================================================

A broker registers every 30 s; a registration of a master replaces its QueueData for every topic
it lists when its data version changed (topics it no longer lists stay — 4.9.4 does not remove
them). A broker disappears when it unregisters, when its connection closes, or when it has been
silent for 120 s (:meth:`scan_not_active_broker`, run every 10 s by the server). Removing a
broker name removes its QueueData from every topic and topics left without any.

Pure: no sockets, no threads, no clock of its own — ``now_ms`` comes from the caller (an injected
clock), so tests and the book run expiry in simulated time. ``channel`` is an opaque token (the
server passes its connection object). Orders that leave through JSON (lists built from Java
``HashMap``/``HashSet`` iteration) follow Java's, so answers match a 4.9.4 name server's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pymq_ref.formats.beans import PERM_READ, PERM_WRITE, DataVersion
from pymq_ref.remoting.bodies import (BrokerData, ClusterInfo, QueueData, TopicConfigSerializeWrapper, TopicList,
                                      TopicRouteData)
from pymq_ref.remoting.bodies.bean import java_map_order

#: Initial capacities of RouteInfoManager's HashMaps: they decide the iteration order of answers.
TOPIC_QUEUE_TABLE = ("HashMap", 1024)
BROKER_ADDR_TABLE = ("HashMap", 128)
CLUSTER_ADDR_TABLE = ("HashMap", 32)

#: ``RouteInfoManager.BROKER_CHANNEL_EXPIRED_TIME``: a broker silent this long is removed.
BROKER_CHANNEL_EXPIRED_TIME = 120_000
MASTER_ID = 0
TOPIC_SYS_FLAG_UNIT = 0x1
TOPIC_SYS_FLAG_UNIT_SUB = 0x2


@dataclass
class BrokerLiveInfo:
    last_update_timestamp: int
    data_version: DataVersion
    channel: Any
    ha_server_addr: str | None


@dataclass
class RegisterBrokerResult:
    """For a slave whose master is registered and live: the master's HA address and address."""

    ha_server_addr: str | None = None
    master_addr: str | None = None


def _same_version(a: DataVersion | None, b: DataVersion | None) -> bool:
    return a is not None and b is not None and a.counter == b.counter and a.timestamp == b.timestamp


class RouteInfoManager:
    """The name server's tables. Change them only through the methods below: each one bumps
    :attr:`version`, which is what answers built from the tables are cached by."""

    def __init__(self):
        self.version = 0  # bumped by every method that may change what a route answer holds
        self.topic_queue_table: dict[str, dict[str, QueueData]] = {}
        self.broker_addr_table: dict[str, BrokerData] = {}
        self.cluster_addr_table: dict[str, dict[str, None]] = {}  # an insertion-ordered set
        self.broker_live_table: dict[str, BrokerLiveInfo] = {}
        self.filter_server_table: dict[str, list[str]] = {}

    # -- registration -----------------------------------------------------------------------
    def register_broker(self, cluster_name: str | None, broker_addr: str | None, broker_name: str | None,
                        broker_id: int | None, ha_server_addr: str | None, wrapper: TopicConfigSerializeWrapper,
                        filter_server_list: list[str] | None, channel: Any, now_ms: int) -> RegisterBrokerResult:
        """``registerBroker`` (see the module docstring); never fails, as in 4.9.4."""
        self.version += 1
        result = RegisterBrokerResult()
        broker_id = 0 if broker_id is None else broker_id  # Java unboxes a null Long: the request then fails
        self.cluster_addr_table.setdefault(cluster_name, {})[broker_name] = None
        register_first = False
        broker_data = self.broker_addr_table.get(broker_name)
        if broker_data is None:
            register_first = True
            broker_data = BrokerData(cluster_name, broker_name, {})
            self.broker_addr_table[broker_name] = broker_data
        addrs = broker_data.broker_addrs
        for bid in [b for b, a in addrs.items() if broker_addr is not None and a == broker_addr and b != broker_id]:
            del addrs[bid]  # the same address under another id: a slave became master (or back)
        old_addr = addrs.get(broker_id)
        addrs[broker_id] = broker_addr
        register_first = register_first or old_addr is None
        if wrapper is not None and broker_id == MASTER_ID:
            if self.is_broker_topic_config_changed(broker_addr, wrapper.data_version) or register_first:
                for tc in (wrapper.topic_config_table or {}).values():
                    self._create_and_update_queue_data(broker_name, tc)
        self.broker_live_table[broker_addr] = BrokerLiveInfo(now_ms, wrapper.data_version, channel, ha_server_addr)
        if filter_server_list is not None:
            if filter_server_list:
                self.filter_server_table[broker_addr] = list(filter_server_list)
            else:
                self.filter_server_table.pop(broker_addr, None)
        if broker_id != MASTER_ID:
            master_addr = addrs.get(MASTER_ID)
            if master_addr is not None:
                live = self.broker_live_table.get(master_addr)
                if live is not None:
                    result = RegisterBrokerResult(live.ha_server_addr, master_addr)
        return result

    def _create_and_update_queue_data(self, broker_name: str, tc) -> None:
        qd = QueueData(broker_name, tc.read_queue_nums, tc.write_queue_nums, tc.perm, tc.topic_sys_flag)
        self.topic_queue_table.setdefault(tc.topic_name, {})[broker_name] = qd

    def is_broker_topic_config_changed(self, broker_addr: str | None, data_version: DataVersion | None) -> bool:
        return not _same_version(self.query_broker_topic_config(broker_addr), data_version)

    def query_broker_topic_config(self, broker_addr: str | None) -> DataVersion | None:
        live = self.broker_live_table.get(broker_addr)
        return live.data_version if live is not None else None

    def update_broker_info_update_timestamp(self, broker_addr: str | None, now_ms: int) -> None:
        live = self.broker_live_table.get(broker_addr)
        if live is not None:
            live.last_update_timestamp = now_ms

    # -- removal ----------------------------------------------------------------------------
    def unregister_broker(self, cluster_name: str | None, broker_addr: str | None, broker_name: str | None,
                          broker_id: int | None) -> None:
        self.version += 1
        self.broker_live_table.pop(broker_addr, None)
        self.filter_server_table.pop(broker_addr, None)
        remove_broker_name = False
        broker_data = self.broker_addr_table.get(broker_name)
        if broker_data is not None:
            broker_data.broker_addrs.pop(broker_id, None)
            if not broker_data.broker_addrs:
                del self.broker_addr_table[broker_name]
                remove_broker_name = True
        if remove_broker_name:
            names = self.cluster_addr_table.get(cluster_name)
            if names is not None:
                names.pop(broker_name, None)
                if not names:
                    del self.cluster_addr_table[cluster_name]
            self._remove_topic_by_broker_name(broker_name)

    def _remove_topic_by_broker_name(self, broker_name: str) -> None:
        for topic in list(self.topic_queue_table):
            queues = self.topic_queue_table[topic]
            queues.pop(broker_name, None)
            if not queues:
                del self.topic_queue_table[topic]

    def scan_not_active_broker(self, now_ms: int) -> list[tuple[str, Any]]:
        """Remove brokers silent for over 120 s; returns ``(address, channel)`` of each, whose
        connection the caller closes (``RemotingUtil.closeChannel``)."""
        expired = [(addr, live.channel) for addr, live in self.broker_live_table.items()
                   if live.last_update_timestamp + BROKER_CHANNEL_EXPIRED_TIME < now_ms]
        for addr, channel in expired:
            self.broker_live_table.pop(addr, None)
            self.on_channel_destroy(addr, channel)
        return expired

    def on_channel_destroy(self, remote_addr: str | None, channel: Any) -> str | None:
        """A connection closed (or expired): forget the broker that registered on it (found by
        connection, else by the remote address). Returns the broker address removed, if any."""
        self.version += 1
        found = None
        if channel is not None:
            found = next((addr for addr, live in self.broker_live_table.items() if live.channel is channel), None)
        if found is None:
            found = remote_addr
        if not found:
            return None
        self.broker_live_table.pop(found, None)
        self.filter_server_table.pop(found, None)
        name_found, remove_name = None, False
        for name in list(self.broker_addr_table):
            if name_found is not None:
                break
            bd = self.broker_addr_table[name]
            for bid, addr in list(bd.broker_addrs.items()):
                if addr == found:
                    name_found = bd.broker_name
                    del bd.broker_addrs[bid]
                    break
            if not bd.broker_addrs:
                remove_name = True
                del self.broker_addr_table[name]
        if name_found is not None and remove_name:
            for cluster in list(self.cluster_addr_table):
                names = self.cluster_addr_table[cluster]
                if name_found in names:
                    del names[name_found]
                    if not names:
                        del self.cluster_addr_table[cluster]
                    break
        if remove_name:
            self._remove_topic_by_broker_name(name_found)
        return found

    # -- topics -----------------------------------------------------------------------------
    def delete_topic(self, topic: str | None, cluster_name: str | None = None) -> None:
        """DELETE_TOPIC_IN_NAMESRV: the whole topic, or only the given cluster's brokers' queues."""
        self.version += 1
        if cluster_name is None:
            self.topic_queue_table.pop(topic, None)
            return
        names = self.cluster_addr_table.get(cluster_name)
        queues = self.topic_queue_table.get(topic)
        if names and queues is not None:
            for name in names:
                queues.pop(name, None)
            if not queues:
                del self.topic_queue_table[topic]

    def operate_write_perm_of_broker(self, broker_name: str | None, wipe: bool) -> int:
        """WIPE_WRITE_PERM_OF_BROKER (``perm &= ~WRITE``) / ADD_WRITE_PERM_OF_BROKER (``perm = R|W``)."""
        self.version += 1
        count = 0
        for queues in self.topic_queue_table.values():
            qd = queues.get(broker_name)
            if qd is not None:
                qd.perm = qd.perm & ~PERM_WRITE if wipe else PERM_READ | PERM_WRITE
                count += 1
        return count

    # -- queries ----------------------------------------------------------------------------
    def pickup_topic_route_data(self, topic: str | None) -> TopicRouteData | None:
        """GET_ROUTEINFO_BY_TOPIC's data, or None when the topic has no queue or no broker."""
        queues = self.topic_queue_table.get(topic)
        if queues is None:
            return None
        names = java_map_order(list(queues))
        queue_datas = [_copy_queue_data(queues[n]) for n in names]
        broker_datas, filter_servers = [], {}
        for name in names:  # HashSet of the same names: the same order
            bd = self.broker_addr_table.get(name)
            if bd is None:
                continue
            broker_datas.append(BrokerData(bd.cluster, bd.broker_name, dict(bd.broker_addrs)))
            if self.filter_server_table:
                for addr in bd.broker_addrs.values():
                    if addr in self.filter_server_table:
                        filter_servers[addr] = list(self.filter_server_table[addr])
        if not queue_datas or not broker_datas:
            return None
        return TopicRouteData(None, queue_datas, broker_datas, filter_servers)

    def get_all_cluster_info(self) -> ClusterInfo:
        return ClusterInfo({n: BrokerData(bd.cluster, bd.broker_name, dict(bd.broker_addrs))
                            for n, bd in self.broker_addr_table.items()},
                           {c: java_map_order(list(names)) for c, names in self.cluster_addr_table.items()})

    def get_all_topic_list(self) -> TopicList:
        return TopicList(java_map_order(java_map_order(list(self.topic_queue_table), TOPIC_QUEUE_TABLE)))

    def get_topics_by_cluster(self, cluster: str | None) -> TopicList:
        names = self.cluster_addr_table.get(cluster)
        topics: dict[str, None] = {}
        ordered_topics = java_map_order(list(self.topic_queue_table), TOPIC_QUEUE_TABLE)
        for name in java_map_order(list(names or ())):  # unknown cluster: Java's NPE is swallowed, empty list
            for topic in ordered_topics:
                if name in self.topic_queue_table[topic]:
                    topics[topic] = None
        return TopicList(java_map_order(list(topics)))

    def get_system_topic_list(self) -> TopicList:
        """Every cluster name and broker name (they are topics too), and one broker address."""
        topics: dict[str, None] = {}
        for cluster in java_map_order(list(self.cluster_addr_table), CLUSTER_ADDR_TABLE):
            topics[cluster] = None
            topics.update(dict.fromkeys(java_map_order(list(self.cluster_addr_table[cluster]))))
        addr = None
        for name in java_map_order(list(self.broker_addr_table), BROKER_ADDR_TABLE):
            addrs = self.broker_addr_table[name].broker_addrs
            if addrs:
                addr = addrs[java_map_order(list(addrs))[0]]
                break
        return TopicList(java_map_order(list(topics)), addr)

    def topic_list_by_flag(self, pick) -> TopicList:
        """Topics whose first QueueData (Java map order) satisfies ``pick(topic_sys_flag)``."""
        topics = []
        for topic in java_map_order(list(self.topic_queue_table), TOPIC_QUEUE_TABLE):
            queues = self.topic_queue_table[topic]
            first = java_map_order(list(queues))[:1]
            if first and pick(queues[first[0]].topic_sys_flag):
                topics.append(topic)
        return TopicList(java_map_order(topics))

    def get_unit_topics(self) -> TopicList:
        return self.topic_list_by_flag(lambda f: bool(f & TOPIC_SYS_FLAG_UNIT))

    def get_has_unit_sub_topic_list(self) -> TopicList:
        return self.topic_list_by_flag(lambda f: bool(f & TOPIC_SYS_FLAG_UNIT_SUB))

    def get_has_unit_sub_un_unit_topic_list(self) -> TopicList:
        return self.topic_list_by_flag(lambda f: not f & TOPIC_SYS_FLAG_UNIT and bool(f & TOPIC_SYS_FLAG_UNIT_SUB))


def _copy_queue_data(qd: QueueData) -> QueueData:
    return QueueData(qd.broker_name, qd.read_queue_nums, qd.write_queue_nums, qd.perm, qd.topic_sys_flag)
