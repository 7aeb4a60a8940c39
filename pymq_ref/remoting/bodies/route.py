"""Bodies of routing and broker registration: ``TopicRouteData`` (with ``QueueData`` and
``BrokerData``), ``ClusterInfo``, ``TopicList``, ``KVTable``, ``TopicConfigSerializeWrapper`` and
``RegisterBrokerBody`` — plain JSON, or the zlib form a broker sends with ``compressed=true``.

Sources (4.9.4): ``common/src/main/java/org/apache/rocketmq/common/protocol/route/``,
``common/.../protocol/body/{ClusterInfo,TopicList,KVTable,TopicConfigSerializeWrapper,RegisterBrokerBody}.java``.
Data and pure codecs; no I/O.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

from pymq_ref.formats.beans import DataVersion, TopicConfig

from .bean import BodyError, decode_json, encode_body, java_map_order, set_of


@dataclass
class QueueData:
    """One broker's queues of a topic: counts, permission bits, topic system flag."""

    broker_name: str | None = None
    read_queue_nums: int = 0
    write_queue_nums: int = 0
    perm: int = 0
    topic_sys_flag: int = 0


@dataclass
class BrokerData:
    """A broker name, its cluster and its addresses by broker id (0 = master)."""

    cluster: str | None = None
    broker_name: str | None = None
    broker_addrs: dict[int, str] | None = None

    def select_broker_addr(self) -> str | None:
        """The master's address, else any (``BrokerData.selectBrokerAddr`` picks a random one)."""
        if not self.broker_addrs:
            return None
        return self.broker_addrs.get(0) or next(iter(self.broker_addrs.values()))


@dataclass
class TopicRouteData:
    """GET_ROUTEINFO_BY_TOPIC's answer: the queues per broker and where the brokers are."""

    order_topic_conf: str | None = None
    queue_datas: list[QueueData] | None = None
    broker_datas: list[BrokerData] | None = None
    filter_server_table: dict[str, list[str]] | None = None


@dataclass
class ClusterInfo:
    """GET_BROKER_CLUSTER_INFO's answer: brokers by name, broker names by cluster."""

    broker_addr_table: dict[str, BrokerData] | None = field(default=None, metadata={"java": ("HashMap", 128)})
    cluster_addr_table: dict[str, set_of(str)] | None = field(default=None, metadata={"java": ("HashMap", 32)})


@dataclass
class TopicList:
    """A set of topic names (and, for system topics, one broker address)."""

    topic_list: set_of(str) = field(default_factory=list)
    broker_addr: str | None = None


@dataclass
class KVTable:
    """A string map: KV config namespaces, broker runtime info."""

    table: dict[str, str] = field(default_factory=dict)


@dataclass
class TopicConfigSerializeWrapper:
    """A broker's topic table and its data version (REGISTER_BROKER, GET_ALL_TOPIC_CONFIG)."""

    topic_config_table: dict[str, TopicConfig] = field(default_factory=dict,
                                                       metadata={"java": ("ConcurrentHashMap", 1024)})
    data_version: DataVersion = field(default_factory=DataVersion)


@dataclass
class RegisterBrokerBody:
    """REGISTER_BROKER's body: the topic table and the broker's filter servers."""

    topic_config_serialize_wrapper: TopicConfigSerializeWrapper = field(default_factory=TopicConfigSerializeWrapper)
    filter_server_list: list[str] = field(default_factory=list)


# -- the compressed registration ------------------------------------------------------------------

_I32 = struct.Struct(">i")


def topic_config_text(tc: TopicConfig) -> str:
    """``TopicConfig.encode``: ``name readQueueNums writeQueueNums perm topicFilterType``."""
    return f"{tc.topic_name} {tc.read_queue_nums} {tc.write_queue_nums} {tc.perm} {tc.topic_filter_type}"


def parse_topic_config_text(text: str) -> TopicConfig:
    """``TopicConfig.decode``: the five space-separated fields (topicSysFlag and order are lost)."""
    parts = text.split(" ")
    if len(parts) != 5:
        raise BodyError("RegisterBrokerBody", "topicConfig", "5 space-separated fields", text)
    try:
        return TopicConfig(parts[0], int(parts[1]), int(parts[2]), int(parts[3]), parts[4])
    except ValueError:
        raise BodyError("RegisterBrokerBody", "topicConfig", "integer queue counts and perm", text) from None


def encode_register_body(body: RegisterBrokerBody, compressed: bool = False) -> bytes:
    """``RegisterBrokerBody.encode(compress)``: JSON, or the zlib stream of the length-prefixed form
    (topics in the iteration order of the default ``ConcurrentHashMap`` Java copies them into)."""
    if not compressed:
        return encode_body(body)
    wrapper = body.topic_config_serialize_wrapper
    out = bytearray()
    for blob in [encode_body(wrapper.data_version)]:
        out += _I32.pack(len(blob)) + blob
    table = wrapper.topic_config_table
    out += _I32.pack(len(table))
    # cloneTopicConfigTable copies the broker's ConcurrentHashMap(1024) into a default one first
    for name in java_map_order(java_map_order(list(table), ("ConcurrentHashMap", 1024)), "ConcurrentHashMap"):
        blob = topic_config_text(table[name]).encode("utf-8")
        out += _I32.pack(len(blob)) + blob
    blob = encode_body(body.filter_server_list)
    out += _I32.pack(len(blob)) + blob
    return zlib.compress(bytes(out), 9)


#: The most a compressed registration may inflate to (a broker with ~100k topics stays far below).
MAX_INFLATED_REGISTRATION = 64 * 1024 * 1024


def decode_register_body(data: bytes | None, compressed: bool = False) -> RegisterBrokerBody:
    """``RegisterBrokerBody.decode``; a missing body is an empty table with DataVersion 0/0."""
    if not data:
        return RegisterBrokerBody(TopicConfigSerializeWrapper({}, DataVersion(0, 0)), [])
    if not compressed:
        return decode_json(RegisterBrokerBody, data)
    inflater = zlib.decompressobj()
    try:
        plain = inflater.decompress(data, MAX_INFLATED_REGISTRATION)
    except zlib.error as e:
        raise BodyError("RegisterBrokerBody", "", "a zlib stream", str(e)) from None
    if inflater.unconsumed_tail:
        raise BodyError("RegisterBrokerBody", "", f"at most {MAX_INFLATED_REGISTRATION} bytes inflated", "more")
    pos = 0

    def blob() -> bytes:
        nonlocal pos
        if pos + 4 > len(plain):
            raise BodyError("RegisterBrokerBody", f"byte {pos}", "a length", "the end")
        (n,) = _I32.unpack_from(plain, pos)
        if n < 0 or pos + 4 + n > len(plain):
            raise BodyError("RegisterBrokerBody", f"byte {pos}", f"a length within the {len(plain)} bytes", n)
        pos += 4 + n
        return plain[pos - n:pos]

    version = decode_json(DataVersion, blob())
    if pos + 4 > len(plain):
        raise BodyError("RegisterBrokerBody", f"byte {pos}", "the topic count", "the end")
    (count,) = _I32.unpack_from(plain, pos)
    pos += 4
    table = {}
    for _ in range(max(count, 0)):
        tc = parse_topic_config_text(blob().decode("utf-8", "replace"))
        table[tc.topic_name] = tc
    filters = decode_json(list[str], blob()) if pos < len(plain) else []
    return RegisterBrokerBody(TopicConfigSerializeWrapper(table, version), filters)
