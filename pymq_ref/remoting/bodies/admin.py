"""Bodies of broker administration: subscription groups, statistics, ACL versions, producer tables.

Sources (4.9.4): ``common/src/main/java/org/apache/rocketmq/common/protocol/body/``. Data only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pymq_ref.formats.beans import DataVersion, SubscriptionGroupConfig


@dataclass
class SubscriptionGroupWrapper:
    """GET_ALL_SUBSCRIPTIONGROUP_CONFIG: every group config and the table's data version."""

    subscription_group_table: dict[str, SubscriptionGroupConfig] = field(
        default_factory=dict, metadata={"java": ("ConcurrentHashMap", 1024)})
    data_version: DataVersion = field(default_factory=DataVersion)


@dataclass
class BrokerStatsItem:
    sum: int = 0
    tps: float = 0.0
    avgpt: float = 0.0


@dataclass
class BrokerStatsData:
    """VIEW_BROKER_STATS_DATA: one statistic over the last minute, hour and day."""

    stats_minute: BrokerStatsItem | None = None
    stats_hour: BrokerStatsItem | None = None
    stats_day: BrokerStatsItem | None = None


@dataclass
class ClusterAclVersionInfo:
    broker_name: str | None = None
    broker_addr: str | None = None
    acl_config_data_version: DataVersion | None = None
    all_acl_config_data_version: dict[str, DataVersion] | None = None
    cluster_name: str | None = None


@dataclass
class ProducerInfo:
    FASTJSON_NAMES = {"remote_ip": "remoteIP"}

    client_id: str | None = None
    remote_ip: str | None = None
    language: str | None = None
    version: int = 0
    last_update_timestamp: int = 0


@dataclass
class ProducerTableInfo:
    data: dict[str, list[ProducerInfo]] | None = None


@dataclass
class PlainAccessConfig:
    """One ACL account (``common/.../PlainAccessConfig.java``)."""

    access_key: str | None = None
    secret_key: str | None = None
    white_remote_address: str | None = None
    admin: bool = False
    default_topic_perm: str | None = None
    default_group_perm: str | None = None
    topic_perms: list[str] | None = None
    group_perms: list[str] | None = None


@dataclass
class GetBrokerClusterAclConfigResponseBody:
    """GET_BROKER_CLUSTER_ACL_CONFIG's body: the global white list and every account."""

    global_white_addrs: list[str] | None = None
    plain_access_configs: list[PlainAccessConfig] | None = None
