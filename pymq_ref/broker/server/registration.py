"""Registration with the name servers (``BrokerController.registerBrokerAll`` and ``BrokerOuterAPI``, 4.9.4).

At start, every 30 s (``registerNameServerPeriod``, first after 10 s) and after a topic change
(oneway), the broker sends REGISTER_BROKER with its whole topic table to every name server of
``namesrvAddr`` (``;``-separated); at stop it sends UNREGISTER_BROKER. A broker without read or
write permission registers every topic with the broker's permission. The body is
``RegisterBrokerBody`` (JSON, or zlib with ``compressedRegister``) and its CRC32 goes in the header.

:func:`register_request` / :func:`unregister_request` are pure; :class:`NameServerRegistrar` sends
them over a :class:`~pymq_ref.remoting.transport.RemotingClient`, one name server failing not
stopping the others (each failure is logged).
"""

from __future__ import annotations

import asyncio
import logging
import zlib

from pymq_ref.broker.config import BrokerConfig
from pymq_ref.broker.constants import is_readable, is_writeable
from pymq_ref.formats.beans import TopicConfig
from pymq_ref.remoting.bodies import RegisterBrokerBody, TopicConfigSerializeWrapper, encode_register_body
from pymq_ref.remoting.codes import RequestCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.headers import RegisterBrokerRequestHeader, UnRegisterBrokerRequestHeader
from pymq_ref.remoting.transport import RemotingClient

log = logging.getLogger("pymq_ref.broker.server")

FIRST_REGISTER_DELAY = 10.0
DEFAULT_PERIOD_MS = 30_000


def register_period_s(settings: dict[str, str]) -> float:
    """``max(10000, min(registerNameServerPeriod, 60000))`` ms, in seconds."""
    period = int(settings.get("registerNameServerPeriod", DEFAULT_PERIOD_MS))
    return max(10_000, min(period, 60_000)) / 1000


def name_servers(settings: dict[str, str]) -> list[str]:
    text = settings.get("namesrvAddr") or ""
    return [a.strip() for a in text.split(";") if a.strip()]


def topic_wrapper(topics, config: BrokerConfig) -> TopicConfigSerializeWrapper:
    """``buildTopicConfigSerializeWrapper`` with the permission rewrite of ``registerBrokerAll``."""
    table = dict(topics.topic_config_table)
    perm = config.broker_permission
    if not is_writeable(perm) or not is_readable(perm):
        table = {name: TopicConfig(name, tc.read_queue_nums, tc.write_queue_nums, perm) for name, tc in table.items()}
    return TopicConfigSerializeWrapper(table, topics.data_version)


def register_request(config: BrokerConfig, ha_server_addr: str, wrapper: TopicConfigSerializeWrapper,
                     compressed: bool = False) -> RemotingCommand:
    body = encode_register_body(RegisterBrokerBody(wrapper, []), compressed)
    header = RegisterBrokerRequestHeader(broker_name=config.broker_name, broker_addr=config.broker_addr,
                                         cluster_name=config.broker_cluster_name, ha_server_addr=ha_server_addr,
                                         broker_id=config.broker_id, compressed=compressed,
                                         body_crc32=zlib.crc32(body) & 0x7FFFFFFF)
    return RemotingCommand.request(RequestCode.REGISTER_BROKER, header, body)


def unregister_request(config: BrokerConfig) -> RemotingCommand:
    return RemotingCommand.request(RequestCode.UNREGISTER_BROKER, UnRegisterBrokerRequestHeader(
        broker_name=config.broker_name, broker_addr=config.broker_addr, cluster_name=config.broker_cluster_name,
        broker_id=config.broker_id))


class NameServerRegistrar:
    """Legal call order: ``await register_all()`` (any number of times, also from ``start_periodic``'s
    task) … ``await stop()`` (cancels the task, sends UNREGISTER_BROKER, closes the connections)."""

    def __init__(self, addresses: list[str], request_factory, unregister: RemotingCommand, *,
                 timeout_s: float = 6.0, period_s: float = 30.0):
        self.addresses = addresses
        self.request_factory = request_factory  # () -> REGISTER_BROKER request
        self.unregister = unregister
        self.timeout_s = timeout_s
        self.period_s = period_s
        self.client = RemotingClient(name="broker->namesrv")
        self.registrations = 0
        self.failures = 0
        self._task: asyncio.Task | None = None
        self._oneway_tasks: set[asyncio.Task] = set()

    async def register_all(self, oneway: bool = False) -> int:
        """Register with every name server; returns how many answered SUCCESS (oneway: were sent)."""
        if not self.addresses:
            return 0
        request = self.request_factory()
        results = await asyncio.gather(*(self._one(a, request, oneway) for a in self.addresses))
        return sum(results)

    async def _one(self, address: str, request: RemotingCommand, oneway: bool) -> bool:
        try:
            if oneway:
                await self.client.invoke_oneway(address, request)
                return True
            response = await self.client.invoke(address, request, self.timeout_s)
        except Exception as e:
            self.failures += 1
            log.warning("registerBroker to name server %s failed: %s", address, e)
            return False
        if response.code != 0:
            self.failures += 1
            log.warning("registerBroker to name server %s refused: %s %s", address, response.code, response.remark)
            return False
        self.registrations += 1
        return True

    def register_soon(self) -> None:
        """A oneway registration after a topic change (``registerBrokerAll(false, true, true)``)."""
        try:
            task = asyncio.get_running_loop().create_task(self.register_all(oneway=True))
        except RuntimeError:
            return
        self._oneway_tasks.add(task)
        task.add_done_callback(self._oneway_tasks.discard)

    def start_periodic(self, first_delay_s: float = FIRST_REGISTER_DELAY) -> None:
        async def loop() -> None:
            await asyncio.sleep(first_delay_s)
            while True:
                try:
                    await self.register_all()
                except Exception:  # never let the schedule die
                    log.exception("registerBrokerAll failed")
                await asyncio.sleep(self.period_s)
        self._task = asyncio.get_running_loop().create_task(loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        for task in list(self._oneway_tasks):
            task.cancel()
        for address in self.addresses:
            try:
                await self.client.invoke(address, self.unregister, 3.0)
            except Exception as e:
                log.info("unregisterBroker from name server %s failed: %s", address, e)
        await self.client.close()
