"""Checks shared by the admin processors, worded as 4.9.4 words its refusals
(``common/src/main/java/org/apache/rocketmq/common/topic/TopicValidator.java``, ``validateSlave`` of
``broker/src/main/java/org/apache/rocketmq/broker/processor/AdminBrokerProcessor.java``).

Pure functions of the context's tables; they answer a refusal (a response) or None.
"""

from __future__ import annotations

from pymq_ref.broker.constants import (AUTO_CREATE_TOPIC_KEY_TOPIC, RMQ_SYS_BENCHMARK_TOPIC, RMQ_SYS_OFFSET_MOVED_EVENT,
                                       RMQ_SYS_SCHEDULE_TOPIC, RMQ_SYS_SELF_TEST_TOPIC, RMQ_SYS_TRACE_TOPIC,
                                       RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC, RMQ_SYS_TRANS_HALF_TOPIC,
                                       RMQ_SYS_TRANS_OP_HALF_TOPIC, SYSTEM_TOPIC_PREFIX, validate_topic)
from pymq_ref.broker.response import BrokerError
from pymq_ref.remoting.codes import ResponseCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.dispatch import ProcessorError, java_remark, npe_unboxing
from pymq_ref.store.store_config import BrokerRole

#: the remark of a response created by ``createResponseCommand`` whose code alone was set later
NOT_SET = "not set any response code"

#: ``TopicValidator.SYSTEM_TOPIC_SET`` as 4.9.4 fills it statically (the broker adds its cluster
#: name, broker name and reply topic when it starts: those are in the topic table's ``system_topics``)
STATIC_SYSTEM_TOPICS = frozenset({
    AUTO_CREATE_TOPIC_KEY_TOPIC, RMQ_SYS_SCHEDULE_TOPIC, RMQ_SYS_BENCHMARK_TOPIC, RMQ_SYS_TRANS_HALF_TOPIC,
    RMQ_SYS_TRACE_TOPIC, RMQ_SYS_TRANS_OP_HALF_TOPIC, RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC, RMQ_SYS_SELF_TEST_TOPIC,
    RMQ_SYS_OFFSET_MOVED_EVENT})


def is_slave(ctx) -> bool:
    return ctx.broker.store_config.broker_role is BrokerRole.SLAVE


def slave_refusal() -> RemotingCommand:
    return RemotingCommand.response(ResponseCode.SYSTEM_ERROR, "Can't modify topic or subscription group from slave broker, "
                                    "please execute it from master broker.")


def is_system_topic(ctx, topic: str) -> bool:
    return (topic in STATIC_SYSTEM_TOPICS or topic in ctx.broker.topics.system_topics
            or topic.startswith(SYSTEM_TOPIC_PREFIX))


def topic_refusal(topic: str | None, ctx=None) -> RemotingCommand | None:
    """``validateTopic`` then ``isSystemTopic``: SYSTEM_ERROR with 4.9.4's remark, or None."""
    try:
        validate_topic(topic)
    except BrokerError as e:
        return RemotingCommand.response(ResponseCode.SYSTEM_ERROR, e.remark)
    if ctx is not None and is_system_topic(ctx, topic):
        return RemotingCommand.response(ResponseCode.SYSTEM_ERROR, f"The topic[{topic}] is conflict with system topic.")
    return None


def unboxed(header, attr: str, where: str, boxed: str = "Integer"):
    """A header field a 4.9.4 processor unboxes: its value, or the JDK 17 NullPointerException answer."""
    value = getattr(header, attr)
    if value is None:
        java = next(f.name for f in header.FIELDS if f.attr == attr)
        raise ProcessorError(ResponseCode.SYSTEM_ERROR, java_remark(npe_unboxing(type(header), java, boxed), where))
    return value
