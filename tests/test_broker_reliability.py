"""Crash/restart around pulls and offset persistence; the broker under a real-time scheduler."""

from __future__ import annotations

import threading

from broker_helpers import make_broker, store_config, wire
from pymq_ref.broker.broker import Broker
from pymq_ref.broker.config import BrokerConfig
from pymq_ref.broker.pull import FLAG_COMMIT_OFFSET, FLAG_SUBSCRIPTION, FLAG_SUSPEND
from pymq_ref.broker.scheduler import ThreadScheduler

FLAGS = FLAG_COMMIT_OFFSET | FLAG_SUSPEND | FLAG_SUBSCRIPTION


def crash(b):
    """Drop a broker without shutdown: no final consumerOffset.json, store left with its abort file."""
    b.state = "crashed"
    for t in b._timers:
        t.cancel()
    b.store._close_files()
    b.store._release_lock()


def consume(b, group, offset, seen, commit_offset):
    r = b.pull_message(consumer_group=group, topic="T", queue_id=0, queue_offset=offset, max_msg_nums=4,
                       sys_flag=FLAGS, commit_offset=commit_offset)
    if r.code == 0:
        seen.extend(int(m.body) for m in r.records())
    return r.next_begin_offset


def test_crash_during_consumption_redelivers_at_most_the_unpersisted_window(tmp_path):
    b = make_broker(tmp_path, schedule_service=False)
    for i in range(40):
        b.send_message(topic="T", body=b"%d" % i, queue_id=0, default_topic_queue_nums=1, properties=wire(("TAGS", "a")))
    seen: list[int] = []
    offset = 0
    for step in range(6):  # a push consumer: pull, commit the previous position with the next pull
        offset = consume(b, "G", offset, seen, commit_offset=offset)
        b.scheduler.advance(3_000)  # persisted at 10 s, 15 s, …
    persisted = b.offsets.query_offset("G", "T", 0)
    crash(b)
    b2 = make_broker(tmp_path, start_ms=b.clock.now_ms(), schedule_service=False)
    restart_at = b2.query_consumer_offset("G", "T", 0)
    assert restart_at <= persisted and restart_at > 0  # the file lags at most one flush interval
    offset = restart_at
    while True:
        nxt = consume(b2, "G", offset, seen, commit_offset=offset)
        if nxt == offset:
            break
        offset = nxt
    assert sorted(set(seen)) == list(range(40))  # nothing lost
    duplicates = len(seen) - 40
    assert 0 <= duplicates <= 4 * 2  # only what was pulled after the last persisted offset
    b2.shutdown()
    b3 = make_broker(tmp_path, start_ms=b2.clock.now_ms(), schedule_service=False)
    assert b3.query_consumer_offset("G", "T", 0) == 40  # committed by the last pull, written at shutdown
    b3.shutdown()


def test_crash_with_a_held_pull_and_a_store_that_recovers(tmp_path):
    b = make_broker(tmp_path, schedule_service=False)
    b.send_message(topic="T", body=b"0", queue_id=0, default_topic_queue_nums=1)
    answers = []
    b.pull_message(consumer_group="G", topic="T", queue_id=0, queue_offset=1, callback=answers.append)
    assert b.hold_service.held_count() == 1
    crash(b)
    b2 = make_broker(tmp_path, start_ms=b.clock.now_ms(), schedule_service=False)
    assert not b2.store.last_exit_ok and b2.get_max_offset("T", 0) == 1
    assert b2.hold_service.held_count() == 0 and answers == []  # the client times out and pulls again
    b2.send_message(topic="T", body=b"1", queue_id=0)
    assert [m.body for m in b2.pull_message(consumer_group="G", topic="T", queue_id=0, queue_offset=1).records()] == [b"1"]
    b2.shutdown()


def test_long_polling_with_a_real_time_scheduler(tmp_path):
    scheduler = ThreadScheduler().start()
    try:
        b = Broker(str(tmp_path), BrokerConfig(total_physical_memory_size=16 << 30), scheduler,
                   store_config=store_config(tmp_path), schedule_service=False).start()
        b.send_message(topic="T", body=b"0", queue_id=0, default_topic_queue_nums=1)
        got = threading.Event()
        answers = []

        def on_answer(result):
            answers.append(result)
            got.set()

        assert b.pull_message(consumer_group="G", topic="T", queue_id=0, queue_offset=1, callback=on_answer) is None
        b.send_message(topic="T", body=b"1", queue_id=0)
        assert got.wait(5), "the held pull was not woken by the new message"
        assert answers[0].code == 0 and [m.body for m in answers[0].records()] == [b"1"]
        b.shutdown()
        assert scheduler.errors == []
    finally:
        scheduler.stop()
