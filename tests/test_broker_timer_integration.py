"""The 5.x timer wheel inside the Broker: send -> rmq_sys_wheel_timer -> the real topic when due,
across restarts; and, with ``timer_wheel_enable`` off (the default), 4.9.4's behaviour."""

from __future__ import annotations

import os

import pytest

from broker_helpers import BORN, T0, UNIQ, make_broker
from pymq_ref.broker.response import MessageIllegalResponseError
from pymq_ref.broker.scheduler import ManualScheduler
from pymq_ref.broker.timer import TIMER_TOPIC, TimerConfig
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.delay import SCHEDULE_TOPIC

START = T0 + 123  # make_broker's clock
TIMER = TimerConfig(timer_slots_total=120, timer_roll_window_slot=30, mapped_file_size_timer_log=52 * 20 + 16)


def timer_broker(root, scheduler=None, **kw):
    return make_broker(root, scheduler, store_kw={"timer_wheel_enable": True}, timer_config=TIMER, **kw)


def send(b, i=1, **props):
    return b.send_message(topic="TimerTopic", body=f"timer {i}".encode(), queue_id=1, born_timestamp=T0,
                          born_host=BORN, properties={"TAGS": "TagA", "UNIQ_KEY": f"{UNIQ[:-4]}{i:04X}", **props})


def pulled(b, topic="TimerTopic", queue_id=1):
    r = b.pull_message(consumer_group="CG", topic=topic, queue_id=queue_id, queue_offset=0, sys_flag=4)  # FLAG_SUBSCRIPTION, "*"
    return r.records()


@pytest.mark.parametrize("prop,value,due", [
    ("TIMER_DELAY_SEC", "5", START + 5000),
    ("TIMER_DELAY_MS", "5000", START + 5000),
    ("TIMER_DELIVER_MS", str(START + 5000), START + 5000)])
def test_timer_message_is_parked_then_delivered_to_its_topic(tmp_path, prop, value, due):
    with timer_broker(tmp_path) as b:
        r = send(b, **{prop: value})
        assert (r.stored_topic, r.stored_queue_id, r.queue_id) == (TIMER_TOPIC, 0, 1)
        parked = b.store.look_message_by_offset(r.commit_log_offsets[0])
        slot = due // 1000 * 1000  # rounded down to the precision
        assert parked.topic == TIMER_TOPIC and parked.properties[prop] == value
        assert (parked.properties["TIMER_OUT_MS"], parked.properties["REAL_TOPIC"],
                parked.properties["REAL_QID"]) == (str(slot), "TimerTopic", "1")
        assert pulled(b) == []
        b.scheduler.advance(slot - START - 1)  # just before its slot: enqueued, not delivered
        assert b.timer_store.stats.enqueued == 1 and pulled(b) == []
        b.scheduler.advance(1000 + 300)  # the slot is dequeued once the write time has passed it
        (rec,) = pulled(b)
        assert rec.body == b"timer 1" and rec.queue_id == 1 and rec.properties["TAGS"] == "TagA"
        assert rec.properties["REAL_TOPIC"] == "TimerTopic" and rec.properties[prop] == value
        assert START // 1000 * 1000 <= int(rec.properties["TIMER_ENQUEUE_MS"]) < slot  # the wheel's write time
        assert slot < int(rec.properties["TIMER_DEQUEUE_MS"]) <= b.clock.now_ms()
        assert b.timer_store.stats.delivered == 1
    assert os.path.getsize(tmp_path / "timerwheel") == 120 * 2 * 32
    assert os.path.exists(tmp_path / "config" / "timercheck")


def test_rolled_timer_is_delivered_at_its_time(tmp_path):
    """45 s with a 30-slot roll window: filed rolled, re-queued into the timer topic, then delivered."""
    with timer_broker(tmp_path) as b:
        send(b, TIMER_DELAY_SEC="45")
        b.scheduler.advance(44_000)
        assert pulled(b) == [] and b.timer_store.stats.rolled == 1
        b.scheduler.advance(2_000)
        (rec,) = pulled(b)
        assert rec.properties["TIMER_ROLL_TIMES"] == "1"


