"""The requests a 4.9.4 client sends, as pure builders, and the readers of their answers.

One function per request (``client/impl/MQClientAPIImpl.java``): it takes plain values and
returns a :class:`~pymq_ref.remoting.command.RemotingCommand` with the same code, header class and
fields the Java client sends — so a test can replay the shapes the real broker accepted, and the
I/O shell (:mod:`pymq_ref.client.api`) stays a few lines per call. Readers turn a response into
values or raise :class:`~pymq_ref.client.errors.MQBrokerError`. No I/O.
"""

from __future__ import annotations

import zlib

from pymq_ref.formats import properties as P
from pymq_ref.formats import sysflag as SF
from pymq_ref.formats.batch import BatchEntry, encode_batch
from pymq_ref.formats.hashing import java_string_hash
from pymq_ref.formats.message import iter_records
from pymq_ref.formats.message_queue import MessageQueue
from pymq_ref.remoting.bodies.bean import decode_json, encode_body
from pymq_ref.remoting.bodies.consumer import (CheckClientRequestBody, GetConsumerListByGroupResponseBody,
                                               LockBatchRequestBody,
                                               LockBatchResponseBody, UnlockBatchRequestBody)
from pymq_ref.remoting.bodies.heartbeat import EXPRESSION_TAG, SUB_ALL, HeartbeatData, SubscriptionData
from pymq_ref.remoting.bodies.route import TopicRouteData
from pymq_ref.remoting.codes import RequestCode, ResponseCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.headers.clients import (GetConsumerListByGroupRequestHeader, UnregisterClientRequestHeader)
from pymq_ref.remoting.headers.namesrv import GetRouteInfoRequestHeader
from pymq_ref.remoting.headers.offsets import (GetMaxOffsetRequestHeader, GetMaxOffsetResponseHeader,
                                               QueryConsumerOffsetRequestHeader, QueryConsumerOffsetResponseHeader,
                                               SearchOffsetRequestHeader, SearchOffsetResponseHeader,
                                               UpdateConsumerOffsetRequestHeader)
from pymq_ref.remoting.headers.pull import PullMessageRequestHeader, PullMessageResponseHeader
from pymq_ref.remoting.headers.send import (ConsumerSendMsgBackRequestHeader, SendMessageRequestHeader,
                                            SendMessageRequestHeaderV2, SendMessageResponseHeader)
from pymq_ref.remoting.headers.transaction import EndTransactionRequestHeader

from .errors import MQBrokerError
from .message import (DEFAULT_REGION, MAX_RECONSUME_TIMES, MESSAGE_TYPE, MSG_REGION, RECONSUME_TIME,
                      REPLY_MESSAGE_FLAG, RETRY_GROUP_TOPIC_PREFIX, SEND_STATUS_BY_CODE, TRACE_ON, MessageExt,
                      SendResult)

SEND_REPLY_MESSAGE_V2 = 325
DEFAULT_TOPIC = "TBW102"  # TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC
DEFAULT_TOPIC_QUEUE_NUMS = 4
COMPRESS_ZLIB_FLAGS = SF.COMPRESSED_FLAG | 0x300  # COMPRESSED_FLAG | COMPRESSION_ZLIB_TYPE

# PullSysFlag (common/sysflag/PullSysFlag.java)
PULL_COMMIT_OFFSET = 0x1
PULL_SUSPEND = 0x2
PULL_SUBSCRIPTION = 0x4
PULL_CLASS_FILTER = 0x8

# PullStatus by response code (MQClientAPIImpl#processPullResponse)
FOUND, NO_NEW_MSG, NO_MATCHED_MSG, OFFSET_ILLEGAL = "FOUND", "NO_NEW_MSG", "NO_MATCHED_MSG", "OFFSET_ILLEGAL"
PULL_STATUS_BY_CODE = {ResponseCode.SUCCESS: FOUND, ResponseCode.PULL_NOT_FOUND: NO_NEW_MSG,
                       ResponseCode.PULL_RETRY_IMMEDIATELY: NO_MATCHED_MSG, ResponseCode.PULL_OFFSET_MOVED: OFFSET_ILLEGAL}


