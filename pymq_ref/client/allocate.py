"""Consumer queue allocation: which queues of a topic this consumer owns after a rebalance.

At every rebalance a clustering consumer takes ``mqAll`` (the topic's readable queues, sorted)
and ``cidAll`` (the group's client ids, sorted), and asks its strategy which queues are its own
(``client/src/main/java/org/apache/rocketmq/client/consumer/rebalance/*.java``, called from
``client/.../impl/consumer/RebalanceImpl.java``). Every consumer runs the same pure function on
the same inputs, so the group agrees on a partition without talking to each other.

The strategies, with the names ``getName()`` returns:

========================  ==========================================================================
``AVG``                   contiguous blocks; the first ``n % c`` consumers get one queue more
``AVG_BY_CIRCLE``         dealt round-robin, like cards
``CONSISTENT_HASH``       a hash ring of ``virtual_node_cnt`` points per consumer (MD5 by default)
``CONFIG``                a fixed list, whatever the inputs
``MACHINE_ROOM``          ``AVG``-like blocks over the queues of brokers named ``<idc>@<name>``
                          whose idc is one of ``consumeridcs``
``MACHINE_ROOM_NEARBY-X`` strategy X within each machine room; rooms without a consumer are shared
                          by everybody
========================  ==========================================================================

The argument checks of ``AbstractAllocateMessageQueueStrategy`` raise :class:`AllocateError`
with Java's ``IllegalArgumentException`` message; a current client id that is not in ``cidAll``
owns nothing. :func:`strategy_for_name` builds a strategy from its name, so a consumer can be
configured with a string. Pure functions of their arguments: no I/O, no clock, no randomness
(``CONSISTENT_HASH`` remembers its last few rings, which changes nothing but the time taken).
"""

from __future__ import annotations

import bisect
import hashlib
import logging
from dataclasses import dataclass, field
from typing import Callable, Iterable, Protocol, Sequence

from pymq_ref.errors import PymqError
from pymq_ref.formats.message_queue import MessageQueue, java_string_key

log = logging.getLogger(__name__)

__all__ = [
    "AllocateError", "AllocateMessageQueueStrategy", "MachineRoomResolver", "PrefixMachineRoomResolver",
    "AllocateMessageQueueAveragely", "AllocateMessageQueueAveragelyByCircle",
    "AllocateMessageQueueConsistentHash", "AllocateMessageQueueByConfig", "AllocateMessageQueueByMachineRoom",
    "AllocateMachineRoomNearby", "md5_hash", "java_split", "STRATEGY_NAMES", "strategy_for_name",
]


class AllocateError(PymqError, ValueError):
    """Arguments a strategy refuses; the message is the one RocketMQ 4.9.4 throws."""


class AllocateMessageQueueStrategy(Protocol):
    """What a consumer needs from a strategy (``AllocateMessageQueueStrategy`` in Java)."""

    def allocate(self, consumer_group: str, current_cid: str | None, mq_all: Sequence[MessageQueue] | None,
                 cid_all: Sequence[str] | None) -> list[MessageQueue]: ...

    def get_name(self) -> str: ...


def _check(consumer_group: str, current_cid: str | None, mq_all: Sequence[MessageQueue] | None,
           cid_all: Sequence[str] | None) -> bool:
    """The common checks: raise on missing input, False when ``current_cid`` is not a member."""
    if not current_cid:
        raise AllocateError("currentCID is empty")
    if not mq_all:
        raise AllocateError("mqAll is null or mqAll empty")
    if not cid_all:
        raise AllocateError("cidAll is null or cidAll empty")
    if current_cid not in cid_all:
        log.info("[BUG] ConsumerGroup: %s The consumerId: %s not in cidAll: %s", consumer_group, current_cid,
                 list(cid_all))
        return False
    return True


class _Named:
    NAME = ""

    def get_name(self) -> str:
        return self.NAME

    @property
    def name(self) -> str:
        return self.get_name()


