"""The client's pure parts: ProcessQueue (flow-control numbers, the offset to commit, orderly take /
commit / put back), subscriptions, publish and subscribe info from routes, the selector, compression
and the request builders, the local offset file."""

from __future__ import annotations

import asyncio
import zlib

import pytest
from hypothesis import given, settings, strategies as st

from pymq_ref.client import requests as R
from pymq_ref.client.consumer.offset_store import READ_FROM_STORE, LocalFileOffsetStore
from pymq_ref.client.consumer.process_queue import ProcessQueue
from pymq_ref.client.errors import MQBrokerError, MQClientError
from pymq_ref.client.instance import route_to_publish_info, route_to_subscribe_info
from pymq_ref.client.message import Message, MessageExt, validate_message
from pymq_ref.client.producer import java_hash_code, select_by_hash
from pymq_ref.formats.message_queue import MessageQueue
from pymq_ref.remoting.bodies.route import BrokerData, QueueData, TopicRouteData


def ext(offset: int, body: bytes = b"x") -> MessageExt:
    return MessageExt("T", body, {}, 0, offset, offset * 100, 0, 0, "127.0.0.1:1", 0, "127.0.0.1:2", 0, "ID")


def test_process_queue_commits_the_lowest_unfinished_offset():
    pq = ProcessQueue()
    msgs = [ext(i, b"ab") for i in range(10, 15)]
    pq.put_messages(msgs)
    assert (pq.msg_count, pq.msg_size, pq.max_span()) == (5, 10, 4)
    assert pq.remove_messages([msgs[1], msgs[2]]) == 10  # 10 still cached: it holds the offset back
    assert pq.remove_messages([msgs[0]]) == 13
    assert pq.remove_messages([msgs[3], msgs[4]]) == 15  # empty: max seen + 1
    assert (pq.msg_count, pq.msg_size) == (0, 0)
    assert pq.remove_messages([msgs[0]]) == -1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=1, max_size=30, unique=True), st.data())
def test_process_queue_offset_is_never_past_an_unfinished_message(offsets, data):
    pq = ProcessQueue()
    msgs = [ext(o) for o in sorted(offsets)]
    pq.put_messages(msgs)
    done = data.draw(st.lists(st.sampled_from(msgs), unique_by=lambda m: m.queue_offset))
    commit = pq.remove_messages(done)
    left = [m.queue_offset for m in msgs if m not in done]
    assert commit == (min(left) if left else max(offsets) + 1)


def test_process_queue_orderly_take_commit_and_put_back():
    pq = ProcessQueue()
    msgs = [ext(i) for i in range(5)]
    assert pq.put_messages(msgs) is True  # a consume task should start
    assert pq.put_messages([ext(5)]) is False  # one is already scheduled
    taken = pq.take_messages(2)
    assert [m.queue_offset for m in taken] == [0, 1]
    pq.make_message_to_consume_again(taken)
    assert [m.queue_offset for m in pq.take_messages(3)] == [0, 1, 2]
    assert pq.commit() == 3
    assert pq.msg_count == 3
    assert [m.queue_offset for m in pq.take_messages(10)] == [3, 4, 5]
    assert pq.commit() == 6
    assert pq.take_messages(1) == [] and pq.consuming is False


def test_lock_and_pull_expiry():
    pq = ProcessQueue(now=1000)
    assert not pq.is_lock_expired(31_000) and pq.is_lock_expired(31_001)
    assert not pq.is_pull_expired(121_000) and pq.is_pull_expired(121_001)


def test_subscription_tags_and_codes():
    sub = R.build_subscription("T", "TagA || TagB ||  ")
    assert (sub.sub_string, sub.tags_set, sub.code_set) == ("TagA || TagB ||  ", ["TagA", "TagB"], [2598919, 2598920])
    assert R.build_subscription("T", None).sub_string == "*"
    assert R.build_subscription("T", " * ").sub_string == "*"
    sql = R.build_subscription("T", "a > 1", "SQL92")
    assert (sql.sub_string, sql.expression_type, sql.tags_set) == ("a > 1", "SQL92", [])


