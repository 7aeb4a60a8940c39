"""Body-decode cases of the golden frame corpus: JSON bodies written the ways a non-Java peer
writes them (standard JSON with quoted keys, other member orders, unknown members, escapes,
pretty printing, a compressed register body made with Python's zlib), fed to the 4.9.4 readers
(fastjson 1.2.69 via RemotingSerializable.decode; RegisterBrokerBody.decode(data, true);
TopicConfig#decode). Nothing here runs Java.
"""

from __future__ import annotations

import json
import struct
import zlib

from catalog_bodies import A, B, C, H, R

ROUTE_STD = ('{"brokerDatas":[{"brokerAddrs":{"0":"127.0.0.1:10911","1":"127.0.0.1:10921"},'
             '"brokerName":"broker-a","cluster":"DefaultCluster"}],"filterServerTable":{},'
             '"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}')
MQ = '{"brokerName":"broker-a","queueId":0,"topic":"TopicTest"}'
MQ1 = '{"brokerName":"broker-a","queueId":1,"topic":"TopicTest"}'


def bcase(name, cls, text=None, hexdata=None, decoder="default", note=None, reencode=True):
    c = {"name": name, "class": cls, "decoder": decoder}
    if text is not None:
        c["text"] = text
    else:
        c["hex"] = hexdata
    if note:
        c["note"] = note
    if not reencode:
        c["reencode"] = False
    return c


def compressed_register(level: int) -> bytes:
    """RegisterBrokerBody's compressed layout, built by hand and deflated by Python's zlib."""
    def chunk(b: bytes) -> bytes:
        return struct.pack(">i", len(b)) + b
    topics = [b"TopicTest 4 4 6 SINGLE_TAG", b"OrderTopic 2 2 6 MULTI_TAG"]
    plain = chunk(b'{"counter":3,"timestamp":1700000000000}') + struct.pack(">i", len(topics))
    plain += b"".join(chunk(t) for t in topics) + chunk(b'["127.0.0.1:10920"]')
    return zlib.compress(plain, level)


