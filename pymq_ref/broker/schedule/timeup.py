"""``messageTimeup``: rebuild the real message from a record parked in ``SCHEDULE_TOPIC_XXXX``
(``ScheduleMessageService.messageTimeup``).

The stored text of the new record is the parked record's properties re-serialised from a fresh
Java ``HashMap`` *before* ``DELAY`` is cleared, so the re-delivered record still carries ``DELAY``,
``REAL_TOPIC``, ``REAL_QID`` (and whatever ``WAIT`` the parked record had). Only the in-memory map
loses ``DELAY`` — which keeps the store from parking it again — and gets ``WAIT=false``.

How: the text is built by the HashMap plan shared with the timer wheel
(:mod:`pymq_ref.broker.property_plan`) — the stored ``name\\x01value`` segments reused, or the stored
text itself when it is already in HashMap order (what the put-time rewrite leaves).
:func:`timeup_fields` takes the parked record's fields, for a reader that never builds the record.

Pure: a :class:`~pymq_ref.formats.message.MessageRecord` (or its fields) in, one out. No store access.
"""

from __future__ import annotations

from pymq_ref.errors import PymqError
from pymq_ref.formats.message import MESSAGE_MAGIC_CODE, MessageRecord
from pymq_ref.formats.properties import DELAY, REAL_QID, REAL_TOPIC, WAIT
from pymq_ref.store.delay import parse_java_integer

from ..property_plan import rebuild_properties

_DELAY_ONLY = (DELAY,)
_new = tuple.__new__
#: REAL_QID text -> int (``Integer.parseInt``), for the few queue ids there are
_QUEUE_IDS: dict[str, int] = {}


class ScheduledMessageError(PymqError):
    """A parked record that cannot be turned back into its real message (no/bad REAL_TOPIC, REAL_QID)."""


def message_timeup(stored: MessageRecord, *, clear: tuple[str, ...] = _DELAY_ONLY) -> MessageRecord:
    """The message to put back into ``REAL_TOPIC``/``REAL_QID`` for the parked record ``stored``.

    ``clear`` names the properties removed from the in-memory map after the text was built
    (4.9.4: ``DELAY``; 5.x also ``TIMER_DELIVER_MS`` and ``TIMER_DELAY_SEC``). Raises
    :class:`ScheduledMessageError` when ``REAL_TOPIC`` is missing or ``REAL_QID`` is not an int
    (RocketMQ throws there too, and retries the same unit 100 ms later).
    ``stored.properties_string``, when set, must be the text ``stored.properties`` was decoded
    from (what a decoded record carries).
    """
    return timeup_fields(stored.properties, stored.properties_string, stored.body, stored.flag, stored.sys_flag,
                         stored.born_timestamp, stored.born_host, stored.store_host, stored.reconsume_times,
                         stored.phy_offset, clear if clear.__class__ is tuple else tuple(clear))[0]


def timeup_fields(props: dict, raw: str | None, body: bytes, flag: int, sys_flag: int, born_timestamp: int,
                  born_host, store_host, reconsume_times: int, phy_offset: int,
                  clear: tuple[str, ...] = _DELAY_ONLY) -> tuple[MessageRecord, dict[str, str]]:
    """:func:`message_timeup` from the parked record's fields (what a reader that does not build
    the parked :class:`MessageRecord` has at hand). ``raw`` is the stored properties text.
    Returns the message and the map of its properties text (``put_message``'s
    ``stored_properties``: the store then need not parse the text again for dispatch)."""
    topic = props.get(REAL_TOPIC)
    if not topic:
        raise ScheduledMessageError(f"parked record at {phy_offset}: no REAL_TOPIC property")
    raw_qid = props.get(REAL_QID)
    queue_id = _QUEUE_IDS.get(raw_qid)
    if queue_id is None:
        queue_id = parse_java_integer(raw_qid) if raw_qid is not None else None
        if queue_id is None:
            raise ScheduledMessageError(f"parked record at {phy_offset}: REAL_QID {raw_qid!r} is not an int")
        if len(_QUEUE_IDS) < 4096:
            _QUEUE_IDS[raw_qid] = queue_id
    # the text is the whole map (DELAY, REAL_TOPIC, REAL_QID included) in HashMap order
    text, memory, text_map = rebuild_properties(props, raw, (), (), clear)
    memory[WAIT] = "false"  # setWaitStoreMsgOK(false)
    # the tuple directly: body and the fresh map need no defensive copies
    return _new(MessageRecord, (
        topic, body, memory, queue_id, flag, 0, 0, sys_flag, born_timestamp, born_host, 0, store_host,
        reconsume_times, 0, MESSAGE_MAGIC_CODE, None, None, text, ())), text_map
