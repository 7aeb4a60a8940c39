"""An answer made comparable: a frame's command as plain data, modulo time, hosts and ids.

Two brokers that behave alike still answer with different message ids, timestamps, CommitLog
offsets and addresses; a run also names its topics with a fresh id. :func:`normalize` turns a
command into a dict where those are replaced by placeholders — ``{run}``, ``{broker}``,
``{namesrv}``, ``{brokerName}``, ``{cluster}`` for the run's names, a shape for values that vary
(``<id>``, ``<number>``, ``<text>``: their presence and form still count, :func:`shape`) — and
:func:`differences` lists the fields where two such dicts
differ, each with a path the hex view can mark (``code``, ``remark``, ``ext.queueOffset``,
``body[0].properties.TAGS``).

Pure; never raises on a strange body (an undecodable body is compared as bytes).
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pymq_ref.formats.message import MessageRecord, decode_record
from pymq_ref.remoting.codes import SerializeType
from pymq_ref.remoting.command import RemotingCommand

from .steps import Compare, Vars

VARIES = "<varies>"

#: Ext keys whose values depend on time, addresses or the store's history, in every answer.
VOLATILE_EXT = frozenset({"msgId", "offsetMsgId", "transactionId", "commitLogOffset", "tranStateTableOffset",
                          "bornTimestamp", "storeTimestamp", "timestamp", "indexLastUpdateTimestamp",
                          "indexLastUpdatePhyoffset"})
#: Message properties that carry ids or times.
VOLATILE_PROPERTIES = frozenset({"UNIQ_KEY", "ORIGIN_MESSAGE_ID", "__transactionId__", "TRAN_PREPARED_QUEUE_OFFSET",
                                 "CONSUME_START_TIME", "MSG_REGION"})
#: JSON members whose values depend on time or on the server's history.
VOLATILE_JSON = frozenset({"dataVersion", "timestamp", "stateVersion", "bornTimestamp", "storeTimestamp"})


_HEX_ID = re.compile(r"[0-9A-Fa-f]{32}|[0-9A-Fa-f]{56}")
_NUMBER = re.compile(r"-?[0-9]+")


def shape(value: str) -> str:
    """What a varying value must look like: ``<id>`` (a 32- or 56-hex-digit message id, or a
    comma-separated list of them, as a batch's msgId), ``<number>``, ``<empty>`` or ``<text>``."""
    parts = value.split(",")
    if all(_HEX_ID.fullmatch(p) for p in parts):
        return ",".join("<id>" for _ in parts)
    if _NUMBER.fullmatch(value):
        return "<number>"
    return "<text>" if value else "<empty>"


def substitutions(v: Vars) -> list[tuple[str, str]]:
    """The run's names and addresses and their placeholders, longest first."""
    pairs = [(v.broker, "{broker}"), (f"cf-{v.run}", "cf-{run}"), (v.broker_name, "{brokerName}"),
             (v.cluster, "{cluster}")]
    if v.namesrv:
        pairs.append((v.namesrv, "{namesrv}"))
    return sorted((p for p in pairs if p[0]), key=lambda p: -len(p[0]))


#: A remark that reports an exception (``RemotingHelper.exceptionSimpleDesc``): the exception, then
#: ", " and where it was thrown — a Java frame in 4.9.4, the broker's own code elsewhere: not compared.
_EXCEPTION_REMARK = re.compile(r"^((?:[a-z]\w*\.)+\w*(?:Exception|Error)\b.*), [^,]+$", re.S)
_ADDRESS = re.compile(r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}:\d{1,5}\b")


def _sub(text: str, subs: list[tuple[str, str]]) -> str:
    for literal, placeholder in subs:
        if literal in text:
            text = text.replace(literal, placeholder)
    return _ADDRESS.sub("{address}", text) if ":" in text else text


def _plain(value: Any, subs, volatile: frozenset[str]) -> Any:
    if isinstance(value, str):
        return _sub(value, subs)
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        out = {}
        for k, item in value.items():
            key = _sub(k, subs) if isinstance(k, str) else json.dumps(_plain(k, subs, volatile), sort_keys=True)
            out[key] = VARIES if key in volatile else _plain(item, subs, volatile)
        return dict(sorted(out.items()))
    if isinstance(value, (list, tuple)):
        items = [_plain(x, subs, volatile) for x in value]
        if items and all(isinstance(x, (dict, list)) for x in items):  # Java sets and maps: order varies
            items.sort(key=lambda x: json.dumps(x, sort_keys=True))
        return items
    return value


def _text(data: bytes) -> str:
    try:
        text = data.decode("utf-8")
        if text.isprintable():
            return text
    except UnicodeDecodeError:
        pass
    return "base64:" + base64.b64encode(data).decode("ascii")


def record_view(record: MessageRecord, subs, ignore: tuple[str, ...] = ()) -> dict[str, Any]:
    """One stored message as compared: what the producer and the broker decided, not where or when
    (``ignore``: fields that depend on the broker's history, e.g. the queue offset in a system topic)."""
    props = {_sub(k, subs): (shape(val) if k in VOLATILE_PROPERTIES else _sub(val, subs))
             for k, val in record.properties.items()}
    return {"topic": _sub(record.topic, subs), "queueId": record.queue_id, "queueOffset": record.queue_offset,
            "flag": record.flag, "sysFlag": record.sys_flag, "reconsumeTimes": record.reconsume_times,
            "bodyCRC": record.body_crc, "body": _text(record.body), "properties": dict(sorted(props.items())),
            **{key: VARIES for key in ignore}}


def decode_records(body: bytes) -> list[MessageRecord]:
    """The records of a pull answer's body, back to back (raises FormatError on bad bytes)."""
    out, pos = [], 0
    while pos < len(body):
        record = decode_record(body, pos, with_spans=False)
        if not isinstance(record, MessageRecord):
            break
        out.append(record)
        pos += record.total_size
    return out


def body_view(body: bytes | None, how: str, subs, extra_volatile: tuple[str, ...] = ()) -> Any:
    if body is None:
        return None
    if how == "ignore":
        return VARIES
    if how == "length":
        return {"length": len(body)}
    if how == "records":
        try:
            return [record_view(r, subs, extra_volatile) for r in decode_records(body)]
        except Exception as e:  # noqa: BLE001 — a body that does not decode is compared as bytes
            return {"undecodable": str(e), "bytes": _text(body)}
    if how == "json":
        from pymq_ref.remoting.bodies.bean import parse_json
        try:
            return _plain(parse_json(body), subs, VOLATILE_JSON | frozenset(extra_volatile))
        except Exception:  # noqa: BLE001
            return {"not JSON": _sub(_text(body), subs)}
    return _sub(_text(body), subs)


def normalize(cmd: RemotingCommand | None, v: Vars, how: Compare, outcome: str = "answer") -> dict[str, Any]:
    """The comparable form of an outcome: ``answer`` / ``request`` (with the command), ``closed``, ``none``."""
    if cmd is None:
        return {"outcome": outcome}
    subs = substitutions(v)
    out: dict[str, Any] = {"outcome": outcome, "code": cmd.code,
                           "serializeType": SerializeType(cmd.serialize_type).name}
    if how.remark and cmd.remark is not None:
        out["remark"] = _EXCEPTION_REMARK.sub(r"\1, {where}", _sub(cmd.remark, subs))
    elif cmd.remark:
        out["remark"] = VARIES
    if cmd.has_ext():
        ignore = VOLATILE_EXT | frozenset(how.ignore)
        out["ext"] = {k: (None if val is None else shape(val) if k in ignore else _sub(val, subs))
                      for k, val in sorted(cmd.ext().items())}
    if cmd.body is not None:
        out["body"] = body_view(cmd.body, how.body, subs, how.ignore_body_keys)
    return out


@dataclass(frozen=True)
class Difference:
    """One field of an answer that differs from the recorded 4.9.4 answer."""

    path: str
    expected: Any
    actual: Any

    def __str__(self) -> str:
        return f"{self.path}: expected {_show(self.expected)}, got {_show(self.actual)}"

    def frame_field(self) -> str:
        """The frame span path this difference lies in (for the hex view's marks)."""
        if self.path.startswith("ext."):
            return "extFields." + self.path[4:]
        if self.path.startswith("body"):
            return "body"
        if self.path == "serializeType":
            return "serialize_type"
        return self.path


_MISSING = object()


def _show(value: Any) -> str:
    if value is _MISSING or value is None:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 160 else text[:157] + "..."


def differences(expected: Any, actual: Any, path: str = "") -> list[Difference]:
    """Where two normalized outcomes differ (innermost fields; an empty list when they agree)."""
    if expected == actual:
        return []
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = []
        for key in list(expected) + [k for k in actual if k not in expected]:
            sub = f"{path}.{key}" if path else str(key)
            a, b = expected.get(key, _MISSING), actual.get(key, _MISSING)
            if a is _MISSING or b is _MISSING:
                out.append(Difference(sub, None if a is _MISSING else a, None if b is _MISSING else b))
            else:
                out.extend(differences(a, b, sub))
        return out
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        out = []
        for i, (a, b) in enumerate(zip(expected, actual)):
            out.extend(differences(a, b, f"{path}[{i}]"))
        return out
    return [Difference(path or "(outcome)", expected, actual)]
