"""Typed errors of the remoting layer.

Two families, never mixed:

* :class:`FrameError` (a :class:`~pymq_ref.errors.FormatError`): bytes that are not a valid
  frame. A peer that sends one has broken the protocol; RocketMQ closes that connection, and so
  do our shells. It says which field at which offset of the frame was wrong.
* :class:`RemotingError`: things that go wrong *around* valid frames — a call that timed out,
  a connection that could not be opened or was lost, a method called in the wrong state, an
  error response turned into an exception by a client.

Pure definitions; no I/O.
"""

from __future__ import annotations

from pymq_ref.errors import EncodeError, FormatError, PymqError

__all__ = ["FrameError", "FrameTooLargeError", "HeaderFieldError", "EncodeError", "RemotingError",
           "RemotingStateError", "RemotingTimeoutError", "RemotingConnectError", "RemotingClosedError",
           "RemotingCommandError", "RemotingBusyError"]


class FrameError(FormatError):
    """Bytes that do not follow the frame layout; the connection they came on must be closed."""

    def __init__(self, field: str, offset: int, expected: str, found: object = None):
        super().__init__("frame", field, offset, expected, found)


class FrameTooLargeError(FrameError):
    """A length field above the limit (16 MiB by default): refused before anything is buffered."""


class HeaderFieldError(FrameError):
    """A header field value that cannot be read as its Java type where 4.9.4 fails the request too
    (the ``FastCodesHeader`` decoders let ``NumberFormatException`` escape). ``java_message`` is
    the exception text a 4.9.4 peer would report."""

    def __init__(self, header: str, field: str, expected: str, found: object, java_message: str):
        super().__init__(f"extFields.{field}", -1, expected, found)
        self.header = header
        self.java_message = java_message


class RemotingError(PymqError):
    """Something went wrong on a connection (not in the bytes of a frame)."""


class RemotingStateError(RemotingError):
    """A method called in a state where it is not allowed (see the class's legal call order)."""


class RemotingTimeoutError(RemotingError, TimeoutError):
    """No response within the timeout (``RemotingTimeoutException``)."""


class RemotingConnectError(RemotingError, ConnectionError):
    """The peer could not be reached (``RemotingConnectException``)."""


class RemotingClosedError(RemotingError, ConnectionError):
    """The connection closed while a request was outstanding (``RemotingSendRequestException``)."""


class RemotingBusyError(RemotingError):
    """Too many requests in flight on this connection (the async/oneway semaphores of the Java client)."""


class RemotingCommandError(RemotingError):
    """A response whose code says the request failed (``MQBrokerException`` / ``MQClientException``).

    ``code`` and ``remark`` are the response's; ``response`` is the whole command.
    """

    def __init__(self, code: int, remark: str | None, response=None, request_code: int | None = None):
        from .codes import request_code_name, response_code_name
        self.code = code
        self.remark = remark
        self.response = response
        self.request_code = request_code
        what = f" to {request_code_name(request_code)}" if request_code is not None else ""
        super().__init__(f"{response_code_name(code)} ({code}){what}: {remark}")
