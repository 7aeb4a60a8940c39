"""What ``SendMessageProcessor`` (4.9.4) does between a SEND_MESSAGE request and the store.

Order of the checks
(``broker/src/main/java/org/apache/rocketmq/broker/processor/AbstractSendMessageProcessor.java``, ``msgCheck``):
accept-time,
order topic on a read-only broker, topic name, forbidden system topics, topic lookup or
auto-creation (TBW102 template, ``%RETRY%`` with one queue), queue id; then queue selection,
``handleRetryAndDLQ``, the properties rule of :func:`~pymq_ref.broker.messages.broker_properties`,
born host (the connection's remote address), store host (``brokerIP1:listenPort``), and either
the half-message path (``TRAN_MSG=true``) or a plain put. Refusals raise a
:class:`~pymq_ref.broker.response.BrokerError` before anything is written.

This module must not open sockets or know the wire format; the network wave turns request
headers into :class:`SendMessageRequest` and :class:`SendResult` / errors into responses.
"""

from __future__ import annotations

import enum
import logging
import random
from dataclasses import dataclass, field
from typing import Callable, Mapping

from pymq_ref.formats.batch import iter_batch
from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import MessageRecord
from pymq_ref.formats.properties import TRAN_MSG, UNIQ_KEY
from pymq_ref.store.clock import Clock
from pymq_ref.store.commit_log import PutMessageStatus

from .config import BrokerConfig
from .constants import (AUTO_CREATE_TOPIC_KEY_TOPIC, DLQ_NUMS_PER_GROUP, PERM_READ, PERM_WRITE,
                        RETRY_GROUP_TOPIC_PREFIX, check_send_allowed, dlq_topic, is_writeable, perm_to_string,
                        validate_topic)
from .messages import broker_properties, client_properties, parse_boolean, request_properties
from .store_put import Put
from .response import (FAQ_TIP, BrokerError, BrokerSystemError, IllegalQueueIdError, MessageIllegalResponseError,
                       NoPermissionError, ResponseCode, ServiceNotAvailableError, SubscriptionGroupNotExistError,
                       TopicNotExistError)
from .subscriptions import SubscriptionGroupManager
from .topics import TopicConfigManager

MULTI_TAGS_FLAG = 0x2
TOPIC_SYS_FLAG_UNIT = 0x1
TOPIC_SYS_FLAG_UNIT_SUB = 0x2


log = logging.getLogger("pymq_ref.broker.send")

#: ``handlePutMessageResult``'s remark for MESSAGE_ILLEGAL / PROPERTIES_SIZE_EXCEEDED ({} = maxMessageSize)
MESSAGE_ILLEGAL_REMARK = ("the message is illegal, maybe msg body or properties length not matched. "
                          "msg body length limit {}B, msg properties length limit 32KB.")


class SendStatus(enum.Enum):
    SEND_OK = "SEND_OK"
    FLUSH_DISK_TIMEOUT = "FLUSH_DISK_TIMEOUT"
    FLUSH_SLAVE_TIMEOUT = "FLUSH_SLAVE_TIMEOUT"
    SLAVE_NOT_AVAILABLE = "SLAVE_NOT_AVAILABLE"


#: Store status -> (response code, remark) (``handlePutMessageResult``); the first four are successes.
PUT_STATUS_RESPONSE: dict[PutMessageStatus, tuple[ResponseCode, str | None]] = {
    PutMessageStatus.PUT_OK: (ResponseCode.SUCCESS, None),
    PutMessageStatus.FLUSH_DISK_TIMEOUT: (ResponseCode.FLUSH_DISK_TIMEOUT, None),
    PutMessageStatus.FLUSH_SLAVE_TIMEOUT: (ResponseCode.FLUSH_SLAVE_TIMEOUT, None),
    PutMessageStatus.SLAVE_NOT_AVAILABLE: (ResponseCode.SLAVE_NOT_AVAILABLE, None),
    PutMessageStatus.CREATE_MAPEDFILE_FAILED: (ResponseCode.SYSTEM_ERROR, "create mapped file failed, server is busy or broken."),
    PutMessageStatus.MESSAGE_ILLEGAL: (ResponseCode.MESSAGE_ILLEGAL, MESSAGE_ILLEGAL_REMARK),
    PutMessageStatus.PROPERTIES_SIZE_EXCEEDED: (ResponseCode.MESSAGE_ILLEGAL, MESSAGE_ILLEGAL_REMARK),
    PutMessageStatus.SERVICE_NOT_AVAILABLE: (ResponseCode.SERVICE_NOT_AVAILABLE, "service not available now."),
    PutMessageStatus.OS_PAGECACHE_BUSY: (ResponseCode.SYSTEM_ERROR, "[PC_SYNCHRONIZED]broker busy, start flow control for a while"),
    PutMessageStatus.LMQ_CONSUME_QUEUE_NUM_EXCEEDED: (ResponseCode.SYSTEM_ERROR, "[LMQ_CONSUME_QUEUE_NUM_EXCEEDED]"),
    PutMessageStatus.UNKNOWN_ERROR: (ResponseCode.SYSTEM_ERROR, "UNKNOWN_ERROR"),
    # 5.x timer refusals: the remark is the one the broker's timer hook worded (the result's error)
    PutMessageStatus.WHEEL_TIMER_MSG_ILLEGAL: (ResponseCode.MESSAGE_ILLEGAL, None),
    PutMessageStatus.WHEEL_TIMER_FLOW_CONTROL: (ResponseCode.SYSTEM_ERROR, None),
    PutMessageStatus.WHEEL_TIMER_NOT_ENABLE: (ResponseCode.SYSTEM_ERROR, None),
}
_SEND_STATUS = {ResponseCode.SUCCESS: SendStatus.SEND_OK, ResponseCode.FLUSH_DISK_TIMEOUT: SendStatus.FLUSH_DISK_TIMEOUT,
                ResponseCode.FLUSH_SLAVE_TIMEOUT: SendStatus.FLUSH_SLAVE_TIMEOUT,
                ResponseCode.SLAVE_NOT_AVAILABLE: SendStatus.SLAVE_NOT_AVAILABLE}


