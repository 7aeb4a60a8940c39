"""The 5.x POP records: checkpoint (CK) and ACK bodies in the revive topic, extra info, receipt handles.

RocketMQ 5.x consumes "by POP": the broker hands out messages, writes a *checkpoint* (``PopCheckPoint``,
tag ``ck``) into the revive topic ``rmq_sys_REVIVE_LOG_<cluster>``, and every acknowledgement is an
``AckMsg`` (tag ``ack``; ``BatchAckMsg``, tag ``bAck``) in the same revive queue. A CK whose
messages were not all acked by its revive time (``popTime + invisibleTime``) is revived: its
un-acked messages go to the POP retry topic ``%RETRY%<group>_<topic>``.

The bodies are fastjson beans with one- and two-letter names, written in alphabetical order with
nulls left out (``store/src/main/java/org/apache/rocketmq/store/pop/PopCheckPoint.java``,
``AckMsg.java``, ``BatchAckMsg.java``). ``PopCheckPoint`` also writes ``reviveTime``: fastjson
serialises the getter ``getReviveTime()`` too (the recorded 5.1.4 output shows it).

The *extra info* (``remoting/.../protocol/header/ExtraInfoUtil.java``) is the space-separated
string a POP response puts in each message's ``POP_CK`` property and an ACK request sends back:
``ckQueueOffset popTime invisibleTime reviveQid topicType brokerName queueId queueOffset``. The
5.x proxy's *receipt handle* (``common/.../consumer/ReceiptHandle.java``) is the same string plus
the message's CommitLog offset.

Pure: text in, records out (with spans for the hex view). Must not touch a store.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Iterable

from pymq_ref.errors import FormatError

from .fastjson import java_json_string
from .spans import Span

REVIVE_TOPIC_PREFIX = "rmq_sys_REVIVE_LOG_"
REVIVE_GROUP = "CID_RMQ_SYS_REVIVE_GROUP"
CK_TAG = "ck"
ACK_TAG = "ack"
BATCH_ACK_TAG = "bAck"
SPLIT = "@"
#: ``PopAckConstants.ackTimeInterval``: a CK's revive message is due this long before its revive time.
ACK_TIME_INTERVAL = 1000
SECOND = 1000
#: ``KeyBuilder.POP_ORDER_REVIVE_QUEUE``: the revive queue id that marks an orderly POP.
POP_ORDER_REVIVE_QUEUE = 999
RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"
NORMAL_TOPIC = "0"
RETRY_TOPIC = "1"
#: MessageConst.PROPERTY_POP_CK / PROPERTY_FIRST_POP_TIME
POP_CK = "POP_CK"
FIRST_POP_TIME = "1ST_POP_TIME"


class PopRecordError(FormatError):
    """A CK / ACK body, an extra-info string or a receipt handle that does not parse."""


def revive_topic(cluster: str) -> str:
    """``PopAckConstants.buildClusterReviveTopic``."""
    return REVIVE_TOPIC_PREFIX + cluster


def pop_retry_topic(topic: str, group: str) -> str:
    """``KeyBuilder.buildPopRetryTopic``: ``%RETRY%<group>_<topic>`` (5.1.4's only form)."""
    return f"{RETRY_GROUP_TOPIC_PREFIX}{group}_{topic}"


def parse_normal_topic(topic: str, group: str) -> str:
    """``KeyBuilder.parseNormalTopic``: the topic a POP retry topic stands for."""
    if topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
        return topic[len(RETRY_GROUP_TOPIC_PREFIX + group + "_"):]
    return topic


# -- the beans -----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class PopCheckPoint:
    """A POP checkpoint: ``num`` messages of one queue popped at ``pop_time``; bit i of ``bit_map``
    set once the i-th is acked. ``queue_offset_diff[i]`` is the i-th message's offset minus
    ``start_offset`` (None: an old-style CK whose messages are consecutive)."""

    start_offset: int
    pop_time: int
    invisible_time: int
    bit_map: int
    num: int
    queue_id: int
    topic: str | None
    cid: str | None
    revive_offset: int = 0
    queue_offset_diff: tuple[int, ...] | None = None
    broker_name: str | None = None

    @property
    def revive_time(self) -> int:
        return self.pop_time + self.invisible_time

    def index_of_ack(self, ack_offset: int) -> int:
        """``PopCheckPoint.indexOfAck``: the bit of a message offset, -1 when not in this CK."""
        if ack_offset < self.start_offset:
            return -1
        if not self.queue_offset_diff:
            return ack_offset - self.start_offset if ack_offset - self.start_offset < self.num else -1
        try:
            return self.queue_offset_diff.index(ack_offset - self.start_offset)
        except ValueError:
            return -1

    def ack_offset_by_index(self, index: int) -> int:
        if not self.queue_offset_diff:
            return self.start_offset + index
        return self.start_offset + self.queue_offset_diff[index]

    def is_acked(self, index: int) -> bool:
        return bool(self.bit_map >> index & 1)

    def with_ack(self, index: int) -> "PopCheckPoint":
        return dataclasses.replace(self, bit_map=self.bit_map | (1 << index))

    def merge_key(self) -> str:
        """The key ``PopReviveService`` pairs a CK and its ACKs by."""
        return f"{self.topic}{self.cid}{self.queue_id}{self.start_offset}{self.pop_time}"

    def unique_id(self) -> str:
        """``PopMessageProcessor.genCkUniqueId``: the CK message's ``UNIQ_KEY``."""
        return SPLIT.join(map(str, (self.topic, self.queue_id, self.start_offset, self.cid, self.pop_time,
                                    self.broker_name, CK_TAG)))

    def fields(self) -> list[tuple[str, object]]:
        """(JSON name, value) in fastjson's order; None values are left out by the encoder."""
        return [("bm", self.bit_map), ("bn", self.broker_name), ("c", self.cid),
                ("d", list(self.queue_offset_diff) if self.queue_offset_diff is not None else None),
                ("it", self.invisible_time), ("n", self.num), ("pt", self.pop_time), ("q", self.queue_id),
                ("reviveTime", self.revive_time), ("ro", self.revive_offset), ("so", self.start_offset),
                ("t", self.topic)]


@dataclass(frozen=True, slots=True)
class AckMsg:
    """One acknowledged message (``ack_offset``) of the CK ``(topic, group, queue, start_offset, pop_time)``."""

    ack_offset: int
    start_offset: int
    consumer_group: str | None
    topic: str | None
    queue_id: int
    pop_time: int
    broker_name: str | None = None

    def merge_key(self) -> str:
        return f"{self.topic}{self.consumer_group}{self.queue_id}{self.start_offset}{self.pop_time}"

    def unique_id(self) -> str:
        """``PopMessageProcessor.genAckUniqueId``: the ACK message's ``UNIQ_KEY``."""
        return SPLIT.join(map(str, (self.topic, self.queue_id, self.ack_offset, self.consumer_group,
                                    self.pop_time, self.broker_name, ACK_TAG)))

    def fields(self) -> list[tuple[str, object]]:
        return [("ao", self.ack_offset), ("bn", self.broker_name), ("c", self.consumer_group),
                ("pt", self.pop_time), ("q", self.queue_id), ("so", self.start_offset), ("t", self.topic)]


@dataclass(frozen=True, slots=True)
class BatchAckMsg:
    """Several acknowledged offsets of one CK (``BATCH_ACK_MESSAGE``); ``ao`` is -1."""

    ack_offset_list: tuple[int, ...]
    start_offset: int
    consumer_group: str | None
    topic: str | None
    queue_id: int
    pop_time: int
    broker_name: str | None = None
    ack_offset: int = -1

    def merge_key(self) -> str:
        return f"{self.topic}{self.consumer_group}{self.queue_id}{self.start_offset}{self.pop_time}"

    def unique_id(self) -> str:
        """The ``UNIQ_KEY`` 5.1.4 leaves on a bAck message: ``AckMessageProcessor.appendAck`` first sets
        ``genBatchAckUniqueId`` and then overwrites it with ``genAckUniqueId`` of the same bean, whose
        ack offset is -1 — so this is the single-ack form with ``-1``."""
        return SPLIT.join(map(str, (self.topic, self.queue_id, self.ack_offset, self.consumer_group,
                                    self.pop_time, self.broker_name, ACK_TAG)))

    def fields(self) -> list[tuple[str, object]]:
        return [("ao", self.ack_offset), ("aol", list(self.ack_offset_list)), ("bn", self.broker_name),
                ("c", self.consumer_group), ("pt", self.pop_time), ("q", self.queue_id),
                ("so", self.start_offset), ("t", self.topic)]


PopRecord = PopCheckPoint | AckMsg | BatchAckMsg
TAG_OF = {PopCheckPoint: CK_TAG, AckMsg: ACK_TAG, BatchAckMsg: BATCH_ACK_TAG}


def _json_value(value) -> str:
    if isinstance(value, str):
        return java_json_string(value)
    if isinstance(value, list):
        return "[" + ",".join(str(int(v)) for v in value) + "]"
    return str(int(value))


def encode_json(record: PopRecord) -> str:
    """``JSON.toJSONString(record)`` as fastjson writes it (compact, sorted, nulls left out)."""
    return "{" + ",".join(f'"{k}":{_json_value(v)}' for k, v in record.fields() if v is not None) + "}"


def encode_body(record: PopRecord) -> bytes:
    return encode_json(record).encode("utf-8")


# -- decoding (flat JSON objects: ints, strings, int arrays) -------------------------------------

#: JSON names (and fastjson's alternate names) -> dataclass field, per record kind.
_CK_NAMES = {"so": "start_offset", "pt": "pop_time", "it": "invisible_time", "bm": "bit_map", "n": "num",
             "q": "queue_id", "t": "topic", "c": "cid", "ro": "revive_offset", "d": "queue_offset_diff",
             "bn": "broker_name"}
_ACK_NAMES = {"ao": "ack_offset", "so": "start_offset", "c": "consumer_group", "t": "topic", "q": "queue_id",
              "pt": "pop_time", "bn": "broker_name", "ackOffset": "ack_offset", "startOffset": "start_offset",
              "consumerGroup": "consumer_group", "topic": "topic", "queueId": "queue_id", "popTime": "pop_time",
              "brokerName": "broker_name"}
_BACK_NAMES = {**_ACK_NAMES, "aol": "ack_offset_list", "ackOffsetList": "ack_offset_list"}
_KIND = {"so": "offset", "ao": "offset", "ro": "offset", "d": "offset", "aol": "offset", "pt": "timestamp",
         "it": "timestamp", "reviveTime": "timestamp", "bm": "flag", "n": "count", "q": "queue", "t": "topic",
         "c": "text", "bn": "text"}


def _fail(structure: str, field_name: str, offset: int, expected: str, found=None):
    raise PopRecordError(structure, field_name, offset, expected, found)


def scan_object(text: str, structure: str = "pop_record", base: int = 0) -> list[tuple[str, object, int, int]]:
    """``(name, value, start, end)`` of each member of a flat JSON object (character positions
    relative to ``base``); values are int, str, None or a list of ints."""
    out = []
    i, n = 0, len(text)

    def ws(j):
        while j < n and text[j] in " \t\r\n":
            j += 1
        return j

    def string(j):
        if j >= n or text[j] != '"':
            _fail(structure, "json", base + j, "a string")
        k, chars = j + 1, []
        while k < n and text[k] != '"':
            if text[k] == "\\":
                if k + 1 >= n:
                    break
                esc = text[k + 1]
                if esc == "u":
                    chars.append(chr(int(text[k + 2:k + 6], 16)))
                    k += 6
                    continue
                chars.append({"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}.get(esc, esc))
                k += 2
                continue
            chars.append(text[k])
            k += 1
        if k >= n:
            _fail(structure, "json", base + j, "a closed string")
        return "".join(chars), k + 1

    def number(j):
        k = j + (1 if j < n and text[j] == "-" else 0)
        while k < n and text[k].isdigit():
            k += 1
        if k == j or text[j:k] == "-":
            _fail(structure, "json", base + j, "a number", text[j:j + 10])
        return int(text[j:k]), k

    def _end(members, j):
        j = ws(j + 1)
        if j != n:
            _fail(structure, "json", base + j, "the end of the text", text[j:j + 10])
        return members

    i = ws(0)
    if i >= n or text[i] != "{":
        _fail(structure, "json", base + i, "'{'", text[i:i + 10] or "end of text")
    i = ws(i + 1)
    if i < n and text[i] == "}":
        return _end(out, i)
    while True:
        start = i
        name, i = string(i)
        i = ws(i)
        if i >= n or text[i] != ":":
            _fail(structure, name, base + i, "':'")
        i = ws(i + 1)
        if i < n and text[i] == '"':
            value, i = string(i)
        elif i < n and text[i] == "[":
            value, i = [], ws(i + 1)
            if i < n and text[i] == "]":
                i += 1
            else:
                while True:
                    v, i = number(i)
                    value.append(v)
                    i = ws(i)
                    if i < n and text[i] == ",":
                        i = ws(i + 1)
                        continue
                    if i < n and text[i] == "]":
                        i += 1
                        break
                    _fail(structure, name, base + i, "',' or ']'")
        elif text.startswith("null", i):
            value, i = None, i + 4
        else:
            value, i = number(i)
        out.append((name, value, start, i))
        i = ws(i)
        if i < n and text[i] == ",":
            i = ws(i + 1)
            continue
        if i < n and text[i] == "}":
            return _end(out, i)
        _fail(structure, "json", base + i, "',' or '}'")


def _build(cls, names: dict[str, str], members, structure: str, base: int):
    values = {}
    for name, value, start, _ in members:
        attr = names.get(name)
        if attr is None:
            continue  # fastjson ignores unknown members (reviveTime has no setter)
        if attr in ("topic", "cid", "consumer_group", "broker_name"):
            if value is not None and not isinstance(value, str):
                _fail(structure, name, base + start, "a string", value)
        elif attr in ("queue_offset_diff", "ack_offset_list"):
            if value is not None and not isinstance(value, list):
                _fail(structure, name, base + start, "an array of numbers", value)
            value = tuple(value) if value is not None else None
        elif not isinstance(value, int):
            _fail(structure, name, base + start, "a number", value)
        values[attr] = value
    defaults = {"start_offset": 0, "pop_time": 0, "invisible_time": 0, "bit_map": 0, "num": 0, "queue_id": 0,
                "topic": None, "cid": None, "ack_offset": 0, "consumer_group": None}
    for f in dataclasses.fields(cls):
        if f.name not in values and f.default is dataclasses.MISSING:
            values[f.name] = defaults.get(f.name, () if f.name == "ack_offset_list" else None)
    if cls is PopCheckPoint:
        values["num"] = ((values["num"] + 128) & 0xFF) - 128  # a Java byte
    return cls(**values)


def decode_ck(text: str | bytes) -> PopCheckPoint:
    text = text.decode("utf-8") if isinstance(text, bytes) else text
    return _build(PopCheckPoint, _CK_NAMES, scan_object(text, "pop_checkpoint"), "pop_checkpoint", 0)


def decode_ack(text: str | bytes) -> AckMsg:
    text = text.decode("utf-8") if isinstance(text, bytes) else text
    return _build(AckMsg, _ACK_NAMES, scan_object(text, "ack_msg"), "ack_msg", 0)


def decode_batch_ack(text: str | bytes) -> BatchAckMsg:
    text = text.decode("utf-8") if isinstance(text, bytes) else text
    return _build(BatchAckMsg, _BACK_NAMES, scan_object(text, "batch_ack_msg"), "batch_ack_msg", 0)


DECODER_BY_TAG = {CK_TAG: decode_ck, ACK_TAG: decode_ack, BATCH_ACK_TAG: decode_batch_ack}


def decode_by_tag(tag: str | None, body: bytes) -> PopRecord | None:
    """The record a revive-queue message carries (None for a tag the revive service skips)."""
    decoder = DECODER_BY_TAG.get(tag or "")
    return decoder(body) if decoder else None


def body_spans(body: bytes, base: int = 0, path: str = "body") -> tuple[Span, ...]:
    """One span per JSON member of a CK / ACK body (byte offsets from ``base``), for the hex view."""
    text = body.decode("utf-8")
    members = scan_object(text, "pop_record", base)
    spans = []
    for name, value, start, end in members:
        b_start = len(text[:start].encode("utf-8"))
        b_end = len(text[:end].encode("utf-8"))
        spans.append(Span(base + b_start, b_end - b_start, f"{path}.{name}", _KIND.get(name, "text"), value))
    return tuple(spans)


# -- extra info and receipt handles --------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ExtraInfo:
    """``ExtraInfoUtil`` fields: which CK a popped message belongs to and where it lives."""

    ck_queue_offset: int
    pop_time: int
    invisible_time: int
    revive_qid: int
    topic_type: str  # "0" normal topic, "1" the POP retry topic
    broker_name: str
    queue_id: int
    queue_offset: int | None = None
    commit_log_offset: int | None = None  # the proxy's ReceiptHandle adds it

    @property
    def retry(self) -> bool:
        return self.topic_type == RETRY_TOPIC

    @property
    def is_order(self) -> bool:
        return self.revive_qid == POP_ORDER_REVIVE_QUEUE

    def real_topic(self, topic: str, group: str) -> str:
        """``ExtraInfoUtil.getRealTopic``: the POP retry topic when the message came from it."""
        return pop_retry_topic(topic, group) if self.retry else topic

    @property
    def next_visible_time(self) -> int:
        return self.pop_time + self.invisible_time

    def encode(self) -> str:
        parts = [self.ck_queue_offset, self.pop_time, self.invisible_time, self.revive_qid, self.topic_type,
                 self.broker_name, self.queue_id]
        if self.queue_offset is not None:
            parts.append(self.queue_offset)
            if self.commit_log_offset is not None:
                parts.append(self.commit_log_offset)
        return " ".join(map(str, parts))


def build_extra_info(ck_queue_offset: int, pop_time: int, invisible_time: int, revive_qid: int, topic: str,
                     broker_name: str, queue_id: int, queue_offset: int | None = None) -> str:
    """``ExtraInfoUtil.buildExtraInfo``: topic type 1 when ``topic`` is a ``%RETRY%`` topic."""
    topic_type = RETRY_TOPIC if topic.startswith(RETRY_GROUP_TOPIC_PREFIX) else NORMAL_TOPIC
    return ExtraInfo(ck_queue_offset, pop_time, invisible_time, revive_qid, topic_type, broker_name, queue_id,
                     queue_offset).encode()


_EXTRA_NAMES = ("ckQueueOffset", "popTime", "invisibleTime", "reviveQid", "topicType", "brokerName", "queueId",
                "queueOffset", "commitLogOffset")


def parse_extra_info(text: str, structure: str = "extra_info", minimum: int = 7) -> ExtraInfo:
    """``ExtraInfoUtil.split`` + getters (or ``ReceiptHandle.decode`` with ``minimum=8``)."""
    if not isinstance(text, str):
        _fail(structure, "text", 0, "a string", text)
    parts = text.split(" ")
    if len(parts) < minimum:
        _fail(structure, "text", 0, f"at least {minimum} space-separated fields", len(parts))
    try:
        return ExtraInfo(int(parts[0]), int(parts[1]), int(parts[2]), int(parts[3]), parts[4], parts[5],
                         int(parts[6]), int(parts[7]) if len(parts) > 7 else None,
                         int(parts[8]) if len(parts) > 8 else None)
    except ValueError:
        for i, part in enumerate(parts[:9]):
            if i not in (4, 5) and not part.lstrip("-").isdigit():
                _fail(structure, _EXTRA_NAMES[i], 0, "a number", part)
        raise


def parse_receipt_handle(text: str) -> ExtraInfo:
    """``ReceiptHandle.decode``: 8 fields at least, the 9th is the CommitLog offset (-1 if absent)."""
    info = parse_extra_info(text, "receipt_handle", minimum=8)
    if info.commit_log_offset is None:
        info = dataclasses.replace(info, commit_log_offset=-1)
    return info


def receipt_handle(extra: ExtraInfo | str, commit_log_offset: int) -> str:
    """``ReceiptHandle.encode``: the extra info of one message + its CommitLog offset."""
    info = parse_extra_info(extra, minimum=8) if isinstance(extra, str) else extra
    return dataclasses.replace(info, commit_log_offset=commit_log_offset).encode()


def iter_unacked(ck: PopCheckPoint) -> Iterable[tuple[int, int]]:
    """``(index, queue offset)`` of every message of ``ck`` not acked."""
    for i in range(ck.num):
        if not ck.is_acked(i):
            yield i, ck.ack_offset_by_index(i)


def record_spans_with_body(spans, body: bytes):
    """A revive-log record's spans (:func:`pymq_ref.formats.message.decode_record`) with its body span
    refined into one child per JSON member — for the hex view of a CK or ACK record."""
    out = []
    for s in spans:
        if s.path == "body":
            s = dataclasses.replace(s, children=body_spans(body, base=s.offset))
        out.append(s)
    return tuple(out)
