"""The CommitLog message record and the END_OF_FILE blank: encode, decode, scan (see the book's reference appendix,
§CommitLog record).

Theory of operation
-------------------
A record is a fixed 48-byte head (size, magic, CRC, queue id, flag, queue offset, physical
offset, sysflag, born time), the born host (8 or 20 bytes, by SYSFLAG bit 0x10), the store
time, the store host (8 or 20, bit 0x20), a fixed 16-byte middle (reconsume times, prepared
transaction offset, body length), then three length-prefixed strings: body, topic (1-byte
length in v1, 2-byte in v2) and properties. Because the head is fixed, the broker can encode a
record before taking the put lock and patch QUEUEOFFSET (20), PHYSICALOFFSET (28) and
STORETIMESTAMP in place afterwards.

:func:`decode_record` is the one parser of this layout: the store, the doctor, the CLI, the hex
view and the Spark reader all call it. With ``with_spans=True`` it also returns where every
field lies; without, it is the fast path used by scans. Bad bytes raise a
:class:`~pymq_ref.errors.FormatError` subclass naming the field, its absolute offset and what
was expected.

Pure functions over buffers (``bytes``, ``bytearray``, ``memoryview``, ``mmap``); no I/O.
"""

from __future__ import annotations

import base64
import struct
import zlib
from zlib import crc32 as _crc32
from dataclasses import dataclass, field
from typing import Iterator, NamedTuple, Union

from ..errors import BadMagicError, CrcMismatchError, EncodeError, SizeMismatchError, TruncatedError
from . import sysflag as sf
from .hashing import body_crc as compute_body_crc
from .hashing import tags_code as compute_tags_code
from .hosts import _CACHE as _HOSTS
from .hosts import Host
from .msgid import offset_msg_id
from .properties import KEY_SEPARATOR, KEYS, MAX_PROPERTIES_LENGTH, TAGS, UNIQ_KEY
from .properties import decode_properties, encode_properties, split_properties
from .spans import Span

MESSAGE_MAGIC_CODE = -626843481  # 0xDAA320A7, v1: 1-byte topic length
MESSAGE_MAGIC_CODE_V2 = -626843477  # 0xDAA320AB, 5.x v2: 2-byte topic length
BLANK_MAGIC_CODE = -875286124  # 0xCBD43194, END_OF_FILE filler
END_FILE_MIN_BLANK_LENGTH = 8

# Fixed positions inside a record (MessageDecoder / CommitLog constants).
MAGIC_CODE_POS = 4
QUEUE_OFFSET_POS = 20
PHY_OFFSET_POS = 28
SYSFLAG_POS = 36
BORN_TIMESTAMP_POS = 40
BORN_HOST_POS = 48

_HEAD = struct.Struct(">iiiiiqqiq")  # total size .. born timestamp: 48 bytes
_SIZE_MAGIC = struct.Struct(">ii")
_LONG = struct.Struct(">q")
_MID = struct.Struct(">iqi")  # reconsume times, prepared tx offset, body length: 16 bytes
_SHORT = struct.Struct(">h")
_BYTE = struct.Struct(">b")
_INT = struct.Struct(">i")
_STR = ("utf-8", "surrogateescape")  # keeps any byte sequence round-trippable

#: Span kind of every message field (the viz layer colours by kind).
FIELD_KINDS = {
    "total_size": "size", "magic_code": "magic", "body_crc": "crc", "queue_id": "queue",
    "flag": "flag", "queue_offset": "offset", "phy_offset": "offset", "sys_flag": "flag",
    "born_timestamp": "timestamp", "born_host": "host", "store_timestamp": "timestamp",
    "store_host": "host", "reconsume_times": "count", "prepared_transaction_offset": "offset",
    "body_length": "size", "body": "body", "topic_length": "size", "topic": "topic",
    "properties_length": "size", "properties": "properties",
}


def store_timestamp_pos(sys_flag: int) -> int:
    """Offset of STORETIMESTAMP inside a record: 56 with an IPv4 born host, 68 with IPv6."""
    return 68 if sys_flag & sf.BORNHOST_V6_FLAG else 56


