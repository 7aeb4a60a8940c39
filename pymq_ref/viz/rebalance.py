"""Views of load balancing for chapters 12 and 13: who owns which queue, round by round, and which
broker a producer chose over time.

Three layers, kept apart:

* pure: :func:`assignment` (queue → owner from any allocation strategy), :func:`assignment_text`
  and :func:`moves` (what changed between two rounds) — no display code, testable;
* :func:`assignment_diagram` — a graphviz picture: consumers on the left, each broker's queues in
  a box on the right, one arrow per owned queue (never nbval-compare its SVG);
* :class:`RebalanceStepper` — an ipywidgets stepper (the house :class:`~pymq_ref.viz.stepper.Stepper`)
  through rebalance rounds; its text repr (what nbval sees) is the round's table;
* :func:`send_timeline` — a matplotlib figure of send attempts: latency and chosen broker over time.

Nothing here allocates, sends or rebalances: it draws what :mod:`pymq_ref.client` decided.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Mapping, Sequence

from pymq_ref.formats.message_queue import MessageQueue

#: fill colours of consumers, in the order their (sorted) ids appear; unowned queues stay white
CONSUMER_COLOURS = ("#F9A8D4", "#93C5FD", "#8EDBA8", "#FFD966", "#C9A7EB", "#FDBA74", "#7EE0D2", "#FCA5A5")
UNOWNED_COLOUR = "#FFFFFF"

Assignment = dict[MessageQueue, tuple[str, ...]]


def assignment(strategy, mq_all: Sequence[MessageQueue], cid_all: Sequence[str], *,
               group: str = "GID_book") -> Assignment:
    """Queue → the consumers whose ``strategy.allocate`` returned it (every consumer runs the same
    pure function; a queue may end up with none, or — with a bad CONFIG — with several)."""
    mq_all, cid_all = sorted(mq_all), sorted(cid_all)
    owners: dict[MessageQueue, list[str]] = {mq: [] for mq in mq_all}
    for cid in cid_all:
        for mq in strategy.allocate(group, cid, mq_all, cid_all):
            owners.setdefault(mq, []).append(cid)
    return {mq: tuple(c) for mq, c in owners.items()}


def queue_label(mq: MessageQueue) -> str:
    return f"{mq.broker_name}/{mq.queue_id}"


def assignment_text(owners: Mapping[MessageQueue, Sequence[str]], cid_all: Sequence[str] | None = None) -> str:
    """One line per consumer: the queues it owns (in queue order); then the unowned queues, if any."""
    cids = sorted(cid_all) if cid_all is not None else sorted({c for cs in owners.values() for c in cs})
    width = max((len(c) for c in cids), default=8)
    lines = []
    for cid in cids:
        mine = [queue_label(mq) for mq in sorted(owners) if cid in owners[mq]]
        lines.append(f"{cid:<{width}}  {len(mine):2} | {' '.join(mine) or '-'}")
    orphans = [queue_label(mq) for mq in sorted(owners) if not owners[mq]]
    if orphans:
        lines.append(f"{'(nobody)':<{width}}  {len(orphans):2} | {' '.join(orphans)}")
    return "\n".join(lines)


def moves(before: Mapping[MessageQueue, Sequence[str]], after: Mapping[MessageQueue, Sequence[str]]
          ) -> list[tuple[MessageQueue, tuple[str, ...], tuple[str, ...]]]:
    """The queues whose owners changed: ``(queue, owners before, owners after)``, in queue order."""
    out = []
    for mq in sorted(set(before) | set(after)):
        a, b = tuple(before.get(mq, ())), tuple(after.get(mq, ()))
        if a != b:
            out.append((mq, a, b))
    return out


def _colours(cids: Sequence[str]) -> dict[str, str]:
    return {c: CONSUMER_COLOURS[i % len(CONSUMER_COLOURS)] for i, c in enumerate(sorted(cids))}


def assignment_diagram(owners: Mapping[MessageQueue, Sequence[str]], cid_all: Sequence[str] | None = None, *,
                       title: str | None = None, name: str = "assignment", labels: Mapping[str, str] | None = None):
    """A graphviz Digraph: consumers → the queues they own, queues grouped by broker and coloured by
    owner (white: nobody; striped in the first owner's colour with a red border: more than one)."""
    from pymq_ref.viz.diagrams import digraph
    from pymq_ref.viz.palette import MUTED_COLOUR

    cids = sorted(cid_all) if cid_all is not None else sorted({c for cs in owners.values() for c in cs})
    colour = _colours(cids)
    labels = dict(labels or {})
    g = digraph(name, rankdir="LR", title=title)
    g.attr(ranksep="0.9", nodesep="0.12")
    for i, cid in enumerate(cids):
        g.node(f"c{i}", labels.get(cid, cid), fillcolor=colour[cid])
    by_broker: dict[str, list[MessageQueue]] = {}
    for mq in sorted(owners):
        by_broker.setdefault(mq.broker_name, []).append(mq)
    qid = {}
    for b, (broker, mqs) in enumerate(by_broker.items()):
        with g.subgraph(name=f"cluster_{b}") as c:
            c.attr(label=broker, style="rounded,dashed", color=MUTED_COLOUR, fontcolor=MUTED_COLOUR)
            for mq in mqs:
                qid[mq] = f"q{b}_{mq.queue_id}"
                who = owners[mq]
                extra = {"color": "#DC2626", "penwidth": "2"} if len(who) > 1 else {}
                c.node(qid[mq], f"q{mq.queue_id}", fillcolor=colour[who[0]] if who else UNOWNED_COLOUR,
                       shape="box", width="0.4", height="0.25", **extra)
    for i, cid in enumerate(cids):
        for mq in sorted(owners):
            if cid in owners[mq]:
                g.edge(f"c{i}", qid[mq], color=colour[cid], penwidth="1.2")
    return g


@dataclass
class RoundView:
    """One rebalance round as the stepper shows it: text and HTML of the same table."""

    owners: dict[MessageQueue, tuple[str, ...]]
    cids: tuple[str, ...]
    note: str = ""
    previous: dict[MessageQueue, tuple[str, ...]] | None = None

    def _moved(self) -> list:
        return moves(self.previous, self.owners) if self.previous is not None else []

    def text(self) -> str:
        lines = [self.note] if self.note else []
        lines.append(assignment_text(self.owners, self.cids))
        moved = self._moved()
        if moved:
            lines.append("moved: " + ", ".join(f"{queue_label(mq)} {'+'.join(a) or '-'} -> {'+'.join(b) or '-'}"
                                              for mq, a, b in moved))
        return "\n".join(lines)

    def html(self) -> str:
        colour = _colours(self.cids)
        moved = {mq for mq, _, _ in self._moved()}
        brokers: dict[str, list[MessageQueue]] = {}
        for mq in sorted(self.owners):
            brokers.setdefault(mq.broker_name, []).append(mq)
        rows = []
        for broker, mqs in brokers.items():
            cells = []
            for mq in mqs:
                who = self.owners[mq]
                bg = colour[who[0]] if who else UNOWNED_COLOUR
                border = "2px solid #DC2626" if mq in moved else "1px solid #D1D5DB"
                cells.append(f'<td style="background:{bg};border:{border};padding:2px 6px;text-align:center">'
                             f'q{mq.queue_id}<br><small>{escape(", ".join(who) or "-")}</small></td>')
            rows.append(f'<tr><th style="text-align:left;padding-right:8px">{escape(broker)}</th>{"".join(cells)}</tr>')
        legend = " ".join(f'<span style="background:{colour[c]};padding:1px 6px;margin-right:4px">{escape(c)}</span>'
                          for c in self.cids)
        note = f"<div>{escape(self.note)}</div>" if self.note else ""
        return (f'{note}<div style="margin:4px 0">{legend or "(no consumer)"}</div>'
                f'<table style="border-collapse:collapse;font-size:12px">{"".join(rows)}</table>'
                '<div style="font-size:11px;color:#6B7280">red border: the owner changed in this round</div>')


class RebalanceStepper:
    """Step through rebalance rounds: ``rounds`` are ``(label, owners, cids)`` or with a fourth item,
    a note. Each round is compared with the one before it (queues that moved get a red border)."""

    def __init__(self, rounds: Sequence[tuple], *, title: str | None = None):
        from pymq_ref.viz.stepper import Stepper

        views, labels, previous = [], [], None
        for r in rounds:
            label, owners, cids = r[0], dict(r[1]), tuple(sorted(r[2]))
            views.append(RoundView(owners, cids, r[3] if len(r) > 3 else "", previous))
            labels.append(label)
            previous = owners
        self.rounds = views
        self.stepper = Stepper([(lambda v=v: v) for v in views], labels, title=title)

    def __len__(self) -> int:
        return len(self.rounds)

    def text(self, i: int | None = None) -> str:
        if i is not None:
            self.stepper.goto(i)
        return self.stepper.text()

    def widget(self):
        return self.stepper.widget()

    def _repr_mimebundle_(self, include=None, exclude=None):
        return self.stepper._repr_mimebundle_(include, exclude)

    def __repr__(self) -> str:
        return self.stepper.text()


def send_timeline(attempts: Sequence[Mapping], *, brokers: Sequence[str] | None = None, events: Sequence[tuple] = (),
                  title: str | None = None, latency: bool = True):
    """A matplotlib figure of send attempts (dicts with ``broker``, ``latency_ms``, ``error``, as
    :attr:`DefaultMQProducer.on_attempt` reports): top, the broker each attempt went to (a cross
    for a failed one); bottom (``latency``), each attempt's latency. ``events`` are ``(attempt
    index, text)`` pairs drawn as vertical lines. The x axis is the attempt number, not the clock."""
    import matplotlib.pyplot as plt

    names = list(brokers) if brokers is not None else sorted({a["broker"] for a in attempts})
    row = {b: i for i, b in enumerate(names)}
    colour = {b: CONSUMER_COLOURS[i % len(CONSUMER_COLOURS)] for i, b in enumerate(names)}
    if latency:
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 4.2), sharex=True,
                                          gridspec_kw={"height_ratios": [1, 1.3]})
    else:
        fig, top = plt.subplots(1, 1, figsize=(9, 1.8))
        bottom = None
    xs = range(len(attempts))
    ok = [(i, a) for i, a in zip(xs, attempts) if not a.get("error")]
    bad = [(i, a) for i, a in zip(xs, attempts) if a.get("error")]
    for b in names:
        pts = [i for i, a in ok if a["broker"] == b]
        top.scatter(pts, [row[b]] * len(pts), s=14, color=colour[b], edgecolors="#111827", linewidths=0.4, label=b)
    if bad:
        top.scatter([i for i, _ in bad], [row[a["broker"]] for _, a in bad], marker="x", s=40, color="#DC2626",
                    label="failed attempt")
    top.set_yticks(range(len(names)), names)
    top.set_ylim(-0.6, len(names) - 0.4)
    top.set_ylabel("broker")
    top.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    if bottom is not None:
        for b in names:
            pts = [(i, a["latency_ms"]) for i, a in ok if a["broker"] == b]
            bottom.scatter([p[0] for p in pts], [max(p[1], 0.5) for p in pts], s=10, color=colour[b])
        if bad:
            bottom.scatter([i for i, _ in bad], [max(a["latency_ms"], 0.5) for _, a in bad], marker="x", s=40,
                           color="#DC2626")
        bottom.set_yscale("log")
        bottom.set_ylabel("latency (ms)")
        bottom.set_xlabel("send attempt")
    else:
        top.set_xlabel("send attempt")
    for ax in (top, bottom):
        if ax is None:
            continue
        for x, text in events:
            ax.axvline(x - 0.5, color="#6B7280", linestyle="--", linewidth=0.8)
        ax.grid(axis="x", color="#E5E7EB", linewidth=0.5)
    for x, text in events:
        top.annotate(text, (x - 0.5, len(names) - 0.45), fontsize=8, color="#374151", ha="left", va="top",
                     xytext=(3, 0), textcoords="offset points")
    if title:
        top.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig
