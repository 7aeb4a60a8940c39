"""Recursive-descent parser for RocketMQ 4.9.4 SQL92 selectors (the grammar of ``SelectorParser.jj``).

Grammar, lowest precedence first (``*`` = repeat, loops are left-associative)::

    selector    := or_expr                                  -- then: must be a condition
    or_expr     := and_expr ( OR and_expr )*
    and_expr    := equality ( AND equality )*
    equality    := comparison ( '=' comparison | '<>' comparison | IS NULL | IS NOT NULL )*
    comparison  := unary ( ('>'|'>='|'<'|'<=') unary
                         | [NOT] BETWEEN unary AND unary
                         | [NOT] IN '(' STRING (',' STRING)* ')' )*
    unary       := '+' unary | '-' unary | NOT unary | primary
    primary     := literal | ID | '(' or_expr ')'
    literal     := STRING | DECIMAL | FLOAT | TRUE | FALSE | NULL

Consequences worth knowing (all RocketMQ's, kept on purpose): ``NOT`` binds tighter than
comparisons (``NOT a = 1`` is ``(NOT a) = 1``); there is no arithmetic, no ``LIKE``, no
``IS TRUE``; ``CONTAINS``/``STARTSWITH``/``ENDSWITH`` arrived in 5.1.3.

**Trailing input.** RocketMQ stops after the first complete expression: ``a = 1 xyz`` compiles
as ``a = 1`` and ``a LIKE 'x'`` as the bare property ``a``. We do the same by default (the
compiled expression records where the ignored tail starts); ``strict=True`` rejects the tail
with a :class:`FilterSyntaxError` instead. The lexer is lazy, so exactly the tokens RocketMQ
looks at are cut: one token after the expression, two after a trailing ``IS`` or ``NOT``.

**Semantic checks** done while building (RocketMQ's ``createXxx`` factories; each is a
:class:`FilterSyntaxError` with ``kind="semantic"`` here, an ``MQFilterException`` there):
``NULL`` as an operand of ``=``/``<>``; ``TRUE``/``FALSE`` literal ``=`` a non-boolean literal;
a non-numeric literal or any condition as an operand of ``>``/``>=``/``<``/``<=`` (also inside
BETWEEN); ``BETWEEN`` with two literals where the low one is greater or either is NULL;
``IN`` after something that is not a property; ``AND``/``OR``/``NOT``/the whole selector
applied to something that is neither a condition nor a property; an integer literal above
``Long.MAX_VALUE``; a float literal that is infinite or below ``Double.MIN_VALUE`` (so ``0.0``
and ``0e0`` are rejected, a RocketMQ quirk).

Pure; raises only :class:`~pymq_ref.broker.filter.errors.FilterSyntaxError`.
"""

from __future__ import annotations

from pymq_ref.broker.filter.errors import FilterSyntaxError, FilterTypeError
from pymq_ref.broker.filter.sql92.ast import (
    And, BooleanCast, Compare, Constant, Equal, In, Negate, Node, Not, Or, Property,
)
from pymq_ref.broker.filter.sql92.evaluate import java_compare
from pymq_ref.broker.filter.sql92.java_values import (
    DOUBLE_MAX, DOUBLE_MIN, INT_MAX, INT_MIN, LONG_MAX, JavaLong, to_java_string,
)
from pymq_ref.broker.filter.sql92.lexer import Kind, Lexer, Token

#: Words users try that RocketMQ 4.9.4's grammar does not have, and where they come from.
NOT_IN_4_9_4 = {
    "LIKE": "LIKE is not in RocketMQ's selector grammar (removed when it was taken from ActiveMQ)",
    "ESCAPE": "ESCAPE (for LIKE) is not in RocketMQ's selector grammar",
    "CONTAINS": "CONTAINS is a RocketMQ 5.1.3+ operator, not in 4.9.4",
    "STARTSWITH": "STARTSWITH is a RocketMQ 5.1.3+ operator, not in 4.9.4",
    "ENDSWITH": "ENDSWITH is a RocketMQ 5.1.3+ operator, not in 4.9.4",
}
_ORDER_OPS = {Kind.GT: ">", Kind.GE: ">=", Kind.LT: "<", Kind.LE: "<="}
_LITERALS = (Kind.STRING, Kind.DECIMAL, Kind.FLOAT, Kind.TRUE, Kind.FALSE, Kind.NULL)
_PRIMARY_EXPECTED = "a property name, a literal, '(', NOT, '+' or '-'"


def _hint(tok: Token) -> str | None:
    return NOT_IN_4_9_4.get(tok.text.upper()) if tok.kind is Kind.ID else None


