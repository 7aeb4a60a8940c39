"""Delay levels at put time: the level table and the ``SCHEDULE_TOPIC_XXXX`` rewrite (see the book's reference
appendix, §Delay levels).

RocketMQ 4.9.4 parks a delayed message *before* encoding it (``CommitLog.asyncPutMessage``):
when the transaction type is NOT or COMMIT and the ``DELAY`` property parses to a level > 0,
the level is clamped to the highest level, ``REAL_TOPIC`` and ``REAL_QID`` are put into the
message's property map, the properties string is re-serialised from the whole map (Java
``HashMap`` order) and the message goes to topic ``SCHEDULE_TOPIC_XXXX``, queue ``level - 1``.
Body, tags, keys, flag, sysFlag and born data are untouched; ``DELAY`` stays in the record.

The record convention (shared with the broker): ``record.properties`` is the broker's property
*map* in its iteration order (``WAIT`` included where the broker keeps it); ``record.properties_string``,
when set, is the exact text to store when no rewrite happens (the 4.9.x send path stores the
map without ``WAIT``). After a rewrite the text is the whole map, so ``WAIT`` comes back — which is
why a parked record carries ``WAIT``.

Pure functions: no I/O, no clock. The delivery side lives in :mod:`pymq_ref.broker.schedule`.
"""

from __future__ import annotations

from typing import Mapping

from pymq_ref.errors import PymqError
from pymq_ref.formats.message import MessageRecord
from pymq_ref.formats.properties import DELAY, REAL_QID, REAL_TOPIC, hashmap_properties, java_hashmap_order
from pymq_ref.store.errors import MessageIllegalError

SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"  # TopicValidator.RMQ_SYS_SCHEDULE_TOPIC
#: ``TopicConfigManager.SCHEDULE_TOPIC_QUEUE_NUM``: read/write queues of the schedule topic.
SCHEDULE_TOPIC_QUEUE_NUM = 18
DEFAULT_MESSAGE_DELAY_LEVEL = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"
#: ``parseDelayLevel``'s unit table (case-sensitive, one letter).
TIME_UNIT_MS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


class DelayLevelFormatError(PymqError, ValueError):
    """A ``messageDelayLevel`` string RocketMQ cannot parse (the store refuses to load)."""

    def __init__(self, text: str, index: int, token: str, expected: str):
        self.text, self.index, self.token, self.expected = text, index, token, expected
        super().__init__(f"messageDelayLevel {text!r}: token {index + 1} ({token!r}) is not {expected}")


class InvalidDelayLevelError(MessageIllegalError):
    """The ``DELAY`` property is not a Java int (``Integer.parseInt`` throws in RocketMQ)."""

    def __init__(self, value: str):
        self.value = value
        PymqError.__init__(self, f"message illegal: DELAY property {value!r} is not a decimal Java int")
        self.field, self.limit, self.found = "DELAY property", _INT_MAX, value


def parse_java_integer(text: str, lo: int = _INT_MIN, hi: int = _INT_MAX) -> int | None:
    """``Integer.parseInt`` / ``Long.parseLong`` (with ``lo``/``hi``): None where Java throws.

    Accepts one optional ``+``/``-`` and then decimal digits only (no spaces, no underscores).
    """
    if not text:
        return None
    digits = text[1:] if text[0] in "+-" else text
    if not digits or not digits.isdecimal():
        return None
    value = int(digits)
    if text[0] == "-":
        value = -value
    return value if lo <= value <= hi else None


def parse_java_long(text: str) -> int | None:
    return parse_java_integer(text, _LONG_MIN, _LONG_MAX)


