"""PULL_MESSAGE (11) on the wire, with long polling
(``broker/src/main/java/org/apache/rocketmq/broker/processor/PullMessageProcessor.java``).

The header becomes a :class:`~pymq_ref.broker.pull.PullMessageRequest`; the facade answers at
once or holds the pull (PULL_NOT_FOUND with the SUSPEND flag): then this processor returns None
and the facade's long-polling service later calls back — on the server's loop — with the answer,
which goes out on the same connection with the request's opaque. The response: code, the store's
status name as remark, ``PullMessageResponseHeader`` and the stored records as the body.
"""

from __future__ import annotations

from pymq_ref.broker.pull import PullMessageRequest, PullResult
from pymq_ref.broker.response import BrokerError, JavaExceptionError
from pymq_ref.remoting.codes import RequestCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.dispatch import java_remark
from pymq_ref.remoting.headers import PullMessageRequestHeader, PullMessageResponseHeader

from .context import BrokerContext, channel_addr
from .replies import answer_later, refused


def to_pull_request(h: PullMessageRequestHeader, channel) -> PullMessageRequest:
    return PullMessageRequest(
        consumer_group=h.consumer_group or "", topic=h.topic or "", queue_id=h.queue_id if h.queue_id is not None else -1,
        queue_offset=h.queue_offset, max_msg_nums=h.max_msg_nums if h.max_msg_nums is not None else 32,
        sys_flag=h.sys_flag or 0, commit_offset=h.commit_offset or 0,
        suspend_timeout_millis=h.suspend_timeout_millis or 0, subscription=h.subscription,
        sub_version=h.sub_version or 0, expression_type=h.expression_type, client_host="/" + channel_addr(channel))  # Netty's remoteAddress().toString()


def pull_response(result: PullResult | Exception) -> RemotingCommand:
    if isinstance(result, JavaExceptionError):
        return RemotingCommand.response(1, java_remark(result.remark, "pymq_ref.broker.pull.PullMessageProcessor"))
    if isinstance(result, BrokerError):
        return refused(result, PullMessageResponseHeader())
    if isinstance(result, Exception):
        return RemotingCommand.response(1, f"{type(result).__name__}: {result}", PullMessageResponseHeader())
    header = PullMessageResponseHeader(suggest_which_broker_id=result.suggest_which_broker_id,
                                      next_begin_offset=result.next_begin_offset, min_offset=result.min_offset,
                                      max_offset=result.max_offset)
    return RemotingCommand.response(int(result.code), result.remark, header, result.body if result.body else None)


def handlers(ctx: BrokerContext) -> dict:
    def pull(request, channel):
        req = to_pull_request(request.header(PullMessageRequestHeader), channel)

        def later(result) -> None:
            answer_later(channel, request, pull_response(result))

        try:
            result = ctx.broker.pull_message(req, callback=later)
        except BrokerError as e:
            return pull_response(e)
        return None if result is None else pull_response(result)

    return {RequestCode.PULL_MESSAGE: pull}
