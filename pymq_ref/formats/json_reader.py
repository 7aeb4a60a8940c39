"""A tolerant JSON reader for what Java peers write with fastjson 1.x, which strict JSON refuses.

fastjson's default writer produces two things ``json.loads`` rejects, and RocketMQ puts both on
the wire:

* **bare map keys** for maps whose keys are not strings — ``{0:"127.0.0.1:10911"}`` (a
  ``Map<Long, String>``), ``{"T@G":{0:5}}`` (``Map<Integer, Long>``);
* **object map keys** for maps keyed by a bean — ``{{"brokerName":"b","queueId":0,"topic":"T"}:7}``
  (a ``Map<MessageQueue, Long>``).

:func:`parse` reads standard JSON plus those: a bare number key comes back as ``int`` (or
``float``), a bare identifier key as ``str``, an object key as a :class:`ObjectKey` (a hashable,
read-only mapping). It also takes fastjson's single-quoted strings. Nesting is bounded
(:data:`MAX_DEPTH`) so hostile input cannot exhaust the stack; every error is a ``ValueError``
(:class:`JsonSyntaxError`) naming the character position. Pure; no I/O.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator, Mapping

MAX_DEPTH = 256

_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_BARE_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_WS = re.compile(r"[ \t\r\n]*")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_SQ_STRING = re.compile(r"'(?:[^'\\]|\\.)*'")


class JsonSyntaxError(ValueError):
    """Text that is neither JSON nor fastjson's dialect; ``pos`` is the character offset."""

    def __init__(self, pos: int, expected: str, text: str):
        self.pos = pos
        near = text[pos:pos + 20]
        super().__init__(f"JSON at character {pos}: expected {expected}, found {near!r}" if near
                         else f"JSON at character {pos}: expected {expected}, found the end of the text")


class ObjectKey(Mapping[str, Any]):
    """A JSON object used as a map key (hashable, read-only, member order kept)."""

    __slots__ = ("_items", "_hash")

    def __init__(self, items: Mapping[str, Any] | list[tuple[str, Any]]):
        pairs = tuple(items.items() if isinstance(items, Mapping) else items)
        self._items = dict(pairs)
        self._hash = hash(tuple(sorted((k, _freeze(v)) for k, v in pairs)))

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return isinstance(other, Mapping) and dict(self._items) == dict(other)

    def __repr__(self) -> str:
        return f"ObjectKey({self._items!r})"


def _freeze(value):
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def parse(text: str) -> Any:
    """Parse ``text`` (see the module docstring); raises :class:`JsonSyntaxError`."""
    value, pos = _value(text, _ws(text, 0), 0)
    pos = _ws(text, pos)
    if pos != len(text):
        raise JsonSyntaxError(pos, "the end of the text", text)
    return value


def _ws(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()


def _value(text: str, pos: int, depth: int):
    if pos >= len(text):
        raise JsonSyntaxError(pos, "a value", text)
    c = text[pos]
    if c == "{":
        return _object(text, pos, depth + 1)
    if c == "[":
        return _array(text, pos, depth + 1)
    if c == '"':
        return _string(text, pos)
    if c == "'":
        m = _SQ_STRING.match(text, pos)
        if not m:
            raise JsonSyntaxError(pos, "a closed single-quoted string", text)
        inner = m.group()[1:-1].replace('"', '\\"').replace("\\'", "'")
        try:
            return json.loads('"' + inner + '"'), m.end()
        except ValueError:
            raise JsonSyntaxError(pos, "a valid single-quoted string", text) from None
    m = _NUMBER.match(text, pos)
    if m:
        s = m.group()
        return (float(s) if any(ch in s for ch in ".eE") else int(s)), m.end()
    for word, value in (("true", True), ("false", False), ("null", None)):
        if text.startswith(word, pos):
            return value, pos + len(word)
    raise JsonSyntaxError(pos, "a value", text)


def _string(text: str, pos: int):
    m = _STRING.match(text, pos)
    if not m:
        raise JsonSyntaxError(pos, "a valid string", text)
    return json.loads(m.group()), m.end()


def _key(text: str, pos: int, depth: int):
    c = text[pos] if pos < len(text) else ""
    if c == '"' or c == "'":
        return _value(text, pos, depth)
    if c == "{":
        obj, end = _object(text, pos, depth + 1)
        return ObjectKey(obj), end
    m = _NUMBER.match(text, pos)
    if m:
        s = m.group()
        return (float(s) if any(ch in s for ch in ".eE") else int(s)), m.end()
    m = _BARE_KEY.match(text, pos)
    if m:
        return m.group(), m.end()
    raise JsonSyntaxError(pos, "a key (string, number, identifier or object)", text)


def _object(text: str, pos: int, depth: int):
    if depth > MAX_DEPTH:
        raise JsonSyntaxError(pos, f"nesting of at most {MAX_DEPTH} levels", text)
    out: dict = {}
    pos = _ws(text, pos + 1)
    if pos < len(text) and text[pos] == "}":
        return out, pos + 1
    while True:
        key, pos = _key(text, pos, depth)
        pos = _ws(text, pos)
        if pos >= len(text) or text[pos] != ":":
            raise JsonSyntaxError(pos, "':' after a key", text)
        value, pos = _value(text, _ws(text, pos + 1), depth)
        out[key] = value
        pos = _ws(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = _ws(text, pos + 1)
            continue
        if pos < len(text) and text[pos] == "}":
            return out, pos + 1
        raise JsonSyntaxError(pos, "',' or '}'", text)


def _array(text: str, pos: int, depth: int):
    if depth > MAX_DEPTH:
        raise JsonSyntaxError(pos, f"nesting of at most {MAX_DEPTH} levels", text)
    out: list = []
    pos = _ws(text, pos + 1)
    if pos < len(text) and text[pos] == "]":
        return out, pos + 1
    while True:
        value, pos = _value(text, pos, depth)
        out.append(value)
        pos = _ws(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = _ws(text, pos + 1)
            continue
        if pos < len(text) and text[pos] == "]":
            return out, pos + 1
        raise JsonSyntaxError(pos, "',' or ']'", text)