def parse_delay_level(text: str) -> dict[int, int]:
    """``ScheduleMessageService.parseDelayLevel``: ``"1s 5s ..."`` -> ``{1: 1000, 2: 5000, ...}``.

    Tokens are split on single spaces exactly like Java's ``String.split(" ")`` (trailing empty
    tokens dropped, any other empty token is an error); each token is a Java long followed by one
    of ``s m h d``. RocketMQ then fails ``load()``; we raise :class:`DelayLevelFormatError`.
    """
    tokens = text.split(" ")
    while tokens and tokens[-1] == "":
        tokens.pop()
    if not tokens:
        raise DelayLevelFormatError(text, 0, "", "a level such as 1s")
    table: dict[int, int] = {}
    for i, token in enumerate(tokens):
        if not token:
            raise DelayLevelFormatError(text, i, token, "a number followed by s, m, h or d (empty token: two spaces?)")
        unit = TIME_UNIT_MS.get(token[-1])
        if unit is None:
            raise DelayLevelFormatError(text, i, token, "ending in one of the units s, m, h, d")
        number = parse_java_long(token[:-1])
        if number is None:
            raise DelayLevelFormatError(text, i, token, "a decimal number before the unit")
        table[i + 1] = number * unit
    return table


def delay_level_to_queue_id(level: int) -> int:
    """The ``SCHEDULE_TOPIC_XXXX`` queue of a level (``ScheduleMessageService.delayLevel2QueueId``)."""
    return level - 1


def queue_id_to_delay_level(queue_id: int) -> int:
    """The level of a ``SCHEDULE_TOPIC_XXXX`` queue (``ScheduleMessageService.queueId2DelayLevel``)."""
    return queue_id + 1


def delay_time_level(properties: Mapping[str, str]) -> int:
    """``Message.getDelayTimeLevel``: 0 without ``DELAY``; raises :class:`InvalidDelayLevelError`."""
    raw = properties.get(DELAY)
    if raw is None:
        return 0
    level = parse_java_integer(raw)
    if level is None:
        raise InvalidDelayLevelError(raw)
    return level


# -- the rewrite --------------------------------------------------------------------------------

def transform_delay_level(record: MessageRecord, delay_table: Mapping[int, int],
                          max_delay_level: int | None = None) -> MessageRecord:
    """The put-time rewrite of ``CommitLog.asyncPutMessage`` (4.9.4) / ``HookUtils.transformDelayLevelMessage`` (5.x).

    Returns ``record`` itself when nothing applies (transaction type PREPARED/ROLLBACK, no
    ``DELAY``, level <= 0). Raises :class:`InvalidDelayLevelError` for a ``DELAY`` that is not an int.

    pymq-ref difference: a record already addressed to ``SCHEDULE_TOPIC_XXXX`` is left as it is
    (RocketMQ would re-park it with ``REAL_TOPIC = SCHEDULE_TOPIC_XXXX``, a loop no real send path
    reaches); this lets tools and tests write a parked record verbatim.
    """
    if record.sys_flag & 0x4:  # PREPARED (0x4) or ROLLBACK (0xC)
        return record
    props = record.properties
    if DELAY not in props or record.topic == SCHEDULE_TOPIC:
        return record
    level = delay_time_level(props)
    if level <= 0:
        return record
    if max_delay_level is None:
        max_delay_level = max(delay_table) if delay_table else 0
    extra = {}
    if level > max_delay_level:
        level = max_delay_level
        extra[DELAY] = str(level)
    extra[REAL_TOPIC] = record.topic
    extra[REAL_QID] = str(record.queue_id)
    return record.replace(topic=SCHEDULE_TOPIC, queue_id=delay_level_to_queue_id(level),
                          properties=hashmap_properties(props, extra), properties_string=None)


__all__ = ["SCHEDULE_TOPIC", "SCHEDULE_TOPIC_QUEUE_NUM", "DEFAULT_MESSAGE_DELAY_LEVEL", "TIME_UNIT_MS",
           "DelayLevelFormatError", "InvalidDelayLevelError", "parse_java_integer", "parse_java_long",
           "parse_delay_level", "delay_level_to_queue_id", "queue_id_to_delay_level", "delay_time_level",
           "transform_delay_level"]