def check(response: RemotingCommand, addr: str | None = None, ok: tuple[int, ...] = (0,)) -> RemotingCommand:
    """The response itself when its code is one of ``ok``, else :class:`MQBrokerError`."""
    if response.code not in ok:
        raise MQBrokerError(response.code, response.remark, addr)
    return response


# -- name server ----------------------------------------------------------------------------------

def get_route(topic: str) -> RemotingCommand:
    return RemotingCommand.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, GetRouteInfoRequestHeader(topic=topic))


def read_route(response: RemotingCommand) -> TopicRouteData | None:
    """The route, or None when the name server has none (TOPIC_NOT_EXIST, 17)."""
    if response.code == ResponseCode.TOPIC_NOT_EXIST:
        return None
    check(response)
    return decode_json(TopicRouteData, response.body)


# -- producing ------------------------------------------------------------------------------------

def maybe_compress(body: bytes, over: int, level: int = 5) -> tuple[bytes, int]:
    """(body, sysFlag bits): bodies of ``over`` bytes or more deflated with zlib (``tryToCompressMessage``)."""
    if len(body) >= over:
        return zlib.compress(body, level), COMPRESS_ZLIB_FLAGS
    return body, 0


def send_message_header(*, group: str, topic: str, queue_id: int, sys_flag: int, born_timestamp: int, flag: int,
                        properties: dict, batch: bool = False,
                        default_topic: str = DEFAULT_TOPIC,
                        default_topic_queue_nums: int = DEFAULT_TOPIC_QUEUE_NUMS) -> SendMessageRequestHeader:
    """The V1 header of ``sendKernelImpl`` (reconsume fields moved out of a retry message's properties)."""
    props = dict(properties)
    reconsume = max_reconsume = None
    if topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
        if RECONSUME_TIME in props:
            reconsume = int(props.pop(RECONSUME_TIME))
        if MAX_RECONSUME_TIMES in props:
            max_reconsume = int(props.pop(MAX_RECONSUME_TIMES))
    return SendMessageRequestHeader(
        producer_group=group, topic=topic, default_topic=default_topic,
        default_topic_queue_nums=default_topic_queue_nums, queue_id=queue_id, sys_flag=sys_flag,
        born_timestamp=born_timestamp, flag=flag, properties=P.encode_properties(props),
        reconsume_times=0 if reconsume is None else reconsume, unit_mode=False, batch=batch,
        max_reconsume_times=max_reconsume)


def send_message(header: SendMessageRequestHeader, body: bytes, *, batch: bool = False) -> RemotingCommand:
    """SEND_MESSAGE_V2 (or SEND_BATCH_MESSAGE, or SEND_REPLY_MESSAGE_V2 for a reply), the V2 header
    (``sendSmartMsg``, the Java default)."""
    v2 = SendMessageRequestHeaderV2.from_v1(header)
    if batch:
        code = RequestCode.SEND_BATCH_MESSAGE
    elif P.decode_properties(header.properties or "").get(MESSAGE_TYPE) == REPLY_MESSAGE_FLAG:
        code = SEND_REPLY_MESSAGE_V2
    else:
        code = RequestCode.SEND_MESSAGE_V2
    return RemotingCommand.request(code, v2, body)


