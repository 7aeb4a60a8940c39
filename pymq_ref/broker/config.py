"""``BrokerConfig``: the broker's settings with RocketMQ 4.9.4's names and defaults.

Field names are the snake_case of the Java bean properties (``brokerClusterName`` ->
``broker_cluster_name``), so a ``broker.conf`` maps 1:1 (:meth:`BrokerConfig.from_java_properties`).
``listen_port`` is ``NettyServerConfig.listenPort``. Defaults that depend on the machine in Java
(``brokerIP1``, ``brokerName``) are fixed here so that the book writes the same bytes everywhere.
The settings only pymq-ref has are grouped at the end and say so.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from pymq_ref.formats.hosts import Host

from .constants import PERM_READ, PERM_WRITE, RMQ_SYS_TRACE_TOPIC


@dataclass
class BrokerConfig:
    broker_cluster_name: str = "DefaultCluster"
    broker_name: str = "broker-a"  # Java: the local host name
    broker_ip1: str = "127.0.0.1"  # Java: the first site-local address
    listen_port: int = 10911  # NettyServerConfig.listenPort
    broker_id: int = 0
    broker_permission: int = PERM_READ | PERM_WRITE
    default_topic_queue_nums: int = 8
    auto_create_topic_enable: bool = True
    cluster_topic_enable: bool = True
    broker_topic_enable: bool = True
    auto_create_subscription_group: bool = True
    msg_trace_topic_name: str = RMQ_SYS_TRACE_TOPIC
    trace_topic_enable: bool = False
    flush_consumer_offset_interval: int = 5000
    reject_transaction_message: bool = False
    long_polling_enable: bool = True
    short_polling_time_mills: int = 1000
    region_id: str = "DefaultRegion"
    trace_on: bool = True
    slave_read_enable: bool = False
    filter_support_retry: bool = False
    enable_property_filter: bool = False
    transaction_time_out: int = 6000
    transaction_check_max: int = 15
    transaction_check_interval: int = 60_000
    start_accept_send_request_time_stamp: int = 0

    # -- pymq-ref only ----------------------------------------------------------------------
    #: ``StoreUtil.TOTAL_PHYSICAL_MEMORY_SIZE``, which belongs to the store
    #: (``MessageStoreConfig.total_physical_memory_size``: pull batch sizes, the suggest-slave
    #: hint, QUERY_CONSUMER_OFFSET). When set, the broker opens its store with this value instead.
    total_physical_memory_size: int | None = None
    #: Duplicate END_TRANSACTION for an already resolved transaction: True (default) writes no
    #: second real message (only the op message that closes a re-put copy, if missing) and
    #: rejects a contradicting decision; False behaves exactly like 4.9.4 (commits again).
    transaction_end_idempotent: bool = True
    #: Seed of the queue-id picker (``ThreadLocalRandom.nextInt(99999999) % n`` in Java).
    random_seed: int = 0

    @property
    def store_host(self) -> Host:
        """``brokerIP1:listenPort``: STOREHOST of every record and the broker's address."""
        return Host(self.broker_ip1, self.listen_port)

    @property
    def broker_addr(self) -> str:
        return f"{self.broker_ip1}:{self.listen_port}"

    @classmethod
    def from_java_properties(cls, props: dict[str, str], **overrides) -> "BrokerConfig":
        """From broker.conf-style keys (``brokerClusterName``, ``brokerIP1``, ``listenPort`` …); unknown keys ignored."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        kwargs = {}
        for key, raw in props.items():
            name = re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower().replace("i_p1", "ip1")
            if name not in fields:
                continue
            default = cls.__dataclass_fields__[name].default
            if isinstance(default, bool):
                kwargs[name] = str(raw).strip().lower() == "true"
            elif isinstance(default, int):
                kwargs[name] = int(raw)
            else:
                kwargs[name] = raw
        kwargs.update(overrides)
        return cls(**kwargs)
