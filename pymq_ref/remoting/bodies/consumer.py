"""Bodies of consumer coordination and consumer admin: group members, queue locks, consume
statistics, offsets reset, running info, direct consumption, time spans, connections.

Sources (4.9.4): ``common/src/main/java/org/apache/rocketmq/common/protocol/body/`` and
``common/.../admin/``. Maps keyed by :class:`~pymq_ref.formats.message_queue.MessageQueue` are
written with JSON objects as keys, as fastjson does (and as Java expects to read them back).
Data only; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pymq_ref.formats.message_queue import MessageQueue

from .bean import set_of
from .heartbeat import ConsumeFromWhere, ConsumeType, MessageModel, SubscriptionData


@dataclass
class GetConsumerListByGroupResponseBody:
    consumer_id_list: list[str] = field(default_factory=list)


@dataclass
class LockBatchRequestBody:
    """LOCK_BATCH_MQ: the queues a client wants to consume orderly."""

    consumer_group: str | None = None
    client_id: str | None = None
    mq_set: set_of(MessageQueue) = field(default_factory=list)


@dataclass
class UnlockBatchRequestBody:
    consumer_group: str | None = None
    client_id: str | None = None
    mq_set: set_of(MessageQueue) = field(default_factory=list)


@dataclass
class LockBatchResponseBody:
    FASTJSON_NAMES = {"lock_ok_mq_set": "lockOKMQSet"}

    lock_ok_mq_set: set_of(MessageQueue) = field(default_factory=list)


@dataclass
class CheckClientRequestBody:
    client_id: str | None = None
    group: str | None = None
    subscription_data: SubscriptionData | None = None


@dataclass
class Connection:
    """One client connection of a group (``GET_CONSUMER/PRODUCER_CONNECTION_LIST``)."""

    client_id: str | None = None
    client_addr: str | None = None
    language: str | None = None
    version: int = 0


@dataclass
class ConsumerConnection:
    connection_set: list[Connection] = field(default_factory=list)
    subscription_table: dict[str, SubscriptionData] = field(default_factory=dict,
                                                            metadata={"java": ("ConcurrentHashMap", 16)})
    consume_type: ConsumeType | None = None
    message_model: MessageModel | None = None
    consume_from_where: ConsumeFromWhere | None = None


@dataclass
class ProducerConnection:
    connection_set: list[Connection] = field(default_factory=list)


@dataclass
class OffsetWrapper:
    broker_offset: int = 0
    consumer_offset: int = 0
    last_timestamp: int = 0


@dataclass
class ConsumeStats:
    """GET_CONSUME_STATS: per queue, the broker's max offset and the group's offset."""

    offset_table: dict[MessageQueue, OffsetWrapper] = field(default_factory=dict)
    consume_tps: float = 0.0


@dataclass
class TopicOffset:
    min_offset: int = 0
    max_offset: int = 0
    last_update_timestamp: int = 0


@dataclass
class TopicStatsTable:
    """GET_TOPIC_STATS_INFO: per queue, min/max offsets and the last store time."""

    offset_table: dict[MessageQueue, TopicOffset] = field(default_factory=dict)


@dataclass
class ResetOffsetBody:
    """RESET_CONSUMER_CLIENT_OFFSET / INVOKE_BROKER_TO_RESET_OFFSET: the new offset per queue."""

    offset_table: dict[MessageQueue, int] = field(default_factory=dict)


@dataclass
class GetConsumerStatusBody:
    message_queue_table: dict[MessageQueue, int] = field(default_factory=dict)
    consumer_table: dict[str, dict[MessageQueue, int]] = field(default_factory=dict)


@dataclass
class ConsumeMessageDirectlyResult:
    """CONSUME_MESSAGE_DIRECTLY's answer (``consumeResult`` is CR_SUCCESS, CR_LATER, …)."""

    order: bool = False
    auto_commit: bool = True
    consume_result: str | None = None
    remark: str | None = None
    spent_time_mills: int = 0


@dataclass
class ProcessQueueInfo:
    commit_offset: int = 0
    cached_msg_min_offset: int = 0
    cached_msg_max_offset: int = 0
    cached_msg_count: int = 0
    cached_msg_size_in_mi_b: int = 0
    transaction_msg_min_offset: int = 0
    transaction_msg_max_offset: int = 0
    transaction_msg_count: int = 0
    locked: bool = False
    try_unlock_times: int = 0
    last_lock_timestamp: int = 0
    droped: bool = False
    last_pull_timestamp: int = 0
    last_consume_timestamp: int = 0

    FASTJSON_NAMES = {"cached_msg_size_in_mi_b": "cachedMsgSizeInMiB"}


@dataclass
class ConsumeStatus:
    FASTJSON_NAMES = {"pull_rt": "pullRT", "pull_tps": "pullTPS", "consume_rt": "consumeRT",
                      "consume_ok_tps": "consumeOKTPS", "consume_failed_tps": "consumeFailedTPS"}

    pull_rt: float = 0.0
    pull_tps: float = 0.0
    consume_rt: float = 0.0
    consume_ok_tps: float = 0.0
    consume_failed_tps: float = 0.0
    consume_failed_msgs: int = 0


