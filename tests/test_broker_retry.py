"""CONSUMER_SEND_MSG_BACK, the retry ladder, the DLQ, and the orderly client model (4.9.4)."""

from __future__ import annotations

import pytest

from broker_helpers import BORN, T0, UNIQ, make_broker, stored
from pymq_ref.broker.response import MessageNotFoundError, SubscriptionGroupNotExistError
from pymq_ref.broker.retry import OrderlyRetryState, client_send_back_message, retry_schedule
from pymq_ref.store.config_files import SubscriptionGroupConfig

OMID = "7F00000100002A9F0000000000000000"  # offset msg id of the first record


def send_v3(b):
    return b.send_message(topic="TopicTest", body=b"Hello RocketMQ", queue_id=0, born_timestamp=T0, born_host=BORN,
                          properties={"TAGS": "TagA", "KEYS": "KEY1", "WAIT": "true", "UNIQ_KEY": UNIQ})


def test_first_send_back_parks_in_schedule_topic_with_hand_derived_order(tmp_path):
    with make_broker(tmp_path) as b:
        send_v3(b)
        r = b.consumer_send_msg_back(offset=0, group="CG")
        assert (r.topic, r.queue_id, r.delay_level, r.dead_letter) == ("%RETRY%CG", 0, 3, False)
        assert r.stored_topic == "SCHEDULE_TOPIC_XXXX"
        rec = b.store.look_message_by_offset(r.put.append_result.wrote_offset)
        assert (rec.topic, rec.queue_id, rec.reconsume_times) == ("SCHEDULE_TOPIC_XXXX", 2, 1)
        # decoded map KEYS(7) UNIQ_KEY(12) CLUSTER(12) TAGS(14); + RETRY_TOPIC(5) WAIT(13) DELAY(13)
        # ORIGIN_MESSAGE_ID(4); the store's rewrite adds REAL_TOPIC(1) and REAL_QID(15): 10 keys, 16 buckets
        assert rec.properties_string.encode() == stored(
            ("REAL_TOPIC", "%RETRY%CG"), ("ORIGIN_MESSAGE_ID", OMID), ("RETRY_TOPIC", "TopicTest"), ("KEYS", "KEY1"),
            ("UNIQ_KEY", UNIQ), ("CLUSTER", "DefaultCluster"), ("WAIT", "false"), ("DELAY", "3"), ("TAGS", "TagA"),
            ("REAL_QID", "0"))
        # copied fields
        assert (rec.body, rec.born_timestamp, rec.born_host, rec.sys_flag) == (b"Hello RocketMQ", T0, BORN, 0)
        assert b.topics.select_topic_config("%RETRY%CG").perm == 6


def test_delay_level_from_request_and_minus_one_goes_straight_to_dlq(tmp_path):
    with make_broker(tmp_path) as b:
        send_v3(b)
        assert b.consumer_send_msg_back(offset=0, group="CG", delay_level=5).delay_level == 5
        r = b.consumer_send_msg_back(offset=0, group="CG", delay_level=-1)
        assert r.dead_letter and r.topic == "%DLQ%CG" and r.stored_topic == "%DLQ%CG"
        rec = b.store.look_message_by_offset(r.put.append_result.wrote_offset)
        assert rec.properties_string.encode() == stored(
            ("ORIGIN_MESSAGE_ID", OMID), ("RETRY_TOPIC", "TopicTest"), ("KEYS", "KEY1"), ("UNIQ_KEY", UNIQ),
            ("CLUSTER", "DefaultCluster"), ("WAIT", "false"), ("DELAY", "0"), ("TAGS", "TagA"))
        tc = b.topics.select_topic_config("%DLQ%CG")
        assert (tc.read_queue_nums, tc.write_queue_nums, tc.perm) == (1, 1, 6)


def test_full_ladder_through_the_delay_service_then_dlq(tmp_path):
    """Consume from %RETRY%CG, fail, send back — 16 times; the 17th failure lands in %DLQ%CG.
    (Short levels "1s … 18s": the delay service polls each level every 100 ms of simulated time.)"""
    levels = " ".join(f"{i}s" for i in range(1, 19))
    with make_broker(tmp_path, store_kw={"message_delay_level": levels}) as b:
        send_v3(b)
        offset_to_fail, retry_offset, t_start = 0, 0, b.clock.now_ms()
        waited = []
        for attempt in range(16):
            r = b.consumer_send_msg_back(offset=offset_to_fail, group="CG")
            assert (r.delay_level, r.dead_letter) == (3 + attempt, False)
            before = b.clock.now_ms()
            while b.get_max_offset("%RETRY%CG", 0) <= retry_offset:
                b.scheduler.advance(1000)
            waited.append(b.clock.now_ms() - before)
            got = b.pull_message(consumer_group="CG", topic="%RETRY%CG", queue_id=0, queue_offset=retry_offset)
            [msg] = got.records()
            assert msg.reconsume_times == attempt + 1
            assert msg.properties["ORIGIN_MESSAGE_ID"] == OMID and msg.properties["RETRY_TOPIC"] == "TopicTest"
            offset_to_fail, retry_offset = msg.phy_offset, retry_offset + 1
        expected = [d for _, _, d in retry_schedule(b.store.delay_table)]
        assert waited == expected == [(3 + i) * 1000 for i in range(16)]
        r = b.consumer_send_msg_back(offset=offset_to_fail, group="CG")
        assert r.dead_letter and r.stored_topic == "%DLQ%CG"
        dlq = b.pull_message(consumer_group="X", topic="%DLQ%CG", queue_id=0, queue_offset=0).records()[0]
        assert dlq.reconsume_times == 17 and dlq.properties["DELAY"] == "0"
        assert dlq.properties["ORIGIN_MESSAGE_ID"] == OMID and dlq.properties["REAL_TOPIC"] == "%RETRY%CG"
        assert b.clock.now_ms() - t_start == sum(expected)


