"""The frame codec: :class:`RemotingCommand` <-> bytes, both header serializations, with spans.

Frame layout (``NettyEncoder`` / ``NettyDecoder`` + ``RemotingCommand.decode``), big-endian::

    offset  size  field
    0       4     total_length   = 4 + header_length + body length (not counting itself)
    4       1     serialize_type 0 JSON, 1 ROCKETMQ     } one int32:
    5       3     header_length  uint24                 } (type << 24) | length
    8       H     header         JSON text or the ROCKETMQ binary header
    8+H     B     body           everything left (B = 0: no body)

The JSON header is what fastjson writes for the ``RemotingCommand`` bean: members in alphabetical
order (``code, extFields, flag, language, opaque, remark, serializeTypeCurrentRPC, version``),
nulls left out, the language by name, strings escaped as fastjson does. ``extFields`` comes in the
iteration order of Java's ``HashMap``, which this codec reproduces so that our frames are the
bytes a Java peer writes. The ROCKETMQ header (``RocketMQSerializable``)::

    code int16 | language int8 | version int16 | opaque int32 | flag int32 |
    remark: int32 length + UTF-8 (0 = null or empty) |
    ext: int32 total length, then per entry int16 key length + key, int32 value length + value

where a ``FastCodesHeader`` writes its own fields first, in declaration order, then the other ext
entries in ``HashMap`` order. Reading accepts both serializations whatever the peer is.

:func:`decode` with ``with_spans=True`` also returns one :class:`~pymq_ref.formats.spans.Span` per
field (JSON members and ext entries included), so a frame shows field by field in the hex view.
Pure functions; no I/O. Errors are :class:`~pymq_ref.remoting.errors.FrameError` subclasses that
name the field and its offset in the frame.
"""

from __future__ import annotations

import functools
import json
import re
import struct
from dataclasses import dataclass
from decimal import Decimal

from pymq_ref.formats.fastjson import java_json_string
from pymq_ref.formats.json_reader import JsonSyntaxError, parse as parse_lenient_json
from pymq_ref.formats.properties import java_hashmap_order
from pymq_ref.formats.spans import Span

from .codes import LanguageCode, SerializeType
from .command import RemotingCommand
from .errors import EncodeError, FrameError, FrameTooLargeError

#: ``NettySystemConfig.frameMaxLength`` default: the largest frame, length field included.
MAX_FRAME_LENGTH = 16 * 1024 * 1024
#: Smallest ROCKETMQ header: code, language, version, opaque, flag, remark length, ext length.
MIN_ROCKETMQ_HEADER = 21

_LEN = struct.Struct(">i")
_PREFIX = struct.Struct(">iI")
_RMQ_FIXED = struct.Struct(">hbhii")
_I16, _I32, _U32 = struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">I")
_LANGUAGE_NAMES = {c.name: c for c in LanguageCode}
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
#: fastjson reads JSON numbers with a fraction or exponent as BigDecimal; Decimal keeps their text
#: the way BigDecimal.toString does ("1.50", "1E+3") when they become ext values.
_decoder = json.JSONDecoder(parse_float=Decimal)
_loads = _decoder.decode
_scan_once = _decoder.scan_once  # the C scanner: one value from an index, no whitespace around it
_I32_RANGE = (-(2**31), 2**31 - 1)
#: Where Python's ``json.dumps`` and fastjson write different text (see
#: :func:`pymq_ref.formats.fastjson.java_json_string`): a ``\u00XX`` escape with a hex letter (json
#: writes it lower case, fastjson upper case), DEL and C1 controls, U+2028/9 (json leaves them raw).
#: The properties separators \u0001 and \u0002 are written the same by both.
_LOWER_HEX_ESCAPE = re.compile(r"\\u00(?:0[bef]|1[a-f])")
_RAW_DIFFERS = re.compile("[\x7f-\x9f\u2028\u2029]")


