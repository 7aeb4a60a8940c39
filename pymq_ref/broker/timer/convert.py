"""Turning a ``rmq_sys_wheel_timer`` record back into a message (``TimerMessageStore.convert`` /
``convertMessage``, 5.1.4). Pure.

``TIMER_ENQUEUE_MS``, ``TIMER_ROLL_TIMES`` (rolled only) and ``TIMER_DEQUEUE_MS`` are put into the
record's property map (a fresh Java ``HashMap`` of its stored text), the text is serialised from
that map, and only then are ``REAL_TOPIC``/``REAL_QID`` dropped from the in-memory map — so, as
with delay levels, the delivered record still carries them in its bytes. A rolled message goes
back into the timer topic unchanged apart from those properties.

How the text is built (this runs once per delivered timer). A ``HashMap`` iterates in bucket
order, and putting a key that exists keeps its place, so the result depends only on the stored
key tuple and on which keys are added: that *plan* is computed once per key set and cached
(:mod:`pymq_ref.broker.property_plan`, shared with delay levels' ``messageTimeup``): the stored
``name\\x01value`` segments are reused, so no entry is formatted again; the text is one ``join``.
"""

from __future__ import annotations

from pymq_ref.formats.message import MESSAGE_MAGIC_CODE, MessageRecord
from pymq_ref.formats.properties import REAL_QID, REAL_TOPIC, WAIT
from pymq_ref.store.delay import parse_java_integer

from ..property_plan import rebuild_properties

from .hook import TIMER_DEQUEUE_MS, TIMER_ENQUEUE_MS, TIMER_ROLL_TIMES


class TimerConvertError(ValueError):
    """REAL_TOPIC/REAL_QID missing or malformed on a due timer record."""


#: the keys ``convert`` puts, in its put order (enqueue time, roll times, dequeue time)
_ENQ_ROLL_DEQ = (TIMER_ENQUEUE_MS, TIMER_ROLL_TIMES, TIMER_DEQUEUE_MS)
_ROLL_DEQ = (TIMER_ROLL_TIMES, TIMER_DEQUEUE_MS)
_ENQ_DEQ = (TIMER_ENQUEUE_MS, TIMER_DEQUEUE_MS)
_DEQ = (TIMER_DEQUEUE_MS,)
#: dropped from the in-memory map of a delivered (not rolled) message
_REAL_TOPIC_QID = (REAL_TOPIC, REAL_QID)
#: REAL_QID text -> int (``Integer.parseInt``), for the few queue ids there are
_QUEUE_IDS: dict[str, int] = {}

def convert(stored: MessageRecord, enqueue_time: int, need_roll: bool, now_ms: int) -> MessageRecord:
    """The message to put for the timer record ``stored`` (its real topic, or — ``need_roll`` —
    the timer topic again). ``stored.properties_string``, when set, must be the text
    ``stored.properties`` was decoded from (what a decoded record carries).
    Raises :class:`TimerConvertError` when a due record has no usable ``REAL_TOPIC``/``REAL_QID``."""
    return convert_with_map(stored, enqueue_time, need_roll, now_ms)[0]


def convert_with_map(stored: MessageRecord, enqueue_time: int, need_roll: bool,
                     now_ms: int) -> tuple[MessageRecord, dict[str, str]]:
    """:func:`convert`, with the map of the message's properties text (``put_message``'s
    ``stored_properties``: the store then need not parse the text again for dispatch)."""
    props = stored.properties
    if need_roll:
        rolls = props.get(TIMER_ROLL_TIMES)
        roll_times = str((parse_java_integer(rolls) or 0) + 1 if rolls is not None else 1)
        if enqueue_time != -1:
            added_keys, added_values = _ENQ_ROLL_DEQ, [str(enqueue_time), roll_times, str(now_ms)]
        else:
            added_keys, added_values = _ROLL_DEQ, [roll_times, str(now_ms)]
    elif enqueue_time != -1:
        added_keys, added_values = _ENQ_DEQ, [str(enqueue_time), str(now_ms)]
    else:
        added_keys, added_values = _DEQ, [str(now_ms)]
    # messageProperties2String: no escaping (values come from a decoded record or are numbers)
    text, memory, text_map = rebuild_properties(props, stored.properties_string, added_keys, added_values,
                                      () if need_roll else _REAL_TOPIC_QID)
    memory[WAIT] = "false"
    if need_roll:
        topic, queue_id = stored.topic, stored.queue_id
    else:
        topic = props.get(REAL_TOPIC)
        raw_qid = props.get(REAL_QID)
        queue_id = _QUEUE_IDS.get(raw_qid)
        if queue_id is None:
            queue_id = parse_java_integer(raw_qid or "")
            if queue_id is not None and len(_QUEUE_IDS) < 4096:
                _QUEUE_IDS[raw_qid] = queue_id
        if not topic or queue_id is None:
            raise TimerConvertError(f"timer record at {stored.phy_offset}: REAL_TOPIC/REAL_QID missing or not an int")
    # the tuple directly (``_make``): body and the fresh map need no defensive copies
    return MessageRecord._make((
        topic, stored.body, memory, queue_id, stored.flag, 0, 0, stored.sys_flag, stored.born_timestamp,
        stored.born_host, 0, stored.store_host, stored.reconsume_times, 0, MESSAGE_MAGIC_CODE, None, None, text,
        ())), text_map
