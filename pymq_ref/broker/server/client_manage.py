"""HEART_BEAT (34), UNREGISTER_CLIENT (35), GET_CONSUMER_LIST_BY_GROUP (38), CHECK_CLIENT_CONFIG (46)
(``broker/src/main/java/org/apache/rocketmq/broker/processor/ClientManageProcessor.java`` and
``ConsumerManageProcessor.getConsumerListByGroup``).

A heartbeat registers the client's channel in each of its producer and consumer groups; for a
consumer group it first finds (or auto-creates) the subscription group and creates the group's
``%RETRY%`` topic. When a group's members or topics change, every member is told
NOTIFY_CONSUMER_IDS_CHANGED (oneway) so that it rebalances at once, unless the group turned
``notifyConsumerIdsChangedEnable`` off. The subscriptions go to the facade's subscription table,
which pulls without FLAG_SUBSCRIPTION (the push consumer's) filter with. A closed connection
leaves every group (:func:`channel_closed`, called by the controller).
"""

from __future__ import annotations

import logging

from pymq_ref.broker.constants import PERM_READ, PERM_WRITE, retry_topic
from pymq_ref.broker.pull import SubscriptionData as FacadeSubscription
from pymq_ref.remoting.bodies import (BodyError, CheckClientRequestBody, GetConsumerListByGroupResponseBody,
                                      HeartbeatData, decode_json, encode_body)
from pymq_ref.remoting.codes import RequestCode, ResponseCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.dispatch import ProcessorError
from pymq_ref.remoting.headers import (GetConsumerListByGroupResponseHeader, NotifyConsumerIdsChangedRequestHeader,
                                       UnregisterClientRequestHeader, UnregisterClientResponseHeader)

from .client_tables import ClientChannelInfo
from .context import BrokerContext, channel_addr

log = logging.getLogger("pymq_ref.broker.server")

TOPIC_SYS_FLAG_UNIT_SUB = 0x2


def _value(enum_or_str):
    return getattr(enum_or_str, "value", enum_or_str)


def sync_subscriptions(ctx: BrokerContext, group: str) -> None:
    """``ConsumerFilterManager.register`` / the consumer table, as the facade's pulls read it."""
    g = ctx.consumers.get(group)
    subs = [] if g is None else [
        FacadeSubscription(s.topic, s.sub_string if s.sub_string is not None else "*",
                           s.expression_type or "TAG", s.sub_version or 0)
        for s in g.subscriptions.values() if s.topic is not None]
    ctx.broker.subscription_table.replace_group(group, subs)


def notify_consumer_ids_changed(ctx: BrokerContext, group: str) -> None:
    """``Broker2Client.notifyConsumerIdsChanged`` to every member of the group (oneway)."""
    g = ctx.consumers.get(group)
    if g is None or ctx.tell_client is None or not ctx.settings.get("notifyConsumerIdsChangedEnable", "true").strip().lower() == "true":
        return
    for channel in g.all_channels():
        ctx.tell_client(channel, RemotingCommand.request(
            RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, NotifyConsumerIdsChangedRequestHeader(consumer_group=group)))


def _notify_enabled(ctx: BrokerContext, group: str) -> bool:
    sgc = ctx.broker.subscriptions.find_subscription_group_config(group)
    return True if sgc is None else sgc.notify_consumer_ids_changed_enable


def channel_closed(ctx: BrokerContext, channel) -> None:
    """``ClientHousekeepingService``: the channel leaves every producer and consumer group."""
    ctx.producers.channel_closed(channel)
    for group in ctx.consumers.channel_closed(channel):
        sync_subscriptions(ctx, group)
        if _notify_enabled(ctx, group):
            notify_consumer_ids_changed(ctx, group)