def _fastjson_differs(text: str) -> bool:
    return ("\\u00" in text and bool(_LOWER_HEX_ESCAPE.search(text))) or (
        not text.isascii() and bool(_RAW_DIFFERS.search(text)))


@dataclass(frozen=True, slots=True)
class DecodedFrame:
    """A decoded frame: the command, the frame's length in bytes and (on request) the spans."""

    command: RemotingCommand
    length: int
    spans: tuple[Span, ...] = ()


# -- encoding -------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=4096)
def _java_order(keys: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(java_hashmap_order(dict.fromkeys(keys, "")))


def wire_ext(cmd: RemotingCommand) -> dict[str, str] | None:
    """The ext map in the order a Java peer iterates it (``HashMap`` of ext fields, then the
    custom header's fields put into it); None when the header has no ``extFields`` member."""
    ext, header = cmd.ext_fields, cmd.custom_header
    if header is None:
        if ext is None:
            return None
        merged = {k: v for k, v in ext.items() if v is not None}
    elif ext is None:
        merged = header.to_ext()
    else:
        merged = {k: v for k, v in ext.items() if v is not None}
        merged.update(header.to_ext())
    order = _java_order(tuple(merged))
    return {k: merged[k] for k in order}


_STYPE_NAMES = {0: "JSON", 1: "ROCKETMQ"}
_LANGUAGE_TEXT = {c: c.name for c in LanguageCode}
_JSON = SerializeType.JSON


def encode_json_header(cmd: RemotingCommand) -> bytes:
    """The fastjson text of the command bean, UTF-8 (members in fastjson's order, nulls left out)."""
    ext = wire_ext(cmd)
    language = _LANGUAGE_TEXT[cmd.language] if type(cmd.language) is LanguageCode else None
    ext_text = "" if ext is None else ',"extFields":' + _dumps(ext)
    lang_text = "" if language is None else f',"language":"{language}"'
    remark_text = "" if cmd.remark is None else ',"remark":' + _dumps(cmd.remark)
    code, flag, opaque, version = cmd.code, cmd.flag, cmd.opaque, cmd.version
    if not (type(code) is int and type(flag) is int and type(opaque) is int and type(version) is int):
        code, flag, opaque, version = int(code), int(flag), int(opaque), int(version)
    text = (f'{{"code":{code}{ext_text},"flag":{flag}{lang_text},"opaque":{opaque}{remark_text},'
            f'"serializeTypeCurrentRPC":"{_STYPE_NAMES[cmd.serialize_type]}","version":{version}}}')
    if _fastjson_differs(text):
        bean = {"code": code}
        if ext is not None:
            bean["extFields"] = ext
        bean["flag"] = flag
        if language is not None:
            bean["language"] = language
        bean["opaque"] = opaque
        if cmd.remark is not None:
            bean["remark"] = cmd.remark
        bean["serializeTypeCurrentRPC"] = _STYPE_NAMES[int(cmd.serialize_type)]
        bean["version"] = version
        text = _fastjson_text(bean)
    return text.encode("utf-8", "replace")


def _fastjson_text(value) -> str:
    """The slow path of :func:`encode_json_header`: fastjson's exact escaping."""
    if isinstance(value, dict):
        return "{" + ",".join(java_json_string(k) + ":" + _fastjson_text(v) for k, v in value.items()) + "}"
    if isinstance(value, str):
        return java_json_string(value)
    return json.dumps(value)


def _put_str(out: bytearray, text: str, short: bool, structure: str, name: str) -> None:
    data = text.encode("utf-8", "replace")
    if short and len(data) > 0x7FFF:
        raise EncodeError(structure, name, "a key of at most 32767 UTF-8 bytes", len(data))
    out += (_I16 if short else _I32).pack(len(data))
    out += data


def encode_rocketmq_header(cmd: RemotingCommand) -> bytes:
    """``RocketMQSerializable.rocketMQProtocolEncode`` (the ``fastEncodeHeader`` path)."""
    for name, value, lo, hi in (("code", cmd.code, -32768, 32767), ("version", cmd.version, -32768, 32767)):
        if not lo <= value <= hi:
            raise EncodeError("rocketmq_header", name, f"an int16 (the binary header has 2 bytes for {name})", value)
    language = int(cmd.language) if cmd.language is not None else LanguageCode.OTHER
    out = bytearray(_RMQ_FIXED.pack(cmd.code, language, cmd.version, cmd.opaque, cmd.flag))
    if cmd.remark:
        _put_str(out, cmd.remark, False, "rocketmq_header", "remark")
    else:
        out += b"\0\0\0\0"
    ext_at = len(out)
    out += b"\0\0\0\0"
    header = cmd.custom_header
    if header is not None and header.FAST:
        for key, value in header.to_ext().items():
            _put_str(out, key, True, "rocketmq_header", f"extFields.{key}")
            _put_str(out, value, False, "rocketmq_header", f"extFields.{key}")
        rest = cmd.with_(custom_header=None)
        ext = wire_ext(rest) if cmd.ext_fields else None
    else:
        ext = wire_ext(cmd)
    for key, value in (ext or {}).items():
        _put_str(out, key, True, "rocketmq_header", f"extFields.{key}")
        _put_str(out, value, False, "rocketmq_header", f"extFields.{key}")
    _I32.pack_into(out, ext_at, len(out) - ext_at - 4)
    return bytes(out)


def encode(cmd: RemotingCommand) -> bytes:
    """The whole frame, exactly as a 4.9.4 Java peer writes this command."""
    if cmd.serialize_type == SerializeType.ROCKETMQ:
        header = encode_rocketmq_header(cmd)
    elif cmd.serialize_type == SerializeType.JSON:
        header = encode_json_header(cmd)
    else:
        raise EncodeError("frame", "serialize_type", "JSON (0) or ROCKETMQ (1)", cmd.serialize_type)
    body = cmd.body or b""
    if len(header) > 0xFFFFFF:
        raise EncodeError("frame", "header_length", "a header of at most 16 MiB - 1 bytes", len(header))
    total = 4 + len(header) + len(body)
    if total + 4 > MAX_FRAME_LENGTH:
        raise EncodeError("frame", "total_length", f"a frame of at most {MAX_FRAME_LENGTH} bytes", total + 4)
    return b"".join((_PREFIX.pack(total, (int(cmd.serialize_type) << 24) | len(header)), header, body))


# -- decoding -------------------------------------------------------------------------------------

def frame_length(buf, pos: int = 0, *, max_frame_length: int = MAX_FRAME_LENGTH) -> int | None:
    """The length of the frame starting at ``buf[pos]`` (length field included), None if fewer
    than 4 bytes are there. Raises for a length no valid frame has, before any payload arrives."""
    if len(buf) - pos < 4:
        return None
    (total,) = _LEN.unpack_from(buf, pos)
    if total < 4:
        raise FrameError("total_length", 0, "at least 4 (the header-length word)", total)
    if total + 4 > max_frame_length:
        raise FrameTooLargeError("total_length", 0, f"a frame of at most {max_frame_length} bytes", total + 4)
    return total + 4


def decode(frame, *, with_spans: bool = False, base: int = 0,
           max_frame_length: int = MAX_FRAME_LENGTH) -> DecodedFrame:
    """Decode one whole frame (``frame`` may hold more bytes after it; they are not read).

    Spans are absolute (``base`` + position); ``base`` also offsets the positions in errors.
    """
    length = frame_length(frame, 0, max_frame_length=max_frame_length)
    if length is None or len(frame) < length:
        raise FrameError("total_length", base, f"{length if length else 4} bytes of frame",
                         f"{len(frame)} bytes")
    return decode_checked(frame, length, with_spans=with_spans, base=base)


def decode_command(frame, length: int, base: int = 0, spans: list[Span] | None = None) -> RemotingCommand:
    """The command of a whole frame whose length field was already checked (``length`` = whole
    frame). With a ``spans`` list, also appends one span per field, in frame order."""
    (word,) = _U32.unpack_from(frame, 4)
    stype, hlen = word >> 24, word & 0xFFFFFF
    if hlen > length - 8:
        raise FrameError("header_length", base + 5, f"at most {length - 8} (the bytes after the length word)", hlen)
    body = bytes(frame[8 + hlen:length]) if length > 8 + hlen else None
    if spans is not None:
        spans += [Span(base, 4, "total_length", "size", length - 4),
                  Span(base + 4, 1, "serialize_type", "magic", SerializeType(stype).name if stype < 2 else stype),
                  Span(base + 5, 3, "header_length", "size", hlen)]
    if stype == 0:
        cmd = _decode_json_header(memoryview(frame)[8:8 + hlen], base + 8, spans, body)
    elif stype == 1:
        cmd = _decode_rocketmq_header(memoryview(frame)[8:8 + hlen], base + 8, spans, body)
    else:
        raise FrameError("serialize_type", base + 4, "0 (JSON) or 1 (ROCKETMQ)", stype)
    if spans is not None and body is not None:
        spans.append(Span(base + 8 + hlen, len(body), "body", "body", len(body)))
    return cmd


def decode_checked(frame, length: int, *, with_spans: bool = False, base: int = 0) -> DecodedFrame:
    """:func:`decode` for a frame whose length field was already checked (``length`` = whole frame)."""
    if not with_spans:
        return DecodedFrame(decode_command(frame, length, base), length)
    spans: list[Span] = []
    cmd = decode_command(frame, length, base, spans)
    return DecodedFrame(cmd, length, tuple(spans))


def _int_member(obj: dict, key: str, default: int, at: int) -> int:
    """An int member as fastjson reads it: a number (a fraction truncated) or a numeric string,
    within int32 (anything else fails the frame, as the bean's setter would)."""
    value = obj.get(key, default)
    if type(value) is int and _I32_RANGE[0] <= value <= _I32_RANGE[1]:
        return value
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, str, float, Decimal)):
        raise FrameError(f"header.{key}", at, "an int", value)
    try:
        number = int(Decimal(value)) if not isinstance(value, int) else value
    except (ArithmeticError, ValueError):
        raise FrameError(f"header.{key}", at, "an int", value) from None
    if not _I32_RANGE[0] <= number <= _I32_RANGE[1]:
        raise FrameError(f"header.{key}", at, "an int32", value)
    return number


