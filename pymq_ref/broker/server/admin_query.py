"""Looking messages up on the wire: QUERY_MESSAGE (12, by key or unique key, through the store's
index) and VIEW_MESSAGE_BY_ID (33, by CommitLog offset) — what ``mqadmin queryMsgByKey``,
``queryMsgByUniqueKey`` and ``queryMsgById`` send
(``broker/src/main/java/org/apache/rocketmq/broker/processor/QueryMessageProcessor.java``).

The body of a found answer is the stored records themselves, back to back, byte for byte as they
are in the CommitLog (4.9.4 sends them straight from the page cache). The lookup is the store's
own (``MessageStore.query_message``), which — unlike 4.9.4 — drops index hash collisions (records
whose topic or key does not match), so a client never sees a message it did not ask for.
"""

from __future__ import annotations

from pymq_ref.remoting.codes import RequestCode, ResponseCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.headers import QueryMessageRequestHeader, QueryMessageResponseHeader, ViewMessageRequestHeader

from .admin_checks import unboxed
from .context import BrokerContext

UNIQUE_MSG_QUERY_FLAG = "_UNIQUE_KEY_QUERY"
DEFAULT_QUERY_MAX_NUM = 32  # MessageStoreConfig.defaultQueryMaxNum


def record_bytes(store, phy_offset: int, size: int) -> bytes | None:
    """The stored bytes of one record (None when the offset holds none)."""
    data = store.commit_log.queue.read(phy_offset, size)
    return bytes(data) if data is not None and len(data) == size else None


def handlers(ctx: BrokerContext) -> dict:
    broker = ctx.broker

    def query_message(request, channel):
        h = request.header(QueryMessageRequestHeader)
        max_num = unboxed(h, "max_num", "pymq_ref.broker.server.admin_query.query_message")
        if (request.ext_fields or {}).get(UNIQUE_MSG_QUERY_FLAG) == "true":
            max_num = DEFAULT_QUERY_MAX_NUM
        begin = unboxed(h, "begin_timestamp", "pymq_ref.broker.server.admin_query.query_message", "Long")
        end = unboxed(h, "end_timestamp", "pymq_ref.broker.server.admin_query.query_message", "Long")
        result = broker.store.query_message(h.topic or "", h.key or "", max_num, begin, end)
        header = QueryMessageResponseHeader(index_last_update_timestamp=result.index_last_update_timestamp,
                                            index_last_update_phyoffset=result.index_last_update_phyoffset)
        chunks = [record_bytes(broker.store, rec.phy_offset, rec.total_size) for rec in result.messages]
        body = b"".join(c for c in chunks if c is not None)
        if body:
            return RemotingCommand.response(ResponseCode.SUCCESS, None, header, body)
        return RemotingCommand.response(ResponseCode.QUERY_NOT_FOUND,
                                        "can not find message, maybe time range not correct", header)

    def view_message_by_id(request, channel):
        h = request.header(ViewMessageRequestHeader)
        offset = unboxed(h, "offset", "pymq_ref.broker.server.admin_query.view_message_by_id", "Long")
        rec = broker.store.look_message_by_offset(offset) if offset >= 0 else None
        data = record_bytes(broker.store, offset, rec.total_size) if rec is not None else None
        if data is None:
            return RemotingCommand.response(ResponseCode.SYSTEM_ERROR, f"can not find message by the offset, {offset}")
        return RemotingCommand.response(ResponseCode.SUCCESS, body=data)

    return {RequestCode.QUERY_MESSAGE: query_message, RequestCode.VIEW_MESSAGE_BY_ID: view_message_by_id}
