"""Headers of broker administration: topics, subscription groups, configuration, statistics, ACL.

Declared from ``common/src/main/java/org/apache/rocketmq/common/protocol/header/`` (4.9.4): Java field
names, types, ``@CFNotNull`` and initial values, in declaration order. Data only; see
:mod:`pymq_ref.remoting.header` for what the declarations drive.
"""

from __future__ import annotations

from ..header import LIST, CommandHeader, field, BOOLEAN, BOOLEAN_PRIMITIVE, INTEGER, STRING


class CreateTopicRequestHeader(CommandHeader):
    """UPDATE_AND_CREATE_TOPIC (17): create or change a topic on a broker (admin)."""

    FIELDS = (
        field("topic", STRING, required=True),
        field("defaultTopic", STRING, required=True),
        field("readQueueNums", INTEGER, required=True),
        field("writeQueueNums", INTEGER, required=True),
        field("perm", INTEGER, required=True),
        field("topicFilterType", STRING, required=True),
        field("topicSysFlag", INTEGER),
        field("order", BOOLEAN, required=True, default=False),
    )


class DeleteTopicRequestHeader(CommandHeader):
    """DELETE_TOPIC_IN_BROKER (215): delete a topic from a broker (admin)."""

    FIELDS = (
        field("topic", STRING, required=True),
    )


class DeleteSubscriptionGroupRequestHeader(CommandHeader):
    """DELETE_SUBSCRIPTIONGROUP (207): delete a subscription group (admin)."""

    FIELDS = (
        field("groupName", STRING, required=True),
        field("removeOffset", BOOLEAN_PRIMITIVE),
    )


class GetAllTopicConfigResponseHeader(CommandHeader):
    """The answer to GET_ALL_TOPIC_CONFIG (21) (no fields; the table is the body)."""

    FIELDS = ()


class GetBrokerConfigResponseHeader(CommandHeader):
    """The answer to GET_BROKER_CONFIG (26): the config's data version."""

    FIELDS = (
        field("version", STRING, required=True),
    )


class GetTopicStatsInfoRequestHeader(CommandHeader):
    """GET_TOPIC_STATS_INFO (202): a topic's queue offsets (admin)."""

    FIELDS = (
        field("topic", STRING, required=True),
    )


class GetTopicsByClusterRequestHeader(CommandHeader):
    """GET_TOPICS_BY_CLUSTER (224): the topics of a cluster (name server)."""

    FIELDS = (
        field("cluster", STRING, required=True),
    )


class ViewBrokerStatsDataRequestHeader(CommandHeader):
    """VIEW_BROKER_STATS_DATA (315): one broker statistic."""

    FIELDS = (
        field("statsName", STRING, required=True),
        field("statsKey", STRING, required=True),
    )


class CreateAccessConfigRequestHeader(CommandHeader):
    """UPDATE_AND_CREATE_ACL_CONFIG (50): create or change an ACL account."""

    FIELDS = (
        field("accessKey", STRING, required=True),
        field("secretKey", STRING),
        field("whiteRemoteAddress", STRING),
        field("admin", BOOLEAN_PRIMITIVE),
        field("defaultTopicPerm", STRING),
        field("defaultGroupPerm", STRING),
        field("topicPerms", STRING),
        field("groupPerms", STRING),
    )


class DeleteAccessConfigRequestHeader(CommandHeader):
    """DELETE_ACL_CONFIG (51): delete an ACL account."""

    FIELDS = (
        field("accessKey", STRING, required=True),
    )


class UpdateGlobalWhiteAddrsConfigRequestHeader(CommandHeader):
    """UPDATE_GLOBAL_WHITE_ADDRS_CONFIG (53)."""

    FIELDS = (
        field("globalWhiteAddrs", STRING, required=True),
        field("aclFileFullPath", STRING, required=True),
    )


class GetBrokerAclConfigResponseHeader(CommandHeader):
    """The answer to GET_BROKER_CLUSTER_ACL_INFO (52)."""

    FIELDS = (
        field("version", STRING, required=True),
        field("allAclFileVersion", STRING),
        field("brokerName", STRING, required=True),
        field("brokerAddr", STRING, required=True),
        field("clusterName", STRING, required=True),
    )


class GetBrokerClusterAclConfigResponseHeader(CommandHeader):
    """The answer to GET_BROKER_CLUSTER_ACL_CONFIG (54). Its one field is a ``List``, which 4.9.4
    writes as ``List.toString()`` and cannot read back (the accounts travel in the body)."""

    FIELDS = (
        field("plainAccessConfigs", LIST,
              doc="the ACL accounts as List.toString() (unreadable; the body carries them)"),
    )
