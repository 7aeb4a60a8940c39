"""The scripted name-server conversation that is played against the real RocketMQ 4.9.4 name server
(``tools/rocketmq_namesrv/record.py`` records its answers under ``tests/data/rocketmq-4.9.4-namesrv/``)
and against pymq-ref's (``tests/test_namesrv_vs_rocketmq.py`` compares).

Brokers are simulated by connections that send REGISTER_BROKER frames (no real broker is needed):
three brokers in two clusters, a slave, order-topic KV config, every query, expiry of a silent
broker, a closed connection, malformed frames, missing header fields, both serializations and old
client versions. Every frame is built here from fixed inputs, so both servers get identical bytes.
"""

from __future__ import annotations

import asyncio
import zlib
from dataclasses import dataclass, field

from pymq_ref.formats.beans import DataVersion, TopicConfig
from pymq_ref.remoting import headers as H
from pymq_ref.remoting.bodies import RegisterBrokerBody, TopicConfigSerializeWrapper, encode_body
from pymq_ref.remoting.bodies.route import encode_register_body
from pymq_ref.remoting.codec import decode, encode
from pymq_ref.remoting.codes import LanguageCode, RequestCode as R, SerializeType
from pymq_ref.remoting.command import RemotingCommand

CLUSTER_1, CLUSTER_2 = "ClusterOne", "ClusterTwo"


def topics(*specs) -> dict[str, TopicConfig]:
    out = {}
    for spec in specs:
        name, queues, perm, sys_flag = (spec + (6, 0))[:4] if len(spec) == 2 else (spec + (0,))[:4]
        out[name] = TopicConfig(name, queues, queues, perm, "SINGLE_TAG", sys_flag)
    return out


A_TOPICS = topics(("TopicA", 4), ("TopicShared", 8), ("TBW102", 8, 7), ("UnitTopic", 2, 6, 1),
                  ("UnitSubTopic", 2, 6, 2), ("UnitBoth", 2, 6, 3))
B_TOPICS = topics(("TopicB", 2), ("TopicShared", 4), ("TBW102", 8, 7))
C_TOPICS = topics(("TopicC", 1),)


def register(name: str, addr: str, cluster: str, broker_id: int, table: dict, counter: int, *,
             compressed: bool = False, version: int = 401, crc: int | None = None,
             body_override: bytes | None = None, drop: str | None = None,
             filters: list[str] | None = None) -> RemotingCommand:
    body = RegisterBrokerBody(TopicConfigSerializeWrapper(dict(table), DataVersion(counter, 1700000000000 + counter)),
                              list(filters or []))
    data = body_override if body_override is not None else (
        encode_register_body(body, compressed) if version >= 37 else encode_body(body.topic_config_serialize_wrapper))
    header = H.RegisterBrokerRequestHeader(broker_name=name, broker_addr=addr, cluster_name=cluster,
                                           ha_server_addr=addr.rsplit(":", 1)[0] + ":40912", broker_id=broker_id,
                                           compressed=compressed,
                                           body_crc32=zlib.crc32(data) & 0x7FFFFFFF if crc is None else crc)
    ext = header.to_ext()
    if drop:
        ext.pop(drop)
    return RemotingCommand(R.REGISTER_BROKER, version=version, ext_fields=ext, body=data)


def req(code: int, ext: dict | None = None, body: bytes | None = None, **fields) -> RemotingCommand:
    return RemotingCommand(int(code), ext_fields=ext, body=body, **fields)


@dataclass
class Step:
    """One thing the conversation does: send a frame on a connection (a command, or raw bytes)
    and observe the outcome; close a connection; or wait until a silent broker has expired."""

    name: str
    conn: str = "client"
    command: RemotingCommand | None = None
    raw: bytes | None = None
    close: bool = False
    expire: str | None = None  # a topic whose route must disappear once the silent broker expires
    wait: float = 1.0  # how long to wait for an answer before recording "none"
    notes: str = ""
    compare: str = "exact"  # "exact" | "config" (GET_NAMESRV_CONFIG: values depend on the machine)


def _frame(cmd: RemotingCommand, opaque: int) -> bytes:
    return encode(cmd.with_(opaque=opaque))


