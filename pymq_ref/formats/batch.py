"""The body of a SEND_BATCH_MESSAGE request (``MessageDecoder.encodeMessages``; see the book's reference appendix,
§Batch body).

A batch body is a run of entries, each ``totalSize, magic (0), bodyCRC (0), flag, bodyLen, body,
propertiesLen (short), properties``. The broker turns every entry into an ordinary CommitLog
record (``CommitLog.DefaultAppendMessageCallback.doAppend`` for a ``MessageExtBatch``); :func:`batch_properties`
gives the properties string it stores.
Pure functions; no I/O.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Iterator

from ..errors import EncodeError, SizeMismatchError, TruncatedError
from .properties import MAX_PROPERTIES_LENGTH, PROPERTY_SEPARATOR, decode_properties, encode_properties
from .spans import Span

_ENTRY_HEAD = struct.Struct(">iiiii")  # total size, magic, body crc, flag, body length: 20 bytes
_SHORT = struct.Struct(">h")
_STR = ("utf-8", "surrogateescape")

FIELD_KINDS = {"total_size": "size", "magic_code": "magic", "body_crc": "crc", "flag": "flag",
               "body_length": "size", "body": "body", "properties_length": "size", "properties": "properties"}


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchEntry:
    """One message of a batch. ``properties_string`` keeps the exact decoded text (see MessageRecord)."""

    body: bytes
    properties: dict[str, str] = field(default_factory=dict)
    flag: int = 0
    magic_code: int = 0
    body_crc: int = 0
    properties_string: str | None = field(default=None, compare=False, repr=False)
    spans: tuple[Span, ...] = field(default=(), compare=False, repr=False)

    @property
    def properties_text(self) -> str:
        raw = self.properties_string
        if raw is not None and list(decode_properties(raw).items()) == list(self.properties.items()):
            return raw
        return encode_properties(self.properties)


def encode_batch(entries: list[BatchEntry]) -> bytes:
    """Concatenate the entries as the Java client does (magic and CRC written as given, 0 by default)."""
    out = []
    for i, entry in enumerate(entries):
        props = entry.properties_text.encode(*_STR)
        if len(props) > MAX_PROPERTIES_LENGTH:
            raise EncodeError("batch_entry", f"[{i}].properties", f"at most {MAX_PROPERTIES_LENGTH} UTF-8 bytes", len(props))
        body = bytes(entry.body)
        total = 20 + len(body) + 2 + len(props)
        out += [_ENTRY_HEAD.pack(total, entry.magic_code, entry.body_crc, entry.flag, len(body)), body,
                _SHORT.pack(len(props)), props]
    return b"".join(out)


def iter_batch(buf, *, base: int = 0, with_spans: bool = True) -> Iterator[BatchEntry]:
    """Decode the entries of a batch body; a malformed entry raises a typed FormatError."""
    pos, size = 0, len(buf)
    index = 0
    while pos < size:
        where = f"[{index}]"
        if pos + 20 > size:
            raise TruncatedError("batch_entry", f"{where}.total_size", base + pos, "a 20-byte entry head", f"{size - pos} bytes")
        total, magic, crc, flag, body_len = _ENTRY_HEAD.unpack_from(buf, pos)
        if total < 22 or pos + total > size:
            raise SizeMismatchError("batch_entry", f"{where}.total_size", base + pos,
                                    f"between 22 and {size - pos} (bytes left in the batch)", total)
        body_at = pos + 20
        if body_len < 0 or body_at + body_len + 2 > pos + total:
            raise TruncatedError("batch_entry", f"{where}.body", base + body_at,
                                 f"body_length {body_len} to fit in totalSize {total}", pos + total - body_at)
        props_len_at = body_at + body_len
        props_len = _SHORT.unpack_from(buf, props_len_at)[0]
        props_at = props_len_at + 2
        if props_len < 0 or props_at + props_len != pos + total:
            raise SizeMismatchError("batch_entry", f"{where}.properties_length", base + props_len_at,
                                    f"{pos + total - props_at} (the rest of totalSize {total})", props_len)
        body = bytes(buf[body_at:props_len_at])
        text = bytes(buf[props_at:props_at + props_len]).decode(*_STR)
        properties = decode_properties(text)
        spans: tuple[Span, ...] = ()
        if with_spans:
            layout = (("total_size", pos, 4, total), ("magic_code", pos + 4, 4, magic), ("body_crc", pos + 8, 4, crc),
                      ("flag", pos + 12, 4, flag), ("body_length", pos + 16, 4, body_len), ("body", body_at, body_len, body),
                      ("properties_length", props_len_at, 2, props_len), ("properties", props_at, props_len, properties))
            spans = tuple(Span(base + at, length, f"{where}.{path}", FIELD_KINDS[path], value)
                          for path, at, length, value in layout)
        yield BatchEntry(body=body, properties=properties, flag=flag, magic_code=magic, body_crc=crc,
                         properties_string=text, spans=spans)
        pos += total
        index += 1


def decode_batch(buf, *, base: int = 0, with_spans: bool = True) -> list[BatchEntry]:
    """All entries of a batch body."""
    return list(iter_batch(buf, base=base, with_spans=with_spans))


def batch_properties(entry_properties: str, batch_properties_string: str) -> str:
    """What the broker stores for one entry: its properties, a 0x02 unless already there, the batch's.

    ``batch_properties_string`` is the request's own properties plus ``CLUSTER``
    (``SendMessageProcessor.asyncSendBatchMessage``).
    """
    if not batch_properties_string:
        return entry_properties
    if entry_properties and not entry_properties.endswith(PROPERTY_SEPARATOR):
        entry_properties += PROPERTY_SEPARATOR
    return entry_properties + batch_properties_string


def _schema():
    import construct as cs

    from .schemas import register

    return register("batch_entry", cs.Struct(
        "total_size" / cs.Int32sb * "totalSize: length of this entry, this field included (22 + body + properties).",
        "magic_code" / cs.Int32sb * "magicCode: written as 0 by the client; the broker ignores it.",
        "body_crc" / cs.Int32sb * "bodyCRC: written as 0 by the client; the broker computes the CRC.",
        "flag" / cs.Int32sb * "flag: the message's application flag.",
        "body_length" / cs.Int32sb * "bodyLen: number of body bytes that follow (batches are never compressed).",
        "body" / cs.Bytes(cs.this.body_length) * "body: the payload.",
        "properties_length" / cs.Int16sb * "propertiesLength: UTF-8 length of the properties string.",
        "properties" / cs.Bytes(cs.this.properties_length) * "properties: this message's own properties (with its UNIQ_KEY).",
    ))


BATCH_ENTRY_SCHEMA = _schema()
