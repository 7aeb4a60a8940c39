"""The byte views: colours follow spans, the field table follows spans, elisions count right,
the text view is byte-stable."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pymq_ref.formats.message import decode_message
from pymq_ref.formats.spans import KINDS, Span, innermost, walk
from pymq_ref.viz import Elision, Row, hexview, layout
from pymq_ref.viz.palette import KIND_CODES, KIND_COLOURS, UNCOVERED_COLOUR, kind_colour

VECTOR3 = bytes.fromhex(
    "000000C6DAA320A769C865ED000000000000000000000000000000000000000000000000000000000000018BCF"
    "E568007F0000010000C3500000018BCFE5687B7F00000100002A9F0000000000000000000000000000000E4865"
    "6C6C6F20526F636B65744D5109546F7069635465737400544B455953014B45593102554E49515F4B4559013746"
    "30303030303131323334303030304142434430303030303036343030303102434C5553544552014465666175"
    "6C74436C757374657202544147530154616741"
)


# ------------------------------------------------------------------ helpers

class _Collect(HTMLParser):
    """Collects byte cells (offset -> style/title) and field-table rows from a view's HTML."""

    def __init__(self):
        super().__init__()
        self.bytes: dict[int, dict] = {}
        self.fields: list[tuple[int, int, str, str]] = []
        self.roots: list[str] = []
        self.elided: list[tuple[str, int]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if "pymq-hexview" in cls:
            self.roots.append(tag)
        if "pymq-b" in cls:
            self.bytes[int(a["data-offset"])] = a
        if "pymq-field" in cls:
            self.fields.append((int(a["data-offset"]), int(a["data-length"]), a["data-path"], a["data-kind"]))
        if "pymq-elided" in cls:
            self.elided.append((a["data-reason"], int(a["data-rows"])))


def parse(html: str) -> _Collect:
    c = _Collect()
    c.feed(html)
    return c


def background(style: str) -> str:
    return dict(p.split(":", 1) for p in style.split(";"))["background"]


@st.composite
def spans_over(draw, max_len=160):
    """A buffer, its absolute base, and a random span tree over part of it (some gaps)."""
    n = draw(st.integers(1, max_len))
    base = draw(st.integers(0, 2**40))
    buf = draw(st.binary(min_size=n, max_size=n))
    kinds = st.sampled_from(sorted(KINDS))
    spans, pos, i = [], 0, 0
    while pos < n:
        length = draw(st.integers(1, n - pos))
        children = ()
        if length >= 3 and draw(st.booleans()):
            c_len = draw(st.integers(1, length - 1))
            c_at = draw(st.integers(0, length - c_len))
            children = (Span(base + pos + c_at, c_len, f"f{i}.child", draw(kinds), i),)
        if draw(st.integers(0, 4)) > 0:  # leave some gaps uncovered
            spans.append(Span(base + pos, length, f"f{i}", draw(kinds), i, children))
        pos += length
        i += 1
    return buf, base, tuple(spans)


# ------------------------------------------------------------------ palette

def test_palette_covers_exactly_the_span_kinds_with_distinct_colours():
    assert set(KIND_COLOURS) == set(KINDS)
    assert set(KIND_CODES) == set(KINDS)
    assert len(set(KIND_COLOURS.values())) == len(KIND_COLOURS)
    assert len(set(KIND_CODES.values())) == len(KIND_CODES)
    assert all(len(code) == 2 for code in KIND_CODES.values())


# ------------------------------------------------------------------ HTML

@settings(max_examples=150, deadline=None)
@given(spans_over())
def test_every_byte_has_its_innermost_span_colour_and_path(case):
    buf, base, spans = case
    html = hexview(buf, spans, base=base, collapse_identical=0, max_field_rows=None).html()
    got = parse(html)
    assert got.roots == ["div"]
    assert sorted(got.bytes) == list(range(base, base + len(buf)))
    for off, attrs in got.bytes.items():
        span = innermost(spans, off)
        assert background(attrs["style"]) == kind_colour(span.kind if span else None)
        if span is None:
            assert "not part of any field" in attrs["title"]
        else:
            assert attrs["title"].startswith(f"{span.path} ({span.kind})")
            assert f"pymq-k-{span.kind}" in attrs["class"].split()
        assert attrs.get("style").count("box-shadow") == (1 if span and off == span.offset else 0)


@settings(max_examples=100, deadline=None)
@given(spans_over())
def test_field_table_rows_are_the_spans_in_walk_order(case):
    buf, base, spans = case
    view = hexview(buf, spans, base=base)
    rows = parse(view.html()).fields
    assert rows == [(s.offset, s.length, s.path, s.kind) for s in walk(spans)]
    text_rows = view.text().split("\n\n", 1)[1].splitlines()[2:] if spans else []
    assert len(text_rows) == len(list(walk(spans)))
    digits = view.layout.offset_digits
    for line, span in zip(text_rows, walk(spans)):
        cols = line.split()
        assert cols[:4] == [f"0x{span.offset:0{digits}X}", str(span.length), span.path, span.kind]


def test_vector3_html_colours_match_decoder_spans():
    record = decode_message(VECTOR3)
    got = parse(hexview(VECTOR3, record).html())
    assert len(got.bytes) == 198
    for span in walk(record.spans):
        if span.children:
            continue
        for off in (span.offset, span.end - 1):
            assert background(got.bytes[off]["style"]) == KIND_COLOURS[span.kind]
    assert background(got.bytes[8]["style"]) == KIND_COLOURS["crc"]
    assert background(got.bytes[0x58]["style"]) == KIND_COLOURS["body"]


def test_html_is_self_contained():
    html = hexview(VECTOR3, decode_message(VECTOR3)).html()
    assert html.startswith('<div class="pymq-hexview">')
    for banned in ("<script", "<link", "http://", "https://", "@import", "url("):
        assert banned not in html


def test_uncovered_bytes_are_white():
    got = parse(hexview(bytes(4), ()).html())
    assert {background(a["style"]) for a in got.bytes.values()} == {UNCOVERED_COLOUR}


# ------------------------------------------------------------------ layout: rows and elisions

def _rows_represented(lay) -> int:
    return sum(1 if isinstance(x, Row) else x.rows for x in lay.lines)


@settings(max_examples=150, deadline=None)
@given(spans_over(max_len=400), st.integers(0, 4), st.one_of(st.none(), st.integers(1, 5)),
       st.one_of(st.none(), st.integers(1, 10)))
def test_elisions_account_for_every_row(case, collapse, field_cap, max_rows):
    buf, base, spans = case
    lay = layout(buf, spans, base=base, collapse_identical=collapse, max_field_rows=field_cap,
                 max_rows=max_rows)
    first = base - base % 16
    expected_rows = (base + len(buf) - first + 15) // 16
    assert _rows_represented(lay) == expected_rows
    offsets = [x.offset for x in lay.lines]
    assert offsets == sorted(offsets)
    if max_rows is not None:
        assert len(lay.lines) <= max_rows + 1


def test_identical_zero_rows_collapse_into_one_line():
    lay = layout(bytes(16 * 10), ())
    assert isinstance(lay.lines[0], Row)
    assert lay.lines[1] == Elision("identical", 9, 16, 160)
    assert len(lay.lines) == 2
    text = hexview(bytes(16 * 10), ()).text()
    assert "... 9 identical rows (0x10..0xA0) ..." in text


def test_short_runs_are_not_collapsed():
    lay = layout(bytes(32), ())  # one repeat only: hiding it would save nothing
    assert [type(x) for x in lay.lines] == [Row, Row]
    assert len(layout(bytes(16 * 10), (), collapse_identical=0).lines) == 10


def test_identical_rows_in_different_fields_are_not_collapsed():
    spans = tuple(Span(i * 16, 16, f"f{i}", "blank") for i in range(6))
    assert all(isinstance(x, Row) for x in layout(bytes(96), spans).lines)


def test_long_field_is_capped_with_a_named_marker():
    body = bytes(range(256)) * 4  # 64 distinct rows
    spans = (Span(0, 4, "body_length", "size", 1024), Span(4, 1024, "body", "body"))
    buf = b"\0\0\4\0" + body
    lay = layout(buf, spans, max_field_rows=3)
    elisions = [x for x in lay.lines if isinstance(x, Elision)]
    assert len(elisions) == 1
    (e,) = elisions
    assert e.reason == "field" and e.path == "body"
    # row 0 holds the size and starts the body: not a "body-only" row; rows 1..63 are body-only
    assert e.rows == 63 - 3
    assert _rows_represented(lay) == 65
    assert lay.lines[-1].offset == 1024  # the row where the body ends is still drawn
    assert "... 60 more rows of body" in hexview(buf, spans, max_field_rows=3).text()
    assert 'data-reason="field" data-rows="60"' in hexview(buf, spans, max_field_rows=3).html()


def test_max_rows_limits_the_view():
    lay = layout(bytes(range(256)), (), max_rows=4)
    assert len(lay.lines) == 5
    assert lay.lines[-1] == Elision("limit", 12, 64, 256)


def test_rows_align_on_absolute_offsets_and_window():
    lay = layout(VECTOR3, decode_message(VECTOR3, base=198).spans, base=198)
    assert lay.lines[0].offset == 0xC0
    assert [c.byte for c in lay.lines[0].cells[:6]] == [None] * 6
    assert lay.lines[0].cells[6].span.path == "total_size"
    win = layout(VECTOR3, (), start=0x10, end=0x20)
    assert [x.offset for x in win.lines] == [0x10]
    assert all(c.byte is not None for c in win.lines[0].cells)


def test_wide_offsets_widen_the_gutter():
    base = 5 * 1024**3  # past 4 GiB: a late CommitLog segment
    text = hexview(b"\1" * 4, (), base=base).text()
    assert f"{base:09X}  01 01 01 01" in text  # 9 hex digits


# ------------------------------------------------------------------ text view

GOLDEN_HEAD = """\
          00 01 02 03 04 05 06 07  08 09 0A 0B 0C 0D 0E 0F  ascii
00000000  00 00 00 C6 DA A3 20 A7  69 C8 65 ED 00 00 00 00  |...... .i.e.....|
          sz -- -- -- mg -- -- --  cr -- -- -- qu -- -- --  total_size, magic_code, body_crc, queue_id
00000010  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|
          fl -- -- -- of -- -- --  -- -- -- -- of -- -- --  flag, queue_offset, phy_offset"""

GOLDEN_TABLE_TAIL = """\
0x00000072   84  properties                   properties  {'KEYS': 'KEY1', 'UNIQ_KEY': '7F0000011234000...
0x00000072    9    properties.KEYS            properties  'KEY1'
0x0000007C   41    properties.UNIQ_KEY        properties  '7F00000112340000ABCD000000640001'
0x000000A6   22    properties.CLUSTER         properties  'DefaultCluster'
0x000000BD    9    properties.TAGS            properties  'TagA'"""


def test_text_view_is_byte_stable():
    view = hexview(VECTOR3, decode_message(VECTOR3))
    text = view.text()
    assert text.startswith(GOLDEN_HEAD)
    assert text.endswith(GOLDEN_TABLE_TAIL)
    assert text == repr(view) == str(view) == hexview(VECTOR3, decode_message(VECTOR3)).text()
    assert "0x00000030    8  born_host                    host        127.0.0.1:50000" in text
    assert all(line == line.rstrip() for line in text.splitlines())
    assert text.isascii()


def test_repr_pretty_gives_the_text_view():
    from IPython.lib.pretty import pretty

    view = hexview(VECTOR3, decode_message(VECTOR3))
    assert pretty(view) == view.text()
    assert view._repr_html_() == view.html()


def test_structure_adds_spec_sentences():
    view = hexview(VECTOR3, decode_message(VECTOR3), structure="message")
    assert "BODYCRC: CRC-32 of the body" in view.html()
    assert "meaning" in view.text().splitlines()[view.text().splitlines().index("") + 1]


@pytest.mark.parametrize("bad", [0, -1])
def test_width_must_be_positive(bad):
    with pytest.raises(ValueError):
        layout(b"x", (), width=bad)


def test_kind_legend_lists_every_kind_once():
    from pymq_ref.viz import kind_legend

    legend = kind_legend()
    lines = legend.text().splitlines()[2:]
    assert [line.split()[0] for line in lines] == list(KINDS)
    for line in lines:
        kind, code, colour = line.split()[:3]
        assert (code, colour) == (KIND_CODES[kind], KIND_COLOURS[kind])
    html = legend.html()
    assert html.startswith('<div class="pymq-hexview') and all(KIND_COLOURS[k] in html for k in KINDS)
