"""Pure conversions between ``apache.rocketmq.v2`` protobuf messages and the broker's records,
as the 5.1.4 proxy does them (``proxy/src/main/java/org/apache/rocketmq/proxy/grpc/v2/common/GrpcConverter.java``,
``producer/SendMessageActivity.java``, ``route/RouteActivity.java``).

The protobuf classes come from the ``rocketmq-python-client`` package (its ``rocketmq.grpc_protocol``);
nothing generated lives in this repository. No I/O here.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from google.protobuf.timestamp_pb2 import Timestamp
from rocketmq.grpc_protocol import definition_pb2 as pb

from pymq_ref.formats.message import MessageRecord
from pymq_ref.formats.properties import KEYS, TAGS, UNIQ_KEY, JavaHashMap, encode_properties
from pymq_ref.formats.sysflag import COMPRESSED_FLAG, TRANSACTION_PREPARED_TYPE

#: ``MessageConst.STRING_HASH_SET`` (5.1.4): property names a user may not set, left out of user_properties.
SYSTEM_PROPERTIES = frozenset((
    "1ST_POP_TIME", "ARRIVE_TIME", "BORN_TIMESTAMP", "BUYER_ID", "CLUSTER", "CONSUME_START_TIME", "CORRECTION_FLAG",
    "CORRELATION_ID", "DELAY", "DLQ_ORIGIN_MESSAGE_ID", "DLQ_ORIGIN_TOPIC", "DUP_INFO", "EXTEND_UNIQ_INFO",
    "INNER_MULTI_QUEUE_OFFSET", "INSTANCE_ID", "KEYS", "MAX_OFFSET", "MAX_RECONSUME_TIMES", "MIN_OFFSET", "MQ2_FLAG",
    "MSG_REGION", "MSG_TYPE", "ORIGIN_MESSAGE_ID", "PGROUP", "POP_CK", "POP_CK_OFFSET", "PUSH_REPLY_TIME", "REAL_QID",
    "REAL_TOPIC", "RECONSUME_TIME", "REPLY_TO_CLIENT", "RETRY_TOPIC", "TAGS", "TIMER_DELAY_LEVEL", "TIMER_DELAY_MS",
    "TIMER_DELAY_SEC", "TIMER_DELIVER_MS", "TIMER_DEL_UNIQKEY", "TIMER_DEQUEUE_MS", "TIMER_ENQUEUE_MS",
    "TIMER_OUT_MS", "TIMER_ROLL_TIMES", "TRACE_ON", "TRANSFER_FLAG", "TRAN_MSG", "TRAN_PREPARED_QUEUE_OFFSET", "TTL",
    "UNIQ_KEY", "WAIT", "__BORNHOST"))
SHARDING_KEY = "__SHARDINGKEY"
TRACE_CONTEXT = "TRACE_CONTEXT"
BORN_HOST = "__BORNHOST"
BORN_TIMESTAMP = "BORN_TIMESTAMP"
TIMER_DELIVER_MS = "TIMER_DELIVER_MS"
CHECK_IMMUNITY_TIME_IN_SECONDS = "CHECK_IMMUNITY_TIME_IN_SECONDS"
MAX_USER_PROPERTY_NUM = 128          # ProxyConfig.userPropertyMaxNum
MAX_USER_PROPERTY_SIZE = 16 * 1024   # ProxyConfig.maxUserPropertySize
MAX_MESSAGE_SIZE = 4 * 1024 * 1024   # ProxyConfig.maxMessageSize


class GrpcRequestError(Exception):
    """A request the proxy refuses: ``code`` is the ``apache.rocketmq.v2.Code`` it answers with."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def status(code: int, message: str | None = None) -> pb.Status:
    return pb.Status(code=code, message=message if message is not None else pb.Code.Name(code))


def timestamp_ms(ms: int) -> Timestamp:
    t = Timestamp()
    t.FromMilliseconds(ms)
    return t


def _has_control(text: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in text)


@dataclass(frozen=True)
class BuiltMessage:
    topic: str
    body: bytes
    properties: str     # the properties string to send (JavaHashMap order)
    sys_flag: int
    message_type: int
    born_timestamp: int


