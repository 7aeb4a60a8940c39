"""Consumer-group administration on the wire: UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200),
GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201), DELETE_SUBSCRIPTIONGROUP (207), GET_CONSUME_STATS (208),
GET_CONSUMER_CONNECTION_LIST (203), GET_PRODUCER_CONNECTION_LIST (204), QUERY_TOPIC_CONSUME_BY_WHO
(300), INVOKE_BROKER_TO_RESET_OFFSET (222) — what ``mqadmin updateSubGroup``, ``consumerProgress``,
``consumerConnection`` and ``resetOffsetByTime`` send
(``broker/src/main/java/org/apache/rocketmq/broker/processor/AdminBrokerProcessor.java``,
``broker/src/main/java/org/apache/rocketmq/broker/client/net/Broker2Client.java``).

Every answer is read from the facade's subscription-group and offset managers, the store, and
the context's client tables. Resetting offsets computes the new offsets and tells every online
client of the group (RESET_CONSUMER_CLIENT_OFFSET, oneway); as in 4.9.4 the broker commits
nothing itself — the clients do.
"""

from __future__ import annotations

from pymq_ref.formats.beans import SubscriptionGroupConfig
from pymq_ref.formats.message_queue import MessageQueue
from pymq_ref.remoting.bodies import (ConsumeStats, Connection, ConsumerConnection, GroupList,
                                      MessageQueueForC, OffsetWrapper, ProducerConnection, ResetOffsetBody,
                                      ResetOffsetBodyForC, SubscriptionGroupWrapper, decode_json, encode_body)
from pymq_ref.remoting.codes import LanguageCode, RequestCode, ResponseCode, version_name
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.headers import (DeleteSubscriptionGroupRequestHeader, GetConsumeStatsRequestHeader,
                                       GetConsumerConnectionListRequestHeader, GetProducerConnectionListRequestHeader,
                                       QueryTopicConsumeByWhoRequestHeader, ResetOffsetRequestHeader)

from .admin_checks import NOT_SET, is_slave, slave_refusal
from .context import BrokerContext, channel_addr

V3_0_7_SNAPSHOT = 27  # MQVersion.Version ordinal: clients older than this cannot reset offsets


def handlers(ctx: BrokerContext) -> dict:
    broker = ctx.broker

    def update_and_create_subscription_group(request, channel):
        if is_slave(ctx):
            return slave_refusal()
        config = decode_json(SubscriptionGroupConfig, request.body) if request.body is not None else None
        if config is not None:
            broker.subscriptions.update_subscription_group_config(config)
        return RemotingCommand.response(ResponseCode.SUCCESS)

    def get_all_subscription_group(request, channel):
        s = broker.subscriptions
        wrapper = SubscriptionGroupWrapper(dict(s.subscription_group_table), s.data_version)
        return RemotingCommand.response(ResponseCode.SUCCESS, body=encode_body(wrapper))

    def delete_subscription_group(request, channel):
        if is_slave(ctx):
            return slave_refusal()
        h = request.header(DeleteSubscriptionGroupRequestHeader)
        broker.subscriptions.delete_subscription_group_config(h.group_name)
        if h.remove_offset:
            broker.offsets.remove_offset(h.group_name)
        return RemotingCommand.response(ResponseCode.SUCCESS)

    def get_consume_stats(request, channel):
        h = request.header(GetConsumeStatsRequestHeader)
        group = h.consumer_group
        topics = ([h.topic] if h.topic and h.topic.strip() else sorted(broker.offsets.which_topic_by_consumer(group)))
        info = ctx.consumers.get(group)
        table = {}
        for topic in topics:
            tc = broker.topics.select_topic_config(topic)
            if tc is None:
                continue
            if info is not None and info.subscriptions and topic not in info.subscriptions:
                continue  # the group is online and does not subscribe to it
            for q in range(tc.read_queue_nums):
                broker_offset = max(0, broker.store.get_max_offset_in_queue(topic, q))
                consumer_offset = max(0, broker.offsets.query_offset(group, topic, q))
                last = 0
                if consumer_offset - 1 >= 0:
                    ts = broker.store.get_message_store_timestamp(topic, q, consumer_offset - 1)
                    last = ts if ts > 0 else 0
                table[MessageQueue(topic, ctx.config.broker_name, q)] = OffsetWrapper(broker_offset, consumer_offset,
                                                                                     last)
        return RemotingCommand.response(ResponseCode.SUCCESS, body=encode_body(ConsumeStats(table, 0.0)))

    def get_consumer_connection_list(request, channel):
        h = request.header(GetConsumerConnectionListRequestHeader)
        info = ctx.consumers.get(h.consumer_group)
        if info is None:
            return RemotingCommand.response(ResponseCode.CONSUMER_NOT_ONLINE,
                                            f"the consumer group[{h.consumer_group}] not online")
        body = ConsumerConnection(
            [Connection(c.client_id, channel_addr(c.channel), c.language, c.version) for c in info.channels.values()],
            dict(info.subscriptions), info.consume_type, info.message_model, info.consume_from_where)
        return RemotingCommand.response(ResponseCode.SUCCESS, body=encode_body(body))

    def get_producer_connection_list(request, channel):
        h = request.header(GetProducerConnectionListRequestHeader)
        members = ctx.producers.groups.get(h.producer_group)
        if not members:
            return RemotingCommand.response(ResponseCode.SYSTEM_ERROR,
                                            f"the producer group[{h.producer_group}] not exist")
        body = ProducerConnection([Connection(c.client_id, channel_addr(c.channel), c.language, c.version)
                                   for c in members.values()])
        return RemotingCommand.response(ResponseCode.SUCCESS, body=encode_body(body))

    def query_topic_consume_by_who(request, channel):
        h = request.header(QueryTopicConsumeByWhoRequestHeader)
        groups = [name for name, g in ctx.consumers.groups.items() if h.topic in g.subscriptions]
        for g in broker.offsets.which_group_by_topic(h.topic):
            if g not in groups:
                groups.append(g)
        return RemotingCommand.response(ResponseCode.SUCCESS, body=encode_body(GroupList(groups)))

    def invoke_broker_to_reset_offset(request, channel):
        h = request.header(ResetOffsetRequestHeader)
        is_c = request.language is LanguageCode.CPP
        return reset_offset(ctx, h.topic, h.group, h.timestamp or 0, bool(h.is_force), is_c)

    return {RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: update_and_create_subscription_group,
            RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG: get_all_subscription_group,
            RequestCode.DELETE_SUBSCRIPTIONGROUP: delete_subscription_group,
            RequestCode.GET_CONSUME_STATS: get_consume_stats,
            RequestCode.GET_CONSUMER_CONNECTION_LIST: get_consumer_connection_list,
            RequestCode.GET_PRODUCER_CONNECTION_LIST: get_producer_connection_list,
            RequestCode.QUERY_TOPIC_CONSUME_BY_WHO: query_topic_consume_by_who,
            RequestCode.INVOKE_BROKER_TO_RESET_OFFSET: invoke_broker_to_reset_offset}


