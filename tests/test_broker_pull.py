"""PULL_MESSAGE: status mapping, long polling, offsets carried by pulls, filters, offsets API."""

from __future__ import annotations

import json
import os

import pytest

from broker_helpers import make_broker, wire
from pymq_ref.broker.config import BrokerConfig
from pymq_ref.broker.pull import FLAG_COMMIT_OFFSET, FLAG_SUBSCRIPTION, FLAG_SUSPEND, PullStatus
from pymq_ref.broker.response import (BrokerSystemError, IllegalQueueIdError, NoPermissionError, QueryNotFoundError,
                                      ResponseCode, SubscriptionNotExistError, SubscriptionParseFailedError,
                                      TopicNotExistError)
from pymq_ref.formats import fastjson
from pymq_ref.store.config_files import TopicConfig
from pymq_ref.store.message_store import GetMessageStatus

NO_FS = dict(schedule_service=False)


def put(b, n=1, topic="T", tags="A", queue_id=0, **props):
    for i in range(n):
        b.send_message(topic=topic, body=b"m%d" % i, queue_id=queue_id, default_topic_queue_nums=2,
                       properties=wire(("TAGS", tags), *props.items()))


def pull(b, offset, topic="T", callback=None, **kw):
    return b.pull_message(consumer_group="CG", topic=topic, queue_id=kw.pop("queue_id", 0), queue_offset=offset,
                          callback=callback, **kw)


def test_status_mapping_and_offsets(tmp_path):
    with make_broker(tmp_path, **NO_FS) as b:
        put(b, 3)
        r = pull(b, 0)
        assert (r.code, r.pull_status, r.remark) == (ResponseCode.SUCCESS, PullStatus.FOUND, "FOUND")
        assert (r.next_begin_offset, r.min_offset, r.max_offset, r.suggest_which_broker_id) == (3, 0, 3, 0)
        assert [m.body for m in r.records()] == [b"m0", b"m1", b"m2"]
        assert pull(b, 1, max_msg_nums=1).next_begin_offset == 2
        r = pull(b, 3)  # OFFSET_OVERFLOW_ONE
        assert (r.code, r.get_message_status, r.next_begin_offset) == (19, GetMessageStatus.OFFSET_OVERFLOW_ONE, 3)
        assert b.get_max_offset("OFFSET_MOVED_EVENT", 0) == 0
        r = pull(b, 9)  # OFFSET_OVERFLOW_BADLY -> moved, corrected to max, event written
        assert (r.code, r.pull_status, r.next_begin_offset) == (21, PullStatus.OFFSET_ILLEGAL, 3)
        assert b.get_max_offset("OFFSET_MOVED_EVENT", 0) == 1
        ev = b.pull_message(consumer_group="X", topic="OFFSET_MOVED_EVENT", queue_id=0, queue_offset=0).records()[0]
        assert json.loads(ev.body) == {"consumerGroup": "CG", "messageQueue": {"brokerName": "broker-a",
                                       "queueId": 0, "topic": "T"}, "offsetNew": 3, "offsetRequest": 9}
        assert ev.properties_string == "KEYS\x01CG\x02DELAY\x010\x02TAGS\x01CG"  # HashMap: KEYS 7, DELAY 13, TAGS 14
        r = pull(b, 0, queue_id=1)  # empty queue (no CQ) at 0: not found
        assert (r.code, r.get_message_status) == (19, GetMessageStatus.NO_MESSAGE_IN_QUEUE)  # as if created empty
        r = pull(b, 4, queue_id=1)  # ... at 4: offset moved
        assert (r.code, r.next_begin_offset) == (21, 0)


def test_tag_filter_and_no_matched(tmp_path):
    with make_broker(tmp_path, **NO_FS) as b:
        put(b, 2, tags="A")
        put(b, 1, tags="B")
        r = pull(b, 0, subscription="B")
        assert [m.tags for m in r.records()] == ["B"] and r.next_begin_offset == 3
        r = pull(b, 0, subscription="C")
        assert (r.code, r.pull_status, r.next_begin_offset) == (20, PullStatus.NO_MATCHED_MSG, 3)
        with pytest.raises(SubscriptionParseFailedError) as e:
            pull(b, 0, subscription="||")
        assert e.value.code == 23


def test_sql92_needs_enable_property_filter(tmp_path):
    with make_broker(tmp_path, **NO_FS) as b:
        put(b, 1)
        with pytest.raises(BrokerSystemError, match="does not support consumer to filter message by SQL92"):
            pull(b, 0, subscription="a > 1", expression_type="SQL92")
    with make_broker(tmp_path / "sql", config=BrokerConfig(enable_property_filter=True), **NO_FS) as b:
        for a in (1, 7, 3, 9):
            put(b, 1, a=str(a))
        r = pull(b, 0, subscription="a > 5", expression_type="SQL92")
        assert [m.properties["a"] for m in r.records()] == ["7", "9"]
        # 4.9.4 (recorded, tests/data/rocketmq-4.9.4-broker-diff "pull bad SQL"): an SQL92 expression
        # that does not compile in a pull carrying its subscription filters nothing
        r = pull(b, 0, subscription="a >", expression_type="SQL92")
        assert [m.properties["a"] for m in r.records()] == ["1", "7", "3", "9"]


def test_refused_pulls_are_typed(tmp_path):
    with make_broker(tmp_path, **NO_FS) as b:
        put(b, 1)
        with pytest.raises(TopicNotExistError):
            pull(b, 0, topic="Unknown")
        with pytest.raises(IllegalQueueIdError):
            pull(b, 0, queue_id=2)
        b.topics.update_topic_config(TopicConfig("WO", 1, 1, perm=2))
        with pytest.raises(NoPermissionError):
            pull(b, 0, topic="WO")
        with pytest.raises(SubscriptionNotExistError) as e:
            b.pull_message(consumer_group="CG", topic="T", queue_id=0, queue_offset=0, sys_flag=FLAG_SUSPEND)
        assert e.value.code == 24
        b.register_subscription("CG", "T", "A")
        r = b.pull_message(consumer_group="CG", topic="T", queue_id=0, queue_offset=0, sys_flag=FLAG_SUSPEND)
        assert r.code == 0


