"""Typed errors of the filter layer (tag expressions and SQL92).

RocketMQ 4.9.4 turns every problem met while compiling a SQL92 subscription (lexical error,
grammar error, or a semantic check in one of the ``ComparisonExpression.createXxx`` factories)
into one ``MQFilterException("Invalid MessageSelector. ")``; the broker then refuses the
subscription. Here all of them are a :class:`FilterSyntaxError` whose ``kind`` says which of the
three it was, and whose message shows the expression with a caret under the offending column.

Problems met while *evaluating* a compiled expression against a message (a property that does
not parse as the number it is compared with, and one Java ``ClassCastException`` quirk) are a
:class:`FilterTypeError`. RocketMQ logs those and treats the message as not matched; the message
filters in :mod:`pymq_ref.broker.filter.message_filter` do the same.

This module must not import anything but :mod:`pymq_ref.errors`.
"""

from __future__ import annotations

from pymq_ref.errors import PymqError


class FilterError(PymqError, ValueError):
    """Base class of the filter errors."""


def caret_lines(expression: str, position: int) -> tuple[int, int, str]:
    """``(line, column, excerpt)`` for a 0-based ``position`` in ``expression``.

    ``line`` and ``column`` are 1-based and count Python characters (JavaCC counts UTF-16 units
    and expands tabs to 8 columns; we do not). ``excerpt`` is the offending line and a caret line.
    """
    position = max(0, min(position, len(expression)))
    line_start = expression.rfind("\n", 0, position) + 1
    line_end = expression.find("\n", position)
    if line_end < 0:
        line_end = len(expression)
    text = expression[line_start:line_end].replace("\r", " ")
    line = expression.count("\n", 0, position) + 1
    column = position - line_start + 1
    # keep tabs in the pad so the caret lines up under a tab-containing prefix
    pad = "".join("\t" if ch == "\t" else " " for ch in text[:column - 1])
    return line, column, f"    {text}\n    {pad}^"


class FilterSyntaxError(FilterError):
    """An expression RocketMQ would refuse to compile.

    Attributes: ``expression`` (the full text), ``position`` (0-based offset), ``line`` and
    ``column`` (1-based), ``expected`` (what would have been accepted there), ``found`` (what was
    there, ``"end of expression"`` at the end), ``kind`` (``"lexical"``, ``"syntax"`` or
    ``"semantic"``) and ``reason`` (for semantic errors: the check RocketMQ makes).
    """

    def __init__(self, expression: str, position: int, expected: str, found: str, *,
                 kind: str = "syntax", reason: str | None = None):
        self.expression = expression
        self.position = position
        self.expected = expected
        self.found = found
        self.kind = kind
        self.reason = reason
        self.line, self.column, excerpt = caret_lines(expression, position)
        where = f"column {self.column}" if self.line == 1 else f"line {self.line}, column {self.column}"
        head = f"{kind} error at {where}: expected {expected}, found {found}"
        if reason:
            head += f" ({reason})"
        super().__init__(f"{head}\n{excerpt}")


class FilterTypeError(FilterError):
    """Evaluating a compiled SQL92 expression failed on this message's property values.

    ``expression`` is the compiled expression's text, ``operator`` the comparison that failed,
    ``left``/``right`` the Java-typed operand values, ``reason`` what Java threw and why.
    """

    def __init__(self, expression: str, operator: str, left: object, right: object, reason: str):
        self.expression = expression
        self.operator = operator
        self.left = left
        self.right = right
        self.reason = reason
        super().__init__(f"cannot evaluate {operator} on {left!r} and {right!r}: {reason}")


class TagExpressionError(FilterError):
    """A tag expression that ``FilterAPI.buildSubscriptionData`` rejects ("subString split error").

    ``expression`` is the text. Only expressions made of nothing but ``||`` separators hit this.
    """

    def __init__(self, expression: str, reason: str):
        self.expression = expression
        self.reason = reason
        super().__init__(f"bad tag expression {expression!r}: {reason}")


class UnknownExpressionTypeError(FilterError):
    """An expression type other than ``TAG`` (or null/empty) and ``SQL92``.

    RocketMQ 4.9.4 has no filter for it: ``FilterFactory.get`` returns null, compiling fails
    inside ``ConsumerFilterManager.build`` and — on the pull path with a subscription in the
    request — the broker then filters nothing. We refuse it instead and say so.
    """

    def __init__(self, expression_type: str):
        self.expression_type = expression_type
        super().__init__(f"unknown expression type {expression_type!r}: expected 'TAG' (or None/'') or 'SQL92'")
