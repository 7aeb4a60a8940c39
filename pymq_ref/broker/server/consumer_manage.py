"""Offsets on the wire: QUERY_CONSUMER_OFFSET (14), UPDATE_CONSUMER_OFFSET (15), GET_MAX_OFFSET (30),
GET_MIN_OFFSET (31), GET_EARLIEST_MSG_STORETIME (32), SEARCH_OFFSET_BY_TIMESTAMP (29)
(``broker/src/main/java/org/apache/rocketmq/broker/processor/ConsumerManageProcessor.java`` and the
queue-offset requests of ``AdminBrokerProcessor.java``). Each is one facade call.
"""

from __future__ import annotations

from pymq_ref.broker.response import BrokerError
from pymq_ref.remoting.codes import RequestCode, ResponseCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.headers import (GetEarliestMsgStoretimeRequestHeader, GetEarliestMsgStoretimeResponseHeader,
                                       GetMaxOffsetRequestHeader, GetMaxOffsetResponseHeader,
                                       GetMinOffsetRequestHeader, GetMinOffsetResponseHeader,
                                       QueryConsumerOffsetRequestHeader, QueryConsumerOffsetResponseHeader,
                                       SearchOffsetRequestHeader, SearchOffsetResponseHeader,
                                       UpdateConsumerOffsetRequestHeader, UpdateConsumerOffsetResponseHeader)

from .context import BrokerContext, channel_addr
from .replies import refused


def _qid(value) -> int:
    return value if value is not None else 0


def handlers(ctx: BrokerContext) -> dict:
    broker = ctx.broker

    def query_consumer_offset(request, channel):
        h = request.header(QueryConsumerOffsetRequestHeader)
        try:
            offset = broker.query_consumer_offset(h.consumer_group, h.topic, _qid(h.queue_id))
        except BrokerError as e:
            return refused(e, QueryConsumerOffsetResponseHeader())
        return RemotingCommand.response(ResponseCode.SUCCESS, None, QueryConsumerOffsetResponseHeader(offset=offset))

    def update_consumer_offset(request, channel):
        h = request.header(UpdateConsumerOffsetRequestHeader)
        broker.update_consumer_offset(h.consumer_group, h.topic, _qid(h.queue_id), h.commit_offset or 0,
                                      channel_addr(channel))
        return RemotingCommand.response(ResponseCode.SUCCESS, None, UpdateConsumerOffsetResponseHeader())

    def get_max_offset(request, channel):
        h = request.header(GetMaxOffsetRequestHeader)
        return RemotingCommand.response(ResponseCode.SUCCESS, None,
                                        GetMaxOffsetResponseHeader(offset=broker.get_max_offset(h.topic, _qid(h.queue_id))))

    def get_min_offset(request, channel):
        h = request.header(GetMinOffsetRequestHeader)
        return RemotingCommand.response(ResponseCode.SUCCESS, None,
                                        GetMinOffsetResponseHeader(offset=broker.get_min_offset(h.topic, _qid(h.queue_id))))

    def get_earliest_msg_store_time(request, channel):
        h = request.header(GetEarliestMsgStoretimeRequestHeader)
        ts = broker.get_earliest_msg_store_time(h.topic, _qid(h.queue_id))
        return RemotingCommand.response(ResponseCode.SUCCESS, None, GetEarliestMsgStoretimeResponseHeader(timestamp=ts))

    def search_offset_by_timestamp(request, channel):
        h = request.header(SearchOffsetRequestHeader)
        offset = broker.search_offset_by_timestamp(h.topic, _qid(h.queue_id), h.timestamp or 0)
        return RemotingCommand.response(ResponseCode.SUCCESS, None, SearchOffsetResponseHeader(offset=offset))

    return {RequestCode.QUERY_CONSUMER_OFFSET: query_consumer_offset,
            RequestCode.UPDATE_CONSUMER_OFFSET: update_consumer_offset,
            RequestCode.GET_MAX_OFFSET: get_max_offset, RequestCode.GET_MIN_OFFSET: get_min_offset,
            RequestCode.GET_EARLIEST_MSG_STORETIME: get_earliest_msg_store_time,
            RequestCode.SEARCH_OFFSET_BY_TIMESTAMP: search_offset_by_timestamp}