def message_length(sys_flag: int, body_len: int, topic_len: int, properties_len: int, v2: bool = False) -> int:
    """TOTALSIZE for the given parts (``CommitLog.calMsgLength``)."""
    born = 20 if sys_flag & sf.BORNHOST_V6_FLAG else 8
    store = 20 if sys_flag & sf.STOREHOSTADDRESS_V6_FLAG else 8
    return 74 + born + store + (2 if v2 else 1) + body_len + topic_len + properties_len


def v4_properties_start(data, body_len: int) -> int | None:
    """Where the properties text starts in ``data``, when ``data`` is exactly one v1 record with
    IPv4 hosts (the fixed head is 88 bytes) whose BODYLENGTH is ``body_len`` and whose topic and
    properties lengths add up to ``len(data)``; None otherwise (decode it with :func:`decode_record`).

    The shortcut of readers that need only a record's properties (and fields they unpack
    themselves): no spans, no record built. The caller has checked TOTALSIZE, MAGICCODE and the
    SYSFLAG host bits."""
    size = len(data)
    topic_len_at = 88 + body_len
    if 88 <= topic_len_at < size - 2 and data[topic_len_at] < 128:  # v1: a 1-byte topic length
        props_len_at = topic_len_at + 1 + data[topic_len_at]
        if props_len_at + 2 <= size and props_len_at + 2 + _SHORT.unpack_from(data, props_len_at)[0] == size:
            return props_len_at + 2
    return None


class _MessageFields(NamedTuple):
    topic: str
    body: bytes
    properties: dict
    queue_id: int
    flag: int
    queue_offset: int
    phy_offset: int
    sys_flag: int
    born_timestamp: int
    born_host: Host
    store_timestamp: int
    store_host: Host
    reconsume_times: int
    prepared_transaction_offset: int
    magic_code: int
    body_crc: int | None
    total_size: int | None
    properties_string: str | None
    spans: tuple


_COMPARED = slice(0, 17)  # every field but properties_string and spans
_new = tuple.__new__


