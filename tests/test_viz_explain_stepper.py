"""explain(), the stepper and the diagrams."""

from __future__ import annotations

import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import MessageRecord, encode_blank, encode_message, iter_records
from pymq_ref.formats.spans import walk
from pymq_ref.viz import Stepper, StepperState, explain, hexview, record_stepper
from pymq_ref.viz.explain import describe_field

from pymq_ref.formats.message import decode_message

# test vector 3 (tests/test_formats_vectors.py): TopicTest / TagA / KEY1 / "Hello RocketMQ"
VECTOR3 = bytes.fromhex(
    "000000C6DAA320A769C865ED000000000000000000000000000000000000000000000000000000000000018BCF"
    "E568007F0000010000C3500000018BCFE5687B7F00000100002A9F0000000000000000000000000000000E4865"
    "6C6C6F20526F636B65744D5109546F7069635465737400544B455953014B45593102554E49515F4B4559013746"
    "30303030303131323334303030304142434430303030303036343030303102434C5553544552014465666175"
    "6C74436C757374657202544147530154616741"
)


# ------------------------------------------------------------------ explain

@pytest.mark.parametrize("base", [0, 198, 2**32 + 7])
def test_explain_first_and_last_byte_of_every_field(base):
    record = decode_message(VECTOR3, base=base)
    for span in walk(record.spans):
        if span.children or span.length == 0:
            continue
        for off in (span.offset, span.end - 1):
            e = explain(VECTOR3, record, off, base=base)
            assert e.span == span and e.path == span.path and e.kind == span.kind
            assert e.range == (span.offset, span.end)
            assert e.raw == VECTOR3[span.offset - base:span.end - base]
            assert e.byte == VECTOR3[off - base]
            assert e.value == span.value


def test_explain_property_entry_has_parent_and_sentence():
    record = decode_message(VECTOR3)
    e = explain(VECTOR3, record, 0xBD)  # first byte of "TAGS\x01TagA"
    assert e.path == "properties.TAGS"
    assert [p.path for p in e.parents] == ["properties"]
    assert "tagsCode" in e.sentence
    sep = explain(VECTOR3, record, 0x7B)  # the \x02 between KEYS and UNIQ_KEY: the string itself
    assert sep.path == "properties" and sep.byte == 0x02


def test_explain_text_and_html():
    e = explain(VECTOR3, decode_message(VECTOR3), 8)
    text = repr(e)
    assert text.splitlines()[:5] == [
        "byte    0x8 (8) = 0x69",
        "field   body_crc  [crc: a checksum]",
        "range   0x8..0xB (4 bytes; this is byte 1)",
        "bytes   69 C8 65 ED",
        "value   1774740973",
    ]
    assert text.splitlines()[5].startswith("spec    BODYCRC:")
    assert "body_crc" in e._repr_html_() and "pymq-explain" in e.html()


def test_explain_outside_any_field():
    e = explain(VECTOR3 + b"\0\0", decode_message(VECTOR3), 198)
    assert e.span is None and e.byte == 0 and e.range is None
    assert "not part of any decoded field" in e.text()
    assert explain(b"", (), 5).byte is None


def test_describe_field_falls_back_and_never_raises():
    assert describe_field("message", "record[3].body_crc").startswith("BODYCRC")
    assert describe_field("message", "no_such_field") == ""
    assert describe_field("no_such_structure", "body") == ""


# ------------------------------------------------------------------ stepper state

@settings(max_examples=200, deadline=None)
@given(st.integers(0, 6), st.lists(st.one_of(st.just("next"), st.just("prev"),
                                             st.integers(-10, 10)), max_size=30))
def test_stepper_state_moves_and_clamps_like_a_model(n, ops):
    state = StepperState(n)
    model = 0
    for op in ops:
        if op == "next":
            model = min(model + 1, max(n - 1, 0))
            state.next()
        elif op == "prev":
            model = max(model - 1, 0)
            state.prev()
        else:
            model = 0 if n == 0 else min(max(op, 0), n - 1)
            state.goto(op)
        assert state.index == model
        assert 0 <= state.index < max(n, 1)
        assert state.at_start == (state.index == 0)
        assert state.at_end == (n == 0 or state.index == n - 1)


