"""``ReplyMessageProcessor`` (4.9.4) minus the network: SEND_REPLY_MESSAGE(_V2) of request-reply.

A responder sends the reply to ``<cluster>_REPLY_TOPIC``; the broker checks it like a send
(``msgCheck``: topic, auto-creation, queue id), builds the record — the request's properties
string stored as it came (no ``CLUSTER`` added, no retry/DLQ or transaction handling) — pushes it
to the requesting client (the network layer's job: PUSH_REPLY_MESSAGE_TO_CLIENT to the channel of
``REPLY_TO_CLIENT``) and, with ``storeReplyMessageEnable`` (default true), stores it.
Must not open sockets.
"""

from __future__ import annotations

from dataclasses import dataclass

from pymq_ref.formats.message import MessageRecord
from pymq_ref.formats.properties import decode_properties

from .send import SendMessageProcessor, SendMessageRequest, raise_for_put
from .store_put import Put, StorePutter

REPLY_TO_CLIENT = "REPLY_TO_CLIENT"
PUSH_REPLY_TIME = "PUSH_REPLY_TIME"


@dataclass
class ReplyMessage:
    record: MessageRecord  # what is stored (and pushed)
    queue_id: int
    reply_to_client: str | None


class ReplyMessageProcessor:
    def __init__(self, sender: SendMessageProcessor, putter: StorePutter):
        self.sender = sender
        self.putter = putter

    def build_reply(self, req: SendMessageRequest) -> ReplyMessage:
        """``msgCheck`` + the record; raises the send path's :class:`~pymq_ref.broker.response.BrokerError`s."""
        tc = self.sender.msg_check(req)
        queue_id = req.queue_id if req.queue_id >= 0 else self.sender.random_queue_id(tc.write_queue_nums)
        text = req.properties_text
        props = decode_properties(text) if text else {}
        c = self.sender.config
        record = MessageRecord(topic=req.topic, queue_id=queue_id, body=req.body, flag=req.flag, properties=props,
                               properties_string=text, sys_flag=req.sys_flag, born_timestamp=req.born_timestamp,
                               born_host=req.born_host, store_host=c.store_host,
                               reconsume_times=req.reconsume_times or 0)
        return ReplyMessage(record, queue_id, props.get(REPLY_TO_CLIENT))

    def store_reply(self, reply: ReplyMessage) -> Put:
        """The put (``storeReplyMessageEnable``); a failed put is reported, not raised (4.9.4 only logs it)."""
        return self.putter.put(reply.record)


__all__ = ["ReplyMessage", "ReplyMessageProcessor", "REPLY_TO_CLIENT", "PUSH_REPLY_TIME", "raise_for_put"]
