"""LOCK_BATCH_MQ (41) and UNLOCK_BATCH_MQ (42): queue locks for orderly consumption
(``AdminBrokerProcessor.lockBatchMQ`` / ``unlockBatchMQ`` over ``RebalanceLockManager``, 4.9.4).
The answer to a lock lists the queues the client now holds (``LockBatchResponseBody``)."""

from __future__ import annotations

from pymq_ref.remoting.bodies.bean import java_map_order
from pymq_ref.remoting.bodies import (BodyError, LockBatchRequestBody, LockBatchResponseBody, UnlockBatchRequestBody,
                                      decode_json, encode_body)
from pymq_ref.remoting.codes import RequestCode, ResponseCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.dispatch import ProcessorError

from .context import BrokerContext


def _body(cls, request):
    try:
        return decode_json(cls, request.body or b"{}")
    except BodyError as e:
        raise ProcessorError(ResponseCode.SYSTEM_ERROR, f"the body is not a {cls.__name__}: {e}") from None


def handlers(ctx: BrokerContext) -> dict:
    def lock_batch_mq(request, channel):
        body = _body(LockBatchRequestBody, request)
        mqs = list(body.mq_set)
        locked = ctx.broker.lock_batch_mq(body.consumer_group or "", mqs, body.client_id or "")
        # the answer is a new HashSet<>(mqs.size()): its iteration order is what goes on the wire
        locked = java_map_order(locked, ("HashMap", len(mqs)))
        return RemotingCommand.response(ResponseCode.SUCCESS, body=encode_body(LockBatchResponseBody(locked)))

    def unlock_batch_mq(request, channel):
        body = _body(UnlockBatchRequestBody, request)
        ctx.broker.unlock_batch_mq(body.consumer_group or "", list(body.mq_set), body.client_id or "")
        return RemotingCommand.response(ResponseCode.SUCCESS)

    return {RequestCode.LOCK_BATCH_MQ: lock_batch_mq, RequestCode.UNLOCK_BATCH_MQ: unlock_batch_mq}