def send_message_fast(*, group: str, topic: str, queue_id: int, sys_flag: int, born_timestamp: int, flag: int,
                      properties: dict, body: bytes, batch: bool = False, default_topic: str = DEFAULT_TOPIC,
                      default_topic_queue_nums: int = DEFAULT_TOPIC_QUEUE_NUMS) -> RemotingCommand:
    """:func:`send_message` of :func:`send_message_header` in one step, the V2 ext map written directly
    (the producer's hot path; the same ext entries, and so the same bytes — the codec orders them)."""
    props = properties
    reconsume = max_reconsume = None
    if topic.startswith(RETRY_GROUP_TOPIC_PREFIX) and (RECONSUME_TIME in props or MAX_RECONSUME_TIMES in props):
        props = dict(props)
        if RECONSUME_TIME in props:
            reconsume = props.pop(RECONSUME_TIME)
        if MAX_RECONSUME_TIMES in props:
            max_reconsume = props.pop(MAX_RECONSUME_TIMES)
    ext = {"a": group, "b": topic, "c": default_topic, "d": str(default_topic_queue_nums), "e": str(queue_id),
           "f": str(sys_flag), "g": str(born_timestamp), "h": str(flag), "i": P.encode_properties(props),
           "j": str(int(reconsume)) if reconsume is not None else "0", "k": "false",
           "m": "true" if batch else "false"}
    if max_reconsume is not None:
        ext["l"] = str(int(max_reconsume))
    if batch:
        code = RequestCode.SEND_BATCH_MESSAGE
    elif props.get(MESSAGE_TYPE) == REPLY_MESSAGE_FLAG:
        code = SEND_REPLY_MESSAGE_V2
    else:
        code = RequestCode.SEND_MESSAGE_V2
    return RemotingCommand(int(code), ext_fields=ext, body=body)


def batch_body(messages) -> bytes:
    """The SEND_BATCH_MESSAGE body of :class:`~pymq_ref.client.message.Message` values (``MessageBatch#encode``)."""
    return encode_batch([BatchEntry(body=m.body, properties=dict(m.properties), flag=m.flag) for m in messages])


def read_send(response: RemotingCommand, mq: MessageQueue, uniq: str | None, addr: str | None) -> SendResult:
    """``processSendResponse``: SUCCESS and the three flush/slave codes give a result; others raise."""
    status = SEND_STATUS_BY_CODE.get(response.code)
    if status is None:
        raise MQBrokerError(response.code, response.remark, addr)
    ext = response.ext_fields
    if ext is None or response.custom_header is not None:
        ext = response.ext()
    try:  # the common case read straight from the ext map (SendMessageResponseHeader: msgId, queueId, queueOffset)
        queue_id = int(ext["queueId"])
        queue_offset = int(ext["queueOffset"])
        msg_id = ext["msgId"]
    except (KeyError, TypeError, ValueError):
        h = response.header(SendMessageResponseHeader)
        queue_id = h.queue_id if h.queue_id is not None else mq.queue_id
        queue_offset = h.queue_offset if h.queue_offset is not None else -1
        msg_id = h.msg_id
    return SendResult(status, uniq, MessageQueue(mq.topic, mq.broker_name, queue_id), queue_offset, msg_id,
                      ext.get("transactionId"), ext.get(MSG_REGION) or DEFAULT_REGION, ext.get(TRACE_ON) != "false",
                      addr)


def end_transaction(*, group: str, tran_state_table_offset: int, commit_log_offset: int, commit_or_rollback: int,
                    msg_id: str, transaction_id: str | None, from_check: bool,
                    remark: str | None = None) -> RemotingCommand:
    header = EndTransactionRequestHeader(
        producer_group=group, tran_state_table_offset=tran_state_table_offset, commit_log_offset=commit_log_offset,
        commit_or_rollback=commit_or_rollback, from_transaction_check=from_check, msg_id=msg_id,
        transaction_id=transaction_id)
    return RemotingCommand.request(RequestCode.END_TRANSACTION, header, remark=remark, oneway=True)


# -- clients and groups ---------------------------------------------------------------------------

def heartbeat(data: HeartbeatData) -> RemotingCommand:
    return RemotingCommand.request(RequestCode.HEART_BEAT, body=encode_body(data))


def unregister_client(client_id: str, producer_group: str | None, consumer_group: str | None) -> RemotingCommand:
    return RemotingCommand.request(RequestCode.UNREGISTER_CLIENT, UnregisterClientRequestHeader(
        client_id=client_id, producer_group=producer_group, consumer_group=consumer_group))


def get_consumer_list(group: str) -> RemotingCommand:
    return RemotingCommand.request(RequestCode.GET_CONSUMER_LIST_BY_GROUP,
                                   GetConsumerListByGroupRequestHeader(consumer_group=group))


