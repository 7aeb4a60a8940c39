"""The message properties string, and the Java ``HashMap`` order RocketMQ writes it in.

On disk a message's properties are one UTF-8 string: ``name \\x01 value \\x02 name \\x01 value``
(no trailing separator, no escaping). Readers don't care about entry order, but a byte-exact
writer must reproduce the iteration order of the ``java.util.HashMap`` the Java code serialised;
:class:`JavaHashMap` replays that order (see the book's reference appendix, §Message properties).

Pure functions; no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, MutableMapping

from ..errors import EncodeError
from .hashing import java_string_hash

NAME_VALUE_SEPARATOR = "\x01"
PROPERTY_SEPARATOR = "\x02"
MAX_PROPERTIES_LENGTH = 32767  # PROPERTIESLENGTH is a signed short

# Keys of MessageConst that the store and the book use by name.
KEYS = "KEYS"
TAGS = "TAGS"
WAIT = "WAIT"
DELAY = "DELAY"
UNIQ_KEY = "UNIQ_KEY"
CLUSTER = "CLUSTER"
REAL_TOPIC = "REAL_TOPIC"
REAL_QID = "REAL_QID"
RETRY_TOPIC = "RETRY_TOPIC"
TRAN_MSG = "TRAN_MSG"
PGROUP = "PGROUP"
ORIGIN_MESSAGE_ID = "ORIGIN_MESSAGE_ID"
KEY_SEPARATOR = " "


def encode_properties(properties: Mapping[str, str | None]) -> str:
    """``MessageDecoder.messageProperties2String``: entries in the mapping's order, ``None`` values skipped.

    Raises :class:`EncodeError` for a key or value that contains a separator character, since
    the format has no escaping and the result would not decode back to the same map.
    """
    parts = []
    for name, value in properties.items():
        if value is None:
            continue
        for what, text in (("name", name), ("value", value)):
            if NAME_VALUE_SEPARATOR in text or PROPERTY_SEPARATOR in text:
                raise EncodeError("properties", f"[{name!r}].{what}", "text without \\x01 and \\x02", text)
        parts.append(f"{name}{NAME_VALUE_SEPARATOR}{value}")
    return PROPERTY_SEPARATOR.join(parts)


def split_properties(text: str) -> Iterator[tuple[int, int, str, str]]:
    """Yield ``(start, end, name, value)`` for every entry ``string2messageProperties`` keeps.

    ``start``/``end`` index ``text`` (end excludes the separator). A segment is kept only if its
    name and its value are both non-empty; later duplicates win when put in a dict.
    """
    index, length = 0, len(text)
    while index < length:
        end = text.find(PROPERTY_SEPARATOR, index)
        if end < 0:
            end = length
        if end - index >= 3:
            sep = text.find(NAME_VALUE_SEPARATOR, index, end)
            if index < sep < end - 1:
                yield index, end, text[index:sep], text[sep + 1:end]
        index = end + 1


def decode_properties(text: str) -> dict[str, str]:
    """``MessageDecoder.string2messageProperties``; dict order = order in the string.

    Same result as :func:`split_properties` (a segment counts only with a non-empty name before
    its first 0x01 and a non-empty value after it), written for speed: scans call it per record.
    """
    properties = {}
    if text:
        for segment in text.split(PROPERTY_SEPARATOR):
            name, _, value = segment.partition(NAME_VALUE_SEPARATOR)
            if name and value:
                properties[name] = value
    return properties


class JavaHashMap(MutableMapping[str, str]):
    """A ``java.util.HashMap<String, String>`` reduced to what decides its iteration order.

    Buckets are ``spread(hashCode) & (capacity - 1)``; a bucket keeps insertion order; the table
    doubles (16, 32, ...) when ``size > 0.75 * capacity``, each bucket splitting in order.
    Re-putting a key keeps its place; removing and putting it again moves it to its bucket's end.
    """

    def __init__(self, items: Iterable[tuple[str, str]] | Mapping[str, str] = (), capacity: int = 16):
        if capacity & (capacity - 1):
            raise ValueError(f"capacity must be a power of two, got {capacity}")
        self._buckets: list[list[str]] = [[] for _ in range(capacity)]
        self._values: dict[str, str] = {}
        pairs = items.items() if isinstance(items, Mapping) else items
        for key, value in pairs:
            self[key] = value

    def _bucket(self, key: str) -> list[str]:
        return self._buckets[_spread(key) & (len(self._buckets) - 1)]

    def __setitem__(self, key: str, value: str) -> None:
        if key not in self._values:
            self._bucket(key).append(key)
            if len(self._values) + 1 > 0.75 * len(self._buckets):
                self._values[key] = value
                self._resize()
                return
        self._values[key] = value

    def _resize(self) -> None:
        old = self._buckets
        self._buckets = [[] for _ in range(2 * len(old))]
        for bucket in old:  # ascending index, in-bucket order kept
            for key in bucket:
                self._bucket(key).append(key)

    def __delitem__(self, key: str) -> None:
        del self._values[key]
        self._bucket(key).remove(key)

    def __getitem__(self, key: str) -> str:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        for bucket in self._buckets:
            yield from bucket

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"JavaHashMap({dict(self.items())!r})"


_SPREAD: dict[str, int] = {}  # property names repeat: their spread hashes are remembered


def _spread(key: str) -> int:
    """``HashMap.hash``: the key's ``hashCode`` with its high half folded into the low half."""
    s = _SPREAD.get(key)
    if s is None:
        h = java_string_hash(key) & 0xFFFFFFFF
        s = h ^ (h >> 16)
        if len(_SPREAD) < 65536:
            _SPREAD[key] = s
    return s