def _ext_value(value) -> str | None:
    """fastjson's cast of a JSON value into a ``HashMap<String, String>`` entry."""
    if value is None or isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float, Decimal)):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _language(value, at: int) -> LanguageCode | None:
    """fastjson's enum reading: a name, ASCII case ignored (unknown or empty: null), or an ordinal
    (out of range: the frame fails)."""
    if isinstance(value, str):
        return _LANGUAGE_NAMES.get(value.upper())
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return LanguageCode(value)
        except ValueError:
            raise FrameError("header.language", at, f"a LanguageCode ordinal in [0, {len(LanguageCode) - 1}]",
                             value) from None
    return None


def _decode_json_header(header: memoryview, at: int, spans: list[Span] | None, body: bytes | None) -> RemotingCommand:
    text = str(header, "utf-8", "replace")
    if text[:1] != "{" and text.startswith("\ufeff"):  # fastjson skips a byte-order mark
        text = text[1:]
    try:
        obj, end = _scan_once(text, 0) if text[:1] == "{" else (None, -1)  # what peers send: no whitespace
        if end != len(text):
            obj = _loads(text)
    except (ValueError, RecursionError, StopIteration):
        try:  # fastjson's dialect: unquoted member names, single-quoted strings
            obj = parse_lenient_json(text)
        except JsonSyntaxError as e:
            raise FrameError("header", at, "a JSON object (the fastjson RemotingCommand bean)", f"bad JSON: {e}") from None
    if not isinstance(obj, dict):
        raise FrameError("header", at, "a JSON object", type(obj).__name__)
    if "code" not in obj:
        raise FrameError("header.code", at, "a code member")
    ext = obj.get("extFields")
    if ext is not None and not isinstance(ext, dict):
        raise FrameError("header.extFields", at, "a JSON object of strings", type(ext).__name__)
    remark = obj.get("remark")
    if remark is not None and type(remark) is not str:
        remark = _ext_value(remark)
    if ext is not None:
        for v in ext.values():
            if type(v) is not str:
                ext = {str(k): _ext_value(v) for k, v in ext.items()}
                break
    language = obj.get("language", LanguageCode.JAVA)
    get = obj.get
    code, version, opaque, flag = get("code"), get("version", 0), get("opaque", 0), get("flag", 0)
    if not (type(code) is int and type(version) is int and type(opaque) is int and type(flag) is int
            and -2**31 <= opaque < 2**31 and -2**31 <= code < 2**31 and -2**31 <= flag < 2**31
            and -2**31 <= version < 2**31):
        code, version = _int_member(obj, "code", 0, at), _int_member(obj, "version", 0, at)
        opaque, flag = _int_member(obj, "opaque", 0, at), _int_member(obj, "flag", 0, at)
    if type(language) is str:
        lang = _LANGUAGE_NAMES.get(language)
        if lang is None:  # another case, or a name this version does not know
            lang = _language(language, at)
    else:
        lang = language if language is LanguageCode.JAVA else _language(language, at)
    cmd = RemotingCommand(code, lang, version, opaque, flag, remark, ext, body, _JSON)
    if spans is not None:
        spans.extend(json_member_spans(bytes(header), at))
    return cmd


