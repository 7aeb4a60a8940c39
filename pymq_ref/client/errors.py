"""Typed errors of the client: what a producer or consumer call raises, and why.

Mirrors the three kinds the 4.9.4 Java client throws (``client/exception/``):

* :class:`MQClientError` — the client itself refused or gave up (no route, bad message, every
  attempt failed, a call used in the wrong state); ``code`` follows ``ClientErrorCode`` where it has one;
* :class:`MQBrokerError` — a broker answered with an error response code (``code``, ``remark``);
* transport failures stay the remoting layer's errors (:mod:`pymq_ref.remoting.errors`).

Nothing here does I/O.
"""

from __future__ import annotations

from pymq_ref.errors import PymqError

# ClientErrorCode (client/common/ClientErrorCode.java)
CONNECT_BROKER_EXCEPTION = 10001
ACCESS_BROKER_TIMEOUT = 10002
BROKER_NOT_EXIST_EXCEPTION = 10003
NO_NAME_SERVER_EXCEPTION = 10004
NOT_FOUND_TOPIC_EXCEPTION = 10005
REQUEST_TIMEOUT_EXCEPTION = 10006
CREATE_REPLY_MESSAGE_EXCEPTION = 10007
MESSAGE_ILLEGAL = 13  # ResponseCode.MESSAGE_ILLEGAL, used by Validators


class MQClientError(PymqError):
    """The client refused a call or gave up (``MQClientException``)."""

    def __init__(self, message: str, code: int = -1):
        self.code = code
        super().__init__(message)


class NoRouteError(MQClientError):
    """The name server knows no route for the topic (and TBW102 gave none either)."""

    def __init__(self, topic: str, detail: str = ""):
        self.topic = topic
        super().__init__(f"No route info of this topic: {topic}{detail}", NOT_FOUND_TOPIC_EXCEPTION)


class StateError(MQClientError):
    """A method called in a state that does not allow it (e.g. send before start)."""


class RequestTimeoutError(MQClientError):
    """A request-reply call got no reply in time."""

    def __init__(self, message: str):
        super().__init__(message, REQUEST_TIMEOUT_EXCEPTION)


class MQBrokerError(PymqError):
    """A broker answered with a response code that is not SUCCESS (``MQBrokerException``)."""

    def __init__(self, code: int, remark: str | None, broker_addr: str | None = None):
        self.code = int(code)
        self.remark = remark
        self.broker_addr = broker_addr
        where = f" BROKER: {broker_addr}" if broker_addr else ""
        super().__init__(f"CODE: {self.code} DESC: {remark}{where}")
