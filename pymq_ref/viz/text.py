"""Plain-text rendering of a :class:`~pymq_ref.viz.layout.Layout` (what nbval compares).

Each shown row is two lines: the hex dump line (absolute offset, bytes, ASCII) and a marker
line that puts the two-letter kind code (:data:`~pymq_ref.viz.palette.KIND_CODES`) under the
first byte of each field, ``--`` under the bytes that continue it, and names the fields
that start in the row. Output is pure ASCII apart from the decoded values, with no trailing
spaces, and depends only on the bytes and spans: it is byte-stable run after run.
"""

from __future__ import annotations

from pymq_ref.viz.layout import Elision, FieldRow, Layout, Row
from pymq_ref.viz.palette import kind_code
from pymq_ref.viz.values import ascii_char, clip, format_value


def render_rows(lay: Layout, *, markers: bool = True) -> list[str]:
    """The hex dump lines of a layout."""
    digits = lay.offset_digits
    gutter = " " * digits
    header = gutter + "  " + _join([f"{i:02X}" for i in range(lay.width)]) + "  ascii"
    out = [header.rstrip()]
    for line in lay.lines:
        if isinstance(line, Elision):
            out.append(f"{gutter}  ... {line.describe()} (0x{line.offset:X}..0x{line.end:X}) ...")
            continue
        hexes = [("  " if c.byte is None else f"{c.byte:02X}") for c in line.cells]
        text = "".join(" " if c.byte is None else ascii_char(c.byte) for c in line.cells)
        out.append(f"{line.offset:0{digits}X}  {_join(hexes)}  |{text}|")
        if markers:
            codes = []
            for c in line.cells:
                if c.span is None:
                    codes.append("  ")
                elif c.starts:
                    codes.append(kind_code(c.span.kind))
                else:
                    codes.append("--")
            names = [c.span.path for c in line.cells if c.span is not None and c.starts]
            marker = f"{gutter}  {_join(codes)}"
            if names:
                marker = marker.ljust(len(out[-1]) - lay.width - 2) + ", ".join(names)
            if marker.strip():  # a row no field touches gets no marker line
                out.append(marker.rstrip())
    return out


def _join(parts: list[str]) -> str:
    """Join per-byte columns with one space, two between the 8-byte halves."""
    text = ""
    for i, part in enumerate(parts):
        if i:
            text += "  " if i % 8 == 0 else " "
        text += part
    return text


def render_fields(fields: tuple[FieldRow, ...] | list[FieldRow], *, digits: int = 8,
                  value_width: int = 48, meaning=None) -> list[str]:
    """The field table: offset, length, path (indented by depth), kind, value[, meaning].

    ``meaning`` is an optional callable ``path -> str`` (the spec sentence).
    """
    heads = ["offset", "len", "path", "kind", "value"] + (["meaning"] if meaning else [])
    rows = []
    for f in fields:
        s = f.span
        row = [f"0x{s.offset:0{digits}X}", str(s.length), "  " * f.depth + s.path, s.kind,
               format_value(s.value, value_width)]
        if meaning:
            row.append(clip(meaning(s.path) or "", 100))
        rows.append(row)
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(heads)]
    right = {1}  # right-align the length column

    def fmt(cols):
        parts = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(cols)]
        return "  ".join(parts).rstrip()

    return [fmt(heads), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]


def render(lay: Layout, *, title: str | None = None, table: bool = True, markers: bool = True,
           meaning=None) -> str:
    """The whole text view: optional title, hex rows, field table."""
    out = []
    if title:
        out.append(title)
    out.extend(render_rows(lay, markers=markers))
    if table and lay.fields:
        out.append("")
        out.extend(render_fields(lay.fields, digits=lay.offset_digits, meaning=meaning))
    return "\n".join(out)
