"""pymq-ref's codec against the golden frame corpus: the bytes the real 4.9.4 encoders produced and
what its decoders read (``corpus/frames/``, recorded by ``tools/rocketmq_wire/``).

* every header case: our encoder, fed the case's inputs, writes the same frame in both
  serializations; our decoder reads both frames to the command and typed header Java read;
* every decode case: our connection cuts the same frames out of the same chunks and reads the same
  commands (or refuses what Java refuses) — except the deliberate differences listed in
  ``DECODE_DIFFERENCES``, each with its reason;
* every body case: our bean codec reads Java's bytes to Java's values and writes Java's bytes back.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import zlib

import pytest

from pymq_ref.remoting import headers as H
from pymq_ref.remoting.bodies import ALL_BODIES
from pymq_ref.remoting.bodies.bean import BodyError, decode_json, encode_json, members
from pymq_ref.remoting.bodies.route import (decode_register_body, encode_register_body, parse_topic_config_text,
                                            topic_config_text)
from pymq_ref.remoting.codec import decode, encode
from pymq_ref.remoting.codes import LanguageCode, SerializeType
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.connection import NEED_DATA, Connection, ConnectionClosed
from pymq_ref.remoting.errors import EncodeError, FrameError, HeaderFieldError

CORPUS = pathlib.Path(__file__).parent.parent / "corpus" / "frames"
INDEX = json.loads((CORPUS / "index.json").read_text())


def load(folder: str, name: str) -> dict:
    return json.loads((CORPUS / folder / name).read_text(encoding="utf-8"))


def header_class(java_name: str | None):
    return None if java_name is None else H.ALL_HEADERS[java_name.rsplit(".", 1)[1]]


def command_view(cmd: RemotingCommand) -> dict:
    """The corpus's neutral view of a command (bodies over 64 KiB by SHA-256, as recorded)."""
    ext = cmd.ext_fields
    body = cmd.body
    if body is not None and len(body) > 65536:
        return {**command_view(cmd.with_(body=None)), "body": hashlib.sha256(body).hexdigest()}
    return {"code": cmd.code, "language": cmd.language.name if cmd.language is not None else None,
            "version": cmd.version, "opaque": cmd.opaque, "flag": cmd.flag, "remark": cmd.remark,
            "extFields": None if ext is None else dict(ext),
            "serializeTypeCurrentRPC": SerializeType(cmd.serialize_type).name,
            "body": None if cmd.body is None else cmd.body.hex()}


def java_view(cmd: dict) -> dict:
    out = dict(cmd)
    out.pop("bodyLength", None)
    if "bodySha256" in out:  # bodies over 64 KiB are recorded by hash
        out["body"] = out.pop("bodySha256")
    if isinstance(out.get("extFields"), list):  # a null key: kept as pairs in the corpus
        out["extFields"] = {p["key"]: p["value"] for p in out["extFields"] if p["key"] is not None}
    return out


# -- headers ---------------------------------------------------------------------------------------

def build(case: dict, java_frame: bytes) -> RemotingCommand:
    """Our command from a header case's inputs (the body is taken from Java's frame)."""
    cls = header_class(case["headerClass"])
    header = None
    if cls is not None:
        by_name = {f.name: f for f in cls.FIELDS}
        values = {}
        for name, value in case["fields"].items():
            if value == "$bodyCrc32":
                body = java_frame[8 + (int.from_bytes(java_frame[4:8], "big") & 0xFFFFFF):]
                value = zlib.crc32(body) & 0x7FFFFFFF if body else 0
            values[by_name[name].attr] = value
        header = cls(**values)
    hlen = int.from_bytes(java_frame[4:8], "big") & 0xFFFFFF
    body = java_frame[8 + hlen:] or None
    fields = dict(opaque=case["opaque"], remark=case["remark"], language=LanguageCode[case.get("language", "JAVA")],
                  version=case.get("version", 401))
    ext = case.get("extFields")
    if case["kind"] == "response":
        cmd = RemotingCommand.response(case["code"], header=header, body=body, ext_fields=ext, **fields)
    else:
        cmd = RemotingCommand.request(case["code"], header, body, oneway=case.get("oneway", False), ext_fields=ext,
                                      **fields)
    return cmd


