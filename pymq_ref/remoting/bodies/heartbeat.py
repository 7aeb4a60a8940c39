"""HEART_BEAT's body and its parts: ``HeartbeatData``, ``ProducerData``, ``ConsumerData``,
``SubscriptionData`` (also used by CHECK_CLIENT_CONFIG and consumer admin bodies).

Sources (4.9.4): ``common/src/main/java/org/apache/rocketmq/common/protocol/heartbeat/``,
``common/.../consumer/ConsumeFromWhere.java``. The enums travel by name (readers also take the
ordinal); they are ``str`` enums, so they compare equal to their names. Data only; no I/O.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from .bean import set_of


class ConsumeType(str, enum.Enum):
    CONSUME_ACTIVELY = "CONSUME_ACTIVELY"  # pull consumers
    CONSUME_PASSIVELY = "CONSUME_PASSIVELY"  # push consumers


class MessageModel(str, enum.Enum):
    BROADCASTING = "BROADCASTING"
    CLUSTERING = "CLUSTERING"


class ConsumeFromWhere(str, enum.Enum):
    CONSUME_FROM_LAST_OFFSET = "CONSUME_FROM_LAST_OFFSET"
    CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST = "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST"
    CONSUME_FROM_MIN_OFFSET = "CONSUME_FROM_MIN_OFFSET"
    CONSUME_FROM_MAX_OFFSET = "CONSUME_FROM_MAX_OFFSET"
    CONSUME_FROM_FIRST_OFFSET = "CONSUME_FROM_FIRST_OFFSET"
    CONSUME_FROM_TIMESTAMP = "CONSUME_FROM_TIMESTAMP"


CONSUME_ACTIVELY = ConsumeType.CONSUME_ACTIVELY
CONSUME_PASSIVELY = ConsumeType.CONSUME_PASSIVELY
CLUSTERING = MessageModel.CLUSTERING
BROADCASTING = MessageModel.BROADCASTING
EXPRESSION_TAG = "TAG"
EXPRESSION_SQL92 = "SQL92"
SUB_ALL = "*"


@dataclass
class SubscriptionData:
    """One subscription: topic, expression, the tags and their Java hash codes, version, type."""

    class_filter_mode: bool = False
    topic: str | None = None
    sub_string: str | None = None
    tags_set: set_of(str) = field(default_factory=list)
    code_set: set_of(int) = field(default_factory=list)
    sub_version: int = 0
    expression_type: str | None = EXPRESSION_TAG


@dataclass
class ProducerData:
    group_name: str | None = None


@dataclass
class ConsumerData:
    """A consumer group as one client sees it: how it consumes and what it subscribes to."""

    group_name: str | None = None
    consume_type: ConsumeType | None = None
    message_model: MessageModel | None = None
    consume_from_where: ConsumeFromWhere | None = None
    subscription_data_set: set_of(SubscriptionData) = field(default_factory=list)
    unit_mode: bool = False


@dataclass
class HeartbeatData:
    """HEART_BEAT's body: who the client is and its producer and consumer groups."""

    FASTJSON_NAMES = {"client_id": "clientID"}

    client_id: str | None = None
    producer_data_set: list[ProducerData] = field(default_factory=list)
    consumer_data_set: list[ConsumerData] = field(default_factory=list)
