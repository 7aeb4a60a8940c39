"""HEART_BEAT's body and its parts: ``HeartbeatData``, ``ProducerData``, ``ConsumerData``,
``SubscriptionData`` (also used by CHECK_CLIENT_CONFIG and consumer admin bodies).

Sources (4.9.4): ``common/src/main/java/org/apache/rocketmq/common/protocol/heartbeat/``.
Enums (``ConsumeType``, ``MessageModel``, ``ConsumeFromWhere``) travel by name and are kept as
strings here. Data only; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CONSUME_ACTIVELY = "CONSUME_ACTIVELY"  # pull consumers
CONSUME_PASSIVELY = "CONSUME_PASSIVELY"  # push consumers
CLUSTERING = "CLUSTERING"
BROADCASTING = "BROADCASTING"
EXPRESSION_TAG = "TAG"
EXPRESSION_SQL92 = "SQL92"
SUB_ALL = "*"


@dataclass
class SubscriptionData:
    """One subscription: topic, expression, the tags and their Java hash codes, version, type."""

    class_filter_mode: bool = False
    topic: str | None = None
    sub_string: str | None = None
    tags_set: list[str] = field(default_factory=list)
    code_set: list[int] = field(default_factory=list)
    sub_version: int = 0
    expression_type: str | None = EXPRESSION_TAG


@dataclass
class ProducerData:
    group_name: str | None = None


@dataclass
class ConsumerData:
    """A consumer group as one client sees it: how it consumes and what it subscribes to."""

    group_name: str | None = None
    consume_type: str | None = None
    message_model: str | None = None
    consume_from_where: str | None = None
    subscription_data_set: list[SubscriptionData] = field(default_factory=list)
    unit_mode: bool = False


@dataclass
class HeartbeatData:
    """HEART_BEAT's body: who the client is and its producer and consumer groups."""

    FASTJSON_NAMES = {"client_id": "clientID"}

    client_id: str | None = None
    producer_data_set: list[ProducerData] = field(default_factory=list)
    consumer_data_set: list[ConsumerData] = field(default_factory=list)