BODY_DECODE = [
    bcase("TopicRouteData.standard_compact", R + "TopicRouteData", ROUTE_STD),
    bcase("TopicRouteData.python_json_dumps", R + "TopicRouteData", json.dumps(json.loads(ROUTE_STD)),
          note="json.dumps default separators (', ', ': ')"),
    bcase("TopicRouteData.bare_keys", R + "TopicRouteData", ROUTE_STD.replace('"0":', "0:").replace('"1":', "1:"),
          note="fastjson's default writer form"),
    bcase("TopicRouteData.reordered_unknown_members", R + "TopicRouteData",
          '{"queueDatas":[{"writeQueueNums":4,"topicSysFlag":0,"readQueueNums":4,"perm":6,"brokerName":"broker-a",'
          '"extra":1}],"topicQueueMappingByBroker":null,"filterServerTable":{"127.0.0.1:10911":["127.0.0.1:10920"]},'
          '"brokerDatas":[{"zoneName":"z1","enableActingMaster":false,"cluster":"DefaultCluster",'
          '"brokerName":"broker-a","brokerAddrs":{"1":"127.0.0.1:10921","0":"127.0.0.1:10911"}}]}',
          note="a 5.x name server's members (topicQueueMappingByBroker, zoneName, enableActingMaster)"),
    bcase("TopicRouteData.escapes", R + "TopicRouteData",
          '{"orderTopicConf":"\\u00e9\\/\\ud83d\\ude00\\u2028é中","brokerDatas":[],"queueDatas":[],'
          '"filterServerTable":{}}'),
    bcase("TopicRouteData.broker_id_not_a_number", R + "TopicRouteData",
          '{"brokerDatas":[{"brokerAddrs":{"master":"127.0.0.1:10911"},"brokerName":"b","cluster":"c"}]}'),
    bcase("TopicRouteData.broker_id_beyond_long", R + "TopicRouteData",
          '{"brokerDatas":[{"brokerAddrs":{"9223372036854775808":"x"},"brokerName":"b","cluster":"c"}]}'),
    bcase("TopicRouteData.nulls", R + "TopicRouteData",
          '{"brokerDatas":null,"filterServerTable":null,"orderTopicConf":null,"queueDatas":null}'),
    bcase("ClusterInfo.quoted_keys", B + "ClusterInfo",
          '{"brokerAddrTable":{"broker-a":{"brokerAddrs":{"0":"127.0.0.1:10911"},"brokerName":"broker-a",'
          '"cluster":"DefaultCluster"}},"clusterAddrTable":{"DefaultCluster":["broker-a","broker-a"]}}'),
    bcase("HeartbeatData.go_client", H + "HeartbeatData",
          '{"clientID":"10.0.0.7@12345","producerDataSet":[],"consumerDataSet":[{"groupName":"CG_go",'
          '"consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":'
          '"CONSUME_FROM_FIRST_OFFSET","subscriptionDataSet":[{"classFilterMode":false,"topic":"TopicTest",'
          '"subString":"*","tagsSet":[],"codeSet":[],"subVersion":1700000000000,"expressionType":"TAG"}],'
          '"unitMode":false}]}'),
    bcase("HeartbeatData.enum_ordinals_and_string_codes", H + "HeartbeatData",
          '{"clientID":"c","producerDataSet":[],"consumerDataSet":[{"groupName":"CG","consumeType":1,'
          '"messageModel":1,"consumeFromWhere":4,"subscriptionDataSet":[{"topic":"T","subString":"A",'
          '"tagsSet":["A"],"codeSet":["65"],"subVersion":"1700000000000","expressionType":"TAG"}],'
          '"unitMode":"true"}]}'),
    bcase("HeartbeatData.unknown_enum_name", H + "HeartbeatData",
          '{"clientID":"c","consumerDataSet":[{"groupName":"CG","consumeType":"CONSUME_POP","messageModel":'
          '"CLUSTERING","consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","subscriptionDataSet":[],'
          '"unitMode":false}],"producerDataSet":[],"heartbeatFingerprint":7,"isWithoutSub":false}',
          note="a 5.x consume type and 5.x members"),
    bcase("LockBatchRequestBody.python", B + "LockBatchRequestBody",
          '{"consumerGroup": "CG", "clientId": "c", "mqSet": [' + MQ + ", " + MQ1 + ", " + MQ + "]}",
          note="a duplicate queue collapses in the HashSet"),
    bcase("ConsumeStats.object_keys", A + "ConsumeStats",
          '{"consumeTps":1.5,"offsetTable":{' + MQ + ':{"brokerOffset":10,"consumerOffset":7,"lastTimestamp":1}}}',
          note="the form fastjson writes"),
    bcase("ConsumeStats.string_keys", A + "ConsumeStats",
          '{"consumeTps":1.5,"offsetTable":{' + json.dumps(MQ) + ':{"brokerOffset":10,"consumerOffset":7,'
          '"lastTimestamp":1}}}', note="the key as a JSON string holding the object, as a standard writer would"),
    bcase("ResetOffsetBody.object_keys", B + "ResetOffsetBody",
          '{"offsetTable":{' + MQ + ":10," + MQ1 + ":20}}"),
    bcase("ResetOffsetBody.pairs_list", B + "ResetOffsetBody",
          '{"offsetTable":[{"key":' + MQ + ',"value":10}]}'),
    bcase("ConsumerOffsetSerializeWrapper.quoted_keys", B + "ConsumerOffsetSerializeWrapper",
          '{"offsetTable":{"TopicTest@CG":{"0":5,"1":"7"}}}'),
    bcase("RegisterBrokerBody.python", B + "RegisterBrokerBody",
          '{"filterServerList": [], "topicConfigSerializeWrapper": {"dataVersion": {"counter": 1, "timestamp": '
          '1700000000000}, "topicConfigTable": {"TopicTest": {"order": false, "perm": 6, "readQueueNums": 4, '
          '"topicFilterType": "SINGLE_TAG", "topicName": "TopicTest", "topicSysFlag": 0, "writeQueueNums": 4}}}}'),
    bcase("RegisterBrokerBody.compressed_python_level6", B + "RegisterBrokerBody",
          hexdata=compressed_register(6).hex(), decoder="compressed",
          note="Python zlib.compress at its default level: the reader does not care which level made it"),
    bcase("RegisterBrokerBody.compressed_truncated", B + "RegisterBrokerBody",
          hexdata=compressed_register(9)[:-12].hex(), decoder="compressed"),
    bcase("DataVersion.strings", C + "DataVersion", '{"counter":"5","timestamp":"1700000000000"}'),
    bcase("KVTable.non_string_values", B + "KVTable", '{"table":{"a":1,"b":true,"c":null,"d":{"x":1},"e":2.50}}'),
    bcase("TopicList.duplicates", B + "TopicList", '{"topicList":["a","a","b"],"brokerAddr":null}'),
    bcase("TopicConfig.text", C + "TopicConfig", "TopicTest 8 4 6 MULTI_TAG", decoder="topicConfigText"),
    bcase("TopicConfig.text_bad", C + "TopicConfig", "TopicTest 8 4", decoder="topicConfigText"),
    bcase("SubscriptionGroupConfig.unknown_members", C + "subscription.SubscriptionGroupConfig",
          '{"groupName":"CG","consumeEnable":false,"retryMaxTimes":3,"groupRetryPolicy":{"type":"EXPONENTIAL"},'
          '"consumeMessageOrderly":true}', note="5.x members"),
    bcase("GetConsumerListByGroupResponseBody.null_entry", C + "protocol.header.GetConsumerListByGroupResponseBody",
          '{"consumerIdList":["a",null,""]}'),
    bcase("Body.empty", R + "TopicRouteData", ""),
    bcase("Body.invalid_json", R + "TopicRouteData", '{"queueDatas":['),
    bcase("Body.trailing_garbage", R + "TopicRouteData", ROUTE_STD + "]"),
    bcase("Body.json_null", R + "TopicRouteData", "null"),
]
