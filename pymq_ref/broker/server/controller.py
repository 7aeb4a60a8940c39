"""``BrokerController``: the broker on the wire — the :class:`~pymq_ref.broker.broker.Broker` facade
behind a remoting server (``broker/src/main/java/org/apache/rocketmq/broker/BrokerController.java``).

It owns the facade (run on this event loop through a :class:`~.loop_scheduler.LoopScheduler`, the
store's reput and flush threads aside), the listening sockets (``listenPort`` and, as 4.9.4, the
"VIP" port ``listenPort - 2``), a :class:`~pymq_ref.remoting.dispatch.RequestDispatcher` filled
from :data:`pymq_ref.broker.server.PROCESSOR_MODULES`, the client tables, the registration with
every configured name server, and the hooks the processors use to call clients back.

Legal call order::

    bc = BrokerController(settings)   # a BrokerSettings (see .config); nothing opened yet
    await bc.start()     # open + recover the store, start the services, listen, register (then every 30 s)
    ...                  # serve; bc.address is where
    await bc.stop()      # unregister, close the connections, stop listening, shut the store down cleanly

``stop`` is idempotent; a stopped controller is not started again (make a new one on the same store).
Requests with a code no module handles are answered REQUEST_CODE_NOT_SUPPORTED as 4.9.4 does.
"""

from __future__ import annotations

import asyncio
import importlib
import logging

from pymq_ref.broker.broker import Broker
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.dispatch import RequestDispatcher, not_supported
from pymq_ref.remoting.transport import Channel, Limits, RemotingServer

from . import PROCESSOR_MODULES
from .client_manage import channel_closed
from .config import BrokerSettings
from .context import BrokerContext
from .loop_scheduler import LoopScheduler
from .registration import NameServerRegistrar, register_period_s, register_request, topic_wrapper, unregister_request

log = logging.getLogger("pymq_ref.broker.server")

CLIENT_SCAN_PERIOD = 10.0
CHANNEL_EXPIRED_TIMEOUT_MS = 120_000


class BrokerController:
    def __init__(self, settings: BrokerSettings, *, host: str = "127.0.0.1", clock=None,
                 limits: Limits = Limits(), vip_channel: bool = True, register: bool = True):
        self.settings = settings
        self.host = host
        self.limits = limits
        self.vip_channel = vip_channel and settings.broker.listen_port > 2
        self.register = register
        self.scheduler = LoopScheduler(clock)
        self.clock = self.scheduler.clock
        self.broker: Broker | None = None
        self.ctx: BrokerContext | None = None
        self.dispatcher = RequestDispatcher(default=_unknown_code)
        self.servers: list[RemotingServer] = []
        self.registrar: NameServerRegistrar | None = None
        self._tasks: list[asyncio.Task] = []
        self.state = "new"

    # -- lifecycle --------------------------------------------------------------------------
    async def start(self) -> "BrokerController":
        if self.state != "new":
            raise RuntimeError(f"start() in state {self.state}")
        self.state = "starting"
        loop = asyncio.get_running_loop()
        self.scheduler.bind(loop)
        s = self.settings
        try:
            main = RemotingServer(self.dispatcher, self.host, s.broker.listen_port, limits=self.limits,
                                  name="broker", on_open=self._on_open)
            await main.start()
            self.servers.append(main)
            if s.broker.listen_port == 0:  # a free port: the broker's address follows it
                s.with_ports(main.port)
            if self.vip_channel:
                vip = RemotingServer(self.dispatcher, self.host, s.broker.listen_port - 2, limits=self.limits,
                                     name="broker-vip", on_open=self._on_open)
                await vip.start()
                self.servers.append(vip)
            self.broker = Broker(s.store.store_path_root_dir, s.broker, self.scheduler, store_config=s.store,
                                 store_threads=True)
            self.broker.start()
        except BaseException:
            await self._close_servers()
            self.scheduler.close()
            self.state = "stopped"
            raise
        self.ctx = BrokerContext(self.broker, s.broker, self.clock, s.settings, ask_client=self.ask_client,
                                 tell_client=self.tell_client, register_broker_all=self._register_soon)
        for name in PROCESSOR_MODULES:
            self.dispatcher.register_all(importlib.import_module(name).handlers(self.ctx))
        self.broker.topics.on_new_topic = lambda _tc: self._register_soon()
        if self.register and s.namesrv_addr:
            self.registrar = NameServerRegistrar(
                s.namesrv_addr, lambda: register_request(s.broker, f"{s.broker.broker_ip1}:{s.ha_listen_port}",
                                                         topic_wrapper(self.broker.topics, s.broker)),
                unregister_request(s.broker), timeout_s=int(s.settings.get("registerBrokerTimeoutMills", 6000)) / 1000,
                period_s=register_period_s(s.settings))
            await self.registrar.register_all()
            self.registrar.start_periodic()
        self._tasks.append(loop.create_task(self._client_scan()))
        self.state = "running"
        log.info("broker %s listening on %s, store %s", s.broker.broker_name, self.address, s.store.store_path_root_dir)
        return self

    @property
    def address(self) -> str:
        return f"{self.settings.broker.broker_ip1}:{self.settings.broker.listen_port}"

    @property
    def port(self) -> int:
        return self.settings.broker.listen_port

    async def stop(self) -> None:
        if self.state in ("new", "stopped"):
            self.state = "stopped"
            return
        self.state = "stopping"
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.registrar is not None:
            await self.registrar.stop()
        await self._close_servers()
        self.scheduler.close()
        if self.broker is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.broker.shutdown)
        self.state = "stopped"

    async def _close_servers(self) -> None:
        for server in self.servers:
            await server.stop()
        self.servers.clear()

    # -- hooks --------------------------------------------------------------------------------
    def _on_open(self, channel: Channel) -> None:
        channel.on_close(self._on_close)

    def _on_close(self, channel: Channel) -> None:
        if self.ctx is not None and self.state == "running":
            channel_closed(self.ctx, channel)

    def _register_soon(self) -> None:
        if self.registrar is None:
            return
        loop = self.scheduler.loop
        try:
            if asyncio.get_running_loop() is loop:
                self.registrar.register_soon()
                return
        except RuntimeError:
            pass
        loop.call_soon_threadsafe(self.registrar.register_soon)

    async def ask_client(self, channel: Channel, request: RemotingCommand, timeout_s: float = 3.0) -> RemotingCommand:
        return await channel.invoke(request, timeout_s)

    def tell_client(self, channel: Channel, request: RemotingCommand) -> None:
        try:
            channel.invoke_oneway(request)
        except Exception as e:  # the client went away: it rebalances when it comes back
            log.info("oneway %s to %s failed: %s", request.code_name, getattr(channel, "remote_address", "?"), e)

    async def _client_scan(self) -> None:
        """``ClientHousekeepingService``: drop consumers silent for 120 s (every 10 s)."""
        while True:
            await asyncio.sleep(CLIENT_SCAN_PERIOD)
            for group, channel in self.ctx.consumers.scan_not_active(self.clock.now_ms(), CHANNEL_EXPIRED_TIMEOUT_MS):
                log.info("consumer %s of group %s expired (no heartbeat for 120 s)", channel, group)
                channel.close()


def _unknown_code(request: RemotingCommand, channel) -> RemotingCommand:
    """The broker's default processor for a code nobody serves (``AdminBrokerProcessor``'s
    ``getUnknownCmdResponse``): the same answer as the dispatcher's own, but through the processor
    path — so in the request's serialization and, for a oneway request, none at all (the name
    server, with no default processor, answers such a request itself, in JSON, oneway or not)."""
    return not_supported(request)
