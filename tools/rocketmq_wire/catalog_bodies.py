"""Body cases of the golden frame corpus: a value (in the corpus's neutral view, see
corpus/frames/README.md) for every JSON body class of 4.9.4, and the encodings to record.

A map or collection written as ``{"$type": JavaClass, "$initialCapacity": n, "$entries"|"$items": …}``
is built as that Java class with that capacity — the iteration order of a HashMap or
ConcurrentHashMap depends on its table size, and RocketMQ's managers size theirs (e.g.
``broker/.../topic/TopicConfigManager.java``: ``new ConcurrentHashMap<>(1024)``,
``namesrv/.../routeinfo/RouteInfoManager.java``: ``new HashMap<>(128)`` for brokerAddrTable).
Nothing here runs Java.
"""

from __future__ import annotations

from catalog_headers import AWKWARD, CLIENT_ID

C = "org.apache.rocketmq.common."
B = C + "protocol.body."
R = C + "protocol.route."
H = C + "protocol.heartbeat."
A = C + "admin."
CHM = "java.util.concurrent.ConcurrentHashMap"
HM = "java.util.HashMap"


def sized(jtype: str, capacity: int, entries):
    return {"$type": jtype, "$initialCapacity": capacity, "$entries": entries}


def mq(topic: str, broker: str, qid: int) -> dict:
    return {"topic": topic, "brokerName": broker, "queueId": qid}


def pairs(*kv) -> list:
    return [{"key": k, "value": v} for k, v in kv]


def dv(counter: int, ts: int = 1700000000000) -> dict:
    return {"timestamp": ts, "counter": counter}


def topic_config(name, r=4, w=4, perm=6, sysflag=0, order=False, ftype="SINGLE_TAG"):
    return {"topicName": name, "readQueueNums": r, "writeQueueNums": w, "perm": perm,
            "topicFilterType": ftype, "topicSysFlag": sysflag, "order": order}


def sub(topic, expr, tags=(), codes=(), version=1700000000001, etype="TAG"):
    return {"classFilterMode": False, "topic": topic, "subString": expr, "tagsSet": list(tags),
            "codeSet": list(codes), "subVersion": version, "expressionType": etype}


QUEUES = [
    {"brokerName": "broker-a", "readQueueNums": 4, "writeQueueNums": 4, "perm": 6, "topicSysFlag": 0},
    {"brokerName": "broker-b", "readQueueNums": 8, "writeQueueNums": 8, "perm": 6, "topicSysFlag": 0},
]
BROKER_A = {"cluster": "DefaultCluster", "brokerName": "broker-a",
            "brokerAddrs": pairs((0, "127.0.0.1:10911"), (1, "127.0.0.1:10921"))}
# ids 16 and 0 share a bucket of a 16-slot HashMap (inserted 16 first); 2 < 10 but "10" < "2"
BROKER_B = {"cluster": "DefaultCluster", "brokerName": "broker-b",
            "brokerAddrs": pairs((16, "127.0.0.1:11011"), (0, "127.0.0.1:10931"), (2, "127.0.0.1:10951"),
                                 (10, "127.0.0.1:11001"), (1, "127.0.0.1:10941"))}
ROUTE = {"queueDatas": QUEUES, "brokerDatas": [BROKER_A, BROKER_B],
         "filterServerTable": {"127.0.0.1:10911": ["127.0.0.1:10920", "127.0.0.1:10921"]}}