def test_long_polling_woken_by_a_new_message(tmp_path):
    with make_broker(tmp_path, **NO_FS) as b:
        put(b, 1)
        answers = []
        assert pull(b, 1, callback=answers.append) is None
        assert b.hold_service.held_count() == 1
        b.scheduler.advance(1000)
        assert answers == []
        put(b, 1)  # dispatch -> notifyMessageArriving (scheduled on the scheduler)
        assert answers == []
        b.scheduler.run_due()
        [r] = answers
        assert r.code == 0 and r.from_hold and [m.body for m in r.records()] == [b"m0"]
        assert b.hold_service.held_count() == 0


def test_long_polling_filter_and_timeout(tmp_path):
    with make_broker(tmp_path, **NO_FS) as b:
        put(b, 1)
        answers = []
        pull(b, 1, callback=answers.append, subscription="B", suspend_timeout_millis=15_000)
        put(b, 1, tags="A")  # not for this subscription: stays held
        b.scheduler.run_due()
        assert answers == []
        # the 5 s check re-notifies with no tagsCode, which every filter accepts: replayed, nothing matches
        b.scheduler.advance(5_000)
        [r] = answers
        assert r.code == ResponseCode.PULL_RETRY_IMMEDIATELY and r.next_begin_offset == 2
        answers.clear()
        pull(b, 2, callback=answers.append, suspend_timeout_millis=15_000)
        b.scheduler.advance(14_999)
        assert answers == []
        b.scheduler.advance(1)  # 15 s: the hold expired, re-run answers PULL_NOT_FOUND
        assert [a.code for a in answers] == [ResponseCode.PULL_NOT_FOUND]


def test_short_polling(tmp_path):
    with make_broker(tmp_path, config=BrokerConfig(long_polling_enable=False), **NO_FS) as b:
        put(b, 1)
        answers = []
        pull(b, 1, callback=answers.append, suspend_timeout_millis=15_000)
        put(b, 1)  # no arrival notification without long polling
        b.scheduler.run_due()
        assert answers == []
        b.scheduler.advance(1000)  # shortPollingTimeMills: checked every second, found
        assert [a.code for a in answers] == [0]


def test_commit_offset_carried_by_pull_and_persistence(tmp_path):
    with make_broker(tmp_path, **NO_FS) as b:
        put(b, 3)
        pull(b, 0, sys_flag=FLAG_COMMIT_OFFSET | FLAG_SUSPEND | FLAG_SUBSCRIPTION, commit_offset=2)
        assert b.query_consumer_offset("CG", "T", 0) == 2
        path = os.path.join(tmp_path, "config", "consumerOffset.json")
        assert not os.path.exists(path)
        b.scheduler.advance(10_000)  # first persist after 10 s
        assert fastjson.loads(open(path).read()) == {"offsetTable": {"T@CG": {0: 2}}}
        assert "{0:2\n" in open(path).read()
        b.update_consumer_offset("CG", "T", 0, 3)
        b.scheduler.advance(4_999)
        assert fastjson.loads(open(path).read())["offsetTable"]["T@CG"] == {0: 2}
        b.scheduler.advance(1)  # every flushConsumerOffsetInterval (5 s)
        assert fastjson.loads(open(path).read())["offsetTable"]["T@CG"] == {0: 3}
        b.update_consumer_offset("CG", "T", 1, 1)
    assert fastjson.loads(open(path).read())["offsetTable"]["T@CG"] == {0: 3, 1: 1}  # at shutdown
    with make_broker(tmp_path, **NO_FS) as b:
        assert b.query_consumer_offset("CG", "T", 1) == 1


def test_wakeup_replay_does_not_commit(tmp_path):
    with make_broker(tmp_path, **NO_FS) as b:
        put(b, 1)
        answers = []
        pull(b, 1, callback=answers.append, sys_flag=FLAG_COMMIT_OFFSET | FLAG_SUSPEND | FLAG_SUBSCRIPTION,
             commit_offset=1)
        b.update_consumer_offset("CG", "T", 0, 0)
        put(b, 1)
        b.scheduler.run_due()
        assert answers[0].code == 0 and b.query_consumer_offset("CG", "T", 0) == 0


def test_query_offset_without_commit(tmp_path):
    with make_broker(tmp_path, **NO_FS) as b:
        assert b.query_consumer_offset("CG", "Nothing", 0) == 0  # min offset 0 and not on disk
        put(b, 1)
        assert b.query_consumer_offset("CG", "T", 0) == 0
    tiny = BrokerConfig(total_physical_memory_size=100)  # everything counts as "swapped out"
    with make_broker(tmp_path, config=tiny, **NO_FS) as b:
        put(b, 5)
        with pytest.raises(QueryNotFoundError) as e:
            b.query_consumer_offset("CG", "T", 0)
        assert e.value.code == 22


def test_suggest_slave_only_with_slave_read(tmp_path):
    with make_broker(tmp_path, config=BrokerConfig(slave_read_enable=True, total_physical_memory_size=500),
                     **NO_FS) as b:
        put(b, 5)
        assert pull(b, 0, max_msg_nums=1).suggest_which_broker_id == 1  # whichBrokerWhenConsumeSlowly
        assert pull(b, 4).suggest_which_broker_id == 0  # last record: 123 bytes behind < 40 % of 500: group brokerId