#: 4.9.4's full SERVICE_NOT_AVAILABLE remark of a send; ``{}`` is ``diskUtil()``
SERVICE_NOT_AVAILABLE_REMARK = ("service not available now. It may be caused by one of the following reasons: "
                                "the broker's disk is full [{}], messages are put to the slave, message store has "
                                "been shut down, etc.")


def raise_for_put(result, disk_util: Callable[[], str] | None = None, max_message_size: int = 4 * 1024 * 1024) -> ResponseCode:
    """The response code of a put; raises the matching :class:`BrokerError` for a failed one,
    whose remark is 4.9.4's word for word (the store's own explanation is logged, not sent).
    ``disk_util`` (the store's) fills SERVICE_NOT_AVAILABLE's remark as the send path words it."""
    code, remark = PUT_STATUS_RESPONSE.get(result.status, (ResponseCode.SYSTEM_ERROR, "UNKNOWN_ERROR DEFAULT"))
    if code in _SEND_STATUS:
        return code
    if code is ResponseCode.SERVICE_NOT_AVAILABLE and disk_util is not None:
        remark = SERVICE_NOT_AVAILABLE_REMARK.format(disk_util())
    if remark is None:  # worded by the service that refused the put (the 5.x timer)
        remark = result.error
    elif code is ResponseCode.MESSAGE_ILLEGAL:
        remark = remark.format(max_message_size)
    if result.error:
        log.info("put refused (%s): %s", result.status.name, result.error)
    detail = remark
    if code is ResponseCode.MESSAGE_ILLEGAL:
        raise MessageIllegalResponseError(detail)
    if code is ResponseCode.SERVICE_NOT_AVAILABLE:
        raise ServiceNotAvailableError(detail)
    raise BrokerSystemError(detail)


@dataclass
class SendMessageRequest:
    """``SendMessageRequestHeader`` + body + the connection's remote address (born host).

    ``properties`` is the wire string (or a mapping, turned into the string a Java client
    would send). ``queue_id < 0`` lets the broker pick a queue.
    """

    topic: str
    body: bytes
    properties: str | Mapping[str, str] | None = None
    producer_group: str = "DEFAULT_PRODUCER"
    queue_id: int = -1
    sys_flag: int = 0
    born_timestamp: int = 0
    flag: int = 0
    born_host: Host = Host("127.0.0.1", 50000)
    default_topic: str = AUTO_CREATE_TOPIC_KEY_TOPIC
    default_topic_queue_nums: int = 4
    reconsume_times: int | None = None
    max_reconsume_times: int | None = None
    unit_mode: bool = False
    batch: bool = False

    @property
    def properties_text(self) -> str:
        return client_properties(self.properties)


@dataclass
class SendResult:
    """What the send response carries (``SendMessageResponseHeader`` + status), and where it went.

    ``msg_id`` is what the Java client reports as msgId (the ``UNIQ_KEY``, ``,``-joined for a
    batch); ``offset_msg_id`` is the broker's id(s) (store host + CommitLog offset).
    """

    send_status: SendStatus
    code: ResponseCode
    msg_id: str | None
    offset_msg_id: str
    queue_id: int
    queue_offset: int
    region_id: str
    trace_on: bool
    stored_topic: str
    stored_queue_id: int
    commit_log_offsets: tuple[int, ...] = ()
    transaction_id: str | None = None  # never set by a 4.9.4 broker
    put: Put | None = field(default=None, repr=False)