def java_hashmap_order(keys: Iterable[str], count: int | None = None) -> list[str]:
    """Keys in the order a fresh ``HashMap`` (capacity 16, load factor 0.75) filled with them
    in this order iterates them (``count``: the map's size, when more keys went in than are listed).

    Resizing keeps each bucket's relative order, so the final order is a *stable* sort by the
    bucket of the final capacity — the same result as :class:`JavaHashMap`, without building
    buckets (this runs once per put that re-serialises a map; tests check both agree).
    """
    keys = list(keys)
    n = len(keys) if count is None else count
    cap = 16
    while n > cap * 3 // 4:
        cap *= 2
    mask = cap - 1
    return sorted(keys, key=lambda k: _spread(k) & mask)


def hashmap_order(properties: Mapping[str, str]) -> dict[str, str]:
    """The same entries, re-ordered as a fresh ``HashMap`` filled in the mapping's order would iterate."""
    return {k: properties[k] for k in java_hashmap_order(properties)}


def hashmap_properties(properties: Mapping[str, str], extra: Mapping[str, str] = {}) -> dict[str, str]:
    """``properties`` as a HashMap iterates it after ``put``-ting each of ``extra`` (an existing key
    keeps its place and takes the new value; a new key goes to the end of its bucket)."""
    merged = dict(properties)
    merged.update(extra)
    return hashmap_order(merged)


#: What the well-known keys mean (``common/src/main/java/org/apache/rocketmq/common/message/MessageConst.java``);
#: used by "explain this byte".
PROPERTY_DOCS: dict[str, str] = {
    "KEYS": "business keys separated by spaces; each one is indexed in the IndexFile as topic#key",
    "TAGS": "the tag; its Java hashCode becomes the ConsumeQueue tagsCode",
    "WAIT": "whether the producer waits for flush/replication before the send returns",
    "DELAY": "the delay level (1..18); the broker parks the message in SCHEDULE_TOPIC_XXXX",
    "RETRY_TOPIC": "the original topic of a message sent back for retry",
    "REAL_TOPIC": "the original topic while the message is parked in a system topic",
    "REAL_QID": "the original queue id while the message is parked in a system topic",
    "TRAN_MSG": "\"true\" for a transactional (half) message",
    "PGROUP": "the producer group, asked when the broker checks a transaction back",
    "MIN_OFFSET": "set by the client on pulled messages: the queue's min offset",
    "MAX_OFFSET": "set by the client on pulled messages: the queue's max offset",
    "ORIGIN_MESSAGE_ID": "the first msgId of a retried message",
    "RECONSUME_TIME": "client-to-broker carrier of the reconsume count for %RETRY% sends",
    "UNIQ_KEY": "the client-made unique id (what the Java client calls msgId); indexed",
    "MAX_RECONSUME_TIMES": "client-to-broker carrier of the max reconsume times",
    "CONSUME_START_TIME": "client-side consume start time",
    "TRAN_PREPARED_QUEUE_OFFSET": "the half message's queue offset, for transaction bookkeeping",
    "TRANSACTION_CHECK_TIMES": "how many times the broker has checked this transaction back",
    "CHECK_IMMUNITY_TIME_IN_SECONDS": "per-message delay before the first transaction check",
    "INSTANCE_ID": "the namespace",
    "CORRELATION_ID": "request/reply correlation id",
    "REPLY_TO_CLIENT": "request/reply: the client to reply to",
    "TTL": "request/reply time to live",
    "ARRIVE_TIME": "request/reply arrival time",
    "PUSH_REPLY_TIME": "request/reply push time",
    "CLUSTER": "the broker's cluster name, added by the broker on every send",
    "MSG_TYPE": "request/reply message type",
    "INNER_MULTI_DISPATCH": "LMQ: the queues this message is also dispatched to",
    "INNER_MULTI_QUEUE_OFFSET": "LMQ: the offsets in those queues",
    "__transactionId__": "the transaction id the 4.x client sets",
    "TRACE_ON": "message trace switch",
    "MSG_REGION": "the region id",
}
