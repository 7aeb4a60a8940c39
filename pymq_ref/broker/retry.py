"""Consumer retry and the dead-letter queue (4.9.4; see the book's reference appendix, §Retry ladder).

* :class:`ConsumerSendMsgBackProcessor` — CONSUMER_SEND_MSG_BACK
  (``broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java``,
  ``asyncConsumerSendMsgBack``): the failed
  message, looked up by CommitLog offset, is re-stored to ``%RETRY%{group}`` with ``DELAY =
  3 + reconsumeTimes`` (so the store parks it in ``SCHEDULE_TOPIC_XXXX`` first) or, past the
  group's ``retryMaxTimes`` (or the request's ``maxReconsumeTimes``, or on ``delayLevel < 0``),
  to ``%DLQ%{group}`` with ``DELAY=0``.
* :func:`retry_delay_level` / :func:`retry_schedule` — the retry ladder as numbers.
* :class:`OrderlyRetryState` — what an *orderly* push consumer does on
  ``SUSPEND_CURRENT_QUEUE_A_MOMENT``: a client behaviour (no broker round trip) modelled here so
  the book can show it; once the max is reached it produces the message to ``%RETRY%{group}``
  with ``RECONSUME_TIME``/``MAX_RECONSUME_TIMES`` and the broker's ``handleRetryAndDLQ``
  (:mod:`pymq_ref.broker.send`) routes it to the DLQ.

Must not deliver messages or run timers: the delay service moves parked messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from pymq_ref.formats.message import MessageRecord
from pymq_ref.formats.properties import (DELAY, ORIGIN_MESSAGE_ID, RETRY_TOPIC, TRAN_MSG, WAIT, JavaHashMap,
                                         encode_properties)
from pymq_ref.store.clock import Clock
from pymq_ref.store.message_store import MessageStore

from .config import BrokerConfig
from .constants import (DLQ_NUMS_PER_GROUP, PERM_READ, PERM_WRITE, dlq_topic, is_writeable, retry_topic)
from .messages import ext_properties
from .response import (BrokerSystemError, MessageNotFoundError, NoPermissionError, ResponseCode,
                       SubscriptionGroupNotExistError)
from .send import SendMessageProcessor, SendMessageRequest
from .store_put import Put, StorePutter
from .subscriptions import SubscriptionGroupManager
from .topics import TopicConfigManager

RECONSUME_TIME = "RECONSUME_TIME"
MAX_RECONSUME_TIMES = "MAX_RECONSUME_TIMES"
TOPIC_SYS_FLAG_UNIT_SUB = 0x2
JAVA_INT_MAX = 2**31 - 1


def retry_delay_level(reconsume_times: int, requested_level: int = 0) -> int:
    """The level the broker asks for: the request's, or ``3 + reconsumeTimes`` when it is 0."""
    return requested_level if requested_level != 0 else 3 + reconsume_times


def retry_schedule(delay_table: Mapping[int, int], max_reconsume_times: int = 16) -> list[tuple[int, int, int]]:
    """``(attempt, level, delay_ms)`` for every send-back before the DLQ (levels clamped to the max)."""
    top = max(delay_table)
    return [(r + 1, min(retry_delay_level(r), top), delay_table[min(retry_delay_level(r), top)])
            for r in range(max_reconsume_times)]


@dataclass
class ConsumerSendMsgBackRequest:
    """``ConsumerSendMsgBackRequestHeader``."""

    offset: int
    group: str
    delay_level: int = 0
    origin_msg_id: str | None = None
    origin_topic: str | None = None
    unit_mode: bool = False
    max_reconsume_times: int | None = None


@dataclass
class SendBackResult:
    code: ResponseCode
    dead_letter: bool = False
    topic: str | None = None  # %RETRY%G or %DLQ%G
    queue_id: int | None = None
    delay_level: int = 0
    put: Put | None = field(default=None, repr=False)  # None when retryQueueNums <= 0

    @property
    def stored_topic(self) -> str | None:
        """Where the record physically went (``SCHEDULE_TOPIC_XXXX`` for a delayed retry)."""
        return self.put.record.topic if self.put is not None else None


