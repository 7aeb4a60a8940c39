"""JSON bodies as fastjson 1.2.69 writes them and as any client may write them, from dataclass beans.

A body class is a dataclass whose fields are the Java bean's properties (snake_case here, camelCase
in JSON, or the name in the class's ``FASTJSON_NAMES``). One generic codec reads and writes them:

Writing (:func:`encode_json`), fastjson's default ``toJSONString``: bean members in alphabetical
order of their JSON names, null members left out, enums by name, collections as arrays, maps in
the iteration order of the Java map they are in Java (declared per field, default ``HashMap``:
``field(metadata={"java": "TreeMap"})``, ``("ConcurrentHashMap", initial capacity)``, ``"keep"``),
and map keys written by kind — strings quoted, numbers **bare** (``{0:"127.0.0.1:10911"}``), beans
as **JSON objects** (``{{"brokerName":…}:7}``). With ``standard=True`` it writes what the 4.9.4
name server sends route data as to a 4.9.4 client (``BrowserCompatible``, ``MapSortField``): keys
quoted and sorted, non-ASCII and ``/`` escaped.

Reading (:func:`decode_json`): strict JSON, or fastjson's dialect through
:mod:`pymq_ref.formats.json_reader`; unknown members are ignored, missing ones keep the default,
values are converted to the declared types the way fastjson converts (``"5"`` -> 5 for an int).
A value that cannot be converted raises :class:`BodyError` naming the member path.

Pure; no I/O.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import types
import typing
from decimal import Decimal
from typing import Any

from pymq_ref.errors import PymqError
from pymq_ref.formats.fastjson import camel, java_json_string
from pymq_ref.formats.hashing import java_string_hash
from pymq_ref.formats.json_reader import JsonSyntaxError, ObjectKey, parse
from pymq_ref.formats.message_queue import MessageQueue, java_string_key


class BodyError(PymqError, ValueError):
    """A body that is not the JSON its request or response expects; ``path`` names the member."""

    def __init__(self, structure: str, path: str, expected: str, found: object = None):
        self.structure, self.path, self.expected, self.found = structure, path, expected, found
        tail = "" if found is None else f", found {found!r}"[:200]
        super().__init__(f"{structure} body, {path or 'top level'}: expected {expected}{tail}")


# -- Java hash order -------------------------------------------------------------------------------

def java_hash(key) -> int:
    """``hashCode()`` of a map key as Java computes it (String, Long, Integer, Boolean, MessageQueue)."""
    if isinstance(key, str):
        return java_string_hash(key)
    if isinstance(key, bool):
        return 1231 if key else 1237
    if isinstance(key, int):  # Long.hashCode; equals Integer.hashCode for int values >= 0 and < 2^31
        v = key & 0xFFFFFFFFFFFFFFFF
        h = (v ^ (v >> 32)) & 0xFFFFFFFF
        return h - (1 << 32) if h & 0x80000000 else h
    if isinstance(key, MessageQueue):
        h = 1
        for part in (java_string_hash(key.broker_name) if key.broker_name is not None else 0, key.queue_id,
                     java_string_hash(key.topic) if key.topic is not None else 0):
            h = (31 * h + part) & 0xFFFFFFFF
        return h - (1 << 32) if h & 0x80000000 else h
    raise TypeError(f"no Java hashCode for {type(key).__name__}")


def _spread(key) -> int:
    h = java_hash(key) & 0xFFFFFFFF
    return h ^ (h >> 16)


def _table_size_for(c: int) -> int:
    n = 1
    while n < c:
        n <<= 1
    return n


def java_map_order(keys: list, kind="HashMap") -> list:
    """``keys`` (in insertion order) in the iteration order of a Java map (or set) of ``kind``:
    ``"HashMap"`` (a default ``new HashMap<>()``/``HashSet``), ``("HashMap", initialCapacity)``,
    ``"ConcurrentHashMap"`` (a default ``new ConcurrentHashMap<>()``: 16 bins),
    ``("ConcurrentHashMap", initialCapacity)``, ``"TreeMap"`` or ``"keep"`` (LinkedHashMap, lists).
    A Java table never shrinks, so a map that once held many more keys may iterate differently."""
    if kind == "keep" or len(keys) < 2:
        return list(keys)
    if kind == "TreeMap":
        return sorted(keys, key=_sort_key)
    if kind == "ConcurrentHashMap" or isinstance(kind, tuple) and kind[0] == "ConcurrentHashMap":
        n = 16 if kind == "ConcurrentHashMap" else 1
        if isinstance(kind, tuple):
            c = kind[1]
            while n < c + (c >> 1) + 1:
                n <<= 1
        while len(keys) >= n - (n >> 2):
            n <<= 1
        mask = n - 1
        return sorted(keys, key=lambda k: (_spread(k) & 0x7FFFFFFF) & mask)
    cap = _table_size_for(kind[1]) if isinstance(kind, tuple) else 16
    while len(keys) > cap * 3 // 4:
        cap *= 2
    mask = cap - 1
    return sorted(keys, key=lambda k: _spread(k) & mask)


def _sort_key(key):
    if isinstance(key, str):
        return (0, java_string_key(key))
    if isinstance(key, MessageQueue):
        return (1, key.sort_key())
    return (2, key)


# -- members ---------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Member:
    json_name: str
    attr: str
    hint: Any
    java: Any  # map/set kind


@functools.cache
def members(cls) -> tuple[Member, ...]:
    """The bean's members in fastjson's output order (alphabetical JSON names)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    names = getattr(cls, "FASTJSON_NAMES", {})
    out = [Member(names.get(f.name, camel(f.name)), f.name, hints[f.name], f.metadata.get("java", "HashMap"))
           for f in dataclasses.fields(cls) if not f.name.startswith("_")]
    return tuple(sorted(out, key=lambda m: m.json_name))