class MessageRecord(_MessageFields):
    """One CommitLog record (immutable). Field names are those of the JSON dump (``to_json``).

    Build one with keywords: ``MessageRecord(topic="T", body=b"...", properties={...}, ...)``;
    ``record.replace(queue_offset=3)`` makes a changed copy. ``total_size`` and ``body_crc``
    may be left ``None``: the encoder computes them. ``properties`` keeps the on-disk entry
    order; ``properties_string`` holds the exact decoded text so that re-encoding reproduces
    the bytes even when that text is not in canonical form. ``spans`` is filled by
    ``decode_*(..., with_spans=True)``. Equality ignores ``properties_string`` and ``spans``.

    (A tuple underneath: decoders build it with one ``tuple.__new__`` call, which keeps a full
    CommitLog scan close to a bare ``struct`` walk; a frozen dataclass costs ~10x more here.)
    """

    __slots__ = ()

    def __new__(cls, *, topic: str, body: bytes = b"", properties: dict[str, str] | None = None,
                queue_id: int = 0, flag: int = 0, queue_offset: int = 0, phy_offset: int = 0, sys_flag: int = 0,
                born_timestamp: int = 0, born_host: Host = Host("127.0.0.1", 0), store_timestamp: int = 0,
                store_host: Host = Host("127.0.0.1", 10911), reconsume_times: int = 0,
                prepared_transaction_offset: int = 0, magic_code: int = MESSAGE_MAGIC_CODE,
                body_crc: int | None = None, total_size: int | None = None, properties_string: str | None = None,
                spans: tuple[Span, ...] = ()) -> "MessageRecord":
        return _new(cls, (topic, bytes(body), dict(properties or {}), queue_id, flag, queue_offset, phy_offset,
                          sys_flag, born_timestamp, born_host, store_timestamp, store_host, reconsume_times,
                          prepared_transaction_offset, magic_code, body_crc, total_size, properties_string,
                          tuple(spans)))

    def replace(self, **changes) -> "MessageRecord":
        """A copy with some fields changed (``properties_string`` is dropped when properties change)."""
        if "properties" in changes and "properties_string" not in changes:
            changes["properties_string"] = None
        return self._replace(**changes)

    def __eq__(self, other) -> bool:
        return isinstance(other, MessageRecord) and self[_COMPARED] == other[_COMPARED]

    def __ne__(self, other) -> bool:
        return not self == other

    __hash__ = None  # properties is a dict

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields[:17], self))
        return f"MessageRecord({shown})"

    @property
    def tags(self) -> str | None:
        return self.properties.get(TAGS)

    @property
    def keys(self) -> list[str]:
        """Non-empty tokens of ``KEYS`` (space separated)."""
        return [k for k in self.properties.get(KEYS, "").split(KEY_SEPARATOR) if k]

    @property
    def uniq_key(self) -> str | None:
        return self.properties.get(UNIQ_KEY)

    @property
    def tags_code(self) -> int:
        """The tagsCode a dispatcher derives from ``TAGS`` (not the delay-topic special case)."""
        return compute_tags_code(self.tags)

    @property
    def crc_ok(self) -> bool:
        """Whether the stored BODYCRC matches the body (True when no CRC is set yet)."""
        return self.body_crc is None or self.body_crc == compute_body_crc(self.body)

    @property
    def msg_id(self) -> str:
        """The offset message id (store host + physical offset)."""
        return offset_msg_id(self.store_host, self.phy_offset)

    @property
    def transaction_type(self) -> int:
        return sf.transaction_type(self.sys_flag)

    def decompressed_body(self) -> bytes:
        """The body, inflated when COMPRESSED_FLAG is set (zlib: type 0 or 3)."""
        if not self.sys_flag & sf.COMPRESSED_FLAG:
            return self.body
        kind = (self.sys_flag & sf.COMPRESSION_TYPE_MASK) >> 8
        if kind not in (0, 3):
            raise NotImplementedError(f"compression type {kind} (1 = LZ4, 2 = ZSTD) is not supported; zlib only")
        return zlib.decompress(self.body)

    def to_json(self) -> dict:
        """The JSON object of ``pymq inspect --format jsonl`` (hosts as "ip:port", body in base64)."""
        return {
            "type": "message",
            "phy_offset": self.phy_offset,
            "total_size": self.total_size,
            "magic_code": self.magic_code,
            "body_crc": self.body_crc,
            "crc_ok": self.crc_ok,
            "queue_id": self.queue_id,
            "flag": self.flag,
            "queue_offset": self.queue_offset,
            "sys_flag": self.sys_flag,
            "born_timestamp": self.born_timestamp,
            "born_host": str(self.born_host),
            "store_timestamp": self.store_timestamp,
            "store_host": str(self.store_host),
            "reconsume_times": self.reconsume_times,
            "prepared_transaction_offset": self.prepared_transaction_offset,
            "topic": self.topic,
            "properties": dict(self.properties),
            "body_base64": base64.b64encode(self.body).decode("ascii"),
            "msg_id": self.msg_id,
        }


@dataclass(frozen=True, slots=True)
class BlankRecord:
    """The END_OF_FILE filler: ``total_size`` = bytes from here to the end of the segment."""

    phy_offset: int
    total_size: int
    magic_code: int = BLANK_MAGIC_CODE
    spans: tuple[Span, ...] = field(default=(), compare=False, repr=False)

    def to_json(self) -> dict:
        return {"type": "blank", "phy_offset": self.phy_offset, "total_size": self.total_size,
                "magic_code": self.magic_code}


Record = Union[MessageRecord, BlankRecord]


# --------------------------------------------------------------------------- encoding

