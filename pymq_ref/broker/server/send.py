"""SEND_MESSAGE (10), SEND_MESSAGE_V2 (310), SEND_BATCH_MESSAGE (320) on the wire
(``broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java``).

The request header (V2's one-letter keys are read as V1) and the body become a
:class:`~pymq_ref.broker.send.SendMessageRequest` for the facade, with the connection's peer as
born host; the facade's :class:`~pymq_ref.broker.send.SendResult` becomes a
``SendMessageResponseHeader``. Every send response carries the ``MSG_REGION`` and ``TRACE_ON``
ext fields, refusals included (4.9.4 adds them before it checks anything). Compressed bodies are
stored as they come (the client sets the compressed bit of ``sysFlag``).

SYNC_FLUSH: each send is a task awaiting the facade's asynchronous put, which waits for the group
commit without blocking the loop — concurrent sends (from many producer threads or connections)
share one flush, as 4.9.4's GroupCommitService makes them.
Must not decide anything the facade decides.
"""

from __future__ import annotations

from pymq_ref.broker.response import BrokerError
from pymq_ref.broker.send import SendMessageRequest
from pymq_ref.remoting.codes import RequestCode, ResponseCode
from pymq_ref.remoting.dispatch import ProcessorError, java_remark, npe_unboxing
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.store.store_config import FlushDiskType
from pymq_ref.remoting.headers import SendMessageRequestHeader, SendMessageRequestHeaderV2, SendMessageResponseHeader

from .context import BrokerContext, channel_host
from .replies import refused


def read_send_header(request) -> SendMessageRequestHeader | SendMessageRequestHeaderV2:
    """``parseRequestHeader``: V2, batch and V2 reply requests carry the short keys. Both classes
    have the same attributes (``producer_group``, ``topic`` …), so the V2 one is used as it is."""
    if request.code in (RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE, RequestCode.SEND_REPLY_MESSAGE_V2):
        return request.header(SendMessageRequestHeaderV2)
    return request.header(SendMessageRequestHeader)


def to_send_request(h: SendMessageRequestHeader | SendMessageRequestHeaderV2, body: bytes | None, channel, batch: bool) -> SendMessageRequest:
    return SendMessageRequest(
        topic=h.topic if h.topic is not None else "", body=body or b"", properties=h.properties or "",
        producer_group=h.producer_group or "", queue_id=h.queue_id if h.queue_id is not None else -1,
        sys_flag=h.sys_flag or 0, born_timestamp=h.born_timestamp or 0, flag=h.flag or 0,
        born_host=channel_host(channel), default_topic=h.default_topic or "TBW102",
        default_topic_queue_nums=h.default_topic_queue_nums if h.default_topic_queue_nums is not None else 4,
        reconsume_times=h.reconsume_times, max_reconsume_times=h.max_reconsume_times,
        unit_mode=bool(h.unit_mode), batch=batch)


def handlers(ctx: BrokerContext) -> dict:
    c = ctx.config

    def region_ext() -> dict[str, str]:
        return {"MSG_REGION": c.region_id, "TRACE_ON": "true" if c.trace_on else "false"}

    def request_of(request, channel) -> SendMessageRequest:
        h = read_send_header(request)
        if h.queue_id is None and h.topic:  # 4.9.4's msgCheck unboxes it (recorded answer, broker-diff)
            raise ProcessorError(ResponseCode.SYSTEM_ERROR, java_remark(
                npe_unboxing(SendMessageRequestHeader, "queueId", "Integer"), "pymq_ref.broker.server.send.request_of"))
        return to_send_request(h, request.body, channel, bool(h.batch))  # 4.9.4 reads the flag, not the code

    def answer(result) -> RemotingCommand:
        return RemotingCommand.response(int(result.code), None, SendMessageResponseHeader(
            msg_id=result.offset_msg_id, queue_id=result.queue_id, queue_offset=result.queue_offset),
            ext_fields=region_ext())

    def send(request, channel):
        req = request_of(request, channel)
        try:
            result = ctx.broker.send_batch(req) if req.batch else ctx.broker.send_message(req)
        except BrokerError as e:
            return refused(e, SendMessageResponseHeader(), ext_fields=region_ext())
        return answer(result)

    async def send_sync_flush(request, channel):
        """SYNC_FLUSH: each send waits for its flush in its own task; concurrent sends share a group commit."""
        req = request_of(request, channel)
        try:
            result = await ctx.broker.send_message_async(req)
        except BrokerError as e:
            return refused(e, SendMessageResponseHeader(), ext_fields=region_ext())
        return answer(result)

    sync_flush = ctx.broker.store_config.flush_disk_type is FlushDiskType.SYNC_FLUSH
    processor = send_sync_flush if sync_flush else send
    return {RequestCode.SEND_MESSAGE: processor, RequestCode.SEND_MESSAGE_V2: processor,
            RequestCode.SEND_BATCH_MESSAGE: processor}
