"""What the client hands to users and takes from them: ``Message``, ``MessageExt``, ``SendResult``.

* :class:`Message` — a message to send (``common/message/Message.java``): topic, body, flag and
  a properties map in which tags, keys, the delay level and the UNIQ_KEY live as named entries.
* :class:`MessageExt` — a message as stored and pulled back (``MessageExt``/``MessageClientExt``):
  the record's fields, the body inflated, ``msg_id`` = the UNIQ_KEY when the producer set one,
  else the offset message id (``MessageClientExt#getMsgId``).
* :class:`SendResult` / :class:`SendStatus` — what one send returns (``client/producer/SendResult.java``).
* :func:`validate_message` / :func:`validate_topic` / :func:`validate_group` — ``client/Validators.java``.

Pure values and functions; no I/O.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

from pymq_ref.formats import properties as P
from pymq_ref.formats.message import MessageRecord
from pymq_ref.formats.message_queue import MessageQueue

from .errors import MESSAGE_ILLEGAL, MQClientError

# MessageConst names the client uses beyond those of pymq_ref.formats.properties
RECONSUME_TIME = "RECONSUME_TIME"
MAX_RECONSUME_TIMES = "MAX_RECONSUME_TIMES"
CONSUME_START_TIME = "CONSUME_START_TIME"
MSG_REGION = "MSG_REGION"
TRACE_ON = "TRACE_ON"
CORRELATION_ID = "CORRELATION_ID"
REPLY_TO_CLIENT = "REPLY_TO_CLIENT"
MESSAGE_TTL = "TTL"
MESSAGE_TYPE = "MSG_TYPE"
REPLY_MESSAGE_FLAG = "reply"
ARRIVE_TIME = "ARRIVE_TIME"
TRANSACTION_ID_USER_PROPERTY = "__transactionId__"
DEFAULT_REGION = "DefaultRegion"

RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"
DLQ_GROUP_TOPIC_PREFIX = "%DLQ%"
REPLY_TOPIC_POSTFIX = "REPLY_TOPIC"

MAX_MESSAGE_SIZE = 4 * 1024 * 1024  # DefaultMQProducer#maxMessageSize
TOPIC_MAX_LENGTH = 127
GROUP_MAX_LENGTH = 255
_VALID_NAME = re.compile(r"^[%|a-zA-Z0-9_-]+$")
NOT_ALLOWED_SEND_TOPICS = frozenset({"SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRACE_TOPIC",
                                     "RMQ_SYS_TRANS_OP_HALF_TOPIC", "TRANS_CHECK_MAX_TIME_TOPIC",
                                     "SELF_TEST_TOPIC", "OFFSET_MOVED_EVENT"})


def retry_topic(group: str) -> str:
    return RETRY_GROUP_TOPIC_PREFIX + group


def reply_topic(cluster: str) -> str:
    """``MixAll.getReplyTopic``: the topic a responder sends replies to."""
    return f"{cluster}_{REPLY_TOPIC_POSTFIX}"


@dataclass
class Message:
    """A message to send. Mutable as in Java: sending adds UNIQ_KEY (and, for transactions,
    TRAN_MSG and PGROUP) to ``properties``; a retried send reuses them."""

    topic: str
    body: bytes = b""
    tags: str | None = None
    keys: str | list[str] | None = None
    flag: int = 0
    properties: dict[str, str] = field(default_factory=dict)
    delay_time_level: int = 0
    wait_store_msg_ok: bool = True
    transaction_id: str | None = None

    def __post_init__(self):
        # tags, keys, delay and WAIT are properties in Java; keep them there (one source of truth)
        if isinstance(self.body, str):
            self.body = self.body.encode()
        if self.tags is not None:
            self.properties[P.TAGS] = self.tags
        if self.keys:
            keys = self.keys if isinstance(self.keys, str) else P.KEY_SEPARATOR.join(self.keys)
            self.properties[P.KEYS] = keys
        if self.delay_time_level:
            self.properties[P.DELAY] = str(self.delay_time_level)
        # Java's Message constructors always call setWaitStoreMsgOK, so WAIT is always there
        self.properties.setdefault(P.WAIT, "true" if self.wait_store_msg_ok else "false")
        self.tags = self.keys = None
        self.delay_time_level = 0
        self.wait_store_msg_ok = True

    def get_tags(self) -> str | None:
        return self.properties.get(P.TAGS)

    def get_keys(self) -> str | None:
        return self.properties.get(P.KEYS)

    def get_delay_time_level(self) -> int:
        return int(self.properties.get(P.DELAY, "0") or 0)

    def put_user_property(self, name: str, value: str) -> None:
        self.properties[name] = value

    @property
    def uniq_key(self) -> str | None:
        return self.properties.get(P.UNIQ_KEY)


@dataclass(frozen=True)
class MessageExt:
    """A message pulled from (or pushed by) a broker, with where it is stored."""

    topic: str
    body: bytes
    properties: dict
    queue_id: int
    queue_offset: int
    commit_log_offset: int
    sys_flag: int
    born_timestamp: int
    born_host: str
    store_timestamp: int
    store_host: str
    reconsume_times: int
    offset_msg_id: str
    flag: int = 0
    broker_name: str | None = None
    prepared_transaction_offset: int = 0

    @classmethod
    def from_record(cls, record: MessageRecord, broker_name: str | None = None) -> "MessageExt":
        return cls(record.topic, record.decompressed_body(), dict(record.properties), record.queue_id,
                   record.queue_offset, record.phy_offset, record.sys_flag, record.born_timestamp,
                   str(record.born_host), record.store_timestamp, str(record.store_host), record.reconsume_times,
                   record.msg_id, record.flag, broker_name, record.prepared_transaction_offset)

    @property
    def msg_id(self) -> str:
        """The UNIQ_KEY if the producer set one, else the offset message id (``MessageClientExt``)."""
        return self.properties.get(P.UNIQ_KEY) or self.offset_msg_id

    @property
    def tags(self) -> str | None:
        return self.properties.get(P.TAGS)

    @property
    def keys(self) -> str | None:
        return self.properties.get(P.KEYS)

    @property
    def message_queue(self) -> MessageQueue:
        return MessageQueue(self.topic, self.broker_name, self.queue_id)

    def with_(self, **changes) -> "MessageExt":
        from dataclasses import replace
        return replace(self, **changes)

    def to_json(self) -> dict:
        """One line of ``pymq consume --format jsonl``."""
        return {"topic": self.topic, "broker_name": self.broker_name, "queue_id": self.queue_id,
                "queue_offset": self.queue_offset, "msg_id": self.msg_id, "offset_msg_id": self.offset_msg_id,
                "tags": self.tags, "keys": self.keys, "reconsume_times": self.reconsume_times,
                "born_timestamp": self.born_timestamp, "store_timestamp": self.store_timestamp,
                "properties": dict(self.properties), "body": self.body.decode("utf-8", "replace")}


class SendStatus(str, enum.Enum):
    SEND_OK = "SEND_OK"
    FLUSH_DISK_TIMEOUT = "FLUSH_DISK_TIMEOUT"
    FLUSH_SLAVE_TIMEOUT = "FLUSH_SLAVE_TIMEOUT"
    SLAVE_NOT_AVAILABLE = "SLAVE_NOT_AVAILABLE"


#: response code -> status (``MQClientAPIImpl#processSendResponse``)
SEND_STATUS_BY_CODE = {0: SendStatus.SEND_OK, 10: SendStatus.FLUSH_DISK_TIMEOUT,
                       12: SendStatus.FLUSH_SLAVE_TIMEOUT, 11: SendStatus.SLAVE_NOT_AVAILABLE}


@dataclass(frozen=True)
class SendResult:
    send_status: SendStatus
    msg_id: str | None  # the UNIQ_KEY (batches: the UNIQ_KEYs joined by ",")
    message_queue: MessageQueue
    queue_offset: int
    offset_msg_id: str | None = None
    transaction_id: str | None = None
    region_id: str = DEFAULT_REGION
    trace_on: bool = True
    broker_addr: str | None = None

    def line(self) -> str:
        """One line of ``pymq send``."""
        mq = self.message_queue
        return (f"{self.send_status.value} msgId={self.msg_id} offsetMsgId={self.offset_msg_id} "
                f"broker={mq.broker_name} queue={mq.queue_id} queueOffset={self.queue_offset}")


def create_reply_message(request: "MessageExt", body: bytes) -> Message:
    """``MessageUtil.createReplyMessage``: the reply to a request message, to ``<cluster>_REPLY_TOPIC``."""
    cluster = request.properties.get(P.CLUSTER)
    if cluster is None:
        raise MQClientError("create reply message fail, requestMessage error, property[CLUSTER] is null.", 10007)
    props = {MESSAGE_TYPE: REPLY_MESSAGE_FLAG, CORRELATION_ID: request.properties.get(CORRELATION_ID, ""),
             REPLY_TO_CLIENT: request.properties.get(REPLY_TO_CLIENT, ""), MESSAGE_TTL: request.properties.get(MESSAGE_TTL, "")}
    return Message(reply_topic(cluster), body, properties=props)


_VALID_TOPICS: set[str] = set()  # topics already found valid (a send checks its topic once)


def validate_topic(topic: str | None) -> None:
    if topic in _VALID_TOPICS:
        return
    if not topic or not topic.strip():
        raise MQClientError("The specified topic is blank", MESSAGE_ILLEGAL)
    if len(topic) > TOPIC_MAX_LENGTH:
        raise MQClientError(f"The specified topic is longer than topic max length {TOPIC_MAX_LENGTH}.", MESSAGE_ILLEGAL)
    if not _VALID_NAME.match(topic):
        raise MQClientError(f"The specified topic[{topic}] contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$",
                            MESSAGE_ILLEGAL)
    if len(_VALID_TOPICS) < 10_000:
        _VALID_TOPICS.add(topic)


def validate_group(group: str | None) -> None:
    if not group or not group.strip():
        raise MQClientError("the specified group is blank")
    if len(group) > GROUP_MAX_LENGTH:
        raise MQClientError("the specified group is longer than group max length 255.")
    if not _VALID_NAME.match(group):
        raise MQClientError(f"the specified group[{group}] contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$")


def validate_message(msg: Message, max_message_size: int = MAX_MESSAGE_SIZE) -> None:
    """``Validators.checkMessage``."""
    if msg is None:
        raise MQClientError("the message is null", MESSAGE_ILLEGAL)
    validate_topic(msg.topic)
    if msg.topic in NOT_ALLOWED_SEND_TOPICS:
        raise MQClientError(f"Sending message to topic[{msg.topic}] is forbidden.", MESSAGE_ILLEGAL)
    if msg.body is None:
        raise MQClientError("the message body is null", MESSAGE_ILLEGAL)
    if len(msg.body) == 0:
        raise MQClientError("the message body length is zero", MESSAGE_ILLEGAL)
    if len(msg.body) > max_message_size:
        raise MQClientError(f"the message body size over max value, MAX: {max_message_size}", MESSAGE_ILLEGAL)
