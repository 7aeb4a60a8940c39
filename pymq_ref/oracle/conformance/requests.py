"""Pure builders of the requests the scenarios send, as a 4.9.4 Java client would write them.

Every value that a Java client would take from the clock or the host is fixed here (born timestamp,
client ids), so a run's frames depend only on the run id. Sources: the client's ``MQClientAPIImpl``
(``client/src/main/java/org/apache/rocketmq/client/impl/MQClientAPIImpl.java``) and the header
classes of ``common/src/main/java/org/apache/rocketmq/common/protocol/header/``.
"""

from __future__ import annotations

import struct
import zlib

from pymq_ref.formats.batch import BatchEntry, encode_batch
from pymq_ref.formats.beans import DataVersion, TopicConfig
from pymq_ref.formats.message import MessageRecord, decode_record
from pymq_ref.formats.message_queue import MessageQueue
from pymq_ref.formats.msgid import parse_offset_msg_id
from pymq_ref.formats.properties import encode_properties
from pymq_ref.remoting.bodies import RegisterBrokerBody, TopicConfigSerializeWrapper, encode_body
from pymq_ref.remoting.bodies.consumer import LockBatchRequestBody, UnlockBatchRequestBody
from pymq_ref.remoting.bodies.heartbeat import ConsumerData, HeartbeatData, ProducerData, SubscriptionData
from pymq_ref.remoting.bodies.route import encode_register_body
from pymq_ref.remoting.codes import RequestCode as R
from pymq_ref.remoting.codes import SerializeType
from pymq_ref.remoting.command import RemotingCommand

from .steps import Vars

BORN_TIMESTAMP = 1700000000000
#: MessageSysFlag bits and PullSysFlag bits used by the scenarios.
COMPRESSED, TRANSACTION_PREPARED, TRANSACTION_COMMIT, TRANSACTION_ROLLBACK = 0x1, 0x4, 0x8, 0xC
PULL_COMMIT_OFFSET, PULL_SUSPEND, PULL_SUBSCRIPTION = 0x1, 0x2, 0x4


def client_id(v: Vars, who: str = "a") -> str:
    return f"127.0.0.1@cf-{v.run}-{who}"


def create_topic(v: Vars, topic: str, queues: int = 4, perm: int = 6) -> RemotingCommand:
    """UPDATE_AND_CREATE_TOPIC (mqadmin updateTopic)."""
    return RemotingCommand.request(R.UPDATE_AND_CREATE_TOPIC, {
        "topic": topic, "defaultTopic": "TBW102", "readQueueNums": str(queues), "writeQueueNums": str(queues),
        "perm": str(perm), "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false"})


def send(v: Vars, topic: str, body: bytes, properties: dict | None = None, *, queue_id: int = 0, sys_flag: int = 0,
         group: str | None = None, default_topic: str = "TBW102", v2: bool = True, batch: bool = False,
         code: int | None = None, reconsume_times: int = 0, drop: tuple[str, ...] = ()) -> RemotingCommand:
    """SEND_MESSAGE_V2 (short keys ``a``..``m``) or SEND_MESSAGE, as ``sendKernelImpl`` fills them."""
    props = {"WAIT": "true", **(properties or {})}
    long = {"producerGroup": group or v.name("pg"), "topic": topic, "defaultTopic": default_topic,
            "defaultTopicQueueNums": "4", "queueId": str(queue_id), "sysFlag": str(sys_flag),
            "bornTimestamp": str(v.born_timestamp), "flag": "0", "properties": encode_properties(props),
            "reconsumeTimes": str(reconsume_times), "unitMode": "false", "batch": "true" if batch else "false"}
    if v2:
        short = dict(zip("abcdefghijkm", long.values()))
        ext = {k: val for k, val in short.items() if k not in drop}
        request_code = R.SEND_BATCH_MESSAGE if batch else R.SEND_MESSAGE_V2
    else:
        ext = {k: val for k, val in long.items() if k not in drop}
        request_code = R.SEND_BATCH_MESSAGE if batch else R.SEND_MESSAGE
    return RemotingCommand.request(code or request_code, ext, body)


def send_batch(v: Vars, topic: str, bodies: list[bytes], tags: str = "TagB") -> RemotingCommand:
    entries = [BatchEntry(body=body, properties={"TAGS": tags, "KEYS": f"k{i}", "WAIT": "true"})
               for i, body in enumerate(bodies)]
    return send(v, topic, encode_batch(entries), {}, batch=True)


def compressed(body: bytes) -> bytes:
    return zlib.compress(body, 5)


