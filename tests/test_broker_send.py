"""SEND_MESSAGE / SEND_BATCH_MESSAGE through the Broker: bytes, checks, typed errors."""

from __future__ import annotations

import json
import os

import pytest

from broker_helpers import BORN, T0, UNIQ, make_broker, stored, wire
from pymq_ref.broker.response import (IllegalQueueIdError, IllegalTopicError, MessageIllegalResponseError,
                                      NoPermissionError, ResponseCode, SubscriptionGroupNotExistError,
                                      TopicNotExistError)
from pymq_ref.broker.send import SendStatus
from pymq_ref.formats.batch import BatchEntry, encode_batch
from pymq_ref.formats import fastjson
from pymq_ref.store.config_files import SubscriptionGroupConfig

VECTOR3_HEX = (
    "000000C6DAA320A769C865ED000000000000000000000000000000000000000000000000000000000000018BCFE568007F0000010000C3500000018BCFE5687B7F00000100002A9F0000000000000000000000000000000E48656C6C6F20526F636B65744D5109546F7069635465737400544B455953014B45593102554E49515F4B455901374630303030303131323334303030304142434430303030303036343030303102434C55535445520144656661756C74436C757374657202544147530154616741")


def raw(broker, offset: int, size: int) -> bytes:
    return broker.store.commit_log.get_data(offset, size)


def test_plain_send_is_vector3_byte_for_byte(tmp_path):
    # client map TAGS, KEYS, WAIT, UNIQ_KEY -> its HashMap puts them on the wire as KEYS, UNIQ_KEY, WAIT, TAGS
    with make_broker(tmp_path) as b:
        r = b.send_message(topic="TopicTest", body=b"Hello RocketMQ", queue_id=0, born_timestamp=T0, born_host=BORN,
                           properties={"TAGS": "TagA", "KEYS": "KEY1", "WAIT": "true", "UNIQ_KEY": UNIQ})
        assert r.send_status is SendStatus.SEND_OK and r.code is ResponseCode.SUCCESS
        assert r.msg_id == UNIQ and r.offset_msg_id == "7F00000100002A9F0000000000000000"
        assert (r.queue_id, r.queue_offset, r.region_id, r.trace_on) == (0, 0, "DefaultRegion", True)
        assert raw(b, 0, 198).hex().upper() == VECTOR3_HEX
        # the in-memory map still has WAIT (re-put at the end of bucket 13)
        assert list(r.put.record.properties) == ["KEYS", "UNIQ_KEY", "CLUSTER", "WAIT", "TAGS"]


def test_wait_false_is_dropped_too_and_cluster_is_added_without_wait(tmp_path):
    with make_broker(tmp_path) as b:
        b.send_message(topic="T", body=b"x", queue_id=1, properties=wire(("WAIT", "false"), ("TAGS", "a")))
        rec = b.store.look_message_by_offset(0)
        assert rec.properties_string.encode() == stored(("CLUSTER", "DefaultCluster"), ("TAGS", "a"))


def test_auto_create_from_tbw102_and_random_queue(tmp_path):
    with make_broker(tmp_path) as b:
        r = b.send_message(topic="Fresh", body=b"x", default_topic_queue_nums=4)
        tc = b.topics.select_topic_config("Fresh")
        assert (tc.read_queue_nums, tc.write_queue_nums, tc.perm) == (4, 4, 6)  # TBW102 perm 7 minus INHERIT
        assert 0 <= r.queue_id < 4
        on_disk = fastjson.loads(open(os.path.join(tmp_path, "config", "topics.json")).read())
        assert on_disk["topicConfigTable"]["Fresh"]["writeQueueNums"] == 4
        assert on_disk["dataVersion"]["counter"] == 1


def test_no_auto_create_means_topic_not_exist(tmp_path):
    from pymq_ref.broker.config import BrokerConfig
    with make_broker(tmp_path, config=BrokerConfig(auto_create_topic_enable=False)) as b:
        assert b.topics.select_topic_config("TBW102") is None
        with pytest.raises(TopicNotExistError) as e:
            b.send_message(topic="Nope", body=b"x")
        assert e.value.code == 17
        assert b.store.get_max_phy_offset() == 0


@pytest.mark.parametrize("topic,err,code", [
    ("", IllegalTopicError, 1), ("bad topic", IllegalTopicError, 1), ("x" * 128, IllegalTopicError, 1),
    ("SCHEDULE_TOPIC_XXXX", NoPermissionError, 16), ("RMQ_SYS_TRANS_HALF_TOPIC", NoPermissionError, 16),
    ("RMQ_SYS_TRANS_OP_HALF_TOPIC", NoPermissionError, 16), ("TRANS_CHECK_MAX_TIME_TOPIC", NoPermissionError, 16),
    ("SELF_TEST_TOPIC", NoPermissionError, 16), ("OFFSET_MOVED_EVENT", NoPermissionError, 16)])
def test_topic_checks_are_typed_and_write_nothing(tmp_path, topic, err, code):
    with make_broker(tmp_path) as b:
        with pytest.raises(err) as e:
            b.send_message(topic=topic, body=b"x")
        assert e.value.code == code and e.value.remark
        assert b.store.get_max_phy_offset() == 0


def test_queue_id_beyond_the_topic(tmp_path):
    with make_broker(tmp_path) as b:
        b.send_message(topic="Q", body=b"x", default_topic_queue_nums=2)
        with pytest.raises(IllegalQueueIdError, match="queueId\\[2\\] is illegal"):
            b.send_message(topic="Q", body=b"x", queue_id=2)


