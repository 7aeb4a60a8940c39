"""The compiled form of a SQL92 selector: the same expression tree RocketMQ 4.9.4 builds.

RocketMQ has no node for ``<>``, ``IS NOT NULL``, ``BETWEEN`` or ``NOT BETWEEN``: the parser's
factories (``ComparisonExpression.createXxx``) rewrite them, and so do we, because the rewrite
*is* the semantics (it decides what NULL does):

==================  ===============================================
``a <> b``          ``NOT (a = b)``
``a IS NULL``       ``a = NULL`` (an equality without the "no NULL operand" check)
``a IS NOT NULL``   ``NOT (a = NULL)``
``a BETWEEN x AND y``      ``(a >= x) AND (a <= y)``
``a NOT BETWEEN x AND y``  ``(a < x) OR (a > y)``
a bare property used as a condition  ``BooleanCast(a)`` (a String is never a Boolean: FALSE, or NULL if absent)
==================  ===============================================

A rewritten node keeps the operator the user wrote in ``origin`` (for diagrams and messages).
:meth:`Node.java_string` prints a tree the way the Java objects' ``toString`` does
(``(a == 3)``, ``(x && y)``, ``(NOT x)``), handy to compare with a broker's log.

Frozen dataclasses; no evaluation here (see :mod:`.evaluate`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pymq_ref.broker.filter.sql92.java_values import to_java_string


@dataclass(frozen=True, slots=True)
class Node:
    """Base of every node. ``pos`` is the 0-based offset of the text the node came from."""

    pos: int = field(default=0, kw_only=True, compare=False)
    origin: str | None = field(default=None, kw_only=True, compare=False)

    #: True for Java ``BooleanExpression`` nodes (usable where a condition is required).
    is_boolean = False

    def children(self) -> tuple[Node, ...]:
        return ()

    def label(self) -> str:
        raise NotImplementedError

    def java_string(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.java_string()


@dataclass(frozen=True, slots=True)
class Constant(Node):
    """A literal: ``str``, ``int`` (Integer), ``JavaLong``, ``float`` (Double), ``bool`` or ``None``.

    TRUE, FALSE and NULL are ``BooleanConstantExpression`` in Java (usable as conditions);
    strings and numbers are plain ``ConstantExpression`` (not usable as conditions).
    """

    value: object = None

    @property
    def is_boolean(self) -> bool:  # type: ignore[override]
        return self.value is None or isinstance(self.value, bool)

    def label(self) -> str:
        return to_java_string(self.value)

    def java_string(self) -> str:
        return to_java_string(self.value)


@dataclass(frozen=True, slots=True)
class Property(Node):
    """A message property looked up by exact (case-sensitive) name; a missing one is NULL."""

    name: str = ""

    def label(self) -> str:
        return self.name

    def java_string(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Negate(Node):
    """Unary minus: negates an Integer/Long/Double, and is NULL for anything else (strings too)."""

    operand: Node = None  # type: ignore[assignment]

    def children(self) -> tuple[Node, ...]:
        return (self.operand,)

    def label(self) -> str:
        return "-"

    def java_string(self) -> str:
        return f"(- {self.operand.java_string()})"


@dataclass(frozen=True, slots=True)
class Not(Node):
    """Three-valued NOT: TRUE↔FALSE, NULL stays NULL."""

    operand: Node = None  # type: ignore[assignment]
    is_boolean = True

    def children(self) -> tuple[Node, ...]:
        return (self.operand,)

    def label(self) -> str:
        return "NOT" if self.origin is None else f"NOT\n(from {self.origin})"

    def java_string(self) -> str:
        return f"(NOT {self.operand.java_string()})"


@dataclass(frozen=True, slots=True)
class BooleanCast(Node):
    """A property used as a condition: NULL if absent, its value if a Boolean, else FALSE."""

    operand: Node = None  # type: ignore[assignment]
    is_boolean = True

    def children(self) -> tuple[Node, ...]:
        return (self.operand,)

    def label(self) -> str:
        return "BooleanCast"

    def java_string(self) -> str:
        return self.operand.java_string()


@dataclass(frozen=True, slots=True)
class And(Node):
    left: Node = None  # type: ignore[assignment]
    right: Node = None  # type: ignore[assignment]
    is_boolean = True

    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)

    def label(self) -> str:
        return "AND" if self.origin is None else f"AND\n(from {self.origin})"

    def java_string(self) -> str:
        return f"({self.left.java_string()} && {self.right.java_string()})"


@dataclass(frozen=True, slots=True)
class Or(Node):
    left: Node = None  # type: ignore[assignment]
    right: Node = None  # type: ignore[assignment]
    is_boolean = True

    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)

    def label(self) -> str:
        return "OR" if self.origin is None else f"OR\n(from {self.origin})"

    def java_string(self) -> str:
        return f"({self.left.java_string()} || {self.right.java_string()})"


@dataclass(frozen=True, slots=True)
class Equal(Node):
    """``=`` (Java's ``doCreateEqual``); also ``IS NULL`` with ``right = Constant(None)``."""

    left: Node = None  # type: ignore[assignment]
    right: Node = None  # type: ignore[assignment]
    is_boolean = True

    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)

    def label(self) -> str:
        return "=" if self.origin in (None, "<>") else f"=\n(from {self.origin})"

    def java_string(self) -> str:
        return f"({self.left.java_string()} == {self.right.java_string()})"


@dataclass(frozen=True, slots=True)
class Compare(Node):
    """``>``, ``>=``, ``<``, ``<=`` — numbers only (two property strings are parsed as doubles)."""

    op: str = ">"
    left: Node = None  # type: ignore[assignment]
    right: Node = None  # type: ignore[assignment]
    is_boolean = True

    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)

    def label(self) -> str:
        return self.op

    def java_string(self) -> str:
        return f"({self.left.java_string()} {self.op} {self.right.java_string()})"


@dataclass(frozen=True, slots=True)
class In(Node):
    """``prop [NOT] IN ('s1', ...)``: exact string membership; NULL if the property is absent."""

    operand: Node = None  # type: ignore[assignment]
    values: tuple[str, ...] = ()
    negated: bool = False
    is_boolean = True

    def children(self) -> tuple[Node, ...]:
        return (self.operand,)

    def label(self) -> str:
        items = ", ".join(to_java_string(v) for v in self.values)
        return f"{'NOT IN' if self.negated else 'IN'} ({items})"

    def java_string(self) -> str:
        # UnaryInExpression.toString appends the raw strings, unquoted
        return f"{self.operand.java_string()} {'NOT IN' if self.negated else 'IN'} ( {', '.join(self.values)} )"


def walk(node: Node):
    """Pre-order iteration over a tree."""
    yield node
    for child in node.children():
        yield from walk(child)
