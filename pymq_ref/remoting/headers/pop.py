"""5.x headers of POP consumption: POP_MESSAGE (200050), ACK_MESSAGE (200051),
CHANGE_MESSAGE_INVISIBLETIME (200053).

Declared from ``remoting/src/main/java/org/apache/rocketmq/remoting/protocol/header/`` at tag
``rocketmq-all-5.1.4`` (Java field names, types, ``@CFNotNull``, initial values, declaration order).
The fields 5.x inherits from ``RpcRequestHeader`` (``namespace``, ``namespaced``, ``brokerName``,
``oneway``) are optional and not declared. Not part of the 4.9.4 set :data:`ALL_HEADERS`; see
:data:`HEADERS_5X`. Data only.
"""

from __future__ import annotations

from ..header import BOOLEAN, CommandHeader, INT, INTEGER, LONG, LONG_PRIMITIVE, STRING, field

PACKAGE_5X = "org.apache.rocketmq.remoting.protocol.header"


class PopMessageRequestHeader(CommandHeader):
    """POP_MESSAGE (200050): hand out up to ``maxMsgNums`` messages, invisible for ``invisibleTime`` ms."""

    JAVA_PACKAGE = PACKAGE_5X
    FIELDS = (
        field("consumerGroup", STRING, required=True),
        field("topic", STRING, required=True),
        field("queueId", INT, required=True, doc="the queue to pop from, -1 for all readable queues"),
        field("maxMsgNums", INT, required=True),
        field("invisibleTime", LONG_PRIMITIVE, required=True, doc="ms the popped messages stay invisible"),
        field("pollTime", LONG_PRIMITIVE, required=True, doc="ms the broker may hold the request (long polling)"),
        field("bornTime", LONG_PRIMITIVE, required=True, doc="the client's clock when it sent the request"),
        field("initMode", INT, required=True, doc="ConsumeInitMode: 0 MIN, 1 MAX, where a new group starts"),
        field("expType", STRING),
        field("exp", STRING),
        field("order", BOOLEAN, default=False, doc="orderly POP (one queue, revive queue 999)"),
        field("attemptId", STRING),
    )


class PopMessageResponseHeader(CommandHeader):
    """What a POP found: its pop time, the revive queue of its checkpoints, and where each queue started."""

    JAVA_PACKAGE = PACKAGE_5X
    FIELDS = (
        field("popTime", LONG_PRIMITIVE, required=True),
        field("invisibleTime", LONG_PRIMITIVE, required=True),
        field("reviveQid", INT, required=True),
        field("restNum", LONG_PRIMITIVE, required=True, doc="messages left behind in the queues looked at"),
        field("startOffsetInfo", STRING, doc="'retry queueId startOffset' per queue read, ';'-separated"),
        field("msgOffsetInfo", STRING, doc="'retry queueId offset,offset…' per queue read, ';'-separated"),
        field("orderCountInfo", STRING),
    )


class AckMessageRequestHeader(CommandHeader):
    """ACK_MESSAGE (200051): one popped message consumed (``extraInfo`` names its checkpoint)."""

    JAVA_PACKAGE = PACKAGE_5X
    FIELDS = (
        field("consumerGroup", STRING, required=True),
        field("topic", STRING, required=True),
        field("queueId", INTEGER, required=True),
        field("extraInfo", STRING, required=True, doc="the message's POP_CK: ckOffset popTime invisibleTime "
                                                      "reviveQid topicType brokerName queueId offset"),
        field("offset", LONG, required=True),
    )


class ChangeInvisibleTimeRequestHeader(CommandHeader):
    """CHANGE_MESSAGE_INVISIBLETIME (200053): a popped message invisible for ``invisibleTime`` ms from now."""

    JAVA_PACKAGE = PACKAGE_5X
    FIELDS = (
        field("consumerGroup", STRING, required=True),
        field("topic", STRING, required=True),
        field("queueId", INTEGER, required=True),
        field("extraInfo", STRING, required=True),
        field("offset", LONG, required=True),
        field("invisibleTime", LONG, required=True),
    )


class ChangeInvisibleTimeResponseHeader(CommandHeader):
    """The message's new pop time and invisible time (its new extra info is built from them)."""

    JAVA_PACKAGE = PACKAGE_5X
    FIELDS = (
        field("popTime", LONG_PRIMITIVE, required=True),
        field("invisibleTime", LONG_PRIMITIVE, required=True),
        field("reviveQid", INT, required=True),
    )


HEADERS_5X: dict[str, type[CommandHeader]] = {c.__name__: c for c in (
    PopMessageRequestHeader, PopMessageResponseHeader, AckMessageRequestHeader, ChangeInvisibleTimeRequestHeader,
    ChangeInvisibleTimeResponseHeader)}
__all__ = sorted(HEADERS_5X) + ["HEADERS_5X"]