class AllocateMessageQueueAveragely(_Named):
    """``AVG``, the default: consumer ``index`` gets a contiguous block of ``mq_all``.

    With ``n`` queues, ``c`` consumers and ``mod = n % c`` the first ``mod`` consumers get
    ``n // c + 1`` queues and the others ``n // c``; with ``n <= c`` the first ``n`` get one each.
    """

    NAME = "AVG"

    def allocate(self, consumer_group, current_cid, mq_all, cid_all):
        if not _check(consumer_group, current_cid, mq_all, cid_all):
            return []
        n, c = len(mq_all), len(cid_all)
        index = list(cid_all).index(current_cid)
        mod = n % c
        bigger = mod > 0 and index < mod
        average_size = 1 if n <= c else (n // c + 1 if bigger else n // c)
        start_index = index * average_size if bigger else index * average_size + mod
        count = min(average_size, n - start_index)
        return [mq_all[(start_index + i) % n] for i in range(max(count, 0))]


class AllocateMessageQueueAveragelyByCircle(_Named):
    """``AVG_BY_CIRCLE``: queue ``i`` goes to consumer ``i % c`` (dealt like cards)."""

    NAME = "AVG_BY_CIRCLE"

    def allocate(self, consumer_group, current_cid, mq_all, cid_all):
        if not _check(consumer_group, current_cid, mq_all, cid_all):
            return []
        c = len(cid_all)
        index = list(cid_all).index(current_cid)
        return [mq_all[i] for i in range(index, len(mq_all)) if i % c == index]


HashFunction = Callable[[str], int]


def md5_hash(key: str) -> int:
    """``ConsistentHashRouter``'s default hash: the first 4 bytes of MD5(key) as an unsigned int.

    ``key.getBytes()`` uses the JVM's default charset; this is UTF-8 (the default on every JVM
    since 18 and under UTF-8 locales before), where a lone surrogate becomes ``?``.
    """
    return int.from_bytes(hashlib.md5(key.encode("utf-8", "replace")).digest()[:4], "big")


class AllocateMessageQueueConsistentHash(_Named):
    """``CONSISTENT_HASH``: each queue belongs to the consumer at the next ring point at or after
    the hash of its ``toString()`` (wrapping round).

    The ring holds ``virtual_node_cnt`` points per client id, at ``hash(cid + "-" + i)`` (``i``
    continuing after the points a repeated id already has); a later point at an equal position
    replaces the earlier one. ``hash_function`` replaces MD5 (``HashFunction`` in Java).
    """

    NAME = "CONSISTENT_HASH"

    def __init__(self, virtual_node_cnt: int = 10, hash_function: HashFunction | None = None):
        if virtual_node_cnt < 0:
            raise AllocateError(f"illegal virtualNodeCnt :{virtual_node_cnt}")
        self.virtual_node_cnt = virtual_node_cnt
        self.hash_function = hash_function or md5_hash
        self._recent: dict[tuple, list[str | None]] = {}

    def ring(self, cid_all: Iterable[str]) -> dict[int, str]:
        """Ring position -> client id, built as ``ConsistentHashRouter`` builds it."""
        ring: dict[int, str] = {}
        owned: dict[str, int] = {}  # points each id holds now (``getExistingReplicas``)
        for cid in cid_all:
            existing = owned.get(cid, 0)
            for i in range(self.virtual_node_cnt):
                point = self.hash_function(f"{cid}-{i + existing}")
                if point in ring:
                    owned[ring[point]] -= 1
                ring[point] = cid
                owned[cid] = owned.get(cid, 0) + 1
        return ring

    def owners(self, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]) -> list[str | None]:
        """The client id owning each queue of ``mq_all`` (None for all when the ring is empty).

        The last few answers are kept: every consumer of a group asks the same question (and a
        notebook or test asks it for each of them), and hashing is the whole cost.
        """
        key = (tuple(mq_all), tuple(cid_all))
        found = self._recent.get(key)
        if found is None:
            ring = self.ring(key[1])
            points = sorted(ring)
            found = [ring[points[bisect.bisect_left(points, self.hash_function(str(mq))) % len(points)]]
                     if points else None for mq in key[0]]
            if len(self._recent) >= 8:
                self._recent.clear()
            self._recent[key] = found
        return found

    def allocate(self, consumer_group, current_cid, mq_all, cid_all):
        if not _check(consumer_group, current_cid, mq_all, cid_all):
            return []
        return [mq for mq, owner in zip(mq_all, self.owners(mq_all, cid_all)) if owner == current_cid]


