""""Explain the byte at offset X": which field it belongs to, that field's range and value,
and the spec sentence for it.

The spec sentence comes from :func:`pymq_ref.formats.schemas.describe` (the construct schemas'
docs), so the book, the field tables and the schemas say the same thing. This module finds
the field with the decoder's spans; it never parses bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape

from pymq_ref.formats.spans import Span
from pymq_ref.viz.layout import as_spans
from pymq_ref.viz.palette import MONO_FONT, SANS_FONT, kind_colour, kind_description
from pymq_ref.viz.values import format_value
from pymq_ref.viz.reprs import TextAndHtml

_INDEX = re.compile(r"\[\d+\]")


def _candidates(path: str) -> list[str]:
    """Paths to try with ``describe``: the path itself, then without prefixes, then parents.

    ``record[2].properties.TAGS`` -> ``record.properties.TAGS``, ``properties.TAGS``, ``TAGS``,
    ``record.properties``, ``properties``, ...
    """
    segs = [s for s in _INDEX.sub("", path).split(".") if s]
    out = [path]
    for stop in range(len(segs), 0, -1):
        for begin in range(stop):
            cand = ".".join(segs[begin:stop])
            if cand not in out:
                out.append(cand)
    return out


def describe_field(structure: str, path: str) -> str:
    """The spec sentence of a field, or "" if the schemas do not document it.

    Falls back from a nested or prefixed path to its parents (a property entry is explained
    by the properties field). Never raises: a missing sentence must not break a view.
    """
    try:
        from pymq_ref.formats.schemas import describe
    except ImportError:  # formats not there yet: views still work without sentences
        return ""
    for cand in _candidates(path):
        try:
            sentence = describe(structure, cand)
        except (KeyError, LookupError, ValueError, AttributeError, TypeError):
            continue
        if sentence:
            return sentence
    return ""


def chain(spans: tuple[Span, ...], offset: int) -> tuple[Span, ...]:
    """The spans covering ``offset``, outermost first (the last one is the innermost)."""
    found: list[Span] = []
    level = spans
    while True:
        hit = next((s for s in level if s.contains(offset)), None)
        if hit is None:
            return tuple(found)
        found.append(hit)
        level = hit.children


@dataclass(frozen=True, repr=False)  # repr is the text view (TextAndHtml)
class Explanation(TextAndHtml):
    """What one byte is. ``span`` is the innermost field covering it (None: no field)."""

    offset: int
    byte: int | None
    span: Span | None
    parents: tuple[Span, ...]
    raw: bytes  # the field's bytes (as far as the buffer holds them)
    sentence: str

    @property
    def path(self) -> str | None:
        return self.span.path if self.span else None

    @property
    def kind(self) -> str | None:
        return self.span.kind if self.span else None

    @property
    def range(self) -> tuple[int, int] | None:
        """Absolute ``(first, end)`` of the field: ``end`` is exclusive."""
        return (self.span.offset, self.span.end) if self.span else None

    @property
    def value(self) -> object:
        return self.span.value if self.span else None

    def text(self) -> str:
        b = "--" if self.byte is None else f"0x{self.byte:02X}"
        lines = [f"byte    0x{self.offset:X} ({self.offset}) = {b}"]
        if self.span is None:
            lines.append("field   (none: not part of any decoded field)")
            return "\n".join(lines)
        s = self.span
        within = self.offset - s.offset + 1
        lines.append(f"field   {s.path}  [{s.kind}: {kind_description(s.kind)}]")
        if self.parents:
            lines.append("inside  " + " > ".join(p.path for p in self.parents))
        lines.append(f"range   0x{s.offset:X}..0x{s.end - 1:X} ({s.length} bytes; this is byte {within})")
        raw = self.raw.hex(" ").upper()
        lines.append("bytes   " + (raw if len(raw) <= 72 else raw[:69] + "..."))
        lines.append(f"value   {format_value(s.value, 72)}")
        if self.sentence:
            lines.append(f"spec    {self.sentence}")
        return "\n".join(lines)

    def html(self) -> str:
        s = self.span
        colour = kind_colour(s.kind if s else None)
        rows = "".join(
            f'<tr><th style="text-align:left;padding:2px 10px 2px 0;vertical-align:top">{escape(k)}</th>'
            f'<td style="padding:2px 0">{v}</td></tr>'
            for k, v in self._html_rows()
        )
        return (
            f'<div class="pymq-explain" style="font-family:{SANS_FONT};font-size:13px;'
            f'border-left:6px solid {colour};padding:4px 10px;margin:0.5em 0">'
            f"<table>{rows}</table></div>"
        )

    def _html_rows(self):
        mono = f'style="font-family:{MONO_FONT}"'
        b = "--" if self.byte is None else f"0x{self.byte:02X}"
        yield "byte", f"<code {mono}>0x{self.offset:X}</code> ({self.offset}) = <code {mono}>{b}</code>"
        s = self.span
        if s is None:
            yield "field", "none: not part of any decoded field"
            return
        chip = (f'<span style="background:{kind_colour(s.kind)};padding:0 5px;border-radius:3px">'
                f"{escape(s.kind)}</span>")
        yield "field", f"<code {mono}>{escape(s.path)}</code> {chip} {escape(kind_description(s.kind))}"
        if self.parents:
            yield "inside", escape(" > ".join(p.path for p in self.parents))
        within = self.offset - s.offset + 1
        yield "range", (f"<code {mono}>0x{s.offset:X}..0x{s.end - 1:X}</code> "
                        f"({s.length} bytes; this is byte {within})")
        raw = self.raw.hex(" ").upper()
        yield "bytes", f"<code {mono}>{escape(raw if len(raw) <= 96 else raw[:93] + '...')}</code>"
        yield "value", f"<code {mono}>{escape(format_value(s.value, 96))}</code>"
        if self.sentence:
            yield "spec", escape(self.sentence)


def explain(buf, spans: object, offset: int, structure: str = "message", *, base: int = 0) -> Explanation:
    """Explain the byte at absolute ``offset`` of ``buf`` (whose first byte is at ``base``).

    ``spans`` are the decoder's spans (or a decoded record). The innermost span covering the
    offset is the field; its spec sentence comes from ``describe(structure, path)``.
    """
    spans = as_spans(spans)
    pos = offset - base
    byte = buf[pos] if 0 <= pos < len(buf) else None
    found = chain(spans, offset)
    if not found:
        return Explanation(offset, byte, None, (), b"", "")
    span = found[-1]
    lo, hi = max(span.offset - base, 0), min(span.end - base, len(buf))
    raw = bytes(buf[lo:hi]) if lo < hi else b""
    sentence = describe_field(structure, span.path)
    return Explanation(offset, byte, span, found[:-1], raw, sentence)
