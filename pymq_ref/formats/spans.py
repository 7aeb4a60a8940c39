"""Spans: where each decoded field lives in the bytes.

Every decoder in ``pymq_ref.formats`` can return, next to the values, one :class:`Span` per field:
its absolute offset (file base + position), its length, its field path, its *kind* and its value.
The hex view, the field table, "explain this byte" and the JSON dump are all drawn from these
spans, so there is exactly one parser per layout. This module holds no parsing logic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

#: Field kinds. The viz layer gives each one a fixed colour for the whole book.
KINDS: dict[str, str] = {
    "size": "a length or size (TOTALSIZE, BODYLENGTH, TOPICLENGTH, ...)",
    "magic": "a magic code that identifies the record type",
    "crc": "a checksum",
    "queue": "a queue id",
    "flag": "flag bits (application flag, SYSFLAG)",
    "offset": "a queue offset or a physical CommitLog offset",
    "timestamp": "milliseconds since the epoch (or a time difference)",
    "host": "an IP address and port",
    "count": "a counter (reconsume times, index count ...)",
    "body": "the message body",
    "topic": "a topic name",
    "properties": "the properties string",
    "hash": "a hash (tagsCode, key hash, hash slot)",
    "link": "a pointer to another entry (index chain, slot head)",
    "blank": "filler: end-of-file blank, padding, unused space",
    "code": "a remoting command's code, language or version",
    "text": "text: a JSON header, a remark, a header field value",
}


@dataclass(frozen=True, slots=True)
class Span:
    """One field of a decoded structure.

    ``offset`` is absolute (segment base offset + position in the segment); ``path`` is the
    field name, dotted for nested fields (``properties.TAGS``); ``children`` refine the span
    (e.g. one child per property entry) and always lie inside it.
    """

    offset: int
    length: int
    path: str
    kind: str
    value: object = None
    children: tuple["Span", ...] = field(default=())

    @property
    def end(self) -> int:
        return self.offset + self.length

    def contains(self, offset: int) -> bool:
        return self.offset <= offset < self.end


def walk(spans: Iterable[Span]) -> Iterator[Span]:
    """Yield spans and, after each, its children (depth first)."""
    for span in spans:
        yield span
        yield from walk(span.children)


def innermost(spans: Iterable[Span], offset: int) -> Span | None:
    """The deepest span that covers ``offset``, or None."""
    for span in spans:
        if span.contains(offset):
            return innermost(span.children, offset) or span
    return None


def prefixed(spans: Iterable[Span], prefix: str) -> tuple[Span, ...]:
    """The same spans with ``prefix.`` put in front of every path (e.g. ``record[3].topic``)."""
    return tuple(
        Span(s.offset, s.length, f"{prefix}.{s.path}", s.kind, s.value, prefixed(s.children, prefix))
        for s in spans
    )
