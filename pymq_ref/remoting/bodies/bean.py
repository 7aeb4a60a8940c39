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
    ``("ConcurrentHashMap", initialCapacity)``, ``"TreeMap"`` or ``"keep"`` (LinkedHashMap, lists).
    A Java table never shrinks, so a map that once held many more keys may iterate differently."""
    if kind == "keep" or len(keys) < 2:
        return list(keys)
    if kind == "TreeMap":
        return sorted(keys, key=_sort_key)
    if isinstance(kind, tuple) and kind[0] == "ConcurrentHashMap":
        c = kind[1]
        n = 1
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
    hints = typing.get_type_hints(cls)
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


def _number(value, standard: bool) -> str:
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return "null"
        return repr(value)
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
    return encode_json(bean, standard=standard).encode("utf-8", "surrogatepass")


# -- reading ---------------------------------------------------------------------------------------

def parse_json(data: bytes | str, structure: str = "JSON"):
    """The JSON tree of a body: strict JSON fast, fastjson's dialect when needed."""
    text = data.decode("utf-8", "replace") if isinstance(data, (bytes, bytearray, memoryview)) else data
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return parse(text)
    except JsonSyntaxError as e:
        raise BodyError(structure, "", "JSON", str(e)) from None


def decode_json(cls, data: bytes | str):
    """A ``cls`` bean from a body (see the module docstring)."""
    if data is None:
        raise BodyError(cls.__name__, "", "a JSON body", "no body")
    return convert(cls, parse_json(data, cls.__name__), cls.__name__, "")


def _is_union(hint) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def convert(hint, value, structure: str, path: str):
    """``value`` (a JSON tree) as the declared type ``hint``, converting as fastjson does."""
    if value is None:
        return None
    if hint is Any:
        return value
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
    if hint is str:
        if isinstance(value, (dict, list)):
            raise BodyError(structure, path, "a string", value)
        return value if isinstance(value, str) else json.dumps(value)
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if isinstance(value, int):
            return value != 0
        raise BodyError(structure, path, "a boolean", value)
    if hint is int:
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                pass
        raise BodyError(structure, path, "an integer", value)
    if hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        raise BodyError(structure, path, "a number", value)
    if hint is MessageQueue:
        if not isinstance(value, (dict, ObjectKey)):
            raise BodyError(structure, path, "a MessageQueue object", value)
        return MessageQueue(convert(str, value.get("topic"), structure, f"{path}.topic"),
                            convert(str, value.get("brokerName"), structure, f"{path}.brokerName"),
                            convert(int, value.get("queueId", 0), structure, f"{path}.queueId") or 0)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint[value] if isinstance(value, str) else list(hint)[value]
        except (KeyError, IndexError, TypeError):
            raise BodyError(structure, path, f"one of {[e.name for e in hint]}", value) from None
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