def test_per_group_and_per_request_max(tmp_path):
    with make_broker(tmp_path) as b:
        send_v3(b)
        b.subscriptions.update_subscription_group_config(SubscriptionGroupConfig("G0", retry_max_times=0))
        assert b.consumer_send_msg_back(offset=0, group="G0").dead_letter
        assert not b.consumer_send_msg_back(offset=0, group="G0", max_reconsume_times=1).dead_letter
        assert b.consumer_send_msg_back(offset=0, group="CG", max_reconsume_times=0).dead_letter


def test_retry_queue_nums_zero_stores_nothing(tmp_path):
    with make_broker(tmp_path) as b:
        send_v3(b)
        b.subscriptions.update_subscription_group_config(SubscriptionGroupConfig("Z", retry_queue_nums=0))
        end = b.store.get_max_phy_offset()
        r = b.consumer_send_msg_back(offset=0, group="Z")
        assert r.put is None and b.store.get_max_phy_offset() == end


def test_bad_send_back_requests(tmp_path):
    from pymq_ref.broker.config import BrokerConfig
    with make_broker(tmp_path, config=BrokerConfig(auto_create_subscription_group=False)) as b:
        send_v3(b)
        end = b.store.get_max_phy_offset()
        with pytest.raises(SubscriptionGroupNotExistError):
            b.consumer_send_msg_back(offset=0, group="Unknown")
        with pytest.raises(MessageNotFoundError, match="look message by offset failed, 5"):
            b.consumer_send_msg_back(offset=5, group="TOOLS_CONSUMER")
        with pytest.raises(MessageNotFoundError):
            b.consumer_send_msg_back(offset=10 ** 9, group="TOOLS_CONSUMER")
        assert b.store.get_max_phy_offset() == end


def test_retry_max_times_persisted_per_group(tmp_path):
    with make_broker(tmp_path) as b:
        b.subscriptions.update_subscription_group_config(SubscriptionGroupConfig("G5", retry_max_times=5))
    with make_broker(tmp_path) as b:
        assert b.subscriptions.find_subscription_group_config("G5").retry_max_times == 5
        assert b.subscriptions.find_subscription_group_config("New").retry_max_times == 16


def test_orderly_client_suspends_then_sends_to_dlq(tmp_path):
    with make_broker(tmp_path) as b:
        send_v3(b)
        msg = b.store.look_message_by_offset(0)
        state = OrderlyRetryState("OG", max_reconsume_times=3)
        decisions = []
        times = 0
        while True:
            d = state.on_suspend(msg, times)
            decisions.append(d.action)
            if d.action == "send_back":
                break
            assert d.suspend_ms == 1000
            times = d.reconsume_times
        assert decisions == ["redeliver"] * 3 + ["send_back"]
        req = d.request
        assert (req.topic, req.reconsume_times, req.max_reconsume_times) == ("%RETRY%OG", 3, 3)
        assert "RECONSUME_TIME" not in req.properties_text and "DELAY\x016" in req.properties_text
        r = b.send_message(req)
        # 4.9.4: routed to %DLQ%OG but the client's DELAY survives: parked at level 6 first
        assert r.put.record.properties["REAL_TOPIC"] == "%DLQ%OG" and r.stored_topic == "SCHEDULE_TOPIC_XXXX"
        b.scheduler.advance(3 * 60_000 + 2000)
        dlq = b.pull_message(consumer_group="X", topic="%DLQ%OG", queue_id=0, queue_offset=0).records()
        assert len(dlq) == 1 and dlq[0].reconsume_times == 3


def test_orderly_default_max_is_java_int_max():
    assert OrderlyRetryState("G").max_reconsume_times == 2**31 - 1


def test_concurrent_client_fallback_message(tmp_path):
    with make_broker(tmp_path) as b:
        send_v3(b)
        msg = b.store.look_message_by_offset(0)
        req = client_send_back_message(msg, "CG", reconsume_times=2, max_reconsume_times=16, orderly=False)
        assert (req.reconsume_times, req.max_reconsume_times) == (3, 16)
        r = b.send_message(req)
        assert r.put.record.properties["REAL_TOPIC"] == "%RETRY%CG"
        assert r.put.record.queue_id == 4  # level 5 = 3 + 2