def test_queue_selection_is_deterministic_with_the_seed(tmp_path):
    picks = []
    for run in range(2):
        with make_broker(tmp_path / str(run)) as b:
            picks.append([b.send_message(topic="R", body=b"x").queue_id for _ in range(20)])
    assert picks[0] == picks[1] and len(set(picks[0])) > 1


def test_retry_topic_send_past_max_goes_to_dlq_keeping_the_clients_delay(tmp_path):
    with make_broker(tmp_path) as b:
        # below the max: stored in %RETRY%G (after the client's DELAY parks it)
        r1 = b.send_message(topic="%RETRY%G", body=b"x", reconsume_times=3, max_reconsume_times=16,
                            properties=wire(("DELAY", "6"), ("TAGS", "a")))
        assert r1.stored_topic == "SCHEDULE_TOPIC_XXXX" and r1.put.record.properties["REAL_TOPIC"] == "%RETRY%G"
        # auto-created from TBW102 like any topic (4 queues); the 1-queue rule is only the fallback
        assert b.topics.select_topic_config("%RETRY%G").write_queue_nums == 4
        # at the max: %DLQ%G queue 0 — and 4.9.4 loses its DELAY=0 (set before the map is replaced)
        r2 = b.send_message(topic="%RETRY%G", body=b"x", reconsume_times=16, max_reconsume_times=16,
                            properties=wire(("DELAY", "19"), ("TAGS", "a")))
        assert r2.stored_topic == "SCHEDULE_TOPIC_XXXX"
        assert r2.put.record.properties["REAL_TOPIC"] == "%DLQ%G" and r2.put.record.properties["DELAY"] == "18"
        tc = b.topics.select_topic_config("%DLQ%G")
        assert (tc.read_queue_nums, tc.perm) == (1, 6)
        # without DELAY it lands in the DLQ directly, RECONSUMETIMES = header value
        r3 = b.send_message(topic="%RETRY%G", body=b"x", reconsume_times=16, properties=wire(("TAGS", "a")))
        rec = b.store.look_message_by_offset(r3.commit_log_offsets[0])
        assert (rec.topic, rec.queue_id, rec.reconsume_times) == ("%DLQ%G", 0, 16)


def test_retry_topic_uses_group_retry_max_times(tmp_path):
    with make_broker(tmp_path) as b:
        b.subscriptions.update_subscription_group_config(SubscriptionGroupConfig("G2", retry_max_times=2))
        r = b.send_message(topic="%RETRY%G2", body=b"x", reconsume_times=2, properties=wire(("TAGS", "a")))
        assert r.stored_topic == "%DLQ%G2"
        r = b.send_message(topic="%RETRY%G2", body=b"x", reconsume_times=1, properties=wire(("TAGS", "a")))
        assert r.stored_topic == "%RETRY%G2"


def test_retry_topic_of_unknown_group_without_auto_create(tmp_path):
    from pymq_ref.broker.config import BrokerConfig
    with make_broker(tmp_path, config=BrokerConfig(auto_create_subscription_group=False)) as b:
        with pytest.raises(SubscriptionGroupNotExistError) as e:
            b.send_message(topic="%RETRY%Nobody", body=b"x")
        assert e.value.code == 26


def test_batch_send_entries_get_batch_properties(tmp_path):
    body = encode_batch([BatchEntry(body=b"one", properties={"UNIQ_KEY": "U1", "TAGS": "a"}),
                         BatchEntry(body=b"two", properties={"UNIQ_KEY": "U2", "KEYS": "k"}, flag=7)])
    with make_broker(tmp_path) as b:
        r = b.send_batch(topic="B", body=body, queue_id=0, properties=wire(("WAIT", "true")))
        assert r.msg_id == "U1,U2" and len(r.offset_msg_id.split(",")) == 2
        assert r.queue_offset == 0
        recs = b.pull_message(consumer_group="C", topic="B", queue_id=0, queue_offset=0).records()
        assert [x.body for x in recs] == [b"one", b"two"] and recs[1].flag == 7
        # entry text, \x02, then the batch map: WAIT (13) before CLUSTER? no: CLUSTER 12, WAIT 13
        assert recs[0].properties_string.encode() == stored(("UNIQ_KEY", "U1"), ("TAGS", "a"),
                                                            ("CLUSTER", "DefaultCluster"), ("WAIT", "true"))
        assert [x.queue_offset for x in recs] == [0, 1]


def test_batch_with_delay_is_illegal_and_writes_nothing(tmp_path):
    body = encode_batch([BatchEntry(body=b"one")])
    with make_broker(tmp_path) as b:
        with pytest.raises(MessageIllegalResponseError) as e:
            b.send_batch(topic="B", body=body, properties=wire(("DELAY", "2")))
        assert e.value.code == 13 and b.store.get_max_phy_offset() == 0


def test_rejected_transaction_message(tmp_path):
    from pymq_ref.broker.config import BrokerConfig
    with make_broker(tmp_path, config=BrokerConfig(reject_transaction_message=True)) as b:
        with pytest.raises(NoPermissionError, match="transaction"):
            b.send_message(topic="T", body=b"x", properties=wire(("TRAN_MSG", "true"), ("PGROUP", "P")))


def test_send_before_start_is_a_state_error(tmp_path):
    from pymq_ref.broker.broker import Broker
    from pymq_ref.broker.response import BrokerStateError
    b = Broker(str(tmp_path))
    with pytest.raises(BrokerStateError):
        b.send_message(topic="T", body=b"x")