def _route():
    return TopicRouteData(queue_datas=[QueueData("broker-b", 4, 2, 6), QueueData("broker-a", 2, 3, 6),
                                       QueueData("broker-c", 2, 2, 4), QueueData("broker-d", 2, 2, 6)],
                          broker_datas=[BrokerData("C", "broker-a", {0: "a:1"}), BrokerData("C", "broker-b", {0: "b:1"}),
                                        BrokerData("C", "broker-c", {0: "c:1"}), BrokerData("C", "broker-d", {1: "d:2"})])


def test_publish_info_sorted_by_broker_writable_with_a_master_only():
    info = route_to_publish_info("T", _route())
    assert [(q.broker_name, q.queue_id) for q in info.message_queue_list] == [
        ("broker-a", 0), ("broker-a", 1), ("broker-a", 2), ("broker-b", 0), ("broker-b", 1)]
    assert info.get_queue_id_by_broker("broker-b") == 2
    order = route_to_publish_info("T", TopicRouteData(order_topic_conf="broker-b:2;broker-a:1"))
    assert [(q.broker_name, q.queue_id) for q in order.message_queue_list] == [("broker-b", 0), ("broker-b", 1),
                                                                            ("broker-a", 0)]


def test_subscribe_info_readable_queues_of_every_broker():
    mqs = route_to_subscribe_info("T", _route())
    assert len(mqs) == 4 + 2 + 2 + 2  # broker-c is read-only (perm 4), broker-d has no master: still readable


def test_select_by_hash_is_javas():
    mqs = [MessageQueue("T", "b", i) for i in range(4)]
    assert java_hash_code("TagA") == 2598919 and java_hash_code(2**40) == 256  # Long.hashCode: high ^ low
    for arg in ("order-7", 42, -42, 2**40, "é", -2**31):
        h = java_hash_code(arg)
        assert select_by_hash(mqs, None, arg) is mqs[abs(_jrem(h, 4))]  # abs(arg.hashCode() % size)


def _jrem(a, b):
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def test_compression_threshold_and_flags():
    body = b"a" * 4096
    packed, flags = R.maybe_compress(body, 4096)
    assert flags == 0x301 and zlib.decompress(packed) == body
    assert R.maybe_compress(b"a" * 4095, 4096) == (b"a" * 4095, 0)


def test_send_header_moves_retry_fields_out_of_properties():
    h = R.send_message_header(group="G", topic="%RETRY%G", queue_id=0, sys_flag=0, born_timestamp=1, flag=0,
                              properties={"RECONSUME_TIME": "2", "MAX_RECONSUME_TIMES": "16", "WAIT": "true"})
    assert (h.reconsume_times, h.max_reconsume_times, h.properties) == (2, 16, "WAIT\x01true")
    request = R.send_message(h, b"x")
    assert request.code == 310 and request.ext()["l"] == "16" and request.ext()["b"] == "%RETRY%G"


def test_validation_errors_say_what_is_wrong():
    with pytest.raises(MQClientError, match="body length is zero"):
        validate_message(Message("T", b""))
    with pytest.raises(MQClientError, match="illegal characters"):
        validate_message(Message("a b", b"x"))
    with pytest.raises(MQClientError, match="forbidden"):
        validate_message(Message("SCHEDULE_TOPIC_XXXX", b"x"))
    with pytest.raises(MQClientError, match="over max value"):
        validate_message(Message("T", b"x" * 11), max_message_size=10)


def test_message_properties_as_java_sets_them():
    m = Message("T", "body", tags="A", keys=["k1", "k2"], delay_time_level=3)
    assert m.properties == {"TAGS": "A", "KEYS": "k1 k2", "DELAY": "3", "WAIT": "true"}
    assert m.body == b"body"


def test_local_offset_file_round_trip(tmp_path):
    async def run():
        store = LocalFileOffsetStore(tmp_path, "cid", "G")
        mq = MessageQueue("T", "broker-a", 3)
        store.update_offset(mq, 7, False)
        store.update_offset(mq, 5, True)  # increase only: stays 7
        await store.persist_all({mq})
        await store.persist_all({mq})  # the previous file becomes the .bak
        again = LocalFileOffsetStore(tmp_path, "cid", "G")
        return await again.read_offset(mq, READ_FROM_STORE), await again.read_offset(MessageQueue("T", "x", 0),
                                                                                     READ_FROM_STORE)
    assert asyncio.run(run()) == (7, -1)
    assert (tmp_path / "cid" / "G" / "offsets.json.bak").exists()
    assert '"offsetTable":{{"brokerName":"broker-a","queueId":3,"topic":"T"}:7}' in (
        tmp_path / "cid" / "G" / "offsets.json").read_text()


