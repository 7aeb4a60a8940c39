"""The 5.x revive-log records (CK / ACK / batch ACK) against what the real 5.1.4 classes wrote,
and the extra-info / receipt-handle strings."""

import json
import pathlib

import pytest
from hypothesis import given, strategies as st

from pymq_ref.formats import pop

RECORDS = pathlib.Path(__file__).parent / "data" / "rocketmq-5.1.4-pop" / "records.jsonl"
CASES = [json.loads(line) for line in RECORDS.read_text().splitlines()]
DECODE = {"ck": pop.decode_ck, "ack": pop.decode_ack, "bAck": pop.decode_batch_ack}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_decode_then_encode_is_what_5_1_4_reserialised(case):
    record = DECODE[case["kind"]](case["json"])
    assert pop.encode_json(record) == case["reserialised"]
    assert pop.TAG_OF[type(record)] == case["kind"]


def test_ck_fields_and_ack_pairing():
    ck = pop.decode_ck(next(c for c in CASES if c["name"] == "ck_three_with_gap")["json"])
    assert (ck.start_offset, ck.num, ck.queue_offset_diff, ck.revive_time) == (12, 3, (0, 1, 4), 1700000060123)
    assert [ck.index_of_ack(o) for o in (11, 12, 13, 14, 16)] == [-1, 0, 1, -1, 2]
    ack = pop.decode_ack(next(c for c in CASES if c["name"] == "ack_one")["json"])
    assert ack.merge_key() == ck.merge_key()
    ck2 = ck.with_ack(ck.index_of_ack(ack.ack_offset))
    assert list(pop.iter_unacked(ck2)) == [(0, 12), (2, 16)]
    old = pop.decode_ck(next(c for c in CASES if c["name"] == "ck_no_broker_name_bitmap")["json"])
    assert old.queue_offset_diff is None and [old.index_of_ack(o) for o in (7, 9, 10)] == [0, 2, -1]
    assert list(pop.iter_unacked(old)) == [(1, 8)]  # bm 5 = bits 0 and 2


def test_unique_ids_and_topics():
    ck = pop.PopCheckPoint(3, 100, 30000, 0, 1, 2, "T", "G", broker_name="b", queue_offset_diff=(0,))
    assert ck.unique_id() == "T@2@3@G@100@b@ck"
    assert pop.AckMsg(3, 3, "G", "T", 2, 100, "b").unique_id() == "T@2@3@G@100@b@ack"
    assert pop.pop_retry_topic("T", "G") == "%RETRY%G_T"
    assert pop.parse_normal_topic("%RETRY%G_T", "G") == "T" and pop.parse_normal_topic("T", "G") == "T"
    assert pop.revive_topic("DefaultCluster") == "rmq_sys_REVIVE_LOG_DefaultCluster"


def test_extra_info_and_receipt_handle():
    text = pop.build_extra_info(12, 1700000000123, 30000, 3, "%RETRY%G_T", "broker-a", 0, 13)
    assert text == "12 1700000000123 30000 3 1 broker-a 0 13"
    info = pop.parse_extra_info(text)
    assert info.retry and info.real_topic("T", "G") == "%RETRY%G_T" and info.next_visible_time == 1700000030123
    handle = pop.receipt_handle(text, 4096)
    assert handle == text + " 4096"
    assert pop.parse_receipt_handle(handle).commit_log_offset == 4096
    assert pop.parse_receipt_handle(text).commit_log_offset == -1
    assert pop.build_extra_info(0, 1, 2, 0, "T", "b", 1) == "0 1 2 0 0 b 1"


@pytest.mark.parametrize("bad", ["", "1 2 3", "x 2 3 4 0 b 1 2", None])
def test_bad_receipt_handles_are_typed_errors(bad):
    with pytest.raises(pop.PopRecordError):
        pop.parse_receipt_handle(bad)


@pytest.mark.parametrize("bad", ["", "[", '{"so":', '{"so":"x"}', '{"t":1}', '{"so":1,', '{"d":[1,]}', '{"so":1}x'[:-1] + "]"])
def test_bad_bodies_are_typed_errors(bad):
    with pytest.raises(pop.PopRecordError):
        pop.decode_ck(bad)


def test_body_spans_cover_each_member():
    body = pop.encode_body(pop.PopCheckPoint(5, 100, 20, 0, 2, 1, "Töpic", "G", 0, (0, 1), "b"))
    spans = pop.body_spans(body, base=1000)
    assert [s.path for s in spans][:3] == ["body.bm", "body.bn", "body.c"]
    t = next(s for s in spans if s.path == "body.t")
    assert body[t.offset - 1000:t.end - 1000].decode() == '"t":"Töpic"' and t.value == "Töpic"


names = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@given(st.integers(0, 2**40), st.integers(0, 2**42), st.integers(0, 2**31), st.integers(0, 2**31 - 1),
       st.integers(0, 32), st.integers(0, 64), names, names, st.one_of(st.none(), names),
       st.one_of(st.none(), st.lists(st.integers(0, 1000), max_size=8)))
def test_ck_round_trip(so, pt, it, bm, n, q, t, c, bn, d):
    ck = pop.PopCheckPoint(so, pt, it, bm, n, q, t, c, 0, tuple(d) if d is not None else None, bn)
    assert pop.decode_ck(pop.encode_body(ck)) == ck
