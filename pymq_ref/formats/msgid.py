"""The two message ids users confuse, encoded and parsed.

* The **offset message id** (broker-made, ``MessageDecoder.createMessageId``): store host IP
  (4 or 16 bytes) + port (int) + CommitLog physical offset (long), upper-case hex. It *is* an
  address: it says which broker holds the message and where in its CommitLog.
* The **UNIQ_KEY** (client-made, ``MessageClientIDSetter``): client IP + pid (short) +
  class-loader hash (int) + milliseconds since the start of the month (int) + counter (short).
  It is what the Java client shows as ``msgId``; the broker only indexes it.

(The third "id", the queue offset, is a position in a ConsumeQueue and lives in the record.)
Pure functions; the id generator takes an injected clock.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from typing import Callable

from .hosts import Host

_OFFSET = struct.Struct(">q")
_UNIQ_TAIL = struct.Struct(">HiiH")  # pid, class-loader hash, time diff, counter


def _unhex(text: str, what: str, lengths: tuple[int, ...]) -> bytes:
    if len(text) not in lengths:
        raise ValueError(f"{what}: expected {' or '.join(map(str, lengths))} hex characters, got {len(text)}: {text!r}")
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise ValueError(f"{what}: expected hexadecimal characters, got {text!r}") from None


def offset_msg_id(store_host: Host, phy_offset: int) -> str:
    """The offset message id: ``hex(storeIP + storePort + phyOffset)``, 32 (IPv4) or 56 (IPv6) characters."""
    return (store_host.to_bytes() + _OFFSET.pack(phy_offset)).hex().upper()


def parse_offset_msg_id(msg_id: str) -> tuple[Host, int]:
    """Inverse of :func:`offset_msg_id`: ``(store host, physical offset)``; 32 characters means IPv4."""
    raw = _unhex(msg_id, "offset msg id", (32, 56))
    return Host.from_bytes(raw[:-8]), _OFFSET.unpack_from(raw, len(raw) - 8)[0]


@dataclass(frozen=True, slots=True)
class UniqKey:
    """The parts of a client ``UNIQ_KEY``.

    ``time_ms`` is milliseconds since the start of the month the producer process was in
    (Java ``Calendar`` in the producer's default time zone), truncated to a signed int.
    """

    ip: str
    pid: int
    class_loader_hash: int
    time_ms: int
    counter: int

    def __str__(self) -> str:
        return encode_uniq_key(self)


def encode_uniq_key(key: UniqKey) -> str:
    """The 32- (IPv4) or 56-character (IPv6) upper-case hex ``UNIQ_KEY``."""
    return _encode_uniq_key(_ip_bytes(key.ip), key.pid, key.class_loader_hash, key.time_ms, key.counter)


def _ip_bytes(ip: str) -> bytes:
    return Host(ip, 0).to_bytes()[:-4]


def _encode_uniq_key(ip: bytes, pid: int, class_loader_hash: int, time_ms: int, counter: int) -> str:
    return (ip + _UNIQ_TAIL.pack(pid & 0xFFFF, class_loader_hash, time_ms, counter & 0xFFFF)).hex().upper()


def parse_uniq_key(text: str) -> UniqKey:
    """Inverse of :func:`encode_uniq_key`."""
    raw = _unhex(text, "UNIQ_KEY", (32, 56))
    ip = Host.from_bytes(raw[:-12] + b"\0\0\0\0").ip
    pid, loader, time_ms, counter = _UNIQ_TAIL.unpack_from(raw, len(raw) - 12)
    return UniqKey(ip, pid, loader, time_ms, counter)


def month_start_ms(now_ms: int, tz: tzinfo = timezone.utc) -> int:
    """Start (day 1, 00:00:00.000) of the month containing ``now_ms`` in ``tz``, in epoch ms."""
    now = datetime.fromtimestamp(now_ms / 1000, tz)
    start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    return int(start.timestamp() * 1000)


def _next_month_start_ms(start_ms: int, tz: tzinfo) -> int:
    start = datetime.fromtimestamp(start_ms / 1000, tz)
    year, month = (start.year + 1, 1) if start.month == 12 else (start.year, start.month + 1)
    return int(start.replace(year=year, month=month).timestamp() * 1000)


def nearly_time_from_uniq_key(text: str, now_ms: int, tz: tzinfo = timezone.utc) -> int:
    """``MessageClientIDSetter.getNearlyTimeFromID``: the id's creation time, assuming it is recent.

    The time field only counts from the month start, so the month is guessed: this month, or the
    previous one if that would put the id in the future.
    """
    key = parse_uniq_key(text)
    start = month_start_ms(now_ms, tz)
    if start + key.time_ms >= now_ms:
        start = month_start_ms(start - 1, tz)
    return start + key.time_ms


class UniqKeyGenerator:
    """``MessageClientIDSetter.createUniqID`` with its process-wide state made explicit.

    ``clock`` returns epoch milliseconds. The month start is fixed when the generator is made
    and moves only when the clock passes the next month start, as in Java; small negative
    differences (> -1,000,000 ms, clock steps back) become 0 as since 4.9.3.
    """

    def __init__(self, ip: str, pid: int, class_loader_hash: int, clock: Callable[[], int],
                 tz: tzinfo = timezone.utc, counter: int = 0):
        self.ip, self.pid, self.class_loader_hash = ip, pid, class_loader_hash
        self._ip = _ip_bytes(ip)  # parsed once: the id's prefix is the same for every call
        self._clock, self._tz, self._counter = clock, tz, counter
        self._set_start(clock())

    def _set_start(self, now_ms: int) -> None:
        self._start = month_start_ms(now_ms, self._tz)
        self._next_start = _next_month_start_ms(self._start, self._tz)

    def __call__(self) -> str:
        now = self._clock()
        if now >= self._next_start:
            self._set_start(now)
        diff = (now - self._start + 0x80000000) % 0x100000000 - 0x80000000  # Java (int) cast
        if -1_000_000 < diff < 0:
            diff = 0
        counter = self._counter
        self._counter = (counter + 1) & 0xFFFFFFFF
        return _encode_uniq_key(self._ip, self.pid, self.class_loader_hash, diff, counter)
