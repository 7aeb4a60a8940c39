"""Client settings shared by producers and consumers (``client/ClientConfig.java``) and the client id.

The client id names one :class:`~pymq_ref.client.instance.MQClientInstance` to brokers:
``clientIP@instanceName`` (``ClientConfig#buildMQClientId``). Producers and clustering consumers
replace the instance name ``DEFAULT`` by ``<pid>#<nanotime>`` when they start (4.9.x), so each gets
its own instance unless the user names one. Pure values; the IP lookup is the only I/O.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, field, replace

DEFAULT_NAMESRV = "127.0.0.1:9876"
DEFAULT_INSTANCE_NAME = "DEFAULT"


def local_address() -> str:
    """``RemotingUtil.getLocalAddress`` in spirit: a non-loopback IPv4 of this host if one is
    configured, else 127.0.0.1 (no packet is sent: a UDP socket is only pointed at a documentation address)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))
            ip = s.getsockname()[0]
            if ip and not ip.startswith("0."):
                return ip
    except OSError:
        pass
    return "127.0.0.1"


@dataclass
class ClientConfig:
    namesrv_addr: str = DEFAULT_NAMESRV  # ";"-separated list, as in Java
    client_ip: str = field(default_factory=local_address)
    instance_name: str = DEFAULT_INSTANCE_NAME
    unit_name: str | None = None
    poll_name_server_interval: float = 30.0  # s
    heartbeat_broker_interval: float = 30.0  # s
    persist_consumer_offset_interval: float = 5.0  # s
    rebalance_interval: float = 20.0  # s (rocketmq.client.rebalance.waitInterval)
    mq_client_api_timeout: float = 3.0  # s
    vip_channel_enabled: bool = False

    def namesrv_list(self) -> list[str]:
        return [a.strip() for a in self.namesrv_addr.split(";") if a.strip()]

    def build_client_id(self) -> str:
        cid = f"{self.client_ip}@{self.instance_name}"
        if self.unit_name:
            cid += f"@{self.unit_name}"
        return cid

    def change_instance_name_to_pid(self) -> None:
        """``changeInstanceNameToPID``: ``DEFAULT`` becomes ``<pid>#<nanotime>`` (4.9.x)."""
        if self.instance_name == DEFAULT_INSTANCE_NAME:
            self.instance_name = f"{os.getpid()}#{time.monotonic_ns()}"

    def copy(self) -> "ClientConfig":
        return replace(self)
