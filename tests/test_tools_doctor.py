"""``pymq doctor``: clean stores pass, each kind of damage is found with file + offset + reason,
the real RocketMQ 4.9.4 fixture is clean, and the doctor never writes."""

from __future__ import annotations

import json
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
from readonly_helpers import read_only_tree, tree_snapshot

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


def test_doctor_is_read_only(store, capsys, monkeypatch):
    """Checksums, sizes, mtimes/ctimes and modes are unchanged, no file is opened for writing,
    nothing is mapped writable, and the store lock is never taken — on a read-only tree."""
    # damage it a little too, so that every pass (including the back-reference passes) runs
    path = store / "consumequeue" / "T" / "1" / "00000000000000000000"
    phy, size, tags = CQ_UNIT.unpack_from(path.read_bytes(), 0)
    patch(path, 0, CQ_UNIT.pack(phy, size + 1, tags))
    with read_only_tree(store, monkeypatch) as io:
        code, report = doctor_json(store, capsys)
        after = tree_snapshot(store)
    assert code == 1 and only(report, "cq_unit_mismatch")
    io.assert_read_only()
    assert {k: v for k, v in after.items() if k != "."} == {k: v for k, v in io.before.items() if k != "."}
    assert set(after) == set(io.before)  # nothing created (not even a lock file)


@pytest.mark.skipif(not FIXTURE_4_9_4.is_dir(), reason="the RocketMQ 4.9.4 store fixture is not present")
def test_real_rocketmq_4_9_4_store_is_clean(capsys):
    code, report = doctor_json(FIXTURE_4_9_4, capsys)
    assert code == 0 and report["findings"] == []
    c = report["counts"]
    assert (c["commitlog"]["messages"], c["commitlog"]["blanks"], c["commitlog"]["end_offset"]) == (135, 3, 216023)
    assert c["consumequeue"]["units"] == c["consumequeue"]["units_matched"] == 135
    assert c["index"]["entries"] == c["index"]["keys_matched"] == 288 and c["index"]["duplicate_entries"] == 0
    assert c["index"]["time_diffs_checked"] == 288 and c["index"]["time_diffs_wrong"] == 0
    truth = [json.loads(line) for line in (FIXTURE_4_9_4.parent / "messages.jsonl").read_text().splitlines()]
    assert sum(1 + len((m["keys"] or "").split()) for m in truth) == 288


# -- index entry times (IndexFile.putKey: timeDiff, header begin/end timestamps) --------------------------------
T_SLOTS, T_ENTRIES = 16, 24
T0 = 1_700_000_000_000


@pytest.fixture(scope="module")
def base_timed_store(tmp_path_factory) -> Path:
    """30 records 0.7-2.5 s apart (one 9 s step back of the clock), 3 keys each: 4 index files of 23 entries,
    so time diffs run to several seconds and a rolled file's entry 1 is measured from the previous file's end."""
    from pymq_ref.store.clock import ManualClock
    from pymq_ref.store.message_store import MessageStore
    from store_helpers import msg, small_config

    root = tmp_path_factory.mktemp("doctor-times") / "store"
    clock = ManualClock(T0)
    store = MessageStore.open(small_config(root, max_hash_slot_num=T_SLOTS, max_index_num=T_ENTRIES), clock)
    try:
        for i in range(30):
            clock.advance(-9000 if i == 12 else 700 + 900 * (i % 3))
            assert store.put_message(msg(i, queue_id=i % 2)).ok
    finally:
        store.shutdown()
    return root