def encode_message(record: MessageRecord) -> bytes:
    """The record's bytes. TOTALSIZE is always computed; BODYCRC is computed when ``body_crc`` is None.

    The v1/v2 layout follows ``magic_code``. Raises :class:`EncodeError` for values that do not
    fit the layout (topic too long for v1, properties over 32767 bytes, hosts that contradict
    the SYSFLAG IPv6 bits, ...).
    """
    magic = record.magic_code
    if magic not in (MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2):
        raise EncodeError("message", "magic_code", "MESSAGE_MAGIC_CODE (v1) or MESSAGE_MAGIC_CODE_V2", magic)
    v2 = magic == MESSAGE_MAGIC_CODE_V2
    sys_flag = record.sys_flag
    for name, host, bit in (("born_host", record.born_host, sf.BORNHOST_V6_FLAG),
                            ("store_host", record.store_host, sf.STOREHOSTADDRESS_V6_FLAG)):
        if host.is_v6 != bool(sys_flag & bit):
            want = "an IPv6" if sys_flag & bit else "an IPv4"
            raise EncodeError("message", name, f"{want} address (sys_flag bit {bit:#x} is {'set' if sys_flag & bit else 'clear'})", str(host))
    topic = record.topic.encode(*_STR)
    if not topic:
        raise EncodeError("message", "topic", "a non-empty topic", record.topic)
    if len(topic) > (32767 if v2 else 127):
        raise EncodeError("message", "topic", f"at most {32767 if v2 else 127} UTF-8 bytes" + ("" if v2 else " in a v1 record (use MESSAGE_MAGIC_CODE_V2)"), len(topic))
    raw = record.properties_string
    if raw is None or list(decode_properties(raw).items()) != list(record.properties.items()):
        raw = encode_properties(record.properties)
    properties = raw.encode(*_STR)
    if len(properties) > MAX_PROPERTIES_LENGTH:
        raise EncodeError("message", "properties", f"at most {MAX_PROPERTIES_LENGTH} UTF-8 bytes", len(properties))
    body = bytes(record.body)
    crc = compute_body_crc(body) if record.body_crc is None else record.body_crc
    total = message_length(sys_flag, len(body), len(topic), len(properties), v2)
    try:
        parts = [
            _HEAD.pack(total, magic, crc, record.queue_id, record.flag, record.queue_offset,
                       record.phy_offset, sys_flag, record.born_timestamp),
            record.born_host.to_bytes(),
            _LONG.pack(record.store_timestamp),
            record.store_host.to_bytes(),
            _MID.pack(record.reconsume_times, record.prepared_transaction_offset, len(body)),
            body,
            (_SHORT if v2 else _BYTE).pack(len(topic)),
            topic,
            _SHORT.pack(len(properties)),
            properties,
        ]
    except struct.error as exc:
        raise EncodeError("message", "fixed fields", "values that fit their Java int/long types", str(exc)) from None
    return b"".join(parts)


def encode_blank(remaining: int) -> bytes:
    """The 8 bytes written at the end of a full segment: ``remaining`` and BLANK_MAGIC_CODE."""
    if remaining < END_FILE_MIN_BLANK_LENGTH:
        raise EncodeError("blank", "total_size", f">= {END_FILE_MIN_BLANK_LENGTH}", remaining)
    return _SIZE_MAGIC.pack(remaining, BLANK_MAGIC_CODE)


# --------------------------------------------------------------------------- decoding