def steps() -> list[Step]:
    route = lambda topic, **kw: req(R.GET_ROUTEINFO_BY_TOPIC, {"topic": topic}, **kw)  # noqa: E731
    s = [
        Step("route of an unknown topic", command=route("TopicA")),
        Step("cluster info, empty", command=req(R.GET_BROKER_CLUSTER_INFO)),
        Step("register broker-a master (ClusterOne)", "b1",
             register("broker-a", "127.0.0.1:40911", CLUSTER_1, 0, A_TOPICS, 1)),
        Step("register broker-a slave (id 1)", "b2", register("broker-a", "127.0.0.1:40921", CLUSTER_1, 1, A_TOPICS, 1)),
        Step("register broker-b master (ClusterOne), compressed body", "b3",
             register("broker-b", "127.0.0.1:41911", CLUSTER_1, 0, B_TOPICS, 1, compressed=True)),
        Step("register broker-c master (ClusterTwo), filter servers", "b4",
             register("broker-c", "127.0.0.1:42911", CLUSTER_2, 0, C_TOPICS, 1, filters=["127.0.0.1:43000"])),
        Step("route TopicA (4.9.4 client: standard JSON)", command=route("TopicA")),
        Step("route TopicShared (two brokers)", command=route("TopicShared")),
        Step("route TopicC (filter servers)", command=route("TopicC")),
        Step("route TopicA, old client version 100 (fastjson default, bare keys)", command=route("TopicA", version=100)),
        Step("route TopicA, old version asking standard JSON",
             command=req(R.GET_ROUTEINFO_BY_TOPIC, {"topic": "TopicA", "acceptStandardJsonOnly": "true"}, version=100)),
        Step("route TopicA in the ROCKETMQ serialization",
             command=route("TopicA", serialize_type=SerializeType.ROCKETMQ)),
        Step("route TopicA from a CPP client", command=route("TopicA", language=LanguageCode.CPP)),
        Step("route TBW102", command=route("TBW102")),
        Step("route with no topic field", command=req(R.GET_ROUTEINFO_BY_TOPIC, {})),
        Step("route with no extFields at all", command=req(R.GET_ROUTEINFO_BY_TOPIC)),
        Step("cluster info", command=req(R.GET_BROKER_CLUSTER_INFO)),
        Step("all topics", command=req(R.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)),
        Step("topics of ClusterOne", command=req(R.GET_TOPICS_BY_CLUSTER, {"cluster": CLUSTER_1})),
        Step("topics of an unknown cluster", command=req(R.GET_TOPICS_BY_CLUSTER, {"cluster": "NoSuchCluster"})),
        Step("system topics", command=req(R.GET_SYSTEM_TOPIC_LIST_FROM_NS)),
        Step("unit topics", command=req(R.GET_UNIT_TOPIC_LIST)),
        Step("has-unit-sub topics", command=req(R.GET_HAS_UNIT_SUB_TOPIC_LIST)),
        Step("has-unit-sub, not unit topics", command=req(R.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST)),
        Step("query data version, unchanged", "b1",
             req(R.QUERY_DATA_VERSION, H.QueryDataVersionRequestHeader(
                 broker_name="broker-a", broker_addr="127.0.0.1:40911", cluster_name=CLUSTER_1, broker_id=0).to_ext(),
                 encode_body(DataVersion(1, 1700000000001)))),
        Step("query data version, changed", "b1",
             req(R.QUERY_DATA_VERSION, H.QueryDataVersionRequestHeader(
                 broker_name="broker-a", broker_addr="127.0.0.1:40911", cluster_name=CLUSTER_1, broker_id=0).to_ext(),
                 encode_body(DataVersion(2, 1700000000002)))),
        Step("re-register broker-a with a new topic and TopicShared dropped", "b1",
             register("broker-a", "127.0.0.1:40911", CLUSTER_1, 0,
                      {k: v for k, v in {**A_TOPICS, **topics(("TopicA2", 3))}.items() if k != "TopicShared"}, 2)),
        Step("route TopicShared after the re-registration (4.9.4 keeps stale queues)", command=route("TopicShared")),
        Step("route TopicA2", command=route("TopicA2")),
        Step("register with a wrong bodyCrc32", "b5",
             register("broker-x", "127.0.0.1:44911", CLUSTER_1, 0, C_TOPICS, 1, crc=12345)),
        Step("register without brokerId", "b5",
             register("broker-x", "127.0.0.1:44911", CLUSTER_1, 0, C_TOPICS, 1, drop="brokerId")),
        Step("register with a body that is not JSON", "b5",
             register("broker-x", "127.0.0.1:44911", CLUSTER_1, 0, C_TOPICS, 1, body_override=b"{not json")),
        Step("register as an old broker (version 30: bare TopicConfigSerializeWrapper)", "b6",
             register("broker-old", "127.0.0.1:45911", CLUSTER_2, 0, topics(("TopicOld", 2)), 1, version=30)),
        Step("route TopicOld", command=route("TopicOld")),
        Step("wipe write perm of broker-b", command=req(R.WIPE_WRITE_PERM_OF_BROKER, {"brokerName": "broker-b"})),
        Step("route TopicB after wipe", command=route("TopicB")),
        Step("add write perm of broker-b", command=req(R.ADD_WRITE_PERM_OF_BROKER, {"brokerName": "broker-b"})),
        Step("route TopicB after add", command=route("TopicB")),
        Step("wipe write perm of an unknown broker", command=req(R.WIPE_WRITE_PERM_OF_BROKER, {"brokerName": "nobody"})),
        Step("put KV", command=req(R.PUT_KV_CONFIG, {"namespace": "ns1", "key": "k1", "value": "v1"})),
        Step("put KV 2", command=req(R.PUT_KV_CONFIG, {"namespace": "ns1", "key": "k2", "value": "v2"})),
        Step("put KV without key", command=req(R.PUT_KV_CONFIG, {"namespace": "ns1", "value": "v"})),
        Step("put KV without value", command=req(R.PUT_KV_CONFIG, {"namespace": "ns1", "key": "k3"})),
        Step("get KV", command=req(R.GET_KV_CONFIG, {"namespace": "ns1", "key": "k1"})),
        Step("get missing KV", command=req(R.GET_KV_CONFIG, {"namespace": "ns1", "key": "nope"})),
        Step("KV list of ns1", command=req(R.GET_KVLIST_BY_NAMESPACE, {"namespace": "ns1"})),
        Step("KV list of an unknown namespace", command=req(R.GET_KVLIST_BY_NAMESPACE, {"namespace": "nons"})),
        Step("delete KV", command=req(R.DELETE_KV_CONFIG, {"namespace": "ns1", "key": "k1"})),
        Step("get deleted KV", command=req(R.GET_KV_CONFIG, {"namespace": "ns1", "key": "k1"})),
        Step("order topic conf in KV", command=req(R.PUT_KV_CONFIG, {"namespace": "ORDER_TOPIC_CONFIG",
                                                                      "key": "TopicA", "value": "broker-a:4"})),
        Step("re-register broker-c: the answer carries ORDER_TOPIC_CONFIG", "b4",
             register("broker-c", "127.0.0.1:42911", CLUSTER_2, 0, C_TOPICS, 1, filters=["127.0.0.1:43000"])),
        Step("register the broker-a slave again: the answer names its master", "b2",
             register("broker-a", "127.0.0.1:40921", CLUSTER_1, 1, A_TOPICS, 1)),
        Step("route TopicA, orderMessageEnable off", command=route("TopicA")),
        Step("enable orderMessageEnable", command=req(R.UPDATE_NAMESRV_CONFIG,
                                                      body=b"orderMessageEnable=true\nproductEnvName=center\n")),
        Step("route TopicA, orderMessageEnable on (orderTopicConf)", command=route("TopicA")),
        Step("name server config", command=req(R.GET_NAMESRV_CONFIG), compare="config"),
        Step("a oneway request gets no answer", command=req(R.GET_BROKER_CLUSTER_INFO, flag=2), wait=0.8),
        Step("an unknown request code gets no answer", command=req(999), wait=0.8),
        Step("a request code of the broker gets no answer", command=req(R.PULL_MESSAGE, {"topic": "TopicA"}), wait=0.8),
        Step("delete TopicA2 in ClusterTwo only (not there)",
             command=req(R.DELETE_TOPIC_IN_NAMESRV, {"topic": "TopicA2", "clusterName": CLUSTER_2})),
        Step("route TopicA2 still there", command=route("TopicA2")),
        Step("delete TopicA2 everywhere", command=req(R.DELETE_TOPIC_IN_NAMESRV, {"topic": "TopicA2"})),
        Step("route TopicA2 gone", command=route("TopicA2")),
        Step("unregister the broker-a slave", "b2", req(R.UNREGISTER_BROKER, H.UnRegisterBrokerRequestHeader(
            broker_name="broker-a", broker_addr="127.0.0.1:40921", cluster_name=CLUSTER_1, broker_id=1).to_ext())),
        Step("route TopicA without the slave", command=route("TopicA")),
        Step("close broker-b's connection", "b3", close=True),
        Step("route TopicB after broker-b's connection closed", command=route("TopicB")),
        Step("route TopicShared after broker-b's connection closed", command=route("TopicShared")),
        Step("cluster info after broker-b left", command=req(R.GET_BROKER_CLUSTER_INFO)),
        # malformed frames: each closes its connection; the next step proves the server still serves
        Step("a 2 GiB length field", "bad1", raw=(0x7FFFFFF0).to_bytes(4, "big") + b"\x00\x00\x00\x10"),
        Step("still serving after the 2 GiB length", command=route("TopicC")),
        Step("serialize type 5", "bad2", raw=bytes.fromhex("0000000c050000080000000000000000")),
        Step("a header that is not JSON", "bad3", raw=(16).to_bytes(4, "big") + (12).to_bytes(4, "big") + b"{not json!!}"),
        Step("a header longer than the frame", "bad4", raw=(8).to_bytes(4, "big") + (100).to_bytes(4, "big") + b"abcd"),
        Step("a ROCKETMQ header whose ext length runs past it", "bad5",
             raw=(4 + 25).to_bytes(4, "big") + ((1 << 24) | 25).to_bytes(4, "big")
             + bytes.fromhex("0069000191000000010000000000000000") + (9999).to_bytes(4, "big") + b"abcd"),
        Step("a length field below 4", "bad6", raw=(2).to_bytes(4, "big") + b"\x00\x00"),
        Step("still serving after the malformed frames", command=route("TopicC")),
        # a silent broker expires (120 s; the real name server needs over two minutes for this)
        Step("broker-old falls silent and expires", expire="TopicOld"),
        Step("route TopicOld after expiry", command=route("TopicOld")),
        Step("cluster info at the end", command=req(R.GET_BROKER_CLUSTER_INFO)),
    ]
    return s


