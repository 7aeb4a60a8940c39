"""A loopback cluster: one name server and N pymq-ref brokers on 127.0.0.1, for tests, benchmarks
and the chapters on load balancing and fault tolerance.

Brokers are ``broker-a``, ``broker-b``, … of one cluster, each with its own store under
``base_dir``. They run in this process, on the caller's event loop (``processes=False``, fast to
start), or as ``pymq broker`` subprocesses (``processes=True``) so that :meth:`kill_broker` is a real
SIGKILL. Either way :meth:`stop_broker` is a clean stop (the broker unregisters) and
:meth:`start_broker` brings a broker back on its store and port.

Legal call order: ``await start()`` … ``stop_broker`` / ``kill_broker`` / ``start_broker`` …
``await stop()`` (idempotent; stops whatever still runs). Also ``async with``.
The client never imports this module (``pymq_ref.client`` knows only the wire).
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from dataclasses import dataclass, field

from pymq_ref.broker.server.config import parse_broker_conf
from pymq_ref.broker.server.controller import BrokerController
from pymq_ref.namesrv.server import NamesrvController
from pymq_ref.tools.ports import free_port

#: settings that keep loopback stores small (1 MiB CommitLog files, 300-unit ConsumeQueue files)
SMALL_STORE = {"mappedFileSizeCommitLog": str(1024 * 1024), "mappedFileSizeConsumeQueue": str(300 * 20),
               "maxHashSlotNum": "1024", "maxIndexNum": "4096"}




def free_broker_port() -> int:
    """A listenPort whose VIP (−2) and HA (+1) neighbours are free too."""
    for _ in range(100):
        port = free_port()
        ok = True
        for p in (port - 2, port + 1):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    ok = False
        if ok and port > 2:
            return port
    raise OSError("no free broker port triple found")


@dataclass
class BrokerSlot:
    name: str
    port: int
    store_dir: str
    controller: BrokerController | None = None
    process: asyncio.subprocess.Process | None = None
    log_path: str | None = None
    settings: dict = field(default_factory=dict)

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        if self.process is not None:
            return self.process.returncode is None
        return self.controller is not None and self.controller.state == "running"


class LoopbackCluster:
    def __init__(self, base_dir: str, brokers: int = 2, *, cluster_name: str = "DefaultCluster",
                 namesrv_port: int = 0, broker_ports: list[int] | None = None, processes: bool = False,
                 settings: dict[str, str] | None = None):
        self.base_dir = os.path.abspath(base_dir)
        self.cluster_name = cluster_name
        self.processes = processes
        self.settings = dict(SMALL_STORE)
        self.settings.update(settings or {})
        self.namesrv_port = namesrv_port
        self.namesrv: NamesrvController | None = None
        ports = broker_ports or [0] * brokers
        self.brokers: dict[str, BrokerSlot] = {}
        for i, port in enumerate(ports):
            name = f"broker-{chr(ord('a') + i)}"
            self.brokers[name] = BrokerSlot(name, port, os.path.join(self.base_dir, name, "store"))

    @property
    def namesrv_addr(self) -> str:
        return self.namesrv.address

    def broker_addr(self, name: str) -> str:
        return self.brokers[name].addr

    async def start(self) -> "LoopbackCluster":
        os.makedirs(self.base_dir, exist_ok=True)
        self.namesrv = NamesrvController("127.0.0.1", self.namesrv_port,
                                         kv_config_path=os.path.join(self.base_dir, "namesrv", "kvConfig.json"))
        await self.namesrv.start()
        try:
            for name in self.brokers:
                await self.start_broker(name)
        except BaseException:
            await self.stop()
            raise
        return self

    def _conf(self, slot: BrokerSlot) -> dict[str, str]:
        conf = dict(self.settings)
        conf.update(slot.settings)
        conf.update(brokerClusterName=self.cluster_name, brokerName=slot.name, brokerId="0",
                    namesrvAddr=self.namesrv_addr, brokerIP1="127.0.0.1", listenPort=str(slot.port),
                    storePathRootDir=slot.store_dir)
        return conf

    async def start_broker(self, name: str) -> None:
        slot = self.brokers[name]
        if slot.running:
            return
        if slot.port == 0:
            slot.port = free_broker_port()
        os.makedirs(slot.store_dir, exist_ok=True)
        conf = self._conf(slot)
        if not self.processes:
            slot.controller = BrokerController(parse_broker_conf("", **conf), host="127.0.0.1")
            await slot.controller.start()
            return
        conf_path = os.path.join(self.base_dir, slot.name, "broker.conf")
        with open(conf_path, "w", encoding="utf-8") as f:
            f.write("".join(f"{k}={v}\n" for k, v in conf.items()))
        slot.log_path = os.path.join(self.base_dir, slot.name, "broker.log")
        log = open(slot.log_path, "ab")
        env = dict(os.environ)
        here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = here + os.pathsep + env.get("PYTHONPATH", "")
        slot.process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "pymq_ref.cli", "broker", "-c", conf_path, stdout=log, stderr=log, env=env)
        log.close()
        await self._wait_registered(slot)

    async def _wait_registered(self, slot: BrokerSlot, timeout: float = 60.0) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            if slot.process is not None and slot.process.returncode is not None:
                raise RuntimeError(f"{slot.name} exited with {slot.process.returncode}; see {slot.log_path}")
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", slot.port)
                writer.close()
                await writer.wait_closed()
                return
            except OSError:
                await asyncio.sleep(0.1)
        raise TimeoutError(f"{slot.name} did not listen on {slot.addr} within {timeout} s; see {slot.log_path}")

    async def stop_broker(self, name: str) -> None:
        """Clean stop: unregister from the name server, close connections, shut the store down."""
        slot = self.brokers[name]
        if slot.process is not None:
            if slot.process.returncode is None:
                slot.process.send_signal(signal.SIGTERM)
                try:
                    await asyncio.wait_for(slot.process.wait(), 30)
                except asyncio.TimeoutError:
                    slot.process.kill()
                    await slot.process.wait()
            slot.process = None
        elif slot.controller is not None:
            await slot.controller.stop()
            slot.controller = None

    async def kill_broker(self, name: str) -> None:
        """A crash: SIGKILL for a subprocess broker; in-process, the same as :meth:`stop_broker` (the name
        server drops a broker when its connection closes either way)."""
        slot = self.brokers[name]
        if slot.process is not None:
            if slot.process.returncode is None:
                slot.process.kill()
                await slot.process.wait()
            slot.process = None
        else:
            await self.stop_broker(name)

    async def create_topic(self, topic: str, queues: int = 4, brokers: list[str] | None = None) -> None:
        """Create ``topic`` with ``queues`` read and write queues on the given (default: every running)
        broker — UPDATE_AND_CREATE_TOPIC on the wire, or the in-process facade when the broker does
        not serve it — and wait until the name server's route lists them all."""
        from pymq_ref.formats.beans import TopicConfig
        from pymq_ref.remoting.codes import RequestCode
        from pymq_ref.remoting.command import RemotingCommand
        from pymq_ref.remoting.headers.admin import CreateTopicRequestHeader
        from pymq_ref.remoting.transport import RemotingClient

        names = brokers or [n for n, s in self.brokers.items() if s.running]
        client = RemotingClient(name="cluster-admin")
        try:
            for name in names:
                slot = self.brokers[name]
                request = RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_TOPIC, CreateTopicRequestHeader(
                    topic=topic, default_topic="TBW102", read_queue_nums=queues, write_queue_nums=queues, perm=6,
                    topic_filter_type="SINGLE_TAG", topic_sys_flag=0, order=False))
                response = await client.invoke(slot.addr, request, 10.0)
                if response.code == 0:
                    continue
                if slot.controller is None:
                    raise RuntimeError(f"{name} refused UPDATE_AND_CREATE_TOPIC: {response.code} {response.remark}")
                slot.controller.broker.topics.update_topic_config(
                    TopicConfig(topic, read_queue_nums=queues, write_queue_nums=queues))
                if slot.controller.registrar is not None:
                    await slot.controller.registrar.register_all()
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 30
            from pymq_ref.client import requests as R
            while True:
                route = R.read_route(await client.invoke(self.namesrv_addr, R.get_route(topic), 5.0))
                listed = {q.broker_name for q in (route.queue_datas if route else None) or ()}
                if set(names) <= listed:
                    return
                if loop.time() > deadline:
                    raise TimeoutError(f"the route of {topic} lists {sorted(listed)}, not {names}")
                await asyncio.sleep(0.05)
        finally:
            await client.close()

    async def stop(self) -> None:
        for name in list(self.brokers):
            try:
                await self.stop_broker(name)
            except Exception:
                pass
        if self.namesrv is not None:
            await self.namesrv.stop()
            self.namesrv = None

    async def __aenter__(self):
        return await self.start()

    async def __aexit__(self, *exc):
        await self.stop()
