"""Headers of client management and admin queries about clients: unregistering, group membership,
broker-to-client requests (NOTIFY_CONSUMER_IDS_CHANGED, GET_CONSUMER_RUNNING_INFO, CONSUME_MESSAGE_DIRECTLY,
RESET_CONSUMER_CLIENT_OFFSET), consumer statistics.

Declared from ``common/src/main/java/org/apache/rocketmq/common/protocol/header/`` (4.9.4): Java field
names, types, ``@CFNotNull`` and initial values, in declaration order. Data only; see
:mod:`pymq_ref.remoting.header` for what the declarations drive.
"""

from __future__ import annotations

from ..header import CommandHeader, field, BOOLEAN_PRIMITIVE, LONG_PRIMITIVE, STRING


class UnregisterClientRequestHeader(CommandHeader):
    """UNREGISTER_CLIENT (35): a client leaving its producer and/or consumer group."""

    FIELDS = (
        field("clientID", STRING, required=True),
        field("producerGroup", STRING),
        field("consumerGroup", STRING),
    )


class UnregisterClientResponseHeader(CommandHeader):
    """The answer to UNREGISTER_CLIENT (no fields)."""

    FIELDS = ()


class GetConsumerListByGroupRequestHeader(CommandHeader):
    """GET_CONSUMER_LIST_BY_GROUP (38): the client ids of a consumer group (for rebalancing)."""

    FIELDS = (
        field("consumerGroup", STRING, required=True),
    )


class GetConsumerListByGroupResponseHeader(CommandHeader):
    """The answer to GET_CONSUMER_LIST_BY_GROUP (no fields; the ids are in the body)."""

    FIELDS = ()


class NotifyConsumerIdsChangedRequestHeader(CommandHeader):
    """NOTIFY_CONSUMER_IDS_CHANGED (40), broker to client: the group's members changed; rebalance now."""

    FIELDS = (
        field("consumerGroup", STRING, required=True),
    )


class GetConsumerRunningInfoRequestHeader(CommandHeader):
    """GET_CONSUMER_RUNNING_INFO (307), broker to client: the client's consumption state."""

    FIELDS = (
        field("consumerGroup", STRING, required=True),
        field("clientId", STRING, required=True),
        field("jstackEnable", BOOLEAN_PRIMITIVE),
    )


class ConsumeMessageDirectlyResultRequestHeader(CommandHeader):
    """CONSUME_MESSAGE_DIRECTLY (309), broker to client: consume this one message now (admin)."""

    FIELDS = (
        field("consumerGroup", STRING, required=True),
        field("clientId", STRING),
        field("msgId", STRING),
        field("brokerName", STRING),
    )


class GetConsumerStatusRequestHeader(CommandHeader):
    """GET_CONSUMER_STATUS_FROM_CLIENT (221) / INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223)."""

    FIELDS = (
        field("topic", STRING, required=True),
        field("group", STRING, required=True),
        field("clientAddr", STRING),
    )


class ResetOffsetRequestHeader(CommandHeader):
    """RESET_CONSUMER_CLIENT_OFFSET (220) / INVOKE_BROKER_TO_RESET_OFFSET (222): move a group's offsets to a time."""

    FIELDS = (
        field("topic", STRING, required=True),
        field("group", STRING, required=True),
        field("timestamp", LONG_PRIMITIVE, required=True),
        field("isForce", BOOLEAN_PRIMITIVE, required=True),
    )


class GetConsumerConnectionListRequestHeader(CommandHeader):
    """GET_CONSUMER_CONNECTION_LIST (203): the connections of a consumer group (admin)."""

    FIELDS = (
        field("consumerGroup", STRING, required=True),
    )


class GetProducerConnectionListRequestHeader(CommandHeader):
    """GET_PRODUCER_CONNECTION_LIST (204): the connections of a producer group (admin)."""

    FIELDS = (
        field("producerGroup", STRING, required=True),
    )


class GetAllProducerInfoRequestHeader(CommandHeader):
    """GET_ALL_PRODUCER_INFO (328) (no fields)."""

    FIELDS = ()


class QueryConsumeTimeSpanRequestHeader(CommandHeader):
    """QUERY_CONSUME_TIME_SPAN (303): per queue, the store times a group has consumed between."""

    FIELDS = (
        field("topic", STRING, required=True),
        field("group", STRING, required=True),
    )


class QueryCorrectionOffsetHeader(CommandHeader):
    """QUERY_CORRECTION_OFFSET (308)."""

    FIELDS = (
        field("filterGroups", STRING),
        field("compareGroup", STRING, required=True),
        field("topic", STRING, required=True),
    )


class QueryTopicConsumeByWhoRequestHeader(CommandHeader):
    """QUERY_TOPIC_CONSUME_BY_WHO (300): the groups consuming a topic."""

    FIELDS = (
        field("topic", STRING, required=True),
    )


class CloneGroupOffsetRequestHeader(CommandHeader):
    """CLONE_GROUP_OFFSET (314): copy one group's offsets to another."""

    FIELDS = (
        field("srcGroup", STRING, required=True),
        field("destGroup", STRING, required=True),
        field("topic", STRING),
        field("offline", BOOLEAN_PRIMITIVE),
    )


class GetConsumeStatsRequestHeader(CommandHeader):
    """GET_CONSUME_STATS (208): a group's offsets against the queues' (consumer progress)."""

    FIELDS = (
        field("consumerGroup", STRING, required=True),
        field("topic", STRING),
    )


class GetConsumeStatsInBrokerHeader(CommandHeader):
    """GET_BROKER_CONSUME_STATS (317)."""

    FIELDS = (
        field("isOrder", BOOLEAN_PRIMITIVE, required=True),
    )