# -- writing ---------------------------------------------------------------------------------------

_BROWSER = str.maketrans({"/": "\\/"})


def _browser_string(s: str) -> str:
    """``BrowserCompatible``: also ``/`` and every character >= 0x7F as ``\\uXXXX``."""
    out = java_json_string(s)
    if out.isascii() and "/" not in out and not any(0x7F <= ord(c) <= 0x9F for c in out):
        return out
    return "".join(c if c < "\x7f" else "".join(f"\\u{u:04X}" for u in _utf16(c)) for c in out).translate(_BROWSER)


def _utf16(c: str) -> list[int]:
    data = c.encode("utf-16-be", "surrogatepass")
    return [int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2)]


def java_double(value: float) -> str:
    """A double as fastjson 1.2.69 writes it (``RyuDouble``): the shortest digits that read back
    exactly, laid out as Java does — plain for 1e-3 <= |x| < 1e7 (``100.0``, ``0.001``), else
    ``d.dddE±n`` (``1.0E7``, ``9.999999999999998E-4``)."""
    if value == 0:
        return "-0.0" if str(value).startswith("-") else "0.0"
    if abs(value) == 5e-324:  # Double.MIN_VALUE: Java's digit generation keeps two digits here
        return "-4.9E-324" if value < 0 else "4.9E-324"
    sign, digits, exp = Decimal(repr(value)).as_tuple()
    digits = "".join(map(str, digits)).rstrip("0") or "0"
    exp10 = exp + len("".join(map(str, Decimal(repr(value)).as_tuple()[1]))) - 1  # position of the first digit
    head = "-" if sign else ""
    if 1e-3 <= abs(value) < 1e7:
        if exp10 >= 0:
            whole, frac = digits[:exp10 + 1].ljust(exp10 + 1, "0"), digits[exp10 + 1:]
        else:
            whole, frac = "0", "0" * (-exp10 - 1) + digits
        return f"{head}{whole}.{frac or '0'}"
    return f"{head}{digits[0]}.{digits[1:] or '0'}E{exp10}"


def _number(value, standard: bool) -> str:
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return "null"
        return java_double(value)
    if standard and not -(2**53) < value < 2**53:
        return f'"{value}"'
    return str(value)


def _write(value, out: list[str], standard: bool, java=None) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, enum.Enum):
        out.append(java_json_string(value.name))
    elif isinstance(value, (int, float)):
        out.append(_number(value, standard))
    elif isinstance(value, str):
        out.append(_browser_string(value) if standard else java_json_string(value))
    elif isinstance(value, MessageQueue):
        _write_bean_items([("brokerName", value.broker_name), ("queueId", value.queue_id), ("topic", value.topic)],
                          out, standard)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = [(m.json_name, getattr(value, m.attr), m.java) for m in members(type(value))]
        getters = getattr(type(value), "FASTJSON_GETTERS", None)
        if getters:  # properties fastjson finds through getters that are not fields
            items = sorted(items + [(name, fn(value), None) for name, fn in getters.items()], key=lambda i: i[0])
        _write_bean_items(items, out, standard)
    elif isinstance(value, dict):
        _write_map(value, out, standard, java)
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
        if isinstance(value, (set, frozenset)):
            items = java_map_order(items, java or "HashMap")
        out.append("[")
        for i, item in enumerate(items):
            if i:
                out.append(",")
            _write(item, out, standard)
        out.append("]")
    elif isinstance(value, ObjectKey):
        _write_map(dict(value), out, standard, "keep")
    else:
        raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _write_bean_items(items, out: list[str], standard: bool) -> None:
    out.append("{")
    first = True
    for item in items:
        name, value = item[0], item[1]
        java = item[2] if len(item) > 2 else None
        if value is None:
            continue
        if not first:
            out.append(",")
        first = False
        out.append(java_json_string(name) + ":")
        _write(value, out, standard, java)
    out.append("}")


def _write_map(value: dict, out: list[str], standard: bool, java) -> None:
    keys = [k for k in value if value[k] is not None]
    keys = sorted(keys, key=_sort_key) if standard else java_map_order(keys, java or "HashMap")
    out.append("{")
    for i, key in enumerate(keys):
        if i:
            out.append(",")
        if isinstance(key, str):
            out.append((_browser_string(key) if standard else java_json_string(key)) + ":")
        elif isinstance(key, (int, float)) and not isinstance(key, bool):
            out.append((f'"{key}"' if standard else _number(key, False)) + ":")
        else:
            _write(key, out, standard)
            out.append(":")
        _write(value[key], out, standard)
    out.append("}")


def encode_json(bean, *, standard: bool = False) -> str:
    """The JSON text fastjson writes for ``bean`` (see the module docstring)."""
    out: list[str] = []
    _write(bean, out, standard)
    return "".join(out)


def encode_body(bean, *, standard: bool = False) -> bytes:
    """``RemotingSerializable.encode``: the JSON text as UTF-8."""
    return encode_json(bean, standard=standard).encode("utf-8", "replace")


# -- reading ---------------------------------------------------------------------------------------

def parse_json(data: bytes | str, structure: str = "JSON"):
    """The JSON tree of a body: strict JSON fast, fastjson's dialect when needed."""
    text = data.decode("utf-8", "replace") if isinstance(data, (bytes, bytearray, memoryview)) else data
    try:
        return json.loads(text, parse_float=Decimal)
    except (ValueError, RecursionError):
        pass
    try:
        return parse(text)
    except JsonSyntaxError as e:
        raise BodyError(structure, "", "JSON", str(e)) from None


def decode_json(cls, data: bytes | str):
    """A ``cls`` bean from a body (see the module docstring); an empty body reads as None, as
    fastjson's ``parseObject("")`` does."""
    if data is None:
        raise BodyError(getattr(cls, "__name__", str(cls)), "", "a JSON body", "no body")
    if not (data.strip() if isinstance(data, (bytes, str)) else bytes(data).strip()):
        return None
    return convert(cls, parse_json(data, getattr(cls, "__name__", str(cls))), getattr(cls, "__name__", str(cls)), "")


#: Marks a ``list`` member that is a Java ``Set`` (equal elements collapse when read).
JAVA_SET = "java.util.Set"


def set_of(item):
    """The type of a member that is a ``Set<item>`` in Java: a list here, without duplicates."""
    return typing.Annotated[list[item], JAVA_SET]


def _is_union(hint) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def _unique(items: list) -> list:
    out, seen = [], set()
    for item in items:
        if isinstance(item, (dict, list)):
            key = json.dumps(item, sort_keys=True, default=str)
        elif dataclasses.is_dataclass(item):
            key = repr(item)  # Java beans with equals/hashCode over their fields (SubscriptionData)
        else:
            key = item
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


