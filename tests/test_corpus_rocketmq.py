"""The golden corpus (written by pymq_ref) as real RocketMQ 4.9.4 reads it.

tests/data/rocketmq-4.9.4-reads-corpus/<case>.jsonl is what the unmodified 4.9.4
``DefaultMessageStore`` saw when it opened a copy of ``corpus/<case>/store``: ``load()``
(recovery), ``start()`` (reput of anything not dispatched), then every ConsumeQueue unit, the
message it points at (``lookMessageByOffset``) and a ``queryMessage`` for every key (README.md
there). ``corpus.sha256.json`` pins the corpus bytes it read. Here each answer is compared with
``corpus/<case>/expected.json``, the corpus's own statement of what a reader must see.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from pymq_ref.formats.hosts import Host
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.message_store import MessageStore
from pymq_ref.store.store_config import MessageStoreConfig
from store_helpers import tree_digest

CORPUS = Path(__file__).parent.parent / "corpus"
READS = Path(__file__).parent / "data" / "rocketmq-4.9.4-reads-corpus"
PINNED = json.loads((READS / "corpus.sha256.json").read_text())
CASES = sorted(PINNED)
READABLE = [c for c in CASES if c != "v2_magic"]


def java(case: str) -> list[dict]:
    return [json.loads(line) for line in (READS / f"{case}.jsonl").read_text(encoding="utf-8").splitlines()]


def expected(case: str) -> dict:
    return json.loads((CORPUS / case / "expected.json").read_text(encoding="utf-8"))


def records(case: str, kind: str) -> list[dict]:
    exp = expected(case)
    return [r for path, doc in sorted(exp["files"].items()) if path.startswith(kind + "/")
            for r in doc.get("records", ())]


def test_the_corpus_is_the_one_rocketmq_read():
    assert CASES == sorted(p.name for p in CORPUS.iterdir() if (p / "store").is_dir())
    for case in CASES:
        root = CORPUS / case / "store"
        assert tree_digest(root, lambda rel: rel != "lock") == PINNED[case], \
            f"corpus/{case} changed: re-run RocketMQ over it (tools/rocketmq_harness/regenerate.py corpus)"


@pytest.mark.parametrize("case", READABLE)
def test_rocketmq_recovers_what_the_corpus_says(case):
    load, rec = java(case)[0], expected(case)["recovery"]
    assert load["loaded"] and load["abortBefore"] == (not rec["last_exit_ok"])
    assert (load["minPhyOffset"], load["maxPhyOffset"]) == (rec["min_offset"], rec["recovered_offset"])
    assert load["queues"] == rec["queues"]


@pytest.mark.parametrize("case", READABLE)
def test_rocketmq_reads_every_unit_and_record_as_the_corpus_says(case):
    units = {(u["topic"], u["queue_id"], u["queue_offset"]): u for u in records(case, "consumequeue")
             if not u.get("blank")}
    messages = {r["phy_offset"]: r for r in records(case, "commitlog") if r["type"] == "message"}
    seen = [x for x in java(case) if x["kind"] == "unit"]
    assert len(seen) == len(units)
    for x in seen:
        u = units[(x["topic"], x["queueId"], x["queueOffset"])]
        assert (x["phyOffset"], x["size"], x["tagsCode"]) == (u["phy_offset"], u["size"], u["tags_code"])
        m, r = x["message"], messages[x["phyOffset"]]
        assert (m["topic"], m["queueId"], m["queueOffset"], m["storeSize"], m["sysFlag"], m["flag"], m["bodyCRC"],
                m["reconsumeTimes"], m["preparedTransactionOffset"], m["bornTimestamp"], m["storeTimestamp"],
                m["msgId"]) == (
                r["topic"], r["queue_id"], r["queue_offset"], r["total_size"], r["sys_flag"], r["flag"], r["body_crc"],
                r["reconsume_times"], r["prepared_transaction_offset"], r["born_timestamp"], r["store_timestamp"],
                r["msg_id"])
        assert Host.parse(m["bornHost"]) == Host.parse(r["born_host"])
        assert Host.parse(m["storeHost"]) == Host.parse(r["store_host"])
        assert base64.b64decode(m["bodyBase64"]) == base64.b64decode(r["body_base64"])
        assert m["properties"] == r["properties"]


@pytest.mark.parametrize("case", READABLE)
def test_rocketmq_index_answers_equal_our_index_before_the_recheck(case):
    """4.9.4's store returns every entry whose hash matches (its key re-check is commented out);
    our IndexService's raw answer must be the same list. The re-check of ``query_message`` then
    drops the collisions, as 4.9.4's client does."""
    geometry = expected(case)["geometry"]
    store = MessageStore.open(MessageStoreConfig(store_path_root_dir=str(CORPUS / case / "store"), **geometry),
                              ManualClock(0), read_only=True)
    try:
        queries = [x for x in java(case) if x["kind"] == "query"]
        assert queries
        for q in queries:
            offsets, _, _ = store.index_service.query_offset(q["topic"], q["key"], 64, 0, 2**63 - 1)
            assert sorted(offsets) == q["phyOffsets"], q
            checked = sorted(m.phy_offset for m in store.query_message(q["topic"], q["key"], 64, 0, 2**63 - 1).messages)
            assert set(checked) <= set(q["phyOffsets"]) and checked
    finally:
        store.shutdown()


def test_rocketmq_4_9_4_does_not_read_v2_records():
    """``v2_magic`` is 5.x's message version 2: 4.9.4's recovery stops at the first record (an
    unknown magic code), so it keeps no CommitLog data and no unit. pymq_ref reads both versions."""
    load = java("v2_magic")[0]
    assert load["loaded"] and (load["minPhyOffset"], load["maxPhyOffset"]) == (0, 0)
    assert set(map(tuple, load["queues"].values())) == {(0, 0)}
    assert expected("v2_magic")["recovery"]["recovered_offset"] > 0


def test_the_index_collision_reaches_rocketmq_store_answer_but_not_ours():
    (q,) = [x for x in java("index_collision") if x["kind"] == "query" and x["key"] == "orderAa"]
    assert q["phyOffsets"] == [0, 193]  # orderBB's record too: same key hash
    store = MessageStore.open(MessageStoreConfig(store_path_root_dir=str(CORPUS / "index_collision" / "store"),
                                                 **expected("index_collision")["geometry"]), ManualClock(0), read_only=True)
    try:
        assert [m.phy_offset for m in store.query_message("TopicTest", "orderAa", 64, 0, 2**63 - 1).messages] == [0]
    finally:
        store.shutdown()
