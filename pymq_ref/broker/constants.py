"""Names RocketMQ 4.9.4 reserves: system topics and groups, prefixes, permission bits, topic
name rules (``TopicValidator``, ``MixAll``, ``PermName``). Pure; no I/O."""

from __future__ import annotations

import re

from pymq_ref.store.config_files import PERM_INHERIT, PERM_PRIORITY, PERM_READ, PERM_WRITE

from .response import IllegalTopicError, NoPermissionError

AUTO_CREATE_TOPIC_KEY_TOPIC = "TBW102"
RMQ_SYS_SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"
RMQ_SYS_BENCHMARK_TOPIC = "BenchmarkTest"
RMQ_SYS_TRANS_HALF_TOPIC = "RMQ_SYS_TRANS_HALF_TOPIC"
RMQ_SYS_TRACE_TOPIC = "RMQ_SYS_TRACE_TOPIC"
RMQ_SYS_TRANS_OP_HALF_TOPIC = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC = "TRANS_CHECK_MAX_TIME_TOPIC"
RMQ_SYS_SELF_TEST_TOPIC = "SELF_TEST_TOPIC"
RMQ_SYS_OFFSET_MOVED_EVENT = "OFFSET_MOVED_EVENT"
SYSTEM_TOPIC_PREFIX = "rmq_sys_"
REPLY_TOPIC_POSTFIX = "REPLY_TOPIC"

RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"
DLQ_GROUP_TOPIC_PREFIX = "%DLQ%"
DLQ_NUMS_PER_GROUP = 1
CID_SYS_RMQ_TRANS = "CID_RMQ_SYS_TRANS"
CID_RMQ_SYS_PREFIX = "CID_RMQ_SYS_"
MASTER_ID = 0
TOPIC_MAX_LENGTH = 127

TOOLS_CONSUMER_GROUP = "TOOLS_CONSUMER"
FILTERSRV_CONSUMER_GROUP = "FILTERSRV_CONSUMER"
SELF_TEST_CONSUMER_GROUP = "SELF_TEST_C_GROUP"
ONS_HTTP_PROXY_GROUP = "CID_ONS-HTTP-PROXY"
CID_ONSAPI_PULL_GROUP = "CID_ONSAPI_PULL"
CID_ONSAPI_PERMISSION_GROUP = "CID_ONSAPI_PERMISSION"
CID_ONSAPI_OWNER_GROUP = "CID_ONSAPI_OWNER"

#: Topics a client may not send to (``TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET``).
NOT_ALLOWED_SEND_TOPICS = frozenset({
    RMQ_SYS_SCHEDULE_TOPIC, RMQ_SYS_TRANS_HALF_TOPIC, RMQ_SYS_TRANS_OP_HALF_TOPIC,
    RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC, RMQ_SYS_SELF_TEST_TOPIC, RMQ_SYS_OFFSET_MOVED_EVENT})

_VALID_TOPIC = re.compile(r"[%|a-zA-Z0-9_-]+")

__all__ = [n for n in dir() if n.isupper()] + [
    "PERM_READ", "PERM_WRITE", "PERM_INHERIT", "PERM_PRIORITY", "is_readable", "is_writeable", "is_inherited",
    "perm_to_string", "retry_topic", "dlq_topic", "is_sys_consumer_group", "validate_topic", "check_send_allowed"]


def is_readable(perm: int) -> bool:
    return bool(perm & PERM_READ)


def is_writeable(perm: int) -> bool:
    return bool(perm & PERM_WRITE)


def is_inherited(perm: int) -> bool:
    return bool(perm & PERM_INHERIT)


def perm_to_string(perm: int) -> str:
    """``PermName.perm2String``: ``R``/``W``/``X`` or ``-`` for each of read, write, inherit."""
    return ("R" if perm & PERM_READ else "-") + ("W" if perm & PERM_WRITE else "-") + ("X" if perm & PERM_INHERIT else "-")


def retry_topic(group: str) -> str:
    return RETRY_GROUP_TOPIC_PREFIX + group


def dlq_topic(group: str) -> str:
    return DLQ_GROUP_TOPIC_PREFIX + group


def is_sys_consumer_group(group: str) -> bool:
    return group.startswith(CID_RMQ_SYS_PREFIX)


def validate_topic(topic: str | None) -> None:
    """``TopicValidator.validateTopic``: raises :class:`IllegalTopicError` (SYSTEM_ERROR, 1)."""
    if topic is None or not topic.strip():
        raise IllegalTopicError("The specified topic is blank.")
    if not _VALID_TOPIC.fullmatch(topic):
        raise IllegalTopicError("The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$")
    if len(topic) > TOPIC_MAX_LENGTH:
        raise IllegalTopicError("The specified topic is longer than topic max length.")


def check_send_allowed(topic: str) -> None:
    """``TopicValidator.isNotAllowedSendTopic``: raises :class:`NoPermissionError` (16)."""
    if topic in NOT_ALLOWED_SEND_TOPICS:
        raise NoPermissionError(f"Sending message to topic[{topic}] is forbidden.")
