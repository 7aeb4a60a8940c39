"""Headers of the name server's requests (``common/.../protocol/header/namesrv/``) and the legacy filter server's.

Declared from ``common/src/main/java/org/apache/rocketmq/common/protocol/header/`` (4.9.4): Java field
names, types, ``@CFNotNull`` and initial values, in declaration order. Data only; see
:mod:`pymq_ref.remoting.header` for what the declarations drive.
"""

from __future__ import annotations

from ..header import CommandHeader, field, BOOLEAN, BOOLEAN_PRIMITIVE, INTEGER, LONG, LONG_PRIMITIVE, STRING


class AddWritePermOfBrokerRequestHeader(CommandHeader):
    """ADD_WRITE_PERM_OF_BROKER (327): give a broker's topics write permission back."""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.namesrv"
    FIELDS = (
        field("brokerName", STRING, required=True),
    )


class AddWritePermOfBrokerResponseHeader(CommandHeader):
    """How many topics changed."""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.namesrv"
    FIELDS = (
        field("addTopicCount", INTEGER, required=True),
    )


class DeleteKVConfigRequestHeader(CommandHeader):
    """DELETE_KV_CONFIG (102)."""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.namesrv"
    FIELDS = (
        field("namespace", STRING, required=True),
        field("key", STRING, required=True),
    )


class DeleteTopicFromNamesrvRequestHeader(CommandHeader):
    """DELETE_TOPIC_IN_NAMESRV (216): drop a topic's route (for one cluster, or all)."""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.namesrv"
    FIELDS = (
        field("topic", STRING, required=True),
        field("clusterName", STRING),
    )


class GetKVConfigRequestHeader(CommandHeader):
    """GET_KV_CONFIG (101)."""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.namesrv"
    FIELDS = (
        field("namespace", STRING, required=True),
        field("key", STRING, required=True),
    )


class GetKVConfigResponseHeader(CommandHeader):
    """The value (absent: not found, code 22)."""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.namesrv"
    FIELDS = (
        field("value", STRING),
    )


class GetKVListByNamespaceRequestHeader(CommandHeader):
    """GET_KVLIST_BY_NAMESPACE (219)."""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.namesrv"
    FIELDS = (
        field("namespace", STRING, required=True),
    )


class GetRouteInfoRequestHeader(CommandHeader):
    """GET_ROUTEINFO_BY_TOPIC (105): a topic's route (queues per broker, broker addresses)."""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.namesrv"
    FIELDS = (
        field("topic", STRING, required=True),
        field("acceptStandardJsonOnly", BOOLEAN),
    )


class PutKVConfigRequestHeader(CommandHeader):
    """PUT_KV_CONFIG (100)."""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.namesrv"
    FIELDS = (
        field("namespace", STRING, required=True),
        field("key", STRING, required=True),
        field("value", STRING, required=True),
    )


class QueryDataVersionRequestHeader(CommandHeader):
    """QUERY_DATA_VERSION (322): has the name server the broker's latest topic table?"""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.namesrv"
    FIELDS = (
        field("brokerName", STRING, required=True),
        field("brokerAddr", STRING, required=True),
        field("clusterName", STRING, required=True),
        field("brokerId", LONG, required=True),
    )


class QueryDataVersionResponseHeader(CommandHeader):
    """Whether the broker's data version differs from the stored one."""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.namesrv"
    FIELDS = (
        field("changed", BOOLEAN, required=True),
    )


class RegisterBrokerRequestHeader(CommandHeader):
    """REGISTER_BROKER (103): a broker announces itself and its topics (every 30 s)."""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.namesrv"
    FIELDS = (
        field("brokerName", STRING, required=True),
        field("brokerAddr", STRING, required=True),
        field("clusterName", STRING, required=True),
        field("haServerAddr", STRING, required=True),
        field("brokerId", LONG, required=True),
        field("compressed", BOOLEAN_PRIMITIVE),
        field("bodyCrc32", INTEGER, default=0),
    )


class RegisterBrokerResponseHeader(CommandHeader):
    """For a slave: its master's address and HA address."""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.namesrv"
    FIELDS = (
        field("haServerAddr", STRING),
        field("masterAddr", STRING),
    )


class RegisterOrderTopicRequestHeader(CommandHeader):
    """Declared in 4.9.4 for order-topic registration (no request code uses it)."""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.namesrv"
    FIELDS = (
        field("topic", STRING, required=True),
        field("orderTopicString", STRING, required=True),
    )


class UnRegisterBrokerRequestHeader(CommandHeader):
    """UNREGISTER_BROKER (104): a broker shutting down."""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.namesrv"
    FIELDS = (
        field("brokerName", STRING, required=True),
        field("brokerAddr", STRING, required=True),
        field("clusterName", STRING, required=True),
        field("brokerId", LONG, required=True),
    )


class WipeWritePermOfBrokerRequestHeader(CommandHeader):
    """WIPE_WRITE_PERM_OF_BROKER (205): take write permission from a broker's topics."""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.namesrv"
    FIELDS = (
        field("brokerName", STRING, required=True),
    )


class WipeWritePermOfBrokerResponseHeader(CommandHeader):
    """How many topics changed."""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.namesrv"
    FIELDS = (
        field("wipeTopicCount", INTEGER, required=True),
    )


class RegisterFilterServerRequestHeader(CommandHeader):
    """REGISTER_FILTER_SERVER (301) (legacy filter servers)."""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.filtersrv"
    FIELDS = (
        field("filterServerAddr", STRING, required=True),
    )


class RegisterFilterServerResponseHeader(CommandHeader):
    """The broker a filter server registered with."""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.filtersrv"
    FIELDS = (
        field("brokerName", STRING, required=True),
        field("brokerId", LONG_PRIMITIVE, required=True),
    )


class RegisterMessageFilterClassRequestHeader(CommandHeader):
    """REGISTER_MESSAGE_FILTER_CLASS (302) (legacy filter servers)."""

    JAVA_PACKAGE = "org.apache.rocketmq.common.protocol.header.filtersrv"
    FIELDS = (
        field("consumerGroup", STRING, required=True),
        field("topic", STRING, required=True),
        field("className", STRING, required=True),
        field("classCRC", INTEGER, required=True),
    )
