"""HTML rendering of a :class:`~pymq_ref.viz.layout.Layout`: hex rows, legend, field table.

Pure HTML + inline CSS (no JavaScript, no external assets), so it renders the same in a
live notebook and in the static book. Colours sit in ``style`` attributes on every byte
(some notebook front ends drop ``<style>`` blocks of untrusted output; attributes survive);
the ``<style>`` block only carries layout. Hovering a byte shows its field path, kind,
range and value (the ``title`` attribute).

The root element has class ``pymq-hexview``. Output is deterministic (nbval compares it).
"""

from __future__ import annotations

from html import escape

from pymq_ref.viz.layout import Elision, FieldRow, Layout
from pymq_ref.viz.palette import (
    MARK_COLOUR,
    MONO_FONT,
    MUTED_COLOUR,
    RULE_COLOUR,
    SANS_FONT,
    TEXT_COLOUR,
    kind_colour,
    kind_description,
)
from pymq_ref.viz.values import ascii_char, clip, format_value

STYLE = f"""<style>
.pymq-hexview {{ font-family: {SANS_FONT}; color: {TEXT_COLOUR}; font-size: 13px; margin: 0.5em 0; }}
.pymq-hexview .pymq-title {{ font-weight: 600; margin-bottom: 0.3em; }}
.pymq-hexview .pymq-hex {{ font-family: {MONO_FONT}; line-height: 1.45; overflow-x: auto; }}
.pymq-hexview .pymq-row {{ white-space: pre; margin: 0; padding: 0; }}
.pymq-hexview .pymq-off, .pymq-hexview .pymq-head {{ color: {MUTED_COLOUR}; }}
.pymq-hexview .pymq-elided {{ color: {MUTED_COLOUR}; font-style: italic; }}
.pymq-hexview .pymq-legend {{ margin: 0.4em 0; line-height: 1.9; }}
.pymq-hexview .pymq-chip {{ font-family: {MONO_FONT}; font-size: 12px; padding: 1px 6px;
  margin-right: 4px; border-radius: 3px; white-space: nowrap; }}
.pymq-hexview table.pymq-fields {{ border-collapse: collapse; font-size: 12px; margin: 0.3em 0; }}
.pymq-hexview table.pymq-fields th, .pymq-hexview table.pymq-fields td {{
  border-bottom: 1px solid {RULE_COLOUR}; padding: 2px 8px !important; text-align: left;
  vertical-align: top; line-height: 1.3; }}
.pymq-hexview table.pymq-fields td.pymq-num {{ text-align: right; }}
.pymq-hexview table.pymq-fields code {{ font-family: {MONO_FONT}; background: none; color: inherit;
  padding: 0; border: 0; font-size: 12px; }}
</style>"""


def _byte_title(cell) -> str:
    s = cell.span
    if s is None:
        return f"0x{cell.offset:X}: not part of any field"
    value = format_value(s.value, 40)
    tail = f" = {value}" if value else ""
    return f"{s.path} ({s.kind}) 0x{s.offset:X}..0x{s.end - 1:X}{tail}"


def _cell_style(cell) -> str:
    style = f"background:{kind_colour(cell.span.kind if cell.span else None)}"
    if cell.starts:
        style += f";box-shadow:inset 2px 0 0 {MARK_COLOUR}"
    return style


