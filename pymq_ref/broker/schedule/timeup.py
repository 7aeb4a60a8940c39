"""``messageTimeup``: rebuild the real message from a record parked in ``SCHEDULE_TOPIC_XXXX`` (``delay.md`` §4.1).

The stored text of the new record is the parked record's properties re-serialised from a fresh
Java ``HashMap`` *before* ``DELAY`` is cleared, so the re-delivered record still carries ``DELAY``,
``REAL_TOPIC``, ``REAL_QID`` (and whatever ``WAIT`` the parked record had). Only the in-memory map
loses ``DELAY`` — which keeps the store from parking it again — and gets ``WAIT=false``.

Pure: a :class:`~pymq_ref.formats.message.MessageRecord` in, one out. No store access.
"""

from __future__ import annotations

from pymq_ref.errors import PymqError
from pymq_ref.formats.message import MessageRecord
from pymq_ref.formats.properties import DELAY, REAL_QID, REAL_TOPIC, WAIT, encode_properties
from pymq_ref.store.delay import java_hashmap_order, parse_java_integer


#: HashMap iteration order per key tuple (messages of one application share a few key sets).
_ORDER: dict[tuple[str, ...], tuple[str, ...]] = {}


class ScheduledMessageError(PymqError):
    """A parked record that cannot be turned back into its real message (no/bad REAL_TOPIC, REAL_QID)."""


def message_timeup(stored: MessageRecord, *, clear: tuple[str, ...] = (DELAY,)) -> MessageRecord:
    """The message to put back into ``REAL_TOPIC``/``REAL_QID`` for the parked record ``stored``.

    ``clear`` names the properties removed from the in-memory map after the text was built
    (4.9.4: ``DELAY``; 5.x also ``TIMER_DELIVER_MS`` and ``TIMER_DELAY_SEC``). Raises
    :class:`ScheduledMessageError` when ``REAL_TOPIC`` is missing or ``REAL_QID`` is not an int
    (RocketMQ throws there too, and retries the same unit 100 ms later).
    """
    props = stored.properties
    keys = tuple(props)
    order = _ORDER.get(keys)
    if order is None:
        order = tuple(java_hashmap_order(keys))
        if len(_ORDER) < 4096:
            _ORDER[keys] = order
    raw = stored.properties_string
    if order == keys and raw is not None and raw.count("\x02") + 1 == len(keys):
        text = raw  # already in HashMap order with nothing dropped: re-serialising gives the same text
    else:
        text = encode_properties({k: props[k] for k in order})
    topic = props.get(REAL_TOPIC)
    if not topic:
        raise ScheduledMessageError(f"parked record at {stored.phy_offset}: no REAL_TOPIC property")
    raw_qid = props.get(REAL_QID)
    queue_id = parse_java_integer(raw_qid) if raw_qid is not None else None
    if queue_id is None:
        raise ScheduledMessageError(f"parked record at {stored.phy_offset}: REAL_QID {raw_qid!r} is not an int")
    memory = {k: props[k] for k in order if k not in clear}
    memory[WAIT] = "false"  # setWaitStoreMsgOK(false)
    return MessageRecord(
        topic=topic, body=stored.body, properties=memory, properties_string=text, queue_id=queue_id,
        flag=stored.flag, sys_flag=stored.sys_flag, born_timestamp=stored.born_timestamp,
        born_host=stored.born_host, store_host=stored.store_host, reconsume_times=stored.reconsume_times)