def _read_str(buf: memoryview, pos: int, short: bool, limit: int, at: int, name: str) -> tuple[str | None, int]:
    size = 2 if short else 4
    if pos + size > len(buf):
        raise FrameError(f"header.{name}.length", at + pos, f"{size} bytes", f"{len(buf) - pos} bytes")
    (n,) = (_I16 if short else _I32).unpack_from(buf, pos)
    pos += size
    if n == 0:
        return None, pos
    if n < 0 or n > limit or pos + n > len(buf):
        raise FrameError(f"header.{name}", at + pos - size, f"a length in [0, {min(limit, len(buf) - pos)}]", n)
    return bytes(buf[pos:pos + n]).decode("utf-8", "replace"), pos + n


def _decode_rocketmq_header(header: memoryview, at: int, spans: list[Span] | None, body: bytes | None) -> RemotingCommand:
    hlen = len(header)
    if hlen < MIN_ROCKETMQ_HEADER:
        raise FrameError("header", at, f"a ROCKETMQ header of at least {MIN_ROCKETMQ_HEADER} bytes", f"{hlen} bytes")
    code, language, version, opaque, flag = _RMQ_FIXED.unpack_from(header, 0)
    try:
        lang = LanguageCode(language)
    except ValueError:
        lang = None
    remark, pos = _read_str(header, 13, False, hlen, at, "remark")
    remark_end = pos
    (ext_len,) = _I32.unpack_from(header, pos) if pos + 4 <= hlen else (None,)
    if ext_len is None:
        raise FrameError("header.ext_length", at + pos, "4 bytes", f"{hlen - pos} bytes")
    ext_at = pos
    pos += 4
    ext = None
    entries: list[Span] = []
    if ext_len > 0:
        if ext_len > hlen or pos + ext_len > hlen:
            raise FrameError("header.ext_length", at + ext_at, f"at most {hlen - pos} (the rest of the header)", ext_len)
        ext, end = {}, pos + ext_len
        while pos < end:
            start = pos
            key, pos = _read_str(header, pos, True, ext_len, at, "extFields.key")
            value, pos = _read_str(header, pos, False, ext_len, at, f"extFields.{key}")
            if pos > end:
                raise FrameError(f"header.extFields.{key}", at + start, f"an entry inside the {ext_len} ext bytes",
                                 f"{pos - end} bytes past them")
            if key is not None:
                ext[key] = value
            entries.append(Span(at + start, pos - start, f"extFields.{key}", "properties", value))
    elif ext_len < 0:
        raise FrameError("header.ext_length", at + ext_at, "a non-negative length", ext_len)
    if pos != hlen:
        raise FrameError("header", at + pos, f"the header to end after the ext fields ({pos} bytes)", f"{hlen} bytes")
    if spans is not None:
        spans += [Span(at, 2, "code", "code", code), Span(at + 2, 1, "language", "code", lang.name if lang is not None else language),
                  Span(at + 3, 2, "version", "code", version), Span(at + 5, 4, "opaque", "link", opaque),
                  Span(at + 9, 4, "flag", "flag", flag),
                  Span(at + 13, remark_end - 13, "remark", "text", remark),
                  Span(at + ext_at, 4, "ext_length", "size", ext_len)] + entries
    return RemotingCommand(code, lang, version, opaque, flag, remark, ext, body, SerializeType.ROCKETMQ)


