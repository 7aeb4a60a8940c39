"""5.x POP on the broker facade, in simulated time: pop / ack / change invisible time, the CK and
ACK records in the revive topic, the revive service's retries, the proxy's DLQ rule, restarts."""

from __future__ import annotations

import pytest

from pymq_ref.broker.pop import PopConfig, PopRequest, PopStatus
from pymq_ref.broker.pop.receive import ReceiveFilter, apply_filter, max_attempts
from pymq_ref.broker.pop.service import NoMessageError
from pymq_ref.broker.response import BrokerError, ResponseCode, TopicNotExistError
from pymq_ref.formats import pop
from pymq_ref.formats.beans import SubscriptionGroupConfig
from pymq_ref.formats.properties import TAGS, UNIQ_KEY

from broker_helpers import make_broker, wire

TOPIC, GROUP = "TopicTest", "GID_pop"


def send(broker, n, topic=TOPIC, tag="TagA", start=0):
    for i in range(start, start + n):
        broker.send_message(topic=topic, body=f"m{i}".encode(), queue_id=0,
                            properties=wire((TAGS, tag), (UNIQ_KEY, f"U{i:04d}")))


def revive_records(broker):
    out = []
    for qid in range(broker.pop.config.revive_queue_num):
        got = broker.store.get_message("x", broker.pop.revive_topic, qid, 0, 64)
        out += [(qid, r.tags, pop.decode_by_tag(r.tags, r.body)) for r in got.records()]
    return out


@pytest.fixture
def broker(tmp_path):
    b = make_broker(tmp_path / "b", pop_config=PopConfig(revive_queue_num=2))
    send(b, 3)  # auto-creates the topic (4 queues), all in queue 0
    yield b
    b.shutdown()


def popped(broker, n=32, invisible=30_000, **kw):
    return broker.pop_message(PopRequest(GROUP, TOPIC, max_msg_nums=n, invisible_time=invisible, **kw))


def test_pop_writes_a_checkpoint_and_hides_the_messages(broker):
    res = popped(broker)
    assert res.status is PopStatus.FOUND and [m.record.body for m in res.messages] == [b"m0", b"m1", b"m2"]
    m = res.messages[0]
    assert m.extra_info == f"0 {res.pop_time} 30000 {res.revive_qid} 0 broker-a 0 0"
    assert m.record.properties[pop.POP_CK] == m.extra_info
    assert m.receipt_handle == m.extra_info + f" {m.commit_log_offset}"
    [(qid, tag, ck)] = revive_records(broker)
    assert (qid, tag) == (res.revive_qid, "ck")
    assert (ck.start_offset, ck.num, ck.queue_offset_diff, ck.topic, ck.cid) == (0, 3, (0, 1, 2), TOPIC, GROUP)
    assert broker.offsets.query_offset(GROUP, TOPIC, 0) == 3
    again = popped(broker)
    assert again.status is PopStatus.NO_NEW_MSG and again.messages == []


def test_acked_messages_never_come_back_unacked_ones_do_with_one_more_attempt(broker):
    res = popped(broker)
    for m in res.messages[:2]:
        broker.ack_message(GROUP, m.real_topic, m.queue_id, m.queue_offset, m.extra_info)
    assert [t for _, t, _ in revive_records(broker)] == ["ck", "ack", "ack"]
    broker.scheduler.advance(30_000)  # revive time reached, not yet + ackTimeInterval + 1 s
    assert popped(broker).status is PopStatus.NO_NEW_MSG
    broker.scheduler.advance(3_000)
    retry_topic = pop.pop_retry_topic(TOPIC, GROUP)
    assert broker.get_max_offset(retry_topic, 0) == 1
    back = popped(broker)
    [m] = back.messages
    assert (m.record.body, m.record.topic, m.real_topic, m.reconsume_times) == (b"m2", TOPIC, retry_topic, 1)
    assert m.record.uniq_key == "U0002" and m.record.properties[pop.FIRST_POP_TIME] == str(res.pop_time)
    assert m.extra_info.split(" ")[4] == "1"
    broker.ack_message(GROUP, m.real_topic, m.queue_id, m.queue_offset, m.extra_info)
    broker.scheduler.advance(120_000)
    assert popped(broker).status is PopStatus.NO_NEW_MSG
    assert broker.get_max_offset(retry_topic, 0) == 1  # nothing revived twice


def test_retry_interval_is_the_invisible_time_for_each_attempt(broker):
    seen = []
    first = popped(broker, n=1, invisible=10_000)
    seen.append((first.messages[0].reconsume_times, broker.clock.now_ms()))
    while len(seen) < 4:
        broker.scheduler.advance(1_000)
        res = popped(broker, n=1, invisible=10_000)
        if res.messages and res.messages[0].record.body == b"m0":
            seen.append((res.messages[0].reconsume_times, broker.clock.now_ms()))
        for m in res.messages:
            if m.record.body != b"m0":
                broker.ack_message(GROUP, m.real_topic, m.queue_id, m.queue_offset, m.extra_info)
    assert [a for a, _ in seen] == [0, 1, 2, 3]
    gaps = [b - a for (_, a), (_, b) in zip(seen, seen[1:])]
    assert all(10_000 < g <= 14_000 for g in gaps), gaps  # invisible time + the revive scan's lag


