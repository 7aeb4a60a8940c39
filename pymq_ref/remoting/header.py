"""Typed custom headers and their ``extFields`` form, declared once per Java class.

A RocketMQ request or response carries its parameters as ``extFields``: a map of strings,
filled from a *custom header* object (``CommandCustomHeader``) — one entry per non-static field,
key = the Java field name, value = ``String.valueOf`` of the value, null fields left out
(``RemotingCommand.makeCustomHeaderToNet``). Reading goes the other way
(``decodeCommandCustomHeader``) and is lenient in 4.9.4: a missing ``@CFNotNull`` field or an
unparsable number is logged and the field keeps its default; the request fails later, if at all.
Four headers implement ``FastCodesHeader`` and read themselves: there a missing field is still
only logged, but a bad number throws ``NumberFormatException`` and fails the request.

Each header class here declares its fields like kafka-python's schemas: Java name, Java type,
required flag and initial value, in the Java declaration order (which decides the entry order of
the binary header for fast headers, and collisions inside Java's ``HashMap``). The same
declaration drives encoding, decoding, validation, the hex view and the book's reference tables.

Python attributes are the snake_case of the Java names (``consumerGroup`` -> ``consumer_group``);
a field may name another attribute (``SendMessageRequestHeaderV2``'s ``a`` is ``producer_group``).
Pure code; no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping

from .errors import EncodeError, HeaderFieldError

_INT = re.compile(r"[+-]?[0-9]+\Z")
_I32 = (-(2**31), 2**31 - 1)
_I64 = (-(2**63), 2**63 - 1)


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _java_integer(text: str, lo_hi: tuple[int, int]) -> int:
    """``Integer.parseInt`` / ``Long.parseLong``: optional sign, ASCII digits, in range."""
    if not _INT.match(text):
        raise ValueError(f'For input string: "{text}"')
    value = int(text)
    if not lo_hi[0] <= value <= lo_hi[1]:
        raise ValueError(f'For input string: "{text}"')
    return value


def _parse_int(text: str) -> int:
    return _java_integer(text, _I32)


def _parse_long(text: str) -> int:
    return _java_integer(text, _I64)


def _parse_boolean(text: str) -> bool:
    """``Boolean.parseBoolean``: true only for "true" in any case; never fails."""
    return text.lower() == "true"


def _format_boolean(value: bool) -> str:
    return "true" if value else "false"


def _format_int(value: int) -> str:
    return str(int(value))


@dataclass(frozen=True, slots=True)
class JavaType:
    """A Java field type a header may have, with its ``String.valueOf`` and parse functions."""

    name: str
    python: type
    primitive: bool
    parse: Callable[[str], Any]
    format: Callable[[Any], str]
    range: tuple[int, int] | None = None

    @property
    def zero(self):
        """The default of a primitive field (0 / false); boxed fields default to null."""
        return (False if self.python is bool else 0) if self.primitive else None


def _parse_unsupported(text: str):
    """Fields of types ``decodeCommandCustomHeader`` does not know: reading always fails (logged)."""
    raise ValueError(f"the custom field type is not supported (value {text!r})")


def _format_list(value) -> str:
    """``List.toString()``: ``[a, b]``."""
    return "[" + ", ".join(str(v) for v in value) + "]"


STRING = JavaType("String", str, False, str, str)
LIST = JavaType("List", list, False, _parse_unsupported, _format_list)
INTEGER = JavaType("Integer", int, False, _parse_int, _format_int, _I32)
INT = JavaType("int", int, True, _parse_int, _format_int, _I32)
LONG = JavaType("Long", int, False, _parse_long, _format_int, _I64)
LONG_PRIMITIVE = JavaType("long", int, True, _parse_long, _format_int, _I64)
BOOLEAN = JavaType("Boolean", bool, False, _parse_boolean, _format_boolean)
BOOLEAN_PRIMITIVE = JavaType("boolean", bool, True, _parse_boolean, _format_boolean)


@dataclass(frozen=True, slots=True)
class HeaderField:
    """One field of a custom header: ext key (the Java field name), Java type, ``@CFNotNull``,
    initial value (Java's field initializer), Python attribute, and one sentence of meaning."""

    name: str
    jtype: JavaType
    required: bool = False
    default: Any = None
    attr: str = ""
    doc: str = ""

    @property
    def initial(self):
        return self.jtype.zero if self.default is None else self.default


def field(name: str, jtype: JavaType, required: bool = False, default: Any = None, *, attr: str = "",
          doc: str = "") -> HeaderField:
    """A header field; ``doc`` defaults to the glossary sentence of ``name``."""
    from .headers.glossary import FIELD_DOCS
    attr = attr or _snake({"clientID": "clientId", "classCRC": "classCrc"}.get(name, name))
    head, *rest = attr.split("_")
    doc = doc or FIELD_DOCS.get(name) or FIELD_DOCS.get(head + "".join(p.title() for p in rest), "")
    return HeaderField(name, jtype, required, default, attr, doc)


class CommandHeader:
    """Base of every typed header. Subclasses set ``FIELDS`` (Java declaration order), ``JAVA``
    (the simple class name) and ``FAST`` (implements ``FastCodesHeader``).

    ``missing`` lists required fields that were absent when decoded; ``invalid`` the fields whose
    value could not be parsed (and so kept their default), as 4.9.4 logs them.
    """

    FIELDS: ClassVar[tuple[HeaderField, ...]] = ()
    JAVA: ClassVar[str] = ""
    JAVA_PACKAGE: ClassVar[str] = "org.apache.rocketmq.common.protocol.header"
    FAST: ClassVar[bool] = False
    _BY_ATTR: ClassVar[dict[str, HeaderField]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._BY_ATTR = {f.attr: f for f in cls.FIELDS}
        if not cls.JAVA:
            cls.JAVA = cls.__name__
        cls.to_ext, cls.from_ext = _compile(cls)

    def __init__(self, **values):
        d = self.__dict__
        for f in self.FIELDS:
            d[f.attr] = f.initial
        for attr, value in values.items():
            if attr not in self._BY_ATTR:
                raise TypeError(f"{type(self).__name__} has no field {attr!r}; fields: "
                                f"{', '.join(self._BY_ATTR)}")
            d[attr] = value
        d["missing"] = ()
        d["invalid"] = ()

    # -- to the wire ------------------------------------------------------------------------
    def to_ext(self) -> dict[str, str]:  # replaced per class by a compiled fast path (see _compile)
        """``makeCustomHeaderToNet``: the ext entries, in declaration order, nulls left out."""
        d = self.__dict__
        out = {}
        for f in self.FIELDS:
            value = d[f.attr]
            if value is None:
                continue
            if f.jtype.python is int and (isinstance(value, bool) or not isinstance(value, int)):
                raise EncodeError(self.JAVA, f.name, f"a Java {f.jtype.name}", value)
            if f.jtype.range is not None and not f.jtype.range[0] <= value <= f.jtype.range[1]:
                raise EncodeError(self.JAVA, f.name, f"a Java {f.jtype.name} in {list(f.jtype.range)}", value)
            out[f.name] = f.jtype.format(value)
        return out

    # -- from the wire ----------------------------------------------------------------------
    _to_ext_reference = to_ext

    @classmethod
    def from_ext(cls, ext: Mapping[str, str | None] | None):  # replaced per class by a compiled fast path
        """``decodeCommandCustomHeader``: lenient as 4.9.4 (see the module docstring).

        A FAST header raises :class:`HeaderFieldError` for an unparsable number (the request
        fails in 4.9.4 too); others record it in ``invalid`` and keep the default.
        ``ext`` None (no extFields at all) gives the all-default header with nothing missing.
        """
        obj = cls.__new__(cls)
        d = obj.__dict__
        missing, invalid = [], []
        for f in cls.FIELDS:
            raw = None if ext is None else ext.get(f.name)
            if raw is None:
                d[f.attr] = f.initial
                if f.required and ext is not None:
                    missing.append(f.name)
                continue
            try:
                d[f.attr] = f.jtype.parse(raw)
            except ValueError as e:
                if cls.FAST:
                    raise HeaderFieldError(cls.JAVA, f.name, f"a Java {f.jtype.name}", raw,
                                           f"java.lang.NumberFormatException: {e}") from None
                d[f.attr] = f.initial
                invalid.append(f.name)
        d["missing"] = tuple(missing)
        d["invalid"] = tuple(invalid)
        return obj

    _from_ext_reference = from_ext

    # -- helpers ----------------------------------------------------------------------------
    @classmethod
    def java_name(cls) -> str:
        """The fully qualified Java class name (as it appears in 4.9.4's exception texts)."""
        return f"{cls.JAVA_PACKAGE}.{cls.JAVA}"

    def values(self) -> dict[str, Any]:
        """``{Java name: value}`` of every field (nulls included), in declaration order."""
        return {f.name: self.__dict__[f.attr] for f in self.FIELDS}

    def __eq__(self, other):
        return type(other) is type(self) and self.values() == other.values()

    def __hash__(self):
        return hash((type(self), tuple(self.values().items())))

    def __repr__(self):
        inner = ", ".join(f"{f.attr}={self.__dict__[f.attr]!r}" for f in self.FIELDS)
        return f"{type(self).__name__}({inner})"

    def __setattr__(self, name, value):
        if name not in self._BY_ATTR:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}")
        self.__dict__[name] = value


def _compile(cls: type[CommandHeader]):
    """Per-class ``to_ext`` / ``from_ext`` specialised to its fields (as dataclasses writes its
    ``__init__``): the common values — strings, small decimal numbers, booleans — take a straight
    path; anything else falls back to the reference implementations above, which have the same
    results and raise the typed errors."""
    env = {"slow_to": CommandHeader._to_ext_reference, "slow_from": CommandHeader._from_ext_reference.__func__,
           "new": object.__new__, "fmt_list": _format_list}
    to_lines = ["def to_ext(self):", " d = self.__dict__", " out = {}"]
    from_lines = ["def from_ext(cls, ext):", " if ext is None:", "  return slow_from(cls, ext)",
                  " obj = new(cls)", " d = obj.__dict__", " get = ext.get", " missing = None"]
    for i, f in enumerate(cls.FIELDS):
        env[f"init{i}"] = f.initial
        name, attr, t = repr(f.name), repr(f.attr), f.jtype
        to_lines += [f" v = d[{attr}]", " if v is not None:"]
        from_lines += [f" r = get({name})", " if r is None:", f"  d[{attr}] = init{i}"]
        if f.required:
            from_lines += ["  missing = (missing or []) + [" + name + "]"]
        from_lines += [" else:"]
        if t is STRING:
            to_lines += [f"  out[{name}] = v if v.__class__ is str else str(v)"]
            from_lines += [f"  d[{attr}] = r"]
        elif t.python is int:
            lo, hi = t.range
            digits = 9 if hi < 2**31 else 18
            to_lines += [f"  if v.__class__ is int and {lo} <= v <= {hi}:", f"   out[{name}] = str(v)",
                         "  else:", "   return slow_to(self)"]
            from_lines += [f"  if r.isascii() and (r.isdigit() or (r[:1] == '-' and r[1:].isdigit())) "
                           f"and len(r) <= {digits}:", f"   d[{attr}] = int(r)", "  else:",
                           "   return slow_from(cls, ext)"]
        elif t.python is bool:
            to_lines += ["  if v is True:", f"   out[{name}] = 'true'", "  elif v is False:",
                         f"   out[{name}] = 'false'", "  else:", "   return slow_to(self)"]
            from_lines += [f"  d[{attr}] = r == 'true' or (r != 'false' and r.lower() == 'true')"]
        else:  # List and other rare types
            to_lines += ["  return slow_to(self)"]
            from_lines += ["  return slow_from(cls, ext)"]
    to_lines += [" return out"]
    from_lines += [" d['missing'] = tuple(missing) if missing else ()", " d['invalid'] = ()", " return obj"]
    exec("\n".join(to_lines), env)  # noqa: S102 - generated from the class's own field table
    exec("\n".join(from_lines), env)  # noqa: S102
    to_ext = env["to_ext"]
    to_ext.__doc__ = CommandHeader._to_ext_reference.__doc__
    from_ext = env["from_ext"]
    from_ext.__doc__ = CommandHeader._from_ext_reference.__func__.__doc__
    return to_ext, classmethod(from_ext)


def header_table(cls: type[CommandHeader]) -> list[tuple[str, str, str, str]]:
    """``(ext key, Java type, required, meaning)`` rows of a header, for reference tables."""
    return [(f.name, f.jtype.name, "yes" if f.required else "no", f.doc) for f in cls.FIELDS]
