"""The put side of the 5.x timer wheel: ``HookUtils.handleScheduleMessage`` (5.1.4
``broker/src/main/java/org/apache/rocketmq/broker/util/HookUtils.java``).

A message (tranType NOT/COMMIT) with ``TIMER_DELIVER_MS`` / ``TIMER_DELAY_SEC`` / ``TIMER_DELAY_MS``
and no positive ``DELAY`` is rewritten into topic ``rmq_sys_wheel_timer`` queue 0 with
``TIMER_OUT_MS`` (the delivery time rounded down to the precision, one precision earlier when
exact), ``REAL_TOPIC`` and ``REAL_QID``; a positive ``DELAY`` wins and drops the timer
properties. A delivery time not in the future stores the message as is.

Pure: the broker calls :func:`handle_schedule_message` with the clock's ``now`` before the
store put. Returns the record to store, or raises :class:`TimerMessageRejected` with the 5.x status.
"""

from __future__ import annotations

from typing import Callable

from pymq_ref.errors import PymqError
from pymq_ref.formats.message import MessageRecord
from pymq_ref.formats.properties import REAL_QID, REAL_TOPIC
from pymq_ref.formats.properties import hashmap_properties
from pymq_ref.store.delay import delay_time_level, parse_java_long

from .config import TimerConfig

TIMER_TOPIC = "rmq_sys_wheel_timer"  # TopicValidator.SYSTEM_TOPIC_PREFIX + "wheel_timer"
TIMER_DELIVER_MS = "TIMER_DELIVER_MS"
TIMER_DELAY_SEC = "TIMER_DELAY_SEC"
TIMER_DELAY_MS = "TIMER_DELAY_MS"
TIMER_OUT_MS = "TIMER_OUT_MS"
TIMER_ENQUEUE_MS = "TIMER_ENQUEUE_MS"
TIMER_DEQUEUE_MS = "TIMER_DEQUEUE_MS"
TIMER_ROLL_TIMES = "TIMER_ROLL_TIMES"
TIMER_DEL_UNIQKEY = "TIMER_DEL_UNIQKEY"


class TimerMessageRejected(PymqError):
    """The put is refused; ``status`` is the 5.x PutMessageStatus name."""

    def __init__(self, status: str, reason: str):
        self.status = status
        super().__init__(f"{status}: {reason}")


def is_timer_message(record: MessageRecord) -> bool:
    """``checkIfTimerMessage`` without its side effect (see :func:`handle_schedule_message`)."""
    p = record.properties
    if record.topic == TIMER_TOPIC or TIMER_OUT_MS in p:
        return False
    return TIMER_DELIVER_MS in p or TIMER_DELAY_MS in p or TIMER_DELAY_SEC in p


def normalize_deliver_ms(deliver_ms: int, precision_ms: int) -> int:
    """An exact multiple of the precision goes one slot earlier, anything else rounds down: the
    slot is dequeued once the wheel's write time has passed it, i.e. at ``slot + precision``."""
    return deliver_ms - precision_ms if deliver_ms % precision_ms == 0 else deliver_ms // precision_ms * precision_ms


def handle_schedule_message(record: MessageRecord, now_ms: int, config: TimerConfig | None = None,
                            is_reject: Callable[[int], bool] | None = None) -> MessageRecord:
    """The record to store for ``record`` (possibly ``record`` itself). ``is_reject(deliver_ms)`` is
    the wheel's flow control (``TimerMessageStore.isReject``)."""
    config = config or TimerConfig()
    if record.sys_flag & 0x4:  # PREPARED / ROLLBACK: untouched
        return record
    if record.topic == TIMER_TOPIC:  # a rolled timer message
        return record
    props = record.properties
    if delay_time_level(props) > 0:  # a delay level wins: the timer properties are dropped
        if any(k in props for k in (TIMER_DELIVER_MS, TIMER_DELAY_SEC, TIMER_DELAY_MS)):
            kept = {k: v for k, v in props.items() if k not in (TIMER_DELIVER_MS, TIMER_DELAY_SEC, TIMER_DELAY_MS)}
            return record.replace(properties=kept, properties_string=None)
        return record
    if not is_timer_message(record):
        return record
    if not config.timer_wheel_enable:
        raise TimerMessageRejected("WHEEL_TIMER_NOT_ENABLE", "the timer wheel is disabled (timerWheelEnable=false)")
    if TIMER_DELAY_SEC in props:
        n = parse_java_long(props[TIMER_DELAY_SEC])
        deliver = None if n is None else now_ms + n * 1000
    elif TIMER_DELAY_MS in props:
        n = parse_java_long(props[TIMER_DELAY_MS])
        deliver = None if n is None else now_ms + n
    else:
        deliver = parse_java_long(props[TIMER_DELIVER_MS])
    if deliver is None:
        raise TimerMessageRejected("WHEEL_TIMER_MSG_ILLEGAL", "a timer property is not a decimal Java long")
    if deliver <= now_ms:
        if TIMER_DEL_UNIQKEY in props:
            raise TimerMessageRejected("WHEEL_TIMER_MSG_ILLEGAL", "a delete marker must lie in the future")
        return record  # due already: stored as a normal message
    if deliver - now_ms > config.timer_max_delay_sec * 1000:
        raise TimerMessageRejected("WHEEL_TIMER_MSG_ILLEGAL",
                                   f"delay {deliver - now_ms} ms exceeds timerMaxDelaySec={config.timer_max_delay_sec}")
    deliver = normalize_deliver_ms(deliver, config.timer_precision_ms)
    if is_reject is not None and is_reject(deliver):
        raise TimerMessageRejected("WHEEL_TIMER_FLOW_CONTROL", f"slot {deliver} is congested")
    new = hashmap_properties(props, {TIMER_OUT_MS: str(deliver), REAL_TOPIC: record.topic,
                                     REAL_QID: str(record.queue_id)})
    return record.replace(topic=TIMER_TOPIC, queue_id=0, properties=new, properties_string=None)
