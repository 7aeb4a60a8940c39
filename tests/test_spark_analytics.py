"""Every Spark analytic against a pure-Python answer over the same store (the inspect walker, the
store's own queries, the ConsumeQueue bytes) and against what the demo store's builder wrote."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import pytest

from pymq_ref.formats.consume_queue import iter_cq_units
from pymq_ref.formats.message import MessageRecord
from pymq_ref.spark import analytics as A
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.message_store import MessageStore
from pymq_ref.store.store_config import MessageStoreConfig
from pymq_ref.tools.segments import open_readonly, walk_segment

pytest_plugins = ["spark_fixtures"]
REAL_STORE = Path(__file__).parent / "data" / "rocketmq-4.9.4" / "store"


def python_records(store: Path) -> list[MessageRecord]:
    out = []
    for path in sorted((store / "commitlog").iterdir()):
        with open_readonly(path) as buf:
            out += [r for r in walk_segment(buf, base=int(path.name)) if isinstance(r, MessageRecord)]
    return out


@pytest.fixture(scope="module")
def loaded(spark, demo_store):
    root, facts = demo_store
    cl, cq = A.load_store(spark, str(root))
    return root, facts, cl.cache(), cq.cache()


@pytest.mark.parametrize("store_name", ["demo", "real"])
def test_traffic_matches_a_python_walk(spark, demo_store, store_name):
    root = demo_store[0] if store_name == "demo" else REAL_STORE
    cl = spark.read.format("pymq-commitlog").option("body", "false").load(str(root))
    bucket = 3_600_000 if store_name == "demo" else 10
    got = {(r["bucket_start_ms"], r["topic"], r["queue_id"]): (r["messages"], r["bytes"])
           for r in A.traffic(cl, bucket).collect()}
    want = defaultdict(lambda: [0, 0])
    for r in python_records(Path(root)):
        key = (r.store_timestamp - r.store_timestamp % bucket, r.topic, r.queue_id)
        want[key][0] += 1
        want[key][1] += r.total_size
    assert got == {k: tuple(v) for k, v in want.items()}
    growth = {r["topic"]: r["messages"] for r in A.topic_growth(cl).collect()}
    assert growth == Counter(r.topic for r in python_records(Path(root)))


def test_delayed_messages_due_times_status_and_summary(loaded):
    root, facts, cl, cq = loaded
    offsets = {int(k): int(v) for k, v in A.read_offset_table(str(root), "delayOffset.json").items()}
    delayed = A.delayed_messages(cl, delay_offsets=offsets).cache()
    rows = delayed.collect()
    # the due time the analytic computes is the tagsCode the dispatcher wrote into SCHEDULE_TOPIC_XXXX's CQ
    cq_dir = Path(root) / "consumequeue" / "SCHEDULE_TOPIC_XXXX"
    units = {}
    for qdir in cq_dir.iterdir():
        for f in qdir.iterdir():
            with open_readonly(f) as buf:
                for pos, unit in iter_cq_units(buf, base=int(f.name)):
                    units[unit.phy_offset] = (int(qdir.name) + 1, pos // 20, unit.tags_code)
    assert {r["phy_offset"]: (r["level"], r["queue_offset"], r["deliver_timestamp"]) for r in rows} == units
    orders = {r["uniq_key"]: {"level": r["level"], "status": r["status"]} for r in rows if r["real_topic"] == "Orders"}
    assert orders == facts["delayed"]
    assert all(r["status"] == "delivered" for r in rows if r["real_topic"] == "%RETRY%billing")
    summary = {r["level"]: (r["waiting"], r["delivered"]) for r in A.delay_levels_summary(delayed).collect()}
    want = Counter((f["level"], f["status"]) for f in facts["delayed"].values())
    for level, (waiting, delivered) in summary.items():
        retry_parks = sum(1 for r in rows if r["level"] == level and r["real_topic"] != "Orders")
        assert (waiting, delivered) == (want[(level, "waiting")], want[(level, "delivered")] + retry_parks)
    hist = A.delay_due_histogram(delayed, 1000).collect()
    assert sum(r["messages"] for r in hist) == sum(w for w, _ in summary.values()) == 4
    # delayOffset.json agrees: every delivered Orders message is below its level's offset
    assert all(r["before_delay_offset"] for r in rows if r["real_topic"] == "Orders" and r["status"] == "delivered")


def test_transaction_reconciliation(loaded):
    root, facts, cl, cq = loaded
    rows = A.transactions(cl).collect()
    assert {r["uniq_key"]: r["status"] for r in rows} == facts["transactions"]
    by_key = {r["uniq_key"]: r for r in rows}
    pending = [r for r in rows if r["status"] == "pending"]
    assert all(r["half_copies"] == 3 and r["check_times"] == 2 and r["checks_left"] == 13 for r in pending)
    discarded = next(r for r in rows if r["status"] == "discarded")
    assert discarded["check_times"] == 15 and discarded["checks_left"] == 0
    # each commit points back at a half record of its transaction (PREPAREDTRANSACTIONOFFSET)
    records = {r.phy_offset: r for r in python_records(Path(root))}
    for key, r in by_key.items():
        if r["status"] == "committed":
            commit = records[r["commit_phy_offset"]]
            assert commit.sys_flag & 0xC == 0x8
            assert records[commit.prepared_transaction_offset].uniq_key == key


def test_retry_funnel(loaded):
    root, facts, cl, cq = loaded
    rows = A.retry_funnel(cl).collect()
    retry = {r["reconsume_times"]: r["messages"] for r in rows if r["stage"] == "retry" and r["group"] == "billing"}
    assert retry == facts["retry"]["billing"]["attempts"]
    dlq = [r for r in rows if r["stage"] == "dlq"]
    assert [(r["group"], r["messages"], r["reconsume_times"]) for r in dlq] == [("billing", 1, 17)]


def test_consumer_lag_matches_the_store(spark, loaded):
    root, facts, cl, cq = loaded
    lag = A.consumer_lag(A.consumer_offsets(spark, str(root)), cq).collect()
    config = MessageStoreConfig(store_path_root_dir=str(root), mapped_file_size_commit_log=32 * 1024,
                                mapped_file_size_consume_queue=200 * 20, max_hash_slot_num=512, max_index_num=2048)
    store = MessageStore.open(config, ManualClock(), read_only=True)
    try:
        seen = set()
        for r in lag:
            topic_group = f"{r['topic']}@{r['group']}"
            committed = facts["offsets"][topic_group][r["queue_id"]]
            max_offset = store.get_max_offset_in_queue(r["topic"], r["queue_id"])
            lag_bytes = sum(store.look_message_by_offset(store.get_commit_log_offset_in_queue(
                r["topic"], r["queue_id"], o)).total_size for o in range(committed, max_offset))
            assert (r["consumer_offset"], r["max_offset"], r["lag"], r["lag_bytes"]) == \
                (committed, max_offset, max_offset - committed, lag_bytes)
            seen.add((topic_group, r["queue_id"]))
    finally:
        store.shutdown()
    assert seen == {(k, q) for k, qs in facts["offsets"].items() for q in qs}
    assert any(r["lag"] > 0 for r in lag)
