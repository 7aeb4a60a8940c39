"""Header cases of the golden frame corpus: which 4.9.4 header class goes with which code, and
the values each case carries.

Every class under ``common/src/main/java/org/apache/rocketmq/common/protocol/header/**`` that
implements ``CommandCustomHeader`` gets a base case with a sample value for every field; the
code it is used with comes from ``common/.../protocol/RequestCode.java`` and the call sites in
``client/.../impl/MQClientAPIImpl.java``, ``broker/.../processor/*`` and
``namesrv/.../processor/DefaultRequestProcessor.java``. ``EXTRA`` adds the edge cases (required
fields only, nulls, awkward characters, extreme numbers, oneway, other languages, …).
Nothing here runs Java: ``regenerate.py`` turns these cases into ``corpus/frames/catalog.json``.
"""

from __future__ import annotations

import copy

P = "org.apache.rocketmq.common.protocol.header."
NS = P + "namesrv."
FS = P + "filtersrv."

PROPERTIES = "KEYS\x01KEY1\x02UNIQ_KEY\x017F00000112340000ABCD000000640001\x02WAIT\x01true\x02TAGS\x01TagA"
UNIQ_KEY = "7F00000112340000ABCD000000640001"
OFFSET_MSG_ID = "7F00000100002A9F0000000000000000"
CLIENT_ID = "127.0.0.1@4242#1700000000000"
FAQ = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."
# A CommitLog record as 4.9.4 stores it (TopicTest, queue 0, "Hello RocketMQ", KEYS/UNIQ_KEY/CLUSTER/TAGS)
RECORD_HEX = (
    "000000C6DAA320A769C865ED000000000000000000000000000000000000000000000000000000000000018BCFE568007F000001"
    "0000C3500000018BCFE5687B7F00000100002A9F0000000000000000000000000000000E48656C6C6F20526F636B65744D5109"
    "546F7069635465737400544B455953014B45593102554E49515F4B455901374630303030303131323334303030304142434430"
    "303030303036343030303102434C55535445520144656661756C74436C757374657202544147530154616741"
).lower()
# Every character the JSON writers treat specially, and some they do not.
AWKWARD = 'q"b\\s/c\x01\x02\n\tdel\x7fé中😀\u2028end'

STRINGS = {
    "topic": "TopicTest", "defaultTopic": "TBW102", "producerGroup": "PG_golden",
    "consumerGroup": "CG_golden", "group": "CG_golden", "groupName": "CG_golden",
    "srcGroup": "CG_golden", "destGroup": "CG_golden_copy", "compareGroup": "CG_golden",
    "filterGroups": "CG_a,CG_b", "brokerName": "broker-a", "brokerAddr": "127.0.0.1:10911",
    "clusterName": "DefaultCluster", "cluster": "DefaultCluster", "haServerAddr": "127.0.0.1:10912",
    "masterAddr": "127.0.0.1:10911", "namespace": "ORDER_TOPIC_CONFIG", "key": "TopicTest",
    "value": "broker-a:4;broker-b:4", "clientId": CLIENT_ID, "clientID": CLIENT_ID,
    "clientAddr": "127.0.0.1:50000", "msgId": UNIQ_KEY, "transactionId": UNIQ_KEY,
    "offsetMsgId": OFFSET_MSG_ID, "originMsgId": OFFSET_MSG_ID, "originTopic": "TopicTest",
    "properties": PROPERTIES, "subscription": "TagA || TagB", "expressionType": "TAG",
    "topicFilterType": "SINGLE_TAG", "accessKey": "RocketMQ", "secretKey": "12345678",
    "whiteRemoteAddress": "192.168.0.*", "defaultTopicPerm": "DENY", "defaultGroupPerm": "SUB",
    "topicPerms": "topicA=DENY,topicB=PUB|SUB", "groupPerms": "groupA=DENY,groupB=PUB|SUB",
    "globalWhiteAddrs": "10.10.103.*,192.168.0.*", "aclFileFullPath": "/home/rocketmq/conf/plain_acl.yml",
    "version": '{"counter":2,"timestamp":1700000000000}', "allAclFileVersion": "{}",
    "statsName": "TOPIC_PUT_NUMS", "statsKey": "TopicTest", "filterServerAddr": "127.0.0.1:10920",
    "className": "org.example.MessageFilterImpl", "bornHost": "127.0.0.1:50000",
    "storeHost": "127.0.0.1:10911", "orderTopicString": "broker-a:4;broker-b:4",
}
INTEGERS = {
    "queueId": 1, "defaultTopicQueueNums": 4, "sysFlag": 0, "flag": 0, "reconsumeTimes": 0,
    "maxReconsumeTimes": 16, "delayLevel": 3, "maxMsgNums": 32, "readQueueNums": 8,
    "writeQueueNums": 8, "perm": 6, "topicSysFlag": 0, "commitOrRollback": 8, "maxNum": 32,
    "bodyCrc32": 0, "classCRC": -1234567, "wipeTopicCount": 3, "addTopicCount": 3, "count": 10,
}
LONGS = {
    "bornTimestamp": 1700000000000, "queueOffset": 12, "commitOffset": 10,
    "suspendTimeoutMillis": 15000, "subVersion": 1700000000001, "offset": 4096,
    "timestamp": 1700000000000, "beginTimestamp": 1699990000000, "endTimestamp": 1700000000000,
    "brokerId": 0, "tranStateTableOffset": 7, "commitLogOffset": 4096, "nextBeginOffset": 13,
    "minOffset": 0, "maxOffset": 13, "suggestWhichBrokerId": 0, "indexLastUpdateTimestamp": 1700000000123,
    "indexLastUpdatePhyoffset": 198, "index": 5, "storeTimestamp": 1700000000123,
}
V2_NAMES = dict(zip("abcdefghijklm", [
    "producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId", "sysFlag",
    "bornTimestamp", "flag", "properties", "reconsumeTimes", "unitMode", "maxReconsumeTimes", "batch"]))