def reset_offset(ctx: BrokerContext, topic: str, group: str, timestamp: int, force: bool,
                 is_c: bool = False) -> RemotingCommand:
    """``Broker2Client.resetOffset``: the new offset of every write queue (the first at or after
    ``timestamp``, -1 = the max offset; kept when later than the committed one unless ``force``),
    sent to every online client of the group; 4.9.4's refusals word for word."""
    broker = ctx.broker
    tc = broker.topics.select_topic_config(topic)
    if tc is None:
        return RemotingCommand.response(ResponseCode.SYSTEM_ERROR,
                                        f"[reset-offset] reset offset failed, no topic in this broker. topic={topic}")
    table: dict[MessageQueue, int] = {}
    for q in range(tc.write_queue_nums):
        committed = broker.offsets.query_offset(group, topic, q)
        if committed == -1:
            return RemotingCommand.response(ResponseCode.SYSTEM_ERROR, f"THe consumer group <{group}> not exist")
        target = (broker.store.get_max_offset_in_queue(topic, q) if timestamp == -1
                  else broker.search_offset_by_timestamp(topic, q, timestamp))
        target = max(0, target)
        table[MessageQueue(topic, ctx.config.broker_name, q)] = target if force or target < committed else committed
    header = ResetOffsetRequestHeader(topic=topic, group=group, timestamp=timestamp, is_force=False)
    if is_c:
        body = encode_body(ResetOffsetBodyForC([MessageQueueForC(mq.topic, mq.broker_name, mq.queue_id, off)
                                                for mq, off in table.items()]))
    else:
        body = encode_body(ResetOffsetBody(table))
    info = ctx.consumers.get(group)
    if info is None or not info.channels:
        return RemotingCommand.response(
            ResponseCode.CONSUMER_NOT_ONLINE,
            f"Consumer not online, so can not reset offset, Group: {group} Topic: {topic} Timestamp: {timestamp}")
    for client in list(info.channels.values()):
        if client.version < V3_0_7_SNAPSHOT:
            return RemotingCommand.response(ResponseCode.SYSTEM_ERROR,
                                            f"the client does not support this feature. version={version_name(client.version)}")
        if ctx.tell_client is not None:
            ctx.tell_client(client.channel, RemotingCommand(RequestCode.RESET_CONSUMER_CLIENT_OFFSET,
                                                            ext_fields=header.to_ext(), body=body))
    return RemotingCommand.response(ResponseCode.SUCCESS, NOT_SET, body=encode_body(ResetOffsetBody(table)))