@pytest.fixture
def timed_store(base_timed_store, tmp_path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(base_timed_store, root)
    return root


def index_entries(path: Path, slots: int = T_SLOTS) -> list[tuple[int, int, int, int]]:
    """``(key_hash, phy_offset, time_diff, prev_index)`` of entries 1.. of an index file."""
    data = path.read_bytes()
    count = struct.unpack_from(">i", data, 36)[0]
    return [ENTRY.unpack_from(data, entry_position(n, slots)) for n in range(1, count)]


def store_times(root: Path) -> dict[int, int]:
    """CommitLog offset -> store timestamp of every message."""
    return {r.phy_offset: r.store_timestamp for seg in sorted((root / "commitlog").iterdir())
            for r in records(root, seg.name)}


def test_time_diffs_of_a_store_spanning_seconds_are_all_checked(timed_store, capsys):
    code, report = doctor_json(timed_store, capsys)
    assert code == 0, report["findings"]
    idx = report["counts"]["index"]
    assert idx["files"] == 4 and idx["entries"] == idx["keys_matched"] == idx["time_diffs_checked"] == 90
    assert idx["time_diffs_wrong"] == 0
    # the store shows the edge cases: several-second diffs, a rolled file's entry 1 measured from the previous
    # file's end, and a record stored before its file's begin (the clock stepped back) written as 0
    times = store_times(timed_store)
    files = sorted((timed_store / "index").iterdir())
    assert max(diff for f in files for _, _, diff, _ in index_entries(f)) >= 5
    prev_end = struct.unpack_from(">q", files[2].read_bytes(), 8)[0]
    _, phy1, diff1, _ = index_entries(files[3])[0]
    assert diff1 == (times[phy1] - prev_end) // 1000 > 0
    begins = {f: struct.unpack_from(">q", f.read_bytes(), 0)[0] for f in files}
    assert any(times[phy] <= begins[f] - 1000 and diff == 0 for f in files for _, phy, diff, _ in index_entries(f)[1:])


def test_wrong_time_diff_is_found_at_its_entry(timed_store, capsys):
    index = sorted((timed_store / "index").iterdir())[1]
    n = 7
    at = entry_position(n, T_SLOTS)
    kh, phy, diff, prev = ENTRY.unpack_from(index.read_bytes(), at)
    patch(index, at, ENTRY.pack(kh, phy, diff + 3, prev))
    code, report = doctor_json(timed_store, capsys)
    assert code == 1 and report["finding_counts"] == {"index_time_diff_mismatch": 1}
    [f] = report["findings"]
    assert (f["severity"], f["file"], f["offset"], f["phy_offset"]) == ("error", f"index/{index.name}", at, phy)
    begin = struct.unpack_from(">q", index.read_bytes(), 0)[0]
    ts = store_times(timed_store)[phy]
    assert f"time_diff {diff + 3} at byte {at + 12}: expected (store timestamp {ts} - begin {begin}) / 1000 = " \
           f"{diff}" in f["reason"] and "+3 s off" in f["reason"]
    assert report["counts"]["index"]["time_diffs_wrong"] == 1


def test_wrong_time_diff_of_a_rolled_files_first_entry(timed_store, capsys):
    files = sorted((timed_store / "index").iterdir())
    at = entry_position(1, T_SLOTS)
    kh, phy, diff, prev = ENTRY.unpack_from(files[3].read_bytes(), at)
    patch(files[3], at, ENTRY.pack(kh, phy, 0, prev))  # what a check against the file's own begin would expect
    code, report = doctor_json(timed_store, capsys)
    assert code == 1
    [f] = only(report, "index_time_diff_mismatch")
    assert (f["file"], f["offset"], f["phy_offset"]) == (f"index/{files[3].name}", at, phy)
    assert f"expected (store timestamp" in f["reason"] and f"= {diff}, begin being the end timestamp of the full " \
           f"index file before it, index/{files[2].name}" in f["reason"]


def test_negative_time_diff_is_found_once(timed_store, capsys):
    index = sorted((timed_store / "index").iterdir())[0]
    at = entry_position(4, T_SLOTS)
    kh, phy, diff, prev = ENTRY.unpack_from(index.read_bytes(), at)
    patch(index, at, ENTRY.pack(kh, phy, -1, prev))
    code, report = doctor_json(timed_store, capsys)
    assert code == 1
    assert [(f["code"], f["offset"]) for f in report["findings"]] == [
        ("index_chain_broken", at + 12), ("index_time_diff_mismatch", at)]


def test_header_begin_timestamp_wrong(timed_store, capsys):
    index = sorted((timed_store / "index").iterdir())[2]
    begin = struct.unpack_from(">q", index.read_bytes(), 0)[0]
    patch(index, 0, struct.pack(">q", begin + 4000))
    code, report = doctor_json(timed_store, capsys)
    assert code == 1 and report["finding_counts"] == {"index_header_mismatch": 1}  # entries still checked vs the truth
    [f] = report["findings"]
    _, phy1, _, _ = index_entries(index)[0]
    assert (f["file"], f["offset"], f["phy_offset"]) == (f"index/{index.name}", 0, phy1)
    assert f"begin_timestamp {begin + 4000}: expected {begin}, the store timestamp of the record of entry 1" \
        in f["reason"]
    assert "+4.000 s off" in f["reason"]


def test_header_end_timestamp_wrong(timed_store, capsys):
    index = sorted((timed_store / "index").iterdir())[1]
    end = struct.unpack_from(">q", index.read_bytes(), 8)[0]
    patch(index, 8, struct.pack(">q", end - 2500))
    code, report = doctor_json(timed_store, capsys)
    assert code == 1
    # the next file's entry 1 was measured from the true end (its last entry's record's): no second finding
    assert [(f["code"], f["file"], f["offset"]) for f in report["findings"]] == [
        ("index_header_mismatch", f"index/{index.name}", 8)]
    assert f"end_timestamp {end - 2500}: expected {end}, the store timestamp of the record of the last entry 23" \
           in report["findings"][0]["reason"]


def test_header_phy_offsets_wrong(timed_store, capsys):
    """endPhyOffset drives retention (IndexService.deleteExpiredFile): an error; beginPhyOffset is
    read by nothing in 4.9.4: a warning."""
    index = sorted((timed_store / "index").iterdir())[1]
    begin, end = struct.unpack_from(">qq", index.read_bytes(), 16)
    patch(index, 16, struct.pack(">qq", begin + 1, end - 1))
    code, report = doctor_json(timed_store, capsys)
    assert code == 1
    assert [(f["severity"], f["code"], f["file"], f["offset"]) for f in report["findings"]] == [
        ("error", "index_header_mismatch", f"index/{index.name}", 24),
        ("warning", "index_header_mismatch", f"index/{index.name}", 16)]
    assert f"endPhyOffset {end - 1}: expected that of entry" in report["findings"][0]["reason"]


def test_changed_store_timestamp_of_a_files_first_record(timed_store, capsys):
    """The entries agree with the header, not with the record: the header is kept as the reference
    (no finding per entry) and the finding says the record may be what changed."""
    index = sorted((timed_store / "index").iterdir())[0]
    _, phy1, _, _ = index_entries(index)[0]
    ts = store_times(timed_store)[phy1]
    segment = timed_store / "commitlog" / f"{phy1 - phy1 % 4096:020d}"
    patch(segment, phy1 % 4096 + 56, struct.pack(">q", ts - 3000))  # STORETIMESTAMP (IPv4 born host)
    code, report = doctor_json(timed_store, capsys)
    assert code == 1 and report["finding_counts"] == {"index_header_mismatch": 1}
    [f] = report["findings"]
    assert (f["file"], f["offset"], f["phy_offset"]) == (f"index/{index.name}", 0, phy1)
    assert f"begin_timestamp {ts}: expected {ts - 3000}" in f["reason"] and "STORETIMESTAMP may be" in f["reason"]


def test_index_file_without_entries(timed_store, capsys):
    """A file created when the last one was full but never written keeps the previous file's end as begin = end."""
    files = sorted((timed_store / "index").iterdir())
    files[3].unlink()  # replace the last file by an empty successor of the full third file
    end = struct.unpack_from(">q", files[2].read_bytes(), 8)[0]
    empty = bytearray(files[2].stat().st_size)
    struct.pack_into(">qq", empty, 0, end, end)
    (timed_store / "index" / "20991231235959999").write_bytes(bytes(empty))
    report = run_doctor(timed_store)
    assert not [p for p in report.findings if p.code.startswith("index_header")]
    struct.pack_into(">qq", empty, 0, end, end + 1000)
    (timed_store / "index" / "20991231235959999").write_bytes(bytes(empty))
    report = run_doctor(timed_store)
    [f] = [p for p in report.findings if p.code == "index_header_mismatch"]
    assert (f.file, f.offset) == ("index/20991231235959999", 8)
    assert f"end_timestamp {end + 1000} of a file without entries: expected {end}, what it was created with (the " \
           f"end timestamp of the full index file before it, index/{files[2].name})" in f.reason



def test_first_entry_not_checked_when_retention_may_have_removed_the_file_before(tmp_path, capsys):
    """After retention (the CommitLog head and the index files ending before it deleted, as
    IndexService.deleteExpiredFile does), the first remaining file rolled from a file that is gone:
    its entry 1 was measured from an unknown end timestamp and is left unchecked, not taken for 0."""
    from pymq_ref.store.clock import ManualClock
    from pymq_ref.store.message_store import MessageStore
    from store_helpers import msg, small_config

    root = tmp_path / "store"
    clock = ManualClock(T0)
    # 8 records of 3 keys fill an index file of 25 (24 entries); record 8 is too big for the rest of the
    # first 2 KiB segment: the second index file and the second segment both start with it
    store = MessageStore.open(small_config(root, mapped_file_size_commit_log=2048, max_hash_slot_num=T_SLOTS,
                                           max_index_num=25), clock)
    try:
        for i in range(12):
            clock.advance(1500)
            assert store.put_message(msg(i, size=1000 if i == 8 else 10)).ok
    finally:
        store.shutdown()
    first, second = sorted((root / "index").iterdir())
    _, phy1, diff1, _ = index_entries(second)[0]
    assert phy1 == 2048 and diff1 == 1  # 1.5 s after the end of the first file
    code, report = doctor_json(root, capsys)
    assert code == 0 and report["counts"]["index"]["time_diffs_checked"] == 36
    (root / "commitlog" / ("0" * 20)).unlink()
    first.unlink()
    code, report = doctor_json(root, capsys)
    assert code == 0, report["findings"]
    idx = report["counts"]["index"]
    assert idx["keys_matched"] == 12 and idx["time_diffs_checked"] == 11
