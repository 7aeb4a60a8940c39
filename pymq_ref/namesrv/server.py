"""``NamesrvController``: the name server on the wire — a remoting server, the request processor,
the KV store, broker expiry every 10 s and clean-up when a broker's connection closes.

Legal call order::

    ns = NamesrvController(host="127.0.0.1", port=9876, kv_config_path=...)   # nothing opened yet
    await ns.start()      # load kvConfig.json, listen, start the expiry scan (first after 5 s)
    ...                   # serve; ns.address is where
    await ns.stop()       # stop the scan, close every connection, stop listening (idempotent)

``clock`` (ms) is injectable so that expiry can be driven in simulated time (:meth:`scan_now`).
All state lives on the event loop's thread; no locks are needed (RocketMQ uses a read/write lock
because its processors run on a thread pool).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Callable

from pymq_ref.remoting.dispatch import RequestDispatcher
from pymq_ref.remoting.transport import Channel, Limits, RemotingServer

from .config import default_settings
from .kvconfig import KVConfigManager
from .processor import NamesrvProcessor
from .route_info import RouteInfoManager

log = logging.getLogger("pymq_ref.namesrv")

SCAN_FIRST_DELAY = 5.0
SCAN_PERIOD = 10.0


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


class NamesrvController:
    def __init__(self, host: str = "127.0.0.1", port: int = 9876, *, kv_config_path: str | None = None,
                 clock: Callable[[], int] = wall_clock_ms, settings: dict[str, str] | None = None,
                 limits: Limits = Limits(), scan: bool = True):
        self.host, self.port = host, port
        self.settings = default_settings(kv_config_path)
        if settings:
            self.settings.update(settings)
        self.settings["listenPort"] = str(port)
        self.clock = clock
        self.routes = RouteInfoManager()
        self.kv = KVConfigManager(self.settings["kvConfigPath"])
        self.processor = NamesrvProcessor(self.routes, self.kv, clock, self.settings)
        self.dispatcher = RequestDispatcher(default=self._unknown_code)
        self.dispatcher.register_all(self.processor.handlers)
        self.server = RemotingServer(self.dispatcher, host, port, limits=limits, name="namesrv",
                                     on_open=self._on_open)
        self.scan = scan
        self._scan_task: asyncio.Task | None = None
        self.state = "new"

    @staticmethod
    def _unknown_code(request, channel):
        """4.9.4's DefaultRequestProcessor returns null for a code it does not know: no answer."""
        log.warning("namesrv: %s sent request code %s, which the name server does not serve (no answer)",
                    getattr(channel, "remote_address", "?"), request.code)
        return None

    def _on_open(self, channel: Channel) -> None:
        channel.on_close(self._on_close)

    def _on_close(self, channel: Channel) -> None:
        """``BrokerHousekeepingService``: a closed connection takes its broker with it."""
        removed = self.routes.on_channel_destroy(channel.remote_address, channel)
        if removed is not None and removed != channel.remote_address:
            log.info("namesrv: broker %s removed: its connection %s closed", removed, channel.remote_address)

    async def start(self) -> "NamesrvController":
        if self.state != "new":
            raise RuntimeError(f"start() in state {self.state}")
        self.kv.load()
        await self.server.start()
        self.port = self.server.port
        self.settings["listenPort"] = str(self.port)
        if self.scan:
            self._scan_task = asyncio.ensure_future(self._scan_loop())
        self.state = "running"
        log.info("namesrv: listening on %s", self.address)
        return self

    @property
    def address(self) -> str:
        return self.server.address

    async def _scan_loop(self) -> None:
        await asyncio.sleep(SCAN_FIRST_DELAY)
        while True:
            self.scan_now()
            await asyncio.sleep(SCAN_PERIOD)

    def scan_now(self) -> list[str]:
        """One ``scanNotActiveBroker`` round at ``clock()``; returns the addresses removed."""
        expired = self.routes.scan_not_active_broker(self.clock())
        for addr, channel in expired:
            log.info("namesrv: broker %s expired (silent for over 120 s)", addr)
            if isinstance(channel, Channel):
                channel.close()
        return [addr for addr, _ in expired]

    async def stop(self) -> None:
        if self.state != "running":
            self.state = "stopped"
            return
        self.state = "stopped"
        if self._scan_task is not None:
            self._scan_task.cancel()
            await asyncio.gather(self._scan_task, return_exceptions=True)
        await self.server.stop()
