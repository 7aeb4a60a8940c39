"""``pymq up``: an embedded name server and a broker in one process and one event loop, on
127.0.0.1 — the quickest way to get a RocketMQ-compatible broker a real client can talk to.

Python API (tests, notebooks, other tools)::

    # from async code
    async with run_up("/tmp/store", namesrv_port=0, broker_port=0) as up:
        up.namesrv_addr, up.broker_addr, up.store_dir      # "127.0.0.1:PORT" ...
        up.broker.broker                                   # the in-process Broker facade

    # from sync code: a daemon thread runs the loop
    with UpServer("/tmp/store", namesrv_port=0, broker_port=0) as up:
        ...                                                # point clients at up.namesrv_addr
    # leaving the block stops both cleanly (store shut down, abort file removed)

Port 0 picks free ports (the broker then binds no VIP port). ``conf`` is a broker.conf path (same
names as RocketMQ); ``settings`` (Java names) override it; ``pymq up`` always sets
``namesrvAddr`` to the embedded name server, ``listenPort``, ``brokerIP1`` and ``storePathRootDir``.
The name server's KV config is kept next to the store (``<store>/../namesrv/kvConfig.json``) so
that ``pymq up`` writes nowhere else.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import threading
from dataclasses import dataclass

from pymq_ref.namesrv.server import NamesrvController

from .config import parse_broker_conf
from .controller import BrokerController

DEFAULT_UP_DIR = os.path.join(os.path.expanduser("~"), ".pymq", "up")


def default_store_dir() -> str:
    return os.path.join(DEFAULT_UP_DIR, "store")


@dataclass
class Up:
    namesrv: NamesrvController
    broker: BrokerController
    store_dir: str
    grpc: object = None  # the 5.x gRPC endpoint (pymq_ref.broker.grpc.GrpcServer) with --grpc

    @property
    def namesrv_addr(self) -> str:
        return self.namesrv.address

    @property
    def broker_addr(self) -> str:
        return self.broker.address

    def describe(self) -> str:
        """What ``pymq up`` prints: where everything is and how to point a client at it."""
        b = self.broker.settings.broker
        return "\n".join([
            f"pymq up: name server {self.namesrv_addr}, broker {b.broker_name} ({b.broker_cluster_name}) "
            f"{self.broker_addr}",
            f"  store: {self.store_dir}  ({self.broker.settings.store.flush_disk_type.name})",
            f"  clients: -n {self.namesrv_addr}   or   export NAMESRV_ADDR={self.namesrv_addr}",
            f"  Java: producer.setNamesrvAddr(\"{self.namesrv_addr}\")   mqadmin: mqadmin clusterList -n {self.namesrv_addr}",
        ] + ([f"  5.x gRPC endpoint (apache.rocketmq.v2.MessagingService): {self.grpc.endpoint}  "
              f"— ClientConfiguration(\"{self.grpc.endpoint}\", ...)"] if self.grpc is not None else []) + [
            "  Ctrl-C stops both cleanly",
        ])


async def start_up(store_dir: str | None = None, *, namesrv_port: int = 9876, broker_port: int = 10911,
                   host: str = "127.0.0.1", conf: str | None = None, conf_text: str = "",
                   settings: dict[str, str] | None = None, register: bool = True,
                   grpc: str | None = None, grpc_config=None) -> Up:
    """``grpc="127.0.0.1:8081"`` also serves the 5.x gRPC endpoint on the same broker (and turns the
    5.x timer wheel on unless the settings say otherwise: 5.x's default, needed by delay messages)."""
    store_dir = os.path.abspath(store_dir or default_store_dir())
    if conf is not None:
        with open(conf, encoding="utf-8") as f:
            conf_text = f.read()
    kv_path = os.path.join(os.path.dirname(store_dir), "namesrv", "kvConfig.json")
    ns = NamesrvController(host, namesrv_port, kv_config_path=kv_path)
    await ns.start()
    try:
        overrides = dict(settings or {})
        overrides.update(namesrvAddr=ns.address, listenPort=str(broker_port), brokerIP1=host,
                         storePathRootDir=store_dir)
        parsed = parse_broker_conf(conf_text, **overrides)
        if grpc is not None and "timerWheelEnable" not in parsed.settings:
            parsed.store = dataclasses.replace(parsed.store, timer_wheel_enable=True)
        broker = BrokerController(parsed, host=host, register=register)
        await broker.start()
    except BaseException:
        await ns.stop()
        raise
    up = Up(ns, broker, store_dir)
    if grpc is not None:
        try:
            up.grpc = _start_grpc(broker, grpc, grpc_config, asyncio.get_running_loop())
        except BaseException:
            await stop_up(up)
            raise
    return up


def _start_grpc(broker: BrokerController, address: str, config, loop: asyncio.AbstractEventLoop):
    """The gRPC endpoint on grpcio's threads; every facade call it makes runs on this loop."""
    from pymq_ref.broker.grpc import GrpcServer

    def on_loop(fn):
        async def run():
            return fn()
        return asyncio.run_coroutine_threadsafe(run(), loop).result()
    return GrpcServer(broker.broker, address, config, runner=on_loop).start()


async def stop_up(up: Up) -> None:
    try:
        if up.grpc is not None:  # stopped off the loop: its handlers still need the loop to finish
            await asyncio.get_running_loop().run_in_executor(None, up.grpc.stop)
        await up.broker.stop()
    finally:
        await up.namesrv.stop()


@contextlib.asynccontextmanager
async def run_up(store_dir: str | None = None, **kwargs):
    up = await start_up(store_dir, **kwargs)
    try:
        yield up
    finally:
        await stop_up(up)


class UpServer:
    """``pymq up`` in a daemon thread with its own event loop, for sync callers.

    Legal call order: ``UpServer(...)`` → ``start()`` (returns once both listen and the broker is
    registered; raises what start-up raised) → use :attr:`namesrv_addr` / :attr:`broker_addr` /
    :meth:`call` → ``stop()`` (idempotent). Also a context manager.
    """

    def __init__(self, store_dir: str | None = None, **kwargs):
        self.store_dir = store_dir
        self.kwargs = kwargs
        self.up: Up | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._stop: asyncio.Event | None = None

    def start(self, timeout: float = 60.0) -> "UpServer":
        self._thread = threading.Thread(target=self._run, name="pymq-up", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError(f"pymq up did not start within {timeout} s")
        if self._error is not None:
            raise self._error
        return self

    def _run(self) -> None:
        async def main() -> None:
            self.loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            try:
                self.up = await start_up(self.store_dir, **self.kwargs)
            except BaseException as e:
                self._error = e
                self._ready.set()
                return
            self._ready.set()
            await self._stop.wait()
            await stop_up(self.up)

        asyncio.run(main())

    @property
    def namesrv_addr(self) -> str:
        return self.up.namesrv_addr

    @property
    def broker_addr(self) -> str:
        return self.up.broker_addr

    @property
    def broker(self):
        """The in-process :class:`~pymq_ref.broker.broker.Broker` facade (touch it only via :meth:`call`)."""
        return self.up.broker.broker

    def call(self, fn, *args, timeout: float = 30.0):
        """Run ``fn(*args)`` on the server's loop (where the facade lives) and return its result."""
        async def run():
            return fn(*args)
        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(timeout)

    def stop(self, timeout: float = 60.0) -> None:
        if self._thread is None:
            return
        if self.loop is not None and self._stop is not None and not self.loop.is_closed():
            try:
                self.loop.call_soon_threadsafe(self._stop.set)
            except RuntimeError:
                pass
        self._thread.join(timeout)
        self._thread = None

    def __enter__(self) -> "UpServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
