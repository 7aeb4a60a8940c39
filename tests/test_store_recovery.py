"""Restart, recovery and corruption: the store never crashes and cuts at the first bad record."""

from __future__ import annotations

import os

import pytest

from pymq_ref.formats.message import BlankRecord, iter_records
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.errors import WrongFileSizeError
from pymq_ref.store.message_store import MessageStore
from store_helpers import msg, open_store, small_config


def _fill(root, n=40, **kw):
    store = open_store(root, **kw)
    results = [store.put_message(msg(i, queue_id=i % 2, size=30)) for i in range(n)]
    assert all(r.ok for r in results)
    return store, results


def _crash(store):
    """Leave the store as a killed process would: no shutdown (abort stays), files closed, unlocked."""
    store._close_files()
    store._release_lock()
    store._state = "shutdown"


def _bodies(store, queue_id):
    out, offset = [], 0
    while True:
        r = store.get_message("g", "T", queue_id, offset, 32)
        if r.status.name != "FOUND":
            return out
        out += [m.body for m in r.records()]
        offset = r.next_begin_offset


def test_clean_restart_keeps_everything(tmp_path):
    store, _ = _fill(tmp_path)
    store.shutdown()
    assert not (tmp_path / "abort").exists()
    store = open_store(tmp_path)
    assert store.last_exit_ok
    assert len(_bodies(store, 0)) == 20 and len(_bodies(store, 1)) == 20
    assert store.put_message(msg(99, queue_id=0)).append_result.logics_offset == 20
    store.shutdown()


def test_unclean_restart_rebuilds_derived_files(tmp_path):
    store, _ = _fill(tmp_path)
    _crash(store)
    assert (tmp_path / "abort").exists()
    # lose the derived files entirely: dispatch must rebuild them from the CommitLog
    import shutil

    shutil.rmtree(tmp_path / "consumequeue")
    shutil.rmtree(tmp_path / "index")
    store = open_store(tmp_path)
    assert not store.last_exit_ok
    assert len(_bodies(store, 0)) == 20 and len(_bodies(store, 1)) == 20
    assert [m.properties["KEYS"] for m in store.query_message("T", "K7").messages] == ["K7 common"]
    store.shutdown()


def _records(root):
    store = open_store(root, read_only=True)
    recs = [r for f in store.commit_log.queue.files for r in iter_records(f.mm, base=f.file_from_offset)
            if not isinstance(r, BlankRecord)]
    store.shutdown()
    return recs


@pytest.mark.parametrize("clean", [True, False])
def test_flipped_body_byte_truncates_at_that_record(tmp_path, clean):
    store, results = _fill(tmp_path)
    store.shutdown() if clean else _crash(store)
    victim = results[-5].append_result  # within the last three files, so CRC is checked
    path = tmp_path / "commitlog" / f"{victim.wrote_offset - victim.wrote_offset % 4096:020d}"
    data = bytearray(path.read_bytes())
    data[victim.wrote_offset % 4096 + 88 + 5] ^= 0xFF  # inside the body (body starts at 88 for IPv4)
    path.write_bytes(bytes(data))
    store = open_store(tmp_path)
    assert store.commit_log.max_offset == victim.wrote_offset
    kept = 35
    assert len(_bodies(store, 0)) + len(_bodies(store, 1)) == kept
    # the tail of the file is zero after the cut, later files are gone
    mf = store.commit_log.queue.last
    assert mf.mm[victim.wrote_offset - mf.file_from_offset:] == bytes(mf.file_size - (victim.wrote_offset - mf.file_from_offset))
    # new puts continue at the cut, with consistent queue offsets
    r = store.put_message(msg(100, queue_id=1))
    assert r.ok and r.append_result.wrote_offset == victim.wrote_offset
    store.shutdown()
    store = open_store(tmp_path)
    assert len(_bodies(store, 0)) + len(_bodies(store, 1)) == kept + 1
    store.shutdown()


def test_garbage_after_last_record(tmp_path):
    store, results = _fill(tmp_path)
    _crash(store)
    end = results[-1].append_result.wrote_offset + results[-1].append_result.wrote_bytes
    path = tmp_path / "commitlog" / f"{end - end % 4096:020d}"
    data = bytearray(path.read_bytes())
    data[end % 4096:end % 4096 + 50] = os.urandom(50)
    path.write_bytes(bytes(data))
    store = open_store(tmp_path)
    assert store.commit_log.max_offset == end and len(_bodies(store, 0)) == 20
    store.shutdown()
    assert len(_records(tmp_path)) == 40


def test_half_written_record(tmp_path):
    store, results = _fill(tmp_path)
    _crash(store)
    last = results[-1].append_result
    path = tmp_path / "commitlog" / f"{last.wrote_offset - last.wrote_offset % 4096:020d}"
    data = bytearray(path.read_bytes())
    start = last.wrote_offset % 4096
    data[start + 30:start + last.wrote_bytes] = bytes(last.wrote_bytes - 30)  # tail never reached disk
    path.write_bytes(bytes(data))
    store = open_store(tmp_path)
    assert store.commit_log.max_offset == last.wrote_offset
    assert len(_bodies(store, 0)) + len(_bodies(store, 1)) == 39
    store.shutdown()


def test_truncated_or_wrong_sized_file_is_a_clear_error(tmp_path):
    store, _ = _fill(tmp_path)
    store.shutdown()
    last = sorted(os.listdir(tmp_path / "commitlog"))[-1]
    path = tmp_path / "commitlog" / last
    with open(path, "r+b") as f:
        f.truncate(1000)
    with pytest.raises(WrongFileSizeError) as e:
        open_store(tmp_path)
    assert last in str(e.value) and "4096" in str(e.value) and "1000" in str(e.value)
    # the failed open released the lock and created nothing new
    with pytest.raises(WrongFileSizeError):
        open_store(tmp_path)


def test_read_only_open_of_a_dirty_store_changes_nothing(tmp_path):
    store, results = _fill(tmp_path)
    _crash(store)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    ro = MessageStore.open(small_config(tmp_path), ManualClock(0), read_only=True)
    assert len(_bodies(ro, 0)) == 20  # one CQ file (10 units) per pull
    assert ro.look_message_by_offset(results[3].append_result.wrote_offset).body == msg(3, size=30).body
    ro.shutdown()
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert before == after


def test_consume_queue_ahead_of_commit_log_is_truncated(tmp_path):
    store, results = _fill(tmp_path)
    store.shutdown()
    # drop the last CommitLog file: the ConsumeQueues now point past its end
    files = sorted(os.listdir(tmp_path / "commitlog"))
    os.remove(tmp_path / "commitlog" / files[-1])
    store = open_store(tmp_path)
    end = store.commit_log.max_offset
    for q in (0, 1):
        for m in store.get_message("g", "T", q, 0, 32).records():
            assert m.phy_offset + m.total_size <= end
    total = len(_bodies(store, 0)) + len(_bodies(store, 1))
    assert total == sum(1 for r in results if r.append_result.wrote_offset < int(files[-1]))
    store.shutdown()


def test_checkpoint_written_on_shutdown(tmp_path):
    from pymq_ref.formats.checkpoint import decode_checkpoint

    store, results = _fill(tmp_path)
    store.shutdown()
    cp = decode_checkpoint((tmp_path / "checkpoint").read_bytes())
    last_ts = results[-1].append_result.store_timestamp
    assert os.path.getsize(tmp_path / "checkpoint") == 4096
    assert cp.physic_msg_timestamp == last_ts and cp.logics_msg_timestamp == last_ts