_PRIMITIVE_DEFAULTS = {int: 0, float: 0.0, bool: False}


def convert(hint, value, structure: str, path: str):
    """``value`` (a JSON tree) as the declared type ``hint``, converting as fastjson does (a null
    for a primitive member — ``int``, ``float``, ``bool`` without ``| None`` — is its default)."""
    if value is None:
        return _PRIMITIVE_DEFAULTS.get(hint)
    if hint is Any:
        return value
    if typing.get_origin(hint) is typing.Annotated:
        base, *marks = typing.get_args(hint)
        items = convert(base, value, structure, path)
        return _unique(items) if JAVA_SET in marks else items
    if _is_union(hint):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return convert(args[0], value, structure, path) if len(args) == 1 else value
    origin = typing.get_origin(hint)
    if origin in (list, tuple, set, frozenset):
        if not isinstance(value, list):
            raise BodyError(structure, path, "an array", value)
        (item,) = typing.get_args(hint)[:1] or (Any,)
        return [convert(item, v, structure, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise BodyError(structure, path, "an object", value)
        kt, vt = typing.get_args(hint)
        return {convert_key(kt, k, structure, path): convert(vt, v, structure, f"{path}.{k}") for k, v in value.items()}
    if hint is str:  # fastjson casts any value to its JSON text (a fraction keeps its digits: "2.50")
        if isinstance(value, str):
            return value
        if isinstance(value, (dict, list, ObjectKey)):
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
        return json.dumps(value) if isinstance(value, bool) else str(value)
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if isinstance(value, int):
            return value != 0
        raise BodyError(structure, path, "a boolean", value)
    if hint is int:
        number = None
        if isinstance(value, bool):
            number = int(value)
        elif isinstance(value, int):
            number = value
        elif isinstance(value, (float, Decimal)) and value == int(value):
            number = int(value)
        elif isinstance(value, str):
            try:
                number = int(value)
            except ValueError:
                pass
        if number is None or not -(2**63) <= number < 2**63:
            raise BodyError(structure, path, "an integer (a Java long)", value)
        return number
    if hint is float:
        if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        raise BodyError(structure, path, "a number", value)
    if hint is MessageQueue:
        if isinstance(value, str) and value.startswith("{"):  # a key written as a string holding the object
            try:
                value = parse(value)
            except JsonSyntaxError:
                pass
        if not isinstance(value, (dict, ObjectKey)):
            raise BodyError(structure, path, "a MessageQueue object", value)
        return MessageQueue(convert(str, value.get("topic"), structure, f"{path}.topic"),
                            convert(str, value.get("brokerName"), structure, f"{path}.brokerName"),
                            convert(int, value.get("queueId", 0), structure, f"{path}.queueId") or 0)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        # fastjson: a name, ASCII case ignored (unknown -> null), or an ordinal (out of range: error)
        if isinstance(value, str):
            return hint.__members__.get(value.upper())
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(hint):
            return list(hint)[value]
        raise BodyError(structure, path, f"one of {[e.name for e in hint]} or its ordinal", value)
    if dataclasses.is_dataclass(hint):
        if not isinstance(value, (dict, ObjectKey)):
            raise BodyError(structure, path, f"a {hint.__name__} object", value)
        kwargs = {}
        for m in members(hint):
            if m.json_name in value:
                kwargs[m.attr] = convert(m.hint, value[m.json_name], structure, f"{path}.{m.json_name}".lstrip("."))
        try:
            return hint(**kwargs)
        except TypeError as e:
            raise BodyError(structure, path, f"the required members of {hint.__name__}", str(e)) from None
    raise TypeError(f"unsupported body type {hint!r}")


def convert_key(hint, key, structure: str, path: str):
    """A map key: bare or quoted numbers for numeric keys, objects for bean keys."""
    if hint is str:
        return key if isinstance(key, str) else (json.dumps(dict(key)) if isinstance(key, ObjectKey) else str(key))
    return convert(hint, key, structure, f"{path}.<key>")
