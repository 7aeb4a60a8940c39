"""How the broker builds the property maps and strings it stores (the ``JavaHashMap`` rule).

RocketMQ keeps two things per message in flight: the property *map* (a ``java.util.HashMap``)
and the properties *string* that is actually written. Which of the two a record gets decides
its bytes, so every service builds records through these helpers:

* :func:`broker_properties` — the send path (``SendMessageProcessor.asyncSendMessage``, 4.9.1+):
  ``string2messageProperties`` into a fresh map, ``CLUSTER`` added, and ``WAIT`` left out of the
  stored string but put back into the map (removed and re-put, so it moves to the end of its
  bucket) — so any later re-serialisation of the map (delay rewrite, half message) stores it again.
* :func:`ext_properties` — the map of a record read back from the store (``MessageDecoder.decode``:
  a fresh ``HashMap`` filled in stored order).
* :func:`hashmap_dict` — a map as the ordered ``dict`` a :class:`MessageRecord` carries.

Convention shared with the store (:meth:`pymq_ref.store.message_store.MessageStore.put_message`):
``record.properties`` is the map in iteration order, ``record.properties_string`` (when not None)
the exact text to store. Pure functions; no I/O.
"""

from __future__ import annotations

from typing import Mapping

from pymq_ref.formats.message import MessageRecord
from pymq_ref.formats.properties import CLUSTER, WAIT, JavaHashMap, decode_properties, encode_properties


def hashmap_dict(properties: Mapping[str, str]) -> dict[str, str]:
    return dict(properties.items())


def client_properties(properties: Mapping[str, str] | str | None) -> str:
    """The properties string a Java client puts on the wire: a given string as is, a mapping in
    the iteration order of the client's ``HashMap`` filled in the mapping's order."""
    if properties is None:
        return ""
    if isinstance(properties, str):
        return properties
    return encode_properties(JavaHashMap(properties.items()))


def broker_properties(properties_text: str | None, cluster: str) -> tuple[JavaHashMap, str]:
    """(map, stored string) of a plain send: fresh map + ``CLUSTER``; ``WAIT`` out of the string only."""
    props = JavaHashMap(decode_properties(properties_text or "").items())
    props[CLUSTER] = cluster
    if WAIT in props:
        wait = props.pop(WAIT)
        stored = encode_properties(props)
        props[WAIT] = wait  # re-put: isWaitStoreMsgOK() still reads it, later serialisations store it
    else:
        stored = encode_properties(props)
    return props, stored


def request_properties(properties_text: str | None, cluster: str) -> dict[str, str]:
    """The batch path's map (``asyncSendBatchMessage``): fresh map + ``CLUSTER``, ``WAIT`` untouched."""
    props = JavaHashMap(decode_properties(properties_text or "").items())
    props[CLUSTER] = cluster
    return dict(props.items())


def ext_properties(record: MessageRecord) -> JavaHashMap:
    """The map ``MessageDecoder.decode`` gives for a stored record (fresh HashMap, stored order)."""
    text = record.properties_string
    items = decode_properties(text).items() if text is not None else record.properties.items()
    return JavaHashMap(items)


def parse_boolean(text: str | None) -> bool:
    """``Boolean.parseBoolean``: true only for "true", any case."""
    return text is not None and text.lower() == "true"