class ConsumerSendMsgBackProcessor:
    def __init__(self, config: BrokerConfig, clock: Clock, store: MessageStore, putter: StorePutter,
                 topics: TopicConfigManager, subscriptions: SubscriptionGroupManager, sender: SendMessageProcessor):
        self.config = config
        self.clock = clock
        self.store = store
        self.putter = putter
        self.topics = topics
        self.subscriptions = subscriptions
        self.sender = sender  # for the seeded queue-id picker

    def consumer_send_msg_back(self, req: ConsumerSendMsgBackRequest) -> SendBackResult:
        sgc = self.subscriptions.find_subscription_group_config(req.group)
        if sgc is None:
            raise SubscriptionGroupNotExistError(f"subscription group not exist, {req.group}")
        if not is_writeable(self.config.broker_permission):
            raise NoPermissionError(f"the broker[{self.config.broker_ip1}] sending message is forbidden")
        if sgc.retry_queue_nums <= 0:
            return SendBackResult(ResponseCode.SUCCESS)
        new_topic = retry_topic(req.group)
        queue_id = self.sender.random_queue_id(sgc.retry_queue_nums)
        tc = self.topics.create_topic_in_send_message_back_method(
            new_topic, sgc.retry_queue_nums, PERM_WRITE | PERM_READ, TOPIC_SYS_FLAG_UNIT_SUB if req.unit_mode else 0)
        if not is_writeable(tc.perm):
            raise NoPermissionError(f"the topic[{new_topic}] sending message is forbidden")
        ext = self.store.look_message_by_offset(req.offset) if req.offset >= 0 else None
        if ext is None:
            raise MessageNotFoundError(f"look message by offset failed, {req.offset}")
        props = ext_properties(ext)
        if RETRY_TOPIC not in props:
            props[RETRY_TOPIC] = ext.topic
        props[WAIT] = "false"
        max_times = sgc.retry_max_times if req.max_reconsume_times is None else req.max_reconsume_times
        dead = ext.reconsume_times >= max_times or req.delay_level < 0
        if dead:
            new_topic = dlq_topic(req.group)
            queue_id = self.sender.random_queue_id(DLQ_NUMS_PER_GROUP)
            self.topics.create_topic_in_send_message_back_method(new_topic, DLQ_NUMS_PER_GROUP,
                                                                 PERM_WRITE | PERM_READ, 0)
            level = 0
        else:
            level = retry_delay_level(ext.reconsume_times, req.delay_level)
        props[DELAY] = str(level)
        props[ORIGIN_MESSAGE_ID] = props.get(ORIGIN_MESSAGE_ID) or ext.msg_id
        record = MessageRecord(
            topic=new_topic, body=ext.body, flag=ext.flag, properties=dict(props.items()), queue_id=queue_id,
            sys_flag=ext.sys_flag, born_timestamp=ext.born_timestamp, born_host=ext.born_host,
            store_host=ext.store_host, reconsume_times=ext.reconsume_times + 1)
        put = self.putter.put(record)
        if not put.ok:
            raise BrokerSystemError(put.status.name)
        return SendBackResult(ResponseCode.SUCCESS, dead, new_topic, queue_id, level, put)


# -- client-side behaviours the broker has to understand ---------------------------------------

def client_send_back_message(msg: MessageRecord, group: str, reconsume_times: int, max_reconsume_times: int,
                             orderly: bool, client_map: Mapping[str, str] | None = None,
                             msg_id: str | None = None, producer_group: str = "CLIENT_INNER_PRODUCER") -> SendMessageRequest:
    """The message a push consumer *produces* to ``%RETRY%{group}``.

    Orderly (``ConsumeMessageOrderlyService.sendMessageBack``, max reached): ``RECONSUME_TIME =
    reconsumeTimes``; concurrent fallback (``DefaultMQPushConsumerImpl.sendMessageBack`` after a
    failed RPC): ``reconsumeTimes + 1``. Both: the message's own map (``client_map``, default the
    stored properties) plus ``ORIGIN_MESSAGE_ID``, ``RETRY_TOPIC``, ``MAX_RECONSUME_TIMES``,
    ``DELAY = 3 + reconsumeTimes``, ``TRAN_MSG`` removed. The producer then moves
    ``RECONSUME_TIME``/``MAX_RECONSUME_TIMES`` into the request header and out of the properties.
    """
    props = JavaHashMap((client_map if client_map is not None else ext_properties(msg)).items())
    props[ORIGIN_MESSAGE_ID] = props.get(ORIGIN_MESSAGE_ID) or msg_id or props.get("UNIQ_KEY") or msg.msg_id
    props[RETRY_TOPIC] = msg.topic
    props[RECONSUME_TIME] = str(reconsume_times if orderly else reconsume_times + 1)
    props[MAX_RECONSUME_TIMES] = str(max_reconsume_times)
    props.pop(TRAN_MSG, None)
    props[DELAY] = str(3 + reconsume_times)
    header_reconsume = int(props.pop(RECONSUME_TIME))
    header_max = int(props.pop(MAX_RECONSUME_TIMES))
    return SendMessageRequest(topic=retry_topic(group), body=msg.body, properties=encode_properties(props),
                              producer_group=producer_group, flag=msg.flag, born_timestamp=msg.born_timestamp,
                              reconsume_times=header_reconsume, max_reconsume_times=header_max)


@dataclass
class OrderlyDecision:
    action: str  # "redeliver" (queue suspended, in-memory count + 1) or "send_back" (to %RETRY% → DLQ)
    reconsume_times: int
    suspend_ms: int = 0
    request: SendMessageRequest | None = None


class OrderlyRetryState:
    """An orderly push consumer's handling of ``SUSPEND_CURRENT_QUEUE_A_MOMENT`` (client side).

    No broker-side delay is involved: the message stays in the client, its in-memory reconsume
    count goes up and the queue is re-consumed after ``suspend_current_queue_time_millis``
    (1000 ms) — blocking the queue — until the count reaches ``max_reconsume_times`` (-1 ⇒
    ``Integer.MAX_VALUE``); then the client produces it to ``%RETRY%{group}`` and the broker
    routes it to ``%DLQ%{group}`` (:meth:`SendMessageProcessor.handle_retry_and_dlq`).
    Legal call order: ``on_suspend`` for each failed consumption of the same message.
    """

    def __init__(self, group: str, max_reconsume_times: int = -1, suspend_current_queue_time_millis: int = 1000):
        self.group = group
        self.max_reconsume_times = JAVA_INT_MAX if max_reconsume_times == -1 else max_reconsume_times
        self.suspend_ms = suspend_current_queue_time_millis

    def on_suspend(self, msg: MessageRecord, reconsume_times: int) -> OrderlyDecision:
        if reconsume_times >= self.max_reconsume_times:
            req = client_send_back_message(msg, self.group, reconsume_times, self.max_reconsume_times, orderly=True)
            return OrderlyDecision("send_back", reconsume_times, 0, req)
        return OrderlyDecision("redeliver", reconsume_times + 1, self.suspend_ms)
