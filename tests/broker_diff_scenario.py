"""The scripted broker conversation of the differential test: played against the real RocketMQ 4.9.4
broker by ``tools/rocketmq_broker_diff/record.py`` (answers in ``tests/data/rocketmq-4.9.4-broker-diff/``)
and against pymq-ref's broker by ``tests/test_broker_diff_vs_rocketmq.py`` (no tests here).

Topics created, changed, refused and deleted; single, V1, batch, auto-created, transactional and
refused sends; heartbeats; pulls (tags, SQL92, bad SQL, overflow, unknown topic); offsets; search
by time; send-back to %RETRY% and to the DLQ; order locks; every admin query; malformed and unknown
requests; nine malformed frames (each closes its connection in 4.9.4) and a client vanishing in the
middle of a frame. Every frame is built here from fixed inputs; a step may take values from an earlier
answer of the same side (the offset of a message it sent, for instance), so both brokers get the
same conversation. The broker's delay levels are set to hours so nothing is delivered while the
scenario runs (the store each side leaves is compared).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Callable

from pymq_ref.formats.batch import BatchEntry, encode_batch
from pymq_ref.formats.message_queue import MessageQueue
from pymq_ref.formats.msgid import parse_offset_msg_id
from pymq_ref.formats.properties import encode_properties
from pymq_ref.remoting import headers as H
from pymq_ref.remoting.bodies import (ConsumerData, HeartbeatData, LockBatchRequestBody, ProducerData,
                                      SubscriptionData, UnlockBatchRequestBody, encode_body)
from pymq_ref.remoting.codec import encode
from pymq_ref.remoting.codes import LanguageCode, RequestCode as R
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.dispatch import RequestDispatcher
from pymq_ref.remoting.errors import RemotingError
from pymq_ref.remoting.transport import RemotingClient

TOPIC, ORDER_TOPIC, AUTO_TOPIC, SQL_TOPIC = "DiffTopic", "DiffOrderTopic", "DiffAutoTopic", "DiffSqlTopic"
GROUP, PGROUP, TGROUP = "DiffGroup", "DiffProducer", "DiffTxProducer"
CLIENT_ID = "127.0.0.1@diff-consumer"
BORN = 1_700_000_000_000
HOURS = " ".join(["1h"] * 18)

#: broker.conf lines both brokers run with (besides ports and paths)
BROKER_CONF = ("brokerClusterName=DefaultCluster\nbrokerName=broker-a\nbrokerId=0\nbrokerIP1=127.0.0.1\n"
               "brokerRole=ASYNC_MASTER\nflushDiskType=ASYNC_FLUSH\nmappedFileSizeCommitLog=1048576\n"
               "mappedFileSizeConsumeQueue=6000\nmaxHashSlotNum=1024\nmaxIndexNum=4096\nautoCreateTopicEnable=true\n"
               f"enablePropertyFilter=true\nmessageDelayLevel={HOURS}\n")
HASH_SLOTS = 1024


@dataclass
class Step:
    """Send ``command`` (or what ``build(answers)`` makes) on connection ``conn``; or write ``raw``
    bytes on a fresh connection and see what comes back. ``compare`` says how the answers are
    compared: "exact" (modulo time/hosts/ids), "exception" (a Java exception's text, without where
    it was thrown), "code" (the code only, the remark names machine-specific details)."""

    name: str
    conn: str = "admin"
    command: RemotingCommand | None = None
    build: Callable[[dict], RemotingCommand] | None = None
    raw: bytes | None = None
    oneway: bool = False
    compare: str = "exact"
    wait: float = 3.0


def props(**kv) -> str:
    return encode_properties({k.replace("__", "."): str(v) for k, v in kv.items()})


def uniq(i: int) -> str:
    return f"7F00000100002A9F00000000{i:08X}"


def send(topic: str, i: int, *, queue_id: int = 0, code: int = R.SEND_MESSAGE_V2, sys_flag: int = 0,
         group: str = PGROUP, body: bytes | None = None, extra: dict | None = None, default_queues: int = 4,
         drop: str | None = None) -> RemotingCommand:
    p = {"KEYS": f"key{i % 3}", "TAGS": "TagA" if i % 2 == 0 else "TagB", "UNIQ_KEY": uniq(i), "WAIT": "true"}
    p.update(extra or {})
    v1 = H.SendMessageRequestHeader(producer_group=group, topic=topic, default_topic="TBW102",
                                    default_topic_queue_nums=default_queues, queue_id=queue_id, sys_flag=sys_flag,
                                    born_timestamp=BORN + i, flag=0, properties=encode_properties(p),
                                    reconsume_times=0, unit_mode=False, batch=False, max_reconsume_times=None)
    header = H.SendMessageRequestHeaderV2.from_v1(v1) if code == R.SEND_MESSAGE_V2 else v1
    ext = header.to_ext()
    if drop:
        ext.pop(drop)
    return RemotingCommand(int(code), ext_fields=ext, body=body if body is not None else f"diff body {i}".encode())


def batch(topic: str, first: int, n: int, queue_id: int) -> RemotingCommand:
    entries = [BatchEntry(body=f"batch body {first + k}".encode(),
                          properties={"KEYS": f"bkey{k}", "UNIQ_KEY": uniq(first + k), "WAIT": "true"})
               for k in range(n)]
    v1 = H.SendMessageRequestHeader(producer_group=PGROUP, topic=topic, default_topic="TBW102",
                                    default_topic_queue_nums=4, queue_id=queue_id, sys_flag=0, born_timestamp=BORN + first,
                                    flag=0, properties="", reconsume_times=0, unit_mode=False, batch=True)
    return RemotingCommand(R.SEND_BATCH_MESSAGE, ext_fields=H.SendMessageRequestHeaderV2.from_v1(v1).to_ext(),
                           body=encode_batch(entries))


def req(code: int, header=None, body: bytes | None = None, drop: str | None = None,
        oneway: bool = False) -> RemotingCommand:
    ext = header.to_ext() if header is not None else None
    if drop and ext:
        ext.pop(drop)
    return RemotingCommand(int(code), ext_fields=ext, body=body, flag=2 if oneway else 0)


def pull(topic: str, queue_id: int, offset: int, *, sub: str = "*", expr: str = "TAG", flag: int = 0x4 | 0x1,
         group: str = GROUP, max_nums: int = 32) -> RemotingCommand:
    return req(R.PULL_MESSAGE, H.PullMessageRequestHeader(
        consumer_group=group, topic=topic, queue_id=queue_id, queue_offset=offset, max_msg_nums=max_nums,
        sys_flag=flag, commit_offset=0, suspend_timeout_millis=0, subscription=sub, sub_version=0,
        expression_type=expr))


def heartbeat(subs: list[tuple[str, str, str]], group: str = GROUP) -> RemotingCommand:
    data = HeartbeatData(CLIENT_ID, [ProducerData(PGROUP)], [ConsumerData(
        group, "CONSUME_PASSIVELY", "CLUSTERING", "CONSUME_FROM_FIRST_OFFSET",
        [SubscriptionData(False, t, s, [s] if s != "*" and e == "TAG" else [], [], 1, e) for t, s, e in subs],
        False)])
    return RemotingCommand(R.HEART_BEAT, body=encode_body(data))


def create_topic(topic: str, queues: int = 4, *, order: bool = False, drop: str | None = None, perm: int = 6):
    return req(R.UPDATE_AND_CREATE_TOPIC, H.CreateTopicRequestHeader(
        topic=topic, default_topic="TBW102", read_queue_nums=queues, write_queue_nums=queues, perm=perm,
        topic_filter_type="SINGLE_TAG", topic_sys_flag=0, order=order), drop=drop)


def _json_frame(header: bytes, body: bytes = b"") -> bytes:
    return (4 + len(header) + len(body)).to_bytes(4, "big") + len(header).to_bytes(4, "big") + header + body


def offset_of(answer: RemotingCommand) -> int:
    return parse_offset_msg_id(answer.ext()["msgId"])[1]


def end_tx(name: str, decision: int) -> Callable[[dict], RemotingCommand]:
    def build(answers):
        a = answers[name].ext()
        return req(R.END_TRANSACTION, H.EndTransactionRequestHeader(
            producer_group=TGROUP, tran_state_table_offset=int(a["queueOffset"]), commit_log_offset=offset_of(answers[name]),
            commit_or_rollback=decision, from_transaction_check=False, msg_id=uniq(int(name.split("-")[-1])),
            transaction_id=a.get("transactionId")), oneway=True)
    return build


def send_back(name: str, delay: int, max_times: int | None = None) -> Callable[[dict], RemotingCommand]:
    def build(answers):
        return req(R.CONSUMER_SEND_MSG_BACK, H.ConsumerSendMsgBackRequestHeader(
            offset=offset_of(answers[name]), group=GROUP, delay_level=delay, origin_msg_id=answers[name].ext()["msgId"],
            origin_topic=TOPIC, unit_mode=False, max_reconsume_times=max_times))
    return build


def view(name: str) -> Callable[[dict], RemotingCommand]:
    return lambda answers: req(R.VIEW_MESSAGE_BY_ID, H.ViewMessageRequestHeader(offset=offset_of(answers[name])))


def query(key: str, topic: str = TOPIC, unique: bool = False) -> RemotingCommand:
    ext = H.QueryMessageRequestHeader(topic=topic, key=key, max_num=32, begin_timestamp=0,
                                      end_timestamp=2**63 - 1).to_ext()
    ext["_UNIQUE_KEY_QUERY"] = "true" if unique else "false"
    return RemotingCommand(R.QUERY_MESSAGE, ext_fields=ext)


def offsets(code: int, header_cls, topic: str, q: int, **kw):
    return req(code, header_cls(topic=topic, queue_id=q, **kw))


def mqs(topic: str, n: int) -> list[MessageQueue]:
    return [MessageQueue(topic, "broker-a", q) for q in range(n)]


def steps() -> list[Step]:
    s: list[Step] = []
    add = s.append
    # -- topics -------------------------------------------------------------------------------
    add(Step("create DiffTopic", command=create_topic(TOPIC)))
    add(Step("create DiffOrderTopic (order)", command=create_topic(ORDER_TOPIC, 2, order=True)))
    add(Step("create DiffSqlTopic", command=create_topic(SQL_TOPIC, 1)))
    add(Step("create: illegal characters", command=create_topic("bad topic!")))
    add(Step("create: too long", command=create_topic("T" * 128)))
    add(Step("create: a system topic", command=create_topic("SCHEDULE_TOPIC_XXXX")))
    add(Step("create: the cluster's name", command=create_topic("DefaultCluster")))
    add(Step("create: rmq_sys_ prefix", command=create_topic("rmq_sys_mine")))
    add(Step("create: no readQueueNums", command=create_topic("NoQueues", drop="readQueueNums"), compare="exception"))
    add(Step("create: read-only topic", command=create_topic("DiffReadOnly", 2, perm=4)))
    add(Step("topic stats DiffTopic (empty)", command=req(R.GET_TOPIC_STATS_INFO, H.GetTopicStatsInfoRequestHeader(topic=TOPIC))))
    add(Step("topic stats: unknown topic", command=req(R.GET_TOPIC_STATS_INFO, H.GetTopicStatsInfoRequestHeader(topic="NoSuchTopic"))))
    # -- sends --------------------------------------------------------------------------------
    for i in range(8):
        add(Step(f"send-{i}", conn="producer", command=send(TOPIC, i, queue_id=i % 4, extra={"a": str(i)})))
    add(Step("send V1 header-8", conn="producer", command=send(TOPIC, 8, queue_id=1, code=R.SEND_MESSAGE)))
    add(Step("send batch of 3", conn="producer", command=batch(TOPIC, 20, 3, 2)))
    add(Step("send to order topic-9", conn="producer", command=send(ORDER_TOPIC, 9, queue_id=1)))
    for i in range(10, 13):
        add(Step(f"send sql-{i}", conn="producer", command=send(SQL_TOPIC, i, extra={"a": str(i - 8)})))
    add(Step("send auto-creates a topic-13", conn="producer", command=send(AUTO_TOPIC, 13, queue_id=2, default_queues=3)))
    add(Step("send to a system topic", conn="producer", command=send("SCHEDULE_TOPIC_XXXX", 14)))
    add(Step("send: illegal topic", conn="producer", command=send("bad topic!", 15)))
    add(Step("send: queueId out of range", conn="producer", command=send(TOPIC, 16, queue_id=99)))
    add(Step("send: body over maxMessageSize", conn="producer", command=send(TOPIC, 17, body=b"x" * (4 * 1024 * 1024 + 1)),
             wait=10.0))
    add(Step("send: to a read-only topic", conn="producer", command=send("DiffReadOnly", 18)))
    add(Step("send: no topic field", conn="producer", command=send(TOPIC, 19, drop="b"), compare="exception"))
    add(Step("send: V1 no queueId field", conn="producer", command=send(TOPIC, 30, code=R.SEND_MESSAGE, drop="queueId"),
             compare="exception"))
    # -- transactions -------------------------------------------------------------------------
    add(Step("half message tx-31", conn="tx", command=send(TOPIC, 31, sys_flag=0x4, group=TGROUP,
                                                          extra={"TRAN_MSG": "true", "PGROUP": TGROUP})))
    add(Step("half message tx-32", conn="tx", command=send(TOPIC, 32, sys_flag=0x4, group=TGROUP,
                                                          extra={"TRAN_MSG": "true", "PGROUP": TGROUP})))
    add(Step("commit tx-31", conn="tx", build=end_tx("half message tx-31", 8), oneway=True))
    add(Step("roll back tx-32", conn="tx", build=end_tx("half message tx-32", 12), oneway=True))
    # -- consumers ----------------------------------------------------------------------------
    add(Step("heartbeat", conn="consumer", command=heartbeat([(TOPIC, "*", "TAG"), (ORDER_TOPIC, "*", "TAG")])))
    add(Step("consumer list", conn="consumer",
             command=req(R.GET_CONSUMER_LIST_BY_GROUP, H.GetConsumerListByGroupRequestHeader(consumer_group=GROUP))))
    add(Step("consumer list: unknown group", conn="consumer",
             command=req(R.GET_CONSUMER_LIST_BY_GROUP, H.GetConsumerListByGroupRequestHeader(consumer_group="NoGroup"))))
    add(Step("query offset before commit", conn="consumer", command=req(R.QUERY_CONSUMER_OFFSET,
             H.QueryConsumerOffsetRequestHeader(consumer_group=GROUP, topic=TOPIC, queue_id=0))))
    for q in range(4):
        add(Step(f"pull q{q}", conn="consumer", command=pull(TOPIC, q, 0)))
    add(Step("pull tag TagA q0", conn="consumer", command=pull(TOPIC, 0, 0, sub="TagA")))
    add(Step("pull past the end", conn="consumer", command=pull(TOPIC, 0, 50)))
    add(Step("pull unknown topic", conn="consumer", command=pull("NoSuchTopic", 0, 0)))
    add(Step("pull SQL92 a > 3", conn="consumer", command=pull(SQL_TOPIC, 0, 0, sub="a > 3", expr="SQL92")))
    add(Step("pull bad SQL", conn="consumer", command=pull(SQL_TOPIC, 0, 0, sub="a >", expr="SQL92")))
    add(Step("pull order topic q1", conn="consumer", command=pull(ORDER_TOPIC, 1, 0)))
    for q in range(4):
        add(Step(f"commit offset q{q}", conn="consumer", command=req(R.UPDATE_CONSUMER_OFFSET,
                 H.UpdateConsumerOffsetRequestHeader(consumer_group=GROUP, topic=TOPIC, queue_id=q, commit_offset=1))))
    add(Step("query offset q0", conn="consumer", command=req(R.QUERY_CONSUMER_OFFSET,
             H.QueryConsumerOffsetRequestHeader(consumer_group=GROUP, topic=TOPIC, queue_id=0))))
    add(Step("max offset q1", conn="consumer", command=offsets(R.GET_MAX_OFFSET, H.GetMaxOffsetRequestHeader, TOPIC, 1)))
    add(Step("min offset q1", conn="consumer", command=offsets(R.GET_MIN_OFFSET, H.GetMinOffsetRequestHeader, TOPIC, 1)))
    add(Step("search offset by time 0", conn="consumer",
             command=offsets(R.SEARCH_OFFSET_BY_TIMESTAMP, H.SearchOffsetRequestHeader, TOPIC, 1, timestamp=0)))
    add(Step("search offset by time (future)", conn="consumer", command=offsets(
        R.SEARCH_OFFSET_BY_TIMESTAMP, H.SearchOffsetRequestHeader, TOPIC, 1, timestamp=4_000_000_000_000)))
    add(Step("send back send-1 (retry)", conn="consumer", build=send_back("send-1", 0)))
    add(Step("send back send-3 to the DLQ", conn="consumer", build=send_back("send-3", -1)))
    add(Step("send back: unknown offset", conn="consumer", command=req(R.CONSUMER_SEND_MSG_BACK,
             H.ConsumerSendMsgBackRequestHeader(offset=999_999, group=GROUP, delay_level=0, origin_msg_id=None,
                                                origin_topic=TOPIC, unit_mode=False, max_reconsume_times=None))))
    add(Step("lock order queues", conn="consumer", command=req(R.LOCK_BATCH_MQ, body=encode_body(
        LockBatchRequestBody(GROUP, CLIENT_ID, mqs(ORDER_TOPIC, 2))))))
    add(Step("unlock order queues", conn="consumer", command=req(R.UNLOCK_BATCH_MQ, body=encode_body(
        UnlockBatchRequestBody(GROUP, CLIENT_ID, mqs(ORDER_TOPIC, 2))))))
    # -- admin queries ------------------------------------------------------------------------
    add(Step("topic stats DiffTopic", command=req(R.GET_TOPIC_STATS_INFO, H.GetTopicStatsInfoRequestHeader(topic=TOPIC))))
    add(Step("consume stats", command=req(R.GET_CONSUME_STATS, H.GetConsumeStatsRequestHeader(consumer_group=GROUP))))
    add(Step("consume stats one topic", command=req(R.GET_CONSUME_STATS,
             H.GetConsumeStatsRequestHeader(consumer_group=GROUP, topic=ORDER_TOPIC))))
    add(Step("consumer connections", command=req(R.GET_CONSUMER_CONNECTION_LIST,
             H.GetConsumerConnectionListRequestHeader(consumer_group=GROUP))))
    add(Step("consumer connections: not online", command=req(R.GET_CONSUMER_CONNECTION_LIST,
             H.GetConsumerConnectionListRequestHeader(consumer_group="NoGroup"))))
    add(Step("who consumes DiffTopic", command=req(R.QUERY_TOPIC_CONSUME_BY_WHO,
             H.QueryTopicConsumeByWhoRequestHeader(topic=TOPIC))))
    add(Step("query by key key1", command=query("key1")))
    add(Step("query by unique key", command=query(uniq(2), unique=True)))
    add(Step("query by key: none", command=query("nokey")))
    add(Step("view send-5 by id", build=view("send-5")))
    add(Step("view: bad offset", command=req(R.VIEW_MESSAGE_BY_ID, H.ViewMessageRequestHeader(offset=999_999))))
    add(Step("update subscription group", command=req(R.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, body=(
        b'{"brokerId":0,"consumeBroadcastEnable":false,"consumeEnable":true,"consumeFromMinEnable":false,'
        b'"groupName":"DiffAdminGroup","notifyConsumerIdsChangedEnable":true,"retryMaxTimes":3,"retryQueueNums":1,'
        b'"whichBrokerWhenConsumeSlowly":1}'))))
    add(Step("all subscription groups", command=req(R.GET_ALL_SUBSCRIPTIONGROUP_CONFIG)))
    add(Step("delete subscription group", command=req(R.DELETE_SUBSCRIPTIONGROUP,
             H.DeleteSubscriptionGroupRequestHeader(group_name="DiffAdminGroup", remove_offset=True))))
    add(Step("reset offsets to time 0", command=req(R.INVOKE_BROKER_TO_RESET_OFFSET, H.ResetOffsetRequestHeader(
        topic=TOPIC, group=GROUP, timestamp=0, is_force=True))))
    add(Step("reset offsets: unknown topic", command=req(R.INVOKE_BROKER_TO_RESET_OFFSET, H.ResetOffsetRequestHeader(
        topic="NoSuchTopic", group=GROUP, timestamp=0, is_force=True))))
    add(Step("reset offsets: group offline", command=req(R.INVOKE_BROKER_TO_RESET_OFFSET, H.ResetOffsetRequestHeader(
        topic=ORDER_TOPIC, group="NoGroup", timestamp=0, is_force=True))))
    add(Step("all topic config", command=req(R.GET_ALL_TOPIC_CONFIG)))
    add(Step("runtime info", command=req(R.GET_BROKER_RUNTIME_INFO)))
    add(Step("unknown request code", command=req(9999)))
    add(Step("delete DiffAutoTopic", command=req(R.DELETE_TOPIC_IN_BROKER, H.DeleteTopicRequestHeader(topic=AUTO_TOPIC))))
    add(Step("delete: a system topic", command=req(R.DELETE_TOPIC_IN_BROKER, H.DeleteTopicRequestHeader(topic="TBW102"))))
    add(Step("topic stats after delete", command=req(R.GET_TOPIC_STATS_INFO, H.GetTopicStatsInfoRequestHeader(topic=AUTO_TOPIC))))
    # -- malformed frames, each on its own connection (4.9.4 closes it), and a client that vanishes
    #    in the middle of a frame; then proof that the broker still serves and kept what it stored
    add(Step("a 2 GiB length field", raw=(0x7FFFFFF0).to_bytes(4, "big") + b"\x00\x00\x00\x10"))
    add(Step("serialize type 5", raw=bytes.fromhex("0000000c050000080000000000000000")))
    add(Step("a header that is not JSON", raw=(16).to_bytes(4, "big") + (12).to_bytes(4, "big") + b"{not json!!}"))
    add(Step("a header longer than the frame", raw=(8).to_bytes(4, "big") + (100).to_bytes(4, "big") + b"abcd"))
    add(Step("a ROCKETMQ header whose ext length runs past it", raw=(4 + 25).to_bytes(4, "big")
             + ((1 << 24) | 25).to_bytes(4, "big") + bytes.fromhex("0069000191000000010000000000000000")
             + (9999).to_bytes(4, "big") + b"abcd"))
    add(Step("a length field below 4", raw=(2).to_bytes(4, "big") + b"\x00\x00"))
    add(Step("half a send frame, then the client vanishes", raw=encode(send(TOPIC, 40, queue_id=2))[:60]))
    add(Step("a JSON header that is an array", raw=(4 + 2).to_bytes(4, "big") + (2).to_bytes(4, "big") + b"[]"))
    add(Step("a request code that is not a number", raw=_json_frame(b'{"code":"x","flag":0,"language":"JAVA",'
                                                                    b'"opaque":1,"serializeTypeCurrentRPC":"JSON",'
                                                                    b'"version":401}')))
    add(Step("topic stats after the malformed frames", command=req(R.GET_TOPIC_STATS_INFO,
             H.GetTopicStatsInfoRequestHeader(topic=TOPIC))))
    add(Step("unregister consumer", conn="consumer", command=req(R.UNREGISTER_CLIENT, H.UnregisterClientRequestHeader(
        client_id=CLIENT_ID, producer_group=None, consumer_group=GROUP))))
    add(Step("consumer connections after unregister", command=req(R.GET_CONSUMER_CONNECTION_LIST,
             H.GetConsumerConnectionListRequestHeader(consumer_group=GROUP))))
    return s


@dataclass
class Outcome:
    step: str
    kind: str  # "answer" | "none" (oneway / no answer in time) | "error"
    frame_hex: str | None = None
    pushed: list[str] = field(default_factory=list)  # frames the broker sent on this step's connection
    error: str | None = None


class Player:
    """Plays :func:`steps` at a broker; ``before_each`` (a coroutine function) runs before each step."""

    def __init__(self, address: str, before_each=None):
        self.address = address
        self.before_each = before_each
        self.clients: dict[str, RemotingClient] = {}
        self.pushed: dict[str, list[RemotingCommand]] = {}
        self.answers: dict[str, RemotingCommand] = {}

    def _client(self, conn: str) -> RemotingClient:
        if conn not in self.clients:
            got = self.pushed.setdefault(conn, [])

            def record(request, channel, got=got):
                got.append(request)
                return None
            self.clients[conn] = RemotingClient(RequestDispatcher(default=record), name=f"diff-{conn}")
        return self.clients[conn]

    async def play(self) -> list[Outcome]:
        out = []
        try:
            for step in steps():
                if self.before_each is not None:
                    await self.before_each()
                out.append(await self._one(step))
        finally:
            for c in self.clients.values():
                await c.close()
        return out

    async def _raw(self, step: Step) -> Outcome:
        """Write ``step.raw`` on a fresh connection; "closed" when the broker closes it, "answer"
        with what it sent, or "none" after ``step.wait`` seconds of silence (then we close it)."""
        host, port = self.address.rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            writer.write(step.raw)
            await writer.drain()
            try:
                data = await asyncio.wait_for(reader.read(65536), min(step.wait, 2.0))
            except asyncio.TimeoutError:
                return Outcome(step.name, "none")
            except (ConnectionError, OSError):
                return Outcome(step.name, "closed")
            return Outcome(step.name, "closed") if not data else Outcome(step.name, "answer", data.hex())
        finally:
            writer.close()

    async def _one(self, step: Step) -> Outcome:
        if step.raw is not None:
            return await self._raw(step)
        client = self._client(step.conn)
        seen = len(self.pushed[step.conn])
        cmd = step.command if step.command is not None else step.build(self.answers)
        try:
            if step.oneway or cmd.is_oneway:
                await client.invoke_oneway(self.address, cmd.with_(flag=cmd.flag | 2))
                await asyncio.sleep(0.3)
                o = Outcome(step.name, "none")
            else:
                ans = await client.invoke(self.address, cmd, step.wait)
                self.answers[step.name] = ans
                o = Outcome(step.name, "answer", encode(ans).hex())
        except (RemotingError, OSError, asyncio.TimeoutError) as e:
            o = Outcome(step.name, "error", error=f"{type(e).__name__}: {e}")
        await asyncio.sleep(0.05)
        o.pushed = [encode(p).hex() for p in self.pushed[step.conn][seen:]]
        return o


LANGUAGE = LanguageCode.JAVA
