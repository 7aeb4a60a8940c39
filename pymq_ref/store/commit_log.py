"""CommitLog: the single append-only log of every message of every topic.

``store/src/main/java/org/apache/rocketmq/store/CommitLog.java``; the record: the book's reference appendix,
§CommitLog record. Theory of operation of a put:

1. *Outside the lock* the message is checked against the limits and encoded into its final
   bytes with QUEUEOFFSET, PHYSICALOFFSET and STORETIMESTAMP left at zero
   (:func:`encode_for_append`, byte-identical to :func:`pymq_ref.formats.message.encode_message`).
2. *Under the put lock* the store timestamp is read from the injected clock, the queue offset
   is looked up in ``topic_queue_table``, the record goes into the last segment — or, when
   ``len + 8 > remaining``, an END_OF_FILE blank fills that segment and the record goes to
   offset 0 of a new one — with one copy into the mapping, then the three fields are patched
   in place at their fixed positions (20, 28 and 56/68).
3. *After the lock* the put waits for the flush it asked for (SYNC_FLUSH, group commit) or
   leaves it to the background flusher (ASYNC_FLUSH).

Batches (``SEND_BATCH_MESSAGE``) are re-encoded entry by entry into ordinary records
(``CommitLog.putMessages``) and appended as one block that never straddles two segments.

This module does not build ConsumeQueues or indexes; an optional ``inline_dispatch`` callback
receives the dispatch requests of each append under the lock (the deterministic mode of the
store), otherwise the reput service reads them back from the log.
"""

from __future__ import annotations

import enum
import struct
import threading
import zlib
from zlib import crc32 as _crc32
from dataclasses import dataclass, field
from typing import Callable, Mapping

from pymq_ref.formats.batch import batch_properties, iter_batch
from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import (BLANK_MAGIC_CODE, END_FILE_MIN_BLANK_LENGTH, MESSAGE_MAGIC_CODE,
                                      MessageRecord, decode_record)
from pymq_ref.formats.msgid import offset_msg_id
from pymq_ref.formats.properties import MAX_PROPERTIES_LENGTH, decode_properties, encode_properties
from pymq_ref.store.clock import Clock
from pymq_ref.store.dispatch import _TAGS_CODES as _TAGS_CODE_MEMO
from pymq_ref.store.dispatch import SCHEDULE_TOPIC, DispatchRequest, dispatch_tags_code
from pymq_ref.store.errors import CreateMappedFileError, MessageIllegalError, PropertiesSizeExceededError
from pymq_ref.store.mapped_file import MappedFileQueue, TransientStorePool


class PutMessageStatus(enum.Enum):
    PUT_OK = "PUT_OK"
    FLUSH_DISK_TIMEOUT = "FLUSH_DISK_TIMEOUT"
    FLUSH_SLAVE_TIMEOUT = "FLUSH_SLAVE_TIMEOUT"
    SLAVE_NOT_AVAILABLE = "SLAVE_NOT_AVAILABLE"
    SERVICE_NOT_AVAILABLE = "SERVICE_NOT_AVAILABLE"
    CREATE_MAPEDFILE_FAILED = "CREATE_MAPEDFILE_FAILED"
    MESSAGE_ILLEGAL = "MESSAGE_ILLEGAL"
    PROPERTIES_SIZE_EXCEEDED = "PROPERTIES_SIZE_EXCEEDED"
    OS_PAGECACHE_BUSY = "OS_PAGECACHE_BUSY"
    UNKNOWN_ERROR = "UNKNOWN_ERROR"
    LMQ_CONSUME_QUEUE_NUM_EXCEEDED = "LMQ_CONSUME_QUEUE_NUM_EXCEEDED"
    # 5.x: only the broker's timer hook returns these (the store never does)
    WHEEL_TIMER_FLOW_CONTROL = "WHEEL_TIMER_FLOW_CONTROL"
    WHEEL_TIMER_MSG_ILLEGAL = "WHEEL_TIMER_MSG_ILLEGAL"
    WHEEL_TIMER_NOT_ENABLE = "WHEEL_TIMER_NOT_ENABLE"


@dataclass(slots=True)
class AppendMessageResult:
    wrote_offset: int
    wrote_bytes: int
    store_timestamp: int
    logics_offset: int  # queue offset of the (first) message
    msg_num: int
    store_host: Host
    record_offsets: tuple[int, ...] = ()

    @property
    def msg_id(self) -> str:
        """Offset msg id(s); a batch's are joined with ``,``."""
        offsets = self.record_offsets or (self.wrote_offset,)
        return ",".join(offset_msg_id(self.store_host, o) for o in offsets)