#: Encodings where we refuse what 4.9.4 writes: case -> why.
ENCODE_REFUSALS = {
    "POP_MESSAGE_5x.request.code_overflow.ROCKETMQ":
        "4.9.4 writes the 5.x code 200050 into the int16 code field as 3442, another request; we refuse "
        "to encode a code the binary header cannot carry (EncodeError) rather than send the wrong request",
}

HEADER_CASES = [(h, stype) for h in INDEX["headers"] for stype in h["files"]]


@pytest.mark.parametrize("entry, stype", HEADER_CASES, ids=[f"{h['case']}.{s}" for h, s in HEADER_CASES])
def test_header_frames_are_java_s_bytes_and_read_back_as_java_read_them(entry, stype):
    expected = load("headers", entry["expected"])
    java_frame = (CORPUS / "headers" / entry["files"][stype]).read_bytes()
    cmd = build(expected["input"], java_frame).with_(serialize_type=SerializeType[stype])
    if f"{entry['case']}.{stype}" in ENCODE_REFUSALS:
        with pytest.raises(EncodeError):
            encode(cmd)
    else:
        assert encode(cmd) == java_frame
    decoded = expected["decoded"][stype]
    ours = decode(java_frame).command
    assert command_view(ours) == java_view(decoded["command"])
    cls = header_class(expected["input"]["headerClass"])
    if cls is None:
        return
    if "headerError" in decoded:
        with pytest.raises(HeaderFieldError):
            ours.header(cls)
        return
    assert ours.header(cls).values() == decoded["header"]
    if "v1" in decoded:
        assert ours.header(cls).to_v1().values() == decoded["v1"]


# -- decode cases -------------------------------------------------------------------------------------

def our_decoding(chunks: list[bytes]) -> tuple[list[dict], bool]:
    """(commands our connection reads from the chunks, whether the connection is still open)."""
    conn = Connection()
    commands = []
    for chunk in chunks:
        conn.receive_data(chunk)
        try:
            while (event := conn.next_event()) is not NEED_DATA:
                if isinstance(event, ConnectionClosed):
                    break
                commands.append(command_view(event.command))
        except FrameError:
            return commands, False
    return commands, True


def java_decoding(expected: dict) -> tuple[list[dict], bool]:
    netty = expected["nettyDecoder"]
    return [java_view(c) for c in netty["commands"]], netty["channelOpen"]


#: Decode cases where pymq-ref reads differently from 4.9.4, on purpose: case -> why.
DECODE_DIFFERENCES: dict[str, str] = {
    "json.missing_members": "a JSON header without opaque: Java keeps whatever its process-wide request counter gave "
                            "the new object (a value of the recording run); we read 0, as for flag",
    "json.duplicate_members": "a member given twice: fastjson's generated bean reader keeps the first opaque but the "
                              "last code; we keep the last of each (no sane peer sends duplicates)",
    "rocketmq.negative_ext_length": "4.9.4 ignores a negative extFields length and hands the unread header bytes to "
                                    "the body; we refuse the frame as corrupt and close the connection",
    "frame.bad_then_good": "after a frame that fails to decode, Netty still decodes what was already read in the "
                           "same buffer before the channel closes; we stop at the first bad frame",
}


def decode_cases():
    return [(d, load("decode", d["expected"])) for d in INDEX["decode"]]


@pytest.mark.parametrize("entry", INDEX["decode"], ids=[d["case"] for d in INDEX["decode"]])
def test_decode_cases_read_what_java_reads(entry):
    expected = load("decode", entry["expected"])
    chunks = [bytes.fromhex(c) for c in expected["input"]["chunks"]]
    if entry.get("appendZeroBytes"):
        chunks.append(bytes(entry["appendZeroBytes"]))
    java = java_decoding(expected)
    ours = our_decoding(chunks)
    if entry["case"] not in DECODE_DIFFERENCES:
        assert ours == java
    elif entry["case"] in ("json.missing_members", "json.duplicate_members"):  # only the opaque differs
        (java_cmd,), open_ = java
        assert ours == ([{**java_cmd, "opaque": ours[0][0]["opaque"]}], open_)
        assert ours[0][0]["opaque"] == (0 if entry["case"] == "json.missing_members" else 22)
    else:  # we refuse the frame: nothing read, connection closed
        assert ours == ([], False) and java[0]


