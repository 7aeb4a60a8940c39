"""One frame as a JSON-ready record: everything a reader of a capture wants to see, decoded with the
protocol table (typed header fields, JSON bodies), plus the raw bytes on request.

Used by ``pymq proxy`` (one JSON line per frame), by the recorded fixtures of the real RocketMQ and
by the conformance reports. :class:`FrameTracker` remembers, per direction, which request codes are
outstanding so a response can be decoded with its request's response classes. Pure; no I/O.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from pymq_ref.formats.message_queue import MessageQueue

from .codec import DecodedFrame
from .codes import SerializeType, request_code_name, response_code_name, version_name
from .command import RemotingCommand
from .protocol import body_of, header_of


def jsonable(value: Any) -> Any:
    """A decoded value as plain JSON data (beans -> dicts with Java names, bytes -> hex)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"hex": bytes(value).hex(), "length": len(value)}
    if isinstance(value, MessageQueue):
        return value.to_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        from .bodies.bean import members
        return {m.json_name: jsonable(getattr(value, m.attr)) for m in members(type(value))}
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: jsonable(v) for k, v in value.items()}
        return [{"key": jsonable(k), "value": jsonable(v)} for k, v in value.items()]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if hasattr(value, "values") and hasattr(value, "FIELDS"):  # a typed header
        return {k: jsonable(v) for k, v in value.values().items() if v is not None}
    return repr(value)


def command_record(cmd: RemotingCommand, request_code: int | None = None) -> dict[str, Any]:
    """The decoded view of a command; ``request_code`` names what a response answers."""
    rec: dict[str, Any] = {
        "kind": "response" if cmd.is_response else ("oneway" if cmd.is_oneway else "request"),
        "code": cmd.code,
        "code_name": response_code_name(cmd.code) if cmd.is_response else request_code_name(cmd.code),
        "opaque": cmd.opaque, "flag": cmd.flag,
        "language": cmd.language.name if cmd.language is not None else None,
        "version": cmd.version, "version_name": version_name(cmd.version),
        "serialize_type": SerializeType(cmd.serialize_type).name,
    }
    if cmd.is_response and request_code is not None:
        rec["request_code"] = request_code
        rec["request_code_name"] = request_code_name(request_code)
    if cmd.remark is not None:
        rec["remark"] = cmd.remark
    if cmd.has_ext():
        rec["ext"] = dict(cmd.ext())
    try:
        header = header_of(cmd, request_code)
    except Exception as e:  # a header that does not parse is shown, not fatal
        header, rec["header_error"] = None, str(e)
    if header is not None:
        rec["header"] = {"class": header.JAVA, **jsonable(header)}
        if header.missing:
            rec["header"]["missing"] = list(header.missing)
    if cmd.body is not None:
        rec["body_length"] = len(cmd.body)
        body = body_of(cmd, request_code)
        rec["body"] = jsonable(body) if not isinstance(body, (bytes, bytearray)) else _raw_body(body)
    return rec


def _raw_body(body: bytes) -> dict[str, Any]:
    preview = body[:256]
    out: dict[str, Any] = {"hex": preview.hex(), "length": len(body)}
    if len(body) > 256:
        out["truncated"] = True
    try:
        out["text"] = preview.decode("utf-8")
    except UnicodeDecodeError:
        pass
    return out


class FrameTracker:
    """Matches responses to requests on one connection, for both directions."""

    def __init__(self):
        self.pending = {"c2s": {}, "s2c": {}}  # requests sent in that direction: opaque -> code

    def record(self, frame: DecodedFrame, direction: str) -> dict[str, Any]:
        cmd = frame.command
        other = "s2c" if direction == "c2s" else "c2s"
        request_code = None
        if cmd.is_response:
            request_code = self.pending[other].pop(cmd.opaque, None)
        elif not cmd.is_oneway:
            table = self.pending[direction]
            if len(table) >= 65536:  # a peer that never answers must not grow this without bound
                table.pop(next(iter(table)))
            table[cmd.opaque] = cmd.code
        rec = command_record(cmd, request_code)
        rec["frame_length"] = frame.length
        return rec
