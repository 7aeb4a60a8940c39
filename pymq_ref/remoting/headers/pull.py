"""Headers of reading: PULL_MESSAGE (a ``FastCodesHeader`` both ways), QUERY_MESSAGE, VIEW_MESSAGE_BY_ID, QUERY_CONSUME_QUEUE.

Declared from ``common/src/main/java/org/apache/rocketmq/common/protocol/header/`` (4.9.4): Java field
names, types, ``@CFNotNull`` and initial values, in declaration order. Data only; see
:mod:`pymq_ref.remoting.header` for what the declarations drive.
"""

from __future__ import annotations

from ..header import CommandHeader, field, INT, INTEGER, LONG, LONG_PRIMITIVE, STRING


class PullMessageRequestHeader(CommandHeader):
    """PULL_MESSAGE (11): read a queue from an offset, possibly holding the request (long polling)."""

    FAST = True
    FIELDS = (
        field("consumerGroup", STRING, required=True),
        field("topic", STRING, required=True),
        field("queueId", INTEGER, required=True),
        field("queueOffset", LONG, required=True),
        field("maxMsgNums", INTEGER, required=True),
        field("sysFlag", INTEGER, required=True),
        field("commitOffset", LONG, required=True),
        field("suspendTimeoutMillis", LONG, required=True),
        field("subscription", STRING),
        field("subVersion", LONG, required=True),
        field("expressionType", STRING),
    )


class PullMessageResponseHeader(CommandHeader):
    """The answer to a pull: where to continue, the queue's bounds, and which broker to pull from next."""

    FAST = True
    FIELDS = (
        field("suggestWhichBrokerId", LONG, required=True),
        field("nextBeginOffset", LONG, required=True),
        field("minOffset", LONG, required=True),
        field("maxOffset", LONG, required=True),
    )


class QueryMessageRequestHeader(CommandHeader):
    """QUERY_MESSAGE (12): messages by key (or UNIQ_KEY with ``_UNIQUE_KEY_QUERY``) in a time window."""

    FIELDS = (
        field("topic", STRING, required=True),
        field("key", STRING, required=True),
        field("maxNum", INTEGER, required=True),
        field("beginTimestamp", LONG, required=True),
        field("endTimestamp", LONG, required=True),
    )


class QueryMessageResponseHeader(CommandHeader):
    """The answer to QUERY_MESSAGE: how far the index files reach."""

    FIELDS = (
        field("indexLastUpdateTimestamp", LONG, required=True),
        field("indexLastUpdatePhyoffset", LONG, required=True),
    )


class ViewMessageRequestHeader(CommandHeader):
    """VIEW_MESSAGE_BY_ID (33): one message by CommitLog offset."""

    FIELDS = (
        field("offset", LONG, required=True),
    )


class ViewMessageResponseHeader(CommandHeader):
    """The answer to VIEW_MESSAGE_BY_ID (no fields; the body is the stored record)."""

    FIELDS = ()


class QueryConsumeQueueRequestHeader(CommandHeader):
    """QUERY_CONSUME_QUEUE (321): read raw consume-queue units (admin)."""

    FIELDS = (
        field("topic", STRING),
        field("queueId", INT),
        field("index", LONG_PRIMITIVE),
        field("count", INT),
        field("consumerGroup", STRING),
    )