def build_message(message: pb.Message, producer_group: str, remote_host: str = "") -> BuiltMessage:
    """``SendMessageActivity.buildMessage`` + ``buildMessageProperty`` + ``buildSysFlag``."""
    if len(message.body) > MAX_MESSAGE_SIZE:
        raise GrpcRequestError(pb.Code.MESSAGE_BODY_TOO_LARGE, f"message body cannot exceed the max {MAX_MESSAGE_SIZE}")
    sp = message.system_properties
    user = dict(message.user_properties)
    if len(user) > MAX_USER_PROPERTY_NUM:
        raise GrpcRequestError(pb.Code.MESSAGE_PROPERTIES_TOO_LARGE,
                               f"too many user properties, max is {MAX_USER_PROPERTY_NUM}")
    size = 0
    for k, v in user.items():
        if k in SYSTEM_PROPERTIES:
            raise GrpcRequestError(pb.Code.ILLEGAL_MESSAGE_PROPERTY_KEY, f"property is used by system: {k}")
        if _has_control(k) or _has_control(v):
            raise GrpcRequestError(pb.Code.ILLEGAL_MESSAGE_PROPERTY_KEY,
                                   "the key or value of property cannot contain control character")
        size += len(k.encode()) + len(v.encode())
    props = JavaHashMap(user.items())
    tag = sp.tag
    if tag and (tag.strip() == "" or "|" in tag or _has_control(tag)):
        raise GrpcRequestError(pb.Code.ILLEGAL_MESSAGE_TAG, "tag cannot be the char sequence of whitespace, "
                                                            "contain '|' or control characters")
    if tag:
        props[TAGS] = tag
    size += len(tag.encode())
    for key in sp.keys:
        if not key.strip() or _has_control(key):
            raise GrpcRequestError(pb.Code.ILLEGAL_MESSAGE_KEY, "key cannot be blank or contain control characters")
        size += len(key.encode())
    if sp.keys:
        props[KEYS] = " ".join(sp.keys)
    if size > MAX_USER_PROPERTY_SIZE:
        raise GrpcRequestError(pb.Code.MESSAGE_PROPERTIES_TOO_LARGE,
                               f"the total size of user property is too large, max is {MAX_USER_PROPERTY_SIZE}")
    if not sp.message_id.strip():
        raise GrpcRequestError(pb.Code.ILLEGAL_MESSAGE_ID, "message id cannot be empty")
    props[UNIQ_KEY] = sp.message_id
    sys_flag = 0
    if sp.body_encoding == pb.Encoding.GZIP:
        sys_flag |= COMPRESSED_FLAG
    if sp.message_type == pb.MessageType.TRANSACTION:
        sys_flag |= TRANSACTION_PREPARED_TYPE
        props["TRAN_MSG"] = "true"
        if sp.HasField("orphaned_transaction_recovery_duration"):
            props[CHECK_IMMUNITY_TIME_IN_SECONDS] = str(sp.orphaned_transaction_recovery_duration.seconds)
    if sp.HasField("delivery_timestamp"):
        props[TIMER_DELIVER_MS] = str(sp.delivery_timestamp.ToMilliseconds())
    props["RECONSUME_TIME"] = str(sp.delivery_attempt)
    props["PGROUP"] = producer_group
    if sp.message_group:
        props[SHARDING_KEY] = sp.message_group
    if sp.trace_context:
        props[TRACE_CONTEXT] = sp.trace_context
    born_host = sp.born_host or remote_host
    if born_host:
        props[BORN_HOST] = born_host
    born_ms = sp.born_timestamp.ToMilliseconds() if sp.HasField("born_timestamp") else 0
    if sp.HasField("born_timestamp"):
        props[BORN_TIMESTAMP] = str(born_ms)
    return BuiltMessage(message.topic.name, bytes(message.body), encode_properties(props), sys_flag,
                        sp.message_type, born_ms)


_TRANSACTION, _DELAY, _FIFO, _NORMAL = (pb.MessageType.TRANSACTION, pb.MessageType.DELAY, pb.MessageType.FIFO,
                                       pb.MessageType.NORMAL)
_MD5, _GZIP, _IDENTITY = pb.DigestType.MD5, pb.Encoding.GZIP, pb.Encoding.IDENTITY


