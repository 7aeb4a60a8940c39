"""Socket addresses as RocketMQ stores them: IPv4 = 4 address bytes + int port, IPv6 = 16 + int port.

Pure functions; no I/O, no name resolution.
"""

from __future__ import annotations

import ipaddress
import socket
import struct
from typing import NamedTuple

from ..errors import EncodeError

_PORT = struct.Struct(">i")


class Host(NamedTuple):
    """An IP address and a port. ``str(host)`` is ``"ip:port"``, or ``"[ip]:port"`` for IPv6."""

    ip: str
    port: int

    @property
    def is_v6(self) -> bool:
        return ":" in self.ip

    @property
    def size(self) -> int:
        """Bytes on disk: 8 for IPv4, 20 for IPv6."""
        return 20 if self.is_v6 else 8

    def __str__(self) -> str:
        return f"[{self.ip}]:{self.port}" if self.is_v6 else f"{self.ip}:{self.port}"

    @classmethod
    def parse(cls, text: str) -> "Host":
        """Parse ``"ip:port"`` or ``"[v6]:port"``."""
        try:
            if text.startswith("["):
                ip, _, port = text[1:].partition("]:")
            else:
                ip, _, port = text.rpartition(":")
            return cls(str(ipaddress.ip_address(ip)), int(port))
        except ValueError:
            raise ValueError(f"expected 'ip:port' or '[ipv6]:port', got {text!r}") from None

    def to_bytes(self) -> bytes:
        """The 8 or 20 bytes RocketMQ writes for this address (cached: every put and msg id asks)."""
        raw = _TO_BYTES.get(self)
        if raw is not None:
            return raw
        try:
            packed = ipaddress.ip_address(self.ip).packed
        except ValueError:
            raise EncodeError("host", "ip", "an IPv4 or IPv6 address", self.ip) from None
        if not -0x80000000 <= self.port <= 0x7FFFFFFF:
            raise EncodeError("host", "port", "a 32-bit int", self.port)
        raw = packed + _PORT.pack(self.port)
        if len(_TO_BYTES) >= 4096:
            _TO_BYTES.clear()
        _TO_BYTES[self] = raw
        return raw

    @classmethod
    def from_bytes(cls, raw: bytes) -> "Host":
        """Inverse of :meth:`to_bytes` (``raw`` is 8 or 20 bytes). Hot path of every scan: cached."""
        raw = bytes(raw)
        host = _CACHE.get(raw)
        if host is None:
            ip = str(ipaddress.IPv6Address(raw[:16])) if len(raw) == 20 else socket.inet_ntoa(raw[:4])
            host = cls(ip, _PORT.unpack_from(raw, len(raw) - 4)[0])
            if len(_CACHE) >= 4096:
                _CACHE.clear()
            _CACHE[raw] = host
        return host


_CACHE: dict[bytes, Host] = {}
_TO_BYTES: dict["Host", bytes] = {}