# -- playing the conversation -----------------------------------------------------------------------

@dataclass
class Outcome:
    name: str
    outcome: str  # "response" | "none" | "closed" | "expired" | "closed-by-us"
    frame: bytes | None = None
    info: dict = field(default_factory=dict)


class Player:
    """Plays :func:`steps` against ``address``; ``on_expire(step)`` makes a silent broker expire
    (the real server: wait; ours: advance its clock and scan)."""

    def __init__(self, address: str, on_expire, *, wait_scale: float = 1.0):
        self.host, port = address.rsplit(":", 1)
        self.port = int(port)
        self.on_expire = on_expire
        self.wait_scale = wait_scale
        self.conns: dict[str, tuple[asyncio.StreamReader, asyncio.StreamWriter]] = {}
        self.opaque = 1000

    async def _conn(self, name: str):
        if name not in self.conns:
            self.conns[name] = await asyncio.open_connection(self.host, self.port)
        return self.conns[name]

    async def play(self) -> list[Outcome]:
        out = []
        for step in steps():
            out.append(await self.play_step(step))
        for _, writer in self.conns.values():
            writer.close()
        return out

    async def play_step(self, step: Step) -> Outcome:
        if step.close:
            _, writer = self.conns.pop(step.conn)
            writer.close()
            await asyncio.sleep(0.3)  # let the server notice
            return Outcome(step.name, "closed-by-us")
        if step.expire:
            info = await self.on_expire(step)
            for _, writer in self.conns.values():  # idle connections were closed by the real server
                writer.close()
            self.conns.clear()
            return Outcome(step.name, "expired", info=info)
        reader, writer = await self._conn(step.conn)
        self.opaque += 1
        data = step.raw if step.raw is not None else _frame(step.command, self.opaque)
        writer.write(data)
        await writer.drain()
        return await self._read_answer(step, reader)

    async def _read_answer(self, step: Step, reader: asyncio.StreamReader) -> Outcome:
        try:
            head = await asyncio.wait_for(reader.readexactly(4), step.wait * self.wait_scale)
        except asyncio.TimeoutError:
            return Outcome(step.name, "none")
        except (asyncio.IncompleteReadError, ConnectionError):
            self.conns.pop(step.conn, None)
            return Outcome(step.name, "closed")
        n = int.from_bytes(head, "big")
        rest = await asyncio.wait_for(reader.readexactly(n), 5)
        return Outcome(step.name, "response", head + rest)