def decode_record(buf, pos: int = 0, *, base: int = 0, with_spans: bool = True,
                  check_crc: bool = False) -> Record | None:
    """Decode the record starting at ``buf[pos]``.

    Returns a :class:`MessageRecord`, a :class:`BlankRecord`, or ``None`` when TOTALSIZE and
    MAGICCODE are both zero (the unwritten tail of a live segment). ``base`` is the absolute
    offset of ``buf[0]`` (the segment's file-from offset), used for spans and errors.
    Raises :class:`TruncatedError`, :class:`BadMagicError`, :class:`SizeMismatchError` and,
    with ``check_crc``, :class:`CrcMismatchError`.

    This is the hot path of every scan (recovery, doctor, Spark): one ``unpack_from`` for the
    head, one for the IPv4 middle, a cache for repeated hosts and topics.
    """
    buf_len = len(buf)
    if not with_spans and pos + 88 <= buf_len:
        # Fast path: a well-formed v1 record with IPv4 hosts, decoded with one unpack from
        # TOTALSIZE to BODYLENGTH. Anything else (blank, zeros, v2, IPv6, a check that fails)
        # falls through to the general path below, which owns every error.
        (total, magic, crc, queue_id, flag, queue_offset, phy_offset, sys_flag, born_ts, born_raw, store_ts,
         store_raw, reconsume, prepared, body_len) = _unpack_v4_record(buf, pos)
        end = pos + total
        topic_len_at = pos + 88 + body_len
        if (magic == -626843481 and not sys_flag & 0x30 and end <= buf_len and body_len >= 0
                and topic_len_at + 3 <= end):
            topic_len = buf[topic_len_at]  # < 128: a non-negative v1 TOPICLENGTH byte
            props_at = topic_len_at + 3 + topic_len
            if topic_len < 128 and props_at <= end and _unpack_short(buf, props_at - 2)[0] == end - props_at:
                body = buf[pos + 88:topic_len_at]
                topic_raw = buf[topic_len_at + 1:props_at - 2]
                if body.__class__ is bytes:  # bytes and mmap slice to bytes
                    props_text = buf[props_at:end].decode("utf-8", "surrogateescape")
                else:  # a memoryview or bytearray
                    body, topic_raw = bytes(body), bytes(topic_raw)
                    props_text = str(buf[props_at:end], "utf-8", "surrogateescape")
                if not (check_crc and body_len and _crc32(body) & 0x7FFFFFFF != crc):
                    topic = _TOPICS.get(topic_raw)
                    if topic is None:
                        topic = _remember_topic(topic_raw)
                    properties = {}
                    if props_text:
                        for segment in props_text.split("\x02"):
                            name, _, value = segment.partition("\x01")
                            if name and value:
                                properties[name] = value
                    return _new(MessageRecord, (
                        topic, body, properties, queue_id, flag, queue_offset, phy_offset, sys_flag, born_ts,
                        _HOSTS.get(born_raw) or Host.from_bytes(born_raw), store_ts,
                        _HOSTS.get(store_raw) or Host.from_bytes(store_raw), reconsume, prepared, magic, crc,
                        total, props_text, ()))
    if pos + 8 > buf_len:
        if not any(buf[pos:buf_len]):
            return None
        raise TruncatedError("message", "total_size", base + pos, "8 bytes of size and magic code",
                             f"{buf_len - pos} bytes")
    total, magic = _SIZE_MAGIC.unpack_from(buf, pos)
    if magic == BLANK_MAGIC_CODE:
        return _blank(buf, pos, base, total, with_spans)
    if magic != MESSAGE_MAGIC_CODE and magic != MESSAGE_MAGIC_CODE_V2:
        if magic == 0 and total == 0:
            return None
        raise BadMagicError("message", "magic_code", base + pos + 4,
                            "0xDAA320A7 (message), 0xDAA320AB (message v2) or 0xCBD43194 (blank)",
                            f"{magic & 0xFFFFFFFF:#010x}")
    end = pos + total
    if total < 91 or end > buf_len:
        if total < 91:
            raise SizeMismatchError("message", "total_size", base + pos, "at least 91 (the smallest record)", total)
        raise TruncatedError("message", "total_size", base + pos, f"{total} bytes of record",
                             f"{buf_len - pos} bytes left in the buffer")
    head = _HEAD.unpack_from(buf, pos)
    sys_flag = head[7]
    if not sys_flag & 0x30:  # IPv4 born and store hosts: one unpack for the whole middle
        born_raw, store_ts, store_raw, reconsume, prepared, body_len = _V4_MIDDLE.unpack_from(buf, pos + 48)
        born_host = _HOSTS.get(born_raw) or Host.from_bytes(born_raw)
        store_host = _HOSTS.get(store_raw) or Host.from_bytes(store_raw)
        born_len = store_len = 8
        body_at = pos + 88
    else:
        born_len = 20 if sys_flag & 0x10 else 8
        store_len = 20 if sys_flag & 0x20 else 8
        body_at = pos + 72 + born_len + store_len
        if body_at + 3 > end:
            raise SizeMismatchError("message", "total_size", base + pos,
                                    f"at least {body_at + 3 - pos} with IPv6 hosts", total)
        at = pos + 48
        born_host = Host.from_bytes(buf[at:at + born_len])
        store_ts = _LONG.unpack_from(buf, at + born_len)[0]
        at += born_len + 8
        store_host = Host.from_bytes(buf[at:at + store_len])
        reconsume, prepared, body_len = _MID.unpack_from(buf, at + store_len)
    topic_len_at = body_at + body_len
    v2 = magic == MESSAGE_MAGIC_CODE_V2
    if body_len < 0 or topic_len_at + (4 if v2 else 3) > end:
        raise TruncatedError("message", "body", base + body_at, f"body_length {body_len} to fit in TOTALSIZE {total}",
                             f"{end - body_at} bytes left")
    body = bytes(buf[body_at:topic_len_at])
    if v2:
        topic_len = _SHORT.unpack_from(buf, topic_len_at)[0]
        topic_at = topic_len_at + 2
    else:
        topic_len = buf[topic_len_at]
        topic_len = topic_len - 256 if topic_len > 127 else topic_len
        topic_at = topic_len_at + 1
    props_len_at = topic_at + topic_len
    if topic_len < 0 or props_len_at + 2 > end:
        raise TruncatedError("message", "topic", base + topic_at, f"topic_length {topic_len} to fit in TOTALSIZE {total}",
                             f"{end - topic_at} bytes left")
    topic_raw = bytes(buf[topic_at:props_len_at])
    topic = _TOPICS.get(topic_raw)
    if topic is None:
        topic = _remember_topic(topic_raw)
    props_len = _SHORT.unpack_from(buf, props_len_at)[0]
    props_at = props_len_at + 2
    if props_at + props_len != end:
        expected = message_length(sys_flag, body_len, topic_len, props_len, v2)
        if props_len >= 0 and props_at + props_len > end:
            raise TruncatedError("message", "properties", base + props_at,
                                 f"properties_length {props_len} to fit in TOTALSIZE {total}", f"{end - props_at} bytes left")
        raise SizeMismatchError("message", "total_size", base + pos,
                                f"{expected} (the size recomputed from the field lengths)", total)
    crc = head[2]
    if check_crc and body_len and _crc32(body) & 0x7FFFFFFF != crc:
        raise CrcMismatchError("message", "body_crc", base + pos + 8,
                               f"{_crc32(body) & 0x7FFFFFFF} (masked CRC-32 of the body)", crc)
    props_text = bytes(buf[props_at:end]).decode("utf-8", "surrogateescape")
    properties = {}
    if props_text:
        for segment in props_text.split("\x02"):
            name, _, value = segment.partition("\x01")
            if name and value:
                properties[name] = value
    spans = ()
    if with_spans:
        spans = _message_spans(base + pos, born_len, store_len, body_at - pos - 16, body_at - pos, body_len,
                               topic_at - pos, topic_len, topic_at - topic_len_at, props_at - pos,
                               bytes(buf[props_at:end]),
                               (total, magic, crc, head[3], head[4], head[5], head[6], sys_flag, head[8],
                                born_host, store_ts, store_host, reconsume, prepared, body_len, body,
                                topic_len, topic, props_len, properties))
    return _new(MessageRecord, (topic, body, properties, head[3], head[4], head[5], head[6], sys_flag, head[8],
                                born_host, store_ts, store_host, reconsume, prepared, magic, crc, total,
                                props_text, spans))