PER_CLASS = {  # realistic values where the generic ones would mislead
    "PullMessageRequestHeader": {"sysFlag": 7},
    "ConsumerSendMsgBackRequestHeader": {"offset": 198},
    "RegisterFilterServerResponseHeader": {"brokerId": 0},
    "SendMessageRequestHeaderV2": {"l": 16},
    "SendMessageRequestHeader": {"maxReconsumeTimes": 16},
    "SendMessageResponseHeader": {"msgId": OFFSET_MSG_ID},
}

# (request code, header class, response header class) — response None: no custom header
REQUESTS = [
    ("SEND_MESSAGE", P + "SendMessageRequestHeader", P + "SendMessageResponseHeader"),
    ("SEND_REPLY_MESSAGE", P + "SendMessageRequestHeader", None),
    ("SEND_MESSAGE_V2", P + "SendMessageRequestHeaderV2", P + "SendMessageResponseHeader"),
    ("SEND_REPLY_MESSAGE_V2", P + "SendMessageRequestHeaderV2", None),
    ("PULL_MESSAGE", P + "PullMessageRequestHeader", None),
    ("QUERY_MESSAGE", P + "QueryMessageRequestHeader", P + "QueryMessageResponseHeader"),
    ("VIEW_MESSAGE_BY_ID", P + "ViewMessageRequestHeader", P + "ViewMessageResponseHeader"),
    ("QUERY_CONSUMER_OFFSET", P + "QueryConsumerOffsetRequestHeader", P + "QueryConsumerOffsetResponseHeader"),
    ("UPDATE_CONSUMER_OFFSET", P + "UpdateConsumerOffsetRequestHeader", P + "UpdateConsumerOffsetResponseHeader"),
    ("UPDATE_AND_CREATE_TOPIC", P + "CreateTopicRequestHeader", None),
    ("GET_ALL_TOPIC_CONFIG", None, P + "GetAllTopicConfigResponseHeader"),
    ("GET_BROKER_CONFIG", None, P + "GetBrokerConfigResponseHeader"),
    ("SEARCH_OFFSET_BY_TIMESTAMP", P + "SearchOffsetRequestHeader", P + "SearchOffsetResponseHeader"),
    ("GET_MAX_OFFSET", P + "GetMaxOffsetRequestHeader", P + "GetMaxOffsetResponseHeader"),
    ("GET_MIN_OFFSET", P + "GetMinOffsetRequestHeader", P + "GetMinOffsetResponseHeader"),
    ("GET_EARLIEST_MSG_STORETIME", P + "GetEarliestMsgStoretimeRequestHeader", P + "GetEarliestMsgStoretimeResponseHeader"),
    ("UNREGISTER_CLIENT", P + "UnregisterClientRequestHeader", P + "UnregisterClientResponseHeader"),
    ("CONSUMER_SEND_MSG_BACK", P + "ConsumerSendMsgBackRequestHeader", None),
    ("END_TRANSACTION", P + "EndTransactionRequestHeader", P + "EndTransactionResponseHeader"),
    ("GET_CONSUMER_LIST_BY_GROUP", P + "GetConsumerListByGroupRequestHeader", P + "GetConsumerListByGroupResponseHeader"),
    ("CHECK_TRANSACTION_STATE", P + "CheckTransactionStateRequestHeader", P + "CheckTransactionStateResponseHeader"),
    ("NOTIFY_CONSUMER_IDS_CHANGED", P + "NotifyConsumerIdsChangedRequestHeader", None),
    ("DELETE_TOPIC_IN_BROKER", P + "DeleteTopicRequestHeader", None),
    ("DELETE_SUBSCRIPTIONGROUP", P + "DeleteSubscriptionGroupRequestHeader", None),
    ("GET_TOPIC_STATS_INFO", P + "GetTopicStatsInfoRequestHeader", None),
    ("GET_CONSUMER_CONNECTION_LIST", P + "GetConsumerConnectionListRequestHeader", None),
    ("GET_PRODUCER_CONNECTION_LIST", P + "GetProducerConnectionListRequestHeader", None),
    ("GET_CONSUME_STATS", P + "GetConsumeStatsRequestHeader", None),
    ("GET_BROKER_CONSUME_STATS", P + "GetConsumeStatsInBrokerHeader", None),
    ("INVOKE_BROKER_TO_RESET_OFFSET", P + "ResetOffsetRequestHeader", None),
    ("RESET_CONSUMER_CLIENT_OFFSET", P + "ResetOffsetRequestHeader", None),
    ("INVOKE_BROKER_TO_GET_CONSUMER_STATUS", P + "GetConsumerStatusRequestHeader", None),
    ("GET_CONSUMER_STATUS_FROM_CLIENT", P + "GetConsumerStatusRequestHeader", None),
    ("QUERY_TOPIC_CONSUME_BY_WHO", P + "QueryTopicConsumeByWhoRequestHeader", None),
    ("GET_TOPICS_BY_CLUSTER", P + "GetTopicsByClusterRequestHeader", None),
    ("REGISTER_FILTER_SERVER", FS + "RegisterFilterServerRequestHeader", FS + "RegisterFilterServerResponseHeader"),
    ("REGISTER_MESSAGE_FILTER_CLASS", FS + "RegisterMessageFilterClassRequestHeader", None),
    ("QUERY_CONSUME_TIME_SPAN", P + "QueryConsumeTimeSpanRequestHeader", None),
    ("QUERY_CORRECTION_OFFSET", P + "QueryCorrectionOffsetHeader", None),
    ("GET_CONSUMER_RUNNING_INFO", P + "GetConsumerRunningInfoRequestHeader", None),
    ("CONSUME_MESSAGE_DIRECTLY", P + "ConsumeMessageDirectlyResultRequestHeader", None),
    ("CLONE_GROUP_OFFSET", P + "CloneGroupOffsetRequestHeader", None),
    ("VIEW_BROKER_STATS_DATA", P + "ViewBrokerStatsDataRequestHeader", None),
    ("QUERY_CONSUME_QUEUE", P + "QueryConsumeQueueRequestHeader", None),
    ("RESUME_CHECK_HALF_MESSAGE", P + "ResumeCheckHalfMessageRequestHeader", None),
    ("PUSH_REPLY_MESSAGE_TO_CLIENT", P + "ReplyMessageRequestHeader", None),
    ("GET_ALL_PRODUCER_INFO", P + "GetAllProducerInfoRequestHeader", None),
    ("UPDATE_AND_CREATE_ACL_CONFIG", P + "CreateAccessConfigRequestHeader", None),
    ("DELETE_ACL_CONFIG", P + "DeleteAccessConfigRequestHeader", None),
    ("GET_BROKER_CLUSTER_ACL_INFO", None, P + "GetBrokerAclConfigResponseHeader"),
    ("GET_BROKER_CLUSTER_ACL_CONFIG", None, P + "GetBrokerClusterAclConfigResponseHeader"),
    ("UPDATE_GLOBAL_WHITE_ADDRS_CONFIG", P + "UpdateGlobalWhiteAddrsConfigRequestHeader", None),
    ("PUT_KV_CONFIG", NS + "PutKVConfigRequestHeader", None),
    ("GET_KV_CONFIG", NS + "GetKVConfigRequestHeader", NS + "GetKVConfigResponseHeader"),
    ("DELETE_KV_CONFIG", NS + "DeleteKVConfigRequestHeader", None),
    ("GET_KVLIST_BY_NAMESPACE", NS + "GetKVListByNamespaceRequestHeader", None),
    ("GET_ROUTEINFO_BY_TOPIC", NS + "GetRouteInfoRequestHeader", None),
    ("REGISTER_BROKER", NS + "RegisterBrokerRequestHeader", NS + "RegisterBrokerResponseHeader"),
    ("UNREGISTER_BROKER", NS + "UnRegisterBrokerRequestHeader", None),
    ("WIPE_WRITE_PERM_OF_BROKER", NS + "WipeWritePermOfBrokerRequestHeader", NS + "WipeWritePermOfBrokerResponseHeader"),
    ("ADD_WRITE_PERM_OF_BROKER", NS + "AddWritePermOfBrokerRequestHeader", NS + "AddWritePermOfBrokerResponseHeader"),
    ("DELETE_TOPIC_IN_NAMESRV", NS + "DeleteTopicFromNamesrvRequestHeader", None),
    ("QUERY_DATA_VERSION", NS + "QueryDataVersionRequestHeader", NS + "QueryDataVersionResponseHeader"),
]
# Notes on header classes: those no 4.9.4 code path sends (recorded with the code they are named
# after, or none) and the one without fields.
NOTES = {
    NS + "RegisterOrderTopicRequestHeader": "no RequestCode uses it in 4.9.4; recorded with code 0",
    P + "ViewMessageResponseHeader": "declared but VIEW_MESSAGE_BY_ID answers without a custom header in 4.9.4",
    P + "EndTransactionResponseHeader": "declared but END_TRANSACTION is answered without a custom header in 4.9.4",
    P + "CheckTransactionStateResponseHeader": "declared but CHECK_TRANSACTION_STATE is one-way in 4.9.4",
    P + "GetAllProducerInfoRequestHeader": "has no fields: extFields is written as an empty map",
}


