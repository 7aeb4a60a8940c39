"""Turning a ``rmq_sys_wheel_timer`` record back into a message (``TimerMessageStore.convert`` /
``convertMessage``, 5.1.4). Pure.

``TIMER_ENQUEUE_MS``, ``TIMER_ROLL_TIMES`` (rolled only) and ``TIMER_DEQUEUE_MS`` are put into the
record's property map (a fresh Java ``HashMap`` of its stored text), the text is serialised from
that map, and only then are ``REAL_TOPIC``/``REAL_QID`` dropped from the in-memory map — so, as
with delay levels, the delivered record still carries them in its bytes. A rolled message goes
back into the timer topic unchanged apart from those properties.
"""

from __future__ import annotations

from pymq_ref.formats.message import MessageRecord
from pymq_ref.formats.properties import REAL_QID, REAL_TOPIC, WAIT, encode_properties
from pymq_ref.store.delay import hashmap_properties, parse_java_integer

from .hook import TIMER_DEQUEUE_MS, TIMER_ENQUEUE_MS, TIMER_ROLL_TIMES


class TimerConvertError(ValueError):
    """REAL_TOPIC/REAL_QID missing or malformed on a due timer record."""


def convert(stored: MessageRecord, enqueue_time: int, need_roll: bool, now_ms: int) -> MessageRecord:
    props = stored.properties
    extra: dict[str, str] = {}
    if enqueue_time != -1:
        extra[TIMER_ENQUEUE_MS] = str(enqueue_time)
    if need_roll:
        rolls = props.get(TIMER_ROLL_TIMES)
        extra[TIMER_ROLL_TIMES] = str((parse_java_integer(rolls) or 0) + 1 if rolls is not None else 1)
    extra[TIMER_DEQUEUE_MS] = str(now_ms)
    full = hashmap_properties(props, extra)
    text = encode_properties(full)
    if need_roll:
        topic, queue_id, memory = stored.topic, stored.queue_id, dict(full)
    else:
        topic = full.get(REAL_TOPIC)
        queue_id = parse_java_integer(full.get(REAL_QID) or "")
        if not topic or queue_id is None:
            raise TimerConvertError(f"timer record at {stored.phy_offset}: REAL_TOPIC/REAL_QID missing or not an int")
        memory = {k: v for k, v in full.items() if k not in (REAL_TOPIC, REAL_QID)}
    memory[WAIT] = "false"
    return MessageRecord(
        topic=topic, body=stored.body, properties=memory, properties_string=text, queue_id=queue_id,
        flag=stored.flag, sys_flag=stored.sys_flag, born_timestamp=stored.born_timestamp,
        born_host=stored.born_host, store_host=stored.store_host, reconsume_times=stored.reconsume_times)
