"""Thin asyncio shells over the sans-IO :class:`~pymq_ref.remoting.connection.Connection`.

* :class:`RemotingProtocol` — an ``asyncio.Protocol`` per TCP connection: feeds bytes to the
  connection, serves the peer's requests through a :class:`~pymq_ref.remoting.dispatch.RequestDispatcher`,
  resolves our requests' futures, and enforces the :class:`Limits`.
* :class:`Channel` — what the rest of the program holds for one connection: ``invoke`` (await a
  response), ``invoke_oneway``, ``send_response`` (answer later, e.g. a held pull), ``close``.
  Both ends use it: a broker calls a producer back on the producer's own channel.
* :class:`RemotingServer` — listens (127.0.0.1 unless told otherwise) and serves every connection.
* :class:`RemotingClient` — one channel per address, opened on first use, with timeouts.

Concurrency model: one asyncio event loop owns every socket; a request is served in its own task,
so a slow request (a held pull) never blocks the connection. RocketMQ uses Netty's reactor threads
plus one executor per processor group; the loop plays the reactor, and processors that block run
in an executor of the caller's choosing.

Limits, per connection (all bounded whatever the peer does): a frame above ``max_frame_length``
is refused from its length field (nothing buffered); at most ``max_in_flight`` requests and
``max_in_flight_bytes`` of request frames are served at once — beyond that the connection stops
reading until some are answered; a connection with no traffic for ``idle_timeout`` seconds is
closed. A bad frame closes that connection only, with one log line.

Legal call order: ``await server.start()`` … ``await server.stop()``; ``RemotingClient`` may
``invoke`` from start to ``await client.close()``; a channel's methods may be called until it
is closed (then they raise :class:`~pymq_ref.remoting.errors.RemotingClosedError`).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Callable

from .command import RemotingCommand
from .connection import NEED_DATA, Connection, ConnectionClosed, Request, Response
from .codec import MAX_FRAME_LENGTH
from .dispatch import RequestDispatcher
from .errors import (FrameError, RemotingClosedError, RemotingConnectError, RemotingStateError,
                     RemotingTimeoutError)

log = logging.getLogger("pymq_ref.remoting")


@dataclass(frozen=True)
class Limits:
    """What one connection may make us hold (defaults follow RocketMQ where it has one)."""

    max_frame_length: int = MAX_FRAME_LENGTH  # com.rocketmq.remoting.frameMaxLength
    max_in_flight: int = 1024  # requests being served at once (RocketMQ: executor queues)
    max_in_flight_bytes: int = 64 * 1024 * 1024
    idle_timeout: float | None = 120.0  # serverChannelMaxIdleTimeSeconds / clientChannelMaxIdleTimeSeconds


def parse_address(address: str) -> tuple[str, int]:
    """``"host:port"`` (IPv6 as ``[::1]:9876``) -> (host, port); raises ValueError with the reason."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ValueError(f"expected an address HOST:PORT, got {address!r}")
    return host.strip("[]"), int(port)


def format_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class Channel:
    """One live connection (see the module docstring). Created by the protocol, not by users."""

    def __init__(self, protocol: "RemotingProtocol"):
        self._protocol = protocol
        self.remote_address = protocol.peer
        self.local_address = protocol.local
        self.attributes: dict = {}  # what the server layers remember about this peer (client id …)

    @property
    def closed(self) -> bool:
        return self._protocol.closed

    async def invoke(self, request: RemotingCommand, timeout: float = 3.0) -> RemotingCommand:
        """Send a two-way request (a fresh opaque is assigned) and wait for its response."""
        return await self._protocol.invoke(request, timeout)

    def invoke_oneway(self, request: RemotingCommand) -> None:
        self._protocol.send_request(request.with_(flag=request.flag | 2), oneway=True)

    def send_response(self, response: RemotingCommand) -> None:
        """Answer a request of this channel later (its opaque must be one we owe)."""
        self._protocol.write(response)

    def close(self) -> None:
        self._protocol.close()

    def on_close(self, callback: Callable[["Channel"], None]) -> None:
        """Call ``callback(channel)`` once the connection is gone (at once if it already is)."""
        if self.closed:
            callback(self)
        else:
            self._protocol.close_callbacks.append(callback)

    def __repr__(self) -> str:
        return f"Channel({self.local_address} <-> {self.remote_address}{', closed' if self.closed else ''})"