TOPICS = sized(CHM, 1024, {
    "TopicTest": topic_config("TopicTest"),
    "TBW102": topic_config("TBW102", 8, 8, 7),
    "%RETRY%CG_golden": topic_config("%RETRY%CG_golden", 1, 1),
    "OrderTopic": topic_config("OrderTopic", 2, 2, 6, 0, True),
    "SCHEDULE_TOPIC_XXXX": topic_config("SCHEDULE_TOPIC_XXXX", 18, 18),
    "UnitTopic": topic_config("UnitTopic", 4, 4, 6, 1, False, "MULTI_TAG"),
})
HEARTBEAT = {
    "clientID": CLIENT_ID,
    "producerDataSet": [{"groupName": "PG_golden"}],
    "consumerDataSet": [{
        "groupName": "CG_golden", "consumeType": "CONSUME_PASSIVELY", "messageModel": "CLUSTERING",
        "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET", "unitMode": False,
        "subscriptionDataSet": [
            sub("%RETRY%CG_golden", "*", version=1700000000002),
            sub("TopicTest", "TagA || TagB", ["TagA", "TagB"], [2598919, 2598920]),
            sub("SqlTopic", "a > 5 AND b = 'x'", etype="SQL92", version=1700000000003),
        ]}],
}
MQS = [mq("TopicTest", "broker-a", 0), mq("TopicTest", "broker-a", 1), mq("TopicTest", "broker-b", 0),
       mq("TopicTest", "broker-b", 3)]
GROUP = {"groupName": "CG_golden", "consumeEnable": True, "consumeFromMinEnable": True,
         "consumeBroadcastEnable": True, "retryQueueNums": 1, "retryMaxTimes": 16, "brokerId": 0,
         "whichBrokerWhenConsumeSlowly": 1, "notifyConsumerIdsChangedEnable": True}
CONNECTION = {"clientId": CLIENT_ID, "clientAddr": "127.0.0.1:50000", "language": "JAVA", "version": 401}
PAC = {"accessKey": "RocketMQ", "secretKey": "12345678", "whiteRemoteAddress": "192.168.0.*", "admin": False,
       "defaultTopicPerm": "DENY", "defaultGroupPerm": "SUB", "topicPerms": ["topicA=DENY", "topicB=PUB|SUB"],
       "groupPerms": ["groupA=DENY"]}
STATUS = {"pullRT": 1.5, "pullTPS": 100.0, "consumeRT": 0.25, "consumeOKTPS": 99.75,
          "consumeFailedTPS": 0.0, "consumeFailedMsgs": 3}
PQ = {"commitOffset": 10, "cachedMsgMinOffset": 11, "cachedMsgMaxOffset": 20, "cachedMsgCount": 10,
      "cachedMsgSizeInMiB": 1, "transactionMsgMinOffset": 0, "transactionMsgMaxOffset": 0,
      "transactionMsgCount": 0, "locked": True, "tryUnlockTimes": 0, "lastLockTimestamp": 1700000000000,
      "droped": False, "lastPullTimestamp": 1700000000100, "lastConsumeTimestamp": 1700000000200}


def body(name, cls, value, encodings=("default",), codes=(), note=None):
    b = {"name": name, "class": cls, "value": value, "encodings": list(encodings), "codes": list(codes)}
    if note:
        b["note"] = note
    return b


