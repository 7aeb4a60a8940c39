"""``RemotingCommand``: one request or response of the RocketMQ 4.x protocol, as a value.

A command is what RocketMQ's ``RemotingCommand`` holds (``remoting/src/main/java/org/apache/
rocketmq/remoting/protocol/RemotingCommand.java``): ``code``, ``language``, ``version``,
``opaque``, ``flag``, ``remark``, ``extFields``, ``body``, and the serialize type its header uses.
As in Java, a typed *custom header* may stand in for (part of) the ext map until the command is
encoded; a decoded command only has ``ext_fields``, which :meth:`header` turns into a typed header.

Commands are immutable values; :meth:`with_` gives a modified copy. Nothing here touches bytes
(see :mod:`pymq_ref.remoting.codec`) or sockets.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Mapping, TypeVar

from .codes import (CURRENT_VERSION, FLAG_ONEWAY, FLAG_RESPONSE, LanguageCode, SerializeType, request_code_name,
                    response_code_name)
from .header import CommandHeader

H = TypeVar("H", bound=CommandHeader)


@dataclass(frozen=True, slots=True, init=False)
class RemotingCommand:
    """A request (``flag`` bit 0 clear) or a response (bit 0 set); bit 1 marks a oneway request.

    ``language`` is a :class:`~pymq_ref.remoting.codes.LanguageCode`, or None when a JSON header
    named a language this version does not know (Java keeps null too). ``ext_fields`` is None when
    the header had no ``extFields`` member at all, which is not the same as an empty map.
    """

    code: int
    language: LanguageCode | None = LanguageCode.JAVA
    version: int = CURRENT_VERSION
    opaque: int = 0
    flag: int = 0
    remark: str | None = None
    ext_fields: Mapping[str, str | None] | None = None
    body: bytes | None = None
    serialize_type: SerializeType = SerializeType.JSON
    custom_header: CommandHeader | None = None

    def __init__(self, code: int, language: LanguageCode | None = LanguageCode.JAVA, version: int = CURRENT_VERSION,
                 opaque: int = 0, flag: int = 0, remark: str | None = None,
                 ext_fields: Mapping[str, str | None] | None = None, body: bytes | None = None,
                 serialize_type: SerializeType = SerializeType.JSON, custom_header: CommandHeader | None = None):
        # frozen: each field is set once, here, through its slot (cheaper than object.__setattr__)
        _set_code(self, code)
        _set_language(self, language)
        _set_version(self, version)
        _set_opaque(self, opaque)
        _set_flag(self, flag)
        _set_remark(self, remark)
        _set_ext_fields(self, ext_fields)
        _set_body(self, body)
        _set_serialize_type(self, serialize_type)
        _set_custom_header(self, custom_header)

    # -- construction -----------------------------------------------------------------------
    @classmethod
    def request(cls, code: int, header: CommandHeader | Mapping[str, str] | None = None, body: bytes | None = None,
                *, oneway: bool = False, opaque: int = 0, **fields) -> "RemotingCommand":
        """``createRequestCommand``: a typed header (or a plain ext map) and an optional body; extra
        ext entries next to a typed header go in ``ext_fields=``."""
        custom, ext = _split(header, fields)
        return cls(int(code), opaque=opaque, flag=FLAG_ONEWAY if oneway else 0, ext_fields=ext, body=body,
                   custom_header=custom, **fields)

    @classmethod
    def response(cls, code: int = 0, remark: str | None = None, header: CommandHeader | Mapping[str, str] | None = None,
                 body: bytes | None = None, *, opaque: int = 0, **fields) -> "RemotingCommand":
        """``createResponseCommand``: flag has the response bit; the opaque is the request's."""
        custom, ext = _split(header, fields)
        return cls(int(code), opaque=opaque, flag=FLAG_RESPONSE, remark=remark, ext_fields=ext, body=body,
                   custom_header=custom, **fields)

    def answer(self, code: int = 0, remark: str | None = None, header: CommandHeader | Mapping[str, str] | None = None,
               body: bytes | None = None, **fields) -> "RemotingCommand":
        """A response to this request: same opaque and serialize type (``processRequestCommand``)."""
        fields.setdefault("serialize_type", self.serialize_type)
        return RemotingCommand.response(code, remark, header, body, opaque=self.opaque, **fields)

    def with_(self, **changes) -> "RemotingCommand":
        """A copy with some fields changed (``dataclasses.replace``, without its per-call cost)."""
        get = changes.get
        if len(changes) > sum(1 for name in changes if name in _FIELDS):
            raise TypeError(f"RemotingCommand has no field(s) {sorted(set(changes) - set(_FIELDS))}")
        return RemotingCommand(get("code", self.code), get("language", self.language), get("version", self.version),
                               get("opaque", self.opaque), get("flag", self.flag), get("remark", self.remark),
                               get("ext_fields", self.ext_fields), get("body", self.body),
                               get("serialize_type", self.serialize_type), get("custom_header", self.custom_header))

    # -- reading ----------------------------------------------------------------------------
    @property
    def is_response(self) -> bool:
        return bool(self.flag & FLAG_RESPONSE)

    @property
    def is_oneway(self) -> bool:
        return bool(self.flag & FLAG_ONEWAY) and not self.flag & FLAG_RESPONSE

    @property
    def code_name(self) -> str:
        return response_code_name(self.code) if self.is_response else request_code_name(self.code)

    def ext(self) -> dict[str, str | None]:
        """The ext map as it goes on the wire: ext fields, then the custom header's entries
        (``makeCustomHeaderToNet`` puts the header's fields into the existing map)."""
        merged = dict(self.ext_fields) if self.ext_fields is not None else {}
        if self.custom_header is not None:
            merged.update(self.custom_header.to_ext())
        return merged

    def has_ext(self) -> bool:
        """Whether the header carries an ``extFields`` member (Java: a non-null map)."""
        return self.ext_fields is not None or self.custom_header is not None

    def header(self, cls: type[H]) -> H:
        """The ext map decoded as ``cls`` (lenient as 4.9.4: see :class:`CommandHeader.from_ext`)."""
        if self.custom_header is None:
            return cls.from_ext(self.ext_fields)
        if isinstance(self.custom_header, cls) and self.ext_fields is None:
            return self.custom_header
        return cls.from_ext(self.ext())

    def __repr__(self) -> str:
        kind = "response" if self.is_response else ("oneway" if self.is_oneway else "request")
        parts = [f"{self.code_name}({self.code})", kind, f"opaque={self.opaque}"]
        if self.remark is not None:
            parts.append(f"remark={self.remark!r}")
        if self.has_ext():
            parts.append(f"ext={self.ext()!r}")
        if self.body is not None:
            parts.append(f"body={len(self.body)} bytes")
        return f"RemotingCommand({', '.join(parts)})"


def _split(header, fields: dict):
    """(custom header, ext map) from a header argument and an optional ``ext_fields=`` keyword."""
    extra = fields.pop("ext_fields", None)
    if isinstance(header, CommandHeader):
        return header, extra
    if header is not None and extra is not None:
        raise TypeError("give the ext map either as the header argument or as ext_fields=, not both")
    return None, header if header is not None else extra


_FIELDS = frozenset(f.name for f in fields(RemotingCommand))
(_set_code, _set_language, _set_version, _set_opaque, _set_flag, _set_remark, _set_ext_fields, _set_body,
 _set_serialize_type, _set_custom_header) = (getattr(RemotingCommand, f.name).__set__ for f in fields(RemotingCommand))