class RemotingProtocol(asyncio.Protocol):
    def __init__(self, dispatcher: RequestDispatcher | None, limits: Limits, *, name: str = "remoting",
                 on_open: Callable[[Channel], None] | None = None):
        self.dispatcher = dispatcher
        self.limits = limits
        self.name = name
        self.on_open = on_open
        self.conn = Connection(max_frame_length=limits.max_frame_length)
        self.transport: asyncio.Transport | None = None
        self.channel: Channel | None = None
        self.closed = False
        self.close_callbacks: list[Callable[[Channel], None]] = []
        self.pending: dict[int, asyncio.Future] = {}
        self.tasks: set[asyncio.Task] = set()
        self.in_flight_bytes = 0
        self.paused = False
        self.peer = self.local = "?"
        self._idle: asyncio.TimerHandle | None = None
        self._last_activity = 0.0
        self._now = asyncio.get_event_loop().time
        self._corked: list[bytes] | None = None
        self._lost = False
        self.ready = asyncio.get_event_loop().create_future()
        self.gone = asyncio.get_event_loop().create_future()  # set once connection_lost ran

    # -- asyncio.Protocol -------------------------------------------------------------------
    def connection_made(self, transport) -> None:
        self.transport = transport
        peer, local = transport.get_extra_info("peername"), transport.get_extra_info("sockname")
        self.peer = format_address(*peer[:2]) if peer else "?"
        self.local = format_address(*local[:2]) if local else "?"
        self.channel = Channel(self)
        self._touch()
        if self.limits.idle_timeout:
            self._idle = asyncio.get_event_loop().call_later(self.limits.idle_timeout, self._check_idle)
        if self.on_open is not None:
            self.on_open(self.channel)
        if not self.ready.done():
            self.ready.set_result(self.channel)

    def data_received(self, data: bytes) -> None:
        self._touch()
        self.conn.receive_data(data)
        self._drain()

    def eof_received(self):
        self.conn.receive_data(b"")
        self._drain()
        return False

    def connection_lost(self, exc) -> None:
        if self._lost:
            return
        self._lost = True
        self.closed = True
        self.conn.close()
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        error = RemotingClosedError(f"connection {self.local} <-> {self.peer} closed")
        for future in self.pending.values():
            if not future.done():
                future.set_exception(error)
        self.pending.clear()
        for task in list(self.tasks):
            task.cancel()
        callbacks, self.close_callbacks = self.close_callbacks, []
        for callback in callbacks:
            try:
                callback(self.channel)
            except Exception:  # a layer's clean-up must not stop the others'
                log.exception("%s: close callback failed for %s", self.name, self.peer)
        if not self.gone.done():
            self.gone.set_result(None)

    # -- input ------------------------------------------------------------------------------
    def _busy(self) -> bool:
        return (self.conn.in_flight >= self.limits.max_in_flight
                or self.in_flight_bytes >= self.limits.max_in_flight_bytes)

    def _drain(self) -> None:
        """Serve what the buffer holds — but no more requests than the limits allow: the rest waits
        in the buffer (reading is paused meanwhile) until answers free some room. Answers given
        while draining go out together at the end."""
        self._corked = []
        try:
            self._drain_events()
        finally:
            out, self._corked = self._corked, None
            if out and not self.closed and self.transport is not None:
                self._touch()
                self.transport.write(out[0] if len(out) == 1 else b"".join(out))
        self._flow_control()

    def _drain_events(self) -> None:
        while not self.closed:
            if self._busy():
                break
            try:
                event = self.conn.next_event()
            except FrameError as e:
                log.warning("%s: closing %s: bad frame: %s", self.name, self.peer, str(e))
                self.close()
                return
            except RemotingStateError:
                return
            if event is NEED_DATA:
                break
            if isinstance(event, Request):
                self._serve(event)
            elif isinstance(event, Response):
                future = self.pending.pop(event.command.opaque, None)
                if future is None or future.done():
                    log.info("%s: response from %s matches no request (opaque %s)", self.name, self.peer,
                             event.command.opaque)
                else:
                    future.set_result(event.command)
            elif isinstance(event, ConnectionClosed):
                self.close()
                return

    def _serve(self, event: Request) -> None:
        request = event.command
        if self.dispatcher is None:
            log.info("%s: %s sent %s but this end serves no requests", self.name, self.peer, request.code_name)
            if not request.is_oneway:
                self.write(request.answer(3, f" request type {request.code} not supported"))
            return
        result = self.dispatcher.dispatch(request, self.channel)
        if result is None or type(result) is RemotingCommand:  # answered now (RequestDispatcher.dispatch)
            if result is not None:
                self.write(result, unsolicited=request.is_oneway)
            return
        size = event.frame_length if not request.is_oneway else 0
        self.in_flight_bytes += size
        task = asyncio.ensure_future(self._run(request, result, size))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _run(self, request: RemotingCommand, result, size: int) -> None:
        try:
            response = await result
            if response is not None and not self.closed:
                self.write(response, unsolicited=request.is_oneway)
        finally:
            self.in_flight_bytes -= size
            self._flow_control()

    def _flow_control(self) -> None:
        if self.closed or self.transport is None:
            return
        busy = self._busy()
        if busy and not self.paused:
            self.paused = True
            self.transport.pause_reading()
        elif not busy and self.paused:
            self.paused = False
            self.transport.resume_reading()
            if self.conn.decoder.buffered:
                asyncio.get_event_loop().call_soon(self._drain)

    # -- output -----------------------------------------------------------------------------
    def write(self, command: RemotingCommand, *, unsolicited: bool = False) -> None:
        """Encode and send ``command``; while the protocol drains a batch of received requests the
        answers are gathered and sent in one write (one system call for a pipelined burst)."""
        if self.closed:
            raise RemotingClosedError(f"connection to {self.peer} is closed")
        data = self.conn.send(command, unsolicited=unsolicited)
        if self._corked is not None:
            self._corked.append(data)
            return
        self._touch()
        self.transport.write(data)
        if command.is_response:
            self._flow_control()

    def send_request(self, request: RemotingCommand, *, oneway: bool = False) -> int:
        r = request
        request = RemotingCommand(r.code, r.language, r.version, self.conn.new_opaque(), r.flag, r.remark,
                                  r.ext_fields, r.body, r.serialize_type, r.custom_header)
        self.write(request)
        return request.opaque

    async def invoke(self, request: RemotingCommand, timeout: float) -> RemotingCommand:
        if request.is_oneway or request.is_response:
            raise RemotingStateError("invoke() sends two-way requests; use invoke_oneway / send_response")
        if self.closed:
            raise RemotingClosedError(f"connection to {self.peer} is closed")
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        opaque = self.send_request(request)
        self.pending[opaque] = future
        timer = loop.call_later(timeout, self._expire, opaque, future, timeout, request.code_name)
        try:
            return await future
        finally:
            timer.cancel()
            self.pending.pop(opaque, None)

    def _expire(self, opaque: int, future: asyncio.Future, timeout: float, what: str) -> None:
        if not future.done():
            self.conn.forget(opaque)
            future.set_exception(RemotingTimeoutError(
                f"wait response on {self.peer} timeout {int(timeout * 1000)}(ms), request {what}"))

    # -- housekeeping -----------------------------------------------------------------------
    def _touch(self) -> None:
        self._last_activity = self._now()

    def _check_idle(self) -> None:
        self._idle = None
        if self.closed:
            return
        idle_for = self._now() - self._last_activity
        if idle_for >= self.limits.idle_timeout:
            log.info("%s: closing %s: idle for %.0f s", self.name, self.peer, idle_for)
            self.close()
        else:
            self._idle = asyncio.get_event_loop().call_later(self.limits.idle_timeout - idle_for, self._check_idle)

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()
        self.closed = True
        self.conn.close()


