"""5.x POP on the wire: POP_MESSAGE (200050), ACK_MESSAGE (200051), CHANGE_MESSAGE_INVISIBLETIME (200053)
(``broker/src/main/java/org/apache/rocketmq/broker/processor/PopMessageProcessor.java``,
``AckMessageProcessor.java``, ``ChangeInvisibleTimeProcessor.java`` at tag ``rocketmq-all-5.1.4``).

Each is one call on the facade's POP service (:mod:`pymq_ref.broker.pop`). A POP that finds nothing
with ``pollTime > 0`` is held — re-run on the server's loop every ``POLL_STEP_S`` until a message is
there or the poll time is up — then answered POLLING_TIMEOUT (210) with remark
``NO_MESSAGE_IN_QUEUE``. A POP's body is the stored records as they are, except that a message
from the POP retry topic is re-encoded with the request's topic and its ``POP_CK`` (5.x's default
``popResponseReturnActualRetryTopic=false``); clients build the others' ``POP_CK`` from the
response header's ``startOffsetInfo`` / ``msgOffsetInfo``.
"""

from __future__ import annotations

import asyncio

from pymq_ref.broker.pop import AckRequest, ChangeInvisibleTimeRequest, PopRequest
from pymq_ref.broker.response import BrokerError
from pymq_ref.formats.message import encode_message
from pymq_ref.remoting.codes import RequestCode5
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.headers.pop import (AckMessageRequestHeader, ChangeInvisibleTimeRequestHeader,
                                           ChangeInvisibleTimeResponseHeader, PopMessageRequestHeader,
                                           PopMessageResponseHeader)

from .context import BrokerContext
from .replies import refused

POLLING_FULL = 209      # 5.x ResponseCode.POLLING_FULL
POLLING_TIMEOUT = 210   # 5.x ResponseCode.POLLING_TIMEOUT
POLL_STEP_S = 0.05
MAX_POLL_MS = 30_000    # a held POP is answered after this long at most


def _pop_request(h: PopMessageRequestHeader) -> PopRequest:
    return PopRequest(consumer_group=h.consumer_group or "", topic=h.topic or "",
                      queue_id=h.queue_id if h.queue_id is not None else -1,
                      max_msg_nums=h.max_msg_nums or 0, invisible_time=h.invisible_time or 0,
                      poll_time=h.poll_time or 0, born_time=h.born_time or 0,
                      init_mode=h.init_mode if h.init_mode is not None else 1, exp_type=h.exp_type or "TAG",
                      exp=h.exp or "*", order=bool(h.order), attempt_id=h.attempt_id)


def pop_response(result) -> RemotingCommand:
    header = PopMessageResponseHeader(pop_time=result.pop_time, invisible_time=result.invisible_time,
                                      revive_qid=result.revive_qid, rest_num=result.rest_num,
                                      start_offset_info=result.start_offset_info,
                                      msg_offset_info=result.msg_offset_info)
    if not result.messages:
        return RemotingCommand.response(POLLING_TIMEOUT, "NO_MESSAGE_IN_QUEUE", header)
    body = b"".join(m.raw if not m.retry else encode_message(m.record) for m in result.messages)
    return RemotingCommand.response(0, "FOUND", header, body)


def handlers(ctx: BrokerContext) -> dict:
    broker = ctx.broker

    def pop_message(request, channel):
        h = request.header(PopMessageRequestHeader)
        req = _pop_request(h)
        try:
            result = broker.pop_message(req)
        except BrokerError as e:
            return refused(e, PopMessageResponseHeader())
        if result.messages or req.poll_time <= 0:
            return pop_response(result)

        async def held():
            loop = asyncio.get_running_loop()
            deadline = loop.time() + min(req.poll_time, MAX_POLL_MS) / 1000
            while True:
                await asyncio.sleep(POLL_STEP_S)
                try:
                    again = broker.pop_message(req)
                except BrokerError as e:
                    return refused(e, PopMessageResponseHeader())
                if again.messages or loop.time() >= deadline or getattr(channel, "closed", False):
                    return pop_response(again)
        return held()

    def ack_message(request, channel):
        h = request.header(AckMessageRequestHeader)
        try:
            broker.ack_message(AckRequest(h.consumer_group or "", h.topic or "",
                                          h.queue_id if h.queue_id is not None else 0,
                                          h.offset if h.offset is not None else -1, h.extra_info or ""))
        except BrokerError as e:
            return refused(e)
        return RemotingCommand.response(0, None)

    def change_invisible_time(request, channel):
        h = request.header(ChangeInvisibleTimeRequestHeader)
        try:
            changed = broker.change_invisible_time(ChangeInvisibleTimeRequest(
                h.consumer_group or "", h.topic or "", h.queue_id if h.queue_id is not None else 0,
                h.offset if h.offset is not None else -1, h.extra_info or "",
                h.invisible_time if h.invisible_time is not None else 0))
        except BrokerError as e:
            return refused(e, ChangeInvisibleTimeResponseHeader())
        return RemotingCommand.response(0, None, ChangeInvisibleTimeResponseHeader(
            pop_time=changed.pop_time, invisible_time=changed.invisible_time, revive_qid=changed.revive_qid))

    return {RequestCode5.POP_MESSAGE: pop_message, RequestCode5.ACK_MESSAGE: ack_message,
            RequestCode5.CHANGE_MESSAGE_INVISIBLETIME: change_invisible_time}
