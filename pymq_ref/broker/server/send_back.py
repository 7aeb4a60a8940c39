"""CONSUMER_SEND_MSG_BACK (36): a consumer hands back a message it failed to consume; the facade
stores it again in ``%RETRY%<group>`` (through the delay levels) or, past the retry limit, in
``%DLQ%<group>`` (``SendMessageProcessor.asyncConsumerSendMsgBack``, 4.9.4)."""

from __future__ import annotations

from pymq_ref.broker.response import BrokerError
from pymq_ref.broker.retry import ConsumerSendMsgBackRequest
from pymq_ref.remoting.codes import RequestCode, ResponseCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.headers import ConsumerSendMsgBackRequestHeader

from .context import BrokerContext
from .replies import refused


def handlers(ctx: BrokerContext) -> dict:
    def consumer_send_msg_back(request, channel):
        h = request.header(ConsumerSendMsgBackRequestHeader)
        req = ConsumerSendMsgBackRequest(offset=h.offset if h.offset is not None else -1, group=h.group or "",
                                         delay_level=h.delay_level or 0, origin_msg_id=h.origin_msg_id,
                                         origin_topic=h.origin_topic, unit_mode=bool(h.unit_mode),
                                         max_reconsume_times=h.max_reconsume_times)
        try:
            ctx.broker.consumer_send_msg_back(req)
        except BrokerError as e:
            return refused(e)
        return RemotingCommand.response(ResponseCode.SUCCESS)

    return {RequestCode.CONSUMER_SEND_MSG_BACK: consumer_send_msg_back}
