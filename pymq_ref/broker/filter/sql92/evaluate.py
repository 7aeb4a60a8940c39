"""Evaluation of a compiled SQL92 tree against message properties (RocketMQ 4.9.4 semantics).

Theory of operation. Every property value is a Java ``String`` and a missing property is
``null``; literals are Integer, Long, Double, String, Boolean or null (:mod:`.java_values`).
A node evaluates to a value; a condition evaluates to ``True``, ``False`` or ``None`` (SQL's
UNKNOWN), and a message matches only when the whole selector is ``True``.

* ``AND``/``OR``/``NOT``: Kleene three-valued logic, left operand first, right operand only
  when the left does not decide (``FALSE AND x`` / ``TRUE OR x`` never evaluate ``x``).
* ``=`` (``ComparisonExpression.doCreateEqual``): if exactly one side is null the result is
  NULL when the *left* side is null and **FALSE when only the right side is** (so ``3 = b``
  is FALSE for a missing ``b`` and ``3 <> b`` is TRUE, while ``b = 3`` / ``b <> 3`` are NULL);
  both null → TRUE (this is how ``IS NULL`` works); equal Java objects → TRUE; otherwise the
  operands are converted to a common type (:func:`java_compare`) and compared.
* ``>``, ``>=``, ``<``, ``<=``: null on either side → NULL (the right side is not evaluated when
  the left is null); two Strings are both parsed with ``Double.valueOf``; otherwise
  :func:`java_compare`.
* :func:`java_compare` is ``ComparisonExpression.__compare``: the *other* operand's type decides
  how a String is parsed (``Integer.valueOf`` against an Integer literal, ``Long.valueOf``
  against a Long, ``Double.valueOf`` against a Double, ``Boolean.valueOf`` against a Boolean);
  Integer→Long→Double widening; a Boolean against a number compares as "less" (so ``=`` is
  FALSE). A String that does not parse raises :class:`FilterTypeError` (Java: a
  ``RuntimeException`` wrapping ``NumberFormatException``) — e.g. ``a = 3`` with ``a = "x"``;
  so does a Boolean on the left against a String on the right (Java casts the wrong operand:
  ``ClassCastException``).
* ``IN``: the property string must equal one of the literals; absent → NULL.
* unary ``-``: numbers are negated (Java int/long wrap-around), anything else is NULL.
* a property used as a condition (``BooleanCast``): NULL if absent, else FALSE (a String is
  never a Boolean).

Pure; raises only :class:`~pymq_ref.broker.filter.errors.FilterTypeError`.
"""

from __future__ import annotations

from collections.abc import Mapping

from pymq_ref.broker.filter.errors import FilterTypeError
from pymq_ref.broker.filter.sql92.ast import (
    And, BooleanCast, Compare, Constant, Equal, In, Negate, Node, Not, Or, Property,
)
from pymq_ref.broker.filter.sql92.java_values import (
    JavaLong, JavaNumberFormatError, boolean_value_of, compare_doubles, compare_strings,
    double_value_of, integer_value_of, java_equals, java_type, long_value_of,
)

_PARSERS = {"Integer": integer_value_of, "Long": long_value_of, "Double": double_value_of,
            "Boolean": boolean_value_of}