_V4_MIDDLE = struct.Struct(">8sq8siqi")  # born host, store time, store host, reconsume, prepared offset, body len
#: TOTALSIZE .. BODYLENGTH of a record with IPv4 hosts (the fast path of decode_record)
_unpack_v4_record = struct.Struct(">iiiiiqqiq8sq8siqi").unpack_from
_unpack_short = _SHORT.unpack_from
_TOPICS: dict[bytes, str] = {}


def _remember_topic(raw: bytes) -> str:
    topic = raw.decode("utf-8", "surrogateescape")
    if len(_TOPICS) >= 65536:
        _TOPICS.clear()
    _TOPICS[raw] = topic
    return topic


def _blank(buf, pos: int, base: int, total: int, with_spans: bool) -> BlankRecord:
    if total < END_FILE_MIN_BLANK_LENGTH:
        raise SizeMismatchError("blank", "total_size", base + pos, f">= {END_FILE_MIN_BLANK_LENGTH}", total)
    spans = ()
    if with_spans:
        spans = (Span(base + pos, 4, "total_size", "size", total),
                 Span(base + pos + 4, 4, "magic_code", "magic", BLANK_MAGIC_CODE))
        rest = min(total, len(buf) - pos) - 8
        if rest > 0:
            spans += (Span(base + pos + 8, rest, "unused", "blank", None),)
    return BlankRecord(base + pos, total, BLANK_MAGIC_CODE, spans)


