"""Tokenizer for RocketMQ 4.9.4 SQL92 selectors (the token section of ``SelectorParser.jj``).

Tokens (keywords and literals are case-insensitive; longest match wins, a keyword beats an
identifier of the same length):

=============  ==============================================================
keywords       ``NOT AND OR BETWEEN IN TRUE FALSE NULL IS``
DECIMAL        ``0`` or ``[1-9][0-9]*`` with an optional ``l``/``L`` (``0L`` is ``0`` then ``L``!)
FLOAT          ``5.5``, ``5.``, ``.5``, ``5E10``, ``5.5e-3`` (ASCII digits)
STRING         ``'...'`` with ``''`` for a quote inside; may span lines
ID             ``[A-Za-z_$][A-Za-z0-9_$]*`` — ASCII only
operators      ``= <> > >= < <= ( , ) + -``
skipped        space, tab, CR, LF, FF; ``-- ...`` up to and including a line end (without
               one it is not a comment but two ``-`` tokens); ``/* ... */``
=============  ==============================================================

The lexer is **lazy**, like JavaCC's token manager: a token is only cut when the parser asks
for it. This matters because RocketMQ's parser stops after the first complete expression and
never looks at what follows beyond one (sometimes two) tokens of lookahead: ``a = 1 x ~`` is
accepted, ``a = 1 ~`` is a lexical error. Positions are 0-based offsets into the expression.

Pure; raises only :class:`~pymq_ref.broker.filter.errors.FilterSyntaxError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from pymq_ref.broker.filter.errors import FilterSyntaxError


class Kind(Enum):
    EOF = "end of expression"
    NOT = "NOT"
    AND = "AND"
    OR = "OR"
    BETWEEN = "BETWEEN"
    IN = "IN"
    TRUE = "TRUE"
    FALSE = "FALSE"
    NULL = "NULL"
    IS = "IS"
    DECIMAL = "integer literal"
    FLOAT = "float literal"
    STRING = "string literal"
    ID = "property name"
    EQ = "'='"
    NE = "'<>'"
    GT = "'>'"
    GE = "'>='"
    LT = "'<'"
    LE = "'<='"
    LPAREN = "'('"
    COMMA = "','"
    RPAREN = "')'"
    PLUS = "'+'"
    MINUS = "'-'"


KEYWORDS = {k.value: k for k in (Kind.NOT, Kind.AND, Kind.OR, Kind.BETWEEN, Kind.IN, Kind.TRUE,
                                 Kind.FALSE, Kind.NULL, Kind.IS)}
_OPERATORS = [("<>", Kind.NE), ("<=", Kind.LE), (">=", Kind.GE), ("<", Kind.LT), (">", Kind.GT),
              ("=", Kind.EQ), ("(", Kind.LPAREN), (")", Kind.RPAREN), (",", Kind.COMMA),
              ("+", Kind.PLUS), ("-", Kind.MINUS)]
_WHITESPACE = " \t\n\r\f"
_ID_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$")
_ID_PART = _ID_START | frozenset("0123456789")
_DIGITS = frozenset("0123456789")


@dataclass(frozen=True, slots=True)
class Token:
    """One token: ``kind``, source ``text``, 0-based ``pos``; ``value`` is the decoded string of a
    STRING token (quotes removed, ``''`` undone) and the text otherwise."""

    kind: Kind
    text: str
    pos: int
    value: str

    def describe(self) -> str:
        """How an error message names this token: ``keyword NOT``, ``property name 'a'``, ``'='``."""
        k = self.kind
        if k is Kind.EOF:
            return "end of expression"
        if k in KEYWORDS.values():
            return f"keyword {self.text}"
        if k in (Kind.ID, Kind.DECIMAL, Kind.FLOAT):
            return f"{k.value} {self.text!r}" if k is Kind.ID else f"{k.value} {self.text}"
        if k is Kind.STRING:
            return f"string literal {self.text}"
        return k.value


def decode_string_literal(image: str) -> str:
    """The value of a STRING token's image, as ``SelectorParser.stringLitteral`` decodes it."""
    out = []
    i = 1
    while i < len(image) - 1:
        c = image[i]
        if c == "'":
            i += 1
        out.append(c)
        i += 1
    return "".join(out)