def render_rows(lay: Layout) -> str:
    """The ``<div class="pymq-hex">`` block: one ``pymq-row`` div per shown row or elision."""
    digits = lay.offset_digits
    out = ['<div class="pymq-hex">']
    head = " " * digits + "  " + _joined([f"{i:02X}" for i in range(lay.width)], [None] * lay.width)
    out.append(f'<div class="pymq-row pymq-head">{head}  ascii</div>')
    for line in lay.lines:
        if isinstance(line, Elision):
            out.append(
                f'<div class="pymq-row pymq-elided" data-reason="{line.reason}" '
                f'data-rows="{line.rows}">{" " * digits}  \u2026 {escape(line.describe())} '
                f"(0x{line.offset:X}..0x{line.end:X}) \u2026</div>"
            )
            continue
        cells, asc = [], []
        for c in line.cells:
            if c.byte is None:
                cells.append("  ")
                asc.append(" ")
                continue
            kind = c.span.kind if c.span else "none"
            attrs = (f'class="pymq-b pymq-k-{escape(kind)}" data-offset="{c.offset}" '
                     f'style="{_cell_style(c)}" title="{escape(_byte_title(c))}"')
            cells.append(f"<span {attrs}>{c.byte:02X}</span>")
            style = f"background:{kind_colour(c.span.kind if c.span else None)}"
            asc.append(f'<span class="pymq-a" style="{style}">{escape(ascii_char(c.byte))}</span>')
        owners = [c.span_id if c.byte is not None else None for c in line.cells]
        colours = [kind_colour(c.span.kind) if c.span is not None and c.byte is not None else None
                   for c in line.cells]
        hexes = _joined(cells, owners, colours)
        out.append(
            f'<div class="pymq-row"><span class="pymq-off">{line.offset:0{digits}X}</span>'
            f"  {hexes}  |{''.join(asc)}|</div>"
        )
    out.append("</div>")
    return "\n".join(out)


def _joined(parts, owners, colours=None) -> str:
    """Join byte cells; a gap between two bytes of the same field takes the field's colour."""
    text = ""
    for i, part in enumerate(parts):
        if i:
            gap = "  " if i % 8 == 0 else " "
            if colours and owners[i] is not None and owners[i] == owners[i - 1]:
                gap = f'<span style="background:{colours[i]}">{gap}</span>'
            text += gap
        text += part
    return text


def render_legend(kinds) -> str:
    """Coloured chips for the kinds present in the view (title = what the kind means)."""
    chips = [
        f'<span class="pymq-chip" style="background:{kind_colour(k)}" '
        f'title="{escape(kind_description(k))}">{escape(k)}</span>'
        for k in kinds
    ]
    return f'<div class="pymq-legend">{"".join(chips)}</div>'


def render_fields(fields: tuple[FieldRow, ...] | list[FieldRow], *, digits: int = 8,
                  value_width: int = 60, meaning=None) -> str:
    """The field table; each row carries ``data-offset``/``data-length``/``data-path``."""
    heads = ["offset", "len", "path", "kind", "value"] + (["meaning"] if meaning else [])
    out = ['<table class="pymq-fields">',
           "<thead><tr>" + "".join(f"<th>{h}</th>" for h in heads) + "</tr></thead>", "<tbody>"]
    for f in fields:
        s = f.span
        colour = kind_colour(s.kind)
        cols = [
            f"<td><code>0x{s.offset:0{digits}X}</code></td>",
            f'<td class="pymq-num">{s.length}</td>',
            f'<td style="padding-left:{0.5 + 1.2 * f.depth:.1f}em"><code>{escape(s.path)}</code></td>',
            f'<td><span class="pymq-chip" style="background:{colour}">{escape(s.kind)}</span></td>',
            f"<td><code>{escape(format_value(s.value, value_width))}</code></td>",
        ]
        if meaning:
            cols.append(f"<td>{escape(clip(meaning(s.path) or '', 300))}</td>")
        out.append(
            f'<tr class="pymq-field" data-offset="{s.offset}" data-length="{s.length}" '
            f'data-path="{escape(s.path)}" data-kind="{escape(s.kind)}">{"".join(cols)}</tr>'
        )
    out.append("</tbody></table>")
    return "\n".join(out)


def render(lay: Layout, *, title: str | None = None, table: bool = True, legend: bool = True,
           meaning=None) -> str:
    """The whole HTML view, root ``<div class="pymq-hexview">``."""
    parts = ['<div class="pymq-hexview">', STYLE]
    if title:
        parts.append(f'<div class="pymq-title">{escape(title)}</div>')
    parts.append(render_rows(lay))
    if legend and lay.kinds:
        parts.append(render_legend(lay.kinds))
    if table and lay.fields:
        parts.append(render_fields(lay.fields, digits=lay.offset_digits, meaning=meaning))
    parts.append("</div>")
    return "\n".join(parts)
