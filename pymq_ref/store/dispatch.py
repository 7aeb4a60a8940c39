"""Dispatch ("reput"): turning CommitLog records into ConsumeQueue units and index entries.

``store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java`` (``ReputMessageService``,
``CommitLogDispatcherBuildConsumeQueue``). A :class:`DispatchRequest` carries what the derived files need
from one record; :func:`dispatch_request_from_record` builds it from a decoded
:class:`~pymq_ref.formats.message.MessageRecord` exactly as ``checkMessageAndReturnSize`` does
(tagsCode from ``TAGS``; for ``SCHEDULE_TOPIC_XXXX`` the delivery time, ``CommitLog.checkMessageAndReturnSize``).

Dispatchers are plain objects with ``dispatch(request)``; the store runs the same list
(:class:`BuildConsumeQueue` then :class:`BuildIndex`) live, during recovery, and anyone can
run it over a CommitLog to rebuild derived files (the doctor, Spark).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from zlib import crc32 as _crc32
from typing import Callable, Mapping, Protocol

from pymq_ref.formats.hashing import tags_code as compute_tags_code
from pymq_ref.formats.message import (BLANK_MAGIC_CODE, END_FILE_MIN_BLANK_LENGTH, MESSAGE_MAGIC_CODE,
                                      MESSAGE_MAGIC_CODE_V2)

SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"
TRANSACTION_NOT_TYPE = 0x0
TRANSACTION_PREPARED_TYPE = 0x4
TRANSACTION_COMMIT_TYPE = 0x8
TRANSACTION_ROLLBACK_TYPE = 0xC


_TAGS_CODES: dict[str, int] = {}


@dataclass(slots=True)
class DispatchRequest:
    """What the dispatchers learn from one record (``DispatchRequest.java``)."""

    topic: str
    queue_id: int
    commit_log_offset: int
    msg_size: int
    tags_code: int
    store_timestamp: int
    consume_queue_offset: int
    keys: str | None = None
    uniq_key: str | None = None
    sys_flag: int = 0
    prepared_transaction_offset: int = 0
    properties: Mapping[str, str] = field(default_factory=dict)
    success: bool = True

    @property
    def transaction_type(self) -> int:
        return self.sys_flag & 0xC


def compute_deliver_timestamp(delay_level: int, store_timestamp: int, delay_table: Mapping[int, int]) -> int:
    """``ScheduleMessageService.computeDeliverTimestamp``: unknown levels deliver 1 s later."""
    millis = delay_table.get(delay_level)
    return store_timestamp + (millis if millis is not None else 1000)


def dispatch_tags_code(topic: str, properties: Mapping[str, str], store_timestamp: int,
                       delay_table: Mapping[int, int]) -> int:
    """The tagsCode a ConsumeQueue unit gets for this record.

    Note: RocketMQ fails the whole record (size -1) when ``DELAY`` is not an integer on the
    schedule topic; pymq-ref keeps the TAGS hash instead so that one bad property cannot end
    recovery.
    """
    tags = properties.get("TAGS")
    if tags:
        code = _TAGS_CODES.get(tags)
        if code is None:
            code = compute_tags_code(tags)
            if len(_TAGS_CODES) < 65536:  # tags repeat: memoise their hash
                _TAGS_CODES[tags] = code
    else:
        code = 0
    if topic == SCHEDULE_TOPIC:
        delay = properties.get("DELAY")
        if delay is not None:
            try:
                level = int(delay)
            except ValueError:
                return code
            max_level = max(delay_table) if delay_table else 0
            if level > max_level:
                level = max_level
            if level > 0:
                code = compute_deliver_timestamp(level, store_timestamp, delay_table)
    return code


def dispatch_request_from_record(record, delay_table: Mapping[int, int]) -> DispatchRequest:
    """Build the request from a decoded MessageRecord (``checkMessageAndReturnSize``)."""
    props = record.properties
    return DispatchRequest(
        topic=record.topic,
        queue_id=record.queue_id,
        commit_log_offset=record.phy_offset,
        msg_size=record.total_size,
        tags_code=dispatch_tags_code(record.topic, props, record.store_timestamp, delay_table),
        store_timestamp=record.store_timestamp,
        consume_queue_offset=record.queue_offset,
        keys=props.get("KEYS"),
        uniq_key=props.get("UNIQ_KEY"),
        sys_flag=record.sys_flag,
        prepared_transaction_offset=record.prepared_transaction_offset,
        properties=props,
    )


_SIZE_MAGIC = struct.Struct(">ii")
_HEAD = struct.Struct(">iiiiiqqiq")
_V4_MIDDLE = struct.Struct(">8sq8siqi")  # born host, store time, store host, reconsume, prepared, body length
_LONG = struct.Struct(">q")
_MID = struct.Struct(">iqi")
_SHORT = struct.Struct(">h")
_FAILED = (-1, None, False)
_TOPICS: dict[bytes, str] = {}  # raw topic -> str (topics repeat)


def check_message_and_return_size(buf, pos: int, check_crc: bool, delay_table: Mapping[int, int],
                                  with_request: bool = True, reject_torn: bool = False,
                                  fields: bool = False) -> tuple[int, DispatchRequest | tuple | None, bool]:
    """``CommitLog.checkMessageAndReturnSize``: the record at ``buf[pos]`` → ``(size, request, success)``.

    A blank is ``(0, None, True)``; zeros, a bad magic code, a truncated record or a CRC
    mismatch ``(-1, None, False)``; a TOTALSIZE that disagrees with the field lengths
    ``(TOTALSIZE, None, False)``; a good message ``(TOTALSIZE, request, True)`` — ``request`` is
    None when ``with_request`` is False (recovery without dispatch only needs the size).

    The checks, and their order, are those of :func:`pymq_ref.formats.message.decode_record`
    (tests compare the two on corrupted bytes), but nothing is built that the dispatchers do
    not read: no MessageRecord, no host objects, no body copy when ``buf`` is a memoryview (the
    CRC is computed over a slice of it), the properties parsed once. This is the per-record
    cost of recovery and of the reput scan.

    ``fields`` (the doctor's walk): instead of a request, the tuple ``(topic, queue_id, phy_offset,
    total_size, store_timestamp, queue_offset, sys_flag, properties_text)`` — the same checks, the
    properties left as text for the caller to read what it needs.

    ``reject_torn`` (pymq-ref's recovery; 4.9.4 has no such check): a record whose topic or
    properties hold a zero byte fails too. The body CRC covers only the body: a write torn by a
    power loss after the body leaves a record whose size fields and CRC check out but whose topic
    or properties end in the zeros the file held before (a sector that never reached the disk).
    """
    if pos + 8 > len(buf):
        return _FAILED
    total, magic = _SIZE_MAGIC.unpack_from(buf, pos)
    if magic == BLANK_MAGIC_CODE:
        return (0, None, True) if total >= END_FILE_MIN_BLANK_LENGTH else _FAILED
    v2 = magic == MESSAGE_MAGIC_CODE_V2
    if magic != MESSAGE_MAGIC_CODE and not v2:
        return _FAILED
    end = pos + total
    if total < 91:
        return total, None, False
    if end > len(buf):
        return _FAILED
    _total, _magic, body_crc, queue_id, _flag, queue_offset, phy_offset, sys_flag, _born_ts = _HEAD.unpack_from(buf, pos)
    if not sys_flag & 0x30:  # IPv4 hosts
        _born, store_ts, _store, _reconsume, prepared, body_len = _V4_MIDDLE.unpack_from(buf, pos + 48)
        body_at = pos + 88
    else:
        born_len = 20 if sys_flag & 0x10 else 8
        body_at = pos + 72 + born_len + (20 if sys_flag & 0x20 else 8)
        if body_at + 3 > end:
            return total, None, False
        store_ts = _LONG.unpack_from(buf, pos + 48 + born_len)[0]
        _reconsume, prepared, body_len = _MID.unpack_from(buf, body_at - 16)
    topic_len_at = body_at + body_len
    if body_len < 0 or topic_len_at + (4 if v2 else 3) > end:
        return _FAILED
    if v2:
        topic_len = _SHORT.unpack_from(buf, topic_len_at)[0]
        topic_at = topic_len_at + 2
    else:
        topic_len = buf[topic_len_at]
        if topic_len > 127:
            topic_len -= 256
        topic_at = topic_len_at + 1
    props_len_at = topic_at + topic_len
    if topic_len < 0 or props_len_at + 2 > end:
        return _FAILED
    props_len = _SHORT.unpack_from(buf, props_len_at)[0]
    props_at = props_len_at + 2
    if props_at + props_len != end:
        if props_len >= 0 and props_at + props_len > end:
            return _FAILED  # truncated properties
        return total, None, False  # TOTALSIZE disagrees with the field lengths
    if check_crc and body_len and _crc32(buf[body_at:topic_len_at]) & 0x7FFFFFFF != body_crc:
        return _FAILED
    if reject_torn and (0 in bytes(buf[topic_at:props_len_at]) or 0 in bytes(buf[props_at:end])):
        return _FAILED
    if not with_request:
        return total, None, True
    topic_raw = bytes(buf[topic_at:props_len_at])
    topic = _TOPICS.get(topic_raw)
    if topic is None:
        topic = _TOPICS[topic_raw] = topic_raw.decode("utf-8", "surrogateescape")
        if len(_TOPICS) > 65536:
            _TOPICS.clear()
    text = str(buf[props_at:end], "utf-8", "surrogateescape")
    if fields:
        return total, (topic, queue_id, phy_offset, total, store_ts, queue_offset, sys_flag, text), True
    properties = {}
    if text:
        for segment in text.split("\x02"):
            name, _, value = segment.partition("\x01")
            if name and value:
                properties[name] = value
    return total, DispatchRequest(
        topic, queue_id, phy_offset, total, dispatch_tags_code(topic, properties, store_ts, delay_table), store_ts,
        queue_offset, properties.get("KEYS"), properties.get("UNIQ_KEY"), sys_flag, prepared, properties), True


class Dispatcher(Protocol):
    def dispatch(self, request: DispatchRequest) -> None: ...


class BuildConsumeQueue:
    """``CommitLogDispatcherBuildConsumeQueue``: NOT and COMMIT messages get a unit."""

    def __init__(self, find_consume_queue: Callable, on_unit_written: Callable[[int], None] | None = None):
        self.find_consume_queue = find_consume_queue
        self.on_unit_written = on_unit_written

    def dispatch(self, req: DispatchRequest) -> None:
        if not req.sys_flag & 0x4:  # TRANSACTION_NOT_TYPE (0x0) or TRANSACTION_COMMIT_TYPE (0x8)
            ts = req.store_timestamp
            self.find_consume_queue(req.topic, req.queue_id).put_message_position_info(
                req.commit_log_offset, req.msg_size, req.tags_code, req.consume_queue_offset, ts)
            if self.on_unit_written is not None:
                self.on_unit_written(ts)


class BuildIndex:
    """``CommitLogDispatcherBuildIndex``: UNIQ_KEY and KEYS into the IndexFile (if enabled)."""

    def __init__(self, index_service, enabled: bool = True):
        self.index_service = index_service
        self.enabled = enabled

    def dispatch(self, req: DispatchRequest) -> None:
        if self.enabled:
            self.index_service.build_index(req)
