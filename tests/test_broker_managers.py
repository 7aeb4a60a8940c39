"""Topic, subscription-group and consumer-offset managers: built-ins, creation rules, files."""

from __future__ import annotations

import os

from broker_helpers import make_broker
from pymq_ref.broker.config import BrokerConfig
from pymq_ref.broker.constants import perm_to_string
from pymq_ref.broker.java_maps import chm_order, chm_table_size
from pymq_ref.broker.offsets import ConsumerOffsetManager
from pymq_ref.broker.subscriptions import BUILTIN_GROUPS, SubscriptionGroupManager
from pymq_ref.broker.topics import TopicConfigManager
from pymq_ref.formats import fastjson
from pymq_ref.store.clock import ManualClock


def test_builtin_topics_4_9_4(tmp_path):
    m = TopicConfigManager(str(tmp_path), BrokerConfig(), ManualClock())
    t = {k: (v.read_queue_nums, v.write_queue_nums, v.perm) for k, v in m.topic_config_table.items()}
    assert t == {"SELF_TEST_TOPIC": (1, 1, 6), "TBW102": (8, 8, 7), "BenchmarkTest": (1024, 1024, 6),
                 "DefaultCluster": (16, 16, 7), "broker-a": (1, 1, 7), "OFFSET_MOVED_EVENT": (1, 1, 6),
                 "SCHEDULE_TOPIC_XXXX": (18, 18, 6), "DefaultCluster_REPLY_TOPIC": (1, 1, 6)}
    m2 = TopicConfigManager(str(tmp_path), BrokerConfig(auto_create_topic_enable=False, cluster_topic_enable=False,
                                                        trace_topic_enable=True), ManualClock())
    assert "TBW102" not in m2.topic_config_table and m2.topic_config_table["DefaultCluster"].perm == 1
    assert m2.topic_config_table["RMQ_SYS_TRACE_TOPIC"].write_queue_nums == 1
    assert perm_to_string(7) == "RWX" and perm_to_string(2) == "-W-"


def test_auto_create_rules(tmp_path):
    m = TopicConfigManager(str(tmp_path), BrokerConfig(), ManualClock(5))
    tc = m.create_topic_in_send_message_method("A", "TBW102", 100)
    assert (tc.write_queue_nums, tc.perm) == (8, 6)  # min(client 100, TBW102's 8)
    assert m.create_topic_in_send_message_method("B", "SELF_TEST_TOPIC", 4) is None  # template not inheritable
    assert m.create_topic_in_send_message_method("C", "NoSuchTemplate", 4) is None
    assert m.data_version.counter == 1
    retry = m.create_topic_in_send_message_back_method("%RETRY%G", 1, 6)
    assert (retry.read_queue_nums, retry.perm) == (1, 6)
    assert m.create_topic_in_send_message_back_method("%RETRY%G", 9, 2) is retry  # never changed once created
    text = open(os.path.join(tmp_path, "config", "topics.json")).read()
    assert fastjson.loads(text)["dataVersion"] == {"counter": 2, "timestamp": 5}
    assert list(fastjson.loads(text)["topicConfigTable"]) == chm_order(m.topic_config_table, 1024)
    assert '\t\t"%RETRY%G":{\n\t\t\t"order":false,\n\t\t\t"perm":6,\n\t\t\t"readQueueNums":1,' in text


def test_topics_reload_and_bak_fallback(tmp_path):
    root = str(tmp_path)
    m = TopicConfigManager(root, BrokerConfig(), ManualClock())
    m.create_topic_in_send_message_method("A", "TBW102", 4)
    m.create_topic_in_send_message_method("B", "TBW102", 2)
    path = os.path.join(root, "config", "topics.json")
    with open(path, "w") as f:
        f.write("{ broken")  # a torn write: the previous version is in .bak
    m2 = TopicConfigManager(root, BrokerConfig(), ManualClock())
    assert m2.load()
    assert "A" in m2.topic_config_table and "B" not in m2.topic_config_table and m2.data_version.counter == 1


def test_subscription_groups(tmp_path):
    m = SubscriptionGroupManager(str(tmp_path), BrokerConfig(auto_create_subscription_group=False), ManualClock())
    assert set(m.subscription_group_table) == set(BUILTIN_GROUPS) and len(BUILTIN_GROUPS) == 7
    assert m.find_subscription_group_config("App") is None
    sys_group = m.find_subscription_group_config("CID_RMQ_SYS_TRANS")  # system groups always
    assert (sys_group.retry_max_times, sys_group.retry_queue_nums, sys_group.consume_enable) == (16, 1, True)
    obj = fastjson.loads(open(os.path.join(tmp_path, "config", "subscriptionGroup.json")).read())
    assert obj["subscriptionGroupTable"]["CID_RMQ_SYS_TRANS"] == {
        "brokerId": 0, "consumeBroadcastEnable": True, "consumeEnable": True, "consumeFromMinEnable": True,
        "groupName": "CID_RMQ_SYS_TRANS", "notifyConsumerIdsChangedEnable": True, "retryMaxTimes": 16,
        "retryQueueNums": 1, "whichBrokerWhenConsumeSlowly": 1}


def test_offsets_file_format(tmp_path):
    m = ConsumerOffsetManager(str(tmp_path))
    assert m.query_offset("G", "T", 0) == -1
    for q, o in ((3, 10), (0, 12), (1, 9)):
        m.commit_offset("G", "T", q, o)
    m.commit_offset("CID_RMQ_SYS_TRANS", "RMQ_SYS_TRANS_HALF_TOPIC", 0, 26)
    m.persist()
    text = open(os.path.join(tmp_path, "config", "consumerOffset.json")).read()
    assert '"T@G":{0:12,1:9,3:10\n\t\t}' in text
    m2 = ConsumerOffsetManager(str(tmp_path))
    assert m2.load() and m2.offset_table == {"T@G": {0: 12, 1: 9, 3: 10}, "RMQ_SYS_TRANS_HALF_TOPIC@CID_RMQ_SYS_TRANS": {0: 26}}
    assert m2.which_topic_by_consumer("G") == {"T"}


def test_chm_table_sizes():
    assert chm_table_size(1024, 0) == 2048 and chm_table_size(512, 0) == 1024 and chm_table_size(32, 0) == 64
    assert chm_table_size(16, 24) == 64
    assert chm_order([5, 1, 64, 3], 32) == [64, 1, 3, 5]  # 64 & 63 == 0


def test_broker_config_from_properties():
    c = BrokerConfig.from_java_properties({"brokerClusterName": "C1", "brokerIP1": "10.0.0.9", "listenPort": "10921",
                                           "longPollingEnable": "false", "unknown": "x"})
    assert (c.broker_cluster_name, c.broker_ip1, c.listen_port, c.long_polling_enable) == ("C1", "10.0.0.9", 10921, False)
    assert str(c.store_host) == "10.0.0.9:10921"


def test_broker_restart_keeps_all_config(tmp_path):
    with make_broker(tmp_path, schedule_service=False) as b:
        b.send_message(topic="Keep", body=b"x")
        b.update_consumer_offset("G", "Keep", 0, 1)
        b.subscriptions.find_subscription_group_config("G")
    with make_broker(tmp_path, schedule_service=False) as b:
        assert b.topics.select_topic_config("Keep") is not None
        assert b.query_consumer_offset("G", "Keep", 0) == 1
        assert "G" in b.subscriptions.subscription_group_table