def topic_config_text(tc) -> str:
    """``TopicConfig.toString()`` of 4.9.4, as remarks quote it."""
    return (f"TopicConfig [topicName={tc.topic_name}, readQueueNums={tc.read_queue_nums}, "
            f"writeQueueNums={tc.write_queue_nums}, perm={perm_to_string(tc.perm)}, "
            f"topicFilterType={tc.topic_filter_type}, topicSysFlag={tc.topic_sys_flag}, "
            f"order={'true' if tc.order else 'false'}]")


class SendMessageProcessor:
    """Turns send requests into stored records. Stateless apart from the queue-id picker."""

    #: ``MessageStoreConfig.maxMessageSize`` (the broker sets its store's), quoted by MESSAGE_ILLEGAL's remark
    max_message_size: int = 4 * 1024 * 1024

    def __init__(self, config: BrokerConfig, clock: Clock, topics: TopicConfigManager,
                 subscriptions: SubscriptionGroupManager, put_message: Callable[[MessageRecord], Put],
                 put_messages: Callable[[MessageRecord], Put], prepare_message: Callable[[MessageRecord], Put],
                 rng: random.Random, disk_util: Callable[[], str] | None = None):
        self.config = config
        self.clock = clock
        self.topics = topics
        self.subscriptions = subscriptions
        self.put_message = put_message
        self.put_messages = put_messages
        self.prepare_message = prepare_message
        self.rng = rng
        self.disk_util = disk_util  # the store's, for the SERVICE_NOT_AVAILABLE remark

    def random_queue_id(self, n: int) -> int:
        """``ThreadLocalRandom.current().nextInt(99999999) % n`` (seeded here)."""
        return self.rng.randrange(99999999) % n if n > 0 else 0

    # -- msgCheck ----------------------------------------------------------------------------
    def msg_check(self, req: SendMessageRequest):
        """``preSend`` + ``msgCheck``: returns the topic config; raises for a refused request."""
        c = self.config
        if self.clock.now_ms() < c.start_accept_send_request_time_stamp:
            raise BrokerSystemError(f"broker unable to service, until {c.start_accept_send_request_time_stamp}")
        if not is_writeable(c.broker_permission) and self.topics.is_order_topic(req.topic):
            raise NoPermissionError(f"the broker[{c.broker_ip1}] sending message is forbidden")
        validate_topic(req.topic)
        check_send_allowed(req.topic)
        tc = self.topics.select_topic_config(req.topic)
        if tc is None:
            sys_flag = 0
            if req.unit_mode:
                sys_flag = TOPIC_SYS_FLAG_UNIT_SUB if req.topic.startswith(RETRY_GROUP_TOPIC_PREFIX) else TOPIC_SYS_FLAG_UNIT
            tc = self.topics.create_topic_in_send_message_method(req.topic, req.default_topic,
                                                                 req.default_topic_queue_nums, sys_flag)
            if tc is None and req.topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
                tc = self.topics.create_topic_in_send_message_back_method(req.topic, 1, PERM_WRITE | PERM_READ, sys_flag)
            if tc is None:
                raise TopicNotExistError(f"topic[{req.topic}] not exist, apply first please!{FAQ_TIP}")
        if req.queue_id >= max(tc.write_queue_nums, tc.read_queue_nums):
            raise IllegalQueueIdError(f"request queueId[{req.queue_id}] is illegal, {topic_config_text(tc)} "
                                      f"Producer: {req.born_host}")
        return tc

    # -- handleRetryAndDLQ -------------------------------------------------------------------
    def handle_retry_and_dlq(self, req: SendMessageRequest, topic_config) -> tuple[str, int | None, int]:
        """(topic, queue id override or None, sysFlag) — ``%RETRY%G`` sends past the max go to ``%DLQ%G``.

        Faithful 4.9.4 quirk: RocketMQ sets ``DELAY=0`` on the message *before* its property map
        is replaced by the request's, so a ``DELAY`` sent by the client survives and the store
        still parks the DLQ message in ``SCHEDULE_TOPIC_XXXX`` (``asyncConsumerSendMsgBack`` sets ``DELAY=0``).
        """
        topic, queue_override = req.topic, None
        if topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
            group = topic[len(RETRY_GROUP_TOPIC_PREFIX):]
            sgc = self.subscriptions.find_subscription_group_config(group)
            if sgc is None:
                raise SubscriptionGroupNotExistError(f"subscription group not exist, {group}")
            max_times = sgc.retry_max_times if req.max_reconsume_times is None else req.max_reconsume_times
            if (req.reconsume_times or 0) >= max_times:
                topic = dlq_topic(group)
                queue_override = self.random_queue_id(DLQ_NUMS_PER_GROUP)
                topic_config = self.topics.create_topic_in_send_message_back_method(
                    topic, DLQ_NUMS_PER_GROUP, PERM_WRITE | PERM_READ, 0)
        sys_flag = req.sys_flag
        if topic_config.topic_filter_type == "MULTI_TAG":
            sys_flag |= MULTI_TAGS_FLAG
        return topic, queue_override, sys_flag

    # -- SEND_MESSAGE -----------------------------------------------------------------------
    def build_message(self, req: SendMessageRequest) -> tuple[MessageRecord, int, bool]:
        """(record to store, queue id for the response, is a half message)."""
        tc = self.msg_check(req)
        queue_id = req.queue_id if req.queue_id >= 0 else self.random_queue_id(tc.write_queue_nums)
        topic, queue_override, sys_flag = self.handle_retry_and_dlq(req, tc)
        props, stored = broker_properties(req.properties_text, self.config.broker_cluster_name)
        record = MessageRecord(
            topic=topic, queue_id=queue_id if queue_override is None else queue_override, body=req.body,
            flag=req.flag, properties=dict(props.items()), properties_string=stored, sys_flag=sys_flag,
            born_timestamp=req.born_timestamp, born_host=req.born_host, store_host=self.config.store_host,
            reconsume_times=req.reconsume_times or 0)
        half = parse_boolean(props.get(TRAN_MSG))
        if half and self.config.reject_transaction_message:
            raise NoPermissionError(f"the broker[{self.config.broker_ip1}] sending transaction message is forbidden")
        return record, queue_id, half

    def send_message(self, req: SendMessageRequest) -> SendResult:
        if req.batch:
            return self.send_batch(req)
        record, queue_id, half = self.build_message(req)
        put = self.prepare_message(record) if half else self.put_message(record)
        return self.send_result(record, queue_id, put)

    def send_result(self, record: MessageRecord, queue_id: int, put: Put) -> SendResult:
        """The result of a put of :meth:`build_message`'s record (raises for a failed put)."""
        code = raise_for_put(put.result, self.disk_util, self.max_message_size)
        ar = put.append_result
        return SendResult(_SEND_STATUS[code], code, record.properties.get(UNIQ_KEY), ar.msg_id, queue_id,
                          ar.logics_offset, self.config.region_id, self.config.trace_on,
                          stored_topic=put.record.topic, stored_queue_id=put.record.queue_id,
                          commit_log_offsets=ar.record_offsets or (ar.wrote_offset,), put=put)

    # -- SEND_BATCH_MESSAGE ------------------------------------------------------------------
    def send_batch(self, req: SendMessageRequest) -> SendResult:
        """``asyncSendBatchMessage``: no retry/DLQ or transaction handling; the store re-encodes
        every entry (``SendMessageProcessor.asyncSendBatchMessage``) and refuses a batch with a delay level or a transaction type."""
        batch, queue_id, uniq = self.build_batch(req)
        return self.batch_result(req, queue_id, uniq, self.put_messages(batch))

    def build_batch(self, req: SendMessageRequest) -> tuple[MessageRecord, int, list]:
        """(the batch record to store, queue id, the entries' UNIQ_KEYs); raises for a refused batch."""
        tc = self.msg_check(req)
        queue_id = req.queue_id if req.queue_id >= 0 else self.random_queue_id(tc.write_queue_nums)
        sys_flag = req.sys_flag | (MULTI_TAGS_FLAG if tc.topic_filter_type == "MULTI_TAG" else 0)
        props = request_properties(req.properties_text, self.config.broker_cluster_name)
        batch = MessageRecord(topic=req.topic, queue_id=queue_id, body=req.body, flag=req.flag,
                              properties=props, sys_flag=sys_flag, born_timestamp=req.born_timestamp,
                              born_host=req.born_host, store_host=self.config.store_host,
                              reconsume_times=req.reconsume_times or 0)
        try:
            uniq = [e.properties.get(UNIQ_KEY) for e in iter_batch(req.body, with_spans=False)]
        except BrokerError:
            raise
        except Exception as e:  # a malformed batch body
            raise MessageIllegalResponseError(f"the batch body is malformed: {e}") from None
        return batch, queue_id, uniq

    def batch_result(self, req: SendMessageRequest, queue_id: int, uniq: list, put: Put) -> SendResult:
        code = raise_for_put(put.result, self.disk_util, self.max_message_size)
        ar = put.append_result
        msg_id = ",".join(u for u in uniq if u) or None
        return SendResult(_SEND_STATUS[code], code, msg_id, ar.msg_id, queue_id, ar.logics_offset,
                          self.config.region_id, self.config.trace_on, stored_topic=req.topic, stored_queue_id=queue_id,
                          commit_log_offsets=ar.record_offsets or (ar.wrote_offset,), put=put)