def _record_body():
    """A body holding one stored message record (PULL, QUERY, VIEW, CHECK_TRANSACTION_STATE, …)."""
    return {"hex": RECORD_HEX}


def sample_fields(simple: str, fields: list[dict]) -> dict:
    """A deterministic value for every non-static field, chosen by its name and Java type."""
    out = {}
    for f in fields:
        if f["static"]:
            continue
        name, jtype = f["name"], f["type"]
        lookup = V2_NAMES.get(name, name) if simple == "SendMessageRequestHeaderV2" else name
        if name in PER_CLASS.get(simple, {}):
            out[name] = PER_CLASS[simple][name]
        elif jtype == "java.lang.String":
            out[name] = STRINGS.get(lookup, f"{name}-sample")
        elif jtype in ("java.lang.Integer", "int"):
            out[name] = INTEGERS.get(lookup, 7)
        elif jtype in ("java.lang.Long", "long"):
            out[name] = LONGS.get(lookup, 1700000000000)
        elif jtype in ("java.lang.Boolean", "boolean"):
            out[name] = lookup not in ("unitMode", "batch", "offline", "removeOffset", "compressed", "isForce", "jstackEnable")
        elif jtype.startswith("java.util.List"):
            out[name] = []  # List.toString() goes on the wire; an element would print its identity hash
        else:
            raise ValueError(f"no sample for {simple}.{name}: {jtype}")
    return out


