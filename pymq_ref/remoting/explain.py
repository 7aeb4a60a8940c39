"""What each field of a frame means: the hex view's "meaning" column for remoting frames.

The codec's spans (:func:`pymq_ref.remoting.codec.decode` with ``with_spans=True``) name every field
of a frame by a path: the frame layout (``total_length``, ``serialize_type``, ``header_length``,
``body``), the command's members (``code``, ``language``, ``version``, ``opaque``, ``flag``,
``remark``, ``serializeTypeCurrentRPC``, ``extFields``; ``ext_length`` in the binary header) and one
``extFields.<key>`` per ext entry. :func:`field_meaning` gives one sentence for a path:

* frame and command fields: a fixed sentence (:data:`FRAME_FIELDS`), completed with what this
  command's value says (the code's name, the version's name, the flag bits);
* ext entries: the typed header class of the command's code (the protocol table) declares the key
  — its long name when the key is a short one, its Java type, ``@CFNotNull`` and the field's ``doc``
  (the class itself is named on the ``extFields`` row); keys no class declares are
  explained when 4.9.4 adds them outside headers (RPC hooks, the send processor), else by the
  glossary;
* ``body``: what the protocol table says this code's body is.

:func:`frame_meaning` binds a command for the hex view (``HexView.meaning`` takes ``path -> str``).
Pure: reads declarations only, never bytes, never raises for an unknown path (it answers "").
"""

from __future__ import annotations

from typing import Callable

from pymq_ref.formats.fastjson import camel

from .codes import (FLAG_ONEWAY, FLAG_RESPONSE, SerializeType, language_name, request_code_name, response_code_name,
                    version_name)
from .command import RemotingCommand
from .header import CommandHeader, HeaderField
from .headers.glossary import FIELD_DOCS
from .protocol import BATCH, MESSAGE, PROPERTIES_TEXT, RECORDS, REGISTRATION, api_of

#: One sentence per frame-layout and command field (the ``extFields.<key>`` entries are per header).
FRAME_FIELDS: dict[str, str] = {
    "total_length": "bytes after this field: 4 (the header-length word) + header + body",
    "serialize_type": "how the header is written: 0 JSON, 1 ROCKETMQ (binary); top byte of the length word",
    "header_length": "the header's length in bytes (the low 3 bytes of the word)",
    "code": "what to do (request code) or how it went (response code)",
    "language": "the sender's LanguageCode (JSON: its name, ROCKETMQ: one byte)",
    "version": "the sender's MQVersion ordinal: a server answers older peers the old way",
    "opaque": "request id picked by the requester; the response carries it back",
    "flag": "bit 0: this is a response; bit 1: oneway, no response wanted",
    "remark": "free text; in a failed response, what went wrong",
    "serializeTypeCurrentRPC": "the serialize type again, as a JSON member (fastjson writes every getter)",
    "extFields": "the custom header: field name -> String.valueOf(value), nulls left out",
    "ext_length": "bytes of the ext entries that follow (int16 key length + key, int32 value length + value)",
    "body": "the payload, opaque to the frame layer",
}

#: Ext keys 4.9.4 adds outside the custom header classes, and who adds them.
EXTRA_EXT_KEYS: dict[str, str] = {
    "AccessKey": "ACL account, added by AclClientRPCHook (mqadmin signs with conf/tools.yml)",
    "Signature": "HMAC-SHA1 of the sorted ext values + body with the ACL secret key (AclClientRPCHook)",
    "SecurityToken": "ACL session token, added by AclClientRPCHook when the credentials have one",
    "MSG_REGION": "the broker's regionId, added to every send response by SendMessageProcessor",
    "TRACE_ON": "whether the broker accepts message traces, added to send responses by SendMessageProcessor",
}

_BODY_KINDS: dict[str, str] = {
    MESSAGE: "the message body as the producer sent it (zlib-compressed when sysFlag bit 0 is set)",
    BATCH: "the batch: encoded messages back to back (MessageDecoder.encodeMessages)",
    RECORDS: "stored CommitLog records back to back, as the store holds them (chapter 01)",
    REGISTRATION: "RegisterBrokerBody: JSON, or its zlib form when compressed=true",
    PROPERTIES_TEXT: "configuration as Java properties text, key=value lines",
}