def outcome_record(o: Outcome) -> dict:
    """What the fixture keeps of an outcome (the frame decoded, and its bytes)."""
    rec = {"step": o.name, "outcome": o.outcome}
    if o.info:
        rec["info"] = o.info
    if o.frame is not None:
        from pymq_ref.remoting.record import command_record
        cmd = decode(o.frame).command
        rec["response"] = command_record(cmd)
        rec["frame_hex"] = o.frame.hex()
    return rec


async def wait_route_gone(address: str, topic: str, timeout: float = 200.0) -> dict:
    """Poll the route of ``topic`` until it is gone (for the real server's expiry)."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    reader, writer = await asyncio.open_connection(*address.rsplit(":", 1))
    opaque = 50000
    try:
        while loop.time() - start < timeout:
            opaque += 1
            writer.write(encode(RemotingCommand(R.GET_ROUTEINFO_BY_TOPIC, opaque=opaque, ext_fields={"topic": topic})))
            await writer.drain()
            head = await reader.readexactly(4)
            body = await reader.readexactly(int.from_bytes(head, "big"))
            if decode(head + body).command.code != 0:
                return {"gone_after_s": round(loop.time() - start)}
            await asyncio.sleep(2.0)
    finally:
        writer.close()
    return {"gone_after_s": None}
