"""ConsumeQueueExt (4.9.4 ConsumeQueueExt.java): format, store, get_message, inspect."""

from __future__ import annotations

import os
import struct

import pytest
from hypothesis import given, strategies as st

from pymq_ref.errors import FormatError, SizeMismatchError
from pymq_ref.formats.consume_queue_ext import (LONG_MIN, MAX_ADDR, MAX_REAL_OFFSET, decode_ext_unit, decorate,
                                                encode_ext_unit, is_ext_addr, undecorate)
from pymq_ref.formats.hashing import tags_code
from pymq_ref.tools.store_files import detect_kind, walk_consumequeue_ext
from pymq_ref.tools.store_layout import discover
from store_helpers import msg, open_store


def test_unit_bytes_follow_the_java_layout():
    raw = encode_ext_unit(-5, 1_700_000_000_123, b"\x01\x02")
    assert raw == struct.pack(">hqqh", 22, -5, 1_700_000_000_123, 2) + b"\x01\x02"
    u = decode_ext_unit(raw)
    assert (u.size, u.tags_code, u.msg_store_time, u.bit_map_size, u.filter_bit_map) == (22, -5, 1_700_000_000_123, 2, b"\x01\x02")
    with pytest.raises(SizeMismatchError):
        decode_ext_unit(struct.pack(">hqqh", 21, 0, 0, 0))
    with pytest.raises(FormatError):
        decode_ext_unit(b"\xff\xff" + bytes(30))


@given(st.integers(0, MAX_REAL_OFFSET))
def test_address_range(offset):
    a = decorate(offset)
    assert is_ext_addr(a) and a <= MAX_ADDR and undecorate(a) == offset
    assert not is_ext_addr(-(2**31)) and is_ext_addr(-(2**31) - 1)


def test_store_writes_ext_units_rolls_with_filler_and_filters_tags(tmp_path):
    s = open_store(tmp_path, enable_consume_queue_ext=True, mapped_file_size_consume_queue_ext=100)
    for i in range(12):
        s.put_message(msg(i))
    r = s.get_message("g", "T", 0, 0, 32, "Tag1")
    assert [x.properties["TAGS"] for x in r.records()] == ["Tag1"] * 3
    times = [rec.store_timestamp for rec in s.get_message("g", "T", 0, 0, 4).records()]
    unit = s.find_consume_queue("T", 0).get_unit(1)
    assert unit.tags_code == LONG_MIN + 20
    s.shutdown()
    first = (tmp_path / "consumequeue_ext/T/0/00000000000000000000").read_bytes()
    expect = b"".join(struct.pack(">hqqh", 20, tags_code(f"Tag{i % 3}"), times[i], 0) for i in range(4))
    assert first[:80] == expect and first[80:82] == b"\xff\xff" and first[82:] == bytes(18)
    assert len(os.listdir(tmp_path / "consumequeue_ext/T/0")) == 3
    # reopen: the recovered ext file still resolves; with the flag off addresses are "not legal": no filtering
    s = open_store(tmp_path, enable_consume_queue_ext=True, mapped_file_size_consume_queue_ext=100)
    assert len(s.get_message("g", "T", 0, 0, 32, "Tag1").buffers) == 3
    s.shutdown()
    s = open_store(tmp_path)
    assert len(s.get_message("g", "T", 0, 0, 32, "Tag1").buffers) == 10
    s.shutdown()
    ext_file = tmp_path / "consumequeue_ext/T/0/00000000000000000000"
    assert detect_kind(ext_file) == "consumequeue_ext"
    items = list(walk_consumequeue_ext(first, ext_file))
    assert [i.json["type"] for i in items[:-1]] == ["cq_ext_unit"] * 4 + ["cq_ext_filler"]
    layout = discover(tmp_path)
    assert len(layout.ext_queues) == 1 and layout.cq_ext_file_size == 100
    assert not [p for p in layout.problems if "consumequeue_ext" in p.file]


