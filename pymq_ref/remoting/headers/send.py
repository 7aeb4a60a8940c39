"""Headers of producing: SEND_MESSAGE (V1 and V2 keys), send responses, replies, CONSUMER_SEND_MSG_BACK.

Declared from ``common/src/main/java/org/apache/rocketmq/common/protocol/header/`` (4.9.4): Java field
names, types, ``@CFNotNull`` and initial values, in declaration order. Data only; see
:mod:`pymq_ref.remoting.header` for what the declarations drive.
"""

from __future__ import annotations

from ..header import CommandHeader, field, BOOLEAN_PRIMITIVE, INTEGER, LONG, LONG_PRIMITIVE, STRING


class SendMessageRequestHeader(CommandHeader):
    """SEND_MESSAGE (10) and the reply codes' V1 header: what a producer sends with a message."""

    FIELDS = (
        field("producerGroup", STRING, required=True),
        field("topic", STRING, required=True),
        field("defaultTopic", STRING, required=True),
        field("defaultTopicQueueNums", INTEGER, required=True),
        field("queueId", INTEGER, required=True),
        field("sysFlag", INTEGER, required=True),
        field("bornTimestamp", LONG, required=True),
        field("flag", INTEGER, required=True),
        field("properties", STRING),
        field("reconsumeTimes", INTEGER),
        field("unitMode", BOOLEAN_PRIMITIVE, default=False),
        field("batch", BOOLEAN_PRIMITIVE, default=False),
        field("maxReconsumeTimes", INTEGER),
    )


class SendMessageRequestHeaderV2(CommandHeader):
    """SEND_MESSAGE_V2 (310) / SEND_BATCH_MESSAGE (320): the V1 fields under one-letter keys a…m
    (``sendSmartMsg``, the Java client's default). Same attributes as V1, so either converts to the other."""

    FAST = True
    FIELDS = (
        field("a", STRING, required=True, attr="producer_group"),
        field("b", STRING, required=True, attr="topic"),
        field("c", STRING, required=True, attr="default_topic"),
        field("d", INTEGER, required=True, attr="default_topic_queue_nums"),
        field("e", INTEGER, required=True, attr="queue_id"),
        field("f", INTEGER, required=True, attr="sys_flag"),
        field("g", LONG, required=True, attr="born_timestamp"),
        field("h", INTEGER, required=True, attr="flag"),
        field("i", STRING, attr="properties"),
        field("j", INTEGER, attr="reconsume_times"),
        field("k", BOOLEAN_PRIMITIVE, attr="unit_mode"),
        field("l", INTEGER, attr="max_reconsume_times"),
        field("m", BOOLEAN_PRIMITIVE, attr="batch"),
    )

    def to_v1(self) -> SendMessageRequestHeader:
        """``createSendMessageRequestHeaderV1``: the same values under the full names."""
        return SendMessageRequestHeader(**{f.attr: getattr(self, f.attr) for f in self.FIELDS})

    @classmethod
    def from_v1(cls, v1: SendMessageRequestHeader) -> "SendMessageRequestHeaderV2":
        """``createSendMessageRequestHeaderV2``."""
        return cls(**{f.attr: getattr(v1, f.attr) for f in cls.FIELDS})


class SendMessageResponseHeader(CommandHeader):
    """The answer to a send: the offset msg id, the queue actually used and the queue offset."""

    FAST = True
    FIELDS = (
        field("msgId", STRING, required=True),
        field("queueId", INTEGER, required=True),
        field("queueOffset", LONG, required=True),
        field("transactionId", STRING),
    )


class ReplyMessageRequestHeader(CommandHeader):
    """PUSH_REPLY_MESSAGE_TO_CLIENT (326): a reply message pushed by the broker to the requester."""

    FIELDS = (
        field("producerGroup", STRING, required=True),
        field("topic", STRING, required=True),
        field("defaultTopic", STRING, required=True),
        field("defaultTopicQueueNums", INTEGER, required=True),
        field("queueId", INTEGER, required=True),
        field("sysFlag", INTEGER, required=True),
        field("bornTimestamp", LONG, required=True),
        field("flag", INTEGER, required=True),
        field("properties", STRING),
        field("reconsumeTimes", INTEGER),
        field("unitMode", BOOLEAN_PRIMITIVE, default=False),
        field("bornHost", STRING, required=True),
        field("storeHost", STRING, required=True),
        field("storeTimestamp", LONG_PRIMITIVE, required=True),
    )


class ConsumerSendMsgBackRequestHeader(CommandHeader):
    """CONSUMER_SEND_MSG_BACK (36): a consumer hands back a message it failed to consume."""

    FIELDS = (
        field("offset", LONG, required=True),
        field("group", STRING, required=True),
        field("delayLevel", INTEGER, required=True),
        field("originMsgId", STRING),
        field("originTopic", STRING),
        field("unitMode", BOOLEAN_PRIMITIVE, default=False),
        field("maxReconsumeTimes", INTEGER),
    )
