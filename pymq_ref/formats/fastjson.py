"""Read and write JSON the way fastjson 1.x does for RocketMQ's config files.

RocketMQ 4.9.4 persists ``topics.json``, ``consumerOffset.json``, ``delayOffset.json`` and
``subscriptionGroup.json`` with ``JSON.toJSONString(obj, prettyFormat=true)`` (see the book's reference appendix,
§Config files).
That output differs from strict JSON and from Python's ``json.dumps`` in three ways we reproduce:

* pretty printing indents with **tabs** and puts no space after ``:``;
* bean properties come in **alphabetical order** (maps keep their own iteration order);
* maps with ``Integer`` keys are written with **unquoted numeric keys** and stay on one line,
  except that the closing brace goes on its own (indented) line: ``{0:12,1:9\\n\\t\\t}``.

:func:`dumps` writes that form; :func:`loads` reads it back (and strict JSON too), returning
``int`` keys for keys that were unquoted numbers. Null values are skipped, as fastjson does by
default. Maps with ``str`` keys keep the order the caller gives (Java's ``ConcurrentHashMap``
order is not reproduced; readers do not depend on it).

Beans are dataclasses: each field is written under its camelCase name (``read_queue_nums`` ->
``readQueueNums``) unless the class maps names in a ``FASTJSON_NAMES`` dict. Enum values are
written by name. This module is pure (strings in, strings out); file handling lives in
``pymq_ref.store.config``.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import re
from typing import Any

__all__ = ["dumps", "loads", "camel", "bean_fields", "java_json_string"]


def camel(snake: str) -> str:
    """``read_queue_nums`` -> ``readQueueNums``."""
    head, *rest = snake.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def bean_fields(obj) -> list[tuple[str, Any]]:
    """The (JSON name, value) pairs of a dataclass bean, alphabetical like fastjson."""
    names = getattr(type(obj), "FASTJSON_NAMES", {})
    pairs = []
    for f in dataclasses.fields(obj):
        if f.name.startswith("_") or not f.repr:
            continue
        pairs.append((names.get(f.name, camel(f.name)), getattr(obj, f.name)))
    pairs.sort(key=lambda p: p[0])
    return pairs


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: What fastjson 1.2.69's default ``SerializeWriter`` escapes inside a double-quoted string:
#: quote and backslash, the C0 controls (\\b \\t \\n \\f \\r short, the rest \\u00XX), DEL and
#: the C1 controls (0x7F-0x9F), and U+2028/U+2029 — hex digits upper case. ``/`` is not escaped.
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f\x7f-\x9f\u2028\u2029]')


def _escape(m: re.Match) -> str:
    ch = m.group()
    return _ESCAPES.get(ch) or f"\\u{ord(ch):04X}"


def java_json_string(s: str) -> str:
    """``s`` as fastjson 1.2.69 writes a string by default (see :data:`_NEEDS_ESCAPE`)."""
    return '"' + _NEEDS_ESCAPE.sub(_escape, s) + '"'


_string = java_json_string


def _scalar(value) -> str | None:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, enum.Enum):
        return _string(value.name)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    return None


def dumps(obj: Any, pretty: bool = True) -> str:
    """Serialise ``obj`` (dict / list / dataclass / scalar) in fastjson's style."""
    out: list[str] = []
    _write(obj, out, 0, pretty)
    return "".join(out)


def _nl(out: list[str], level: int, pretty: bool) -> None:
    if pretty:
        out.append("\n" + "\t" * level)


def _write(obj, out: list[str], level: int, pretty: bool) -> None:
    scalar = _scalar(obj)
    if scalar is not None:
        out.append(scalar)
        return
    if obj is None:
        out.append("null")
        return
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        _write_object([(k, v) for k, v in bean_fields(obj) if v is not None], out, level, pretty)
        return
    if isinstance(obj, dict):
        items = [(k, v) for k, v in obj.items() if v is not None]
        if items and all(isinstance(k, int) and not isinstance(k, bool) for k, _ in items):
            # MapSerializer: non-String keys are written bare, with no line break before them
            out.append("{")
            for i, (k, v) in enumerate(items):
                if i:
                    out.append(",")
                out.append(str(k) + ":")
                _write(v, out, level + 1, pretty)
            _nl(out, level, pretty)
            out.append("}")
            return
        _write_object([(str(k), v) for k, v in items], out, level, pretty)
        return
    if isinstance(obj, (list, tuple, set, frozenset)):
        items = list(obj)
        if not items:
            out.append("[]")
            return
        out.append("[")
        for i, v in enumerate(items):
            if i:
                out.append(",")
            _nl(out, level + 1, pretty)
            _write(v, out, level + 1, pretty)
        _nl(out, level, pretty)
        out.append("]")
        return
    raise TypeError(f"fastjson.dumps cannot serialise {type(obj).__name__}")


def _write_object(items, out: list[str], level: int, pretty: bool) -> None:
    if not items:
        out.append("{}")
        return
    out.append("{")
    for i, (k, v) in enumerate(items):
        if i:
            out.append(",")
        _nl(out, level + 1, pretty)
        out.append(_string(k) + ":")
        _write(v, out, level + 1, pretty)
    _nl(out, level, pretty)
    out.append("}")


# -- tolerant reader ---------------------------------------------------------------------------

_INT_KEY = "\x00int:"
# a JSON string (skipped as is) | an unquoted key after '{' or ','
_TOKENS = re.compile(r'("(?:[^"\\]|\\.)*")|([{,]\s*)(-?\d+|[A-Za-z_$][\w$]*)(\s*:)', re.S)


def _quote_keys(text: str) -> str:
    def repl(m: re.Match) -> str:
        if m.group(1) is not None:
            return m.group(1)
        key = m.group(3)
        if key[0] == "-" or key[0].isdigit():
            key = "\\u0000int:" + key  # decodes to _INT_KEY + key
        return f'{m.group(2)}"{key}"{m.group(4)}'

    return _TOKENS.sub(repl, text)


def _pairs(pairs):
    return {(int(k[len(_INT_KEY):]) if k.startswith(_INT_KEY) else k): v for k, v in pairs}


def loads(text: str) -> Any:
    """Parse fastjson output (unquoted numeric or identifier keys allowed) or strict JSON.

    Keys that were unquoted integers come back as ``int``; quoted keys stay ``str``.
    Raises ``ValueError`` (``json.JSONDecodeError``) on malformed text.
    """
    return json.loads(_quote_keys(text), object_pairs_hook=_pairs)