# -- bodies ---------------------------------------------------------------------------------------------

def our_body_class(java_name: str):
    return ALL_BODIES.get(java_name.rsplit(".", 1)[1])


def view_of(value):
    """Our decoded value in the corpus's neutral view (maps with non-string keys as pairs)."""
    from pymq_ref.formats.message_queue import MessageQueue
    if isinstance(value, MessageQueue):
        return {"topic": value.topic, "brokerName": value.broker_name, "queueId": value.queue_id}
    if hasattr(value, "__dataclass_fields__"):
        return {m.json_name: view_of(getattr(value, m.attr)) for m in members(type(value))}
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: view_of(v) for k, v in value.items()}
        return [{"key": view_of(k), "value": view_of(v)} for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [view_of(v) for v in value]
    return value


def canonical(view):
    """Order-free form: objects by key, every list sorted (map and set orders carry no meaning)."""
    if isinstance(view, dict):
        return {k: canonical(v) for k, v in view.items()} if view else []  # an empty map of any key type
    if isinstance(view, list):
        return sorted((canonical(v) for v in view), key=lambda v: json.dumps(v, sort_keys=True))
    return view


BODY_CASES = [(b, enc) for b in INDEX["bodies"] for enc in b["files"]]


@pytest.mark.parametrize("entry, encoding", BODY_CASES, ids=[f"{b['case']}.{e}" for b, e in BODY_CASES])
def test_bodies_read_and_write_as_java(entry, encoding):
    expected = load("bodies", entry["expected"])
    cls = our_body_class(entry["class"])
    assert cls is not None, f"no body class for {entry['class']}"
    data = (CORPUS / "bodies" / entry["files"][encoding]).read_bytes()
    if encoding == "compressed":
        ours = decode_register_body(data, compressed=True)
        assert encode_register_body(ours, compressed=True) == data
        java = expected["encodings"]["compressed"]["decoded"]
    elif encoding == "topicConfigText":
        from pymq_ref.formats.beans import TopicConfig
        assert topic_config_text(decode_json(TopicConfig, encode_json(decode_json(cls, json.dumps(
            expected["value"]))))) == data.decode()
        return
    else:
        ours = decode_json(cls, data)
        enc = expected["encodings"][encoding]
        java = enc.get("decoded", expected["value"])
        if encoding in ("default", "standard") and enc.get("reencodedSame", True):
            assert encode_json(ours, standard=encoding == "standard").encode() == data
    assert canonical(view_of(ours)) == canonical(restrict(java, view_of(ours)))


def restrict(java, ours):
    """Java's view without the members our beans do not declare — which must then be null there
    (Java fields fastjson never writes, such as SubscriptionData.filterClassSource)."""
    if isinstance(java, dict) and isinstance(ours, dict):
        extra = {k: v for k, v in java.items() if k not in ours}
        assert all(v is None for v in extra.values()), f"members we do not declare: {extra}"
        return {k: restrict(v, ours[k]) for k, v in java.items() if k in ours}
    if isinstance(java, list) and isinstance(ours, list) and len(java) == len(ours):
        key = lambda v: json.dumps(v, sort_keys=True, default=str)  # noqa: E731
        return [restrict(j, o) for j, o in zip(sorted(java, key=key), sorted(ours, key=key))]
    return java


@pytest.mark.parametrize("entry", INDEX["bodyDecode"], ids=[b["case"] for b in INDEX["bodyDecode"]])
def test_bodies_written_by_other_clients_read_as_java_reads_them(entry):
    expected = load("body-decode", entry["expected"])
    cls = our_body_class(entry["class"])
    data = (CORPUS / "body-decode" / entry["input"]).read_bytes()
    decoder = expected["input"].get("decoder", "default")
    if decoder == "compressed":
        read = lambda b: decode_register_body(b, compressed=True)  # noqa: E731
    elif decoder == "topicConfigText":
        read = lambda b: parse_topic_config_text(b.decode())  # noqa: E731
    else:
        read = lambda b: decode_json(cls, b)  # noqa: E731
    if "error" in expected:
        with pytest.raises(BodyError):
            read(data)
        return
    ours = read(data)
    assert canonical(view_of(ours)) == canonical(restrict(expected["decoded"], view_of(ours)))