def _wrap(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def java_compare(lv: object, rv: object, node: Node | None = None) -> int:
    """``ComparisonExpression.__compare(lv, rv, convertStringExpressions=true)`` for non-null operands.

    Returns the sign of ``lv.compareTo(rv)`` after conversion, or -1 for incompatible types.
    """
    tl, tr = java_type(lv), java_type(rv)
    if tl != tr:
        try:
            if tl == "Boolean":
                if tr == "String":
                    raise _error(node, lv, rv, "java.lang.ClassCastException: Boolean cannot be cast to String "
                                 "(RocketMQ converts the wrong operand when a Boolean meets a String)")
                return -1
            if tl == "Integer" and tr in ("Long", "Double"):
                lv = JavaLong(lv) if tr == "Long" else float(lv)  # type: ignore[arg-type]
            elif tl == "Long" and tr in ("Integer", "Double"):
                if tr == "Integer":
                    rv = JavaLong(rv)  # type: ignore[call-overload]
                else:
                    lv = float(lv)  # type: ignore[arg-type]
            elif tl == "Double" and tr in ("Integer", "Long"):
                rv = float(rv)  # type: ignore[arg-type]
            elif tl in ("Integer", "Long", "Double") and tr == "String":
                rv = _PARSERS[tl](rv)  # type: ignore[operator]
            elif tl == "String" and tr in _PARSERS:
                lv = _PARSERS[tr](lv)  # type: ignore[operator]
            else:
                return -1
        except JavaNumberFormatError as e:
            raise _error(node, lv, rv, f"java.lang.NumberFormatException: {e}") from None
    t = java_type(lv)
    if t == "Double":
        return compare_doubles(lv, rv)  # type: ignore[arg-type]
    if t == "String":
        return compare_strings(lv, rv)  # type: ignore[arg-type]
    return (lv > rv) - (lv < rv)  # type: ignore[operator]


def _error(node: Node | None, lv: object, rv: object, reason: str) -> FilterTypeError:
    op = getattr(node, "op", "=") if node is not None else "compare"
    text = node.java_string() if node is not None else "?"
    return FilterTypeError(text, op, lv, rv, reason)


_ORDER = {">": lambda c: c > 0, ">=": lambda c: c >= 0, "<": lambda c: c < 0, "<=": lambda c: c <= 0}


def evaluate(node: Node, properties: Mapping[str, str] | None) -> object:
    """The Java value of ``node`` for a message with these ``properties`` (``None`` = SQL NULL)."""
    ev = evaluate
    if isinstance(node, Property):
        return None if properties is None else properties.get(node.name)
    if isinstance(node, Constant):
        return node.value
    if isinstance(node, And):
        lv = ev(node.left, properties)
        if lv is False:
            return False
        rv = ev(node.right, properties)
        if rv is False:
            return False
        return None if lv is None or rv is None else True
    if isinstance(node, Or):
        lv = ev(node.left, properties)
        if lv is True:
            return True
        rv = ev(node.right, properties)
        if rv is True:
            return True
        return None if lv is None or rv is None else False
    if isinstance(node, Not):
        v = ev(node.operand, properties)
        return None if v is None else not v
    if isinstance(node, Equal):
        lv = ev(node.left, properties)
        rv = ev(node.right, properties)
        if (lv is None) != (rv is None):
            return None if lv is None else False
        if lv is None or java_equals(lv, rv):
            return True
        return java_compare(lv, rv, node) == 0
    if isinstance(node, Compare):
        lv = ev(node.left, properties)
        if lv is None:
            return None
        rv = ev(node.right, properties)
        if rv is None:
            return None
        if isinstance(lv, str) and isinstance(rv, str):
            try:
                c = compare_doubles(double_value_of(lv), double_value_of(rv))
            except JavaNumberFormatError:
                raise _error(node, lv, rv, "It's illegal to compare string by '>=', '>', '<', '<=' "
                             "(both sides are strings and one is not a number)") from None
        else:
            c = java_compare(lv, rv, node)
        return _ORDER[node.op](c)
    if isinstance(node, In):
        v = ev(node.operand, properties)
        if v is None or not isinstance(v, str):
            return None
        return (v in node.values) != node.negated
    if isinstance(node, BooleanCast):
        v = ev(node.operand, properties)
        if v is None:
            return None
        return v if isinstance(v, bool) else False
    if isinstance(node, Negate):
        v = ev(node.operand, properties)
        if v is None or isinstance(v, (bool, str)):
            return None
        if isinstance(v, float):
            return -v
        if isinstance(v, JavaLong):
            return JavaLong(_wrap(-int(v), 64))
        return _wrap(-v, 32)  # type: ignore[operator]
    raise TypeError(f"not a SQL92 node: {node!r}")
