"""The golden corpus (``corpus/``): regenerating it gives the committed bytes, and the readers
(``pymq inspect``, ``pymq doctor``, recovery, ``pymq query``) produce its expected JSON."""

from __future__ import annotations

import importlib.util
import io
import json
import shutil
from pathlib import Path

import pytest

from pymq_ref.cli import main
from pymq_ref.formats.consume_queue import CQ_UNIT
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.message_store import MessageStore
from pymq_ref.tools.inspect import InspectOptions, inspect_path
from pymq_ref.tools.query import query_store

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
_spec = importlib.util.spec_from_file_location("corpus_generate", CORPUS / "generate.py")
generate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generate)
CASES = list(generate.CASES)


def _expected(name: str) -> dict:
    return json.loads((CORPUS / name / "expected.json").read_text(encoding="utf-8"))


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_corpus_regenerates_byte_identical(tmp_path, capsys):
    assert generate.main(["generate.py", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(CASES)
    for name in CASES:
        fresh, committed = _tree(tmp_path / name), _tree(CORPUS / name)
        assert sorted(fresh) == sorted(committed), name
        for rel in fresh:
            assert fresh[rel] == committed[rel], f"{name}/{rel} differs from the committed corpus"


def test_corpus_is_small():
    """The store corpus; corpus/frames/ (the remoting frame corpus) has its own budget in test_frames_corpus."""
    frames = CORPUS / "frames"
    total = sum(p.stat().st_size for p in CORPUS.rglob("*") if p.is_file() and frames not in p.parents)
    assert total < 512 * 1024


@pytest.mark.parametrize("name", CASES)
def test_inspect_output_matches(name):
    expected = _expected(name)
    geometry = expected["geometry"]
    root = CORPUS / name / "store"
    assert sorted(expected["files"]) == sorted(_tree(root))
    for rel, doc in expected["files"].items():
        if rel in ("lock", "abort"):
            continue
        out = io.StringIO()  # (inspect_path's default stdout is bound at import: pass one)
        status = inspect_path(root / rel, InspectOptions(format="json", hash_slots=geometry["max_hash_slot_num"],
                                                         index_num=geometry["max_index_num"]), out=out)
        got = json.loads(out.getvalue())
        got.pop("file")
        assert status == doc.pop("exit_status"), rel
        assert got == doc, rel


@pytest.mark.parametrize("name", CASES)
def test_doctor_output_matches(name, capsys):
    expected = _expected(name)
    root = CORPUS / name / "store"
    for geometry_args in ([], ["--hash-slots", str(expected["geometry"]["max_hash_slot_num"]),
                               "--index-num", str(expected["geometry"]["max_index_num"])]):
        status = main(["doctor", str(root), "--json", "--quiet", *geometry_args])
        report = json.loads(capsys.readouterr().out)
        strip = lambda items: [{k: v for k, v in f.items() if k != "reason"} for f in items]  # noqa: E731
        assert status == expected["doctor"]["exit_status"]
        assert strip(report["findings"]) == expected["doctor"]["findings"]
        assert strip(report["notes"]) == expected["doctor"]["notes"]


@pytest.mark.parametrize("name", CASES)
def test_recovery_keeps_what_is_expected(name):
    expected = _expected(name)
    assert generate.recovery_doc(CORPUS / name / "store", expected["geometry"]) == expected["recovery"]


def test_dirty_tail_recovery_cuts_the_torn_record(tmp_path, capsys):
    expected = _expected("dirty_tail")
    root = tmp_path / "store"
    shutil.copytree(CORPUS / "dirty_tail" / "store", root)
    end = expected["facts"]["good_end_offset"]
    with MessageStore.open(generate.config(root), ManualClock(generate.T0 + 10_000)) as store:
        assert not store.last_exit_ok and store.recovered_offset == end
    data = (root / "commitlog" / f"{0:020d}").read_bytes()
    assert data[end:] == bytes(len(data) - end)  # the torn bytes are gone
    assert main(["doctor", str(root), "--quiet"]) == 0
    assert "clean" in capsys.readouterr().out


def test_case_facts_hold():
    delayed = _expected("delayed")["facts"]
    unit = CQ_UNIT.unpack_from((CORPUS / "delayed/store/consumequeue/SCHEDULE_TOPIC_XXXX/2" / f"{0:020d}").read_bytes())
    assert unit == (0, 258, delayed["schedule_unit_tags_code"])
    collisions = _expected("index_collision")["facts"]
    root = CORPUS / "index_collision" / "store"
    for key in collisions["same_hash"]["keys"] + collisions["same_slot"]["keys"] + [collisions["hash_zero"]["key"]]:
        result = query_store(root, "TopicTest", key)
        assert [m.keys for m in result.messages] == [[key]], key
    assert len(query_store(root, "TopicTest", "orderAa").rejected) == 1  # orderBB, same hash
    records = _expected("batch")["files"]["commitlog/00000000000000000000"]["records"]
    batch = [r for r in records if r.get("phy_offset") in _expected("batch")["facts"]["batch_offsets"]]
    assert [r["queue_offset"] for r in batch] == [1, 2, 3]
    assert len({r["store_timestamp"] for r in batch}) == 1
    assert all(list(r["properties"])[-1] == "CLUSTER" for r in batch)