def read_consumer_list(response: RemotingCommand, addr: str | None = None) -> list[str]:
    check(response, addr)
    body = decode_json(GetConsumerListByGroupResponseBody, response.body) if response.body else None
    return list(body.consumer_id_list) if body else []


def build_subscription(topic: str, expression: str | None, expression_type: str = EXPRESSION_TAG,
                       sub_version: int = 0) -> SubscriptionData:
    """``FilterAPI.build``: ``*``/empty → SUB_ALL; tags split on ``||``, trimmed, with their Java hash codes."""
    sub = SubscriptionData(topic=topic, sub_version=sub_version, expression_type=expression_type or EXPRESSION_TAG)
    if expression_type not in (None, EXPRESSION_TAG):
        sub.sub_string = expression
        return sub
    if not expression or expression.strip() in ("", SUB_ALL):
        sub.sub_string = SUB_ALL
        return sub
    sub.sub_string = expression
    for tag in expression.split("||"):
        tag = tag.strip()
        if tag:
            sub.tags_set.append(tag)
            sub.code_set.append(java_string_hash(tag))
    return sub


def check_client_config(client_id: str, group: str, sub: SubscriptionData) -> RemotingCommand:
    """CHECK_CLIENT_CONFIG: may the broker evaluate this (SQL92) subscription? (``checkClientInBroker``)"""
    body = CheckClientRequestBody(client_id=client_id, group=group, subscription_data=sub)
    return RemotingCommand.request(RequestCode.CHECK_CLIENT_CONFIG, body=encode_body(body))


def lock_batch(group: str, client_id: str, mqs) -> RemotingCommand:
    body = LockBatchRequestBody(consumer_group=group, client_id=client_id, mq_set=sorted(mqs))
    return RemotingCommand.request(RequestCode.LOCK_BATCH_MQ, body=encode_body(body))


def read_lock_batch(response: RemotingCommand, addr: str | None = None) -> set[MessageQueue]:
    check(response, addr)
    body = decode_json(LockBatchResponseBody, response.body) if response.body else None
    return set(body.lock_ok_mq_set) if body else set()


def unlock_batch(group: str, client_id: str, mqs, oneway: bool = False) -> RemotingCommand:
    body = UnlockBatchRequestBody(consumer_group=group, client_id=client_id, mq_set=sorted(mqs))
    return RemotingCommand.request(RequestCode.UNLOCK_BATCH_MQ, body=encode_body(body), oneway=oneway)


# -- offsets --------------------------------------------------------------------------------------

def query_consumer_offset(group: str, mq: MessageQueue) -> RemotingCommand:
    return RemotingCommand.request(RequestCode.QUERY_CONSUMER_OFFSET, QueryConsumerOffsetRequestHeader(
        consumer_group=group, topic=mq.topic, queue_id=mq.queue_id))


def read_query_consumer_offset(response: RemotingCommand, addr: str | None = None) -> int:
    check(response, addr)
    return response.header(QueryConsumerOffsetResponseHeader).offset


def update_consumer_offset(group: str, mq: MessageQueue, offset: int, oneway: bool = True) -> RemotingCommand:
    return RemotingCommand.request(RequestCode.UPDATE_CONSUMER_OFFSET, UpdateConsumerOffsetRequestHeader(
        consumer_group=group, topic=mq.topic, queue_id=mq.queue_id, commit_offset=offset), oneway=oneway)


def get_max_offset(mq: MessageQueue) -> RemotingCommand:
    return RemotingCommand.request(RequestCode.GET_MAX_OFFSET, GetMaxOffsetRequestHeader(topic=mq.topic,
                                                                                         queue_id=mq.queue_id))


def read_max_offset(response: RemotingCommand, addr: str | None = None) -> int:
    check(response, addr)
    return response.header(GetMaxOffsetResponseHeader).offset


def search_offset(mq: MessageQueue, timestamp: int) -> RemotingCommand:
    return RemotingCommand.request(RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, SearchOffsetRequestHeader(
        topic=mq.topic, queue_id=mq.queue_id, timestamp=timestamp))