def test_flag_off_writes_no_ext_and_same_cq_bytes(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for root, kw in ((a, {}), (b, {"enable_consume_queue_ext": False})):
        s = open_store(root, **kw)
        for i in range(7):
            s.put_message(msg(i))
        s.shutdown()
    assert not (a / "consumequeue_ext").exists()
    cq = (a / "consumequeue/T/0/00000000000000000000").read_bytes()
    assert cq == (b / "consumequeue/T/0/00000000000000000000").read_bytes()
    for i in range(7):
        assert struct.unpack_from(">q", cq, 20 * i + 12)[0] == tags_code(f"Tag{i % 3}")


def test_doctor_checks_units_through_the_ext_file(tmp_path):
    from pymq_ref.tools.doctor import run_doctor
    s = open_store(tmp_path, enable_consume_queue_ext=True, mapped_file_size_consume_queue_ext=100)
    for i in range(9):
        assert s.put_message(msg(i, queue_id=i % 2)).ok
    s.shutdown()
    report = run_doctor(str(tmp_path))
    assert report.exit_status == 0, [str(f) for f in report.findings]
    assert report.counts["consumequeue"]["units_matched"] == 9

    first = tmp_path / "consumequeue_ext" / "T" / "0" / f"{0:020d}"
    data = bytearray(first.read_bytes())
    struct.pack_into(">q", data, 2, 12345)  # the first ext unit's tagsCode
    first.write_bytes(bytes(data))
    report = run_doctor(str(tmp_path))
    assert report.exit_status == 1
    (finding,) = [f for f in report.findings if f.code == "cq_unit_mismatch"]
    assert "ext tags_code 12345" in finding.reason and finding.file == "consumequeue/T/0/00000000000000000000"

    os.remove(tmp_path / "consumequeue_ext" / "T" / "1" / f"{0:020d}")
    report = run_doctor(str(tmp_path))
    assert any("no consumequeue_ext/T/1/ file holds that offset" in f.reason for f in report.findings)


def test_abnormal_recovery_keeps_ext_and_consume_queue_in_step(tmp_path):
    import shutil

    from pymq_ref.tools.doctor import run_doctor
    live = tmp_path / "live"
    s = open_store(live, enable_consume_queue_ext=True, mapped_file_size_consume_queue_ext=100)
    try:
        for i in range(10):
            assert s.put_message(msg(i)).ok
        crashed = tmp_path / "crashed"
        shutil.copytree(live, crashed, ignore=shutil.ignore_patterns("lock"))  # as a killed process leaves it
    finally:
        s.shutdown()
    r = open_store(crashed, enable_consume_queue_ext=True, mapped_file_size_consume_queue_ext=100)
    try:
        assert not r.last_exit_ok
        assert [x.properties["TAGS"] for x in r.get_message("g", "T", 0, 0, 32, "Tag1").records()] == ["Tag1"] * 3
        assert r.put_message(msg(10)).ok and r.put_message(msg(13)).ok  # Tag1 again: appended after recovery
        second = r.get_message("g", "T", 0, 10, 32, "Tag1")  # one pull reads one ConsumeQueue file (10 units)
        assert [x.properties["KEYS"] for x in second.records()] == ["K10 common", "K13 common"]
    finally:
        r.shutdown()
    assert run_doctor(str(crashed)).exit_status == 0


def test_reads_and_extends_a_hand_laid_ext_store(tmp_path):
    """An ext chain laid out byte by byte as 4.9.4's ``ConsumeQueueExt`` writes it (units
    ``>hqqh`` + bitmap, addresses ``offset + Long.MIN_VALUE`` in the unit's tagsCode field, a
    ``ff ff`` filler before the roll), with a bitmap our store never writes: read, filtered,
    checked by the doctor, and appended to at the right address."""
    from pymq_ref.tools.doctor import run_doctor

    s = open_store(tmp_path)  # CommitLog and plain units, no ext
    for i in range(6):
        assert s.put_message(msg(i)).ok
    times = [rec.store_timestamp for rec in s.get_message("g", "T", 0, 0, 32).records()]
    s.shutdown()
    size = 64  # two units of 26 bytes (an 8-byte bitmap), then the filler
    units = [struct.pack(">hqqh", 28, tags_code(f"Tag{i % 3}"), times[i], 8) + bytes([i]) * 8 for i in range(6)]
    files, addresses = {}, []
    for i, unit in enumerate(units):
        start = (i // 2) * size
        at = start + (i % 2) * 28
        addresses.append(at - 2**63)
        files.setdefault(start, bytearray(size))[at - start:at - start + 28] = unit
    for start, data in files.items():
        if start < 4 * size // 2:  # full files carry the filler after their two units
            data[56:58] = b"\xff\xff"
    ext_dir = tmp_path / "consumequeue_ext" / "T" / "0"
    ext_dir.mkdir(parents=True)
    for start, data in files.items():
        (ext_dir / f"{start:020d}").write_bytes(bytes(data))
    cq_path = tmp_path / "consumequeue" / "T" / "0" / f"{0:020d}"
    cq = bytearray(cq_path.read_bytes())
    for i, address in enumerate(addresses):
        struct.pack_into(">q", cq, 20 * i + 12, address)
    cq_path.write_bytes(bytes(cq))

    s = open_store(tmp_path, enable_consume_queue_ext=True, mapped_file_size_consume_queue_ext=size)
    q = s.find_consume_queue("T", 0)
    ext = q.get_ext(q.get_unit(3).tags_code)
    assert (ext.tags_code, ext.msg_store_time, ext.filter_bit_map) == (tags_code("Tag0"), times[3], bytes([3]) * 8)
    assert [x.properties["KEYS"] for x in s.get_message("g", "T", 0, 0, 32, "Tag1").records()] == ["K1 common",
                                                                                                 "K4 common"]
    assert s.put_message(msg(7)).ok  # Tag1; 56 + 20 + 4 > 64: the third file is filled, a fourth begins
    unit = q.get_unit(6)
    assert unit.tags_code == 3 * size - 2**63
    assert (ext_dir / f"{2 * size:020d}").read_bytes()[56:58] == b"\xff\xff"
    assert q.get_ext(unit.tags_code).tags_code == tags_code("Tag1")
    assert len(s.get_message("g", "T", 0, 0, 32, "Tag1").buffers) == 3
    s.shutdown()
    report = run_doctor(str(tmp_path))
    assert report.exit_status == 0, [str(f) for f in report.findings]
    assert report.counts["consumequeue"]["units_matched"] == 7


def test_store_summary_shows_the_ext_chains(tmp_path):
    from pymq_ref.tools.store_summary import render_summary, summarize_store

    s = open_store(tmp_path, enable_consume_queue_ext=True, mapped_file_size_consume_queue_ext=100)
    for i in range(11):
        assert s.put_message(msg(i, queue_id=i % 2)).ok  # queue 0: 6 units, queue 1: 5 (4 a file)
    s.shutdown()
    doc = summarize_store(tmp_path)
    assert doc["consumequeue_ext"] == {"file_size": 100, "queues": {
        "T/0": {"files": 2, "min_offset": 0, "max_offset": 140, "units_in_last_file": 2},
        "T/1": {"files": 2, "min_offset": 0, "max_offset": 120, "units_in_last_file": 1}}}
    text = render_summary(doc)
    assert "consumequeue_ext: 2 queue(s), files of 100 bytes\n  T/0: offsets [0, 140), 2 file(s)\n" in text
    assert "consumequeue_ext" not in summarize_store_without_ext(tmp_path / "plain")
    last = tmp_path / "consumequeue_ext" / "T" / "1" / f"{100:020d}"
    data = bytearray(last.read_bytes())
    data[20:22] = b"\x00\x05"  # a size too small for a unit after the first one
    last.write_bytes(bytes(data))
    q1 = summarize_store(tmp_path)["consumequeue_ext"]["queues"]["T/1"]
    assert q1["max_offset"] is None and "error" in q1 and "! " in render_summary(summarize_store(tmp_path))


def summarize_store_without_ext(root):
    from pymq_ref.tools.store_summary import summarize_store

    s = open_store(root)
    assert s.put_message(msg(0)).ok
    s.shutdown()
    return summarize_store(root)