def message_type_of(props: dict[str, str]) -> int:
    if props.get("TRAN_MSG") == "true":
        return _TRANSACTION
    if props.get("DELAY") is not None or props.get(TIMER_DELIVER_MS) is not None or props.get("TIMER_DELAY_SEC"):
        return _DELAY
    if props.get(SHARDING_KEY) is not None:
        return _FIFO
    return _NORMAL


def to_proto_message(record: MessageRecord, topic: str, namespace: str = "",
                     receipt_handle: str | None = None) -> pb.Message:
    """``GrpcConverter.buildMessage``: a stored record as a v2 Message; its receipt handle is
    ``receipt_handle`` or the record's ``POP_CK``."""
    props = record.properties
    sp = pb.SystemProperties()
    if props.get(TAGS) is not None:
        sp.tag = props[TAGS]
    if props.get(KEYS) is not None:
        sp.keys.extend(props[KEYS].split(" "))
    sp.message_id = props.get(UNIQ_KEY) or record.msg_id
    sp.body_digest.type = _MD5
    sp.body_digest.checksum = hashlib.md5(record.body).hexdigest().upper()
    sp.body_encoding = _GZIP if record.sys_flag & COMPRESSED_FLAG else _IDENTITY
    sp.message_type = message_type_of(props)
    sp.born_timestamp.FromMilliseconds(record.born_timestamp)
    sp.born_host = props.get(BORN_HOST) or f"{record.born_host[0]}:{record.born_host[1]}"
    sp.store_timestamp.FromMilliseconds(record.store_timestamp)
    sp.store_host = f"{record.store_host[0]}:{record.store_host[1]}"
    if props.get(TIMER_DELIVER_MS) is not None:
        try:
            sp.delivery_timestamp.CopyFrom(timestamp_ms(int(props[TIMER_DELIVER_MS])))
        except ValueError:
            pass
    if props.get(SHARDING_KEY) is not None:
        sp.message_group = props[SHARDING_KEY]
    handle = receipt_handle if receipt_handle is not None else props.get("POP_CK")
    if handle is not None:
        sp.receipt_handle = handle
    sp.queue_id = record.queue_id
    sp.queue_offset = record.queue_offset
    sp.delivery_attempt = record.reconsume_times + 1
    if props.get(TRACE_CONTEXT) is not None:
        sp.trace_context = props[TRACE_CONTEXT]
    if props.get("DLQ_ORIGIN_TOPIC") is not None and props.get("DLQ_ORIGIN_MESSAGE_ID") is not None:
        sp.dead_letter_queue.CopyFrom(pb.DeadLetterQueue(topic=props["DLQ_ORIGIN_TOPIC"],
                                                         message_id=props["DLQ_ORIGIN_MESSAGE_ID"]))
    user = {k: v for k, v in props.items() if k not in SYSTEM_PROPERTIES}
    return pb.Message(topic=pb.Resource(name=topic, resource_namespace=namespace), user_properties=user,
                      system_properties=sp, body=record.body)


def message_queues(topic: pb.Resource, read_nums: int, write_nums: int, perm: int, broker: pb.Broker,
                   accept: list[int]) -> list[pb.MessageQueue]:
    """``RouteActivity.genMessageQueueFromQueueData``: read-only, then write-only, then read-write queues."""
    readable, writeable = bool(perm & 4), bool(perm & 2)
    r = w = rw = 0
    if readable and writeable:
        rw = min(read_nums, write_nums)
        r, w = read_nums - rw, write_nums - rw
    elif writeable:
        w = write_nums
    elif readable:
        r = read_nums
    out, qid = [], 0
    for count, permission in ((r, pb.Permission.READ), (w, pb.Permission.WRITE), (rw, pb.Permission.READ_WRITE)):
        for _ in range(count):
            out.append(pb.MessageQueue(topic=topic, id=qid, permission=permission, broker=broker,
                                       accept_message_types=accept))
            qid += 1
    return out


#: ``RouteActivity.parseTopicMessageType``
ACCEPT = {"NORMAL": [pb.MessageType.NORMAL], "FIFO": [pb.MessageType.FIFO], "DELAY": [pb.MessageType.DELAY],
          "TRANSACTION": [pb.MessageType.TRANSACTION],
          "MIXED": [pb.MessageType.NORMAL, pb.MessageType.FIFO, pb.MessageType.DELAY, pb.MessageType.TRANSACTION]}
