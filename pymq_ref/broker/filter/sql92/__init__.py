"""SQL92 message selectors with RocketMQ 4.9.4's grammar and semantics.

>>> e = compile_sql92("a > 2 AND TAGS IN ('TagA', 'TagB')")
>>> e.evaluate({"a": "3", "TAGS": "TagA"}), e.evaluate({"TAGS": "TagA"}), e.matches({"TAGS": "TagA"})
(True, None, False)

:func:`compile_sql92` → :class:`Sql92Expression` (immutable, cached like RocketMQ's
``SelectorParser`` parse cache) with ``evaluate`` (``True``/``False``/``None`` = UNKNOWN),
``matches`` (only ``True`` matches) and ``java_string``. Modules: :mod:`.lexer`, :mod:`.parser`,
:mod:`.ast`, :mod:`.evaluate`, :mod:`.java_values`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from pymq_ref.broker.filter.errors import FilterSyntaxError
from pymq_ref.broker.filter.sql92.ast import Node, walk
from pymq_ref.broker.filter.sql92.evaluate import evaluate as _evaluate
from pymq_ref.broker.filter.sql92.lexer import Lexer
from pymq_ref.broker.filter.sql92.parser import NOT_IN_4_9_4, Parser

__all__ = ["Sql92Expression", "compile_sql92", "FilterSyntaxError"]


@dataclass(frozen=True, slots=True)
class Sql92Expression:
    """A compiled selector.

    ``expression`` is the source text, ``root`` the tree (:mod:`.ast`); ``ignored_from`` is the
    0-based offset where RocketMQ stopped reading (``None`` when the whole text was used) — the
    text from there on has no effect, exactly as on a 4.9.4 broker.
    """

    expression: str
    root: Node
    ignored_from: int | None = None

    def evaluate(self, properties: Mapping[str, str] | None) -> bool | None:
        """``True``, ``False`` or ``None`` (UNKNOWN). Raises :class:`FilterTypeError` where Java throws."""
        v = _evaluate(self.root, properties)
        return v if isinstance(v, bool) or v is None else False

    def matches(self, properties: Mapping[str, str] | None) -> bool:
        """Only ``True`` matches (``BooleanExpression.matches``). Raises like :meth:`evaluate`."""
        return self.evaluate(properties) is True

    @property
    def ignored_tail(self) -> str | None:
        """The ignored text (see ``ignored_from``), or ``None``."""
        return None if self.ignored_from is None else self.expression[self.ignored_from:]

    @property
    def warnings(self) -> tuple[str, ...]:
        """Human-readable notes: the ignored tail, and why (``LIKE``, ``CONTAINS`` ... are not 4.9.4)."""
        if self.ignored_from is None:
            return ()
        note = f"RocketMQ 4.9.4 ignores everything from column {self.ignored_from + 1}: {self.ignored_tail!r}"
        word = self.ignored_tail.split(None, 1)[0].upper() if self.ignored_tail.strip() else ""
        hint = NOT_IN_4_9_4.get(word)
        return (note,) if hint is None else (note, hint)

    def properties_used(self) -> tuple[str, ...]:
        """Property names the selector reads, in order of first appearance."""
        from pymq_ref.broker.filter.sql92.ast import Property

        return tuple(dict.fromkeys(n.name for n in walk(self.root) if isinstance(n, Property)))

    def java_string(self) -> str:
        """What the Java expression object's ``toString`` prints."""
        return self.root.java_string()

    def __str__(self) -> str:
        return self.java_string()


@lru_cache(maxsize=256)
def _compile(expression: str, strict: bool) -> Sql92Expression:
    root, tail = Parser(expression).parse()
    if tail is not None and strict:
        tok = Lexer(expression)
        tok._pos = tail  # re-cut the first ignored token to describe it
        first = tok.peek()
        hint = NOT_IN_4_9_4.get(first.text.upper())
        raise FilterSyntaxError(expression, tail, "end of expression, AND, OR or a comparison operator",
                                first.describe(), reason=hint or "RocketMQ 4.9.4 would silently ignore "
                                "the rest of the expression from here")
    return Sql92Expression(expression, root, tail)


def compile_sql92(expression: str, *, strict: bool = False) -> Sql92Expression:
    """Compile a selector as a 4.9.4 broker does (``SqlFilter.compile`` → ``SelectorParser.parse``).

    Raises :class:`FilterSyntaxError` for anything RocketMQ refuses to compile (lexical,
    grammar and semantic errors). ``strict=True`` also refuses trailing text RocketMQ ignores.
    """
    if not isinstance(expression, str):
        raise FilterSyntaxError("", 0, "a SQL92 expression string", type(expression).__name__)
    return _compile(expression, strict)
