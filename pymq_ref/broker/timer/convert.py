"""Turning a ``rmq_sys_wheel_timer`` record back into a message (``TimerMessageStore.convert`` /
``convertMessage``, 5.1.4). Pure.

``TIMER_ENQUEUE_MS``, ``TIMER_ROLL_TIMES`` (rolled only) and ``TIMER_DEQUEUE_MS`` are put into the
record's property map (a fresh Java ``HashMap`` of its stored text), the text is serialised from
that map, and only then are ``REAL_TOPIC``/``REAL_QID`` dropped from the in-memory map — so, as
with delay levels, the delivered record still carries them in its bytes. A rolled message goes
back into the timer topic unchanged apart from those properties.

How the text is built (this runs once per delivered timer). A ``HashMap`` iterates in bucket
order, and putting a key that exists keeps its place, so the result depends only on the stored
key tuple and on which keys are added: that *plan* — for each output position, which stored
entry or which added entry goes there — is computed once per key set and cached. The stored
entries are then reused as the ``name\\x01value`` segments of the stored text (a decoded record's
``properties_string``), so no entry is formatted again; the text is one ``join``.
"""

from __future__ import annotations

from operator import itemgetter

from pymq_ref.formats.message import MESSAGE_MAGIC_CODE, MessageRecord
from pymq_ref.formats.properties import REAL_QID, REAL_TOPIC, WAIT
from pymq_ref.store.delay import java_hashmap_order, parse_java_integer

from .hook import TIMER_DEQUEUE_MS, TIMER_ENQUEUE_MS, TIMER_ROLL_TIMES


class TimerConvertError(ValueError):
    """REAL_TOPIC/REAL_QID missing or malformed on a due timer record."""


def _getter(indexes: tuple):
    """``itemgetter`` that always returns a tuple (``itemgetter(i)`` alone returns the item)."""
    if len(indexes) == 1:
        only = indexes[0]
        return lambda seq: (seq[only],)
    return itemgetter(*indexes)


class _Plan:
    """For one (stored keys, added keys, roll) combination: where each output entry comes from."""

    __slots__ = ("text_parts", "memory_keys", "memory_values")

    def __init__(self, stored: tuple[str, ...], added: tuple[str, ...], need_roll: bool):
        position = {k: i for i, k in enumerate(stored)}
        order = java_hashmap_order(list(stored) + [k for k in added if k not in position])
        n = len(stored)
        for j, k in enumerate(added):  # an existing key takes the new value in its old place
            position[k] = n + j
        #: picks the output segments from ``stored segments + added segments``
        self.text_parts = _getter(tuple(position[k] for k in order))
        keep = order if need_roll else [k for k in order if k != REAL_TOPIC and k != REAL_QID]
        self.memory_keys = tuple(keep)
        #: picks the in-memory values from ``stored values + added values``
        self.memory_values = _getter(tuple(position[k] for k in keep)) if keep else (lambda seq: ())


#: the keys ``convert`` puts, in its put order (enqueue time, roll times, dequeue time)
_ENQ_ROLL_DEQ = (TIMER_ENQUEUE_MS, TIMER_ROLL_TIMES, TIMER_DEQUEUE_MS)
_ROLL_DEQ = (TIMER_ROLL_TIMES, TIMER_DEQUEUE_MS)
_ENQ_DEQ = (TIMER_ENQUEUE_MS, TIMER_DEQUEUE_MS)
_DEQ = (TIMER_DEQUEUE_MS,)
#: REAL_QID text -> int (``Integer.parseInt``), for the few queue ids there are
_QUEUE_IDS: dict[str, int] = {}

#: plan per (stored key tuple, added key tuple, roll); records of one application share few key sets.
_PLANS: dict[tuple, _Plan] = {}


def _plan(stored: tuple[str, ...], added: tuple[str, ...], need_roll: bool) -> _Plan:
    key = (stored, added, need_roll)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _Plan(stored, added, need_roll)
        if len(_PLANS) < 4096:
            _PLANS[key] = plan
    return plan


def convert(stored: MessageRecord, enqueue_time: int, need_roll: bool, now_ms: int) -> MessageRecord:
    """The message to put for the timer record ``stored`` (its real topic, or — ``need_roll`` —
    the timer topic again). ``stored.properties_string``, when set, must be the text
    ``stored.properties`` was decoded from (what a decoded record carries).
    Raises :class:`TimerConvertError` when a due record has no usable ``REAL_TOPIC``/``REAL_QID``."""
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
    plan = _plan(tuple(props), added_keys, need_roll)
    raw = stored.properties_string
    segments = raw.split("\x02") if raw else []
    if len(segments) != len(props):  # not one segment per entry (duplicates, empty entries, no text)
        segments = [f"{k}\x01{v}" for k, v in props.items()]
    segments += [f"{k}\x01{v}" for k, v in zip(added_keys, added_values)]
    # messageProperties2String: no escaping (values come from a decoded record or are numbers)
    text = "\x02".join(plan.text_parts(segments))
    memory = dict(zip(plan.memory_keys, plan.memory_values([*props.values(), *added_values])))
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
        stored.born_host, 0, stored.store_host, stored.reconsume_times, 0, MESSAGE_MAGIC_CODE, None, None, text, ()))
