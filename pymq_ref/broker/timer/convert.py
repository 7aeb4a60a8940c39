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
from pymq_ref.formats.properties import REAL_QID, REAL_TOPIC, WAIT
from pymq_ref.store.delay import java_hashmap_order, parse_java_integer

from .hook import TIMER_DEQUEUE_MS, TIMER_ENQUEUE_MS, TIMER_ROLL_TIMES


class TimerConvertError(ValueError):
    """REAL_TOPIC/REAL_QID missing or malformed on a due timer record."""


#: HashMap iteration order per (stored keys + added keys) tuple; records of one application share few key sets.
_ORDER: dict[tuple[str, ...], tuple[str, ...]] = {}


def _hashmap_order(keys: tuple[str, ...]) -> tuple[str, ...]:
    order = _ORDER.get(keys)
    if order is None:
        order = tuple(java_hashmap_order(keys))
        if len(_ORDER) < 4096:
            _ORDER[keys] = order
    return order


def convert(stored: MessageRecord, enqueue_time: int, need_roll: bool, now_ms: int) -> MessageRecord:
    props = stored.properties
    full = dict(props)
    if enqueue_time != -1:
        full[TIMER_ENQUEUE_MS] = str(enqueue_time)
    if need_roll:
        rolls = props.get(TIMER_ROLL_TIMES)
        full[TIMER_ROLL_TIMES] = str((parse_java_integer(rolls) or 0) + 1 if rolls is not None else 1)
    full[TIMER_DEQUEUE_MS] = str(now_ms)
    order = _hashmap_order(tuple(full))  # existing keys keep their place, new ones join their bucket's end
    # messageProperties2String: no escaping (values come from a decoded record or are numbers)
    text = "\x02".join([f"{k}\x01{full[k]}" for k in order])
    if need_roll:
        topic, queue_id = stored.topic, stored.queue_id
        memory = {k: full[k] for k in order}
    else:
        topic = full.get(REAL_TOPIC)
        queue_id = parse_java_integer(full.get(REAL_QID) or "")
        if not topic or queue_id is None:
            raise TimerConvertError(f"timer record at {stored.phy_offset}: REAL_TOPIC/REAL_QID missing or not an int")
        memory = {k: full[k] for k in order if k != REAL_TOPIC and k != REAL_QID}
    memory[WAIT] = "false"
    return MessageRecord(
        topic=topic, body=stored.body, properties=memory, properties_string=text, queue_id=queue_id,
        flag=stored.flag, sys_flag=stored.sys_flag, born_timestamp=stored.born_timestamp,
        born_host=stored.born_host, store_host=stored.store_host, reconsume_times=stored.reconsume_times)
