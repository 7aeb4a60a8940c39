"""Declarative layouts (``construct`` schemas) with one spec sentence per field.

The fast codecs in this package are hand-written with :mod:`struct`; these schemas are the
*executable specification* next to them: they parse and build the same bytes (the tests prove
it), and their per-field docstrings are what "explain this byte" and the field tables print.
They are never used to decode on a hot path.

Each format module registers its schema here with :func:`register`; :func:`describe` finds the
sentence for a field path such as ``"body_crc"`` or ``"properties.TAGS"``.
"""

from __future__ import annotations

import importlib
import re

import construct as cs

SCHEMAS: dict[str, cs.Struct] = {}

# Format modules that register schemas (imported lazily by describe/schema).
_MODULES = ("message", "batch", "consume_queue", "consume_queue_ext", "index_file", "checkpoint", "timer")


def register(name: str, struct: cs.Struct) -> cs.Struct:
    """Add ``struct`` under ``name`` (e.g. ``"message"``) and return it."""
    SCHEMAS[name] = struct
    return struct


def _load_all() -> None:
    for module in _MODULES:
        try:
            importlib.import_module(f"{__package__}.{module}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.{module}":
                raise


def schema(name: str) -> cs.Struct:
    """The registered schema ``name``; raises KeyError listing the known names."""
    if name not in SCHEMAS:
        _load_all()
    try:
        return SCHEMAS[name]
    except KeyError:
        raise KeyError(f"no schema {name!r}; known: {', '.join(sorted(SCHEMAS))}") from None


def fields(name: str) -> list[tuple[str, str]]:
    """``[(field name, spec sentence), ...]`` in layout order."""
    return [(sc.name, (sc.docs or "").strip()) for sc in schema(name).subcons if sc.name]


_INDEXED = re.compile(r"^\[\d+\]\.")


def describe(structure: str, path: str) -> str:
    """The spec sentence of field ``path`` of ``structure``.

    ``properties.NAME`` paths get the properties sentence plus the meaning of key NAME;
    ``[i].field`` (batch entries) and ``record[i].field`` prefixes are ignored.
    """
    path = _INDEXED.sub("", path.split("].", 1)[1] if path.startswith("record[") else path)
    head, _, rest = path.partition(".")
    docs = dict(fields(structure))
    if head not in docs:
        raise KeyError(f"{structure} has no field {head!r}; fields: {', '.join(docs)}")
    sentence = docs[head]
    if head == "properties" and rest:
        from .properties import PROPERTY_DOCS
        meaning = PROPERTY_DOCS.get(rest, "an application-defined property")
        sentence = f"{sentence} This entry, {rest}: {meaning}."
    return sentence
