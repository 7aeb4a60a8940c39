"""Pure layout of a byte view: which span owns each byte, which rows are shown, which are elided.

Input: a buffer, the spans a decoder returned for it (absolute offsets), and the buffer's
absolute base offset. Output: a list of :class:`Row` and :class:`Elision` lines plus the
field-table rows. The HTML and text renderers only draw this model, so both always agree
with each other and with the decoder.

Rules:

* rows are ``width`` bytes wide and aligned on absolute offsets (a record at offset 198
  starts mid-row, like ``hexdump -s``); cells outside the shown window are empty;
* each byte belongs to the *innermost* span covering it (a property entry rather than the
  whole properties string);
* a run of rows identical to the row before it — same bytes and same owning spans — is
  collapsed into one ``identical`` elision when it is at least ``collapse_identical`` rows;
* rows lying entirely inside one field are capped at ``max_field_rows`` per field: the rest
  become one ``field`` elision naming the field (the row where the field ends stays);
* at most ``max_rows`` lines are drawn; the rest become one ``limit`` elision.

Nothing here renders, imports display libraries or parses bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from pymq_ref.formats.spans import Span, walk


@dataclass(frozen=True, slots=True)
class Cell:
    """One byte position in a row. ``byte`` is None outside the shown window."""

    offset: int
    byte: int | None
    span: Span | None  # innermost span covering this byte
    span_id: int | None  # index of that span in walk order (identity, not equality)
    starts: bool  # first byte of ``span``


@dataclass(frozen=True, slots=True)
class Row:
    offset: int  # absolute offset of the row's first cell (a multiple of the row width)
    cells: tuple[Cell, ...]

    def key(self) -> tuple:
        """What makes two rows 'identical' for collapsing: bytes and owning spans."""
        return tuple((c.byte, c.span_id) for c in self.cells)

    def single_span(self) -> int | None:
        """The span id owning every cell of a full row, else None."""
        ids = {c.span_id for c in self.cells if c.byte is not None}
        if len(ids) != 1 or any(c.byte is None for c in self.cells):
            return None
        return next(iter(ids))


@dataclass(frozen=True, slots=True)
class Elision:
    """Rows not drawn. ``reason`` is ``identical``, ``field`` or ``limit``."""

    reason: str
    rows: int  # how many rows are hidden
    offset: int  # absolute offset of the first hidden byte
    end: int  # absolute offset just after the last hidden byte
    path: str | None = None  # the field, for ``field`` elisions

    def describe(self) -> str:
        noun = "row" if self.rows == 1 else "rows"
        if self.reason == "identical":
            return f"{self.rows} identical {noun}"
        if self.reason == "field":
            return f"{self.rows} more {noun} of {self.path}"
        return f"{self.rows} more {noun}"


Line = Row | Elision


@dataclass(frozen=True, slots=True)
class FieldRow:
    """One row of the field table: a span and its nesting depth."""

    span: Span
    depth: int


@dataclass(frozen=True, slots=True)
class Layout:
    """Everything a renderer needs."""

    start: int  # absolute offsets of the shown window [start, end)
    end: int
    width: int
    lines: tuple[Line, ...]
    fields: tuple[FieldRow, ...]
    kinds: tuple[str, ...]  # kinds present in the window, in first-seen order

    @property
    def offset_digits(self) -> int:
        """Hex digits of the offset gutter: 8, more for offsets past 4 GiB."""
        return max(8, len(f"{max(self.end - 1, 0):X}"))


def as_spans(spans: object) -> tuple[Span, ...]:
    """Accept a sequence of spans or any object with a ``spans`` attribute (a decoded record)."""
    if spans is None:
        return ()
    inner = getattr(spans, "spans", None)
    if inner is not None and not isinstance(spans, Span):
        return tuple(inner)
    if isinstance(spans, Span):
        return (spans,)
    return tuple(spans)


def walk_with_depth(spans: Iterable[Span], depth: int = 0):
    """Like :func:`pymq_ref.formats.spans.walk`, also yielding each span's depth."""
    for span in spans:
        yield span, depth
        yield from walk_with_depth(span.children, depth + 1)


def owners(spans: Sequence[Span], start: int, end: int) -> tuple[list[int | None], list[Span]]:
    """For each byte of ``[start, end)``: the walk-order id of its innermost span.

    Walk order visits a parent before its children, so painting in that order leaves the
    innermost span on top. Returns (ids per byte, spans by id).
    """
    flat = list(walk(spans))
    ids: list[int | None] = [None] * (end - start)
    for i, span in enumerate(flat):
        lo, hi = max(span.offset, start), min(span.end, end)
        if lo < hi:
            ids[lo - start : hi - start] = [i] * (hi - lo)
    return ids, flat


