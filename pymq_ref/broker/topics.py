"""``TopicConfigManager``: the broker's topic table, persisted in ``config/topics.json``.

What it must do (4.9.4, ``broker/src/main/java/org/apache/rocketmq/broker/topic/TopicConfigManager.java``): start
with the built-in topics, load the file over
them, create topics on demand — from a template topic (``TBW102``) on a send, with fixed
numbers for ``%RETRY%``/``%DLQ%``/``TRANS_CHECK_MAX_TIME_TOPIC`` — and persist the whole table
(tmp/bak protocol, fastjson layout, ``ConcurrentHashMap`` order) with a new ``dataVersion`` on
every change. It must not touch messages: the store needs no topic config to append.

Call order: ``TopicConfigManager(root, config, clock)`` → ``load()`` → lookups/creations … (each
creation persists at once).
"""

from __future__ import annotations

import threading
from typing import Callable

from pymq_ref.store.clock import Clock
from pymq_ref.store.config_files import DataVersion, TopicConfig, TopicsFile

from .config import BrokerConfig
from .constants import (AUTO_CREATE_TOPIC_KEY_TOPIC, PERM_INHERIT, PERM_READ, PERM_WRITE, REPLY_TOPIC_POSTFIX,
                        RMQ_SYS_BENCHMARK_TOPIC, RMQ_SYS_OFFSET_MOVED_EVENT, RMQ_SYS_SCHEDULE_TOPIC,
                        RMQ_SYS_SELF_TEST_TOPIC, RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC, is_inherited)
from .java_maps import chm_order

SCHEDULE_TOPIC_QUEUE_NUM = 18
TOPIC_TABLE_CAPACITY = 1024  # new ConcurrentHashMap<>(1024)