def _message_spans(start, born_len, store_len, mid, body_at, body_len, topic_at, topic_len, tl_size,
                   props_at, props_raw, values) -> tuple[Span, ...]:
    layout = (
        ("total_size", 0, 4), ("magic_code", 4, 4), ("body_crc", 8, 4), ("queue_id", 12, 4),
        ("flag", 16, 4), ("queue_offset", 20, 8), ("phy_offset", 28, 8), ("sys_flag", 36, 4),
        ("born_timestamp", 40, 8), ("born_host", 48, born_len), ("store_timestamp", 48 + born_len, 8),
        ("store_host", 56 + born_len, store_len), ("reconsume_times", mid, 4),
        ("prepared_transaction_offset", mid + 4, 8), ("body_length", mid + 12, 4), ("body", body_at, body_len),
        ("topic_length", topic_at - tl_size, tl_size), ("topic", topic_at, topic_len),
        ("properties_length", props_at - 2, 2), ("properties", props_at, len(props_raw)),
    )
    spans = []
    for (path, rel, length), value in zip(layout, values):
        if path == "properties":
            children = properties_spans(props_raw, start + props_at)
            spans.append(Span(start + rel, length, path, "properties", value, children))
        else:
            spans.append(Span(start + rel, length, path, FIELD_KINDS[path], value))
    return tuple(spans)


def properties_spans(raw: bytes, offset: int) -> tuple[Span, ...]:
    """One child span per kept property entry (``properties.NAME``), at absolute ``offset``.

    Splitting the UTF-8 bytes on 0x02 is exact: 0x01/0x02 never occur inside a multi-byte
    UTF-8 sequence, so byte positions and the Java char-based split agree.
    """
    spans = []
    text = raw.decode(*_STR)
    for start, end, name, value in split_properties(text):
        b_start = len(text[:start].encode(*_STR))
        b_len = len(text[start:end].encode(*_STR))
        spans.append(Span(offset + b_start, b_len, f"properties.{name}", "properties", value))
    return tuple(spans)


def decode_message(buf, pos: int = 0, *, base: int = 0, with_spans: bool = True,
                   check_crc: bool = False) -> MessageRecord:
    """Decode a message record at ``buf[pos]``; a blank or an empty tail is an error here."""
    record = decode_record(buf, pos, base=base, with_spans=with_spans, check_crc=check_crc)
    if not isinstance(record, MessageRecord):
        found = "END_OF_FILE blank record" if record is not None else "zeros (no record written here)"
        raise BadMagicError("message", "magic_code", base + pos + 4, "a message record", found)
    return record