class Lexer:
    """Lazy tokenizer. Legal calls: any number of ``peek(k)`` and ``next()`` in any order;
    after ``EOF`` has been returned every further call returns ``EOF`` again."""

    def __init__(self, expression: str):
        self.expression = expression
        self._pos = 0  # where the next token is cut
        self._tokens: list[Token] = []  # cut but not consumed
        self.consumed: Token | None = None  # last consumed token

    def peek(self, k: int = 0) -> Token:
        while len(self._tokens) <= k:
            self._tokens.append(self._cut())
        return self._tokens[k]

    def next(self) -> Token:
        tok = self.peek(0)
        if tok.kind is not Kind.EOF:
            self._tokens.pop(0)
        self.consumed = tok
        return tok

    def rest_position(self) -> int:
        """Where the not-yet-consumed input starts (start of the next token, else end)."""
        return self._tokens[0].pos if self._tokens else self._skip_from(self._pos)

    # -- cutting -----------------------------------------------------------------------------

    def _error(self, pos: int, expected: str, found: str) -> FilterSyntaxError:
        return FilterSyntaxError(self.expression, pos, expected, found, kind="lexical")

    def _skip_from(self, i: int) -> int:
        """Skip whitespace and complete comments (``--`` needs its line end; ``/*`` its ``*/``)."""
        s, n = self.expression, len(self.expression)
        while i < n:
            c = s[i]
            if c in _WHITESPACE:
                i += 1
            elif s.startswith("--", i):
                ends = [j for j in (s.find("\n", i + 2), s.find("\r", i + 2)) if j >= 0]
                if not ends:
                    return i  # not a comment: the '-' token
                i = min(ends) + (2 if s.startswith("\r\n", min(ends)) else 1)
            elif s.startswith("/*", i):
                j = s.find("*/", i + 2)
                if j < 0:
                    raise self._error(i, "'*/' closing the comment that starts here", "end of expression")
                i = j + 2
            else:
                return i
        return i

    def _cut(self) -> Token:
        s, n = self.expression, len(self.expression)
        i = self._pos = self._skip_from(self._pos)
        if i >= n:
            return Token(Kind.EOF, "", n, "")
        c = s[i]
        if c in _ID_START:
            j = i + 1
            while j < n and s[j] in _ID_PART:
                j += 1
            text = s[i:j]
            return self._emit(KEYWORDS.get(text.upper(), Kind.ID), i, j)
        if c in _DIGITS or (c == "." and i + 1 < n and s[i + 1] in _DIGITS):
            return self._number(i)
        if c == "'":
            return self._string(i)
        for op, kind in _OPERATORS:
            if s.startswith(op, i):
                return self._emit(kind, i, i + len(op))
        found = "'.'" if c == "." else repr(c)
        raise self._error(i, "a property name, a literal, an operator or a parenthesis", found)

    def _emit(self, kind: Kind, i: int, j: int, value: str | None = None) -> Token:
        self._pos = j
        text = self.expression[i:j]
        return Token(kind, text, i, text if value is None else value)

    def _digits(self, j: int) -> int:
        s, n = self.expression, len(self.expression)
        while j < n and s[j] in _DIGITS:
            j += 1
        return j

    def _exponent(self, j: int) -> int:
        """End of an ``E[+-]digits`` exponent starting at ``j``, or ``j`` if there is none."""
        s, n = self.expression, len(self.expression)
        if j < n and s[j] in "eE":
            k = j + 1
            if k < n and s[k] in "+-":
                k += 1
            end = self._digits(k)
            if end > k:
                return end
        return j

    def _number(self, i: int) -> Token:
        s, n = self.expression, len(self.expression)
        if s[i] == ".":
            return self._emit(Kind.FLOAT, i, self._exponent(self._digits(i + 1)))
        d = self._digits(i)
        float_end = -1
        if d < n and s[d] == ".":
            float_end = self._exponent(self._digits(d + 1))
        elif self._exponent(d) > d:
            float_end = self._exponent(d)
        if s[i] == "0":
            dec_end = i + 1
        else:
            dec_end = d + 1 if d < n and s[d] in "lL" else d
        if float_end > dec_end:
            return self._emit(Kind.FLOAT, i, float_end)
        return self._emit(Kind.DECIMAL, i, dec_end)

    def _string(self, i: int) -> Token:
        s, n = self.expression, len(self.expression)
        j, accept = i + 1, -1
        while j < n:
            if s[j] == "'":
                accept = j + 1  # this quote may close the literal ...
                if j + 1 < n and s[j + 1] == "'":
                    j += 2  # ... or start a '' escape: keep the longer match going
                    continue
                break
            j += 1
        if accept < 0:
            raise self._error(i, "a closing ' for the string literal that starts here", "end of expression")
        image = s[i:accept]
        return self._emit(Kind.STRING, i, accept, decode_string_literal(image))