BODIES = [
    body("TopicRouteData", R + "TopicRouteData", ROUTE, ("default", "standard"),
         ["GET_ROUTEINFO_BY_TOPIC"], "standard = what the 4.9.4 name server answers a request of version >= 401"),
    body("TopicRouteData.orderTopicConf", R + "TopicRouteData", {"orderTopicConf": "broker-a:4;broker-b:4", **ROUTE},
         ("default", "standard"), ["GET_ROUTEINFO_BY_TOPIC"]),
    body("TopicRouteData.escapes", R + "TopicRouteData", {
        "orderTopicConf": AWKWARD,
        "queueDatas": [{**QUEUES[0], "brokerName": "broker-é中😀"}],
        "brokerDatas": [{"cluster": "Cluster/é", "brokerName": "broker-é中😀",
                         "brokerAddrs": pairs((9007199254740993, "127.0.0.1:10911"), (-1, "x"))}],
        "filterServerTable": {"a/b\u2028c": ["\x7f", ""]}}, ("default", "standard"), ["GET_ROUTEINFO_BY_TOPIC"],
        "escaping of both writers; a brokerId beyond 2^53 and a negative one"),
    body("TopicRouteData.empty", R + "TopicRouteData",
         {"queueDatas": [], "brokerDatas": [], "filterServerTable": {}}, ("default", "standard")),
    body("ClusterInfo", B + "ClusterInfo", {
        "brokerAddrTable": sized(HM, 128, {"broker-a": BROKER_A, "broker-b": BROKER_B,
                                           "broker-c": {"cluster": "OtherCluster", "brokerName": "broker-c",
                                                        "brokerAddrs": pairs((0, "127.0.0.1:12911"))}}),
        "clusterAddrTable": sized(HM, 32, {"DefaultCluster": ["broker-a", "broker-b"], "OtherCluster": ["broker-c"]}),
    }, codes=["GET_BROKER_CLUSTER_INFO"]),
    body("DataVersion", C + "DataVersion", dv(5), codes=["QUERY_DATA_VERSION"]),
    body("DataVersion.beyond_2_53", C + "DataVersion", dv(9007199254740993, -9007199254740993),
         ("default", "standard"), note="BrowserCompatible writes longs beyond +-(2^53-1) as strings"),
    body("TopicConfig", C + "TopicConfig", topic_config("TopicTest", 8, 4, 6, 0, True, "MULTI_TAG"),
         ("default", "topicConfigText"), note="topicConfigText = TopicConfig#encode(), the compressed register form"),
    body("TopicConfigSerializeWrapper", B + "TopicConfigSerializeWrapper",
         {"topicConfigTable": TOPICS, "dataVersion": dv(7)}, ("default", "pretty"), ["GET_ALL_TOPIC_CONFIG"],
         "pretty = topics.json as TopicConfigManager persists it"),
    body("RegisterBrokerBody", B + "RegisterBrokerBody",
         {"topicConfigSerializeWrapper": {"topicConfigTable": TOPICS, "dataVersion": dv(7)},
          "filterServerList": []}, ("default", "compressed"), ["REGISTER_BROKER"],
         "compressed = RegisterBrokerBody#encode(true) (compressedRegister=true); decoded with decode(data, true)"),
    body("RegisterBrokerBody.filterServers", B + "RegisterBrokerBody",
         {"topicConfigSerializeWrapper": {"topicConfigTable": {"TopicTest": topic_config("TopicTest")},
                                          "dataVersion": dv(1)},
          "filterServerList": ["127.0.0.1:10920", "127.0.0.1:10921"]}, ("default", "compressed"), ["REGISTER_BROKER"]),
    body("HeartbeatData", H + "HeartbeatData", HEARTBEAT, codes=["HEART_BEAT"]),
    body("HeartbeatData.producerOnly", H + "HeartbeatData",
         {"clientID": CLIENT_ID, "producerDataSet": [{"groupName": "PG_golden"}], "consumerDataSet": []},
         codes=["HEART_BEAT"]),
    body("CheckClientRequestBody", B + "CheckClientRequestBody",
         {"clientId": CLIENT_ID, "group": "CG_golden",
          "subscriptionData": sub("SqlTopic", "a > 5 AND b = 'x'", etype="SQL92")}, codes=["CHECK_CLIENT_CONFIG"]),
    body("LockBatchRequestBody", B + "LockBatchRequestBody",
         {"consumerGroup": "CG_golden", "clientId": CLIENT_ID, "mqSet": MQS}, codes=["LOCK_BATCH_MQ"]),
    body("UnlockBatchRequestBody", B + "UnlockBatchRequestBody",
         {"consumerGroup": "CG_golden", "clientId": CLIENT_ID, "mqSet": MQS[:2]}, codes=["UNLOCK_BATCH_MQ"]),
    body("LockBatchResponseBody", B + "LockBatchResponseBody", {"lockOKMQSet": MQS[1:]}, codes=["LOCK_BATCH_MQ"]),
    body("GetConsumerListByGroupResponseBody", C + "protocol.header.GetConsumerListByGroupResponseBody",
         {"consumerIdList": [CLIENT_ID, "127.0.0.1@4243#1700000000001", "10.0.0.7@99#1700000000002"]},
         codes=["GET_CONSUMER_LIST_BY_GROUP"]),
    body("ConsumeStats", A + "ConsumeStats", {"offsetTable": pairs(
        (MQS[0], {"brokerOffset": 100, "consumerOffset": 90, "lastTimestamp": 1700000000000}),
        (MQS[1], {"brokerOffset": 50, "consumerOffset": 50, "lastTimestamp": 1700000000001}),
        (MQS[3], {"brokerOffset": 0, "consumerOffset": 0, "lastTimestamp": 0})), "consumeTps": 12.5},
        codes=["GET_CONSUME_STATS"]),
    body("ConsumeStats.nan", A + "ConsumeStats", {"offsetTable": [], "consumeTps": "NaN"},
         note="a double that is not a number"),
    body("TopicStatsTable", A + "TopicStatsTable", {"offsetTable": pairs(
        (MQS[0], {"minOffset": 0, "maxOffset": 100, "lastUpdateTimestamp": 1700000000000}),
        (MQS[2], {"minOffset": 5, "maxOffset": 9, "lastUpdateTimestamp": 1700000000005}))},
        codes=["GET_TOPIC_STATS_INFO"]),
    body("ResetOffsetBody", B + "ResetOffsetBody", {"offsetTable": pairs((MQS[0], 10), (MQS[1], 20), (MQS[2], 30))},
         codes=["INVOKE_BROKER_TO_RESET_OFFSET", "RESET_CONSUMER_CLIENT_OFFSET"]),
    body("ResetOffsetBodyForC", B + "ResetOffsetBodyForC",
         {"offsetTable": [{**MQS[0], "offset": 10}, {**MQS[2], "offset": 30}]},
         codes=["INVOKE_BROKER_TO_RESET_OFFSET"], note="the broker's answer to a C++ client (language CPP)"),
    body("ConsumerOffsetSerializeWrapper", B + "ConsumerOffsetSerializeWrapper", {"offsetTable": sized(CHM, 512, {
        "TopicTest@CG_golden": sized(CHM, 32, pairs((0, 5), (1, 7), (3, 9))),
        "%RETRY%CG_golden@CG_golden": sized(CHM, 32, pairs((0, 2)))})}, ("default", "pretty"),
        ["GET_ALL_CONSUMER_OFFSET"], "pretty = consumerOffset.json"),
    body("SubscriptionGroupConfig", C + "subscription.SubscriptionGroupConfig", GROUP,
         codes=["UPDATE_AND_CREATE_SUBSCRIPTIONGROUP"]),
    body("SubscriptionGroupWrapper", B + "SubscriptionGroupWrapper", {
        "subscriptionGroupTable": sized(CHM, 1024, {
            "CG_golden": GROUP, "CG_other": {**GROUP, "groupName": "CG_other", "consumeBroadcastEnable": False,
                                             "retryMaxTimes": 3, "whichBrokerWhenConsumeSlowly": 2}}),
        "dataVersion": dv(3)}, codes=["GET_ALL_SUBSCRIPTIONGROUP_CONFIG"]),
    body("KVTable", B + "KVTable", {"table": {
        "brokerVersionDesc": "V4_9_4", "brokerVersion": "401", "msgPutTotalTodayNow": "20",
        "commitLogDirCapacity": "Total : 100.0 GiB, Free : 50.0 GiB.", "dispatchBehindBytes": "0",
        "putTps": "0.0 0.0 0.0", "runtime": "[ 0 days, 0 hours, 1 minutes, 2 seconds ]"}},
        codes=["GET_BROKER_RUNTIME_INFO", "GET_KVLIST_BY_NAMESPACE", "REGISTER_BROKER"]),
    body("KVTable.orderTopics", B + "KVTable", {"table": {"OrderTopic": "broker-a:2;broker-b:2"}},
         codes=["REGISTER_BROKER"]),
    body("TopicList", B + "TopicList", {"topicList": ["TopicTest", "TBW102", "%RETRY%CG_golden", "OrderTopic",
                                                     "DefaultCluster", "broker-a"]},
         codes=["GET_ALL_TOPIC_LIST_FROM_NAMESERVER", "GET_TOPICS_BY_CLUSTER"]),
    body("TopicList.brokerAddr", B + "TopicList", {"topicList": ["SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRACE_TOPIC"],
                                                   "brokerAddr": "127.0.0.1:10911"},
         codes=["GET_SYSTEM_TOPIC_LIST_FROM_NS"]),
    body("GroupList", B + "GroupList", {"groupList": ["CG_golden", "CG_other", "CG_a"]},
         codes=["QUERY_TOPIC_CONSUME_BY_WHO"]),
    body("ConsumeByWho", B + "ConsumeByWho", {"consumedGroup": ["CG_golden", "CG_a"], "notConsumedGroup": ["CG_b"],
                                             "topic": "TopicTest", "queueId": 1, "offset": 12}),
    body("ConsumerConnection", B + "ConsumerConnection", {
        "connectionSet": [CONNECTION],
        "subscriptionTable": {"TopicTest": sub("TopicTest", "TagA || TagB", ["TagA", "TagB"], [2598919, 2598920]),
                              "%RETRY%CG_golden": sub("%RETRY%CG_golden", "*")},
        "consumeType": "CONSUME_PASSIVELY", "messageModel": "CLUSTERING",
        "consumeFromWhere": "CONSUME_FROM_FIRST_OFFSET"}, codes=["GET_CONSUMER_CONNECTION_LIST"],
        note="one Connection: Connection has no hashCode(), so several would come out in identity-hash order"),
    body("ProducerConnection", B + "ProducerConnection", {"connectionSet": [{**CONNECTION, "language": "CPP",
                                                                           "version": 317}]},
         codes=["GET_PRODUCER_CONNECTION_LIST"]),
    body("ConsumerRunningInfo", B + "ConsumerRunningInfo", {
        "properties": {"PROP_NAMESERVER_ADDR": "127.0.0.1:9876", "PROP_THREADPOOL_CORE_SIZE": "20",
                       "PROP_CONSUME_ORDERLY": "false", "PROP_CONSUME_TYPE": "CONSUME_PASSIVELY",
                       "PROP_CLIENT_VERSION": "V4_9_4", "PROP_CONSUMER_START_TIMESTAMP": "1700000000000",
                       "consumeThreadMin": "20", "pullBatchSize": "32"},
        "subscriptionSet": [sub("TopicTest", "TagA", ["TagA"], [2598919]), sub("%RETRY%CG_golden", "*")],
        "mqTable": pairs((MQS[2], PQ), (MQS[0], {**PQ, "locked": False, "commitOffset": 3})),
        "statusTable": {"TopicTest": STATUS, "%RETRY%CG_golden": {**STATUS, "pullTPS": 0.0}},
        "jstack": "\"main\" #1 prio=5\n\tat java.lang.Thread.sleep(Native Method)\n"},
        codes=["GET_CONSUMER_RUNNING_INFO"]),
    body("ConsumeMessageDirectlyResult", B + "ConsumeMessageDirectlyResult",
         {"order": False, "autoCommit": True, "consumeResult": "CR_SUCCESS", "remark": None, "spentTimeMills": 5},
         codes=["CONSUME_MESSAGE_DIRECTLY"]),
    body("ConsumeMessageDirectlyResult.exception", B + "ConsumeMessageDirectlyResult",
         {"order": True, "autoCommit": False, "consumeResult": "CR_THROW_EXCEPTION",
          "remark": "java.lang.RuntimeException: boom", "spentTimeMills": 12}, codes=["CONSUME_MESSAGE_DIRECTLY"]),
    body("QueryConsumeTimeSpanBody", B + "QueryConsumeTimeSpanBody", {"consumeTimeSpanSet": [
        {"messageQueue": MQS[0], "minTimeStamp": 1700000000000, "maxTimeStamp": 1700000100000,
         "consumeTimeStamp": 1700000050000, "delayTime": 50000}]}, codes=["QUERY_CONSUME_TIME_SPAN"],
        note="also carries the *Str getters (UtilAll.formatDate, local time zone; recorded with TZ=UTC)"),
    body("QueryCorrectionOffsetBody", B + "QueryCorrectionOffsetBody",
         {"correctionOffsets": pairs((0, 10), (1, 9223372036854775807), (17, 3))}, codes=["QUERY_CORRECTION_OFFSET"]),
    body("QueryConsumeQueueResponseBody", B + "QueryConsumeQueueResponseBody", {
        "subscriptionData": sub("TopicTest", "TagA", ["TagA"], [2598919]), "filterData": None,
        "queueData": [{"physicOffset": 0, "physicSize": 198, "tagsCode": 2598919, "extendDataJson": None,
                       "bitMap": None, "eval": True, "msg": "TagA"}], "maxQueueIndex": 1, "minQueueIndex": 0},
        codes=["QUERY_CONSUME_QUEUE"]),
    body("BrokerStatsData", B + "BrokerStatsData", {
        "statsMinute": {"sum": 10, "tps": 0.16666666666666666, "avgpt": 1.0},
        "statsHour": {"sum": 600, "tps": 1e-7, "avgpt": 1234.5678},
        "statsDay": {"sum": 14400, "tps": 1e21, "avgpt": 0.0}}, codes=["VIEW_BROKER_STATS_DATA"]),
    body("BrokerStatsData.doubles", B + "BrokerStatsData", {
        "statsMinute": {"sum": -1, "tps": 1e7, "avgpt": 123456789.0},
        "statsHour": {"sum": 0, "tps": 5e-324, "avgpt": 0.30000000000000004},
        "statsDay": {"sum": 9223372036854775807, "tps": 1.7976931348623157e308, "avgpt": 100.0}},
        note="fastjson writes doubles with its RyuDouble (shortest digits, Java's E notation)"),
    body("BrokerStatsItem.small_doubles", B + "BrokerStatsItem", {"sum": 1, "tps": 0.001, "avgpt": 9.999999999999999e-4}),
    body("ConsumeStatsList", B + "ConsumeStatsList", {
        "consumeStatsList": [{"CG_golden": [{"offsetTable": pairs(
            (MQS[0], {"brokerOffset": 100, "consumerOffset": 90, "lastTimestamp": 1700000000000})),
            "consumeTps": 1.0}]}], "brokerAddr": "127.0.0.1:10911", "totalDiff": 10},
        codes=["GET_BROKER_CONSUME_STATS"]),
    body("GetConsumerStatusBody", B + "GetConsumerStatusBody", {
        "messageQueueTable": pairs((MQS[0], 10), (MQS[1], 11)),
        "consumerTable": {CLIENT_ID: pairs((MQS[0], 10))}},
        codes=["INVOKE_BROKER_TO_GET_CONSUMER_STATUS", "GET_CONSUMER_STATUS_FROM_CLIENT"]),
    body("ProducerTableInfo", B + "ProducerTableInfo", {"data": {"PG_golden": [
        {"clientId": CLIENT_ID, "remoteIP": "127.0.0.1:50000", "language": "JAVA", "version": 401,
         "lastUpdateTimestamp": 1700000000000}]}}, codes=["GET_ALL_PRODUCER_INFO"]),
    body("ProducerInfo", B + "ProducerInfo", {"clientId": CLIENT_ID, "remoteIP": "127.0.0.1:50000",
                                             "language": "GO", "version": 401, "lastUpdateTimestamp": 1700000000000}),
    body("ClusterAclVersionInfo", B + "ClusterAclVersionInfo", {
        "brokerName": "broker-a", "brokerAddr": "127.0.0.1:10911", "aclConfigDataVersion": dv(1),
        "allAclConfigDataVersion": {"/home/rocketmq/conf/plain_acl.yml": dv(1)}, "clusterName": "DefaultCluster"},
        codes=["GET_BROKER_CLUSTER_ACL_INFO"]),
    body("GetBrokerClusterAclConfigResponseBody", C + "protocol.header.GetBrokerClusterAclConfigResponseBody",
         {"globalWhiteAddrs": ["10.10.103.*", "192.168.0.*"], "plainAccessConfigs": [PAC]},
         codes=["GET_BROKER_CLUSTER_ACL_CONFIG"]),
    body("GetBrokerClusterAclConfigResponseBody.escapes", C + "protocol.header.GetBrokerClusterAclConfigResponseBody",
         {"globalWhiteAddrs": ["\u2029", "a/b", "\x85", "é", ""],
          "plainAccessConfigs": [{**PAC, "accessKey": 'a"b', "secretKey": "x\u2028", "whiteRemoteAddress": "\x7f",
                                  "defaultTopicPerm": "\x01", "defaultGroupPerm": "\\", "topicPerms": [AWKWARD],
                                  "groupPerms": ["\n"]}]}, ("default", "standard"),
         note="one special character per string, in bean members and in a List<String> (each has its own writer path)"),
    body("OffsetMovedEvent", C + "protocol.topic.OffsetMovedEvent",
         {"consumerGroup": "CG_golden", "messageQueue": MQS[0], "offsetRequest": 100, "offsetNew": 0},
         note="body of a message the broker writes to topic OFFSET_MOVED_EVENT"),
    body("RollbackStats", A + "RollbackStats", {"brokerName": "broker-a", "queueId": 1, "brokerOffset": 100,
                                               "consumerOffset": 90, "timestampOffset": 80, "rollbackOffset": 80},
         note="no 4.9.4 wire body carries it; recorded with the default writer for completeness"),
    body("KVConfigSerializeWrapper", "org.apache.rocketmq.namesrv.kvconfig.KVConfigSerializeWrapper",
         {"configTable": {"ORDER_TOPIC_CONFIG": {"OrderTopic": "broker-a:2;broker-b:2", "TopicTest": "broker-a:4"},
                          "ns2": {"k": "v"}}}, note="kvConfig.json as KVConfigManager#persist writes it"),
    body("DelayOffsetSerializeWrapper", "org.apache.rocketmq.store.schedule.DelayOffsetSerializeWrapper",
         {"offsetTable": sized(CHM, 32, pairs((1, 5), (2, 0), (3, 12), (18, 1)))}, ("default", "pretty"),
         ["GET_ALL_DELAY_OFFSET"], "delayOffset.json; GET_ALL_DELAY_OFFSET answers with its text"),
    body("OffsetSerializeWrapper", "org.apache.rocketmq.client.consumer.store.OffsetSerializeWrapper",
         {"offsetTable": sized(CHM, 16, pairs((MQS[0], 10), (MQS[3], 7)))}, ("default", "pretty"),
         note="the broadcasting consumer's local offsets.json (AtomicLong values)"),
]


def body_ref(name: str, encoding: str = "default") -> dict:
    """A header case's body: the value of body case ``name``, encoded by Java as ``encoding``."""
    for b in BODIES:
        if b["name"] == name:
            return {"class": b["class"], "value": b["value"], "encoding": encoding}
    raise KeyError(name)