def header_class(command: RemotingCommand | None, request_code: int | None = None) -> type[CommandHeader] | None:
    """The typed header class of a request, or of a response to ``request_code`` (None if unknown)."""
    if command is None:
        return None
    api = api_of(request_code if command.is_response else command.code) if (
        request_code is not None or not command.is_response) else None
    if api is None:
        return None
    return api.response_header if command.is_response else api.request_header


def header_field(cls: type[CommandHeader] | None, key: str) -> HeaderField | None:
    """The declaration of ext key ``key`` in ``cls`` (None if not declared there)."""
    if cls is None:
        return None
    return next((f for f in cls.FIELDS if f.name == key), None)


def ext_key_meaning(key: str, cls: type[CommandHeader] | None = None) -> str:
    """One ext entry: from the header class's declaration, else the extras 4.9.4 adds, else the glossary."""
    declared = header_field(cls, key)
    if declared is not None:
        need = "required" if declared.required else "optional"
        doc = declared.doc or FIELD_DOCS.get(key, "")
        long_name = camel(declared.attr)
        alias = f"{long_name}, " if long_name.lower() != key.lower() else ""
        return f"({alias}{declared.jtype.name}, {need}) {doc}".rstrip()
    if key in EXTRA_EXT_KEYS:
        return EXTRA_EXT_KEYS[key]
    if key in FIELD_DOCS:
        where = f"not declared by {cls.JAVA}; " if cls is not None else ""
        return f"{where}{FIELD_DOCS[key]}"
    return f"not declared by {cls.JAVA}" if cls is not None else "an ext entry no known header class declares"


def body_meaning(command: RemotingCommand | None, request_code: int | None = None) -> str:
    """What the body of this command is, from the protocol table."""
    base = FRAME_FIELDS["body"]
    if command is None:
        return base
    code = request_code if command.is_response else command.code
    api = api_of(code) if code is not None else None
    if api is None:
        return base
    kind = api.response_body if command.is_response else api.request_body
    if kind is None:
        return base
    if isinstance(kind, str):
        return _BODY_KINDS.get(kind, base)
    return f"JSON body: {kind.__name__}, as fastjson writes it"


def _flag_meaning(flag: int) -> str:
    if flag & FLAG_RESPONSE:
        what = "a response"
    elif flag & FLAG_ONEWAY:
        what = "a oneway request (no response)"
    else:
        what = "a two-way request"
    return f"{FRAME_FIELDS['flag']} — here {flag}: {what}"


def field_meaning(path: str, command: RemotingCommand | None = None, request_code: int | None = None) -> str:
    """The meaning of the field at ``path`` of a frame holding ``command`` ("" if unknown).

    ``request_code`` names the request a response answers (its typed header and body depend on it).
    """
    if path.startswith("extFields."):
        return ext_key_meaning(path[len("extFields."):], header_class(command, request_code))
    base = FRAME_FIELDS.get(path, "")
    if command is None or not base:
        return base
    if path == "code":
        if command.is_response:
            answered = f" to {request_code_name(request_code)}" if request_code is not None else ""
            return f"how it went (ResponseCode) — {response_code_name(command.code)}{answered}"
        return f"what to do (RequestCode) — {request_code_name(command.code)}"
    if path == "version":
        return f"{base} — {version_name(command.version)}"
    if path == "language":
        name = language_name(command.language)
        return f"{base} — {name}" if name else base
    if path == "flag":
        return _flag_meaning(command.flag)
    if path == "extFields":
        cls = header_class(command, request_code)
        return base.replace("custom header", f"custom header {cls.JAVA}") if cls is not None else base
    if path == "serialize_type":
        return f"{base} — {SerializeType(command.serialize_type).name}"
    if path == "body":
        return body_meaning(command, request_code)
    return base


def frame_meaning(command: RemotingCommand | None = None, request_code: int | None = None) -> Callable[[str], str]:
    """``path -> sentence`` for one frame, ready for the hex view's meaning column."""
    def meaning(path: str) -> str:
        return field_meaning(path, command, request_code)
    return meaning