@dataclass
class AllocateMessageQueueByConfig(_Named):
    """``CONFIG``: always the configured queues — no check, nothing shared with other consumers."""

    message_queue_list: list[MessageQueue] = field(default_factory=list)
    NAME = "CONFIG"

    def allocate(self, consumer_group, current_cid, mq_all, cid_all):
        return list(self.message_queue_list)


def java_split(s: str, sep: str) -> list[str]:
    """``s.split(sep)`` for a one-character, non-regex ``sep``: trailing empty strings dropped."""
    parts = s.split(sep)
    if len(parts) > 1:
        while parts and parts[-1] == "":
            parts.pop()
    return parts


class AllocateMessageQueueByMachineRoom(_Named):
    """``MACHINE_ROOM``: blocks of the queues on brokers named ``<idc>@<name>`` with ``idc`` in
    ``consumeridcs`` (other queues are nobody's); the remainder is dealt one each from the end.

    A broker name counts when ``brokerName.split("@")`` has exactly two parts (Java drops
    trailing empty parts, so ``idc@name@`` counts and ``idc@`` does not).
    """

    NAME = "MACHINE_ROOM"

    def __init__(self, consumeridcs: Iterable[str]):
        self.consumeridcs = frozenset(consumeridcs)

    def eligible(self, mq_all: Sequence[MessageQueue]) -> list[MessageQueue]:
        """``premqAll``: the queues of ``mq_all`` in a consumer idc, in ``mq_all`` order."""
        out = []
        for mq in mq_all:
            parts = java_split(mq.broker_name, "@")
            if len(parts) == 2 and parts[0] in self.consumeridcs:
                out.append(mq)
        return out

    def allocate(self, consumer_group, current_cid, mq_all, cid_all):
        if not _check(consumer_group, current_cid, mq_all, cid_all):
            return []
        index = list(cid_all).index(current_cid)
        pre = self.eligible(mq_all)
        c = len(cid_all)
        per, rem = divmod(len(pre), c)
        mine = pre[per * index: per * index + per]
        if rem > index:
            mine.append(pre[index + per * c])
        return mine


class MachineRoomResolver(Protocol):
    """Which machine room a broker's queue and a consumer are deployed in (never empty)."""

    def broker_deploy_in(self, mq: MessageQueue) -> str | None: ...

    def consumer_deploy_in(self, client_id: str) -> str | None: ...


@dataclass(frozen=True)
class PrefixMachineRoomResolver:
    """The room is the text before the first ``separator`` of the broker name / client id
    (all of it when there is none): ``hz-broker1`` and ``hz-10.0.0.1@A`` are in room ``hz``."""

    separator: str = "-"

    def _room(self, name: str) -> str:
        return name.split(self.separator, 1)[0]

    def broker_deploy_in(self, mq: MessageQueue) -> str:
        return self._room(mq.broker_name)

    def consumer_deploy_in(self, client_id: str) -> str:
        return self._room(client_id)