class TopicConfigManager:
    def __init__(self, root: str, config: BrokerConfig, clock: Clock,
                 on_new_topic: Callable[[TopicConfig], None] | None = None):
        self.config = config
        self.clock = clock
        self.file = TopicsFile(root)
        self.on_new_topic = on_new_topic  # registerBrokerAll in RocketMQ (the name-server wave)
        self._lock = threading.RLock()
        self.system_topics: set[str] = set()
        self.topic_config_table: dict[str, TopicConfig] = {}
        self.data_version = DataVersion(0, clock.now_ms())  # new DataVersion(): timestamp = now
        self._add_builtin_topics()

    # -- built-ins ----------------------------------------------------------------------------
    def _builtin(self, name: str, queues: int | None = None, perm: int | None = None) -> None:
        tc = TopicConfig(name)
        if queues is not None:
            tc.read_queue_nums = tc.write_queue_nums = queues
        if perm is not None:
            tc.perm = perm
        self.system_topics.add(name)
        self.topic_config_table[name] = tc

    def _add_builtin_topics(self) -> None:
        c = self.config
        self._builtin(RMQ_SYS_SELF_TEST_TOPIC, 1)
        if c.auto_create_topic_enable:
            self._builtin(AUTO_CREATE_TOPIC_KEY_TOPIC, c.default_topic_queue_nums, PERM_INHERIT | PERM_READ | PERM_WRITE)
        self._builtin(RMQ_SYS_BENCHMARK_TOPIC, 1024)
        self._builtin(c.broker_cluster_name, None,
                      PERM_INHERIT | (PERM_READ | PERM_WRITE if c.cluster_topic_enable else 0))
        self._builtin(c.broker_name, 1, PERM_INHERIT | (PERM_READ | PERM_WRITE if c.broker_topic_enable else 0))
        self._builtin(RMQ_SYS_OFFSET_MOVED_EVENT, 1)
        self._builtin(RMQ_SYS_SCHEDULE_TOPIC, SCHEDULE_TOPIC_QUEUE_NUM)
        if c.trace_topic_enable:
            self._builtin(c.msg_trace_topic_name, 1)
        self._builtin(f"{c.broker_cluster_name}_{REPLY_TOPIC_POSTFIX}", 1)

    # -- persistence --------------------------------------------------------------------------
    def load(self) -> bool:
        """Read ``topics.json`` (or its ``.bak``) over the built-ins; False when neither exists."""
        if not self.file.load():
            return False
        with self._lock:
            self.topic_config_table.update(self.file.topic_config_table)
            self.data_version = self.file.data_version
        return True

    def persist(self) -> None:
        with self._lock:
            self.file.data_version = self.data_version
            self.file.topic_config_table = {k: self.topic_config_table[k]
                                            for k in chm_order(self.topic_config_table, TOPIC_TABLE_CAPACITY)}
            self.file.persist()

    def _created(self, tc: TopicConfig) -> TopicConfig:
        self.topic_config_table[tc.topic_name] = tc
        self.data_version.next_version(self.clock.now_ms())
        self.persist()
        if self.on_new_topic is not None:
            self.on_new_topic(tc)
        return tc

    # -- lookups and creation -----------------------------------------------------------------
    def select_topic_config(self, topic: str) -> TopicConfig | None:
        return self.topic_config_table.get(topic)

    def is_order_topic(self, topic: str) -> bool:
        tc = self.topic_config_table.get(topic)
        return tc is not None and tc.order

    def create_topic_in_send_message_method(self, topic: str, default_topic: str, client_default_topic_queue_nums: int,
                                            topic_sys_flag: int = 0) -> TopicConfig | None:
        """Auto-create ``topic`` from the template ``default_topic`` (normally TBW102) on a send.

        The template must carry PERM_INHERIT; queues = min(client's default, template's write
        queues); perm = template's perm without INHERIT. None when that is impossible.
        """
        with self._lock:
            tc = self.topic_config_table.get(topic)
            if tc is not None:
                return tc
            template = self.topic_config_table.get(default_topic)
            if template is None:
                return None
            if default_topic == AUTO_CREATE_TOPIC_KEY_TOPIC and not self.config.auto_create_topic_enable:
                template.perm = PERM_READ | PERM_WRITE  # 4.9.4 strips INHERIT from a leftover TBW102
            if not is_inherited(template.perm):
                return None
            queues = max(0, min(client_default_topic_queue_nums, template.write_queue_nums))
            tc = TopicConfig(topic, read_queue_nums=queues, write_queue_nums=queues,
                             perm=template.perm & ~PERM_INHERIT, topic_sys_flag=topic_sys_flag,
                             topic_filter_type=template.topic_filter_type)
            return self._created(tc)

    def create_topic_in_send_message_back_method(self, topic: str, client_default_topic_queue_nums: int, perm: int,
                                                 topic_sys_flag: int = 0) -> TopicConfig:
        """Create ``topic`` with exactly these numbers unless it exists (retry, DLQ, half topics)."""
        with self._lock:
            tc = self.topic_config_table.get(topic)
            if tc is not None:
                return tc
            return self._created(TopicConfig(topic, read_queue_nums=client_default_topic_queue_nums,
                                             write_queue_nums=client_default_topic_queue_nums, perm=perm,
                                             topic_sys_flag=topic_sys_flag))

    def create_topic_of_tran_check_max_time(self, client_default_topic_queue_nums: int, perm: int) -> TopicConfig:
        return self.create_topic_in_send_message_back_method(RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC,
                                                             client_default_topic_queue_nums, perm, 0)

    def update_topic_config(self, tc: TopicConfig) -> None:
        """Admin create/update (UPDATE_AND_CREATE_TOPIC)."""
        with self._lock:
            self.topic_config_table[tc.topic_name] = tc
            self.data_version.next_version(self.clock.now_ms())
            self.persist()

    def delete_topic_config(self, topic: str) -> None:
        with self._lock:
            if self.topic_config_table.pop(topic, None) is not None:
                self.data_version.next_version(self.clock.now_ms())
                self.persist()
