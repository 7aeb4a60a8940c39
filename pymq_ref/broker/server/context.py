"""``BrokerContext``: what every request processor of the broker server is given.

Processors are functions ``(request, channel) -> response | None | awaitable`` collected from
the modules of :data:`pymq_ref.broker.server.PROCESSOR_MODULES`; each module's
``handlers(ctx)`` closes over one context. The context holds the in-process
:class:`~pymq_ref.broker.broker.Broker` facade (the only implementation of every service), the
settings, the clock, the client tables, and the controller's hooks for what the broker sends to
clients (``ask_client`` awaits an answer, ``tell_client`` is oneway). Processors must not reach
into the controller or the transport otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from pymq_ref.broker.broker import Broker
from pymq_ref.broker.config import BrokerConfig
from pymq_ref.formats.hosts import Host
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.store.clock import Clock

from .client_tables import ConsumerManager, ProducerManager


@dataclass
class BrokerContext:
    broker: Broker
    config: BrokerConfig
    clock: Clock
    #: every setting as broker.conf names it (strings), for GET_BROKER_CONFIG and friends
    settings: dict[str, str] = field(default_factory=dict)
    consumers: ConsumerManager = field(default_factory=ConsumerManager)
    producers: ProducerManager = field(default_factory=ProducerManager)
    #: ``ask_client(channel, request, timeout_s)``: send a request on a client's connection, await the answer
    ask_client: Callable[[Any, RemotingCommand, float], Awaitable[RemotingCommand]] | None = None
    #: ``tell_client(channel, request)``: a oneway request on a client's connection (errors logged)
    tell_client: Callable[[Any, RemotingCommand], None] | None = None
    #: ``register_broker_all()``: announce the topic table to every name server now (after a topic change)
    register_broker_all: Callable[[], None] = lambda: None
    #: free-form room for processors that need to share state (e.g. the admin modules)
    extras: dict = field(default_factory=dict)

    @property
    def now_ms(self) -> int:
        return self.clock.now_ms()


def channel_host(channel) -> Host:
    """The peer's address as a :class:`Host` (born host of what it sends); 127.0.0.1:0 when unknown."""
    addr = getattr(channel, "remote_address", None) or ""
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit():
        return Host("127.0.0.1", 0)
    return Host(host.strip("[]"), int(port))


def channel_addr(channel) -> str:
    return getattr(channel, "remote_address", None) or "?"