class AllocateMachineRoomNearby(_Named):
    """``MACHINE_ROOM_NEARBY-<inner>``: consume from your own machine room.

    Queues and consumers are grouped by room. The inner strategy shares the queues of my room
    among the consumers of my room; then, room by room in Java ``String`` order, the queues of
    each room that has no consumer at all are shared among all consumers.
    """

    def __init__(self, inner: AllocateMessageQueueStrategy, resolver: MachineRoomResolver):
        if inner is None:
            raise AllocateError("allocateMessageQueueStrategy is null")
        if resolver is None:
            raise AllocateError("machineRoomResolver is null")
        self.inner = inner
        self.resolver = resolver

    def get_name(self) -> str:
        return "MACHINE_ROOM_NEARBY-" + self.inner.get_name()

    def allocate(self, consumer_group, current_cid, mq_all, cid_all):
        if not _check(consumer_group, current_cid, mq_all, cid_all):
            return []
        room_queues: dict[str, list[MessageQueue]] = {}
        for mq in mq_all:
            room = self.resolver.broker_deploy_in(mq)
            if not room:
                raise AllocateError(f"Machine room is null for mq {mq}")
            room_queues.setdefault(room, []).append(mq)
        room_consumers: dict[str, list[str]] = {}
        for cid in cid_all:
            room = self.resolver.consumer_deploy_in(cid)
            if not room:
                raise AllocateError(f"Machine room is null for consumer id {cid}")
            room_consumers.setdefault(room, []).append(cid)

        my_room = self.resolver.consumer_deploy_in(current_cid)
        mine: list[MessageQueue] = []
        local = room_queues.pop(my_room, None)
        if local:
            mine += self.inner.allocate(consumer_group, current_cid, local, room_consumers.get(my_room))
        for room in sorted(room_queues, key=java_string_key):
            if room not in room_consumers:
                mine += self.inner.allocate(consumer_group, current_cid, room_queues[room], cid_all)
        return mine


# -- by name ------------------------------------------------------------------------------------
_SIMPLE = {
    "AVG": AllocateMessageQueueAveragely,
    "AVG_BY_CIRCLE": AllocateMessageQueueAveragelyByCircle,
}
_JAVA_CLASS_NAMES = {
    "AllocateMessageQueueAveragely": "AVG",
    "AllocateMessageQueueAveragelyByCircle": "AVG_BY_CIRCLE",
    "AllocateMessageQueueConsistentHash": "CONSISTENT_HASH",
    "AllocateMessageQueueByConfig": "CONFIG",
    "AllocateMessageQueueByMachineRoom": "MACHINE_ROOM",
}
NEARBY_PREFIX = "MACHINE_ROOM_NEARBY-"
STRATEGY_NAMES = ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "CONFIG", "MACHINE_ROOM", NEARBY_PREFIX + "<inner>")


def strategy_for_name(name: str, *, virtual_node_cnt: int = 10, hash_function: HashFunction | None = None,
                      message_queue_list: Sequence[MessageQueue] | None = None,
                      consumeridcs: Iterable[str] | None = None,
                      resolver: MachineRoomResolver | None = None) -> AllocateMessageQueueStrategy:
    """The strategy a ``getName()`` string (or Java class simple name) stands for.

    ``MACHINE_ROOM_NEARBY-<inner>`` wraps the strategy named ``<inner>`` and needs ``resolver``;
    ``CONFIG`` takes ``message_queue_list``, ``MACHINE_ROOM`` needs ``consumeridcs`` and
    ``CONSISTENT_HASH`` takes ``virtual_node_cnt`` and ``hash_function``.
    """
    options = dict(virtual_node_cnt=virtual_node_cnt, hash_function=hash_function,
                   message_queue_list=message_queue_list, consumeridcs=consumeridcs, resolver=resolver)
    if name.startswith(NEARBY_PREFIX) or name == "AllocateMachineRoomNearby":
        inner_name = name[len(NEARBY_PREFIX):] if name.startswith(NEARBY_PREFIX) else ""
        if not inner_name:
            raise AllocateError(f"strategy {name!r}: expected {NEARBY_PREFIX}<inner strategy name>")
        if resolver is None:
            raise AllocateError(f"strategy {name!r} needs a machine room resolver")
        return AllocateMachineRoomNearby(strategy_for_name(inner_name, **options), resolver)
    name = _JAVA_CLASS_NAMES.get(name, name)
    if name in _SIMPLE:
        return _SIMPLE[name]()
    if name == "CONSISTENT_HASH":
        return AllocateMessageQueueConsistentHash(virtual_node_cnt, hash_function)
    if name == "CONFIG":
        return AllocateMessageQueueByConfig(list(message_queue_list or ()))
    if name == "MACHINE_ROOM":
        if consumeridcs is None:
            raise AllocateError("strategy 'MACHINE_ROOM' needs consumeridcs (the machine rooms to consume from)")
        return AllocateMessageQueueByMachineRoom(consumeridcs)
    raise AllocateError(f"unknown allocation strategy {name!r}: expected one of {', '.join(STRATEGY_NAMES)}")