@dataclass
class ConsumerRunningInfo:
    """GET_CONSUMER_RUNNING_INFO's answer: the client's settings, subscriptions and queues."""

    properties: dict[str, Any] = field(default_factory=dict)
    subscription_set: list[SubscriptionData] = field(default_factory=list)
    mq_table: dict[MessageQueue, ProcessQueueInfo] = field(default_factory=dict, metadata={"java": "TreeMap"})
    status_table: dict[str, ConsumeStatus] = field(default_factory=dict, metadata={"java": "TreeMap"})
    jstack: str | None = None


def _format_date(ms: int) -> str:
    """``UtilAll.formatDate(date, "yyyy-MM-dd#HH:mm:ss:SSS")`` in UTC (Java uses the JVM's time zone)."""
    import datetime
    t = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return t.strftime("%Y-%m-%d#%H:%M:%S:") + f"{ms % 1000:03d}"


@dataclass
class QueueTimeSpan:
    """Per queue: the store times a group has consumed between; its getters also write the three
    times as text (``*Str``), formatted in the writer's time zone — UTC here."""

    FASTJSON_GETTERS = {"minTimeStampStr": lambda s: _format_date(s.min_time_stamp),
                        "maxTimeStampStr": lambda s: _format_date(s.max_time_stamp),
                        "consumeTimeStampStr": lambda s: _format_date(s.consume_time_stamp)}

    message_queue: MessageQueue | None = None
    min_time_stamp: int = 0
    max_time_stamp: int = 0
    consume_time_stamp: int = 0
    delay_time: int = 0


@dataclass
class QueryConsumeTimeSpanBody:
    consume_time_span_set: list[QueueTimeSpan] = field(default_factory=list)


@dataclass
class GroupList:
    group_list: set_of(str) = field(default_factory=list)


@dataclass
class QueryCorrectionOffsetBody:
    correction_offsets: dict[int, int] = field(default_factory=dict)


@dataclass
class ConsumerOffsetSerializeWrapper:
    """GET_ALL_CONSUMER_OFFSET: ``topic@group`` -> queue id -> offset (as consumerOffset.json)."""

    offset_table: dict[str, dict[int, int]] = field(default_factory=dict, metadata={"java": ("ConcurrentHashMap", 512)})


@dataclass
class MessageQueueForC:
    """A queue and an offset, as the C++ client's reset-offset body lists them."""

    topic: str | None = None
    broker_name: str | None = None
    queue_id: int = 0
    offset: int = 0


@dataclass
class ResetOffsetBodyForC:
    """RESET_CONSUMER_CLIENT_OFFSET's body for C++ clients (a list instead of a MessageQueue-keyed map)."""

    offset_table: list[MessageQueueForC] | None = None


@dataclass
class ConsumeByWho:
    consumed_group: set_of(str) = field(default_factory=list)
    not_consumed_group: set_of(str) = field(default_factory=list)
    topic: str | None = None
    queue_id: int = 0
    offset: int = 0


@dataclass
class ConsumeQueueData:
    """One consume-queue unit as QUERY_CONSUME_QUEUE shows it."""

    physic_offset: int = 0
    physic_size: int = 0
    tags_code: int = 0
    extend_data_json: str | None = None
    bit_map: str | None = None
    eval: bool = False
    msg: str | None = None


@dataclass
class QueryConsumeQueueResponseBody:
    subscription_data: SubscriptionData | None = None
    filter_data: str | None = None
    queue_data: list[ConsumeQueueData] | None = None
    max_queue_index: int = 0
    min_queue_index: int = 0


@dataclass
class ConsumeStatsList:
    """GET_BROKER_CONSUME_STATS: per subscription group, its consume stats."""

    consume_stats_list: list[dict[str, list[ConsumeStats]]] = field(default_factory=list)
    broker_addr: str | None = None
    total_diff: int = 0


@dataclass
class OffsetMovedEvent:
    """The body of a message in ``OFFSET_MOVED_EVENT``: a pull asked for an offset the queue no longer has."""

    consumer_group: str | None = None
    message_queue: MessageQueue | None = None
    offset_request: int = 0
    offset_new: int = 0


@dataclass
class RollbackStats:
    broker_name: str | None = None
    queue_id: int = 0
    broker_offset: int = 0
    consumer_offset: int = 0
    timestamp_offset: int = 0
    rollback_offset: int = 0


@dataclass
class KVConfigSerializeWrapper:
    """The name server's ``kvConfig.json``: namespace -> key -> value."""

    config_table: dict[str, dict[str, str]] | None = None


@dataclass
class DelayOffsetSerializeWrapper:
    """The store's ``delayOffset.json``: delay level -> offset in SCHEDULE_TOPIC_XXXX (GET_ALL_DELAY_OFFSET)."""

    offset_table: dict[int, int] = field(default_factory=dict, metadata={"java": ("ConcurrentHashMap", 32)})


@dataclass
class OffsetSerializeWrapper:
    """A broadcasting consumer's local offset file: queue -> offset."""

    offset_table: dict[MessageQueue, int] = field(default_factory=dict, metadata={"java": ("ConcurrentHashMap", 16)})