@dataclass(slots=True)
class PutMessageResult:
    status: PutMessageStatus
    append_result: AppendMessageResult | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is PutMessageStatus.PUT_OK


# -- encoding for the append path ---------------------------------------------------------------

_HEAD = struct.Struct(">iiiiiqqiq")
_MID = struct.Struct(">iqi")
_SHORT = struct.Struct(">h")
_QUEUE_AND_PHY = struct.Struct(">qq")  # QUEUEOFFSET at 20, PHYSICALOFFSET at 28
_LONG = struct.Struct(">q")
_pack_queue_and_phy = _QUEUE_AND_PHY.pack_into
_pack_long = _LONG.pack_into
_BLANK = struct.Struct(">ii")
_ZERO8 = bytes(8)
#: IPv4 born and store hosts: everything from TOTALSIZE to BODYLENGTH in one pack (88 bytes)
_V4_HEAD = struct.Struct(">iiiiiqqiq8sq8siqi")
_pack_v4_head = _V4_HEAD.pack
_HOST_BYTES: dict[Host, bytes] = {}
#: topic -> TOPICLENGTH byte + UTF-8 topic, for topics that passed the limits
_TOPIC_BYTES: dict[str, bytes] = {}


def _host_bytes(host: Host) -> bytes:
    raw = _HOST_BYTES.get(host)
    if raw is None:
        raw = host.to_bytes()
        if len(_HOST_BYTES) < 4096:
            _HOST_BYTES[host] = raw
    return raw


def properties_string(properties: Mapping[str, str | None]) -> str:
    """``encode_properties`` on the put path: one join, validated by counting separators
    (falls back to the format encoder, which names the offending entry or skips ``None``
    values, when they disagree)."""
    try:
        text = "\x02".join(map(_join_entry, properties.items()))
    except TypeError:  # a None (or non-str) value
        return encode_properties(properties)
    n = len(properties)
    if text.count("\x01") != n or text.count("\x02") != (n - 1 if n else 0):
        return encode_properties(properties)
    return text


_join_entry = "\x01".join  # (name, value) -> "name\x01value"


def java_length(s: str) -> int:
    """``String.length()``: UTF-16 code units."""
    return len(s) if s.isascii() else len(s.encode("utf-16-le", "surrogatepass")) // 2


@dataclass(slots=True)
class EncodedPut:
    """A put ready for the lock: the bytes and what the append and the dispatchers need."""

    data: bytes
    starts: tuple[int, ...]
    sizes: tuple[int, ...]
    topic: str
    queue_id: int
    sys_flag: int
    store_timestamp_pos: int
    properties: tuple[Mapping[str, str], ...]
    prepared_transaction_offset: int
    store_host: Host
    wait_store_msg_ok: bool = True

    @property
    def key(self) -> str:
        return f"{self.topic}-{self.queue_id}"