def handlers(ctx: BrokerContext) -> dict:
    broker = ctx.broker

    def heart_beat(request, channel):
        try:
            data = decode_json(HeartbeatData, request.body or b"{}")
        except BodyError as e:
            raise ProcessorError(ResponseCode.SYSTEM_ERROR, f"the heartbeat body is not a HeartbeatData: {e}") from None
        language = request.language.name if request.language is not None else "OTHER"
        now = ctx.now_ms
        for cd in data.consumer_data_set:
            group = cd.group_name or ""
            info = ClientChannelInfo(channel, data.client_id or "", language, request.version, now)
            sgc = broker.subscriptions.find_subscription_group_config(group)
            notify = True
            if sgc is not None:
                notify = sgc.notify_consumer_ids_changed_enable
                broker.topics.create_topic_in_send_message_back_method(
                    retry_topic(group), sgc.retry_queue_nums, PERM_WRITE | PERM_READ,
                    TOPIC_SYS_FLAG_UNIT_SUB if cd.unit_mode else 0)
            changed = ctx.consumers.register_consumer(
                group, info, _value(cd.consume_type), _value(cd.message_model), _value(cd.consume_from_where),
                list(cd.subscription_data_set), now)
            sync_subscriptions(ctx, group)
            if changed:
                log.info("consumer group %s changed: %s", group, ctx.consumers.get(group).all_client_ids())
                if notify:
                    notify_consumer_ids_changed(ctx, group)
        for pd in data.producer_data_set:
            ctx.producers.register_producer(pd.group_name or "", ClientChannelInfo(
                channel, data.client_id or "", language, request.version, now), now)
        return RemotingCommand.response(ResponseCode.SUCCESS)

    def unregister_client(request, channel):
        h = request.header(UnregisterClientRequestHeader)
        if h.producer_group is not None:
            ctx.producers.unregister_producer(h.producer_group, channel)
        if h.consumer_group is not None:
            notify = _notify_enabled(ctx, h.consumer_group)
            if ctx.consumers.unregister_consumer(h.consumer_group, channel):
                sync_subscriptions(ctx, h.consumer_group)
                if notify:
                    notify_consumer_ids_changed(ctx, h.consumer_group)
        return RemotingCommand.response(ResponseCode.SUCCESS, None, UnregisterClientResponseHeader())

    def get_consumer_list_by_group(request, channel):
        from pymq_ref.remoting.headers import GetConsumerListByGroupRequestHeader
        h = request.header(GetConsumerListByGroupRequestHeader)
        g = ctx.consumers.get(h.consumer_group)
        ids = g.all_client_ids() if g is not None else []
        if ids:
            return RemotingCommand.response(ResponseCode.SUCCESS, None, GetConsumerListByGroupResponseHeader(),
                                            encode_body(GetConsumerListByGroupResponseBody(ids)))
        log.warning("getConsumerGroupInfo failed, %s %s", h.consumer_group, channel_addr(channel))
        return RemotingCommand.response(ResponseCode.SYSTEM_ERROR, f"no consumer for this group, {h.consumer_group}",
                                        GetConsumerListByGroupResponseHeader())

    def check_client_config(request, channel):
        try:
            body = decode_json(CheckClientRequestBody, request.body) if request.body else None
        except BodyError as e:
            raise ProcessorError(ResponseCode.SYSTEM_ERROR, f"the body is not a CheckClientRequestBody: {e}") from None
        sd = body.subscription_data if body is not None else None
        if sd is not None:
            expression_type = sd.expression_type
            if expression_type is None or expression_type == "TAG":
                return RemotingCommand.response(ResponseCode.SUCCESS)
            if not ctx.config.enable_property_filter:
                return RemotingCommand.response(
                    ResponseCode.SYSTEM_ERROR, f"The broker does not support consumer to filter message by {expression_type}")
            from pymq_ref.broker.filter import FilterError, build_filter
            try:
                build_filter(expression_type, sd.sub_string, topic=sd.topic or "")
            except (FilterError, ValueError) as e:
                return RemotingCommand.response(ResponseCode.SUBSCRIPTION_PARSE_FAILED, str(e))
        return RemotingCommand.response(ResponseCode.SUCCESS)

    return {RequestCode.HEART_BEAT: heart_beat, RequestCode.UNREGISTER_CLIENT: unregister_client,
            RequestCode.GET_CONSUMER_LIST_BY_GROUP: get_consumer_list_by_group,
            RequestCode.CHECK_CLIENT_CONFIG: check_client_config}
