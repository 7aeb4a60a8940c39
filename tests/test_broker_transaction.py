"""Transactions: half/op records, END_TRANSACTION, the check service, restarts (4.9.4
``TransactionalMessageServiceImpl``)."""

from __future__ import annotations

import pytest

from broker_helpers import BORN, T0, UNIQ, make_broker, stored, wire
from pymq_ref.broker.response import (MessageNotFoundError, TransactionAlreadyResolvedError,
                                      TransactionStateError)
from pymq_ref.broker.transaction import TRANSACTION_COMMIT_TYPE as COMMIT, TRANSACTION_ROLLBACK_TYPE as ROLLBACK
from pymq_ref.broker.transaction.bridge import op_message_inner
from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import decode_record

# client map TAGS, KEYS, WAIT, TRAN_MSG, PGROUP, UNIQ_KEY -> HashMap wire order:
# KEYS(7) TRAN_MSG(9) UNIQ_KEY(12) WAIT(13) PGROUP(13) TAGS(14)
TX_WIRE = wire(("KEYS", "KEY1"), ("TRAN_MSG", "true"), ("UNIQ_KEY", UNIQ), ("WAIT", "true"), ("PGROUP", "PG"),
               ("TAGS", "TagA"))
# broker: + CLUSTER(12); WAIT removed and re-put (moves behind PGROUP); half: + REAL_TOPIC(1), REAL_QID(15)
HALF_PROPS = (("REAL_TOPIC", "TopicTest"), ("KEYS", "KEY1"), ("TRAN_MSG", "true"), ("UNIQ_KEY", UNIQ),
              ("CLUSTER", "DefaultCluster"), ("PGROUP", "PG"), ("WAIT", "true"), ("TAGS", "TagA"), ("REAL_QID", "2"))
OP_HEX = ("00000087DAA320A774DBDF210000000000000000000000000000000000000000000000C6000000000000018BCFE5687B7F0000010000"
          "2A9F0000018BCFE5687C7F00000100002A9F00000000000000000000000000000001301B524D515F5359535F5452414E535F4F505F48"
          "414C465F544F504943001057414954017472756502544147530164")


def queue_records(b, topic, queue_id=0):
    return b.store.get_message("X", topic, queue_id, 0, 64).records()


def send_half(b, queue_id=2, props=TX_WIRE, topic="TopicTest"):
    return b.send_message(topic=topic, body=b"Hello RocketMQ", queue_id=queue_id, born_timestamp=T0,
                          born_host=BORN, producer_group="PG", properties=props)


def end(b, r, state, group="PG", **kw):
    return b.end_transaction(producer_group=group, tran_state_table_offset=kw.get("qo", r.queue_offset),
                             commit_log_offset=kw.get("clo", r.commit_log_offsets[0]), commit_or_rollback=state,
                             msg_id=UNIQ)


def test_half_message_record(tmp_path):
    with make_broker(tmp_path, schedule_service=False) as b:
        r = send_half(b)
        assert (r.queue_id, r.queue_offset, r.stored_topic, r.stored_queue_id) == (2, 0, "RMQ_SYS_TRANS_HALF_TOPIC", 0)
        half = b.store.look_message_by_offset(0)
        assert half.topic == "RMQ_SYS_TRANS_HALF_TOPIC" and half.queue_id == 0 and half.sys_flag == 0
        assert half.properties_string.encode() == stored(*HALF_PROPS)
        assert b.get_max_offset("RMQ_SYS_TRANS_HALF_TOPIC", 0) == 1  # tran type NOT: dispatched
        assert b.get_max_offset("TopicTest", 2) == 0


def test_op_record_is_vector5():
    rec = op_message_inner(0, 0, 1_700_000_000_123, Host("127.0.0.1", 10911))
    from pymq_ref.store.commit_log import encode_for_append
    enc = encode_for_append(rec, props_string=rec.properties_string)
    data = bytearray(enc.data)
    data[28:36] = (198).to_bytes(8, "big")
    data[56:64] = (1_700_000_000_124).to_bytes(8, "big")
    assert bytes(data).hex().upper() == OP_HEX
    assert rec.properties["WAIT"] == "false"  # in the map only