def layout(
    buf: bytes | bytearray | memoryview,
    spans: object = (),
    *,
    base: int = 0,
    start: int | None = None,
    end: int | None = None,
    width: int = 16,
    collapse_identical: int = 2,
    max_field_rows: int | None = 8,
    max_rows: int | None = None,
) -> Layout:
    """Lay out ``buf`` (whose first byte is at absolute offset ``base``) for display.

    ``start``/``end`` (absolute) narrow the window; by default the whole buffer is shown.
    ``collapse_identical=0`` and ``max_field_rows=None`` disable those elisions.
    """
    if width <= 0:
        raise ValueError("width must be positive")
    spans = as_spans(spans)
    buf = memoryview(buf).cast("B") if not isinstance(buf, (bytes, bytearray)) else buf
    lo = base if start is None else max(start, base)
    hi = base + len(buf) if end is None else min(end, base + len(buf))
    hi = max(hi, lo)
    ids, flat = owners(spans, lo, hi)

    rows: list[Row] = []
    first_row = lo - lo % width
    for row_start in range(first_row, hi, width):
        cells = []
        for off in range(row_start, row_start + width):
            if lo <= off < hi:
                sid = ids[off - lo]
                span = None if sid is None else flat[sid]
                starts = span is not None and (off == span.offset or off == lo)
                cells.append(Cell(off, buf[off - base], span, sid, starts))
            else:
                cells.append(Cell(off, None, None, None, False))
        rows.append(Row(row_start, tuple(cells)))

    lines = _collapse_identical(rows, width, collapse_identical)
    lines = _cap_fields(lines, flat, width, max_field_rows)
    lines = _cap_total(lines, max_rows)

    fields = tuple(
        FieldRow(span, depth)
        for span, depth in walk_with_depth(spans)
        if span.offset < hi and span.end > lo or (span.length == 0 and lo <= span.offset <= hi)
    )
    kinds: list[str] = []
    for sid in dict.fromkeys(i for i in ids if i is not None):
        kind = flat[sid].kind
        if kind not in kinds:
            kinds.append(kind)
    return Layout(lo, hi, width, tuple(lines), fields, tuple(kinds))


def _collapse_identical(rows: list[Row], width: int, min_run: int) -> list[Line]:
    out: list[Line] = []
    i = 0
    while i < len(rows):
        row = rows[i]
        out.append(row)
        j = i + 1
        while j < len(rows) and rows[j].key() == row.key():
            j += 1
        run = j - i - 1
        if min_run and run >= min_run:
            out.append(Elision("identical", run, rows[i + 1].offset, rows[j - 1].offset + width))
            i = j
        else:
            i += 1
    return out


def _cap_fields(lines: list[Line], flat: list[Span], width: int, cap: int | None) -> list[Line]:
    if cap is None:
        return lines
    out: list[Line] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        sid = line.single_span() if isinstance(line, Row) else None
        if sid is None:
            out.append(line)
            i += 1
            continue
        # a group: consecutive full rows of one span, with identical-elisions between them
        group: list[Line] = [line]
        j = i + 1
        while j < len(lines):
            nxt = lines[j]
            if isinstance(nxt, Row) and nxt.single_span() == sid:
                group.append(nxt)
            elif isinstance(nxt, Elision) and nxt.reason == "identical":
                group.append(nxt)
            else:
                break
            j += 1
        shown, hidden, hidden_from, hidden_to = [], 0, None, None
        drawn = 0
        for g in group:
            if isinstance(g, Row) and drawn < cap:
                shown.append(g)
                drawn += 1
            elif isinstance(g, Elision) and hidden == 0 and drawn < cap:
                shown.append(g)
            else:
                n = 1 if isinstance(g, Row) else g.rows
                hidden += n
                hidden_from = g.offset if hidden_from is None else hidden_from
                hidden_to = g.offset + width if isinstance(g, Row) else g.end
        out.extend(shown)
        if hidden:
            out.append(Elision("field", hidden, hidden_from, hidden_to, flat[sid].path))
        i = j
    return out


def _cap_total(lines: list[Line], cap: int | None) -> list[Line]:
    if cap is None or len(lines) <= cap:
        return lines
    rest = lines[cap:]
    hidden = sum(1 if isinstance(x, Row) else x.rows for x in rest)
    last = rest[-1]
    end = last.end if isinstance(last, Elision) else last.offset + len(last.cells)
    return lines[:cap] + [Elision("limit", hidden, rest[0].offset, end)]
