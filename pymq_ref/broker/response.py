"""RocketMQ's ``ResponseCode`` values and the typed errors the broker services raise.

A broker service either returns a result (send result, pull result …) or raises a
:class:`BrokerError` whose ``code`` is the ``ResponseCode`` RocketMQ 4.9.4 answers with and
whose ``remark`` is the reason, so the network layer can turn any of them into a response frame
without knowing the service (see the book's reference appendix, §Response codes). Pure definitions; no I/O.
"""

from __future__ import annotations

from pymq_ref.errors import PymqError
from pymq_ref.remoting.codes import ResponseCode  # one definition: the protocol's (4.9.4's ResponseCode)

#: FAQUrl.suggestTodo(APPLY_TOPIC_URL): what 4.9.4 appends to some refusals
FAQ_TIP = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."


class BrokerError(PymqError):
    """A request the broker refuses: ``code`` is the response code, ``remark`` RocketMQ's reason.

    Nothing has been stored when one of these is raised (the services check before they write).
    """

    code: ResponseCode = ResponseCode.SYSTEM_ERROR

    def __init__(self, remark: str, code: ResponseCode | None = None):
        if code is not None:
            self.code = code
        self.remark = remark
        super().__init__(f"{self.code.name} ({int(self.code)}): {remark}")


class BrokerSystemError(BrokerError):
    """``SYSTEM_ERROR`` (1): bad topic name, bad queue id, message not found, wrong offsets …"""

    code = ResponseCode.SYSTEM_ERROR


class JavaExceptionError(BrokerSystemError):
    """Where 4.9.4's processor throws (a null header field unboxed, say): the remark is the Java
    exception's text, and the wire answers it as a thrown exception — no response header, the
    remark followed by where it was thrown."""


class IllegalTopicError(BrokerSystemError):
    """The topic is blank, has characters outside ``^[%|a-zA-Z0-9_-]+$`` or is over 127 chars."""


class IllegalQueueIdError(BrokerSystemError):
    """A queue id outside the topic's queues."""


class MessageNotFoundError(BrokerSystemError):
    """No record at the given CommitLog offset (``lookMessageByOffset`` returned null)."""


class TransactionStateError(BrokerSystemError):
    """END_TRANSACTION that does not match the half message (group, queue offset, CommitLog
    offset), or that points at a record that is not a half message."""


class TransactionAlreadyResolvedError(TransactionStateError):
    """END_TRANSACTION that contradicts the decision already taken for this transaction (pymq-ref)."""


class NoPermissionError(BrokerError):
    code = ResponseCode.NO_PERMISSION


class TopicNotExistError(BrokerError):
    code = ResponseCode.TOPIC_NOT_EXIST


class SubscriptionGroupNotExistError(BrokerError):
    code = ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST


class SubscriptionParseFailedError(BrokerError):
    code = ResponseCode.SUBSCRIPTION_PARSE_FAILED


class SubscriptionNotExistError(BrokerError):
    code = ResponseCode.SUBSCRIPTION_NOT_EXIST


class MessageIllegalResponseError(BrokerError):
    code = ResponseCode.MESSAGE_ILLEGAL


class ServiceNotAvailableError(BrokerError):
    code = ResponseCode.SERVICE_NOT_AVAILABLE


class QueryNotFoundError(BrokerError):
    code = ResponseCode.QUERY_NOT_FOUND


class BrokerStateError(PymqError):
    """A Broker method called in the wrong lifecycle state (e.g. ``send_message`` before ``start``)."""


__all__ = [name for name in dir() if name.endswith("Error") or name == "ResponseCode"]
