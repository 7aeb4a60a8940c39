"""``pymq doctor``: clean stores pass, each kind of damage is found with file + offset + reason,
the real RocketMQ 4.9.4 fixture is clean, and the doctor never writes."""

from __future__ import annotations

import fcntl
import hashlib
import json
import mmap
import os
import shutil
import struct
from pathlib import Path

import pytest

from pymq_ref.cli import main
from pymq_ref.formats.consume_queue import CQ_UNIT
from pymq_ref.formats.index_file import ENTRY, entry_position
from pymq_ref.formats.message import BlankRecord, MessageRecord, iter_records
from pymq_ref.tools.doctor import DoctorOptions, run_doctor
from pymq_ref.tools.fill import FillOptions, fill_store

FIXTURE_4_9_4 = Path(__file__).parent / "data" / "rocketmq-4.9.4" / "store"
SLOTS, ENTRIES = 64, 128


@pytest.fixture(scope="module")
def base_store(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("doctor") / "store"
    fill_store(str(root), FillOptions(topic="T", count=60, body_size=100, tags="A,B", keys=("k-{i}", "common"),
                                      queues=3, seed=7, start_time=1_700_000_000_000, commitlog_file_size=4096,
                                      cq_file_size=200, hash_slots=SLOTS, index_num=ENTRIES))
    return root


@pytest.fixture
def store(base_store, tmp_path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(base_store, root)
    return root


def doctor_json(root, capsys, *extra) -> tuple[int, dict]:
    code = main(["doctor", str(root), "--json", "--quiet", *extra])
    out = capsys.readouterr().out
    return code, json.loads(out)


def records(root: Path, name: str = "00000000000000000000"):
    data = (root / "commitlog" / name).read_bytes()
    return [r for r in iter_records(data, base=int(name)) if isinstance(r, MessageRecord)]


def patch(path: Path, offset: int, data: bytes) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def only(report: dict, code: str) -> list[dict]:
    return [f for f in report["findings"] if f["code"] == code]


def test_clean_store_exit_0(store, capsys):
    code, report = doctor_json(store, capsys)
    assert code == 0, report["findings"]
    assert report["clean"] and report["findings"] == []
    counts = report["counts"]
    assert counts["commitlog"]["messages"] == 60 and counts["commitlog"]["blanks"] >= 1
    assert counts["consumequeue"]["units"] == counts["consumequeue"]["units_matched"] == 60
    assert counts["index"]["entries"] == counts["index"]["keys_matched"] == 180  # UNIQ_KEY + 2 KEYS each


def test_text_output_and_progress(store, capsys):
    seen = []
    report = run_doctor(store, DoctorOptions(progress=lambda done, total: seen.append((done, total)),
                                             progress_every=4096))
    assert report.clean
    assert len(seen) > 3 and seen[-1][0] == seen[-1][1] and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert main(["doctor", str(store)]) == 0
    captured = capsys.readouterr()
    assert "clean: no findings" in captured.out and "MiB of CommitLog" in captured.err


def test_flipped_body_byte_is_a_crc_mismatch(store, capsys):
    rec = records(store)[2]
    body_at = rec.phy_offset + 88  # IPv4 hosts: body starts at 88
    patch(store / "commitlog" / "00000000000000000000", body_at, bytes([rec.body[0] ^ 0xFF]))
    code, report = doctor_json(store, capsys)
    assert code == 1
    [f] = only(report, "crc_mismatch")
    assert f["file"] == "commitlog/00000000000000000000" and f["offset"] == rec.phy_offset + 8
    assert "body_crc" in f["reason"] and "recovery" in f["reason"]


def test_flipped_magic(store, capsys):
    rec = records(store)[3]
    patch(store / "commitlog" / "00000000000000000000", rec.phy_offset + 4, b"\x00\x11\x22\x33")
    code, report = doctor_json(store, capsys)
    assert code == 1
    [f] = only(report, "bad_magic")
    assert (f["file"], f["offset"]) == ("commitlog/00000000000000000000", rec.phy_offset + 4)
    assert "0xDAA320A7" in f["reason"] and "recovery cuts the log here" in f["reason"]


def test_truncated_segment_file(store, capsys):
    path = store / "commitlog" / "00000000000000004096"
    recs = records(store, path.name)
    cut = recs[1].phy_offset - 4096 + 30  # in the middle of the second record
    with open(path, "r+b") as f:
        f.truncate(cut)
    code, report = doctor_json(store, capsys)
    assert code == 1
    [size] = only(report, "wrong_file_size")
    assert size["file"] == "commitlog/00000000000000004096" and "expected 4096" in size["reason"]
    [rec] = only(report, "bad_record")
    assert rec["file"] == "commitlog/00000000000000004096" and rec["offset"] == recs[1].phy_offset - 4096


def test_garbage_after_the_last_record(store, capsys):
    last = sorted((store / "commitlog").iterdir())[-1]
    recs = records(store, last.name)
    end = recs[-1].phy_offset + recs[-1].total_size - int(last.name)
    patch(last, end + 100, b"garbage!")
    code, report = doctor_json(store, capsys)
    assert code == 1
    [f] = only(report, "stray_bytes")
    assert (f["file"], f["offset"]) == (f"commitlog/{last.name}", end + 100)
    assert f"[{end + 100}, {end + 108})" in f["reason"]


def test_wrong_sized_consume_queue_file(store, capsys):
    path = store / "consumequeue" / "T" / "0" / "00000000000000000000"
    with open(path, "ab") as f:
        f.write(b"\0" * 20)
    code, report = doctor_json(store, capsys)
    assert code == 1
    [f] = only(report, "wrong_file_size")
    assert f["file"] == "consumequeue/T/0/00000000000000000000" and "220 bytes" in f["reason"]


def test_unit_pointing_at_a_wrong_size(store, capsys):
    path = store / "consumequeue" / "T" / "1" / "00000000000000000000"
    phy, size, tags = CQ_UNIT.unpack_from(path.read_bytes(), 3 * 20)
    patch(path, 3 * 20, CQ_UNIT.pack(phy, size + 1, tags))
    code, report = doctor_json(store, capsys)
    assert code == 1
    [f] = only(report, "cq_unit_mismatch")
    assert (f["file"], f["offset"], f["phy_offset"]) == ("consumequeue/T/1/00000000000000000000", 60, phy)
    assert f"size {size + 1} (expected {size})" in f["reason"]
    assert report["finding_counts"] == {"cq_unit_mismatch": 1}


def test_missing_unit(store, capsys):
    qdir = store / "consumequeue" / "T" / "2"
    last = sorted(qdir.iterdir())[-1]
    data = last.read_bytes()
    n = next(i for i in range(0, len(data), 20) if data[i:i + 20] == bytes(20)) if bytes(20) in data else len(data)
    n -= n % 20
    phy = CQ_UNIT.unpack_from(data, n - 20)[0]
    patch(last, n - 20, bytes(20))  # the queue's last unit vanishes
    code, report = doctor_json(store, capsys)
    assert code == 1
    [f] = only(report, "cq_missing_unit")
    assert f["file"] == "consumequeue/T/2" and f["phy_offset"] == phy and "consumers never see it" in f["reason"]


def test_index_entry_pointing_at_a_record_without_that_key(store, capsys):
    index = sorted((store / "index").iterdir())[0]
    at = entry_position(2, SLOTS)
    kh, phy, diff, prev = ENTRY.unpack_from(index.read_bytes(), at)
    other = records(store)[5].phy_offset
    assert other != phy
    patch(index, at, ENTRY.pack(kh, other, diff, prev))
    code, report = doctor_json(store, capsys)
    assert code == 1
    [wrong] = only(report, "index_entry_wrong_record")
    assert (wrong["file"], wrong["offset"], wrong["phy_offset"]) == (f"index/{index.name}", at, other)
    assert "no key with that hash" in wrong["reason"]
    [missing] = only(report, "index_missing_entry")
    assert missing["phy_offset"] == phy


def test_stray_files(store, capsys):
    (store / "junk.txt").write_text("x")
    (store / "commitlog" / "not-a-segment").write_bytes(b"\0" * 4096)
    code, report = doctor_json(store, capsys)
    assert code == 1
    assert [(f["code"], f["file"]) for f in report["findings"]] == [
        ("unknown_file", "junk.txt"), ("bad_segment_name", "commitlog/not-a-segment")]


def test_phy_offset_differs_from_position(store, capsys):
    rec = records(store)[4]
    patch(store / "commitlog" / "00000000000000000000", rec.phy_offset + 28, struct.pack(">q", rec.phy_offset + 1))
    code, report = doctor_json(store, capsys)
    assert code == 1
    [f] = only(report, "phy_offset_mismatch")
    assert f["offset"] == rec.phy_offset + 28 and f"expected {rec.phy_offset}" in f["reason"]


def test_segment_ending_without_blank_before_later_data(store, capsys):
    first = store / "commitlog" / "00000000000000000000"
    data = first.read_bytes()
    blank = [r for r in iter_records(data) if isinstance(r, BlankRecord)][0]
    patch(first, blank.phy_offset, bytes(8))
    code, report = doctor_json(store, capsys)
    assert code == 1
    [f] = only(report, "missing_blank")
    assert f["offset"] == blank.phy_offset and "deletes everything after" in f["reason"]


def test_checkpoint_in_the_future(store, capsys):
    code, clean = doctor_json(store, capsys)
    newest = clean["counts"]["commitlog"]["max_store_timestamp"]
    patch(store / "checkpoint", 0, struct.pack(">q", newest + 60_000))
    code, report = doctor_json(store, capsys)
    assert code == 1
    [f] = only(report, "checkpoint_future")
    assert (f["file"], f["offset"]) == ("checkpoint", 0)


def test_exit_2_when_not_a_store(tmp_path, capsys):
    assert main(["doctor", str(tmp_path)]) == 2
    assert "not a store directory" in capsys.readouterr().err
    assert main(["doctor", str(tmp_path / "missing")]) == 2
    (tmp_path / "file").write_text("x")
    assert main(["doctor", str(tmp_path / "file")]) == 2


def _snapshot(root: Path) -> dict:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.stat()
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None
            out[str(p.relative_to(root))] = (digest, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)
    return out


def test_doctor_is_read_only(store, capsys, monkeypatch):
    """Checksums, sizes, mtimes/ctimes and modes are unchanged, no file is opened for writing,
    nothing is mapped writable, and the store lock is never taken — on a read-only tree."""
    # damage it a little too, so that every pass (including the back-reference passes) runs
    path = store / "consumequeue" / "T" / "1" / "00000000000000000000"
    phy, size, tags = CQ_UNIT.unpack_from(path.read_bytes(), 0)
    patch(path, 0, CQ_UNIT.pack(phy, size + 1, tags))
    for dirpath, dirnames, filenames in os.walk(store):
        for name in filenames:
            os.chmod(Path(dirpath) / name, 0o444)
    for dirpath, dirnames, filenames in os.walk(store, topdown=False):
        os.chmod(dirpath, 0o555)
    before = _snapshot(store)
    flags_seen, maps_seen, locks = [], [], []
    real_open, real_mmap = os.open, mmap.mmap

    def spy_open(path, flags, *a, **kw):
        flags_seen.append((str(path), flags))
        return real_open(path, flags, *a, **kw)

    def spy_mmap(*a, **kw):
        maps_seen.append(kw.get("access", a[3] if len(a) > 3 else None))
        return real_mmap(*a, **kw)

    monkeypatch.setattr(os, "open", spy_open)
    monkeypatch.setattr(mmap, "mmap", spy_mmap)
    monkeypatch.setattr(fcntl, "lockf", lambda *a: locks.append(a))
    monkeypatch.setattr(fcntl, "flock", lambda *a: locks.append(a))
    try:
        code, report = doctor_json(store, capsys)
        after = _snapshot(store)
    finally:
        monkeypatch.undo()
        for dirpath, dirnames, filenames in os.walk(store):
            os.chmod(dirpath, 0o755)
    assert code == 1 and only(report, "cq_unit_mismatch")
    assert flags_seen and all(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND) == 0
                              for _, flags in flags_seen)
    assert maps_seen and set(maps_seen) == {mmap.ACCESS_READ}
    assert locks == []
    assert {k: v for k, v in after.items() if k != "."} == {k: v for k, v in before.items() if k != "."}
    assert set(after) == set(before)  # nothing created (not even a lock file)


@pytest.mark.skipif(not FIXTURE_4_9_4.is_dir(), reason="the RocketMQ 4.9.4 store fixture is not present")
def test_real_rocketmq_4_9_4_store_is_clean(capsys):
    code, report = doctor_json(FIXTURE_4_9_4, capsys)
    assert code == 0 and report["findings"] == []
    c = report["counts"]
    assert (c["commitlog"]["messages"], c["commitlog"]["blanks"], c["commitlog"]["end_offset"]) == (135, 3, 216023)
    assert c["consumequeue"]["units"] == c["consumequeue"]["units_matched"] == 135
    assert c["index"]["entries"] == c["index"]["keys_matched"] == 288 and c["index"]["duplicate_entries"] == 0
    truth = [json.loads(line) for line in (FIXTURE_4_9_4.parent / "messages.jsonl").read_text().splitlines()]
    assert sum(1 + len((m["keys"] or "").split()) for m in truth) == 288
