"""Field-level differences between the record you expected and the bytes an implementation wrote.

``assert actual == expected`` on two 200-byte records says *that* they differ; this says *which
fields* differ, where, and how — using the spans of the expected record (the one decoder), so a
failing conformance test reads like ``body_crc at 8: expected 74DBDF21 (1960566561), got F4DBDF21``.
Pure; never raises on bad ``actual`` bytes (a record that does not decode is compared byte-wise).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import FormatError
from ..formats.message import decode_message
from ..formats.spans import Span, walk


@dataclass(frozen=True, slots=True)
class FieldDifference:
    """One field whose bytes differ: its path and absolute offset in the expected record."""

    path: str
    offset: int
    expected: bytes
    actual: bytes
    expected_value: object = None
    actual_value: object = None

    def __str__(self) -> str:
        def show(raw: bytes, value) -> str:
            text = raw.hex().upper() if len(raw) <= 16 else raw[:16].hex().upper() + f"... ({len(raw)} bytes)"
            return text if value is None else f"{text} ({value!r})"
        return f"{self.path} at {self.offset}: expected {show(self.expected, self.expected_value)}, " \
               f"got {show(self.actual, self.actual_value)}"


def diff_message(expected: bytes, actual: bytes, *, base: int = 0) -> list[FieldDifference]:
    """The fields of message record ``expected`` whose bytes differ in ``actual``.

    Fields are the expected record's spans, innermost first where a field has parts (a property
    entry is reported rather than the whole properties string). Once the two records' layouts
    diverge (a length differs), later fields are reported as far as ``actual`` reaches. An empty
    list means the bytes are equal.
    """
    if bytes(expected) == bytes(actual):
        return []
    want = decode_message(expected, base=base, with_spans=True)
    try:
        got = decode_message(actual, base=base, with_spans=True)
        got_values = {s.path: s.value for s in walk(got.spans)}
    except FormatError:
        got_values = {}
    differences: list[FieldDifference] = []

    def compare(span: Span) -> bool:
        lo, hi = span.offset - base, span.end - base
        mine, theirs = bytes(expected[lo:hi]), bytes(actual[lo:hi])
        if mine == theirs:
            return False
        before = len(differences)
        for child in span.children:
            compare(child)
        if len(differences) == before:  # no part explains it (e.g. a separator): report the whole field
            differences.append(FieldDifference(span.path, span.offset, mine, theirs, span.value,
                                               got_values.get(span.path)))
        return True

    for span in want.spans:
        compare(span)
    if len(actual) > len(expected):
        differences.append(FieldDifference("(after the record)", base + len(expected), b"",
                                           bytes(actual[len(expected):])))
    return differences

