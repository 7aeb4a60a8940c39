"""Step through a sequence of records (e.g. a CommitLog segment) one hex view at a time.

Two layers, kept apart:

* :class:`StepperState` — pure: an index over ``n`` items that moves and clamps
  (``next``/``prev``/``goto``); no display code, fully testable.
* :class:`Stepper` — the display: Prev/Next buttons, a slider and an ``ipywidgets.HTML``
  holding the current record's hex view and field table. The content is an HTML widget (not
  an Output widget) so the *initial* state is part of the widget state a static book embeds.
  Its text repr (what nbval sees) is the current record's text view.

Callbacks only run with a live kernel; a static book shows the saved state.
Legal use: build with :func:`record_stepper` (or ``Stepper(views)``), display it, click.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Callable, Sequence

from pymq_ref.formats.spans import walk
from pymq_ref.viz.hexview import HexView, hexview
from pymq_ref.viz.layout import as_spans


@dataclass
class StepperState:
    """An index in ``[0, n)`` that clamps at both ends (``index`` is 0 when ``n`` is 0)."""

    n: int
    index: int = 0

    def __post_init__(self) -> None:
        if self.n < 0:
            raise ValueError("n must be >= 0")
        self.index = self.clamp(self.index)

    def clamp(self, i: int) -> int:
        return 0 if self.n == 0 else min(max(i, 0), self.n - 1)

    def goto(self, i: int) -> int:
        self.index = self.clamp(i)
        return self.index

    def next(self) -> int:
        return self.goto(self.index + 1)

    def prev(self) -> int:
        return self.goto(self.index - 1)

    @property
    def at_start(self) -> bool:
        return self.index == 0

    @property
    def at_end(self) -> bool:
        return self.n == 0 or self.index == self.n - 1


class Stepper:
    """Walk a list of views. ``views`` are :class:`HexView` objects or zero-argument callables
    returning one (built lazily, then cached); ``labels`` name each step."""

    def __init__(self, views: Sequence[HexView | Callable[[], HexView]],
                 labels: Sequence[str] | None = None, *, title: str | None = None):
        self._views = list(views)
        self._cache: dict[int, HexView] = {}
        self.labels = list(labels) if labels is not None else [f"item {i}" for i in range(len(self._views))]
        if len(self.labels) != len(self._views):
            raise ValueError("one label per view")
        self.title = title
        self.state = StepperState(len(self._views))
        self._widget = None

    def __len__(self) -> int:
        return len(self._views)

    @property
    def index(self) -> int:
        return self.state.index

    def view(self, i: int | None = None) -> HexView | None:
        """The view at ``i`` (default: the current one); None when there is nothing to show."""
        if not self._views:
            return None
        i = self.state.index if i is None else self.state.clamp(i)
        if i not in self._cache:
            v = self._views[i]
            self._cache[i] = v if isinstance(v, HexView) else v()
        return self._cache[i]

    # -- moving (keeps the widget, if built, in sync) -------------------------------------
    def goto(self, i: int) -> int:
        self.state.goto(i)
        self._sync()
        return self.state.index

    def next(self) -> int:
        return self.goto(self.state.index + 1)

    def prev(self) -> int:
        return self.goto(self.state.index - 1)

    # -- rendering ------------------------------------------------------------------------
    def caption(self) -> str:
        if not self._views:
            return "(nothing to step through)"
        return f"{self.state.index + 1} / {len(self)}: {self.labels[self.state.index]}"

    def text(self) -> str:
        head = ([self.title] if self.title else []) + [self.caption()]
        v = self.view()
        return "\n".join(head + ([v.text()] if v is not None else []))

    def html(self) -> str:
        """Static HTML of the current step (what the content widget holds)."""
        v = self.view()
        cap = f'<div class="pymq-caption" style="font-weight:600">{escape(self.caption())}</div>'
        return cap + (v.html() if v is not None else "")

    def widget(self):
        """The ipywidgets box (built once): [Prev] [slider] [Next] over an HTML view."""
        if self._widget is not None:
            return self._widget
        import ipywidgets as w

        n = len(self)
        prev = w.Button(description="\u25c0 Prev", layout=w.Layout(width="90px"))
        nxt = w.Button(description="Next \u25b6", layout=w.Layout(width="90px"))
        slider = w.IntSlider(value=self.state.index, min=0, max=max(n - 1, 0),
                             description="record", continuous_update=False,
                             disabled=n <= 1)
        content = w.HTML(value=self.html())
        children = [w.HBox([prev, slider, nxt]), content]
        if self.title:
            children.insert(0, w.HTML(value=f"<b>{escape(self.title)}</b>"))
        box = w.VBox(children)
        self._parts = (prev, nxt, slider, content)

        slider.observe(lambda change: self.goto(change["new"]), names="value")
        prev.on_click(lambda _b: self.prev())
        nxt.on_click(lambda _b: self.next())
        self._widget = box
        self._sync()
        return box

    def _sync(self) -> None:
        if self._widget is None:
            return
        prev, nxt, slider, content = self._parts
        prev.disabled = self.state.at_start
        nxt.disabled = self.state.at_end
        if slider.value != self.state.index:
            slider.value = self.state.index
        html = self.html()
        if content.value != html:
            content.value = html

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = dict(self.widget()._repr_mimebundle_())
        bundle["text/plain"] = self.text()
        bundle["text/html"] = self.html()  # front ends without a widget manager
        return bundle

    def __repr__(self) -> str:
        return self.text()


def _record_label(i: int, rec: object, spans) -> str:
    """A one-line label from whatever the record has (message or blank)."""
    first = min((s.offset for s in spans), default=None)
    where = "" if first is None else f" @ 0x{first:X}"
    topic = getattr(rec, "topic", None)
    if topic is not None:
        qid = getattr(rec, "queue_id", "?")
        qoff = getattr(rec, "queue_offset", "?")
        return f"message{where}: topic {topic}, queue {qid}, queue offset {qoff}"
    size = getattr(rec, "total_size", None)
    if size is not None:
        return f"{type(rec).__name__}{where}: {size} bytes"
    return f"{type(rec).__name__}{where}"


def record_stepper(buf, records, *, base: int = 0, title: str | None = None,
                   context: int = 0, **view_options) -> Stepper:
    """A :class:`Stepper` over decoded records of ``buf`` (first byte at absolute ``base``).

    ``records`` are decoded records with spans (e.g. ``iter_records(buf, base=..,
    with_spans=True)``); each step shows the record's own bytes (``context`` extra bytes on
    both sides). ``view_options`` go to :func:`~pymq_ref.viz.hexview.hexview`.
    """
    records = list(records)
    views, labels = [], []
    for i, rec in enumerate(records):
        spans = as_spans(rec)
        flat = list(walk(spans))
        lo = min((s.offset for s in flat), default=base) - context
        hi = max((s.end for s in flat), default=base) + context

        def make(spans=spans, lo=lo, hi=hi):
            return hexview(buf, spans, base=base, start=lo, end=hi, **view_options)

        views.append(make)
        labels.append(_record_label(i, rec, flat))
    return Stepper(views, labels, title=title)