def iter_records(buf, *, base: int = 0, start: int = 0, end: int | None = None,
                 with_spans: bool = False, check_crc: bool = False) -> Iterator[Record]:
    """Walk the records of one CommitLog segment held in ``buf``.

    Stops at the first all-zero header (end of written data) or after a blank record (nothing
    after a blank is meaningful). A record that fails validation raises after every good
    record before it has been yielded. ``end`` bounds the walk (default ``len(buf)``).
    """
    limit = len(buf) if end is None else end
    view = buf if end is None else memoryview(buf)[:end]
    pos = start
    decode = decode_record
    while pos < limit:
        record = decode(view, pos, base=base, with_spans=with_spans, check_crc=check_crc)
        if record is None:
            return
        yield record
        if record.__class__ is BlankRecord:  # decode_record builds exactly these two classes
            return
        pos += record.total_size


# --------------------------------------------------------------------------- executable spec

def _schema():
    import construct as cs

    from .schemas import register

    host = lambda bit: cs.IfThenElse(cs.this.sys_flag & bit, cs.Bytes(20), cs.Bytes(8))  # noqa: E731
    return register("message", cs.Struct(
        "total_size" / cs.Int32sb * "TOTALSIZE: length of the whole record, this field included (74 + host sizes + topic-length size + body + topic + properties).",
        "magic_code" / cs.Int32sb * "MAGICCODE: 0xDAA320A7 for a v1 message, 0xDAA320AB for a 5.x v2 message (2-byte topic length), 0xCBD43194 for the end-of-file blank.",
        "body_crc" / cs.Int32sb * "BODYCRC: CRC-32 of the body as stored, with the top bit cleared (crc32 & 0x7FFFFFFF), so it is never negative.",
        "queue_id" / cs.Int32sb * "QUEUEID: the queue of the topic this message was sent to.",
        "flag" / cs.Int32sb * "FLAG: an opaque int the producer sets (Message.flag); the broker never reads it.",
        "queue_offset" / cs.Int64sb * "QUEUEOFFSET: the message's index in its ConsumeQueue (0, 1, 2, ... per topic-queue), patched in under the put lock.",
        "phy_offset" / cs.Int64sb * "PHYSICALOFFSET: the CommitLog offset of this record's first byte (segment start + position), patched in under the put lock.",
        "sys_flag" / cs.Int32sb * "SYSFLAG: bit flags; 0x1 compressed, 0xC transaction type, 0x10 IPv6 born host, 0x20 IPv6 store host.",
        "born_timestamp" / cs.Int64sb * "BORNTIMESTAMP: when the producer sent it, epoch milliseconds.",
        "born_host" / host(0x10) * "BORNHOST: the producer's address, 4 (IPv4) or 16 (IPv6) address bytes and an int port.",
        "store_timestamp" / cs.Int64sb * "STORETIMESTAMP: the broker clock, epoch milliseconds, read inside the put lock so it never decreases along the log.",
        "store_host" / host(0x20) * "STOREHOSTADDRESS: the broker's address (brokerIP1 and listen port), 4 or 16 address bytes and an int port.",
        "reconsume_times" / cs.Int32sb * "RECONSUMETIMES: how many times this message was redelivered through the retry path.",
        "prepared_transaction_offset" / cs.Int64sb * "PREPAREDTRANSACTIONOFFSET: for a committed transactional message, the CommitLog offset of its half message; else 0.",
        "body_length" / cs.Int32sb * "BODYLENGTH: number of body bytes that follow.",
        "body" / cs.Bytes(cs.this.body_length) * "BODY: the payload as the producer sent it (zlib-compressed when SYSFLAG bit 0x1 is set).",
        "topic_length" / cs.IfThenElse(cs.this.magic_code == MESSAGE_MAGIC_CODE_V2, cs.Int16sb, cs.Int8sb) * "TOPICLENGTH: UTF-8 length of the topic, a signed byte in v1 (so at most 127), a short in v2.",
        "topic" / cs.Bytes(cs.this.topic_length) * "TOPIC: the topic name in UTF-8.",
        "properties_length" / cs.Int16sb * "PROPERTIESLENGTH: UTF-8 length of the properties string, a signed short (at most 32767).",
        "properties" / cs.Bytes(cs.this.properties_length) * "PROPERTIES: name\\x01value pairs joined by \\x02, in Java HashMap order.",
    ))


MESSAGE_SCHEMA = _schema()