def pull(v: Vars, topic: str, offset: int = 0, *, queue_id: int = 0, group: str | None = None, suspend_ms: int = 0,
         subscription: str = "*", expression_type: str = "TAG", max_msgs: int = 32,
         drop: tuple[str, ...] = (), commit_offset: int | None = None) -> RemotingCommand:
    """PULL_MESSAGE with the subscription in the request (no heartbeat needed); ``commit_offset``
    also commits the group's offset (FLAG_COMMIT_OFFSET, what the push consumer does)."""
    flags = PULL_SUBSCRIPTION | (PULL_SUSPEND if suspend_ms else 0) | (PULL_COMMIT_OFFSET if commit_offset else 0)
    ext = {"consumerGroup": group or v.name("cg"), "topic": topic, "queueId": str(queue_id),
           "queueOffset": str(offset), "maxMsgNums": str(max_msgs), "sysFlag": str(flags),
           "commitOffset": str(commit_offset or 0),
           "suspendTimeoutMillis": str(suspend_ms), "subscription": subscription, "subVersion": "1",
           "expressionType": expression_type}
    return RemotingCommand.request(R.PULL_MESSAGE, {k: val for k, val in ext.items() if k not in drop})


def in_rocketmq_serialization(request: RemotingCommand) -> RemotingCommand:
    """The same request with the binary (ROCKETMQ) header instead of JSON: the answer must come back
    in it too."""
    return request.with_(serialize_type=SerializeType.ROCKETMQ)


def view_message(v: Vars, phy_offset: int) -> RemotingCommand:
    """VIEW_MESSAGE_BY_ID: the record at a CommitLog offset (what ``viewMessage(offsetMsgId)`` asks)."""
    return RemotingCommand.request(R.VIEW_MESSAGE_BY_ID, {"offset": str(phy_offset)})


def query_message(v: Vars, topic: str, key: str, max_num: int = 32) -> RemotingCommand:
    """QUERY_MESSAGE: messages of ``topic`` whose KEYS hold ``key``, through the index."""
    return RemotingCommand.request(R.QUERY_MESSAGE, {"topic": topic, "key": key, "maxNum": str(max_num),
                                                    "beginTimestamp": "0", "endTimestamp": str(2**63 - 1)})


def kv_config(code: int, namespace: str, key: str, value: str | None = None) -> RemotingCommand:
    """PUT_KV_CONFIG / GET_KV_CONFIG / DELETE_KV_CONFIG on the name server."""
    ext = {"namespace": namespace, "key": key}
    if value is not None:
        ext["value"] = value
    return RemotingCommand.request(code, ext)


def encoded(request: RemotingCommand, *, opaque: int = 1, oneway: bool = False) -> bytes:
    """The bytes of a request written by hand (for :class:`~.steps.Raw` steps)."""
    from pymq_ref.remoting.codec import encode
    return encode(request.with_(opaque=opaque, flag=request.flag | (2 if oneway else 0)))


def queue_request(code: int, topic: str, queue_id: int = 0, **more: str) -> RemotingCommand:
    return RemotingCommand.request(code, {"topic": topic, "queueId": str(queue_id), **more})


def query_offset(v: Vars, topic: str, group: str, queue_id: int = 0) -> RemotingCommand:
    return RemotingCommand.request(R.QUERY_CONSUMER_OFFSET, {"consumerGroup": group, "topic": topic,
                                                            "queueId": str(queue_id)})


def update_offset(v: Vars, topic: str, group: str, offset: int, queue_id: int = 0) -> RemotingCommand:
    return RemotingCommand.request(R.UPDATE_CONSUMER_OFFSET, {"consumerGroup": group, "topic": topic,
                                                             "queueId": str(queue_id), "commitOffset": str(offset)})


def heartbeat(v: Vars, producer_group: str | None = None, consumer_group: str | None = None,
              topic: str | None = None, who: str = "a") -> RemotingCommand:
    consumers = []
    if consumer_group:
        consumers.append(ConsumerData(consumer_group, "CONSUME_PASSIVELY", "CLUSTERING", "CONSUME_FROM_LAST_OFFSET",
                                      [SubscriptionData(False, topic, "*", [], [], 1)], False))
    producers = [ProducerData(producer_group)] if producer_group else []
    return RemotingCommand.request(R.HEART_BEAT, None, encode_body(HeartbeatData(client_id(v, who), producers,
                                                                                 consumers)))


