"""A sans-IO RocketMQ connection: bytes in, events out; commands in, bytes out.

Theory of operation (h11 is the model). One :class:`Connection` is one TCP connection seen from
one end; it never touches a socket, a clock or a thread. The shell that owns the socket does::

    conn.receive_data(chunk)          # whatever arrived (b"" once the peer closed)
    while True:
        event = conn.next_event()     # Request / Response / NEED_DATA / ConnectionClosed
        ...                           # a FrameError here means: close this connection
    sock.write(conn.send(command))    # bytes for a request we make or a response we give

RocketMQ connections are symmetric: either end may send requests (a broker asks a producer
CHECK_TRANSACTION_STATE on the producer's own connection), so every connection both matches the
responses it receives to the requests it sent (by ``opaque`` — the response bit is looked at
first, so a peer's request may reuse an opaque of ours) and keeps the requests it received until
it has answered them. Those two tables are what a shell bounds (in-flight work) and what a proxy
uses to name a response's header type.

States and legal calls::

    OPEN   --receive_data/next_event/send-->  OPEN
    OPEN   --a bad frame (next_event raises FrameError)-->  ERROR
    OPEN   --the peer's EOF consumed by next_event (ConnectionClosed)-->  CLOSED
    any    --close()-->  CLOSED
    ERROR, CLOSED: next_event/send raise RemotingStateError; receive_data is ignored.
"""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass
from typing import NamedTuple

from .codec import MAX_FRAME_LENGTH, decode_command, encode, frame_length
from .codes import FLAG_ONEWAY, FLAG_RESPONSE
from .command import RemotingCommand
from .errors import FrameError, RemotingStateError


class _NeedData:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NEED_DATA"


#: :meth:`Connection.next_event` has nothing to give until more bytes arrive.
NEED_DATA = _NeedData()


class ConnectionState(enum.Enum):
    OPEN = "OPEN"
    ERROR = "ERROR"
    CLOSED = "CLOSED"


class Request(NamedTuple):
    """A request from the peer (``command.is_oneway`` tells whether it wants an answer)."""

    command: RemotingCommand
    frame_length: int


class Response(NamedTuple):
    """A response from the peer; ``request_code`` is the code of our request with that opaque,
    None when we had none outstanding (RocketMQ logs such a response and drops it)."""

    command: RemotingCommand
    request_code: int | None
    frame_length: int


@dataclass(frozen=True, slots=True)
class ConnectionClosed:
    """The peer closed; ``incomplete_bytes`` of a frame it never finished were discarded."""

    incomplete_bytes: int = 0


class FrameDecoder:
    """Cuts a byte stream into whole frames (``NettyDecoder``'s length-field framing).

    The length field is checked as soon as its 4 bytes are in, so a peer announcing a frame above
    ``max_frame_length`` is refused before its payload is buffered.
    """

    def __init__(self, max_frame_length: int = MAX_FRAME_LENGTH):
        self.max_frame_length = max_frame_length
        self._buf = bytearray()
        self._offset = 0  # stream offset of _buf[0], for error positions
        self.eof = False

    @property
    def buffered(self) -> int:
        return len(self._buf)

    def feed(self, data: bytes) -> None:
        if data:
            self._buf += data
        else:
            self.eof = True

    def next_frame(self) -> tuple[bytes, int] | None:
        """``(frame bytes, stream offset)`` of the next whole frame, or None. Raises FrameError.
        The frame's length field has been checked against the limit."""
        buf = self._buf
        if len(buf) < 4:
            return None
        try:
            n = frame_length(buf, 0, max_frame_length=self.max_frame_length)
        except FrameError as e:
            e.offset += self._offset
            raise
        if len(buf) < n:
            return None
        if len(buf) == n:
            frame = bytes(buf)
            buf.clear()
        else:
            frame = bytes(buf[:n])
            del buf[:n]
        at = self._offset
        self._offset += n
        return frame, at


class Connection:
    """One end of a remoting connection (see the module docstring for the call order)."""

    def __init__(self, *, max_frame_length: int = MAX_FRAME_LENGTH, first_opaque: int = 0):
        self.decoder = FrameDecoder(max_frame_length)
        self.state = ConnectionState.OPEN
        self.outstanding: dict[int, int] = {}  # opaque -> request code, requests we sent
        self.unanswered: dict[int, deque[int]] = {}  # opaque -> codes of peer requests we owe answers
        self._unanswered_count = 0
        self._next_opaque = first_opaque
        self.frames_in = 0
        self.frames_out = 0

    # -- input ------------------------------------------------------------------------------
    def receive_data(self, data: bytes) -> None:
        """Feed received bytes; ``b""`` says the peer closed its side."""
        if self.state is ConnectionState.OPEN:
            self.decoder.feed(data)

    def next_event(self):
        """The next :class:`Request` / :class:`Response` / :class:`ConnectionClosed`, or NEED_DATA."""
        if self.state is not ConnectionState.OPEN:
            raise RemotingStateError(f"next_event() on a connection in state {self.state.name}")
        try:
            got = self.decoder.next_frame()
            if got is None:
                if self.decoder.eof:
                    self.state = ConnectionState.CLOSED
                    return ConnectionClosed(self.decoder.buffered)
                return NEED_DATA
            frame, at = got
            length = len(frame)
            cmd = decode_command(frame, length, at)
        except FrameError:
            self.state = ConnectionState.ERROR
            raise
        self.frames_in += 1
        flag = cmd.flag
        if flag & FLAG_RESPONSE:
            return Response(cmd, self.outstanding.pop(cmd.opaque, None), length)
        if not flag & FLAG_ONEWAY:
            codes = self.unanswered.get(cmd.opaque)
            if codes is None:
                self.unanswered[cmd.opaque] = deque((cmd.code,))
            else:
                codes.append(cmd.code)
            self._unanswered_count += 1
        return Request(cmd, length)

    # -- output -----------------------------------------------------------------------------
    def new_opaque(self) -> int:
        """The next request id of this end (int32, wrapping like Java's counter)."""
        opaque = self._next_opaque
        self._next_opaque = opaque + 1 if opaque < 2**31 - 1 else -(2**31)
        return opaque

    def send(self, cmd: RemotingCommand, *, unsolicited: bool = False) -> bytes:
        """The bytes of ``cmd``; a two-way request is remembered until its response arrives, and a
        response must answer a request received on this connection (RemotingStateError if not) —
        unless ``unsolicited`` (4.9.4 answers even a oneway request with an unknown code)."""
        if self.state is not ConnectionState.OPEN:
            raise RemotingStateError(f"send() on a connection in state {self.state.name}")
        if cmd.is_response and not unsolicited:
            codes = self.unanswered.get(cmd.opaque)
            if not codes:
                raise RemotingStateError(f"response with opaque {cmd.opaque} answers no request received "
                                         "on this connection (already answered, oneway, or never sent)")
            codes.popleft()
            if not codes:
                del self.unanswered[cmd.opaque]
            self._unanswered_count -= 1
        data = encode(cmd)
        if not cmd.is_response and not cmd.is_oneway:
            self.outstanding[cmd.opaque] = cmd.code
        self.frames_out += 1
        return data

    def forget(self, opaque: int) -> None:
        """Stop waiting for the response to our request ``opaque`` (it timed out)."""
        self.outstanding.pop(opaque, None)

    def close(self) -> None:
        self.state = ConnectionState.CLOSED

    @property
    def in_flight(self) -> int:
        """Requests received and not yet answered."""
        return self._unanswered_count