# -- spans of a JSON header ---------------------------------------------------------------------

_MEMBER_KINDS = {"code": "code", "language": "code", "version": "code", "opaque": "link", "flag": "flag",
                 "remark": "text", "serializeTypeCurrentRPC": "magic"}
_WS = b" \t\r\n"


def _skip_ws(data: bytes, i: int) -> int:
    while i < len(data) and data[i] in _WS:
        i += 1
    return i


def _string_end(data: bytes, i: int) -> int:
    """Index after the JSON string starting at ``data[i] == '"'``."""
    i += 1
    while i < len(data):
        c = data[i]
        if c == 0x5C:
            i += 2
            continue
        if c == 0x22:
            return i + 1
        i += 1
    return len(data)


def _value_end(data: bytes, i: int) -> int:
    if i < len(data) and data[i] == 0x22:
        return _string_end(data, i)
    depth = 0
    while i < len(data):
        c = data[i]
        if c == 0x22:
            i = _string_end(data, i)
            continue
        if c in b"{[":
            depth += 1
        elif c in b"}]":
            if depth == 0:
                return i
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == 0x2C and depth == 0:
            return i
        i += 1
    return i


def _members(data: bytes, start: int, end: int):
    """``(key, key_start, value_start, value_end)`` of the members of the object at data[start]."""
    i = _skip_ws(data, start + 1)
    while i < end and data[i] == 0x22:
        key_end = _string_end(data, i)
        key = json.loads(data[i:key_end].decode("utf-8", "replace"))
        j = _skip_ws(data, key_end)
        j = _skip_ws(data, j + 1)  # past ':'
        v_end = _value_end(data, j)
        yield key, i, j, v_end
        i = _skip_ws(data, v_end)
        if i < end and data[i] == 0x2C:
            i = _skip_ws(data, i + 1)


def json_member_spans(header: bytes, at: int) -> list[Span]:
    """One span per member of a JSON header (``extFields`` with one child per entry); used only
    for display, after the header has been parsed, so it assumes well-formed JSON."""
    spans = []
    start = _skip_ws(header, 0)
    if start >= len(header) or header[start] != 0x7B:
        return [Span(at, len(header), "header", "text", None)]
    for key, k0, v0, v1 in _members(header, start, len(header)):
        value = json.loads(header[v0:v1].decode("utf-8", "replace")) if v1 > v0 else None
        if key == "extFields" and v1 > v0 and header[v0] == 0x7B:
            children = tuple(Span(at + c0, c1 - c0, f"extFields.{ck}", "properties",
                                  json.loads(header[cv0:c1].decode("utf-8", "replace")))
                             for ck, c0, cv0, c1 in _members(header, v0, v1))
            spans.append(Span(at + k0, v1 - k0, "extFields", "properties", len(children), children))
        else:
            spans.append(Span(at + k0, v1 - k0, key, _MEMBER_KINDS.get(key, "text"), value))
    return spans