def test_change_invisible_time_moves_the_deadline(broker):
    res = popped(broker, n=1, invisible=10_000)
    m = res.messages[0]
    broker.scheduler.advance(5_000)
    changed = broker.change_invisible_time(GROUP, m.real_topic, m.queue_id, m.queue_offset, m.extra_info, 60_000)
    assert changed.pop_time == res.pop_time + 5_000 and changed.extra_info.split(" ")[:3] == [
        "0", str(changed.pop_time), "60000"]
    kinds = [t for _, t, _ in revive_records(broker)]
    assert kinds == ["ck", "ck", "ack"]
    broker.scheduler.advance(20_000)  # the old deadline passed: not revived (it was acked)
    assert broker.get_max_offset(pop.pop_retry_topic(TOPIC, GROUP), 0) == 0
    broker.scheduler.advance(45_000)  # the new one passed
    assert broker.get_max_offset(pop.pop_retry_topic(TOPIC, GROUP), 0) == 1
    # acking with the new extra info before the new deadline keeps the message away for good
    send(broker, 1, start=3)
    m3 = next(x for x in popped(broker, invisible=10_000).messages if x.record.body == b"m3")
    c2 = broker.change_invisible_time(GROUP, m3.real_topic, m3.queue_id, m3.queue_offset, m3.extra_info, 20_000)
    broker.ack_message(GROUP, m3.real_topic, m3.queue_id, m3.queue_offset, c2.extra_info)
    broker.scheduler.advance(60_000)
    assert [o for ck, o in broker.pop_revive.revived if ck.topic == TOPIC and o == m3.queue_offset] == []


def test_dlq_after_max_attempts(broker):
    broker.subscriptions.update_subscription_group_config(SubscriptionGroupConfig(GROUP, retry_max_times=1))
    assert max_attempts(broker, GROUP) == 2
    flt = ReceiveFilter(2)
    attempts = []
    for _ in range(40):
        res = popped(broker, n=1, invisible=5_000)
        kept = apply_filter(broker.pop, GROUP, TOPIC, res.messages, flt)
        attempts += [(m.record.body, m.reconsume_times) for m in kept if m.record.body == b"m0"]
        for m in kept:
            if m.record.body != b"m0":
                broker.ack_message(GROUP, m.real_topic, m.queue_id, m.queue_offset, m.extra_info)
        broker.scheduler.advance(1_000)
    assert attempts == [(b"m0", 0), (b"m0", 1)]
    dlq = broker.store.get_message("x", "%DLQ%" + GROUP, 0, 0, 8).records()
    assert [(r.body, r.reconsume_times) for r in dlq] == [(b"m0", 3)]


def test_bad_requests_are_typed_errors(broker):
    with pytest.raises(TopicNotExistError):
        broker.pop_message(PopRequest(GROUP, "NoSuchTopic"))
    with pytest.raises(BrokerError) as e:
        broker.pop_message(PopRequest(GROUP, TOPIC, max_msg_nums=33))
    assert e.value.code is ResponseCode.SYSTEM_ERROR
    res = popped(broker)
    m = res.messages[0]
    with pytest.raises(NoMessageError):
        broker.ack_message(GROUP, TOPIC, 0, 99, m.extra_info)
    with pytest.raises(BrokerError) as e:
        broker.ack_message(GROUP, TOPIC, 0, 0, "garbage")
    assert e.value.code is ResponseCode.MESSAGE_ILLEGAL
    with pytest.raises(BrokerError) as e:
        broker.ack_message(GROUP, TOPIC, 9, 0, m.extra_info)
    assert e.value.code is ResponseCode.MESSAGE_ILLEGAL


def test_queue_lock_makes_a_concurrent_pop_skip_the_queue(broker):
    from pymq_ref.broker.pop.locks import lock_key
    broker.pop.activate()
    assert broker.pop.locks.try_lock(lock_key(TOPIC, GROUP, 0))
    assert popped(broker).status is PopStatus.NO_NEW_MSG
    broker.pop.locks.unlock(lock_key(TOPIC, GROUP, 0))
    assert len(popped(broker).messages) == 3


