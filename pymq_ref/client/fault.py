"""Producer queue selection and latency fault tolerance, as the 4.9.4 Java client decides them.

* :class:`ThreadLocalIndex` — the per-thread round-robin counter
  (``client/src/main/java/org/apache/rocketmq/client/common/ThreadLocalIndex.java``);
* :class:`TopicPublishInfo` — a topic's writable queues and the plain round-robin choice that
  avoids the broker of the last failed attempt (``client/.../impl/producer/TopicPublishInfo.java``);
* :class:`LatencyFaultToleranceImpl` — the table of brokers to avoid and until when
  (``client/.../latency/LatencyFaultToleranceImpl.java``);
* :class:`MQFaultStrategy` — the ``sendLatencyFaultEnable`` switch, the latency → pause tables and
  the selection that skips paused brokers (``client/.../latency/MQFaultStrategy.java``).

Pure and replayable: time comes from an injected ``clock`` (a callable returning milliseconds),
and the two counters that Java starts at a random value take their start value (or a seeded
``random.Random``) from the caller. Java ``int`` arithmetic (the wrap at 2**31) is reproduced
where the choice depends on it. No I/O.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Sequence

from pymq_ref.errors import PymqError
from pymq_ref.formats.hashing import java_string_hash
from pymq_ref.formats.message_queue import MessageQueue

Clock = Callable[[], int]

LATENCY_MAX = (50, 100, 550, 1000, 2000, 3000, 15000)
NOT_AVAILABLE_DURATION = (0, 0, 30000, 60000, 120000, 180000, 600000)
ISOLATION_LATENCY = 30000  # what updateFaultItem(..., isolation=True) looks up in the tables

__all__ = [
    "Clock", "LATENCY_MAX", "NOT_AVAILABLE_DURATION", "ISOLATION_LATENCY", "FaultError", "ThreadLocalIndex",
    "TopicPublishInfo", "FaultItem", "LatencyFaultToleranceImpl", "MQFaultStrategy",
]


class FaultError(PymqError, ValueError):
    """A selection that cannot be made (no queue to choose from)."""


def _int32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - 0x100000000 if x & 0x80000000 else x


def _java_abs(x: int) -> int:
    """``Math.abs`` on an ``int``: ``Integer.MIN_VALUE`` stays negative."""
    return x if x == -0x80000000 else abs(x)


def _java_rem(a: int, b: int) -> int:
    """Java's ``%`` on ints: the sign follows the dividend."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


class ThreadLocalIndex:
    """The counter behind round-robin choices: ``increment_and_get()`` adds one (wrapping like a
    Java ``int``) and returns the value masked to 31 bits.

    Java keeps one value per sending thread, first set to ``Math.abs(random.nextInt())``; an
    instance here is one thread's value. Pass ``start`` (the value before the first increment)
    or a seeded ``rng`` to replay a recorded run; with neither, a random start as in Java.
    """

    POSITIVE_MASK = 0x7FFFFFFF

    def __init__(self, start: int | None = None, rng: random.Random | None = None):
        if start is None:
            start = _java_abs(_int32((rng or random.Random()).getrandbits(32)))
        self.value = _int32(start)

    def increment_and_get(self) -> int:
        self.value = _int32(self.value + 1)
        return self.value & self.POSITIVE_MASK


class TopicPublishInfo:
    """The queues a producer may write to for one topic, and the default round-robin choice.

    ``queue_datas`` holds the route's ``(brokerName, writeQueueNums)`` pairs, in route order,
    for :meth:`get_queue_id_by_broker` (the fault strategy's fallback). The counter is
    ``send_which_queue`` (one sending thread's :class:`ThreadLocalIndex`).
    """

    def __init__(self, message_queue_list: Sequence[MessageQueue],
                 queue_datas: Sequence[tuple[str, int]] = (),
                 send_which_queue: ThreadLocalIndex | None = None, *, order_topic: bool = False,
                 have_topic_router_info: bool = True):
        self.message_queue_list = list(message_queue_list)
        self.queue_datas = tuple(queue_datas)
        self.send_which_queue = send_which_queue if send_which_queue is not None else ThreadLocalIndex()
        self.order_topic = order_topic
        self.have_topic_router_info = have_topic_router_info

    def ok(self) -> bool:
        return bool(self.message_queue_list)

    def next_position(self) -> int:
        """Advance the counter and return the list position it points at."""
        if not self.message_queue_list:
            raise FaultError("topic publish info has no message queue to select from")
        return self.send_which_queue.increment_and_get() % len(self.message_queue_list)

    def select_one_message_queue(self, last_broker_name: str | None = None) -> MessageQueue:
        """The next queue round-robin; on a retry (``last_broker_name`` given) the next one on
        another broker, trying as many positions as there are queues, else the next one anyway."""
        if last_broker_name is not None:
            for _ in range(len(self.message_queue_list)):
                mq = self.message_queue_list[self.next_position()]
                if mq.broker_name != last_broker_name:
                    return mq
        return self.message_queue_list[self.next_position()]

    def get_queue_id_by_broker(self, broker_name: str | None) -> int:
        """``writeQueueNums`` of the broker in the route, ``-1`` when it is not there."""
        for name, write_queue_nums in self.queue_datas:
            if name == broker_name:
                return write_queue_nums
        return -1


@dataclass(frozen=True, slots=True)
class FaultItem:
    """One broker to avoid: its last latency and the time it becomes available again."""

    name: str
    current_latency: int
    start_timestamp: int

    def is_available(self, now: int) -> bool:
        return now - self.start_timestamp >= 0


_CHM_CAPACITY = 32  # new ConcurrentHashMap(16) allocates 32 bins; it grows past 23 entries


