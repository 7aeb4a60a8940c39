"""Rebuilding a stored record's properties text the way a fresh Java ``HashMap`` serialises it. Pure.

Both "restore the real message" steps — ``messageTimeup`` of delay levels and ``convert`` of the
5.x timer wheel — put a few keys into a ``HashMap`` filled from the stored text, serialise the
map (``messageProperties2String``) and then drop some keys from the in-memory map only. A
``HashMap`` iterates in bucket order and putting an existing key keeps its place, so the result
depends only on the stored key tuple, the added keys and the dropped keys: that *plan* — for each
output position, which stored or added entry goes there — is computed once per key set and
cached. The stored ``name\\x01value`` segments are reused as they are (no entry is formatted
again, no escaping — Java has none either) and the text is one ``join``; when the plan is the
identity and nothing is added, the stored text itself is the answer.

Must not: touch a store, or format a value the stored text already holds.
"""

from __future__ import annotations

from operator import itemgetter

from pymq_ref.formats.properties import java_hashmap_order

__all__ = ["PropertyPlan", "property_plan", "rebuild_properties"]


def _getter(indexes: tuple):
    """``itemgetter`` that always returns a tuple (``itemgetter(i)`` alone returns the item)."""
    if not indexes:
        return lambda seq: ()
    if len(indexes) == 1:
        only = indexes[0]
        return lambda seq: (seq[only],)
    return itemgetter(*indexes)


class PropertyPlan:
    """For one (stored keys, added keys, dropped keys) combination: where each output entry comes from."""

    __slots__ = ("identity", "text_parts", "text_keys", "memory_keys", "memory_values", "drop")

    def __init__(self, stored: tuple[str, ...], added: tuple[str, ...], drop: tuple[str, ...]):
        position = {k: i for i, k in enumerate(stored)}
        order = java_hashmap_order(list(stored) + [k for k in added if k not in position])
        n = len(stored)
        for j, k in enumerate(added):  # an existing key takes the new value in its old place
            position[k] = n + j
        #: nothing added and the stored order is already the HashMap order: the text is the stored text
        self.identity = not added and tuple(order) == stored
        #: picks the output segments from ``stored segments + added segments`` (and, applied to
        #: ``stored values + added values``, the values of the text's map)
        self.text_parts = _getter(tuple(position[k] for k in order))
        self.text_keys = tuple(order)
        keep = [k for k in order if k not in drop]
        self.memory_keys = tuple(keep)
        #: picks the in-memory values from ``stored values + added values``
        self.memory_values = _getter(tuple(position[k] for k in keep))
        self.drop = drop


#: plan per (stored key tuple, added key tuple, dropped keys); records of one application share few key sets.
_PLANS: dict[tuple, PropertyPlan] = {}


def property_plan(stored: tuple[str, ...], added: tuple[str, ...], drop: tuple[str, ...]) -> PropertyPlan:
    key = (stored, added, drop)
    plan = _PLANS.get(key)
    if plan is None:
        plan = PropertyPlan(stored, added, drop)
        if len(_PLANS) < 4096:
            _PLANS[key] = plan
    return plan


def rebuild_properties(props: dict[str, str], raw: str | None, added_keys: tuple[str, ...] = (),
                       added_values: list[str] | tuple[str, ...] = (),
                       drop: tuple[str, ...] = ()) -> tuple[str, dict[str, str], dict[str, str]]:
    """``(text, memory, text_map)`` for a ``HashMap`` filled with ``props`` (a decoded record's map,
    in stored order) and then ``added_keys``/``added_values`` put in order: ``text`` is the map
    serialised, ``memory`` the map in iteration order without ``drop``, ``text_map`` the whole map
    (what decoding ``text`` gives; the store dispatches from it, so a caller passing it on saves
    that parse — ``props`` itself when the text is the stored text; do not mutate it).

    ``raw``, when set, must be the text ``props`` was decoded from (a decoded record's
    ``properties_string``); its segments are reused when there is exactly one per entry (no
    duplicate, empty or value-less segments), else the entries are formatted from ``props``.
    """
    stored = tuple(props)
    plan = _PLANS.get((stored, added_keys, drop)) or property_plan(stored, added_keys, drop)
    if plan.identity and raw is not None and (raw.count("\x02") + 1 if raw else 0) == len(props):
        text = raw
        memory = props.copy()
        for k in drop:
            memory.pop(k, None)
        return text, memory, props
    segments = raw.split("\x02") if raw else []
    if len(segments) != len(props):  # not one segment per entry (duplicates, empty entries, no text)
        segments = [f"{k}\x01{v}" for k, v in props.items()]
    if added_keys:
        segments += [f"{k}\x01{v}" for k, v in zip(added_keys, added_values)]
    text = "\x02".join(plan.text_parts(segments))
    values = [*props.values(), *added_values]
    memory = dict(zip(plan.memory_keys, plan.memory_values(values)))
    return text, memory, dict(zip(plan.text_keys, plan.text_parts(values)))
