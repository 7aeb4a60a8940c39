"""What a RocketMQ server does with a request it received (``NettyRemotingAbstract.processRequestCommand``),
as plain rules over a table of processors — shared by the name server and the broker.

* A processor is registered per request code; a request without one goes to the default
  processor, and with none either is answered ``REQUEST_CODE_NOT_SUPPORTED`` (3) with the remark
  ``" request type <code> not supported"`` (leading space included) — in JSON whatever the request
  used, and even when the request was oneway (4.9.4 does not look at the flag on that path).
* A processor returns the response, or None when it answers later (a held pull) or never; it may
  raise :class:`ProcessorError` to answer any code and remark (RocketMQ's processors return such
  responses). Its response gets the request's ``opaque``, the response bit and the request's
  serialize type.
* A processor that raises anything else answers ``SYSTEM_ERROR`` (1) with the error as remark,
  in JSON (the response is built without the request's serialize type), unless oneway.
* A oneway request is never answered by its processor, whatever it returns.

Must not do I/O: the asyncio shell (:mod:`pymq_ref.remoting.transport`) calls :meth:`process`
and writes what it returns.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any, Awaitable, Callable

from pymq_ref.errors import PymqError

from .codes import ResponseCode, SerializeType
from .command import RemotingCommand

log = logging.getLogger("pymq_ref.remoting")

#: ``processor(request, channel) -> response | None`` (plain function or coroutine function).
Processor = Callable[[RemotingCommand, Any], "RemotingCommand | None | Awaitable[RemotingCommand | None]"]


class ProcessorError(PymqError):
    """Raised by a processor to answer ``code`` with ``remark`` (as RocketMQ's processors do by
    returning an error response)."""

    def __init__(self, code: int, remark: str | None):
        self.code = int(code)
        self.remark = remark
        super().__init__(f"{code}: {remark}")


def java_str(value) -> str:
    """``String.valueOf``: how Java puts a value into a remark (``null`` for None, ``true``/``false``)."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    return str(value)


def java_remark(exception_text: str, where: str) -> str:
    """A remark as 4.9.4 words an exception (``RemotingHelper.exceptionSimpleDesc``): the exception,
    ", ", then where it was thrown — for us, the Python function standing in for the Java frame."""
    return f"{exception_text}, {where}"


def npe_unboxing(header_cls, field: str, boxed: str = "Long") -> str:
    """The text of the NullPointerException a JDK 17 throws when a processor unboxes a null header field."""
    primitive = {"Long": "long", "Integer": "int", "Boolean": "boolean"}[boxed]
    getter = "get" + field[0].upper() + field[1:]
    return (f'java.lang.NullPointerException: Cannot invoke "java.lang.{boxed}.{primitive}Value()" because the return '
            f'value of "{header_cls.java_name()}.{getter}()" is null')


def java_exception_remark(exc: BaseException) -> str:
    """The remark a Java server gives for an unexpected exception (``RemotingHelper.exceptionSimpleDesc``
    shows the exception and its first frame; ours names the Python exception)."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def not_supported(request: RemotingCommand) -> RemotingCommand:
    return RemotingCommand.response(ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                                    f" request type {request.code} not supported", opaque=request.opaque,
                                    serialize_type=SerializeType.JSON)


class RequestDispatcher:
    """Processors by request code, plus an optional default processor."""

    def __init__(self, default: Processor | None = None):
        self.processors: dict[int, Processor] = {}
        self.default = default

    def register(self, code: int, processor: Processor) -> None:
        self.processors[int(code)] = processor

    def register_all(self, table: dict[int, Processor]) -> None:
        for code, processor in table.items():
            self.register(code, processor)

    def dispatch(self, request: RemotingCommand, channel=None):
        """The response for ``request`` now (already stamped, or None), or an awaitable of it when
        the processor is a coroutine — so plain processors cost no task."""
        processor = self.processors.get(request.code, self.default)
        if processor is None:
            log.warning("%s: request type %s not supported", getattr(channel, "remote_address", "?"), request.code)
            return not_supported(request)
        try:
            response = processor(request, channel)
        except Exception as e:
            return self._failed(request, channel, e)
        if response is None or type(response) is RemotingCommand or not inspect.isawaitable(response):
            return self._answer(request, response)
        return self._finish(request, channel, response)

    async def process(self, request: RemotingCommand, channel=None) -> RemotingCommand | None:
        """:meth:`dispatch`, always awaited."""
        result = self.dispatch(request, channel)
        return await result if inspect.isawaitable(result) else result

    async def _finish(self, request, channel, awaitable):
        try:
            response = await awaitable
        except Exception as e:
            return self._failed(request, channel, e)
        return self._answer(request, response)

    @staticmethod
    def _answer(request: RemotingCommand, response) -> RemotingCommand | None:
        if type(response) is not RemotingCommand and isinstance(response, ProcessorError):
            response = RemotingCommand.response(response.code, response.remark)
        if response is None or request.is_oneway:
            return None
        return stamp(response, request)

    @staticmethod
    def _failed(request: RemotingCommand, channel, e: Exception) -> RemotingCommand | None:
        if isinstance(e, ProcessorError):
            return RequestDispatcher._answer(request, e)
        # a processor bug or an unexpected input: answer, keep serving
        log.warning("processing %s from %s failed: %s", request.code_name, getattr(channel, "remote_address", "?"),
                    java_exception_remark(e), exc_info=log.isEnabledFor(logging.DEBUG))
        if request.is_oneway:
            return None
        return RemotingCommand.response(ResponseCode.SYSTEM_ERROR, java_exception_remark(e), opaque=request.opaque)


def stamp(response: RemotingCommand, request: RemotingCommand) -> RemotingCommand:
    """Mark ``response`` as the answer to ``request``: opaque, response bit, serialize type."""
    r = response
    return RemotingCommand(r.code, r.language, r.version, request.opaque, r.flag | 1, r.remark, r.ext_fields, r.body,
                           request.serialize_type, r.custom_header)