def encode_for_append(record: MessageRecord, max_message_size: int = 4 * 1024 * 1024,
                      props_string: str | None = None) -> EncodedPut:
    """Check the limits and encode ``record`` for :meth:`CommitLog.append` (v1 records only).

    QUEUEOFFSET, PHYSICALOFFSET and STORETIMESTAMP are written as 0 (patched under the lock);
    BODYCRC is computed when ``record.body_crc`` is None. The IPv6 bits of SYSFLAG are set from
    the hosts, as the broker does. Raises :class:`MessageIllegalError` or
    :class:`PropertiesSizeExceededError` (``DefaultMessageStore.checkMessage`` and
    ``CommitLog.MessageExtEncoder.encode``, in that order).
    """
    # one unpack of the record's tuple (cheaper than a dozen attribute reads on the put path)
    (topic, body, props_map, queue_id, flag, _queue_offset, _phy_offset, sys_flag, born_timestamp, born_host,
     _store_timestamp, store_host, reconsume_times, prepared, _magic, body_crc, _total, _text, _spans) = record
    topic_part = _TOPIC_BYTES.get(topic)  # a topic already checked (the common case)
    if topic_part is None and java_length(topic) > 127:
        raise MessageIllegalError("topic length (chars)", 127, java_length(topic))
    props_text = properties_string(props_map) if props_string is None else props_string
    props = props_text.encode("utf-8", "surrogateescape")
    props_len = len(props)
    if props_len > MAX_PROPERTIES_LENGTH:
        if java_length(props_text) > MAX_PROPERTIES_LENGTH:
            raise MessageIllegalError("properties length (chars)", MAX_PROPERTIES_LENGTH, java_length(props_text))
        raise PropertiesSizeExceededError("properties length (bytes)", MAX_PROPERTIES_LENGTH, props_len)
    if topic_part is None:
        topic_part = _topic_bytes(topic)
    body_len = len(body)
    if body_len > max_message_size:
        raise MessageIllegalError("body length", max_message_size, body_len)
    born_b = _HOST_BYTES.get(born_host) or _host_bytes(born_host)
    store_b = _HOST_BYTES.get(store_host) or _host_bytes(store_host)
    crc = _crc32(body) & 0x7FFFFFFF if body_crc is None else body_crc
    sys_flag &= ~0x30
    if len(born_b) == 8 and len(store_b) == 8:
        total = 90 + body_len + len(topic_part) + props_len
        data = b"".join((
            _pack_v4_head(total, MESSAGE_MAGIC_CODE, crc, queue_id, flag, 0, 0, sys_flag, born_timestamp, born_b, 0,
                          store_b, reconsume_times, prepared, body_len),
            body, topic_part, props_len.to_bytes(2, "big"), props))
        ts_pos = 56
    else:
        if len(born_b) == 20:
            sys_flag |= 0x10
        if len(store_b) == 20:
            sys_flag |= 0x20
        total = 74 + len(born_b) + len(store_b) + body_len + len(topic_part) + props_len
        data = b"".join((
            _HEAD.pack(total, MESSAGE_MAGIC_CODE, crc, queue_id, flag, 0, 0, sys_flag, born_timestamp),
            born_b, _ZERO8, store_b,
            _MID.pack(reconsume_times, prepared, body_len),
            body, topic_part, props_len.to_bytes(2, "big"), props,
        ))
        ts_pos = 48 + len(born_b)
    return EncodedPut(data, _ONE_START, (total,), topic, queue_id, sys_flag, ts_pos,
                      (props_map,), prepared, store_host, props_map.get("WAIT") != "false")


_ONE_START = (0,)


def _topic_bytes(topic: str) -> bytes:
    """TOPICLENGTH + TOPIC for ``topic`` (whose char length was checked), remembered for the next put."""
    topic_b = topic.encode("utf-8", "surrogateescape")
    if len(topic_b) > 127:  # Java would write a wrapped (byte) length; we refuse
        raise MessageIllegalError("topic length (UTF-8 bytes)", 127, len(topic_b))
    part = bytes((len(topic_b),)) + topic_b
    if len(_TOPIC_BYTES) >= 65536:
        _TOPIC_BYTES.clear()
    _TOPIC_BYTES[topic] = part
    return part


def encode_batch_for_append(batch: MessageRecord, max_message_size: int = 4 * 1024 * 1024) -> EncodedPut:
    """Re-encode a ``SEND_BATCH_MESSAGE`` (``batch.body`` = the batch body, ``batch.properties`` =
    the batch-level properties incl. ``CLUSTER``) into consecutive ordinary records
    (``CommitLog.DefaultAppendMessageCallback.doAppend``)."""
    if len(batch.body) > max_message_size:
        raise MessageIllegalError("batch body length", max_message_size, len(batch.body))
    if batch.sys_flag & 0xC:
        raise MessageIllegalError("batch transaction type (must be NOT)", 0, batch.sys_flag & 0xC)
    delay = batch.properties.get("DELAY")
    if delay is not None and delay.strip().lstrip("-").isdigit() and int(delay) > 0:
        raise MessageIllegalError("batch delay level (must be 0)", 0, int(delay))
    batch_props = encode_properties(batch.properties)
    if len(batch_props.encode("utf-8", "surrogateescape")) > MAX_PROPERTIES_LENGTH:
        raise PropertiesSizeExceededError("batch properties length (bytes)", MAX_PROPERTIES_LENGTH,
                                          len(batch_props.encode("utf-8", "surrogateescape")))
    parts, starts, sizes, props = [], [], [], []
    pos = 0
    first: EncodedPut | None = None
    for entry in iter_batch(batch.body, with_spans=False):
        text = batch_properties(entry.properties_text, batch_props)
        inner = MessageRecord(
            topic=batch.topic, body=entry.body, properties=entry.properties, queue_id=batch.queue_id,
            flag=entry.flag, sys_flag=batch.sys_flag, born_timestamp=batch.born_timestamp,
            born_host=batch.born_host, store_host=batch.store_host, reconsume_times=batch.reconsume_times,
            prepared_transaction_offset=0)
        enc = encode_for_append(inner, max_message_size, props_string=text)
        first = first or enc
        parts.append(enc.data)
        starts.append(pos)
        sizes.append(len(enc.data))
        props.append(decode_properties(text))
        pos += len(enc.data)
    if first is None:
        raise MessageIllegalError("batch message count", 1, 0)
    return EncodedPut(b"".join(parts), tuple(starts), tuple(sizes), batch.topic, batch.queue_id,
                      first.sys_flag, first.store_timestamp_pos, tuple(props), 0, batch.store_host,
                      batch.properties.get("WAIT") != "false")