def test_stepper_state_rejects_negative_size():
    with pytest.raises(ValueError):
        StepperState(-1)


# ------------------------------------------------------------------ stepper over real records

def _segment(n: int = 3, size: int = 1024) -> bytes:
    """``n`` records back to back, then the end-of-file blank filling ``size`` bytes."""
    out, pos = b"", 0
    for i in range(n):
        rec = MessageRecord(topic="TopicTest", body=f"message {i}".encode(), queue_offset=i,
                            phy_offset=pos, born_timestamp=1700000000000 + i,
                            born_host=Host("127.0.0.1", 50000), store_timestamp=1700000000123 + i,
                            properties={"TAGS": "TagA"})
        raw = encode_message(rec)
        out += raw
        pos += len(raw)
    return out + encode_blank(size - pos) + bytes(size - pos - 8)


def test_record_stepper_steps_through_a_segment():
    seg = _segment()
    records = list(iter_records(seg, with_spans=True))
    assert len(records) == 4  # three messages and the blank
    st_ = record_stepper(seg, records, title="segment 0")
    assert len(st_) == 4 and st_.index == 0
    assert "1 / 4: message @ 0x0: topic TopicTest, queue 0, queue offset 0" in st_.text()
    assert st_.prev() == 0
    assert st_.next() == 1 and "queue offset 1" in st_.caption()
    assert st_.goto(99) == 3 and "BlankRecord" in st_.caption()
    # each step shows exactly its record's bytes
    v = st_.view(1)
    assert (v.layout.start, v.layout.end) == (records[1].phy_offset, records[1].phy_offset + records[1].total_size)
    assert [f.span for f in v.fields] == list(walk(records[1].spans))


def test_stepper_widget_follows_buttons_and_slider():
    pytest.importorskip("ipywidgets")
    seg = _segment()
    st_ = record_stepper(seg, iter_records(seg, with_spans=True))
    box = st_.widget()
    prev, nxt, slider, content = st_._parts
    assert prev.disabled and not nxt.disabled
    assert content.value == st_.html() and 'class="pymq-hexview"' in content.value
    nxt.click()
    assert st_.index == 1 and slider.value == 1 and "queue offset 1" in content.value
    slider.value = 3
    assert st_.index == 3 and nxt.disabled and not prev.disabled
    nxt.click()
    assert st_.index == 3
    prev.click()
    assert st_.index == 2
    assert st_.widget() is box
    bundle = st_._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == st_.text() and bundle["text/html"] == st_.html()


def test_empty_stepper():
    s = Stepper([])
    assert s.view() is None and s.next() == 0
    assert "nothing to step through" in s.text()


def test_stepper_labels_must_match():
    with pytest.raises(ValueError):
        Stepper([hexview(b"x")], ["a", "b"])


# ------------------------------------------------------------------ diagrams

def test_diagrams_build_and_use_the_palette():
    from pymq_ref.viz import architecture_map, flow, state_machine
    from pymq_ref.viz.palette import ROLE_COLOURS

    g = architecture_map()
    for node in ("producer", "consumer", "namesrv", "remoting", "commitlog", "dispatch", "cq", "index", "spark"):
        assert f"\t{node} [" in g.source
    assert ROLE_COLOURS["store"] in g.source

    f = flow(["a", ("b", "B", "store")], [("a", "b", "append")])
    assert 'b [label=B fillcolor="#FFD966"]' in f.source and "label=append" in f.source

    sm = state_machine(["half", "committed", "rolled back"],
                       [("half", "committed", "commit"), ("half", "rolled back", "rollback")],
                       initial="half", final=["committed", "rolled back"])
    assert "__start__ -> half" in sm.source and "peripheries=2" in sm.source

    if shutil.which("dot"):
        svg = g.pipe(format="svg").decode()
        assert svg.lstrip().startswith("<?xml") and "CommitLog" in svg
