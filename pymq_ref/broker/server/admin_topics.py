"""Topic administration on the wire: UPDATE_AND_CREATE_TOPIC (17), DELETE_TOPIC_IN_BROKER (215),
GET_ALL_TOPIC_CONFIG (21), GET_TOPIC_STATS_INFO (202) — what ``mqadmin updateTopic``,
``deleteTopic`` and ``topicStatus`` send (``broker/src/main/java/org/apache/rocketmq/broker/processor/AdminBrokerProcessor.java``).

Each handler is one call on the facade's topic table or store; it must not keep a topic table of
its own. Refusals carry 4.9.4's codes and remarks word for word (checked against recorded answers
of the real broker). Note what 4.9.4 leaves in a successful UPDATE_AND_CREATE_TOPIC answer: the
remark ``"not set any response code"`` (the response is created with it and only its code is set).
"""

from __future__ import annotations

from pymq_ref.formats.beans import TopicConfig
from pymq_ref.formats.message_queue import MessageQueue
from pymq_ref.remoting.bodies import TopicConfigSerializeWrapper, TopicOffset, TopicStatsTable, encode_body
from pymq_ref.remoting.codes import RequestCode, ResponseCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.headers import (CreateTopicRequestHeader, DeleteTopicRequestHeader,
                                       GetAllTopicConfigResponseHeader, GetTopicStatsInfoRequestHeader)

from .admin_checks import NOT_SET, is_slave, slave_refusal, topic_refusal, unboxed
from .context import BrokerContext


def handlers(ctx: BrokerContext) -> dict:
    broker = ctx.broker

    def update_and_create_topic(request, channel):
        if is_slave(ctx):
            return slave_refusal()
        h = request.header(CreateTopicRequestHeader)
        refusal = topic_refusal(h.topic, ctx)
        if refusal is not None:
            return refusal
        where = "pymq_ref.broker.server.admin_topics.update_and_create_topic"
        tc = TopicConfig(h.topic, read_queue_nums=unboxed(h, "read_queue_nums", where),
                         write_queue_nums=unboxed(h, "write_queue_nums", where), perm=unboxed(h, "perm", where),
                         topic_filter_type=h.topic_filter_type or "SINGLE_TAG", topic_sys_flag=h.topic_sys_flag or 0)
        broker.topics.update_topic_config(tc)
        ctx.register_broker_all()
        return RemotingCommand.response(ResponseCode.SUCCESS, NOT_SET)

    def delete_topic(request, channel):
        if is_slave(ctx):
            return slave_refusal()
        h = request.header(DeleteTopicRequestHeader)
        refusal = topic_refusal(h.topic, ctx)
        if refusal is not None:
            return refusal
        if h.topic.startswith("%LMQ%"):
            broker.store.clean_unused_topic(set(broker.topics.topic_config_table) | {h.topic})
            return RemotingCommand.response(ResponseCode.SUCCESS)
        broker.topics.delete_topic_config(h.topic)
        broker.store.clean_unused_topic(set(broker.topics.topic_config_table))
        return RemotingCommand.response(ResponseCode.SUCCESS)

    def get_all_topic_config(request, channel):
        t = broker.topics
        wrapper = TopicConfigSerializeWrapper(dict(t.topic_config_table), t.data_version)
        return RemotingCommand.response(ResponseCode.SUCCESS, None, GetAllTopicConfigResponseHeader(),
                                        encode_body(wrapper))

    def get_topic_stats_info(request, channel):
        h = request.header(GetTopicStatsInfoRequestHeader)
        tc = broker.topics.select_topic_config(h.topic)
        if tc is None:
            return RemotingCommand.response(ResponseCode.TOPIC_NOT_EXIST, f"topic[{h.topic}] not exist")
        store = broker.store
        table = {}
        for q in range(tc.write_queue_nums):
            lo = max(0, store.get_min_offset_in_queue(h.topic, q))
            hi = max(0, store.get_max_offset_in_queue(h.topic, q))
            ts = store.get_message_store_timestamp(h.topic, q, hi - 1) if hi > 0 else 0
            table[MessageQueue(h.topic, ctx.config.broker_name, q)] = TopicOffset(lo, hi, ts)
        return RemotingCommand.response(ResponseCode.SUCCESS, body=encode_body(TopicStatsTable(table)))

    return {RequestCode.UPDATE_AND_CREATE_TOPIC: update_and_create_topic,
            RequestCode.DELETE_TOPIC_IN_BROKER: delete_topic,
            RequestCode.GET_ALL_TOPIC_CONFIG: get_all_topic_config,
            RequestCode.GET_TOPIC_STATS_INFO: get_topic_stats_info}
