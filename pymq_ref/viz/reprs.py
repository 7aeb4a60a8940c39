"""One rule for how every view shows itself: HTML in the book, deterministic text everywhere else.

A view class defines ``text()`` and ``html()`` and inherits the notebook/console hooks from
:class:`TextAndHtml`. nbval compares the text; the book renders the HTML.
"""

from __future__ import annotations


class TextAndHtml:
    """Mixin: ``_repr_html_`` -> ``html()``; ``repr``/``str``/IPython pretty -> ``text()``."""

    def text(self) -> str:
        raise NotImplementedError

    def html(self) -> str:
        raise NotImplementedError

    def _repr_html_(self) -> str:
        return self.html()

    def __repr__(self) -> str:
        return self.text()

    def __str__(self) -> str:
        return self.text()

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(self.text())
