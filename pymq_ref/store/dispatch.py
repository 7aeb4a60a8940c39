"""Dispatch ("reput"): turning CommitLog records into ConsumeQueue units and index entries.

``storage.md`` §11.4 and §11.8. A :class:`DispatchRequest` carries what the derived files need
from one record; :func:`dispatch_request_from_record` builds it from a decoded
:class:`~pymq_ref.formats.message.MessageRecord` exactly as ``checkMessageAndReturnSize`` does
(tagsCode from ``TAGS``; for ``SCHEDULE_TOPIC_XXXX`` the delivery time, ``delay.md`` §3).

Dispatchers are plain objects with ``dispatch(request)``; the store runs the same list
(:class:`BuildConsumeQueue` then :class:`BuildIndex`) live, during recovery, and anyone can
run it over a CommitLog to rebuild derived files (the doctor, Spark).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Protocol

from pymq_ref.formats.hashing import tags_code as compute_tags_code

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


class Dispatcher(Protocol):
    def dispatch(self, request: DispatchRequest) -> None: ...


class BuildConsumeQueue:
    """``CommitLogDispatcherBuildConsumeQueue``: NOT and COMMIT messages get a unit."""

    def __init__(self, find_consume_queue: Callable, on_unit_written: Callable[[int], None] | None = None):
        self.find_consume_queue = find_consume_queue
        self.on_unit_written = on_unit_written

    def dispatch(self, req: DispatchRequest) -> None:
        tran = req.sys_flag & 0xC
        if tran == TRANSACTION_NOT_TYPE or tran == TRANSACTION_COMMIT_TYPE:
            cq = self.find_consume_queue(req.topic, req.queue_id)
            cq.put_message_position_info(req.commit_log_offset, req.msg_size, req.tags_code,
                                         req.consume_queue_offset, req.store_timestamp)
            if self.on_unit_written is not None:
                self.on_unit_written(req.store_timestamp)


class BuildIndex:
    """``CommitLogDispatcherBuildIndex``: UNIQ_KEY and KEYS into the IndexFile (if enabled)."""

    def __init__(self, index_service, enabled: bool = True):
        self.index_service = index_service
        self.enabled = enabled

    def dispatch(self, req: DispatchRequest) -> None:
        if self.enabled:
            self.index_service.build_index(req)