@pytest.mark.parametrize("enqueued_before_restart", [False, True])
def test_restart_in_between_loses_nothing(tmp_path, enqueued_before_restart):
    b = timer_broker(tmp_path)
    for i in range(5):
        send(b, i, TIMER_DELAY_SEC=str(10 + i))
    if enqueued_before_restart:
        b.scheduler.advance(3000)
        assert b.timer_store.stats.enqueued == 5
    now = b.clock.now_ms()
    b.shutdown()
    b2 = timer_broker(tmp_path, ManualScheduler(ManualClock(now)))
    try:
        assert pulled(b2) == []
        b2.scheduler.advance(START + 16_000 - now)
        got = pulled(b2)
        assert sorted(r.body for r in got) == [f"timer {i}".encode() for i in range(5)]  # each exactly once
        assert b2.get_max_offset(TIMER_TOPIC, 0) == 5  # nothing parked twice
    finally:
        b2.shutdown()


def test_refused_timers_answer_message_illegal(tmp_path):
    with timer_broker(tmp_path) as b:
        with pytest.raises(MessageIllegalResponseError, match="timer message illegal, the delay time should not be bigger than the max delay"):
            send(b, TIMER_DELAY_SEC="soon")
        with pytest.raises(MessageIllegalResponseError, match=f"max delay {3 * 86400 * 1000}ms"):
            send(b, TIMER_DELAY_SEC=str(3 * 86400 + 1))
        assert b.get_max_offset(TIMER_TOPIC, 0) == 0 and b.get_max_offset("TimerTopic", 1) == 0


def test_delay_level_wins_over_timer_properties(tmp_path):
    with timer_broker(tmp_path) as b:
        r = send(b, DELAY="1", TIMER_DELAY_SEC="60")
        assert r.stored_topic == SCHEDULE_TOPIC
        parked = b.store.look_message_by_offset(r.commit_log_offsets[0])
        assert "TIMER_DELAY_SEC" not in parked.properties
        b.scheduler.advance(2500)
        (rec,) = pulled(b)
        assert "TIMER_DELAY_SEC" not in rec.properties and b.timer_store.stats.enqueued == 0


def test_past_delivery_time_is_stored_at_once(tmp_path):
    with timer_broker(tmp_path) as b:
        r = send(b, TIMER_DELIVER_MS=str(START - 1))
        assert r.stored_topic == "TimerTopic"
        (rec,) = pulled(b)
        assert rec.properties["TIMER_DELIVER_MS"] == str(START - 1) and "TIMER_OUT_MS" not in rec.properties


def test_flag_off_ignores_timer_properties_like_4_9_4(tmp_path):
    with make_broker(tmp_path) as b:
        assert b.timer_store is None
        r = send(b, TIMER_DELAY_SEC="5", TIMER_DELIVER_MS=str(START + 60_000))
        assert r.stored_topic == "TimerTopic"
        (rec,) = pulled(b)  # pullable at once, properties stored as sent
        assert rec.properties["TIMER_DELAY_SEC"] == "5" and "TIMER_OUT_MS" not in rec.properties
        b.scheduler.advance(70_000)
        assert len(pulled(b)) == 1 and b.get_max_offset(TIMER_TOPIC, 0) == 0
    assert not os.path.exists(tmp_path / "timerwheel") and not os.path.exists(tmp_path / "timerlog")


def test_a_congested_slot_answers_system_error_with_5x_remark(tmp_path):
    from pymq_ref.broker.response import BrokerSystemError
    config = TimerConfig(timer_slots_total=120, timer_roll_window_slot=30, mapped_file_size_timer_log=52 * 20 + 16,
                         timer_congest_num_each_slot=1)
    with make_broker(tmp_path, store_kw={"timer_wheel_enable": True}, timer_config=config) as b:
        for i in range(2):
            send(b, i, TIMER_DELAY_SEC="5")
        b.scheduler.advance(100)  # both are in the wheel's slot now
        with pytest.raises(BrokerSystemError) as refused:
            send(b, 2, TIMER_DELAY_SEC="5")
        assert refused.value.remark == ("timer message is under flow control, max num limit is 2 or the current value "
                                        "is greater than 1 and less than 2, trigger random flow control")
        assert b.get_max_offset(TIMER_TOPIC, 0) == 2
