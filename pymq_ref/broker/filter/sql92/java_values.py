"""Java value semantics the SQL92 evaluator depends on, written out in Python.

RocketMQ evaluates selectors on boxed Java values: ``String`` (every message property),
``Integer`` and ``Long`` (decimal literals), ``Double`` (float literals), ``Boolean`` and null.
Python has one ``int`` and a ``bool`` that *is* an ``int``, so the evaluator uses:

* ``str`` for String, ``bool`` for Boolean, ``None`` for null, ``float`` for Double;
* ``int`` for Integer and :class:`JavaLong` (an ``int`` subclass) for Long — the two convert a
  property string differently (``Integer.valueOf`` vs ``Long.valueOf``: different ranges).

The string→number conversions are Java's, not Python's: Python's ``int()`` and ``float()``
accept surrounding whitespace, ``_`` separators, ``"inf"``; Java's don't (and Java's
``Double.valueOf`` accepts ``"1.5f"``, ``"0x1p3"`` and surrounding control chars, Python's doesn't).
Each parser returns the value or raises :class:`JavaNumberFormatError`.

Pure functions; no I/O.
"""

from __future__ import annotations

import math
import re
import struct
import unicodedata
from decimal import Decimal


class JavaNumberFormatError(ValueError):
    """Java's ``NumberFormatException``."""


class JavaLong(int):
    """An ``int`` that stands for a boxed ``java.lang.Long``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{int(self)}L"


INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1
DOUBLE_MAX = 1.7976931348623157e308
DOUBLE_MIN = 5e-324  # Double.MIN_VALUE: the smallest *positive* double


def java_type(value: object) -> str:
    """The Java class name a Python value stands for (for messages and the notebook)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "Boolean"
    if isinstance(value, JavaLong):
        return "Long"
    if isinstance(value, int):
        return "Integer"
    if isinstance(value, float):
        return "Double"
    if isinstance(value, str):
        return "String"
    return type(value).__name__


def _java_digit(ch: str) -> int:
    """``Character.digit(ch, 10)`` for one UTF-16 unit: any Unicode Nd digit in the BMP, else -1."""
    if len(ch.encode("utf-16-le")) != 2:
        return -1  # a supplementary char is two UTF-16 units, neither of which is a digit
    try:
        return unicodedata.decimal(ch)
    except ValueError:
        return -1


def _parse_integral(s: str, lo: int, hi: int, what: str) -> int:
    if not s:
        raise JavaNumberFormatError(f'For input string: "{s}" ({what})')
    sign, digits = 1, s
    if s[0] in "+-":
        sign, digits = (-1 if s[0] == "-" else 1), s[1:]
    if not digits:
        raise JavaNumberFormatError(f'For input string: "{s}" ({what})')
    value = 0
    for ch in digits:
        d = _java_digit(ch)
        if d < 0:
            raise JavaNumberFormatError(f'For input string: "{s}" ({what})')
        value = value * 10 + d
    value *= sign
    if not lo <= value <= hi:
        raise JavaNumberFormatError(f'For input string: "{s}" (out of {what} range)')
    return value


def integer_value_of(s: str) -> int:
    """``Integer.valueOf(String)``: optional sign, decimal digits only, 32-bit range."""
    return _parse_integral(s, INT_MIN, INT_MAX, "Integer")


def long_value_of(s: str) -> JavaLong:
    """``Long.valueOf(String)``: optional sign, decimal digits only, 64-bit range."""
    return JavaLong(_parse_integral(s, LONG_MIN, LONG_MAX, "Long"))


_DEC = r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_HEX = r"0[xX](?:[0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?[0-9]+"
_DOUBLE_RE = re.compile(rf"([+-]?)(NaN|Infinity|{_HEX}|{_DEC})[fFdD]?", re.ASCII)


def double_value_of(s: str) -> float:
    """``Double.valueOf(String)`` (``FloatingDecimal.readJavaFormatString``).

    Trims chars ``<= U+0020``; accepts ``NaN``, ``Infinity``, decimal and hexadecimal forms
    with an optional sign and an optional ``f/F/d/D`` suffix; ASCII digits only.
    """
    t = s.strip("".join(chr(c) for c in range(0x21)))
    m = _DOUBLE_RE.fullmatch(t)
    if m is None or (m.group(2)[0] in "NI" and t[-1] in "fFdD"):
        raise JavaNumberFormatError(f'For input string: "{s}"')
    sign = -1.0 if m.group(1) == "-" else 1.0
    body = m.group(2)
    if body == "NaN":
        return math.nan
    if body == "Infinity":
        return sign * math.inf
    if body[:2] in ("0x", "0X"):
        return sign * float.fromhex(body)
    return sign * float(body)


def boolean_value_of(s: str) -> bool:
    """``Boolean.valueOf(String)``: true iff ``"true"`` ignoring (ASCII) case; anything else is false."""
    return s.isascii() and s.lower() == "true"


def _double_key(x: float) -> int:
    """``Double.doubleToLongBits`` ordering key: NaN canonical and largest, -0.0 below 0.0."""
    if math.isnan(x):
        return 0x7FF8000000000000
    bits = struct.unpack(">q", struct.pack(">d", x))[0]
    return bits if bits >= 0 else bits ^ 0x7FFFFFFFFFFFFFFF


def compare_doubles(a: float, b: float) -> int:
    """``Double.compare``: total order with ``-0.0 < 0.0`` and NaN equal to itself, above +Infinity."""
    if a < b:
        return -1
    if a > b:
        return 1
    ka, kb = _double_key(a), _double_key(b)
    return (ka > kb) - (ka < kb)


def compare_strings(a: str, b: str) -> int:
    """``String.compareTo``: by UTF-16 code units (differs from Python for non-BMP chars)."""
    ea, eb = a.encode("utf-16-be", "surrogatepass"), b.encode("utf-16-be", "surrogatepass")
    return (ea > eb) - (ea < eb)


def java_equals(a: object, b: object) -> bool:
    """``a.equals(b)`` for the boxed types above: same Java class and same value (Double by bits)."""
    ta = java_type(a)
    if ta != java_type(b):
        return False
    if ta == "Double":
        return _double_key(a) == _double_key(b)  # type: ignore[arg-type]
    return a == b


def to_java_string(value: object) -> str:
    """``String.valueOf(value)`` the way ``ConstantExpression.toString`` prints a constant."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, float):
        return java_double_to_string(value)
    return str(int(value))  # type: ignore[call-overload]


def java_double_to_string(x: float) -> str:
    """``Double.toString``: plain notation in [1e-3, 1e7), else ``d.dddE±n`` (shortest digits)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    a = abs(x)
    sign = "-" if x < 0 else ""
    if 1e-3 <= a < 1e7:
        r = repr(a)
        if "e" in r:  # repr switches to exponent form for tiny values; expand
            r = f"{a:.17f}".rstrip("0")
        return sign + (r if "." in r else r + ".0")
    digits, exp = _shortest_digits(a)
    mantissa = digits[0] + "." + (digits[1:] or "0")
    return f"{sign}{mantissa}E{exp}"


def _shortest_digits(a: float) -> tuple[str, int]:
    """Shortest round-trip decimal digits of ``a > 0`` and its scientific exponent."""
    d = Decimal(repr(a)).normalize()
    _, digit_tuple, e = d.as_tuple()
    digits = "".join(map(str, digit_tuple))
    return digits, len(digits) - 1 + int(e)