@pytest.mark.parametrize("where, topic, last, expected", [
    ("CONSUME_FROM_LAST_OFFSET", "T", 7, 7),  # the group has an offset: always that
    ("CONSUME_FROM_LAST_OFFSET", "T", -1, 100),  # none: the queue's max offset
    ("CONSUME_FROM_LAST_OFFSET", "%RETRY%G", -1, 0),
    ("CONSUME_FROM_FIRST_OFFSET", "T", -1, 0),
    ("CONSUME_FROM_TIMESTAMP", "T", -1, 42),  # the offset of consumeTimestamp
    ("CONSUME_FROM_TIMESTAMP", "%RETRY%G", -1, 100),
    ("CONSUME_FROM_FIRST_OFFSET", "T", -2, -1),  # the broker could not be asked: skip this round
])
def test_compute_pull_from_where(where, topic, last, expected):
    from pymq_ref.client.consumer.push import DefaultMQPushConsumer, parse_consume_timestamp

    c = DefaultMQPushConsumer("G", consume_from_where=where, consume_timestamp="20260101000000")
    asked = []

    class Store:
        async def read_offset(self, mq, how):
            return last

    async def max_offset(mq):
        return 100

    async def search(mq, ts):
        asked.append(ts)
        return 42

    c.offset_store, c._max_offset, c._search_offset = Store(), max_offset, search
    assert asyncio.run(c.compute_pull_from_where(MessageQueue(topic, "b", 0))) == expected
    if expected == 42:
        assert asked == [parse_consume_timestamp("20260101000000")]


@pytest.mark.parametrize("topic, props, batch", [
    ("T", {"WAIT": "true", "UNIQ_KEY": "U", "TAGS": "A"}, False),
    ("T", {"WAIT": "true"}, True),
    ("%RETRY%G", {"RECONSUME_TIME": "3", "MAX_RECONSUME_TIMES": "16", "WAIT": "true"}, False),
    ("DefaultCluster_REPLY_TOPIC", {"MSG_TYPE": "reply", "CORRELATION_ID": "c"}, False),
])
def test_fast_send_request_equals_the_header_built_one(topic, props, batch):
    from pymq_ref.remoting.codec import encode

    args = dict(group="G", topic=topic, queue_id=2, sys_flag=0x301, born_timestamp=123, flag=7, properties=props,
                batch=batch)
    slow = R.send_message(R.send_message_header(**args), b"body", batch=batch)
    fast = R.send_message_fast(**args, body=b"body")
    assert fast.code == slow.code and fast.ext() == slow.ext()
    assert encode(fast.with_(opaque=9)) == encode(slow.with_(opaque=9))


def test_read_send_result():
    from pymq_ref.remoting.command import RemotingCommand

    mq = MessageQueue("T", "broker-a", 1)
    ok = RemotingCommand.response(0, ext_fields={"msgId": "7F0000010000691F0000000000000000", "queueId": "3",
                                                 "queueOffset": "17", "MSG_REGION": "R1", "TRACE_ON": "false"})
    r = R.read_send(ok, mq, "UNIQ", "127.0.0.1:1")
    assert (r.send_status.value, r.msg_id, r.offset_msg_id, r.message_queue.queue_id, r.queue_offset, r.region_id,
            r.trace_on, r.transaction_id) == ("SEND_OK", "UNIQ", "7F0000010000691F0000000000000000", 3, 17, "R1",
                                              False, None)
    flush = RemotingCommand.response(10, ext_fields={"msgId": "X", "queueId": "1", "queueOffset": "2",
                                                     "transactionId": "TX"})
    assert R.read_send(flush, mq, "U", None).send_status.value == "FLUSH_DISK_TIMEOUT"
    assert R.read_send(flush, mq, "U", None).transaction_id == "TX"
    with pytest.raises(MQBrokerError) as e:
        R.read_send(RemotingCommand.response(14, "busy"), mq, "U", "a:1")
    assert e.value.code == 14 and e.value.broker_addr == "a:1"
