"""ConsumeQueueExt against a store written by the real RocketMQ 4.9.4 store classes with
``enableConsumeQueueExt`` (tests/data/rocketmq-4.9.4-ext, see its README.md).

``expected.jsonl`` is what RocketMQ's own code read back from that store: every ConsumeQueue unit
with the ext unit its address points at (``ConsumeQueue.getExt``), and the answer of
``getMessage`` for each tag expression. Nothing in it comes from pymq_ref.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pymq_ref.formats.message import MessageRecord
from pymq_ref.formats.hosts import Host
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.message_store import MessageStore
from pymq_ref.store.store_config import MessageStoreConfig
from pymq_ref.tools.doctor import run_doctor
from pymq_ref.tools.store_files import walk_consumequeue_ext
from pymq_ref.tools.store_summary import summarize_store
from pymq_ref.tools.segments import open_readonly
from store_helpers import tree_digest

FIXTURE = Path(__file__).parent / "data" / "rocketmq-4.9.4-ext"
STORE = FIXTURE / "store"
LINES = [json.loads(line) for line in (FIXTURE / "expected.jsonl").read_text(encoding="utf-8").splitlines()]
UNITS = [x for x in LINES if x["kind"] == "unit"]
PULLS = [x for x in LINES if x["kind"] == "pull"]


def config(root: Path) -> MessageStoreConfig:
    """The settings the fixture was written with (README.md); loading as 4.9.4 does, which these
    tests compare with (``strict_load``)."""
    return MessageStoreConfig(store_path_root_dir=str(root), strict_load=True, mapped_file_size_commit_log=64 * 1024,
                              mapped_file_size_consume_queue=1000, enable_consume_queue_ext=True,
                              mapped_file_size_consume_queue_ext=200, max_hash_slot_num=100, max_index_num=200)


@pytest.fixture(scope="module")
def store():
    before = tree_digest(STORE)
    s = MessageStore.open(config(STORE), ManualClock(0), read_only=True)
    yield s
    s.shutdown()
    assert tree_digest(STORE) == before  # a read-only store never writes


def test_fixture_shape():
    assert len(UNITS) == 42 and len(PULLS) == 15
    assert all(u["isExtAddr"] and u["ext"]["bitMapSize"] == 0 for u in UNITS)


def test_every_unit_resolves_to_the_ext_unit_rocketmq_read(store):
    for u in UNITS:
        cq = store.find_consume_queue(u["topic"], u["queueId"], create=False)
        unit = cq.get_unit(u["queueOffset"])
        assert (unit.phy_offset, unit.size, unit.tags_code) == (u["commitLogOffset"], u["size"], u["tagsCodeField"])
        ext = cq.get_ext(unit.tags_code)
        assert (ext.size, ext.tags_code, ext.msg_store_time, ext.bit_map_size) == (
            u["ext"]["size"], u["ext"]["tagsCode"], u["ext"]["msgStoreTime"], u["ext"]["bitMapSize"]), u


def test_get_message_filters_through_ext_as_rocketmq_did(store):
    for p in PULLS:
        r = store.get_message("g", p["topic"], p["queueId"], 0, 64, p["expression"])
        assert (r.status.name, r.next_begin_offset) == (p["status"], p["nextBeginOffset"]), p
        assert [rec.queue_offset for rec in r.records()] == p["queueOffsets"], p


def test_inspect_walks_every_ext_file_as_rocketmq_laid_it_out():
    by_file: dict[str, list[dict]] = {}
    for u in UNITS:
        start = u["ext"]["realOffset"] // 200 * 200
        by_file.setdefault(f"{u['topic']}/{u['queueId']}/{start:020d}", []).append(u)
    for rel, units in by_file.items():
        path = STORE / "consumequeue_ext" / rel
        with open_readonly(path) as buf:
            items = [i.json for i in walk_consumequeue_ext(buf, path) if hasattr(i, "json")]
        walked = [i for i in items if i["type"] == "cq_ext_unit"]
        assert [(i["offset"], i["address"], i["tags_code"], i["msg_store_time"]) for i in walked] == [
            (u["ext"]["realOffset"], u["tagsCodeField"], u["ext"]["tagsCode"], u["ext"]["msgStoreTime"]) for u in units]
        full = len(units) == 9  # 9 units of 20 bytes; the 10th would leave no room for the 4-byte end mark
        assert [i["offset"] for i in items if i["type"] == "cq_ext_filler"] == ([int(path.name) + 180] if full else [])
    summary = summarize_store(STORE)["consumequeue_ext"]
    assert summary["file_size"] == 200
    assert summary["queues"]["TopicExt/0"] == {"files": 3, "min_offset": 0, "max_offset": 440, "units_in_last_file": 2}


def test_doctor_is_clean():
    report = run_doctor(str(STORE))
    assert report.exit_status == 0, [str(f) for f in report.findings]
    assert report.counts["consumequeue"]["units_matched"] == 42


def extend(root: Path) -> None:
    """What pymq_ref appends to a copy of the fixture (clean shutdown before: normal recovery):
    ten more messages on TopicExt, tags cycling TagA, TagB, TagC, none, as in the fixture."""
    shutil.copytree(STORE, root)
    s = MessageStore.open(config(root), ManualClock(1_795_300_000_000, step_ms=1))
    try:
        assert s.last_exit_ok
        for i in range(40, 50):
            tags = ("TagA", "TagB", "TagC", None)[i % 4]
            props = {"KEYS": f"key-{i}", "UNIQ_KEY": f"U{i}", "CLUSTER": "DefaultCluster"}
            if tags:
                props["TAGS"] = tags
            r = s.put_message(MessageRecord(topic="TopicExt", body=f"ext body {i}".encode(), queue_id=i % 2,
                                            properties=props, born_timestamp=1_700_000_000_000 + i * 1000,
                                            born_host=Host("127.0.0.1", 54321), store_host=Host("127.0.0.1", 10911)))
            assert r.ok
    finally:
        s.shutdown()


def test_our_store_extends_rocketmq_ext_files(tmp_path):
    """The new ext units follow RocketMQ's at the addresses RocketMQ's ``put`` gives them."""
    root = tmp_path / "store"
    extend(root)
    s = MessageStore.open(config(root), ManualClock(0), read_only=True)
    try:
        cq = s.find_consume_queue("TopicExt", 0)
        # queue 0 had 20 units, the last 2 in the ext file at 400: five more go to 440..520
        assert [cq.get_unit(o).tags_code + 2**63 for o in range(20, 25)] == [440, 460, 480, 500, 520]
        assert [x.queue_offset for x in s.get_message("g", "TopicExt", 0, 0, 64, "TagA").records()] == \
            list(range(0, 20, 2)) + [20, 22, 24]
    finally:
        s.shutdown()
    report = run_doctor(str(root))
    assert report.exit_status == 0, [str(f) for f in report.findings]


def test_rocketmq_reads_what_we_appended(tmp_path):
    """``rocketmq_reads_pymq.jsonl`` is RocketMQ 4.9.4 reopening the store :func:`extend` writes
    and reading every unit, ext unit and tag pull back (README.md). It holds for these bytes:
    the files must be the ones RocketMQ read, and our own reading must agree with it."""
    root = tmp_path / "store"
    extend(root)
    recorded = json.loads((FIXTURE / "pymq_extension.sha256.json").read_text())
    assert {k: v for k, v in tree_digest(root).items() if k in recorded} == recorded
    java = [json.loads(line) for line in (FIXTURE / "rocketmq_reads_pymq.jsonl").read_text().splitlines()]
    assert len([x for x in java if x["kind"] == "unit"]) == 52
    s = MessageStore.open(config(root), ManualClock(0), read_only=True)
    try:
        for x in java:
            cq = s.find_consume_queue(x["topic"], x["queueId"], create=False)
            if x["kind"] == "unit":
                unit = cq.get_unit(x["queueOffset"])
                ext = cq.get_ext(unit.tags_code)
                assert (unit.phy_offset, unit.size, unit.tags_code, ext.tags_code, ext.msg_store_time) == (
                    x["commitLogOffset"], x["size"], x["tagsCodeField"], x["ext"]["tagsCode"],
                    x["ext"]["msgStoreTime"]), x
            else:
                r = s.get_message("g", x["topic"], x["queueId"], 0, 64, x["expression"])
                assert (r.status.name, r.next_begin_offset) == (x["status"], x["nextBeginOffset"])
                assert [rec.queue_offset for rec in r.records()] == x["queueOffsets"], x
    finally:
        s.shutdown()


# -- recovery, then appends: ours against RocketMQ's ---------------------------------------------
def damage(root: Path, scenario: str) -> None:
    """``crash``: abort file; ``torn``: the last record zeroed after 40 bytes, abort; ``crc``: a
    body byte of the last record flipped, clean shutdown; ``ext_lost``: the last ext file of
    TopicExt/0 deleted, abort."""
    import recovery_scenarios as R

    last = sorted((root / "commitlog").iterdir())[-1]
    pos, size = R._records(last)[-1]
    if scenario in ("crash", "torn", "ext_lost"):
        (root / "abort").write_bytes(b"")
    if scenario == "torn":
        R._patch(last, pos + 40, bytes(size - 40))
    if scenario == "crc":
        R._patch(last, pos + 100, bytes([last.read_bytes()[pos + 100] ^ 0xFF]))
    if scenario == "ext_lost":
        sorted((root / "consumequeue_ext" / "TopicExt" / "0").iterdir())[-1].unlink()


def append_four(root: Path) -> None:
    """Open (recovery), then put messages 40–43 as RocketMQ's harness did (same bytes but the
    store timestamps: HashMap property order, its UNIQ_KEY counter from 0)."""
    from pymq_ref.formats.properties import hashmap_order

    with MessageStore.open(config(root), ManualClock(1_795_300_000_000, step_ms=1)) as s:
        for k, i in enumerate(range(40, 44)):
            props = {"KEYS": f"key-{i}", "UNIQ_KEY": f"7F000001303918B4AAC2{i * 1000:08X}{k:04X}",
                     "CLUSTER": "DefaultCluster"}
            if i % 4 < 3:
                props["TAGS"] = ("TagA", "TagB", "TagC")[i % 4]
            assert s.put_message(MessageRecord(
                topic="TopicExt", body=f"ext body {i}".encode(), queue_id=i % 2, properties=hashmap_order(props),
                born_timestamp=1_700_000_000_000 + i * 1000, born_host=Host("127.0.0.1", 54321),
                store_host=Host("127.0.0.1", 10911))).ok


def ext_chains(ext_root: Path) -> dict[str, list]:
    """Every ext file as (offset, size, tagsCode) of its units and the filler: store times aside."""
    out = {}
    for path in sorted(ext_root.rglob("0" * 10 + "*")):
        with open_readonly(path) as buf:
            out[str(path.relative_to(ext_root))] = [
                (i.json["offset"], i.json["size"], i.json["tags_code"]) if i.json["type"] == "cq_ext_unit"
                else ("filler", i.json["offset"]) for i in walk_consumequeue_ext(buf, path) if hasattr(i, "json")]
    return out


@pytest.mark.parametrize("scenario", ["crash", "torn", "crc", "ext_lost"])
def test_recovery_then_appends_match_rocketmq(tmp_path, scenario):
    """RocketMQ 4.9.4 recovered the damaged copy and appended the same four messages
    (recovery/<scenario>/: its readback and its consumequeue_ext/ files). Ours must leave the same
    units, ext units — orphans of duplicate dispatches included — and tag pulls."""
    recorded = FIXTURE / "recovery" / scenario
    root = tmp_path / "store"
    shutil.copytree(STORE, root)
    (root / "lock").unlink()
    damage(root, scenario)
    append_four(root)
    assert ext_chains(root / "consumequeue_ext") == ext_chains(recorded / "consumequeue_ext")
    java = [json.loads(line) for line in (recorded / "rocketmq.jsonl").read_text().splitlines()]
    with MessageStore.open(config(root), ManualClock(0), read_only=True) as s:
        for x in java:
            cq = s.find_consume_queue(x["topic"], x["queueId"], create=False)
            if x["kind"] == "unit":
                unit = cq.get_unit(x["queueOffset"])
                ext = cq.get_ext(unit.tags_code)
                assert (unit.phy_offset, unit.size, unit.tags_code) == (x["commitLogOffset"], x["size"],
                                                                         x["tagsCodeField"]), x
                assert (None if ext is None else ext.tags_code) == (x["ext"] and x["ext"]["tagsCode"]), x
            else:
                r = s.get_message("g", x["topic"], x["queueId"], 0, 64, x["expression"])
                assert (r.status.name, r.next_begin_offset, [m.queue_offset for m in r.records()]) == (
                    x["status"], x["nextBeginOffset"], x["queueOffsets"]), x