def case(name, kind, code, header_class, fields=None, **extra) -> dict:
    c = {"name": name, "kind": kind, "code": code, "headerClass": header_class,
         "fields": fields or {}, "opaque": extra.pop("opaque", 0), "remark": extra.pop("remark", None)}
    c.update(extra)
    c.setdefault("serializeTypes", ["JSON", "ROCKETMQ"])
    return c


# -- per-code adjustments of the base cases ----------------------------------------------------
def _adjust() -> dict:
    from catalog_bodies import body_ref
    region = {"MSG_REGION": "DefaultRegion", "TRACE_ON": "true"}
    hello = {"text": "Hello RocketMQ"}
    reply = {"properties": PROPERTIES + "\x02MSG_TYPE\x01reply\x02CORRELATION_ID\x01" + UNIQ_KEY
             + "\x02REPLY_TO_CLIENT\x01" + CLIENT_ID}
    return {
        "SEND_MESSAGE.request": {"body": hello},
        "SEND_MESSAGE.response": {"extFields": region},
        "SEND_MESSAGE_V2.request": {"body": hello},
        "SEND_MESSAGE_V2.response": {"extFields": region},
        "SEND_REPLY_MESSAGE.request": {"body": {"text": "reply"}, "fields": reply},
        "SEND_REPLY_MESSAGE_V2.request": {"body": {"text": "reply"}, "fields": {"i": reply["properties"]}},
        "QUERY_MESSAGE.request": {"extFields": {"_UNIQUE_KEY_QUERY": "false"}},
        "QUERY_MESSAGE.response": {"body": _record_body()},
        "VIEW_MESSAGE_BY_ID.response": {"body": _record_body()},
        "UPDATE_CONSUMER_OFFSET.request": {"oneway": True},
        "END_TRANSACTION.request": {"oneway": True},
        "CHECK_TRANSACTION_STATE.request": {"oneway": True, "body": _record_body()},
        "NOTIFY_CONSUMER_IDS_CHANGED.request": {"oneway": True},
        "CONSUME_MESSAGE_DIRECTLY.request": {"body": _record_body()},
        "RESET_CONSUMER_CLIENT_OFFSET.request": {"body": body_ref("ResetOffsetBody")},
        "REGISTER_MESSAGE_FILTER_CLASS.request": {"body": {"text": "public class MessageFilterImpl {}\n"}},
        "PUSH_REPLY_MESSAGE_TO_CLIENT.request": {"body": {"text": "reply"}},
        "GET_ALL_TOPIC_CONFIG.response": {"body": body_ref("TopicConfigSerializeWrapper")},
        "GET_BROKER_CONFIG.response": {"body": {"text": "brokerName=broker-a\nbrokerId=0\n"}},
        "GET_CONSUMER_LIST_BY_GROUP.response": {"body": body_ref("GetConsumerListByGroupResponseBody")},
        "GET_BROKER_CLUSTER_ACL_INFO.response": {"body": body_ref("ClusterAclVersionInfo")},
        "GET_BROKER_CLUSTER_ACL_CONFIG.response": {"body": body_ref("GetBrokerClusterAclConfigResponseBody")},
        "REGISTER_BROKER.request": {"body": body_ref("RegisterBrokerBody"), "fields": {"bodyCrc32": "$bodyCrc32"}},
        "REGISTER_BROKER.response": {"body": body_ref("KVTable.orderTopics")},
        "QUERY_DATA_VERSION.request": {"body": body_ref("DataVersion")},
        "QUERY_DATA_VERSION.response": {"body": body_ref("DataVersion"), "fields": {"changed": False}},
    }


