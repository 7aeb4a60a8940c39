"""graphviz helpers for the book's diagrams: one font, one palette, three shapes of diagram.

* :func:`architecture_map` — the layers of a RocketMQ deployment, as the book builds them;
* :func:`flow` — a generic left-to-right flow of boxes and labelled arrows;
* :func:`state_machine` — states and transitions, with an initial arrow and final states.

All return a ``graphviz.Digraph`` (rendered as SVG in notebooks; needs the ``dot`` binary).
The SVG depends on the graphviz version and fonts: never nbval-compare those cells.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import graphviz

from pymq_ref.viz.palette import GRAPH_FONT, MUTED_COLOUR, TEXT_COLOUR, role_colour

NODE_ATTRS = {
    "shape": "box",
    "style": "rounded,filled",
    "fontname": GRAPH_FONT,
    "fontsize": "11",
    "color": TEXT_COLOUR,
    "penwidth": "0.8",
    "fontcolor": TEXT_COLOUR,
    "margin": "0.15,0.06",
}
EDGE_ATTRS = {"fontname": GRAPH_FONT, "fontsize": "9", "color": MUTED_COLOUR,
              "fontcolor": TEXT_COLOUR, "arrowsize": "0.7"}


def digraph(name: str = "diagram", *, rankdir: str = "LR", title: str | None = None) -> graphviz.Digraph:
    """An empty Digraph with the book's fonts and colours."""
    g = graphviz.Digraph(name, format="svg")
    g.attr(rankdir=rankdir, fontname=GRAPH_FONT, fontsize="12", bgcolor="transparent",
           nodesep="0.3", ranksep="0.45")
    if title:
        g.attr(label=title, labelloc="t", fontsize="13")
    g.attr("node", **NODE_ATTRS)
    g.attr("edge", **EDGE_ATTRS)
    return g


def _node(spec) -> tuple[str, str, str]:
    """Accept ``"id"``, ``(id, label)`` or ``(id, label, role)``."""
    if isinstance(spec, str):
        return spec, spec, "note"
    spec = tuple(spec)
    if len(spec) == 2:
        return spec[0], spec[1], "note"
    return spec[0], spec[1], spec[2]


def _edge(spec) -> tuple[str, str, str | None]:
    """Accept ``(a, b)`` or ``(a, b, label)``."""
    spec = tuple(spec)
    return spec[0], spec[1], (spec[2] if len(spec) > 2 else None)


def flow(nodes: Iterable, edges: Iterable, *, rankdir: str = "LR", title: str | None = None,
         name: str = "flow") -> graphviz.Digraph:
    """A flow diagram. Nodes: ``"id"`` / ``(id, label)`` / ``(id, label, role)`` where role is
    a key of :data:`~pymq_ref.viz.palette.ROLE_COLOURS`. Edges: ``(a, b)`` / ``(a, b, label)``."""
    g = digraph(name, rankdir=rankdir, title=title)
    for spec in nodes:
        nid, label, role = _node(spec)
        g.node(nid, label, fillcolor=role_colour(role))
    for spec in edges:
        a, b, label = _edge(spec)
        g.edge(a, b, label=label) if label else g.edge(a, b)
    return g


def state_machine(states: Iterable, transitions: Iterable, *, initial: str | None = None,
                  final: Sequence[str] = (), rankdir: str = "LR", title: str | None = None,
                  name: str = "states") -> graphviz.Digraph:
    """A state machine: ``states`` as in :func:`flow` (role defaults to ``state``),
    ``transitions`` as ``(from, to, event)``; ``initial`` gets an entry arrow, ``final``
    states a double border."""
    g = digraph(name, rankdir=rankdir, title=title)
    if initial is not None:
        g.node("__start__", "", shape="point", width="0.12", style="filled", fillcolor=TEXT_COLOUR)
    for spec in states:
        nid, label, role = _node(spec)
        role = "state" if role == "note" else role
        extra = {"peripheries": "2"} if nid in final else {}
        g.node(nid, label, fillcolor=role_colour(role), **extra)
    if initial is not None:
        g.edge("__start__", initial)
    for spec in transitions:
        a, b, label = _edge(spec)
        g.edge(a, b, label=label) if label else g.edge(a, b)
    return g


def architecture_map() -> graphviz.Digraph:
    """The map of chapter 00: clients -> remoting -> broker services -> store -> derived files,
    the name server beside it and the Spark pipeline reading the store files."""
    g = digraph("architecture", rankdir="LR")

    def cluster(name: str, label: str, nodes: list[tuple[str, str, str]]) -> None:
        with g.subgraph(name=f"cluster_{name}") as c:
            c.attr(label=label, style="rounded,dashed", color=MUTED_COLOUR, fontname=GRAPH_FONT,
                   fontsize="11", fontcolor=MUTED_COLOUR)
            for nid, label_, role in nodes:
                c.node(nid, label_, fillcolor=role_colour(role))

    cluster("clients", "clients", [
        ("producer", "Producer\n(load balancing, retries)", "client"),
        ("consumer", "Consumer\n(push / pull, rebalance)", "client"),
    ])
    g.node("namesrv", "Name server\n(routes, broker registry)", fillcolor=role_colour("namesrv"))
    cluster("broker", "broker", [
        ("remoting", "Remoting\n(frames, request codes)", "remoting"),
        ("services", "Broker services\n(delay, retry/DLQ,\ntransactions, filtering,\nlong polling, offsets)", "broker"),
        ("commitlog", "CommitLog\n(one append-only log)", "store"),
        ("dispatch", "Dispatch (reput)", "store"),
        ("cq", "ConsumeQueue\n(20-byte units per queue)", "index"),
        ("index", "IndexFile\n(hash by key)", "index"),
    ])
    g.node("spark", "PySpark pipeline\n(read, rebuild, verify,\nanalytics)", fillcolor=role_colour("spark"))

    g.edge("producer", "namesrv", label="routes?", style="dashed")
    g.edge("consumer", "namesrv", style="dashed")
    g.edge("namesrv", "remoting", label="heartbeat /\nregister", style="dashed", dir="back")
    g.edge("producer", "remoting", label="send")
    g.edge("consumer", "remoting", label="pull", dir="both")
    g.edge("remoting", "services")
    g.edge("services", "commitlog", label="append")
    g.edge("commitlog", "dispatch")
    g.edge("dispatch", "cq")
    g.edge("dispatch", "index")
    g.edge("cq", "services", label="read by\nqueue offset", constraint="false", style="dashed")
    g.edge("commitlog", "spark", style="dotted", label="store files")
    return g
