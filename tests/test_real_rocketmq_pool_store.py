"""The transient store pool against real RocketMQ 4.9.4 (tests/data/rocketmq-4.9.4-pool, README.md).

``store/`` was written by the 4.9.4 store classes with ``transientStorePoolEnable`` and two
buffers, so segments reuse buffers; ``rocketmq_reads_pymq.jsonl`` is 4.9.4 reading a store that
pymq_ref wrote the same way (:func:`write_with_pool`).
"""

from __future__ import annotations

import json
from pathlib import Path

from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import BlankRecord, MessageRecord
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.message_store import MessageStore
from pymq_ref.store.store_config import FlushDiskType, MessageStoreConfig
from pymq_ref.tools.doctor import run_doctor
from pymq_ref.tools.segments import walk_segment
from store_helpers import tree_digest

FIXTURE = Path(__file__).parent / "data" / "rocketmq-4.9.4-pool"
STORE = FIXTURE / "store"


def config(root: Path, pool: bool) -> MessageStoreConfig:
    return MessageStoreConfig(store_path_root_dir=str(root), mapped_file_size_commit_log=4096,
                              mapped_file_size_consume_queue=1000, max_hash_slot_num=100, max_index_num=400,
                              flush_disk_type=FlushDiskType.ASYNC_FLUSH, transient_store_pool_enable=pool,
                              transient_store_pool_size=2)


def message(i: int) -> MessageRecord:
    """Message ``i`` of both stores: 100–399-byte bodies, so each segment's blank starts elsewhere."""
    props = {"KEYS": f"key-{i}", "TAGS": "TagA" if i % 2 == 0 else "TagB",
             "UNIQ_KEY": f"7F000001303918B4AAC2{i:012X}", "CLUSTER": "DefaultCluster"}
    return MessageRecord(topic="TopicPool", body=bytes([ord("a") + i % 26]) * (100 + (i * 37) % 300), queue_id=i % 2,
                         properties=props, born_timestamp=1_700_000_000_000 + i * 1000,
                         born_host=Host("127.0.0.1", 54321), store_host=Host("127.0.0.1", 10911))


def blanks(root: Path) -> dict[int, tuple[int, bytes]]:
    """Segment base -> (file position of its END_OF_FILE blank, the bytes after the blank's 8)."""
    out = {}
    for path in sorted((root / "commitlog").iterdir()):
        data, base = path.read_bytes(), int(path.name)
        for item in walk_segment(data, base=base):
            if isinstance(item, BlankRecord):
                pos = item.phy_offset - base
                out[base] = (pos, data[pos + 8:])
    return out


def test_rocketmq_pool_store_leaves_an_older_segment_after_the_blank():
    """A source fact easy to miss: ``commit0`` writes a reused buffer up to the wrote
    position, which the blank moved to the file's end, so an older segment's bytes follow."""
    segments = {int(p.name): p.read_bytes() for p in (STORE / "commitlog").iterdir()}
    stale = {base: [older for older, data in segments.items() if older < base and data[pos + 8:] == tail]
             for base, (pos, tail) in blanks(STORE).items() if any(tail)}
    # which older segment shows through depends on when RocketMQ's commit service returned the
    # buffer (in the committed fixture: 12288 shows 4096's bytes, 16384 shows 8192's)
    assert stale and all(stale.values()), stale


def test_our_readers_take_the_rocketmq_pool_store_as_it_is():
    report = run_doctor(str(STORE))
    assert report.exit_status == 0, [str(f) for f in report.findings]
    assert report.counts["consumequeue"]["units_matched"] == 60
    s = MessageStore.open(config(STORE, pool=False), ManualClock(0), read_only=True)
    try:
        assert s.get_max_phy_offset() == 27135
        got = [r for q in (0, 1) for r in s.get_message("g", "TopicPool", q, 0, 64).records()]
        assert sorted(r.properties["KEYS"] for r in got) == sorted(f"key-{i}" for i in range(60))
        assert all(r.body == message(int(r.properties["KEYS"][4:])).body for r in got)
    finally:
        s.shutdown()


def write_with_pool(root: Path) -> None:
    """The same 60 messages through our store with the pool, committing after every put."""
    s = MessageStore.open(config(root, pool=True), ManualClock(1_795_300_000_000, step_ms=1))
    try:
        for i in range(60):
            assert s.put_message(message(i)).ok
            s.commit(0)
    finally:
        s.shutdown()


def test_rocketmq_reads_our_pool_store(tmp_path):
    root = tmp_path / "store"
    write_with_pool(root)
    # the same record sizes, so the same blank positions as RocketMQ's
    assert {b: pos for b, (pos, _) in blanks(root).items()} == {b: pos for b, (pos, _) in blanks(STORE).items()}
    pinned = tree_digest(root, lambda rel: rel.split("/")[-2:-1] in (["commitlog"], ["index"], ["0"], ["1"]))
    assert pinned == json.loads((FIXTURE / "pymq_pool_store.sha256.json").read_text())
    java = [json.loads(line) for line in (FIXTURE / "rocketmq_reads_pymq.jsonl").read_text().splitlines()]
    load = java[0]
    assert load["loaded"] and (load["minPhyOffset"], load["maxPhyOffset"]) == (0, 27135)
    assert load["queues"] == {"TopicPool/0": [0, 30], "TopicPool/1": [0, 30]}
    units = [x for x in java if x["kind"] == "unit"]
    assert sorted(x["message"]["properties"]["KEYS"] for x in units) == sorted(f"key-{i}" for i in range(60))
    s = MessageStore.open(config(root, pool=False), ManualClock(0), read_only=True)
    try:
        for x in units:
            (rec,) = s.get_message("g", "TopicPool", x["queueId"], x["queueOffset"], 1).records()
            assert (rec.phy_offset, rec.total_size, rec.store_timestamp, rec.msg_id) == (
                x["phyOffset"], x["size"], x["message"]["storeTimestamp"], x["message"]["msgId"])
        for q in (x for x in java if x["kind"] == "query"):
            assert [m.phy_offset for m in s.query_message("TopicPool", q["key"], 64, 0, 2**63 - 1).messages] == \
                q["phyOffsets"]
    finally:
        s.shutdown()