def _extra(req: dict, resp: dict) -> list:
    """Edge cases beyond one-case-per-class: awkward values, other flags, languages, errors."""
    from catalog_bodies import body_ref
    v2_real = {"a": "PG_golden", "b": "TopicTest", "c": "TBW102", "d": 4, "e": 1, "f": 0, "g": 1700000000000,
               "h": 0, "i": PROPERTIES, "j": 0, "k": False, "m": False}
    pull_resp = {"suggestWhichBrokerId": 0, "nextBeginOffset": 13, "minOffset": 0, "maxOffset": 13}
    return [
        case("GET_ROUTEINFO_BY_TOPIC.request.java_client", "request", req["GET_ROUTEINFO_BY_TOPIC"],
             NS + "GetRouteInfoRequestHeader", {"topic": "TopicTest"}, opaque=1,
             note="what the 4.9.4 Java client sends (acceptStandardJsonOnly left null)"),
        case("GET_ROUTEINFO_BY_TOPIC.request.go_client_old_version", "request", req["GET_ROUTEINFO_BY_TOPIC"],
             NS + "GetRouteInfoRequestHeader", {"topic": "TopicTest", "acceptStandardJsonOnly": False},
             opaque=2, language="GO", version=0),
        case("GET_ROUTEINFO_BY_TOPIC.response", "response", resp["SUCCESS"], None, opaque=1,
             body=body_ref("TopicRouteData", "standard"), note="name server, request version >= 401"),
        case("GET_ROUTEINFO_BY_TOPIC.response.old_client", "response", resp["SUCCESS"], None, opaque=2,
             body=body_ref("TopicRouteData", "default"), note="name server, request version < 401"),
        case("GET_ROUTEINFO_BY_TOPIC.response.TOPIC_NOT_EXIST", "response", resp["TOPIC_NOT_EXIST"], None, opaque=3,
             remark="No topic route info in name server for the topic: NoSuchTopic" + FAQ),
        case("SEND_MESSAGE_V2.request.java_client", "request", req["SEND_MESSAGE_V2"], P + "SendMessageRequestHeaderV2",
             v2_real, opaque=3, body={"text": "Hello"}, note="l (maxReconsumeTimes) null as for a normal topic"),
        case("SEND_MESSAGE_V2.request.required_only", "request", req["SEND_MESSAGE_V2"],
             P + "SendMessageRequestHeaderV2", {k: v2_real[k] for k in "abcdefgh"}, opaque=4, body={"text": "x"}),
        case("SEND_MESSAGE_V2.request.extremes", "request", req["SEND_MESSAGE_V2"], P + "SendMessageRequestHeaderV2",
             {**v2_real, "d": -2147483648, "e": -1, "f": 2147483647, "g": 9007199254740993, "h": -1,
              "j": 2147483647, "k": True, "l": 0, "m": True}, opaque=-2147483648, body={"hex": ""}),
        case("SEND_BATCH_MESSAGE.request", "request", req["SEND_BATCH_MESSAGE"], P + "SendMessageRequestHeaderV2",
             {**v2_real, "i": "WAIT\x01true", "m": True}, opaque=5, body={"hex": batch_body().hex()}),
        case("SEND_MESSAGE_V2.response.TOPIC_NOT_EXIST", "response", resp["TOPIC_NOT_EXIST"],
             P + "SendMessageResponseHeader", {}, opaque=6,
             extFields={"MSG_REGION": "DefaultRegion", "TRACE_ON": "true"},
             remark="topic[NoSuchTopic] not exist, apply first please!" + FAQ),
        case("SEND_MESSAGE_V2.response.FLUSH_DISK_TIMEOUT", "response", resp["FLUSH_DISK_TIMEOUT"],
             P + "SendMessageResponseHeader", {"msgId": OFFSET_MSG_ID, "queueId": 1, "queueOffset": 0}, opaque=7,
             extFields={"MSG_REGION": "DefaultRegion", "TRACE_ON": "false"}),
        case("SEND_MESSAGE_V2.response.transactionId", "response", resp["SUCCESS"], P + "SendMessageResponseHeader",
             {"msgId": OFFSET_MSG_ID + "," + OFFSET_MSG_ID, "queueId": 3, "queueOffset": 9007199254740993,
              "transactionId": UNIQ_KEY}, opaque=8),
        case("PULL_MESSAGE.response.FOUND", "response", resp["SUCCESS"], P + "PullMessageResponseHeader", pull_resp,
             opaque=9, remark="FOUND", body=_record_body()),
        case("PULL_MESSAGE.response.PULL_NOT_FOUND", "response", resp["PULL_NOT_FOUND"], P + "PullMessageResponseHeader",
             {**pull_resp, "nextBeginOffset": 13}, opaque=10, remark="OFFSET_OVERFLOW_ONE"),
        case("PULL_MESSAGE.response.PULL_RETRY_IMMEDIATELY", "response", resp["PULL_RETRY_IMMEDIATELY"],
             P + "PullMessageResponseHeader", pull_resp, opaque=11, remark="NO_MATCHED_MESSAGE"),
        case("PULL_MESSAGE.response.PULL_OFFSET_MOVED", "response", resp["PULL_OFFSET_MOVED"],
             P + "PullMessageResponseHeader", {**pull_resp, "nextBeginOffset": 0, "suggestWhichBrokerId": 1},
             opaque=12, remark="OFFSET_TOO_SMALL"),
        case("PULL_MESSAGE.request.no_subscription", "request", req["PULL_MESSAGE"], P + "PullMessageRequestHeader",
             {"consumerGroup": "CG_golden", "topic": "TopicTest", "queueId": 0, "queueOffset": 0, "maxMsgNums": 32,
              "sysFlag": 2, "commitOffset": 0, "suspendTimeoutMillis": 15000, "subVersion": 1700000000001},
             opaque=13, note="push consumer default: postSubscriptionWhenPull=false"),
        case("QUERY_CONSUMER_OFFSET.response.QUERY_NOT_FOUND", "response", resp["QUERY_NOT_FOUND"],
             P + "QueryConsumerOffsetResponseHeader", {}, opaque=14,
             remark="Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first",
             note="header object with every field null: JSON writes extFields {}, ROCKETMQ writes length 0"),
        case("GET_KV_CONFIG.response.QUERY_NOT_FOUND", "response", resp["QUERY_NOT_FOUND"],
             NS + "GetKVConfigResponseHeader", {}, opaque=15,
             remark="No config item, Namespace: ORDER_TOPIC_CONFIG Key: NoSuchTopic"),
        case("REGISTER_BROKER.request.compressed", "request", req["REGISTER_BROKER"],
             NS + "RegisterBrokerRequestHeader",
             {"brokerName": "broker-a", "brokerAddr": "127.0.0.1:10911", "clusterName": "DefaultCluster",
              "haServerAddr": "127.0.0.1:10912", "brokerId": 0, "compressed": True, "bodyCrc32": "$bodyCrc32"},
             opaque=16, body=body_ref("RegisterBrokerBody", "compressed")),
        case("REGISTER_BROKER.request.oneway", "request", req["REGISTER_BROKER"], NS + "RegisterBrokerRequestHeader",
             {"brokerName": "broker-a", "brokerAddr": "127.0.0.1:10911", "clusterName": "DefaultCluster",
              "haServerAddr": "127.0.0.1:10912", "brokerId": 0, "compressed": False, "bodyCrc32": "$bodyCrc32"},
             opaque=17, oneway=True, body=body_ref("RegisterBrokerBody.filterServers")),
        case("REGISTER_BROKER.response.master", "response", resp["SUCCESS"], NS + "RegisterBrokerResponseHeader", {},
             opaque=18),
        case("PUT_KV_CONFIG.request.awkward", "request", req["PUT_KV_CONFIG"], NS + "PutKVConfigRequestHeader",
             {"namespace": "ns", "key": AWKWARD, "value": AWKWARD}, opaque=19, remark=AWKWARD,
             extFields={AWKWARD: "key with every special character"},
             note="quotes, backslash, /, \\u0001 \\u0002 \\n \\t, DEL, é, 中, an emoji, U+2028"),
        case("PUT_KV_CONFIG.request.one_special_each", "request", req["PUT_KV_CONFIG"], NS + "PutKVConfigRequestHeader",
             {"namespace": "a\u2028b", "key": "x\x7fy", "value": 'q"q'}, opaque=20, remark="tab\there",
             extFields={"slash": "a/b", "ctl": "\x01", "bs": "\\", "nbsp": "\xa0", "c1": "\x85", "ps": "\u2029",
                        "nul": "\x00", "bsp": "\x08", "vt": "\x0b", "ff": "\x0c", "cr": "\r", "us": "\x1f",
                        "lt": "<", "paren": "("},
             note="strings with exactly one special character take their own branch in fastjson's writer"),
        case("PUT_KV_CONFIG.request.empty_strings", "request", req["PUT_KV_CONFIG"], NS + "PutKVConfigRequestHeader",
             {"namespace": "", "key": "k", "value": ""}, opaque=21, remark="", extFields={"nullValue": None},
             note="empty strings: JSON keeps them, ROCKETMQ writes length 0 and reads them back as null; "
                  "an ext entry whose value is null is left out by both"),
        case("PUT_KV_CONFIG.request.lone_surrogate", "request", req["PUT_KV_CONFIG"], NS + "PutKVConfigRequestHeader",
             {"namespace": "ns", "key": "k", "value": "a\ud800b"}, opaque=22,
             note="a lone UTF-16 surrogate: both UTF-8 encoders write '?'"),
        case("UPDATE_CONSUMER_OFFSET.request.extremes", "request", req["UPDATE_CONSUMER_OFFSET"],
             P + "UpdateConsumerOffsetRequestHeader",
             {"consumerGroup": "CG_golden", "topic": "TopicTest", "queueId": -1,
              "commitOffset": -9223372036854775808}, opaque=2147483647),
        case("SEARCH_OFFSET_BY_TIMESTAMP.request.max", "request", req["SEARCH_OFFSET_BY_TIMESTAMP"],
             P + "SearchOffsetRequestHeader", {"topic": "TopicTest", "queueId": 0, "timestamp": 9223372036854775807},
             opaque=23),
        case("END_TRANSACTION.request.from_check", "request", req["END_TRANSACTION"], P + "EndTransactionRequestHeader",
             {"producerGroup": "PG_golden", "tranStateTableOffset": 7, "commitLogOffset": 4096,
              "commitOrRollback": 12, "fromTransactionCheck": True, "msgId": UNIQ_KEY, "transactionId": UNIQ_KEY},
             opaque=24, oneway=True, remark="executeLocalTransactionBranch exception: java.lang.RuntimeException"),
        case("END_TRANSACTION.request.booleans_false", "request", req["END_TRANSACTION"],
             P + "EndTransactionRequestHeader",
             {"producerGroup": "PG_golden", "tranStateTableOffset": 7, "commitLogOffset": 4096,
              "commitOrRollback": 8, "fromTransactionCheck": False, "msgId": UNIQ_KEY}, opaque=25, oneway=True),
        case("CLONE_GROUP_OFFSET.request.false", "request", req["CLONE_GROUP_OFFSET"],
             P + "CloneGroupOffsetRequestHeader",
             {"srcGroup": "CG_golden", "destGroup": "CG_copy", "topic": "TopicTest", "offline": False}, opaque=26),
        case("HEART_BEAT.request", "request", req["HEART_BEAT"], None, opaque=27, body=body_ref("HeartbeatData")),
        case("HEART_BEAT.request.cpp_client", "request", req["HEART_BEAT"], None, opaque=28, language="CPP",
             version=317, body=body_ref("HeartbeatData.producerOnly")),
        case("HEART_BEAT.response", "response", resp["SUCCESS"], None, opaque=27),
        case("GET_BROKER_CLUSTER_INFO.request", "request", req["GET_BROKER_CLUSTER_INFO"], None, opaque=29,
             note="no custom header: no extFields member at all"),
        case("GET_BROKER_CLUSTER_INFO.response", "response", resp["SUCCESS"], None, opaque=29,
             body=body_ref("ClusterInfo")),
        case("GET_ALL_TOPIC_LIST_FROM_NAMESERVER.response", "response", resp["SUCCESS"], None, opaque=30,
             body=body_ref("TopicList")),
        case("LOCK_BATCH_MQ.request", "request", req["LOCK_BATCH_MQ"], None, opaque=31,
             body=body_ref("LockBatchRequestBody")),
        case("LOCK_BATCH_MQ.response", "response", resp["SUCCESS"], None, opaque=31,
             body=body_ref("LockBatchResponseBody")),
        case("UNLOCK_BATCH_MQ.request.oneway", "request", req["UNLOCK_BATCH_MQ"], None, opaque=32, oneway=True,
             body=body_ref("UnlockBatchRequestBody")),
        case("CHECK_CLIENT_CONFIG.request", "request", req["CHECK_CLIENT_CONFIG"], None, opaque=33,
             body=body_ref("CheckClientRequestBody")),
        case("GET_CONSUME_STATS.response", "response", resp["SUCCESS"], None, opaque=34, body=body_ref("ConsumeStats")),
        case("REQUEST_CODE_NOT_SUPPORTED.response", "response", resp["REQUEST_CODE_NOT_SUPPORTED"], None, opaque=35,
             remark=" request type 999 not supported"),
        case("SYSTEM_BUSY.response", "response", resp["SYSTEM_BUSY"], None, opaque=36,
             remark="[REJECTREQUEST]system busy, start flow control for a while"),
        case("SYSTEM_ERROR.response", "response", resp["SYSTEM_ERROR"], None, opaque=37,
             remark="java.lang.NullPointerException, org.apache.rocketmq.namesrv.processor.DefaultRequestProcessor"
                    ".processRequest(DefaultRequestProcessor.java:87)"),
        case("SYSTEM_ERROR.response.unset_remark", "response", resp["SYSTEM_ERROR"], None, opaque=38,
             remark="not set any response code", note="the remark createResponseCommand(Class) starts with"),
        case("POP_MESSAGE_5x.request.code_overflow", "request", 200050, None, opaque=39,
             note="a code beyond int16 (5.x POP_MESSAGE): ROCKETMQ keeps only its low 16 bits"),
        case("GET_BROKER_CLUSTER_ACL_CONFIG.response.empty_list", "response", resp["SUCCESS"],
             P + "GetBrokerClusterAclConfigResponseHeader", {"plainAccessConfigs": []}, opaque=40,
             note="a List field: makeCustomHeaderToNet writes List.toString(); the reader cannot parse it back"),
    ]