def test_restart_between_pop_and_ack(tmp_path):
    root = tmp_path / "b"
    b = make_broker(root, pop_config=PopConfig(revive_queue_num=2))
    send(b, 2)
    res = b.pop_message(PopRequest(GROUP, TOPIC, invisible_time=20_000))
    acked = res.messages[0]
    b.ack_message(GROUP, acked.real_topic, acked.queue_id, acked.queue_offset, acked.extra_info)
    now = b.clock.now_ms()
    b.shutdown()
    b2 = make_broker(root, start_ms=now + 1_000, pop_config=PopConfig(revive_queue_num=2))
    try:
        assert b2.pop.active  # the revive topic exists: revive resumes by itself
        assert b2.pop_message(PopRequest(GROUP, TOPIC)).status is PopStatus.NO_NEW_MSG
        b2.scheduler.advance(25_000)
        back = b2.pop_message(PopRequest(GROUP, TOPIC, invisible_time=20_000))
        assert [(m.record.body, m.reconsume_times) for m in back.messages] == [(b"m1", 1)]
        b2.scheduler.advance(120_000)  # not acked again: one more attempt, and only one
        again = b2.pop_message(PopRequest(GROUP, TOPIC))
        assert [(m.record.body, m.reconsume_times) for m in again.messages] == [(b"m1", 2)]
    finally:
        b2.shutdown()


def test_a_broker_that_never_pops_keeps_its_4_9_4_topics(tmp_path):
    b = make_broker(tmp_path / "b")
    try:
        assert b.topics.select_topic_config(b.pop.revive_topic) is None and not b.pop.active
    finally:
        b.shutdown()


def test_a_short_checkpoint_behind_a_long_one_is_revived_once(tmp_path):
    """Without the timer wheel the revive log is in write order: a due CK behind one still pending is
    revived (and acked in the revive log, so the rounds that read it again leave it alone)."""
    broker = make_broker(tmp_path / "one", pop_config=PopConfig(revive_queue_num=1))
    send(broker, 2)
    long_ = popped(broker, n=1, invisible=60_000).messages[0]
    short = popped(broker, n=1, invisible=5_000).messages[0]
    broker.scheduler.advance(20_000)
    revived = [o for _, o in broker.pop_revive.revived]
    assert revived == [short.queue_offset]
    broker.scheduler.advance(50_000)
    assert sorted(o for _, o in broker.pop_revive.revived) == sorted([short.queue_offset, long_.queue_offset])
    broker.scheduler.advance(60_000)
    assert len(broker.pop_revive.revived) == 2
    assert broker.get_max_offset(pop.pop_retry_topic(TOPIC, GROUP), 0) == 2
    assert [t for _, t, _ in revive_records(broker)] == ["ck", "ck", "ack"]  # the short one's self-ack
    broker.shutdown()


def test_with_the_timer_wheel_ck_and_ack_records_wait_in_the_wheel(tmp_path):
    """5.x's setup: the revive records carry TIMER_DELIVER_MS, so with the wheel on they reach the revive
    queue only when due — the CK 1 s before its revive time, the ACK at it; retries come back the same."""
    b = make_broker(tmp_path / "wheel", store_kw={"timer_wheel_enable": True}, pop_config=PopConfig(revive_queue_num=1))
    try:
        send(b, 2)
        b.scheduler.advance(1_000)  # the wheel is not in the way of plain messages
        res = b.pop_message(PopRequest(GROUP, TOPIC, invisible_time=10_000))
        assert len(res.messages) == 2
        acked = res.messages[0]
        b.ack_message(GROUP, acked.real_topic, acked.queue_id, acked.queue_offset, acked.extra_info)
        assert revive_records(b) == []  # both parked in rmq_sys_wheel_timer
        b.scheduler.advance(8_000)
        assert revive_records(b) == []
        b.scheduler.advance(2_000)  # the wheel's 1 s slots: the CK (due at 9 s) is out by 10 s
        assert [t for _, t, _ in revive_records(b)] == ["ck"]
        b.scheduler.advance(1_000)
        assert [t for _, t, _ in revive_records(b)] == ["ck", "ack"]
        b.scheduler.advance(3_000)
        back = b.pop_message(PopRequest(GROUP, TOPIC, invisible_time=10_000))
        assert [(m.record.body, m.reconsume_times) for m in back.messages] == [(b"m1", 1)]
    finally:
        b.shutdown()


def test_batch_ack_writes_one_record_per_checkpoint(broker):
    res = popped(broker, invisible=10_000)
    acks = [(m.real_topic, m.queue_id, m.queue_offset, m.extra_info) for m in res.messages[:2]]
    acks.append((TOPIC, 0, 99, res.messages[2].extra_info))  # out of the queue: refused, the rest still acked
    outcomes = broker.pop.batch_ack(GROUP, acks)
    assert outcomes[:2] == [None, None] and isinstance(outcomes[2], NoMessageError)
    [(_, tag, back)] = [r for r in revive_records(broker) if r[1] != "ck"]
    assert tag == "bAck" and back.ack_offset_list == (0, 1) and back.ack_offset == -1
    broker.scheduler.advance(20_000)
    assert [o for _, o in broker.pop_revive.revived] == [2]  # only the one not acked comes back