# -- the log ---------------------------------------------------------------------------------------

class CommitLog:
    """The CommitLog segments plus the put path.

    Call order: construct → ``load()`` → recovery (see :mod:`pymq_ref.store.recovery`) →
    ``append`` / ``put`` / reads … → ``shutdown()``.
    """

    def __init__(self, directory: str, file_size: int, clock: Clock, *, read_only: bool = False,
                 delay_table: Mapping[int, int] | None = None, max_message_size: int = 4 * 1024 * 1024,
                 inline_dispatch: Callable[[list[DispatchRequest]], None] | None = None,
                 transient_pool: TransientStorePool | None = None, fast_fail_if_no_buffer: bool = False):
        self.queue = MappedFileQueue(directory, file_size, read_only=read_only, transient_pool=transient_pool,
                                     fast_fail_if_no_buffer=fast_fail_if_no_buffer)
        self.file_size = file_size
        self.clock = clock
        self.read_only = read_only
        self.delay_table = dict(delay_table or {})
        self.max_message_size = max_message_size
        self.inline_dispatch = inline_dispatch
        #: "{topic}-{queueId}" -> next queue offset
        self.topic_queue_table: dict[str, int] = {}
        self.put_lock = threading.Lock()
        #: ``beginTimeInLock``: the store time at which the put holding the lock took it (0: free)
        self.begin_time_in_lock = 0
        self.confirm_offset = -1

    def load(self, *, repair: bool = False) -> list[str]:
        """Map the segments (see :meth:`MappedFileQueue.load`); the power-loss repairs made."""
        return self.queue.load(repair=repair)

    # -- offsets ----------------------------------------------------------------------------
    @property
    def min_offset(self) -> int:
        """``getMinOffset``: start of the first file, -1 when there is none."""
        return self.queue.min_offset

    @property
    def max_offset(self) -> int:
        return self.queue.max_offset

    def roll_next_file(self, offset: int) -> int:
        return offset + self.file_size - offset % self.file_size

    # -- writing ----------------------------------------------------------------------------
    def append(self, enc: EncodedPut) -> AppendMessageResult:
        """Append a pre-encoded put under the put lock (``CommitLog.asyncPutMessage`` from taking the lock on)."""
        data = enc.data
        n = len(data)
        if n + END_FILE_MIN_BLANK_LENGTH > self.file_size:
            raise MessageIllegalError("record length + 8 (larger than a CommitLog file)", self.file_size, n + 8)
        advances = not enc.sys_flag & 0x4  # NOT (0x0) or COMMIT (0x8); PREPARED/ROLLBACK get 0
        starts = enc.starts
        single = len(starts) == 1
        ts_pos = enc.store_timestamp_pos
        key = f"{enc.topic}-{enc.queue_id}"
        with self.put_lock:
            now = self.clock.now_ms()
            self.begin_time_in_lock = now  # isOSPageCacheBusy: how long has the lock been held?
            try:
                files = self.queue.files
                mf = files[-1] if files else None
                if mf is None or mf.wrote_position == mf.file_size:
                    mf = self._new_file()
                pos = mf.wrote_position
                if n + END_FILE_MIN_BLANK_LENGTH > mf.file_size - pos:
                    remaining = mf.file_size - pos
                    _BLANK.pack_into(mf.append_buffer, pos, remaining, BLANK_MAGIC_CODE)
                    mf.wrote_position = mf.file_size
                    # (4.9.4 gives the full file the store timestamp of the message that goes to the
                    # next one, so a checkpoint written after flushing this file can name a message
                    # not yet on disk; the file keeps the timestamp of its own last message here)
                    mf = self._new_file()
                    pos = mf.wrote_position
                table = self.topic_queue_table
                queue_offset = table.get(key, 0) if advances else 0
                phy = mf.file_from_offset + pos
                mm = mf.append_buffer  # the mapping, or the transient pool's write buffer
                mm[pos:pos + n] = data
                if single:
                    _pack_queue_and_phy(mm, pos + 20, queue_offset, phy)
                    _pack_long(mm, pos + ts_pos, now)
                    offsets = (phy,)
                else:
                    offsets = tuple(phy + s for s in starts)
                    for i, s in enumerate(starts):
                        _QUEUE_AND_PHY.pack_into(mm, pos + s + 20, queue_offset + i if advances else 0, phy + s)
                        _LONG.pack_into(mm, pos + s + ts_pos, now)
                mf.wrote_position = pos + n
                mf.store_timestamp = now
                if advances:
                    table[key] = queue_offset + len(starts)
                if self.inline_dispatch is not None:
                    if single:
                        topic = enc.topic
                        props = enc.properties[0]
                        # a memoised TAGS hash is the whole tagsCode off the schedule topic
                        tags_code = _TAGS_CODE_MEMO.get(props.get("TAGS")) if topic != SCHEDULE_TOPIC else None
                        if tags_code is None:
                            tags_code = dispatch_tags_code(topic, props, now, self.delay_table)
                        reqs = [DispatchRequest(topic, enc.queue_id, phy, n, tags_code, now, queue_offset,
                                                props.get("KEYS"), props.get("UNIQ_KEY"), enc.sys_flag,
                                                enc.prepared_transaction_offset, props)]
                    else:
                        reqs = self._requests(enc, offsets, queue_offset, now, advances)
                    self.inline_dispatch(reqs)
            finally:
                self.begin_time_in_lock = 0
        return AppendMessageResult(phy, n, now, queue_offset, len(starts), enc.store_host, offsets)

    def _new_file(self):
        """The segment to append to after a roll (or the first one); CreateMappedFileError if none."""
        queue = self.queue
        try:
            mf = queue.get_last_mapped_file(0)
        except OSError as e:
            raise CreateMappedFileError(queue.directory, str(e)) from e
        if mf is None:
            raise CreateMappedFileError(queue.directory, "the transient store pool has no buffer left "
                                                         "(fastFailIfNoBufferInStorePool)")
        return mf

    def _requests(self, enc: EncodedPut, offsets, queue_offset: int, now: int, advances: bool) -> list[DispatchRequest]:
        reqs = []
        for i, (phy, size, props) in enumerate(zip(offsets, enc.sizes, enc.properties)):
            reqs.append(DispatchRequest(
                enc.topic, enc.queue_id, phy, size,
                dispatch_tags_code(enc.topic, props, now, self.delay_table), now,
                queue_offset + i if advances else 0, props.get("KEYS"), props.get("UNIQ_KEY"),
                enc.sys_flag, enc.prepared_transaction_offset, props))
        return reqs

    # -- reading ----------------------------------------------------------------------------
    def get_data(self, offset: int, size: int) -> bytes | None:
        """``getMessage(offset, size)``: the bytes if readable, else None."""
        return self.queue.read(offset, size)

    def look_message_by_offset(self, offset: int, size: int | None = None, *, with_spans: bool = False):
        """Decode the record at ``offset`` (reading its TOTALSIZE first when ``size`` is None)."""
        if size is None:
            head = self.queue.read(offset, 4)
            if head is None:
                return None
            size = int.from_bytes(head, "big", signed=True)
            if size <= 0:
                return None
        data = self.queue.read(offset, size)
        if data is None:
            return None
        return decode_record(data, 0, base=offset, with_spans=with_spans)

    def pickup_store_timestamp(self, offset: int, size: int) -> int:
        """``pickupStoreTimestamp``: STORETIMESTAMP of the record at ``offset``, -1 if unreadable."""
        if offset < self.min_offset:
            return -1
        data = self.queue.read(offset, size)
        if data is None or len(data) < 76:
            return -1
        sys_flag = int.from_bytes(data[36:40], "big", signed=True)
        pos = 68 if sys_flag & 0x10 else 56
        return _LONG.unpack_from(data, pos)[0]

    def shutdown(self) -> None:
        self.queue.shutdown()
