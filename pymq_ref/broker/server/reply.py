"""Request-reply: SEND_REPLY_MESSAGE (324) / SEND_REPLY_MESSAGE_V2 (325) from the responder, and
PUSH_REPLY_MESSAGE_TO_CLIENT (326) from the broker to the requester
(``broker/src/main/java/org/apache/rocketmq/broker/processor/ReplyMessageProcessor.java``).

The facade checks and builds the reply; this module pushes it — a request on the connection of
the producer whose client id is the reply's ``REPLY_TO_CLIENT``, with ``PUSH_REPLY_TIME`` added to
its properties — waits for that answer, then has the facade store the reply
(``storeReplyMessageEnable``, default true). The responder's answer: SUCCESS when the push
succeeded (with the stored offsets when stored), else SYSTEM_ERROR with 4.9.4's remark.
"""

from __future__ import annotations

import logging

from pymq_ref.broker.reply import PUSH_REPLY_TIME, REPLY_TO_CLIENT
from pymq_ref.broker.response import BrokerError
from pymq_ref.formats.properties import JavaHashMap, decode_properties, encode_properties
from pymq_ref.remoting.codes import RequestCode, ResponseCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.headers import ReplyMessageRequestHeader, SendMessageResponseHeader
from pymq_ref.store.commit_log import PutMessageStatus

from .context import BrokerContext, channel_host
from .replies import refused
from .send import read_send_header, to_send_request

log = logging.getLogger("pymq_ref.broker.server")

PUSH_TIMEOUT_S = 3.0
_STORED = (PutMessageStatus.PUT_OK, PutMessageStatus.FLUSH_DISK_TIMEOUT, PutMessageStatus.FLUSH_SLAVE_TIMEOUT,
           PutMessageStatus.SLAVE_NOT_AVAILABLE)


def handlers(ctx: BrokerContext) -> dict:
    c = ctx.config

    def region_ext() -> dict[str, str]:
        return {"MSG_REGION": c.region_id, "TRACE_ON": "true" if c.trace_on else "false"}

    async def push(h, req, reply, responder) -> tuple[bool, str | None]:
        sender = reply.reply_to_client
        if sender is None:
            log.warning("%s is null, can not reply message", REPLY_TO_CLIENT)
            return False, f"reply message properties[{REPLY_TO_CLIENT}] is null"
        channel = ctx.producers.find_channel(sender)
        if channel is None or ctx.ask_client is None:
            remark = f"push reply message fail, channel of <{sender}> not found."
            log.warning(remark)
            return False, remark
        props = JavaHashMap(decode_properties(req.properties_text))
        props[PUSH_REPLY_TIME] = str(ctx.now_ms)
        header = ReplyMessageRequestHeader(
            producer_group=h.producer_group, topic=h.topic, default_topic=h.default_topic,
            default_topic_queue_nums=h.default_topic_queue_nums, queue_id=h.queue_id, sys_flag=h.sys_flag,
            born_timestamp=h.born_timestamp, flag=h.flag, properties=encode_properties(dict(props.items())),
            reconsume_times=h.reconsume_times, unit_mode=bool(h.unit_mode), born_host=str(channel_host(responder)),
            store_host=str(c.store_host), store_timestamp=ctx.now_ms)
        try:
            answer = await ctx.ask_client(channel, RemotingCommand.request(
                RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT, header, req.body), PUSH_TIMEOUT_S)
        except Exception as e:
            log.warning("push reply message to <%s> fail. %s", sender, e)
            return False, f"push reply message to {sender}fail."
        if answer.code != ResponseCode.SUCCESS:
            log.warning("push reply message to <%s> return fail, response remark: %s", sender, answer.remark)
            return False, f"push reply message to {sender}fail."
        return True, None

    async def send_reply(request, channel):
        h = read_send_header(request)
        req = to_send_request(h, request.body, channel, batch=False)
        try:
            reply = ctx.broker.build_reply_message(req)
        except BrokerError as e:
            return refused(e, SendMessageResponseHeader(), ext_fields=region_ext())
        pushed, remark = await push(h, req, reply, channel)
        if pushed:
            code, header = ResponseCode.SUCCESS, SendMessageResponseHeader(msg_id="0", queue_id=reply.queue_id,
                                                                           queue_offset=0)
        else:
            code, header = ResponseCode.SYSTEM_ERROR, SendMessageResponseHeader()
        if ctx.settings.get("storeReplyMessageEnable", "true").lower() == "true":
            put = ctx.broker.store_reply_message(reply)
            if put.status in _STORED:
                ar = put.append_result
                header = SendMessageResponseHeader(msg_id=ar.msg_id, queue_id=reply.queue_id,
                                                   queue_offset=ar.logics_offset)
            else:
                log.warning("storing the reply failed: %s", put.status.name)
        return RemotingCommand.response(int(code), remark, header, ext_fields=region_ext())

    return {RequestCode.SEND_REPLY_MESSAGE: send_reply, RequestCode.SEND_REPLY_MESSAGE_V2: send_reply}
