"""Draw a compiled SQL92 selector as a tree (graphviz), for the book and for debugging.

Conditions (nodes that yield TRUE/FALSE/NULL) are blue, values (properties, literals,
negation) are white; a node RocketMQ built from a rewrite says where it came from
(``AND (from BETWEEN)``). With ``properties`` given, every node is annotated with the value it
evaluates to for that message, so the three-valued logic can be followed bottom-up.

Imports graphviz (through :mod:`pymq_ref.viz`) only when called.
"""

from __future__ import annotations

from collections.abc import Mapping

from pymq_ref.broker.filter.errors import FilterTypeError
from pymq_ref.broker.filter.sql92.ast import Node
from pymq_ref.broker.filter.sql92.evaluate import evaluate
from pymq_ref.broker.filter.sql92.java_values import java_type, to_java_string


def _value_text(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return {True: "TRUE", False: "FALSE", None: "NULL"}[value]
    return f"{to_java_string(value)} ({java_type(value)})"


def parse_tree(compiled, properties: Mapping[str, str] | None = None, *, title: str | None = None):
    """A ``graphviz.Digraph`` of ``compiled`` (an :class:`~pymq_ref.broker.filter.sql92.Sql92Expression`
    or a tree :class:`~pymq_ref.broker.filter.sql92.ast.Node`), top-down."""
    from pymq_ref.viz import diagrams
    from pymq_ref.viz.palette import role_colour

    root: Node = getattr(compiled, "root", compiled)
    g = diagrams.digraph("sql92", rankdir="TB", title=title or getattr(compiled, "expression", None))
    counter = iter(range(1_000_000))

    def add(node: Node) -> str:
        nid = f"n{next(counter)}"
        label = node.label()
        if properties is not None:
            try:
                label += "\n= " + _value_text(evaluate(node, properties))
            except FilterTypeError:
                label += "\n= error"
        g.node(nid, label, fillcolor=role_colour("broker" if node.is_boolean else "note"))
        for child in node.children():
            g.edge(nid, add(child))
        return nid

    add(root)
    return g
