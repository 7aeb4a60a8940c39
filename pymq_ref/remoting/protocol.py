"""The protocol table: for every request code, who serves it and which header and body classes its
request and its response carry — declared once, read by the codec's users, the proxy (to decode a
response it needs its request's code), the conformance kit and the book's reference appendix.

Sources (4.9.4): the processors under ``broker/src/main/java/org/apache/rocketmq/broker/processor/``,
``namesrv/src/main/java/org/apache/rocketmq/namesrv/processor/DefaultRequestProcessor.java`` and
``client/src/main/java/org/apache/rocketmq/client/impl/{MQClientAPIImpl,ClientRemotingProcessor}.java``.
Data only; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import bodies as B
from . import headers as H
from .codes import RequestCode as R
from .command import RemotingCommand
from .header import CommandHeader

NAMESRV, BROKER, CLIENT = "name server", "broker", "client"
#: Codes an admin tool sends to a broker, which forwards them to the client (same code, same bodies).
FORWARDED = "client (via the broker)"


@dataclass(frozen=True)
class Api:
    """One request code: who serves it, and its request/response header and body classes.
    ``body`` kinds that are not JSON beans are named by a string (``"message"``, ``"messages"``…)."""

    code: int
    served_by: str
    request_header: type[CommandHeader] | None = None
    response_header: type[CommandHeader] | None = None
    request_body: type | str | None = None
    response_body: type | str | None = None
    oneway: bool = False  # how clients normally send it

    @property
    def name(self) -> str:
        return R(self.code).name


#: A message body as the producer sent it (possibly zlib-compressed, see the sysFlag).
MESSAGE = "message"
#: SEND_BATCH_MESSAGE's body: encoded messages back to back (``MessageDecoder.encodeMessages``).
BATCH = "batch"
#: Stored CommitLog records back to back, as the broker returns them for pulls and queries.
RECORDS = "records"
#: REGISTER_BROKER's body: RegisterBrokerBody JSON, or its zlib form when ``compressed``.
REGISTRATION = "registration"
#: A broker's properties text (``key=value`` lines).
PROPERTIES_TEXT = "properties"

_APIS = [
    # -- producing ------------------------------------------------------------------------------
    Api(R.SEND_MESSAGE, BROKER, H.SendMessageRequestHeader, H.SendMessageResponseHeader, MESSAGE),
    Api(R.SEND_MESSAGE_V2, BROKER, H.SendMessageRequestHeaderV2, H.SendMessageResponseHeader, MESSAGE),
    Api(R.SEND_BATCH_MESSAGE, BROKER, H.SendMessageRequestHeaderV2, H.SendMessageResponseHeader, BATCH),
    Api(R.SEND_REPLY_MESSAGE, BROKER, H.SendMessageRequestHeader, H.SendMessageResponseHeader, MESSAGE),
    Api(R.SEND_REPLY_MESSAGE_V2, BROKER, H.SendMessageRequestHeaderV2, H.SendMessageResponseHeader, MESSAGE),
    Api(R.CONSUMER_SEND_MSG_BACK, BROKER, H.ConsumerSendMsgBackRequestHeader),
    Api(R.END_TRANSACTION, BROKER, H.EndTransactionRequestHeader, None, oneway=True),
    # -- reading --------------------------------------------------------------------------------
    Api(R.PULL_MESSAGE, BROKER, H.PullMessageRequestHeader, H.PullMessageResponseHeader, None, RECORDS),
    Api(R.QUERY_MESSAGE, BROKER, H.QueryMessageRequestHeader, H.QueryMessageResponseHeader, None, RECORDS),
    Api(R.VIEW_MESSAGE_BY_ID, BROKER, H.ViewMessageRequestHeader, None, None, RECORDS),
    Api(R.QUERY_CONSUME_QUEUE, BROKER, H.QueryConsumeQueueRequestHeader),
    # -- offsets --------------------------------------------------------------------------------
    Api(R.QUERY_CONSUMER_OFFSET, BROKER, H.QueryConsumerOffsetRequestHeader, H.QueryConsumerOffsetResponseHeader),
    Api(R.UPDATE_CONSUMER_OFFSET, BROKER, H.UpdateConsumerOffsetRequestHeader, H.UpdateConsumerOffsetResponseHeader),
    Api(R.GET_MAX_OFFSET, BROKER, H.GetMaxOffsetRequestHeader, H.GetMaxOffsetResponseHeader),
    Api(R.GET_MIN_OFFSET, BROKER, H.GetMinOffsetRequestHeader, H.GetMinOffsetResponseHeader),
    Api(R.GET_EARLIEST_MSG_STORETIME, BROKER, H.GetEarliestMsgStoretimeRequestHeader,
        H.GetEarliestMsgStoretimeResponseHeader),
    Api(R.SEARCH_OFFSET_BY_TIMESTAMP, BROKER, H.SearchOffsetRequestHeader, H.SearchOffsetResponseHeader),
    Api(R.GET_ALL_CONSUMER_OFFSET, BROKER, None, None, None, B.ConsumerOffsetSerializeWrapper),
    Api(R.GET_ALL_DELAY_OFFSET, BROKER, None, None, None, "delayOffset"),
    # -- clients --------------------------------------------------------------------------------
    Api(R.HEART_BEAT, BROKER, None, None, B.HeartbeatData),
    Api(R.UNREGISTER_CLIENT, BROKER, H.UnregisterClientRequestHeader, H.UnregisterClientResponseHeader),
    Api(R.GET_CONSUMER_LIST_BY_GROUP, BROKER, H.GetConsumerListByGroupRequestHeader,
        H.GetConsumerListByGroupResponseHeader, None, B.GetConsumerListByGroupResponseBody),
    Api(R.LOCK_BATCH_MQ, BROKER, None, None, B.LockBatchRequestBody, B.LockBatchResponseBody),
    Api(R.UNLOCK_BATCH_MQ, BROKER, None, None, B.UnlockBatchRequestBody),
    Api(R.CHECK_CLIENT_CONFIG, BROKER, None, None, B.CheckClientRequestBody),
    # -- broker -> client -----------------------------------------------------------------------
    Api(R.CHECK_TRANSACTION_STATE, CLIENT, H.CheckTransactionStateRequestHeader, None, RECORDS, oneway=True),
    Api(R.NOTIFY_CONSUMER_IDS_CHANGED, CLIENT, H.NotifyConsumerIdsChangedRequestHeader, oneway=True),
    Api(R.RESET_CONSUMER_CLIENT_OFFSET, CLIENT, H.ResetOffsetRequestHeader, None, B.ResetOffsetBody, oneway=True),
    Api(R.GET_CONSUMER_STATUS_FROM_CLIENT, CLIENT, H.GetConsumerStatusRequestHeader, None, None,
        B.GetConsumerStatusBody),
    Api(R.GET_CONSUMER_RUNNING_INFO, FORWARDED, H.GetConsumerRunningInfoRequestHeader, None, None,
        B.ConsumerRunningInfo),
    Api(R.CONSUME_MESSAGE_DIRECTLY, FORWARDED, H.ConsumeMessageDirectlyResultRequestHeader, None, RECORDS,
        B.ConsumeMessageDirectlyResult),
    Api(R.PUSH_REPLY_MESSAGE_TO_CLIENT, CLIENT, H.ReplyMessageRequestHeader, None, MESSAGE),
    # -- broker admin ---------------------------------------------------------------------------
    Api(R.UPDATE_AND_CREATE_TOPIC, BROKER, H.CreateTopicRequestHeader),
    Api(R.DELETE_TOPIC_IN_BROKER, BROKER, H.DeleteTopicRequestHeader),
    Api(R.GET_ALL_TOPIC_CONFIG, BROKER, None, H.GetAllTopicConfigResponseHeader, None, B.TopicConfigSerializeWrapper),
    Api(R.UPDATE_BROKER_CONFIG, BROKER, None, None, PROPERTIES_TEXT),
    Api(R.GET_BROKER_CONFIG, BROKER, None, H.GetBrokerConfigResponseHeader, None, PROPERTIES_TEXT),
    Api(R.GET_BROKER_RUNTIME_INFO, BROKER, None, None, None, B.KVTable),
    Api(R.GET_TOPIC_STATS_INFO, BROKER, H.GetTopicStatsInfoRequestHeader, None, None, B.TopicStatsTable),
    Api(R.GET_CONSUMER_CONNECTION_LIST, BROKER, H.GetConsumerConnectionListRequestHeader, None, None,
        B.ConsumerConnection),
    Api(R.GET_PRODUCER_CONNECTION_LIST, BROKER, H.GetProducerConnectionListRequestHeader, None, None,
        B.ProducerConnection),
    Api(R.GET_CONSUME_STATS, BROKER, H.GetConsumeStatsRequestHeader, None, None, B.ConsumeStats),
    Api(R.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, BROKER, None, None, B.SubscriptionGroupConfig),
    Api(R.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, BROKER, None, None, None, B.SubscriptionGroupWrapper),
    Api(R.DELETE_SUBSCRIPTIONGROUP, BROKER, H.DeleteSubscriptionGroupRequestHeader),
    Api(R.INVOKE_BROKER_TO_RESET_OFFSET, BROKER, H.ResetOffsetRequestHeader, None, None, B.ResetOffsetBody),
    Api(R.INVOKE_BROKER_TO_GET_CONSUMER_STATUS, BROKER, H.GetConsumerStatusRequestHeader, None, None,
        B.GetConsumerStatusBody),
    Api(R.QUERY_TOPIC_CONSUME_BY_WHO, BROKER, H.QueryTopicConsumeByWhoRequestHeader, None, None, B.GroupList),
    Api(R.QUERY_CONSUME_TIME_SPAN, BROKER, H.QueryConsumeTimeSpanRequestHeader, None, None,
        B.QueryConsumeTimeSpanBody),
    Api(R.GET_SYSTEM_TOPIC_LIST_FROM_BROKER, BROKER, None, None, None, B.TopicList),
    Api(R.CLEAN_EXPIRED_CONSUMEQUEUE, BROKER),
    Api(R.CLEAN_UNUSED_TOPIC, BROKER),
    Api(R.QUERY_CORRECTION_OFFSET, BROKER, H.QueryCorrectionOffsetHeader, None, None, B.QueryCorrectionOffsetBody),
    Api(R.CLONE_GROUP_OFFSET, BROKER, H.CloneGroupOffsetRequestHeader),
    Api(R.VIEW_BROKER_STATS_DATA, BROKER, H.ViewBrokerStatsDataRequestHeader, None, None, B.BrokerStatsData),
    Api(R.GET_BROKER_CONSUME_STATS, BROKER, H.GetConsumeStatsInBrokerHeader),
    Api(R.RESUME_CHECK_HALF_MESSAGE, BROKER, H.ResumeCheckHalfMessageRequestHeader),
    Api(R.GET_ALL_PRODUCER_INFO, BROKER, H.GetAllProducerInfoRequestHeader, None, None, B.ProducerTableInfo),
    Api(R.DELETE_EXPIRED_COMMITLOG, BROKER),
    Api(R.UPDATE_AND_CREATE_ACL_CONFIG, BROKER, H.CreateAccessConfigRequestHeader),
    Api(R.DELETE_ACL_CONFIG, BROKER, H.DeleteAccessConfigRequestHeader),
    Api(R.GET_BROKER_CLUSTER_ACL_INFO, BROKER, None, H.GetBrokerAclConfigResponseHeader, None,
        B.ClusterAclVersionInfo),
    Api(R.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, BROKER, H.UpdateGlobalWhiteAddrsConfigRequestHeader),
    Api(R.GET_BROKER_CLUSTER_ACL_CONFIG, BROKER, None, H.GetBrokerClusterAclConfigResponseHeader),
    Api(R.REGISTER_FILTER_SERVER, BROKER, H.RegisterFilterServerRequestHeader, H.RegisterFilterServerResponseHeader),
    # -- name server ----------------------------------------------------------------------------
    Api(R.PUT_KV_CONFIG, NAMESRV, H.PutKVConfigRequestHeader),
    Api(R.GET_KV_CONFIG, NAMESRV, H.GetKVConfigRequestHeader, H.GetKVConfigResponseHeader),
    Api(R.DELETE_KV_CONFIG, NAMESRV, H.DeleteKVConfigRequestHeader),
    Api(R.GET_KVLIST_BY_NAMESPACE, NAMESRV, H.GetKVListByNamespaceRequestHeader, None, None, B.KVTable),
    Api(R.REGISTER_BROKER, NAMESRV, H.RegisterBrokerRequestHeader, H.RegisterBrokerResponseHeader, REGISTRATION,
        B.KVTable),
    Api(R.UNREGISTER_BROKER, NAMESRV, H.UnRegisterBrokerRequestHeader),
    Api(R.QUERY_DATA_VERSION, NAMESRV, H.QueryDataVersionRequestHeader, H.QueryDataVersionResponseHeader,
        B.DataVersion, B.DataVersion),
    Api(R.GET_ROUTEINFO_BY_TOPIC, NAMESRV, H.GetRouteInfoRequestHeader, None, None, B.TopicRouteData),
    Api(R.GET_BROKER_CLUSTER_INFO, NAMESRV, None, None, None, B.ClusterInfo),
    Api(R.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, NAMESRV, None, None, None, B.TopicList),
    Api(R.GET_TOPICS_BY_CLUSTER, NAMESRV, H.GetTopicsByClusterRequestHeader, None, None, B.TopicList),
    Api(R.GET_SYSTEM_TOPIC_LIST_FROM_NS, NAMESRV, None, None, None, B.TopicList),
    Api(R.GET_UNIT_TOPIC_LIST, NAMESRV, None, None, None, B.TopicList),
    Api(R.GET_HAS_UNIT_SUB_TOPIC_LIST, NAMESRV, None, None, None, B.TopicList),
    Api(R.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST, NAMESRV, None, None, None, B.TopicList),
    Api(R.DELETE_TOPIC_IN_NAMESRV, NAMESRV, H.DeleteTopicFromNamesrvRequestHeader),
    Api(R.WIPE_WRITE_PERM_OF_BROKER, NAMESRV, H.WipeWritePermOfBrokerRequestHeader,
        H.WipeWritePermOfBrokerResponseHeader),
    Api(R.ADD_WRITE_PERM_OF_BROKER, NAMESRV, H.AddWritePermOfBrokerRequestHeader, H.AddWritePermOfBrokerResponseHeader),
    Api(R.UPDATE_NAMESRV_CONFIG, NAMESRV, None, None, PROPERTIES_TEXT),
    Api(R.GET_NAMESRV_CONFIG, NAMESRV, None, None, None, PROPERTIES_TEXT),
]

#: Request code -> :class:`Api`.
PROTOCOL: dict[int, Api] = {int(api.code): api for api in _APIS}


def api_of(code: int) -> Api | None:
    return PROTOCOL.get(int(code))


def header_of(cmd: RemotingCommand, request_code: int | None = None) -> CommandHeader | None:
    """The typed header of a request, or of a response to ``request_code`` (None if none is declared)."""
    api = api_of(request_code if cmd.is_response else cmd.code) if (request_code is not None
                                                                     or not cmd.is_response) else None
    if api is None:
        return None
    cls = api.response_header if cmd.is_response else api.request_header
    return cmd.header(cls) if cls is not None else None


def body_of(cmd: RemotingCommand, request_code: int | None = None):
    """The decoded JSON body of a request, or of a response to ``request_code``; the raw bytes when
    the body is not a JSON bean (messages, records…) or cannot be decoded."""
    if not cmd.body:
        return None
    api = api_of(request_code if cmd.is_response else cmd.code) if (request_code is not None
                                                                     or not cmd.is_response) else None
    kind = None if api is None else (api.response_body if cmd.is_response else api.request_body)
    if isinstance(kind, type):
        try:
            return B.decode_json(kind, cmd.body)
        except B.BodyError:
            return cmd.body
    if kind == REGISTRATION:
        header = cmd.header(H.RegisterBrokerRequestHeader)
        try:
            return B.decode_register_body(cmd.body, bool(header.compressed))
        except B.BodyError:
            return cmd.body
    return cmd.body
