"""Iteration order of Java's ``ConcurrentHashMap``, for config files written like fastjson does.

fastjson writes a map in the map's own iteration order; RocketMQ's config tables are
``ConcurrentHashMap``\\ s, which iterate by bin index ``(h ^ (h >>> 16)) & 0x7fffffff & (n - 1)``
and, within a bin, in insertion order. ``n`` is the table size: ``new ConcurrentHashMap(c)``
allocates ``tableSizeFor(c + c/2 + 1)`` and doubles once the size reaches ``0.75 n``.
Readers never depend on this order; we follow it so our files look like the broker's.
(Approximation: a resize in Java may reorder keys that share a bin; with RocketMQ's table
sizes that needs hundreds of entries.) Pure functions.
"""

from __future__ import annotations

from typing import Hashable, Iterable

from pymq_ref.formats.hashing import java_string_hash


def _table_size_for(c: int) -> int:
    n = 1
    while n < c:
        n <<= 1
    return n


def chm_table_size(initial_capacity: int, count: int) -> int:
    n = _table_size_for(initial_capacity + (initial_capacity >> 1) + 1)
    while count >= n - (n >> 2):
        n <<= 1
    return n


def _java_hash(key: Hashable) -> int:
    if isinstance(key, str):
        h = java_string_hash(key)
    elif isinstance(key, int):
        h = key  # Integer.hashCode
    else:  # pragma: no cover - only str/int keys are used
        raise TypeError(f"no Java hashCode for {type(key).__name__}")
    h &= 0xFFFFFFFF
    return (h ^ (h >> 16)) & 0x7FFFFFFF


def chm_order(keys: Iterable[Hashable], initial_capacity: int = 16) -> list:
    """``keys`` (in insertion order) as a ``ConcurrentHashMap(initial_capacity)`` iterates them."""
    keys = list(keys)
    mask = chm_table_size(initial_capacity, len(keys)) - 1
    return sorted(keys, key=lambda k: _java_hash(k) & mask)