def batch_body() -> bytes:
    """SEND_BATCH_MESSAGE body: two messages as MessageDecoder.encodeMessages lays them out."""
    import struct
    out = b""
    for i, text in enumerate((b"first", b"second")):
        props = f"UNIQ_KEY\x017F00000112340000ABCD00000064000{i + 1}\x02TAGS\x01TagA".encode()
        size = 4 + 4 + 4 + 4 + 4 + len(text) + 2 + len(props)
        out += struct.pack(">iiiii", size, 0, 0, 0, len(text)) + text + struct.pack(">h", len(props)) + props
    return out


def build(schema: dict) -> list:
    """Every header case: a base case per (code, class) of REQUESTS, the unused classes, EXTRA."""
    codes, responses, classes = schema["requestCodes"], schema["responseCodes"], schema["classes"]
    adjust = _adjust()
    out, opaque = [], 100
    for code_name, req, resp in REQUESTS:
        opaque += 1
        for kind, cls in (("request", req), ("response", resp)):
            if cls is None:
                continue
            name = f"{code_name}.{kind}"
            fields = sample_fields(classes[cls]["simpleName"], classes[cls]["fields"])
            c = case(name, kind, codes[code_name] if kind == "request" else responses["SUCCESS"], cls, fields,
                     opaque=opaque, requestCode=code_name)
            extra = copy.deepcopy(adjust.get(name, {}))
            c["fields"].update(extra.pop("fields", {}))
            c.update(extra)
            if cls in NOTES:
                c["note"] = NOTES[cls]
            out.append(c)
    order = NS + "RegisterOrderTopicRequestHeader"
    out.append(case("UNUSED.request.RegisterOrderTopicRequestHeader", "request", 0, order,
                    sample_fields("RegisterOrderTopicRequestHeader", classes[order]["fields"]), opaque=99,
                    note=NOTES[order]))
    for c in _extra(codes, responses):
        prefix = c["name"].split(".")[0]
        c.setdefault("requestCode", prefix if prefix in codes else None)
        out.append(c)
    seen = set()
    for c in out:
        if c["name"] in seen:
            raise ValueError("duplicate case " + c["name"])
        seen.add(c["name"])
    return out