def test_commit_writes_real_message_then_op(tmp_path):
    with make_broker(tmp_path, start_ms=T0 + 123) as b:
        r = send_half(b)
        b.clock.step_ms = 1
        res = end(b, r, COMMIT)
        assert res.action == "commit" and not res.duplicate and res.code == 0
        real = b.store.look_message_by_offset(res.committed.append_result.wrote_offset)
        assert (real.topic, real.queue_id, real.queue_offset) == ("TopicTest", 2, 0)
        assert real.sys_flag == COMMIT and real.prepared_transaction_offset == 0
        assert real.properties_string.encode() == stored(*HALF_PROPS)  # REAL_TOPIC/REAL_QID/TRAN_MSG kept
        assert "REAL_TOPIC" not in res.committed.record.properties  # cleared in the map only
        op = b.store.look_message_by_offset(res.op.append_result.wrote_offset)
        assert (op.topic, op.queue_id, op.body, op.tags) == ("RMQ_SYS_TRANS_OP_HALF_TOPIC", 0, b"0", "d")
        assert op.properties_string.encode() == b"WAIT\x01true\x02TAGS\x01d"
        assert op.born_host == op.store_host == Host("127.0.0.1", 10911)
        got = b.pull_message(consumer_group="C", topic="TopicTest", queue_id=2, queue_offset=0).records()
        assert len(got) == 1 and got[0].body == b"Hello RocketMQ"


def test_commit_of_a_second_half_message_has_prepared_offset(tmp_path):
    with make_broker(tmp_path, schedule_service=False) as b:
        send_half(b)
        r = send_half(b)
        res = end(b, r, COMMIT)
        real = b.store.look_message_by_offset(res.committed.append_result.wrote_offset)
        assert real.prepared_transaction_offset == r.commit_log_offsets[0] > 0
        assert b.store.look_message_by_offset(res.op.append_result.wrote_offset).body == b"1"


def test_rollback_writes_only_the_op(tmp_path):
    with make_broker(tmp_path, schedule_service=False) as b:
        r = send_half(b)
        res = end(b, r, ROLLBACK)
        assert res.committed is None and res.op.ok
        assert b.get_max_offset("TopicTest", 2) == 0
        assert b.get_max_offset("RMQ_SYS_TRANS_OP_HALF_TOPIC", 0) == 1


def test_unknown_state_answers_nothing(tmp_path):
    with make_broker(tmp_path, schedule_service=False) as b:
        r = send_half(b)
        end_before = b.store.get_max_phy_offset()
        assert end(b, r, 0) is None and end(b, r, 4) is None
        assert b.store.get_max_phy_offset() == end_before


def test_malformed_end_transaction_changes_nothing(tmp_path):
    with make_broker(tmp_path, schedule_service=False) as b:
        r = send_half(b)
        plain = b.send_message(topic="TopicTest", body=b"x", queue_id=0, properties=wire(("PGROUP", "PG")))
        size = b.store.get_max_phy_offset()
        cases = [
            (MessageNotFoundError, dict(clo=10 ** 9), "Find prepared transaction message failed"),
            (MessageNotFoundError, dict(clo=3), "Find prepared transaction message failed"),
            (TransactionStateError, dict(group="OTHER"), "The producer group wrong"),
            (TransactionStateError, dict(qo=7), "The transaction state table offset wrong"),
            (TransactionStateError, dict(clo=plain.commit_log_offsets[0], qo=0), "not a half message"),
        ]
        for err, kw, text in cases:
            group = kw.pop("group", "PG")
            with pytest.raises(err, match=text) as e:
                end(b, r, COMMIT, group=group, **kw)
            assert e.value.code == 1
        assert b.store.get_max_phy_offset() == size
        assert end(b, r, COMMIT).action == "commit"  # still resolvable afterwards


def test_duplicate_end_transaction_is_idempotent(tmp_path):
    with make_broker(tmp_path, schedule_service=False) as b:
        r = send_half(b)
        end(b, r, COMMIT)
        size = b.store.get_max_phy_offset()
        dup = end(b, r, COMMIT)
        assert dup.duplicate and dup.op is None and b.store.get_max_phy_offset() == size
        with pytest.raises(TransactionAlreadyResolvedError):
            end(b, r, ROLLBACK)
        assert b.get_max_offset("TopicTest", 2) == 1
    with make_broker(tmp_path, schedule_service=False) as b:  # learned again from the op queue after a restart
        assert end(b, r, COMMIT).duplicate
        assert b.get_max_offset("TopicTest", 2) == 1


