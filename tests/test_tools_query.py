"""``pymq query``: by key through the index, re-checked against the CommitLog (no hash-collision leaks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pymq_ref.cli import main
from pymq_ref.formats.hashing import index_key_hash
from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import MessageRecord
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.message_store import MessageStore
from pymq_ref.store.store_config import MessageStoreConfig
from pymq_ref.tools.query import query_store

FIXTURE_4_9_4 = Path(__file__).parent / "data" / "rocketmq-4.9.4" / "store"
T0 = 1_700_000_000_000


def _config(root) -> MessageStoreConfig:
    return MessageStoreConfig(store_path_root_dir=str(root), mapped_file_size_commit_log=4096,
                              mapped_file_size_consume_queue=200, max_hash_slot_num=16, max_index_num=64)


def _msg(topic: str, i: int, keys: str) -> MessageRecord:
    return MessageRecord(topic=topic, body=f"body-{i}".encode(), queue_id=i % 2,
                         properties={"KEYS": keys, "UNIQ_KEY": f"UNIQ{i:04d}", "CLUSTER": "DefaultCluster"},
                         born_timestamp=T0 + i, born_host=Host("10.0.0.1", 40000), store_host=Host("127.0.0.1", 10911))


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory) -> Path:
    """60 messages; "Aa"/"BB" (and topics "Aa"/"BB") are Java hashCode twins, so the index chains
    hold candidates of other keys and topics with the very same hash."""
    root = tmp_path_factory.mktemp("query") / "store"
    clock = ManualClock(T0, step_ms=500)  # 0.5 s apart: time windows cut between messages
    with MessageStore.open(_config(root), clock) as store:
        for i in range(60):
            topic = ("T", "Aa", "BB")[i % 3] if i >= 30 else "T"
            keys = f"k{i} " + ("Aa" if i % 2 else "BB") + " shared"
            assert store.put_message(_msg(topic, i, keys)).ok
    return root


def test_hash_twins_really_collide():
    assert index_key_hash("T#Aa") == index_key_hash("T#BB")
    assert index_key_hash("Aa#x") == index_key_hash("BB#x")


def test_query_by_key_rejects_hash_collisions(store_dir):
    result = query_store(store_dir, "T", "Aa", max_num=100)
    expected = [i for i in range(60) if i % 2 and (i < 30 or i % 3 == 0)]
    assert [int(m.body[5:]) for m in result.messages] == expected
    assert all(m.topic == "T" and "Aa" in m.keys for m in result.messages)
    # the chain gave every T#Aa and T#BB message: the BB ones were rejected as collisions
    assert len(result.rejected) >= 1 and all("collision" in why for _, why in result.rejected)
    assert result.candidates == len(result.messages) + len(result.rejected)


def test_query_by_topic_twin(store_dir):
    for topic, first in (("Aa", 31), ("BB", 32)):
        result = query_store(store_dir, topic, "shared", max_num=100)
        assert {m.topic for m in result.messages} == {topic}
        assert int(result.messages[0].body[5:]) == first


def test_query_by_uniq_key_and_time_window(store_dir):
    [m] = query_store(store_dir, "T", "UNIQ0007").messages
    assert m.body == b"body-7"
    t10 = query_store(store_dir, "T", "k10").messages[0].store_timestamp
    t20 = query_store(store_dir, "T", "k20").messages[0].store_timestamp
    window = query_store(store_dir, "T", "shared", begin=t10, end=t20, max_num=100)
    assert [int(x.body[5:]) for x in window.messages] == list(range(10, 21))
    # store times are 0.5 s apart, index times whole seconds: the exact bounds still hold
    inside = query_store(store_dir, "T", "shared", begin=t10 + 1, end=t20 - 1, max_num=100)
    assert [int(x.body[5:]) for x in inside.messages] == list(range(11, 20))


def test_max_keeps_the_newest(store_dir):
    result = query_store(store_dir, "T", "shared", max_num=3)
    assert [int(m.body[5:]) for m in result.messages] == [51, 54, 57]
    assert result.unexamined > 0


def test_agrees_with_the_store_read_only_query(store_dir):
    store = MessageStore.open(_config(store_dir), ManualClock(T0), read_only=True)
    try:
        for topic, key in (("T", "Aa"), ("T", "BB"), ("Aa", "shared"), ("T", "k5"), ("BB", "UNIQ0032"),
                           ("T", "missing")):
            ours = [m.phy_offset for m in query_store(store_dir, topic, key, max_num=64).messages]
            theirs = [m.phy_offset for m in store.query_message(topic, key, max_num=64).messages]
            assert ours == theirs, (topic, key)
    finally:
        store.shutdown()


def test_cli_jsonl_and_exit_codes(store_dir, capsys, tmp_path):
    assert main(["query", str(store_dir), "--topic", "T", "--key", "k4", "--format", "jsonl"]) == 0
    out, err = capsys.readouterr()
    [line] = out.splitlines()
    doc = json.loads(line)
    assert doc["type"] == "message" and doc["properties"]["KEYS"] == "k4 BB shared" and doc["topic"] == "T"
    assert "1 message(s) for T#k4" in err
    assert main(["query", str(store_dir), "--topic", "T", "--key", "k4"]) == 0
    assert "T/0@" in capsys.readouterr().out
    assert main(["query", str(store_dir), "--topic", "T", "--key", "nothing"]) == 1
    assert main(["query", str(tmp_path), "--topic", "T", "--key", "k4"]) == 2
    assert "not a store directory" in capsys.readouterr().err


@pytest.mark.skipif(not FIXTURE_4_9_4.is_dir(), reason="the RocketMQ 4.9.4 store fixture is not present")
def test_finds_every_key_of_the_real_4_9_4_store():
    truth = [json.loads(line) for line in (FIXTURE_4_9_4.parent / "messages.jsonl").read_text().splitlines()]
    for m in truth:
        for key in [m["uniqKey"], *(m["keys"] or "").split()]:
            found = query_store(FIXTURE_4_9_4, m["topic"], key, max_num=64).messages
            assert m["physicalOffset"] in [r.phy_offset for r in found], (m["seq"], key)
            assert all(r.topic == m["topic"] and (r.uniq_key == key or key in r.keys) for r in found)
