"""``SubscriptionGroupManager``: consumer group configs, persisted in ``config/subscriptionGroup.json``.

4.9.4 rules (``broker/src/main/java/org/apache/rocketmq/broker/subscription/SubscriptionGroupManager.java``): seven
built-in groups; an unknown group is created with the
defaults (``retryQueueNums`` 1, ``retryMaxTimes`` 16 …) when ``autoCreateSubscriptionGroup``
(default true) or when it is a system group (``CID_RMQ_SYS_*``), and the file is rewritten with a
new ``dataVersion``. Per-group ``retryMaxTimes`` is what retry/DLQ routing reads. Must not read
the store.

Call order: construct → ``load()`` → ``find_subscription_group_config`` / ``update`` … (each change persists).
"""

from __future__ import annotations

import threading

from pymq_ref.store.clock import Clock
from pymq_ref.store.config_files import DataVersion, SubscriptionGroupConfig, SubscriptionGroupFile

from .config import BrokerConfig
from .constants import (CID_ONSAPI_OWNER_GROUP, CID_ONSAPI_PERMISSION_GROUP, CID_ONSAPI_PULL_GROUP,
                        FILTERSRV_CONSUMER_GROUP, ONS_HTTP_PROXY_GROUP, SELF_TEST_CONSUMER_GROUP,
                        TOOLS_CONSUMER_GROUP, is_sys_consumer_group)
from .java_maps import chm_order

BUILTIN_GROUPS = (TOOLS_CONSUMER_GROUP, FILTERSRV_CONSUMER_GROUP, SELF_TEST_CONSUMER_GROUP, ONS_HTTP_PROXY_GROUP,
                  CID_ONSAPI_PULL_GROUP, CID_ONSAPI_PERMISSION_GROUP, CID_ONSAPI_OWNER_GROUP)


class SubscriptionGroupManager:
    def __init__(self, root: str, config: BrokerConfig, clock: Clock):
        self.config = config
        self.clock = clock
        self.file = SubscriptionGroupFile(root)
        self.data_version = DataVersion(0, clock.now_ms())
        self.subscription_group_table: dict[str, SubscriptionGroupConfig] = {
            g: SubscriptionGroupConfig(g) for g in BUILTIN_GROUPS}
        self._lock = threading.RLock()

    def load(self) -> bool:
        if not self.file.load():
            return False
        with self._lock:
            self.subscription_group_table.update(self.file.subscription_group_table)
            self.data_version = self.file.data_version
        return True

    def persist(self) -> None:
        with self._lock:
            self.file.data_version = self.data_version
            self.file.subscription_group_table = {
                k: self.subscription_group_table[k] for k in chm_order(self.subscription_group_table, 1024)}
            self.file.persist()

    def find_subscription_group_config(self, group: str) -> SubscriptionGroupConfig | None:
        """The group's config, auto-created (and persisted) when allowed; None otherwise."""
        with self._lock:
            sgc = self.subscription_group_table.get(group)
            if sgc is None and (self.config.auto_create_subscription_group or is_sys_consumer_group(group)):
                sgc = SubscriptionGroupConfig(group)
                self.subscription_group_table[group] = sgc
                self.data_version.next_version(self.clock.now_ms())
                self.persist()
            return sgc

    def update_subscription_group_config(self, sgc: SubscriptionGroupConfig) -> None:
        """Admin create/update (e.g. a per-group ``retryMaxTimes``)."""
        with self._lock:
            self.subscription_group_table[sgc.group_name] = sgc
            self.data_version.next_version(self.clock.now_ms())
            self.persist()

    def delete_subscription_group_config(self, group: str) -> None:
        """Admin delete (DELETE_SUBSCRIPTIONGROUP): the group is forgotten and the file rewritten."""
        with self._lock:
            if self.subscription_group_table.pop(group, None) is not None:
                self.data_version.next_version(self.clock.now_ms())
                self.persist()

    def disable_consume(self, group: str) -> None:
        with self._lock:
            sgc = self.subscription_group_table.get(group)
            if sgc is not None:
                sgc.consume_enable = False
                self.data_version.next_version(self.clock.now_ms())