def test_duplicate_commit_in_plain_4_9_4_mode_commits_twice(tmp_path):
    from pymq_ref.broker.config import BrokerConfig
    with make_broker(tmp_path, config=BrokerConfig(transaction_end_idempotent=False)) as b:
        r = send_half(b)
        end(b, r, COMMIT)
        end(b, r, COMMIT)
        assert b.get_max_offset("TopicTest", 2) == 2
        assert b.get_max_offset("RMQ_SYS_TRANS_OP_HALF_TOPIC", 0) == 2


class Producer:
    """A producer-side checker: answers CHECK_TRANSACTION_STATE with END_TRANSACTION (or never)."""

    def __init__(self, broker, answer):
        self.broker, self.answer, self.checks = broker, answer, []

    def __call__(self, group, check):
        self.checks.append(check)
        state = self.answer(check)
        if state is not None:
            self.broker.end_transaction(producer_group=group, tran_state_table_offset=check.tran_state_table_offset,
                                        commit_log_offset=check.commit_log_offset, commit_or_rollback=state,
                                        from_transaction_check=True, msg_id=check.msg_id,
                                        transaction_id=check.transaction_id)


def test_check_back_commits_the_copy(tmp_path):
    with make_broker(tmp_path, schedule_service=False) as b:
        p = Producer(b, lambda c: COMMIT)
        b.register_transaction_checker("PG", p)
        r = send_half(b)
        b.scheduler.advance(59_999)
        assert p.checks == []
        b.scheduler.advance(1)  # first round at transactionCheckInterval
        [check] = p.checks
        assert (check.tran_state_table_offset, check.msg_id, check.transaction_id) == (1, UNIQ, UNIQ)
        copy = b.store.look_message_by_offset(check.commit_log_offset)
        assert copy.topic == "RMQ_SYS_TRANS_HALF_TOPIC" and copy.queue_offset == 1
        assert copy.properties_string.encode() == stored(
            ("REAL_TOPIC", "TopicTest"), ("TRANSACTION_CHECK_TIMES", "1"), *HALF_PROPS[1:])
        body = check.message
        assert (body.topic, body.queue_id, body.queue_offset, body.phy_offset) == ("TopicTest", 2, 1,
                                                                                     check.commit_log_offset)
        assert body.properties["WAIT"] == "false" and body.properties["TRANSACTION_CHECK_TIMES"] == "1"
        assert b.get_max_offset("TopicTest", 2) == 1
        op = queue_records(b, "RMQ_SYS_TRANS_OP_HALF_TOPIC")  # no topic config: read the store
        assert [o.body for o in op] == [b"1"]
        assert b.offsets.query_offset("CID_RMQ_SYS_TRANS", "RMQ_SYS_TRANS_HALF_TOPIC", 0) == 1
        b.scheduler.advance(60_000)  # next round: copy resolved by its op, both offsets move on
        assert len(p.checks) == 1
        assert b.offsets.query_offset("CID_RMQ_SYS_TRANS", "RMQ_SYS_TRANS_HALF_TOPIC", 0) == 2
        assert b.offsets.query_offset("CID_RMQ_SYS_TRANS", "RMQ_SYS_TRANS_OP_HALF_TOPIC", 0) == 1
        assert b.topics.select_topic_config("RMQ_SYS_TRANS_HALF_TOPIC").perm == 6


def test_producer_that_never_answers_is_discarded_after_15_checks(tmp_path):
    with make_broker(tmp_path, schedule_service=False) as b:
        p = Producer(b, lambda c: None)
        b.register_transaction_checker("PG", p)
        send_half(b)
        b.scheduler.advance(15 * 60_000)
        assert len(p.checks) == 15
        assert [c.message.properties["TRANSACTION_CHECK_TIMES"] for c in p.checks] == [str(i) for i in range(1, 16)]
        # 4.9.4 order: needDiscard runs before the "stored during this round" stop, so the copy
        # carrying the 15th count is discarded in the very round that sent the 15th check
        assert [len(r.discarded) for r in b.check_service.rounds] == [0] * 14 + [1]
        b.scheduler.advance(60_000)
        assert len(p.checks) == 15
        tc = b.topics.select_topic_config("TRANS_CHECK_MAX_TIME_TOPIC")
        assert (tc.read_queue_nums, tc.perm) == (1, 6)
        [gone] = b.pull_message(consumer_group="X", topic="TRANS_CHECK_MAX_TIME_TOPIC", queue_id=0,
                                queue_offset=0).records()
        assert (gone.topic, gone.queue_id, gone.sys_flag, gone.born_timestamp) == ("TRANS_CHECK_MAX_TIME_TOPIC", 0, 0, T0)
        assert gone.properties_string.encode() == stored(
            ("REAL_TOPIC", "TopicTest"), ("TRANSACTION_CHECK_TIMES", "15"), *HALF_PROPS[1:])
        assert b.get_max_offset("RMQ_SYS_TRANS_OP_HALF_TOPIC", 0) == 0  # no op message, no rollback
        assert b.offsets.query_offset("CID_RMQ_SYS_TRANS", "RMQ_SYS_TRANS_HALF_TOPIC", 0) == 16
        b.scheduler.advance(10 * 60_000)
        assert len(p.checks) == 15 and b.get_max_offset("TRANS_CHECK_MAX_TIME_TOPIC", 0) == 1