class Parser:
    """One parse of one expression: ``Parser(text).parse()`` → ``(root, tail_position | None)``."""

    def __init__(self, expression: str):
        self.expression = expression
        self.lexer = Lexer(expression)

    # -- helpers -----------------------------------------------------------------------------

    def _syntax(self, tok: Token, expected: str) -> FilterSyntaxError:
        return FilterSyntaxError(self.expression, tok.pos, expected, tok.describe(), reason=_hint(tok))

    def _semantic(self, pos: int, expected: str, found: str, reason: str) -> FilterSyntaxError:
        return FilterSyntaxError(self.expression, pos, expected, found, kind="semantic", reason=reason)

    def _expect(self, kind: Kind, expected: str | None = None) -> Token:
        tok = self.lexer.peek()
        if tok.kind is not kind:
            raise self._syntax(tok, expected or kind.value)
        return self.lexer.next()

    def _text(self, node: Node) -> str:
        return node.java_string()

    # -- grammar -----------------------------------------------------------------------------

    def parse(self) -> tuple[Node, int | None]:
        root = self._as_condition(self._or(), "the selector")
        tail = self.lexer.peek()
        return root, (None if tail.kind is Kind.EOF else tail.pos)

    def _or(self) -> Node:
        left = self._and()
        while self.lexer.peek().kind is Kind.OR:
            op = self.lexer.next()
            right = self._and()
            left = Or(self._as_condition(left, "OR"), self._as_condition(right, "OR"), pos=op.pos)
        return left

    def _and(self) -> Node:
        left = self._equality()
        while self.lexer.peek().kind is Kind.AND:
            op = self.lexer.next()
            right = self._equality()
            left = And(self._as_condition(left, "AND"), self._as_condition(right, "AND"), pos=op.pos)
        return left

    def _equality(self) -> Node:
        left = self._comparison()
        lx = self.lexer
        while lx.peek().kind in (Kind.EQ, Kind.NE, Kind.IS):
            op = lx.next()
            if op.kind is Kind.EQ:
                left = self._create_equal(left, self._comparison(), op)
            elif op.kind is Kind.NE:
                left = Not(self._create_equal(left, self._comparison(), op), pos=op.pos, origin="<>")
            elif lx.peek().kind is Kind.NULL:
                lx.next()
                left = Equal(left, Constant(None, pos=op.pos), pos=op.pos, origin="IS NULL")
            else:
                self._expect(Kind.NOT, "NULL or NOT NULL after IS (RocketMQ has no IS TRUE / IS FALSE)")
                self._expect(Kind.NULL, "NULL after IS NOT")
                left = Not(Equal(left, Constant(None, pos=op.pos), pos=op.pos, origin="IS NOT NULL"),
                           pos=op.pos, origin="IS NOT NULL")
        return left

    def _comparison(self) -> Node:
        left = self._unary()
        lx = self.lexer
        while lx.peek().kind in (Kind.NOT, Kind.BETWEEN, Kind.IN, *_ORDER_OPS):
            tok = lx.peek()
            if tok.kind in _ORDER_OPS:
                lx.next()
                left = self._create_order(_ORDER_OPS[tok.kind], left, self._unary(), tok.pos)
                continue
            negated = tok.kind is Kind.NOT
            if negated:
                after = lx.peek(1)
                if after.kind not in (Kind.BETWEEN, Kind.IN):
                    raise self._syntax(after, "BETWEEN or IN after NOT")
                lx.next()
            op = lx.next()
            if op.kind is Kind.BETWEEN:
                low = self._unary()
                self._expect(Kind.AND, "AND between the two bounds of BETWEEN")
                high = self._unary()
                left = self._create_between(left, low, high, tok.pos, negated)
            else:
                self._expect(Kind.LPAREN, "'(' opening the IN list")
                values = [self._expect(Kind.STRING, "a string literal (IN lists hold strings only)").value]
                while lx.peek().kind is Kind.COMMA:
                    lx.next()
                    values.append(self._expect(Kind.STRING, "a string literal (IN lists hold strings only)").value)
                self._expect(Kind.RPAREN, "',' or ')' closing the IN list")
                if not isinstance(left, Property):
                    raise self._semantic(tok.pos, "a property name before IN", self._text(left),
                                         "Expected a property for In expression")
                left = In(left, tuple(values), negated, pos=tok.pos)
        return left

    def _unary(self) -> Node:
        lx = self.lexer
        tok = lx.peek()
        if tok.kind is Kind.PLUS:
            lx.next()
            return self._unary()
        if tok.kind is Kind.MINUS:
            lx.next()
            return Negate(self._unary(), pos=tok.pos)
        if tok.kind is Kind.NOT:
            lx.next()
            return Not(self._as_condition(self._unary(), "NOT"), pos=tok.pos)
        return self._primary()

    def _primary(self) -> Node:
        lx = self.lexer
        tok = lx.peek()
        if tok.kind in _LITERALS:
            return self._literal(lx.next())
        if tok.kind is Kind.ID:
            lx.next()
            return Property(tok.text, pos=tok.pos)
        if tok.kind is Kind.LPAREN:
            lx.next()
            inner = self._or()
            self._expect(Kind.RPAREN, "')' closing the parenthesis (or AND, OR, a comparison)")
            return inner
        raise self._syntax(tok, _PRIMARY_EXPECTED)

    # -- literals (ConstantExpression.createFromDecimal / createFloat) -------------------------

    def _literal(self, tok: Token) -> Constant:
        k = tok.kind
        if k is Kind.STRING:
            return Constant(tok.value, pos=tok.pos)
        if k in (Kind.TRUE, Kind.FALSE, Kind.NULL):
            return Constant({Kind.TRUE: True, Kind.FALSE: False, Kind.NULL: None}[k], pos=tok.pos)
        if k is Kind.DECIMAL:
            value = int(tok.text.rstrip("lL"))
            if value > LONG_MAX:
                raise self._semantic(tok.pos, f"an integer up to {LONG_MAX} (Long.MAX_VALUE)", tok.text,
                                     "NumberFormatException in ConstantExpression.createFromDecimal")
            return Constant(value if INT_MIN <= value <= INT_MAX else JavaLong(value), pos=tok.pos)
        value_f = float(tok.text)
        if value_f > DOUBLE_MAX:
            raise self._semantic(tok.pos, "a finite float literal", tok.text,
                                 f"{tok.text} is greater than Double.MAX_VALUE")
        if value_f < DOUBLE_MIN:
            raise self._semantic(tok.pos, "a float literal >= Double.MIN_VALUE (4.9E-324)", tok.text,
                                 f"{tok.text} is less than Double.MIN_VALUE: RocketMQ rejects 0.0; "
                                 "write 0 (an integer) instead")
        return Constant(value_f, pos=tok.pos)

    # -- factories with RocketMQ's checks (ComparisonExpression.createXxx) -------------------

    def _as_condition(self, node: Node, where: str) -> Node:
        """``SelectorParser.asBooleanExpression``."""
        if node.is_boolean:
            return node
        if isinstance(node, Property):
            return BooleanCast(node, pos=node.pos)
        raise self._semantic(node.pos, f"a condition as operand of {where}", self._text(node),
                             "Expression will not result in a boolean value")

    def _create_equal(self, left: Node, right: Node, op: Token) -> Node:
        for side in (left, right):
            if isinstance(side, Constant) and side.value is None:
                raise self._semantic(side.pos, f"a non-NULL operand of {op.text}", "NULL",
                                     "'NULL' cannot be compared; use IS NULL / IS NOT NULL")
        if (isinstance(left, Constant) and isinstance(right, Constant)
                and left.is_boolean and not right.is_boolean):
            raise self._semantic(right.pos, f"a boolean literal to compare with {self._text(left)}",
                                 self._text(right), "a boolean literal cannot be compared with a non-boolean literal")
        return Equal(left, right, pos=op.pos, origin=None if op.kind is Kind.EQ else "<>")

    def _check_order_operand(self, node: Node, op: str) -> None:
        """``checkLessThanOperand``: numeric literal, property or unary minus only."""
        if isinstance(node, Constant):
            if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
                return
            raise self._semantic(node.pos, f"a number, a property or a negation as operand of {op}",
                                 self._text(node), f"Value '{self._text(node)}' cannot be compared")
        if node.is_boolean:
            raise self._semantic(node.pos, f"a number, a property or a negation as operand of {op}",
                                 self._text(node), f"Value '{self._text(node)}' cannot be compared "
                                 "(a condition is not a number; RocketMQ does not chain comparisons)")

    def _create_order(self, op: str, left: Node, right: Node, pos: int, origin: str | None = None) -> Node:
        self._check_order_operand(left, op)
        self._check_order_operand(right, op)
        return Compare(op, left, right, pos=pos, origin=origin)

    def _create_between(self, value: Node, low: Node, high: Node, pos: int, negated: bool) -> Node:
        if negated:
            return Or(self._create_order("<", value, low, pos, "NOT BETWEEN"),
                      self._create_order(">", value, high, pos, "NOT BETWEEN"), pos=pos, origin="NOT BETWEEN")
        if isinstance(low, Constant) and isinstance(high, Constant):
            if low.value is None or high.value is None:
                raise self._semantic(low.pos if low.value is None else high.pos, "non-NULL bounds", "NULL",
                                     "Illegal values of between, values can not be null!")
            try:
                order = java_compare(high.value, low.value)
            except FilterTypeError as e:
                raise self._semantic(pos, "comparable bounds", f"{self._text(low)} and {self._text(high)}",
                                     e.reason) from None
            if order < 0:
                raise self._semantic(pos, "low bound <= high bound",
                                     f"{to_java_string(low.value)} > {to_java_string(high.value)}",
                                     "Illegal values of between, left value must less than or equal to right value")
        return And(self._create_order(">=", value, low, pos, "BETWEEN"),
                   self._create_order("<=", value, high, pos, "BETWEEN"), pos=pos, origin="BETWEEN")
