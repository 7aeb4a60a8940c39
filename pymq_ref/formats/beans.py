"""Beans RocketMQ keeps in config files *and* sends on the wire: ``DataVersion``, ``TopicConfig``,
``SubscriptionGroupConfig`` (4.9.4 property names and defaults; camelCase in JSON, see
:mod:`pymq_ref.formats.fastjson`), and the permission bits of ``PermName``.

Sources: ``common/src/main/java/org/apache/rocketmq/common/{DataVersion,TopicConfig}.java``,
``common/.../subscription/SubscriptionGroupConfig.java``, ``common/.../constant/PermName.java``.
Data only; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

PERM_PRIORITY = 8
PERM_READ = 4
PERM_WRITE = 2
PERM_INHERIT = 1


@dataclass
class DataVersion:
    counter: int = 0
    timestamp: int = 0

    def next_version(self, now_ms: int) -> None:
        self.counter += 1
        self.timestamp = now_ms


@dataclass
class TopicConfig:
    """``TopicConfig`` (4.9.4): ``perm`` 6 = R|W, ``topicFilterType`` SINGLE_TAG or MULTI_TAG."""

    topic_name: str
    read_queue_nums: int = 16
    write_queue_nums: int = 16
    perm: int = PERM_READ | PERM_WRITE
    topic_filter_type: str = "SINGLE_TAG"
    topic_sys_flag: int = 0
    order: bool = False

    @classmethod
    def from_json(cls, obj: dict) -> "TopicConfig":
        return cls(topic_name=obj.get("topicName"), read_queue_nums=int(obj.get("readQueueNums", 16)),
                   write_queue_nums=int(obj.get("writeQueueNums", 16)), perm=int(obj.get("perm", 6)),
                   topic_filter_type=obj.get("topicFilterType", "SINGLE_TAG"),
                   topic_sys_flag=int(obj.get("topicSysFlag", 0)), order=bool(obj.get("order", False)))


@dataclass
class SubscriptionGroupConfig:
    """``SubscriptionGroupConfig`` (4.9.4 fields and defaults)."""

    group_name: str
    consume_enable: bool = True
    consume_from_min_enable: bool = True
    consume_broadcast_enable: bool = True
    retry_queue_nums: int = 1
    retry_max_times: int = 16
    broker_id: int = 0
    which_broker_when_consume_slowly: int = 1
    notify_consumer_ids_changed_enable: bool = True

    @classmethod
    def from_json(cls, obj: dict) -> "SubscriptionGroupConfig":
        names = {"groupName": "group_name", "consumeEnable": "consume_enable",
                 "consumeFromMinEnable": "consume_from_min_enable",
                 "consumeBroadcastEnable": "consume_broadcast_enable", "retryQueueNums": "retry_queue_nums",
                 "retryMaxTimes": "retry_max_times", "brokerId": "broker_id",
                 "whichBrokerWhenConsumeSlowly": "which_broker_when_consume_slowly",
                 "notifyConsumerIdsChangedEnable": "notify_consumer_ids_changed_enable"}
        return cls(**{py: obj[js] for js, py in names.items() if js in obj})
