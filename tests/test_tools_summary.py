"""The store summary of ``pymq inspect STORE``: built on ``store_layout.discover`` (the doctor's walk),
it shows the same files, surfaces the layout problems, and never writes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from pymq_ref.cli import main
from pymq_ref.tools.fill import FillOptions, fill_store
from pymq_ref.tools.store_layout import StoreUnreadable, discover
from pymq_ref.tools.store_summary import render_summary, summarize_store
from readonly_helpers import read_only_tree, tree_snapshot

FIXTURE_4_9_4 = Path(__file__).parent / "data" / "rocketmq-4.9.4" / "store"


@pytest.fixture(scope="module")
def base_store(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("summary") / "store"
    fill_store(str(root), FillOptions(topic="T", count=40, body_size=100, tags="A", keys=("k-{i}",), queues=3, seed=3,
                                      start_time=1_700_000_000_000, commitlog_file_size=4096, cq_file_size=200,
                                      hash_slots=16, index_num=64))
    return root


@pytest.fixture
def store(base_store, tmp_path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(base_store, root)
    return root


def inspect_json(root: Path, capsys) -> tuple[int, dict]:
    code = main(["inspect", str(root), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_summary_lists_exactly_what_discover_found(store, capsys):
    layout = discover(store)
    code, doc = inspect_json(store, capsys)
    assert code == 0 and doc["findings"] == [] and doc["commitlog"]["findings"] == []
    assert [(f["name"], f["size"]) for f in doc["commitlog"]["files"]] == [
        (s.path.name, s.size) for s in layout.commitlog]
    assert doc["commitlog"]["min_offset"] == layout.commitlog[0].base
    assert {(t, int(q), info["files"]) for t, v in doc["topics"].items() for q, info in v["queues"].items()} == {
        (q.topic, q.queue_id, len(q.segments)) for q in layout.queues}
    assert [i["file"] for i in doc["index"]] == [s.path.name for s in layout.index_files]
    assert sum(t["messages"] for t in doc["topics"].values()) == 40
    assert summarize_store(store, layout) == summarize_store(store)  # a discovered layout can be passed in


def test_queues_in_numeric_order_and_empty_topic_directories_kept(store, capsys):
    for q in (10, 2):
        shutil.copytree(store / "consumequeue" / "T" / "0", store / "consumequeue" / "T" / str(q), dirs_exist_ok=True)
    (store / "consumequeue" / "Gone").mkdir()  # a topic whose queue directories were destroyed
    code, doc = inspect_json(store, capsys)
    assert code == 0 and doc["findings"] == []
    assert list(doc["topics"]) == ["Gone", "T"] and doc["topics"]["Gone"] == {"queues": {}, "messages": 0}
    assert list(doc["topics"]["T"]["queues"]) == ["0", "1", "2", "10"]  # discover lists "10" before "2"
    text = render_summary(summarize_store(store))
    assert "  Gone: 0 message(s)\n" in text and text.index("queue 2:") < text.index("queue 10:")


def test_layout_problems_are_findings(store, capsys):
    (store / "junk.txt").write_text("x")
    (store / "commitlog" / "not-a-segment").write_bytes(bytes(4096))
    with open(store / "consumequeue" / "T" / "1" / ("0" * 20), "ab") as f:
        f.write(bytes(20))
    code, doc = inspect_json(store, capsys)
    assert [(f["severity"], f["code"], f["file"]) for f in doc["findings"]] == [
        ("warning", "unknown_file", "junk.txt"), ("error", "bad_segment_name", "commitlog/not-a-segment"),
        ("error", "wrong_file_size", "consumequeue/T/1/00000000000000000000")]
    # a CommitLog layout error is a CommitLog finding: inspect exits 1
    assert code == 1 and doc["commitlog"]["findings"] == [
        "commitlog/not-a-segment: " + doc["findings"][1]["reason"]]
    text = render_summary(summarize_store(store))
    assert "  ! commitlog/not-a-segment: segment names are their start offset" in text
    assert "layout: 2 problem(s)" in text and text.count("not-a-segment") == 1  # not listed twice
    assert "  ! WARNING unknown_file: junk.txt: " in text
    assert "  ! ERROR wrong_file_size: consumequeue/T/1/00000000000000000000: ConsumeQueue segment of 220 bytes" in text


def test_any_layout_error_or_warning_makes_inspect_exit_1(store, capsys):
    with open(store / "consumequeue" / "T" / "1" / ("0" * 20), "ab") as f:
        f.write(bytes(20))
    code, doc = inspect_json(store, capsys)
    assert code == 1 and doc["commitlog"]["findings"] == [] and len(doc["findings"]) == 1
    os.truncate(store / "consumequeue" / "T" / "1" / ("0" * 20), 200)
    (store / "junk.txt").write_text("x")
    code, doc = inspect_json(store, capsys)
    assert code == 1 and [f["severity"] for f in doc["findings"]] == ["warning"]


def test_commitlog_segment_of_the_wrong_size(store, capsys):
    last = sorted((store / "commitlog").iterdir())[-1]
    os.truncate(last, 1000)
    code, doc = inspect_json(store, capsys)
    assert code == 1
    [finding] = doc["findings"]
    assert (finding["code"], finding["file"]) == ("wrong_file_size", f"commitlog/{last.name}")
    assert doc["commitlog"]["findings"][0] == f"commitlog/{last.name}: CommitLog segment of 1000 bytes: expected " \
                                              f"4096 like the other segments (RocketMQ refuses to load it)"


def test_short_checkpoint_is_reported_not_fatal(store, capsys):
    (store / "checkpoint").write_bytes(bytes(10))
    code, doc = inspect_json(store, capsys)
    assert code == 1 and "error" in doc["checkpoint"] and "expected" in doc["checkpoint"]["error"]
    assert "checkpoint: ! " in render_summary(doc)


def test_not_a_store(tmp_path):
    with pytest.raises(StoreUnreadable):
        summarize_store(tmp_path)
    assert main(["inspect", str(tmp_path)]) == 2


@pytest.mark.skipif(not FIXTURE_4_9_4.is_dir(), reason="the RocketMQ 4.9.4 store fixture is not present")
def test_real_rocketmq_store_has_no_layout_problems():
    doc = summarize_store(FIXTURE_4_9_4)
    assert doc["findings"] == [] and doc["commitlog"]["findings"] == []
    assert "layout:" not in render_summary(doc)


def test_summary_is_read_only(store, capsys, monkeypatch):
    """On a read-only tree (with a layout problem and config files, so every branch runs): no file
    opened for writing, nothing mapped writable, no lock taken, nothing changed or created."""
    (store / "config").mkdir()
    (store / "config" / "topics.json").write_text('{"topicConfigTable":{"T":{}}}')
    (store / "junk.txt").write_text("x")
    with read_only_tree(store, monkeypatch) as io:
        outputs = []
        for fmt in ("text", "json", "html"):
            assert main(["inspect", str(store), "--format", fmt]) == 1  # junk.txt: a layout warning
            outputs.append(capsys.readouterr().out)
        after = tree_snapshot(store)
    assert "layout: 1 problem(s)" in outputs[0] and json.loads(outputs[1])["config"] == {
        "topics.json": {"topicConfigTable": 1}}
    io.assert_read_only()
    assert after == io.before