def first_record(response: RemotingCommand) -> MessageRecord:
    record = decode_record(response.body or b"", 0, with_spans=False)
    if not isinstance(record, MessageRecord):
        raise ValueError("the pull answer holds no message")
    return record


def send_back(v: Vars, group: str, phy_offset: int, origin_topic: str, *, delay_level: int = 0,
              max_reconsume: int = 16, origin_msg_id: str = "") -> RemotingCommand:
    """CONSUMER_SEND_MSG_BACK (``consumerSendMessageBack``)."""
    ext = {"offset": str(phy_offset), "group": group, "delayLevel": str(delay_level), "originMsgId": origin_msg_id,
           "originTopic": origin_topic, "unitMode": "false", "maxReconsumeTimes": str(max_reconsume)}
    return RemotingCommand.request(R.CONSUMER_SEND_MSG_BACK, ext)


def end_transaction(v: Vars, group: str, send_answer_ext: dict, commit: bool, *, from_check: bool = False,
                    oneway: bool = False) -> RemotingCommand:
    """END_TRANSACTION for a half message, from its send answer (``endTransaction``)."""
    msg_id = send_answer_ext["msgId"]
    _, phy_offset = parse_offset_msg_id(msg_id)
    ext = {"producerGroup": group, "tranStateTableOffset": send_answer_ext["queueOffset"],
           "commitLogOffset": str(phy_offset), "commitOrRollback": str(TRANSACTION_COMMIT if commit else
                                                                      TRANSACTION_ROLLBACK),
           "fromTransactionCheck": "true" if from_check else "false", "msgId": msg_id,
           "transactionId": send_answer_ext.get("transactionId") or msg_id}
    return RemotingCommand.request(R.END_TRANSACTION, ext, oneway=oneway)


def end_checked_transaction(v: Vars, group: str, check: RemotingCommand, commit: bool = True) -> RemotingCommand:
    """The producer's answer to CHECK_TRANSACTION_STATE (oneway END_TRANSACTION, fromTransactionCheck)."""
    ext = check.ext()
    return RemotingCommand.request(R.END_TRANSACTION, {
        "producerGroup": group, "tranStateTableOffset": ext.get("tranStateTableOffset", "0"),
        "commitLogOffset": ext.get("commitLogOffset", "0"),
        "commitOrRollback": str(TRANSACTION_COMMIT if commit else TRANSACTION_ROLLBACK),
        "fromTransactionCheck": "true", "msgId": ext.get("msgId") or "",
        "transactionId": ext.get("transactionId") or ""}, oneway=True)


def lock(v: Vars, group: str, who: str, topic: str, queues: tuple[int, ...], *,
         unlock: bool = False) -> RemotingCommand:
    mqs = [MessageQueue(topic, v.broker_name, q) for q in queues]
    cls = UnlockBatchRequestBody if unlock else LockBatchRequestBody
    return RemotingCommand.request(R.UNLOCK_BATCH_MQ if unlock else R.LOCK_BATCH_MQ, None,
                                   encode_body(cls(group, client_id(v, who), mqs)))


def route(v: Vars, topic: str) -> RemotingCommand:
    return RemotingCommand.request(R.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})


def register_broker(v: Vars, name: str, cluster: str, addr: str, topics: dict[str, int]) -> RemotingCommand:
    """REGISTER_BROKER of a broker that exists only in this request (``BrokerOuterAPI.registerBrokerAll``)."""
    table = {t: TopicConfig(t, q, q, 6, "SINGLE_TAG", 0) for t, q in topics.items()}
    body = encode_register_body(RegisterBrokerBody(TopicConfigSerializeWrapper(table, DataVersion(1, BORN_TIMESTAMP)),
                                                   []), False)
    return RemotingCommand.request(R.REGISTER_BROKER, {
        "brokerName": name, "brokerAddr": addr, "clusterName": cluster, "haServerAddr": addr, "brokerId": "0",
        "compressed": "false", "bodyCrc32": str(zlib.crc32(body) & 0x7FFFFFFF)}, body)


def unregister_broker(v: Vars, name: str, cluster: str, addr: str) -> RemotingCommand:
    return RemotingCommand.request(R.UNREGISTER_BROKER, {"brokerName": name, "brokerAddr": addr,
                                                         "clusterName": cluster, "brokerId": "0"})


def raw_frame(length_field: int, header: bytes, body: bytes = b"", stype: int = 0) -> bytes:
    """Bytes of a frame written by hand: any length field, header and body (for malformed requests)."""
    return struct.pack(">iI", length_field, (stype << 24) | len(header)) + header + body
