"""The byte view readers see in every chapter: hex rows coloured by field kind + field table.

>>> view = hexview(buf, record.spans, base=0, title="one record")   # doctest: +SKIP
>>> view            # in a notebook: HTML in the book, text in the text/plain output

A :class:`HexView` holds the layout (pure, from :mod:`pymq_ref.viz.layout`) and renders it
twice: ``_repr_html_`` for the book, ``__repr__``/``_repr_pretty_`` for the deterministic
plain-text view that nbval compares. Both come from the same spans, which come from the one
decoder in :mod:`pymq_ref.formats`. This module never parses bytes itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from pymq_ref.viz import htmlview, text
from pymq_ref.viz.layout import FieldRow, Layout, as_spans, layout, walk_with_depth
from pymq_ref.viz.reprs import TextAndHtml


@dataclass(frozen=True, repr=False)  # repr is the text view (TextAndHtml)
class HexView(TextAndHtml):
    """A rendered-on-demand byte view. Build it with :func:`hexview`."""

    layout: Layout
    title: str | None = None
    table: bool = True
    legend: bool = True
    meaning: Callable[[str], str] | None = field(default=None, repr=False)

    def text(self) -> str:
        """The plain-text view (hex + marker lines + field table)."""
        return text.render(self.layout, title=self.title, table=self.table, meaning=self.meaning)

    def html(self) -> str:
        """The HTML view (root ``div.pymq-hexview``)."""
        return htmlview.render(self.layout, title=self.title, table=self.table,
                               legend=self.legend, meaning=self.meaning)

    @property
    def fields(self) -> tuple[FieldRow, ...]:
        return self.layout.fields


def hexview(
    buf: bytes | bytearray | memoryview,
    spans: object = (),
    *,
    base: int = 0,
    start: int | None = None,
    end: int | None = None,
    title: str | None = None,
    width: int = 16,
    collapse_identical: int = 2,
    max_field_rows: int | None = 8,
    max_rows: int | None = None,
    table: bool = True,
    legend: bool = True,
    structure: str | None = None,
) -> HexView:
    """A byte view of ``buf`` (first byte at absolute offset ``base``) with the decoder's spans.

    ``spans`` may be a sequence of :class:`~pymq_ref.formats.spans.Span` or a decoded record
    (anything with a ``.spans`` attribute). ``start``/``end`` (absolute) show a window.
    ``collapse_identical``: collapse runs of at least that many repeated rows (0: never).
    ``max_field_rows``: rows drawn per long field before "... N more rows of <field>" (None:
    all). ``max_rows``: cap on drawn lines. ``structure`` (e.g. ``"message"``) adds a
    "meaning" column with the spec sentence of each field.
    """
    lay = layout(buf, spans, base=base, start=start, end=end, width=width,
                 collapse_identical=collapse_identical, max_field_rows=max_field_rows,
                 max_rows=max_rows)
    meaning = None
    if structure is not None:
        from pymq_ref.viz.explain import describe_field

        def meaning(path: str, _s=structure) -> str:
            return describe_field(_s, path)

    return HexView(lay, title=title, table=table, legend=legend, meaning=meaning)


def hex_text(buf, spans=(), **options) -> str:
    """Shortcut: the plain-text view as a string (same options as :func:`hexview`)."""
    return hexview(buf, spans, **options).text()


def hex_html(buf, spans=(), **options) -> str:
    """Shortcut: the HTML view as a string (same options as :func:`hexview`)."""
    return hexview(buf, spans, **options).html()


@dataclass(frozen=True, repr=False)  # repr is the text view (TextAndHtml)
class FieldTable(TextAndHtml):
    """The field table alone (no hex rows), with the same two reprs."""

    fields: tuple[FieldRow, ...]
    digits: int = 8
    meaning: Callable[[str], str] | None = field(default=None, repr=False)

    def text(self) -> str:
        return "\n".join(text.render_fields(self.fields, digits=self.digits, meaning=self.meaning))

    def html(self) -> str:
        body = htmlview.render_fields(self.fields, digits=self.digits, meaning=self.meaning)
        return f'<div class="pymq-hexview pymq-fieldtable">\n{htmlview.STYLE}\n{body}\n</div>'


def field_table(spans: object, *, structure: str | None = None, digits: int = 8) -> FieldTable:
    """A field table of every span (depth-first), optionally with the spec sentence per field."""
    fields = tuple(FieldRow(s, d) for s, d in walk_with_depth(as_spans(spans)))
    meaning = None
    if structure is not None:
        from pymq_ref.viz.explain import describe_field

        def meaning(path: str, _s=structure) -> str:
            return describe_field(_s, path)

    return FieldTable(fields, digits=digits, meaning=meaning)


@dataclass(frozen=True, repr=False)  # repr is the text view (TextAndHtml)
class KindLegend(TextAndHtml):
    """The palette itself: every kind's colour, text-view code and meaning."""

    kinds: tuple[str, ...]

    def text(self) -> str:
        from pymq_ref.viz.palette import kind_code, kind_colour, kind_description

        rows = [(k, kind_code(k), kind_colour(k), kind_description(k)) for k in self.kinds]
        w = max([4] + [len(k) for k in self.kinds])
        out = [f"{'kind':{w}}  code  colour   meaning", f"{'-' * w}  ----  -------  -------"]
        out += [f"{k:{w}}  {c}    {col}  {d}" for k, c, col, d in rows]
        return "\n".join(out)

    def html(self) -> str:
        from html import escape

        from pymq_ref.viz.palette import kind_code, kind_colour, kind_description

        rows = "".join(
            f'<tr><td><span class="pymq-chip" style="background:{kind_colour(k)}">{escape(k)}</span></td>'
            f"<td><code>{kind_code(k)}</code></td><td>{escape(kind_description(k))}</td></tr>"
            for k in self.kinds
        )
        return (f'<div class="pymq-hexview pymq-legendtable">\n{htmlview.STYLE}\n'
                f'<table class="pymq-fields"><thead><tr><th>kind</th><th>text code</th>'
                f"<th>meaning</th></tr></thead><tbody>{rows}</tbody></table>\n</div>")


def kind_legend(kinds=None) -> KindLegend:
    """The book's palette as a table (all kinds of :data:`~pymq_ref.formats.spans.KINDS` by default)."""
    from pymq_ref.formats.spans import KINDS

    return KindLegend(tuple(KINDS if kinds is None else kinds))