def _chm_bin(name: str) -> int:
    h = java_string_hash(name) & 0xFFFFFFFF
    return ((h ^ (h >> 16)) & 0x7FFFFFFF) & (_CHM_CAPACITY - 1)


class LatencyFaultToleranceImpl:
    """The fault table: broker name → :class:`FaultItem`.

    :meth:`items` lists the table in Java's ``ConcurrentHashMap`` iteration order (bin of the
    name's ``hashCode``, then insertion order inside a bin), which decides between items that
    compare equal in :meth:`pick_one_at_least`. Exact while the table holds at most 23 items
    (Java's map then resizes and reorders bins; a producer rarely knows that many brokers).
    """

    def __init__(self, clock: Clock, which_item_worst: ThreadLocalIndex | None = None):
        self.clock = clock
        self.which_item_worst = which_item_worst if which_item_worst is not None else ThreadLocalIndex()
        self._table: dict[str, FaultItem] = {}
        self._inserted: dict[str, int] = {}
        self._next_seq = 0

    def update_fault_item(self, name: str, current_latency: int, not_available_duration: int) -> None:
        """Record ``current_latency`` and make the broker unavailable for ``not_available_duration`` ms."""
        if name not in self._table:
            self._inserted[name] = self._next_seq
            self._next_seq += 1
        self._table[name] = FaultItem(name, current_latency, self.clock() + not_available_duration)

    def is_available(self, name: str) -> bool:
        item = self._table.get(name)
        return item is None or item.is_available(self.clock())

    def remove(self, name: str | None) -> None:
        self._table.pop(name, None)
        self._inserted.pop(name, None)

    def items(self) -> list[FaultItem]:
        return sorted(self._table.values(), key=lambda it: (_chm_bin(it.name), self._inserted[it.name]))

    def pick_one_at_least(self) -> str | None:
        """A broker to try when none is available: rotate among the better half of the table,
        ordered available first, then by lower latency, then by earlier ``start_timestamp``."""
        now = self.clock()
        ranked = sorted(self.items(), key=lambda it: (not it.is_available(now), it.current_latency,
                                                      it.start_timestamp))
        if not ranked:
            return None
        half = len(ranked) // 2
        if half <= 0:
            return ranked[0].name
        return ranked[self.which_item_worst.increment_and_get() % half].name


class MQFaultStrategy:
    """Which queue the next send attempt goes to, and what a finished attempt teaches.

    With ``send_latency_fault_enable`` off (the 4.9.4 default) selection is
    :meth:`TopicPublishInfo.select_one_message_queue` and :meth:`update_fault_item` does nothing.
    With it on, an attempt that took ``latency`` ms pauses its broker for
    :meth:`compute_not_available_duration` ms (an exception counts as 30000 ms → 600 s), and
    selection takes the next queue round-robin whose broker is not paused — ignoring the last
    broker — or else a queue on :meth:`LatencyFaultToleranceImpl.pick_one_at_least`'s broker.

    4.9.4 builds that last queue by changing the broker name and queue id of a ``MessageQueue``
    object **inside the publish list**, so the list stays changed for later sends until the route
    changes. ``mutate_publish_list_on_fallback=True`` (the default) reproduces that by replacing
    the list entry; ``False`` leaves the list alone and returns a new queue.
    """

    def __init__(self, clock: Clock, *, send_latency_fault_enable: bool = False,
                 latency_max: Sequence[int] = LATENCY_MAX,
                 not_available_duration: Sequence[int] = NOT_AVAILABLE_DURATION,
                 latency_fault_tolerance: LatencyFaultToleranceImpl | None = None,
                 mutate_publish_list_on_fallback: bool = True):
        self.clock = clock
        self.send_latency_fault_enable = send_latency_fault_enable
        self.latency_max = tuple(latency_max)
        self.not_available_duration = tuple(not_available_duration)
        self.latency_fault_tolerance = latency_fault_tolerance or LatencyFaultToleranceImpl(clock)
        self.mutate_publish_list_on_fallback = mutate_publish_list_on_fallback

    def compute_not_available_duration(self, current_latency: int) -> int:
        """The pause of the highest table row whose latency bound ``current_latency`` reaches; 0 below all."""
        for i in range(len(self.latency_max) - 1, -1, -1):
            if current_latency >= self.latency_max[i]:
                return self.not_available_duration[i]
        return 0

    def update_fault_item(self, broker_name: str, current_latency: int, isolation: bool) -> None:
        if self.send_latency_fault_enable:
            duration = self.compute_not_available_duration(ISOLATION_LATENCY if isolation else current_latency)
            self.latency_fault_tolerance.update_fault_item(broker_name, current_latency, duration)

    def select_one_message_queue(self, tp_info: TopicPublishInfo, last_broker_name: str | None) -> MessageQueue:
        if not self.send_latency_fault_enable:
            return tp_info.select_one_message_queue(last_broker_name)
        queues = tp_info.message_queue_list
        if not queues:
            raise FaultError("topic publish info has no message queue to select from")
        lft = self.latency_fault_tolerance
        index = tp_info.send_which_queue.increment_and_get()
        for _ in range(len(queues)):
            pos = _java_rem(_java_abs(index), len(queues))
            index = _int32(index + 1)
            mq = queues[max(pos, 0)]
            if lft.is_available(mq.broker_name):
                return mq
        not_best = lft.pick_one_at_least()
        write_queue_nums = tp_info.get_queue_id_by_broker(not_best)
        if write_queue_nums > 0:
            pos = tp_info.next_position()
            queue_id = tp_info.send_which_queue.increment_and_get() % write_queue_nums
            mq = MessageQueue(queues[pos].topic, not_best, queue_id)
            if self.mutate_publish_list_on_fallback:
                queues[pos] = mq
            return mq
        lft.remove(not_best)
        return tp_info.select_one_message_queue()
