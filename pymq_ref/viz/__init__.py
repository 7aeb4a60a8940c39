"""Views for the book: byte views, field tables, "explain this byte", steppers, diagrams.

Everything here draws what a decoder in :mod:`pymq_ref.formats` returned (values and spans);
nothing here parses bytes ("one decoder, many views"). Pure layout (:mod:`.layout`) is kept
apart from rendering (:mod:`.text`, :mod:`.htmlview`) and from widgets (:mod:`.stepper`).

Colours come from one palette (:mod:`.palette`) shared by every chapter.
"""

from pymq_ref.viz.explain import Explanation, describe_field, explain
from pymq_ref.viz.hexview import (
    FieldTable, HexView, KindLegend, field_table, hex_html, hex_text, hexview, kind_legend,
)
from pymq_ref.viz.layout import Elision, Layout, Row, layout
from pymq_ref.viz.palette import KIND_CODES, KIND_COLOURS, kind_colour
from pymq_ref.viz.stepper import Stepper, StepperState, record_stepper

__all__ = [
    "Elision", "Explanation", "FieldTable", "HexView", "KIND_CODES", "KIND_COLOURS", "Layout",
    "Row", "Stepper", "StepperState", "describe_field", "explain", "field_table", "hex_html",
    "hex_text", "hexview", "kind_colour", "kind_legend", "KindLegend", "layout", "record_stepper",
    "architecture_map", "flow", "state_machine",
]


def __getattr__(name):  # diagrams import graphviz: load it only when asked for
    if name in ("architecture_map", "flow", "state_machine", "digraph"):
        from pymq_ref.viz import diagrams

        return getattr(diagrams, name)
    raise AttributeError(name)