class RemotingServer:
    """Serves a dispatcher on ``host:port`` (port 0 picks a free one; see :attr:`address`)."""

    def __init__(self, dispatcher: RequestDispatcher, host: str = "127.0.0.1", port: int = 0, *,
                 limits: Limits = Limits(), name: str = "server",
                 on_open: Callable[[Channel], None] | None = None):
        self.dispatcher = dispatcher
        self.host, self.port = host, port
        self.limits = limits
        self.name = name
        self.on_open = on_open
        self.protocols: set[RemotingProtocol] = set()
        self._server: asyncio.base_events.Server | None = None

    def _factory(self) -> RemotingProtocol:
        protocol = RemotingProtocol(self.dispatcher, self.limits, name=self.name, on_open=self.on_open)
        self.protocols.add(protocol)
        protocol.close_callbacks.append(lambda _channel: self.protocols.discard(protocol))
        return protocol

    async def start(self) -> "RemotingServer":
        if self._server is not None:
            raise RemotingStateError(f"{self.name} already started")
        self._server = await asyncio.get_running_loop().create_server(self._factory, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    @property
    def address(self) -> str:
        return format_address(self.host, self.port)

    @property
    def channels(self) -> list[Channel]:
        return [p.channel for p in self.protocols if p.channel is not None and not p.closed]

    async def stop(self) -> None:
        """Stop listening, close every connection, and wait for their requests to be cancelled."""
        if self._server is None:
            return
        self._server.close()
        for protocol in list(self.protocols):
            protocol.close()
        tasks = [t for p in self.protocols for t in p.tasks]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        gone = [p.gone for p in self.protocols if p.transport is not None]
        if gone:  # let every connection_lost (and its clean-up callbacks) run
            await asyncio.wait(gone, timeout=5)
        await self._server.wait_closed()
        self._server = None


class RemotingClient:
    """Channels to many addresses, opened on first use (``NettyRemotingClient``).

    ``dispatcher`` serves the requests servers send back on our connections (may be None).
    ``close_on_timeout`` closes a channel after a sync call on it timed out, as the Java client
    does by default (``clientCloseSocketIfTimeout``).
    """

    def __init__(self, dispatcher: RequestDispatcher | None = None, *, limits: Limits = Limits(),
                 connect_timeout: float = 3.0, close_on_timeout: bool = True, name: str = "client"):
        self.dispatcher = dispatcher
        self.limits = limits
        self.connect_timeout = connect_timeout
        self.close_on_timeout = close_on_timeout
        self.name = name
        self.channels: dict[str, Channel] = {}
        self._connecting: dict[str, asyncio.Future] = {}
        self._closed = False

    async def channel(self, address: str) -> Channel:
        """The open channel to ``address``, connecting if needed (RemotingConnectError on failure)."""
        if self._closed:
            raise RemotingStateError(f"{self.name} is closed")
        channel = self.channels.get(address)
        if channel is not None and not channel.closed:
            return channel
        pending = self._connecting.get(address)
        if pending is not None:
            return await asyncio.shield(pending)
        future = asyncio.get_running_loop().create_future()
        self._connecting[address] = future
        try:
            host, port = parse_address(address)
            loop = asyncio.get_running_loop()
            try:
                _, protocol = await asyncio.wait_for(loop.create_connection(
                    lambda: RemotingProtocol(self.dispatcher, self.limits, name=self.name), host, port),
                    self.connect_timeout)
            except (OSError, asyncio.TimeoutError) as e:
                raise RemotingConnectError(f"connect to {address} failed: {e or type(e).__name__}") from None
            channel = protocol.channel
            self.channels[address] = channel
            channel.on_close(lambda ch: self.channels.pop(address, None) if self.channels.get(address) is ch else None)
            future.set_result(channel)
            return channel
        except BaseException as e:
            if not future.done():
                future.set_exception(e)
                future.exception()  # retrieved: no "never retrieved" warning when nobody else waits
            raise
        finally:
            self._connecting.pop(address, None)

    async def invoke(self, address: str, request: RemotingCommand, timeout: float = 3.0) -> RemotingCommand:
        channel = await self.channel(address)
        try:
            return await channel.invoke(request, timeout)
        except RemotingTimeoutError:
            if self.close_on_timeout:
                channel.close()
            raise

    async def invoke_oneway(self, address: str, request: RemotingCommand) -> None:
        (await self.channel(address)).invoke_oneway(request)

    async def close(self) -> None:
        self._closed = True
        for channel in list(self.channels.values()):
            channel.close()
        self.channels.clear()
        await asyncio.sleep(0)
