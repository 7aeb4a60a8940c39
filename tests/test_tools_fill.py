"""``pymq fill``: real puts through MessageStore; the store opens, passes the doctor, and is reproducible."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pymq_ref.cli import main
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.message_store import MessageStore
from pymq_ref.store.store_config import MessageStoreConfig
from pymq_ref.tools.doctor import run_doctor
from store_helpers import tree_digest
from pymq_ref.tools.query import query_store

SMALL = ["--commitlog-file-size", "8192", "--cq-file-size", "400", "--hash-slots", "32", "--index-num", "128"]


def _fill(root: Path, *args) -> int:
    return main(["fill", str(root), "--topic", "Orders", "--count", "50", "--body-size", "200", "--tags", "A,B,C",
                 "--keys", "order-{i}", "batch", "--queues", "3", "--seed", "42", "--start-time", "1700000000000",
                 "--quiet", *SMALL, *args])


def test_fill_writes_a_store_that_opens_and_passes_the_doctor(tmp_path, capsys):
    root = tmp_path / "store"
    assert _fill(root, "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["messages"] == 50 and summary["bytes"] > 50 * 200 and summary["msg_per_s"] > 0
    assert summary["first_offset"] == 0 and summary["end_offset"] > summary["bytes"]  # blanks in between
    report = run_doctor(root)
    assert report.clean, report.text()
    assert report.counts["consumequeue"]["units_matched"] == 50
    assert report.counts["index"]["keys_matched"] == 150  # UNIQ_KEY + 2 KEYS tokens
    config = MessageStoreConfig(store_path_root_dir=str(root), mapped_file_size_commit_log=8192,
                                mapped_file_size_consume_queue=400, max_hash_slot_num=32, max_index_num=128)
    store = MessageStore.open(config, ManualClock(), read_only=True)
    try:
        assert [store.get_max_offset_in_queue("Orders", q) for q in range(3)] == [17, 17, 16]
        records = store.get_message("g", "Orders", 1, 0, 32).records()
        assert [r.properties["KEYS"] for r in records[:2]] == ["order-1 batch", "order-4 batch"]
        assert [r.tags for r in records[:3]] == ["B", "B", "B"]  # tags rotate with the message number
        assert all(len(r.body) == 200 and len(r.uniq_key) == 32 and r.properties["CLUSTER"] == "DefaultCluster"
                   for r in records)
        assert list(records[0].properties) == ["KEYS", "UNIQ_KEY", "CLUSTER", "TAGS"]  # Java HashMap order
    finally:
        store.shutdown()
    [found] = query_store(root, "Orders", "order-7").messages
    assert found.queue_id == 7 % 3


def test_fill_is_reproducible_with_seed_and_start_time(tmp_path, capsys):
    assert _fill(tmp_path / "a") == 0 and _fill(tmp_path / "b") == 0
    assert "50 message(s)" in capsys.readouterr().out
    assert tree_digest(tmp_path / "a") == tree_digest(tmp_path / "b")
    assert _fill(tmp_path / "c", "--seed", "43") == 0
    assert tree_digest(tmp_path / "c") != tree_digest(tmp_path / "a")


def test_fill_appends_to_an_existing_store(tmp_path, capsys):
    root = tmp_path / "store"
    assert _fill(root) == 0
    # no geometry options the second time: read from the existing files
    assert main(["fill", str(root), "--topic", "Orders", "--count", "10", "--queues", "3", "--body-size", "50",
                 "--start-time", "1700000100000", "--quiet"]) == 0
    assert {p.stat().st_size for p in (root / "commitlog").iterdir()} == {8192}
    report = run_doctor(root)
    assert report.clean, report.text()
    assert report.counts["commitlog"]["messages"] == 60


def test_fill_sync_flush_and_progress(tmp_path, capsys):
    root = tmp_path / "store"
    assert main(["fill", str(root), "--topic", "S", "--count", "20", "--flush", "sync", "--body-size", "10",
                 "--queues", "1", *SMALL]) == 0
    captured = capsys.readouterr()
    assert "20 message(s)" in captured.out and "sync flush" in captured.out
    assert run_doctor(root).clean
    assert not os.path.exists(root / "abort")  # shut down cleanly


def test_fill_refuses_bad_input(tmp_path, capsys):
    assert main(["fill", str(tmp_path / "s"), "--topic", "x" * 200, "--count", "1", "--quiet", *SMALL]) == 2
    assert "MESSAGE_ILLEGAL" in capsys.readouterr().err
    assert main(["fill", str(tmp_path / "s2"), "--topic", "T", "--count", "1", "--born-host", "nope", *SMALL]) == 2
    assert "HOST:PORT" in capsys.readouterr().err
