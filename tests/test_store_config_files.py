"""Config JSON files: fastjson form, tmp/bak protocol, tolerant reading with .bak fallback."""

from __future__ import annotations

from pymq_ref.store.config_files import (DELAY_OFFSET_JSON, DataVersion, OffsetTableFile, SubscriptionGroupConfig,
                                         SubscriptionGroupFile, TopicConfig, TopicsFile, read_config_file,
                                         write_config_file)
from pymq_ref.store.store_config import FlushDiskType, MessageStoreConfig


def test_topics_json_form_and_roundtrip(tmp_path):
    f = TopicsFile(str(tmp_path))
    f.data_version = DataVersion(3, 1700000000000)
    f.topic_config_table["TopicTest"] = TopicConfig("TopicTest", 4, 4)
    f.persist()
    text = (tmp_path / "config" / "topics.json").read_text()
    assert text == ('{\n\t"dataVersion":{\n\t\t"counter":3,\n\t\t"timestamp":1700000000000\n\t},\n'
                    '\t"topicConfigTable":{\n\t\t"TopicTest":{\n\t\t\t"order":false,\n\t\t\t"perm":6,\n'
                    '\t\t\t"readQueueNums":4,\n\t\t\t"topicFilterType":"SINGLE_TAG",\n\t\t\t"topicName":"TopicTest",\n'
                    '\t\t\t"topicSysFlag":0,\n\t\t\t"writeQueueNums":4\n\t\t}\n\t}\n}')
    g = TopicsFile(str(tmp_path))
    assert g.load() and g.topic_config_table == f.topic_config_table and g.data_version.counter == 3


def test_offset_files_unquoted_keys(tmp_path):
    f = OffsetTableFile(str(tmp_path), DELAY_OFFSET_JSON)
    f.offset_table = {1: 0, 2: 0, 3: 15, 4: 2}
    f.persist()
    assert (tmp_path / "config" / "delayOffset.json").read_text() == '{\n\t"offsetTable":{1:0,2:0,3:15,4:2\n\t}\n}'
    c = OffsetTableFile(str(tmp_path))
    (tmp_path / "config" / "consumerOffset.json").write_text(
        '{\n\t"offsetTable":{\n\t\t"TopicTest@g":{0:12,1:9,2:11,3:10\n\t\t}\n\t}\n}')
    assert c.load() and c.offset_table == {"TopicTest@g": {0: 12, 1: 9, 2: 11, 3: 10}}


def test_bak_written_and_used_as_fallback(tmp_path):
    path = str(tmp_path / "config" / "x.json")
    write_config_file(path, '{"a":1}')
    write_config_file(path, '{"a":2}')
    assert (tmp_path / "config" / "x.json.bak").read_text() == '{"a":1}'
    assert not (tmp_path / "config" / "x.json.tmp").exists()
    (tmp_path / "config" / "x.json").write_text("{garbage")
    assert read_config_file(path) == {"a": 1}
    (tmp_path / "config" / "x.json").write_text("")
    assert read_config_file(path) == {"a": 1}
    assert read_config_file(str(tmp_path / "none.json")) is None


def test_subscription_group_defaults(tmp_path):
    f = SubscriptionGroupFile(str(tmp_path))
    f.subscription_group_table["g"] = SubscriptionGroupConfig("g")
    f.persist()
    g = SubscriptionGroupFile(str(tmp_path))
    g.load()
    assert g.subscription_group_table["g"] == SubscriptionGroupConfig("g", retry_max_times=16)
    assert '"whichBrokerWhenConsumeSlowly":1' in (tmp_path / "config" / "subscriptionGroup.json").read_text()


def test_message_store_config_defaults_and_java_names():
    c = MessageStoreConfig()
    assert c.mapped_file_size_commit_log == 1 << 30 and c.mapped_file_size_consume_queue == 6_000_000
    assert c.max_message_size == 4 << 20 and c.flush_disk_type is FlushDiskType.ASYNC_FLUSH
    assert c.max_index_num == 20_000_000 and c.delay_level_table[18] == 7_200_000
    c = MessageStoreConfig.from_java_properties({"mappedFileSizeConsumeQueue": "101", "flushDiskType": "SYNC_FLUSH",
                                                 "messageIndexSafe": "true", "unknownKey": "1"})
    assert c.mapped_file_size_consume_queue_rounded == 120 and c.flush_disk_type is FlushDiskType.SYNC_FLUSH
    assert c.message_index_safe is True
