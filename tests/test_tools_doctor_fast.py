"""The doctor's fast paths change nothing it reports: the bulk checks of a chunk (numpy) against the
per-record checks, ``--jobs`` against one process, the vectorised index hashes against Java's
``hashCode``; and the progress line."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from pymq_ref.formats.consume_queue import CQ_UNIT
from pymq_ref.formats.hashing import index_key_hash
from pymq_ref.formats.index_file import ENTRY, entry_position
from pymq_ref.tools import doctor as doctor_module
from pymq_ref.tools.doctor import DoctorOptions, progress_line, run_doctor
from pymq_ref.tools.doctor_walk import index_key_hashes
from pymq_ref.tools.fill import FillOptions, fill_store

SLOTS, ENTRIES = 64, 256


@pytest.fixture(scope="module")
def damaged(tmp_path_factory) -> Path:
    """Several segments, with damage in the middle ones: a body CRC, a ConsumeQueue unit, a missing
    unit, an index entry's time diff and one's key hash."""
    root = tmp_path_factory.mktemp("doctor-fast") / "store"
    fill_store(str(root), FillOptions(topic="T", count=400, body_size=150, tags="A,B", keys=("k-{i}",), queues=3,
                                      seed=3, start_time=1_700_000_000_000, commitlog_file_size=8192,
                                      cq_file_size=20 * 40, hash_slots=SLOTS, index_num=ENTRIES))
    segments = sorted((root / "commitlog").iterdir())
    with open(segments[3], "r+b") as f:  # a body byte of the second record of segment 3
        f.seek(0)
        first = struct.unpack(">i", f.read(4))[0]
        f.seek(first + 88 + 5)
        b = f.read(1)
        f.seek(first + 88 + 5)
        f.write(bytes([b[0] ^ 0x40]))
    cq = root / "consumequeue" / "T" / "1" / f"{40 * 20:020d}"
    data = bytearray(cq.read_bytes())
    phy, size, tags = CQ_UNIT.unpack_from(data, 5 * 20)
    CQ_UNIT.pack_into(data, 5 * 20, phy, size, tags + 1)
    CQ_UNIT.pack_into(data, 9 * 20, 0, 0, 0)  # (ends the queue early: later units become stray bytes)
    cq.write_bytes(bytes(data))
    index = sorted((root / "index").iterdir())[1]
    data = bytearray(index.read_bytes())
    kh, phy, diff, prev = ENTRY.unpack_from(data, entry_position(30, SLOTS))
    ENTRY.pack_into(data, entry_position(30, SLOTS), kh, phy, diff + 7, prev)
    kh, phy, diff, prev = ENTRY.unpack_from(data, entry_position(77, SLOTS))
    ENTRY.pack_into(data, entry_position(77, SLOTS), kh ^ 1, phy, diff, prev)
    index.write_bytes(bytes(data))
    return root


def _doc(report) -> dict:
    return report.to_json()


def test_bulk_checks_report_what_the_per_record_checks_report(damaged, monkeypatch):
    fast = _doc(run_doctor(damaged))
    assert not fast["clean"]
    assert {"crc_mismatch", "cq_unit_mismatch", "index_time_diff_mismatch"} <= set(fast["finding_counts"])
    monkeypatch.setattr(doctor_module, "units_match", lambda doctor, chunk: False)
    monkeypatch.setattr(doctor_module, "entries_match", lambda check, chunk: False)
    slow = _doc(run_doctor(damaged))
    assert fast == slow


def test_bulk_checks_pass_a_clean_store(tmp_path, monkeypatch):
    root = tmp_path / "store"
    fill_store(str(root), FillOptions(topic="T", count=300, body_size=80, keys=("k-{i}",), queues=2, seed=1,
                                      start_time=1_700_000_000_000, commitlog_file_size=16384, cq_file_size=20 * 50,
                                      hash_slots=SLOTS, index_num=ENTRIES))
    calls = {"units": [], "entries": []}
    real_units, real_entries = doctor_module.units_match, doctor_module.entries_match
    monkeypatch.setattr(doctor_module, "units_match", lambda d, c: calls["units"].append(real_units(d, c)) or
                        calls["units"][-1])
    monkeypatch.setattr(doctor_module, "entries_match", lambda i, c: calls["entries"].append(real_entries(i, c)) or
                        calls["entries"][-1])
    report = run_doctor(root)
    assert report.clean and report.counts["index"]["keys_matched"] == 600
    assert calls["units"] and all(calls["units"]) and calls["entries"] and all(calls["entries"])


def test_jobs_report_what_one_process_reports(damaged, monkeypatch):
    one = _doc(run_doctor(damaged))
    monkeypatch.setattr(doctor_module, "PARALLEL_MIN_SEGMENT", 0)  # (its segments are small)
    seen = []
    real = doctor_module.parallel_items
    monkeypatch.setattr(doctor_module, "parallel_items", lambda *a: seen.append(a[2]) or real(*a))
    for jobs in (2, 3):
        assert _doc(run_doctor(damaged, DoctorOptions(jobs=jobs))) == one
    assert seen == [2, 3]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=300), min_size=1, max_size=40))
def test_index_key_hashes_are_java_hash_codes(names):
    assert index_key_hashes(names).tolist() == [index_key_hash(n) for n in names]


def test_progress_line():
    assert progress_line(640 << 20, 10240 << 20, 8.0) == \
        "scanned 640 / 10240 MiB of CommitLog (6%, 80 MiB/s, 2 min 0 s left)"
    assert progress_line(10240 << 20, 10240 << 20, 100.0) == "scanned 10240 / 10240 MiB of CommitLog (100%, 102 MiB/s)"


def test_chains_sound_agrees_with_the_chain_walk(damaged, monkeypatch):
    """The vectorised structural check of an index file answers True exactly when the walk of its
    chains finds nothing, on intact files and on 200 random byte changes of the slots and entries."""
    import random

    from pymq_ref.formats.index_file import INDEX_HEADER_SIZE
    from pymq_ref.tools.doctor_bulk import chains_sound
    from pymq_ref.tools.doctor_index import IndexCheck, IndexView
    from pymq_ref.tools.store_layout import Segment

    rng = random.Random(5)
    files = sorted((damaged / "index").iterdir())
    for n in range(200 + len(files)):
        data = bytearray(files[n % len(files)].read_bytes())
        if n >= len(files):  # damage: a random byte of the slots or of the written entries
            view = IndexView(Segment(None, "", 0, len(data)), lambda: data, SLOTS, ENTRIES)
            end = view.entry_offset(max(view.count, 2))
            at = rng.randrange(INDEX_HEADER_SIZE, end)
            data[at] = rng.randrange(256)
        buf = bytes(data)
        view = IndexView(Segment(None, "x", 0, len(buf)), lambda: buf, SLOTS, ENTRIES)
        found = []
        with monkeypatch.context() as m:  # the walk itself, its fast answer bypassed
            m.setattr("pymq_ref.tools.doctor_index.chains_sound", lambda *a: False)
            IndexCheck(found.append)._check_chains(view)
        sound = chains_sound(buf, SLOTS, view.count, view.first_entry_at, view.header.hash_slot_count)
        assert sound == (not found), (n, found[:3])