def test_young_half_messages_wait_for_the_timeout_and_immunity(tmp_path):
    with make_broker(tmp_path, schedule_service=False) as b:
        p = Producer(b, lambda c: ROLLBACK)
        b.register_transaction_checker("PG", p)
        send_half(b, props=TX_WIRE + "\x02CHECK_IMMUNITY_TIME_IN_SECONDS\x01130")
        b.scheduler.advance(60_000)  # 60 s < 130 s immunity: an immunity copy, no check
        assert p.checks == [] and b.get_max_offset("RMQ_SYS_TRANS_HALF_TOPIC", 0) == 2
        copy = b.store.look_message_by_offset(b.store.get_commit_log_offset_in_queue("RMQ_SYS_TRANS_HALF_TOPIC", 0, 1))
        assert copy.properties["TRAN_PREPARED_QUEUE_OFFSET"] == "0" and copy.properties["WAIT"] == "false"
        b.scheduler.advance(120_000)
        assert len(p.checks) == 1
        b.scheduler.advance(60_000)
        assert b.get_max_offset("TopicTest", 2) == 0 and len(p.checks) == 1


def test_restart_in_the_middle_of_checks_loses_nothing_and_commits_once(tmp_path):
    """Crash (no shutdown: offsets not persisted) after checks were sent but before answers."""
    from pymq_ref.store.message_store import _LOCKED_DIRS
    b = make_broker(tmp_path, schedule_service=False)
    silent = Producer(b, lambda c: None)
    b.register_transaction_checker("PG", silent)
    r1 = send_half(b)
    r2 = send_half(b, queue_id=1, props=TX_WIRE.replace(UNIQ, "7F00000112340000ABCD000000640002"))
    end(b, r2, ROLLBACK)
    b.scheduler.advance(120_000 + 3_000)
    assert len(silent.checks) == 2  # r1 checked twice (round 1 and 2), r2 resolved
    # the last periodic persist (every 5 s from 10 s) ran at 120 s, before the crash at 123 s
    b.offsets.commit_offset("CID_RMQ_SYS_TRANS", "RMQ_SYS_TRANS_HALF_TOPIC", 0, 99)  # lost in the crash
    # crash: drop the broker without shutdown (consumerOffset.json not written again)
    b.store._close_files()
    b.store._release_lock()
    b2 = make_broker(tmp_path, start_ms=b.clock.now_ms(), schedule_service=False)
    p = Producer(b2, lambda c: COMMIT)
    b2.register_transaction_checker("PG", p)
    b2.scheduler.advance(60_000)
    # restarted from the persisted offsets: the latest copy is checked again and committed once
    assert b2.check_service.rounds[0].half_offset_before == 3
    assert [c.tran_state_table_offset for c in p.checks] == [4]
    assert b2.get_max_offset("TopicTest", 2) == 1 and b2.get_max_offset("TopicTest", 1) == 0
    b2.scheduler.advance(5 * 60_000)
    assert b2.get_max_offset("TopicTest", 2) == 1
    half_end = b2.get_max_offset("RMQ_SYS_TRANS_HALF_TOPIC", 0)
    assert b2.offsets.query_offset("CID_RMQ_SYS_TRANS", "RMQ_SYS_TRANS_HALF_TOPIC", 0) == half_end
    b2.shutdown()
    b3 = make_broker(tmp_path, start_ms=b2.clock.now_ms(), schedule_service=False)
    assert b3.offsets.query_offset("CID_RMQ_SYS_TRANS", "RMQ_SYS_TRANS_HALF_TOPIC", 0) == half_end
    b3.scheduler.advance(3 * 60_000)
    assert b3.get_max_offset("TopicTest", 2) == 1
    b3.shutdown()