def read_search_offset(response: RemotingCommand, addr: str | None = None) -> int:
    check(response, addr)
    return response.header(SearchOffsetResponseHeader).offset


# -- pulling --------------------------------------------------------------------------------------

def pull_message(*, group: str, mq: MessageQueue, queue_offset: int, max_msg_nums: int, sys_flag: int,
                 commit_offset: int, suspend_timeout_millis: int, subscription: str | None, sub_version: int,
                 expression_type: str | None) -> RemotingCommand:
    return RemotingCommand.request(RequestCode.PULL_MESSAGE, PullMessageRequestHeader(
        consumer_group=group, topic=mq.topic, queue_id=mq.queue_id, queue_offset=queue_offset,
        max_msg_nums=max_msg_nums, sys_flag=sys_flag, commit_offset=commit_offset,
        suspend_timeout_millis=suspend_timeout_millis, subscription=subscription, sub_version=sub_version,
        expression_type=expression_type))


def pull_sys_flag(commit_offset: bool, suspend: bool, subscription: bool, class_filter: bool = False) -> int:
    return ((PULL_COMMIT_OFFSET if commit_offset else 0) | (PULL_SUSPEND if suspend else 0)
            | (PULL_SUBSCRIPTION if subscription else 0) | (PULL_CLASS_FILTER if class_filter else 0))


class PullResult:
    """``PullResultExt`` after ``processPullResult``: status, where to continue, the decoded messages."""

    __slots__ = ("status", "next_begin_offset", "min_offset", "max_offset", "suggest_which_broker_id", "messages")

    def __init__(self, status, next_begin_offset, min_offset, max_offset, suggest_which_broker_id, messages):
        self.status = status
        self.next_begin_offset = next_begin_offset
        self.min_offset = min_offset
        self.max_offset = max_offset
        self.suggest_which_broker_id = suggest_which_broker_id
        self.messages = messages

    def __repr__(self):
        return (f"PullResult({self.status}, next={self.next_begin_offset}, min={self.min_offset}, "
                f"max={self.max_offset}, {len(self.messages)} messages)")


def read_pull(response: RemotingCommand, mq: MessageQueue, sub: SubscriptionData | None,
              addr: str | None = None) -> PullResult:
    """``processPullResponse`` + ``processPullResult``: decode the records, keep only those whose
    TAGS are in the subscription's tag set (the broker filtered by hash code only), and stamp
    MIN_OFFSET / MAX_OFFSET on each message as the Java client does."""
    status = PULL_STATUS_BY_CODE.get(response.code)
    if status is None:
        raise MQBrokerError(response.code, response.remark, addr)
    h = response.header(PullMessageResponseHeader)
    messages = []
    if status == FOUND and response.body:
        tags = set(sub.tags_set) if sub is not None and sub.tags_set and not sub.class_filter_mode else None
        lo, hi = str(h.min_offset), str(h.max_offset)
        for record in iter_records(response.body):
            if tags is not None and record.properties.get(P.TAGS) not in tags:
                continue
            msg = MessageExt.from_record(record, mq.broker_name)
            msg.properties["MIN_OFFSET"] = lo
            msg.properties["MAX_OFFSET"] = hi
            messages.append(msg)
    return PullResult(status, h.next_begin_offset, h.min_offset, h.max_offset, h.suggest_which_broker_id or 0,
                      messages)


def send_back(*, group: str, msg: MessageExt, delay_level: int, max_reconsume_times: int) -> RemotingCommand:
    """CONSUMER_SEND_MSG_BACK for a message that failed (``consumerSendMessageBack``)."""
    return RemotingCommand.request(RequestCode.CONSUMER_SEND_MSG_BACK, ConsumerSendMsgBackRequestHeader(
        offset=msg.commit_log_offset, group=group, delay_level=delay_level, origin_msg_id=msg.msg_id,
        origin_topic=msg.topic, unit_mode=False, max_reconsume_times=max_reconsume_times))
