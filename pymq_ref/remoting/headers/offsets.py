"""Headers of queue and consumer offsets: QUERY/UPDATE_CONSUMER_OFFSET, GET_MAX/MIN_OFFSET, GET_EARLIEST_MSG_STORETIME, SEARCH_OFFSET_BY_TIMESTAMP.

Declared from ``common/src/main/java/org/apache/rocketmq/common/protocol/header/`` (4.9.4): Java field
names, types, ``@CFNotNull`` and initial values, in declaration order. Data only; see
:mod:`pymq_ref.remoting.header` for what the declarations drive.
"""

from __future__ import annotations

from ..header import CommandHeader, field, INTEGER, LONG, STRING


class QueryConsumerOffsetRequestHeader(CommandHeader):
    """QUERY_CONSUMER_OFFSET (14): the committed offset of a group on a queue."""

    FIELDS = (
        field("consumerGroup", STRING, required=True),
        field("topic", STRING, required=True),
        field("queueId", INTEGER, required=True),
    )


class QueryConsumerOffsetResponseHeader(CommandHeader):
    """The committed offset."""

    FIELDS = (
        field("offset", LONG, required=True),
    )


class UpdateConsumerOffsetRequestHeader(CommandHeader):
    """UPDATE_CONSUMER_OFFSET (15): commit a group's offset on a queue."""

    FIELDS = (
        field("consumerGroup", STRING, required=True),
        field("topic", STRING, required=True),
        field("queueId", INTEGER, required=True),
        field("commitOffset", LONG, required=True),
    )


class UpdateConsumerOffsetResponseHeader(CommandHeader):
    """The answer to UPDATE_CONSUMER_OFFSET (no fields)."""

    FIELDS = ()


class GetMaxOffsetRequestHeader(CommandHeader):
    """GET_MAX_OFFSET (30): the queue's max offset."""

    FIELDS = (
        field("topic", STRING, required=True),
        field("queueId", INTEGER, required=True),
    )


class GetMaxOffsetResponseHeader(CommandHeader):
    """The queue's max offset (the next offset to be written)."""

    FIELDS = (
        field("offset", LONG, required=True),
    )


class GetMinOffsetRequestHeader(CommandHeader):
    """GET_MIN_OFFSET (31): the queue's min offset."""

    FIELDS = (
        field("topic", STRING, required=True),
        field("queueId", INTEGER, required=True),
    )


class GetMinOffsetResponseHeader(CommandHeader):
    """The queue's min offset."""

    FIELDS = (
        field("offset", LONG, required=True),
    )


class GetEarliestMsgStoretimeRequestHeader(CommandHeader):
    """GET_EARLIEST_MSG_STORETIME (32): the store time of a queue's first message."""

    FIELDS = (
        field("topic", STRING, required=True),
        field("queueId", INTEGER, required=True),
    )


class GetEarliestMsgStoretimeResponseHeader(CommandHeader):
    """The store time, ms."""

    FIELDS = (
        field("timestamp", LONG, required=True),
    )


class SearchOffsetRequestHeader(CommandHeader):
    """SEARCH_OFFSET_BY_TIMESTAMP (29): the queue offset of the first message stored at or after a time."""

    FIELDS = (
        field("topic", STRING, required=True),
        field("queueId", INTEGER, required=True),
        field("timestamp", LONG, required=True),
    )


class SearchOffsetResponseHeader(CommandHeader):
    """The queue offset found."""

    FIELDS = (
        field("offset", LONG, required=True),
    )
