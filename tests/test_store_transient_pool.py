"""The transient store pool (``transientStorePoolEnable``, ``TransientStorePool``): appends go to a write
buffer, ``commit`` moves them into the CommitLog file, and only then can readers, dispatch and
flush see them. The files must come out byte for byte as without the pool."""

from __future__ import annotations

import os
import shutil
import time

import pytest

from pymq_ref.formats.message import BLANK_MAGIC_CODE, MessageRecord, encode_message
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.commit_log import PutMessageStatus
from pymq_ref.store.mapped_file import OS_PAGE_SIZE, TransientStorePool
from pymq_ref.store.message_store import GetMessageStatus, MessageStore
from pymq_ref.store.store_config import BrokerRole, FlushDiskType
from pymq_ref.tools.doctor import run_doctor
from store_helpers import msg, small_config

SEGMENT = 64 * 1024


def pool_config(root, **kw):
    kw.setdefault("mapped_file_size_commit_log", SEGMENT)
    kw.setdefault("transient_store_pool_enable", True)
    kw.setdefault("transient_store_pool_size", 2)
    kw.setdefault("max_hash_slot_num", 512)
    kw.setdefault("max_index_num", 4096)
    return small_config(str(root), **kw)


def open_pool_store(root, *, threads=False, **kw) -> MessageStore:
    # step 0: the clock is read a different number of times with and without the pool
    return MessageStore.open(pool_config(root, **kw), ManualClock(1_700_000_000_123, step_ms=0), threads=threads)


def body_msg(i: int, size: int = 1000, **kw) -> MessageRecord:
    return msg(i, topic=f"T{i % 2}", queue_id=i % 3, size=size, **kw)


def store_files(root) -> dict[str, bytes]:
    out = {}
    for d, _, names in os.walk(root):
        for name in names:
            if name != "lock":
                path = os.path.join(d, name)
                out[os.path.relpath(path, root)] = open(path, "rb").read()
    return out


def split_at_blank(data: bytes) -> tuple[bytes, bytes]:
    """A CommitLog segment as (records up to and including the end-of-file blank's 8 bytes, the rest)."""
    pos = 0
    while pos + 8 <= len(data):
        size = int.from_bytes(data[pos:pos + 4], "big", signed=True)
        if int.from_bytes(data[pos + 4:pos + 8], "big", signed=True) == BLANK_MAGIC_CODE:
            return data[:pos + 8], data[pos + 8:]
        if size <= 0:
            break
        pos += size
    return data[:pos], data[pos:]


@pytest.mark.parametrize("pool_size", [1, 2, 5])
def test_files_are_byte_identical_with_and_without_the_pool(tmp_path, pool_size):
    """Every record, unit, index entry and the checkpoint are the same bytes. After an end-of-file
    blank, a reused buffer leaves the bytes of the segment it served before (4.9.4 does the same:
    ``commit0`` writes up to the wrote position, which the blank moved to the file's end)."""
    roots = {}
    for enabled in (False, True):
        root = tmp_path / f"pool-{enabled}"
        store = open_pool_store(root, transient_store_pool_enable=enabled, transient_store_pool_size=pool_size)
        for i in range(300):  # ~300 KB: several rolls with an end-of-file blank
            assert store.put_message(body_msg(i, size=200 + i * 7 % 1500)).ok
            if enabled and i % 17 == 0:
                store.commit(least_pages=1 + i % 5)
        store.shutdown()
        roots[enabled] = store_files(root)
    assert len([p for p in roots[True] if p.startswith("commitlog")]) >= 4
    assert roots[True].keys() == roots[False].keys()
    stale = 0
    for path, plain in roots[False].items():
        pooled = roots[True][path]
        if not path.startswith("commitlog"):
            assert pooled == plain, path
            continue
        (records, rest), (records_p, rest_p) = split_at_blank(plain), split_at_blank(pooled)
        assert records_p == records and len(rest_p) == len(rest) and rest == bytes(len(rest)), path
        stale += rest_p != rest
    if pool_size == 1:  # one buffer serves every segment in turn
        assert stale > 0
        assert run_doctor(str(tmp_path / "pool-True")).exit_status == 0  # old bytes after a blank are no finding


def test_readers_and_dispatch_see_only_committed_bytes(tmp_path):
    store = open_pool_store(tmp_path)
    try:
        results = [store.put_message(body_msg(i, KEYS=f"k{i}")) for i in range(3)]
        assert all(r.ok for r in results)
        last = store.commit_log.queue.last
        assert last.write_buffer is not None
        assert (last.wrote_position, last.committed_position, last.flushed_position) == (3 * results[0].append_result.wrote_bytes, 0, 0)
        assert store.get_max_phy_offset() == 0
        assert store.look_message_by_offset(0) is None
        assert store.get_message("g", "T0", 0, 0).status is GetMessageStatus.NO_MESSAGE_IN_QUEUE
        assert store.query_message("T0", "k0").messages == []
        assert store.commit_log.queue.remain_how_many_data_to_commit() == last.wrote_position
        assert os.pread(last._fd, 16, 0) == bytes(16)  # nothing in the file yet

        assert store.commit() == last.wrote_position
        assert store.get_max_phy_offset() == last.wrote_position
        got = store.get_message("g", "T0", 0, 0)
        assert got.status is GetMessageStatus.FOUND and got.records()[0].body == body_msg(0).body
        assert [m.body for m in store.query_message("T0", "k0").messages] == [body_msg(0).body]
        assert store.commit() == 0  # nothing left

        store.flush()
        assert last.flushed_position == last.committed_position == last.wrote_position
    finally:
        store.shutdown()


def test_commit_waits_for_least_pages_like_flush(tmp_path):
    store = open_pool_store(tmp_path)
    try:
        last = None
        rows = []
        for i in range(20):
            store.put_message(body_msg(i, size=1500))
            last = store.commit_log.queue.last
            before = last.committed_position
            dirty = last.wrote_position // OS_PAGE_SIZE - before // OS_PAGE_SIZE
            store.commit(least_pages=4)
            rows.append((dirty, last.committed_position != before))
        # commits exactly when 4 whole pages separate wrote from committed, and then everything goes
        assert rows and all(committed == (dirty >= 4) for dirty, committed in rows)
        assert any(committed for _, committed in rows)
        assert last.committed_position == last.wrote_position or \
            last.wrote_position // OS_PAGE_SIZE - last.committed_position // OS_PAGE_SIZE < 4
    finally:
        store.shutdown()


def test_buffers_are_borrowed_per_segment_and_returned_once_committed(tmp_path):
    store = open_pool_store(tmp_path, transient_store_pool_size=2)
    try:
        assert store.remain_transient_store_buffer_nums() == 2
        store.put_message(body_msg(0))
        first = store.commit_log.queue.files[0]
        assert first.write_buffer is not None and store.remain_transient_store_buffer_nums() == 1
        i = 1
        while len(store.commit_log.queue.files) < 2:  # roll into a second segment: a second buffer
            store.put_message(body_msg(i))
            i += 1
        assert store.remain_transient_store_buffer_nums() == 0 and store.is_transient_store_pool_deficient()
        while len(store.commit_log.queue.files) < 3:  # pool empty: the third segment takes appends directly
            store.put_message(body_msg(i))
            i += 1
        third = store.commit_log.queue.files[2]
        assert third.write_buffer is None and third.append_buffer is third.mm
        assert third.read_position == third.wrote_position > 0  # readable at once, like a segment without a pool
        store.commit()
        assert [f.write_buffer for f in store.commit_log.queue.files] == [None, None, None]
        assert store.remain_transient_store_buffer_nums() == 2 and not store.is_transient_store_pool_deficient()
        assert store.get_max_phy_offset() == store.commit_log.queue.max_wrote_position
        assert store.dispatch_behind_bytes() == 0
    finally:
        store.shutdown()


def test_fast_fail_answers_create_mapedfile_failed_and_keeps_serving(tmp_path):
    store = open_pool_store(tmp_path, transient_store_pool_size=1, fast_fail_if_no_buffer_in_store_pool=True)
    try:
        results = []
        i = 0
        while True:
            r = store.put_message(body_msg(i))
            if not r.ok:
                break
            results.append((i, r))
            i += 1
        assert r.status is PutMessageStatus.CREATE_MAPEDFILE_FAILED
        assert "transient store pool" in r.error and "fastFailIfNoBufferInStorePool" in r.error
        assert len(store.commit_log.queue.files) == 1
        store.commit()  # the full segment is committed: its buffer comes back
        assert store.remain_transient_store_buffer_nums() == 1
        r = store.put_message(body_msg(i))
        assert r.ok and r.append_result.wrote_offset == SEGMENT
        store.commit()
        for j, earlier in results:
            a = earlier.append_result
            assert store.commit_log.get_data(a.wrote_offset, a.wrote_bytes) == encode_message(
                body_msg(j).replace(queue_offset=a.logics_offset, phy_offset=a.wrote_offset,
                                    store_timestamp=a.store_timestamp))
    finally:
        store.shutdown()


def test_a_segment_that_cannot_be_created_answers_create_mapedfile_failed(tmp_path):
    store = open_pool_store(tmp_path, transient_store_pool_enable=False)
    try:
        assert store.put_message(body_msg(0)).ok  # the first segment (and its directory) exist
        blocker = os.path.join(store.commit_log.queue.directory, f"{SEGMENT:020d}.creating")
        os.mkdir(blocker)  # the next segment's temporary name is taken by a directory
        i = 1
        while (r := store.put_message(body_msg(i))).ok:
            i += 1
        assert r.status is PutMessageStatus.CREATE_MAPEDFILE_FAILED and f"{SEGMENT:020d}" in r.error
        assert store.put_message(body_msg(i)).status is PutMessageStatus.CREATE_MAPEDFILE_FAILED  # still refused
        os.rmdir(blocker)
        r = store.put_message(body_msg(i))
        assert r.ok and r.append_result.wrote_offset == SEGMENT
    finally:
        store.shutdown()
    assert run_doctor(str(tmp_path)).exit_status == 0


def test_a_crash_loses_what_was_not_committed(tmp_path):
    """A process death keeps the page cache (the files) but not the write buffer."""
    for enabled, survivors in ((True, 5), (False, 8)):
        root = tmp_path / f"live-{enabled}"
        store = open_pool_store(root, transient_store_pool_enable=enabled)
        for i in range(5):
            assert store.put_message(body_msg(i)).ok
        store.commit()
        for i in range(5, 8):
            assert store.put_message(body_msg(i)).ok  # acknowledged, still in the buffer
        crashed = tmp_path / f"crashed-{enabled}"
        shutil.copytree(root, crashed, ignore=shutil.ignore_patterns("lock"))  # the files as the dead process left them
        store.shutdown()
        assert os.path.exists(crashed / "abort")
        recovered = open_pool_store(crashed, transient_store_pool_enable=enabled)
        try:
            assert not recovered.last_exit_ok
            counts = [recovered.get_max_offset_in_queue(f"T{i % 2}", i % 3) for i in range(6)]
            assert sum(counts) == survivors
        finally:
            recovered.shutdown()
        assert run_doctor(str(crashed)).exit_status == 0


def test_the_pool_is_used_only_with_async_flush_on_a_master(tmp_path):
    for kw, expected in (({}, True), ({"flush_disk_type": FlushDiskType.SYNC_FLUSH}, False),
                         ({"broker_role": BrokerRole.SLAVE}, False),
                         ({"broker_role": BrokerRole.SYNC_MASTER}, True),
                         ({"transient_store_pool_enable": False}, False)):
        config = pool_config(tmp_path / "cfg", **kw)
        assert config.is_transient_store_pool_enable() is expected
        store = MessageStore(config, ManualClock(0))
        assert (store.transient_pool is not None) is expected
        assert store.inline_dispatch is not expected  # with the pool, dispatch follows the commit
    assert MessageStore(pool_config(tmp_path / "ro"), read_only=True).transient_pool is None
    with pytest.raises(ValueError, match="pool_size"):
        TransientStorePool(-1, SEGMENT)


def test_after_a_restart_the_loaded_segment_has_no_buffer(tmp_path):
    """4.9.4 maps existing segments without the pool: appends to the last one are readable at once."""
    store = open_pool_store(tmp_path)
    store.put_message(body_msg(0))
    store.shutdown()
    store = open_pool_store(tmp_path)
    try:
        last = store.commit_log.queue.last
        assert last.write_buffer is None
        r = store.put_message(body_msg(1))
        assert store.get_max_phy_offset() == r.append_result.wrote_offset + r.append_result.wrote_bytes
        i = 2
        while len(store.commit_log.queue.files) < 2:
            r = store.put_message(body_msg(i))
            i += 1
        assert store.commit_log.queue.last.write_buffer is not None  # a new segment borrows again
    finally:
        store.shutdown()


def test_threaded_commit_service_commits_and_shutdown_commits_the_rest(tmp_path):
    store = open_pool_store(tmp_path, threads=True, commit_interval_commit_log=20,
                            commit_commit_log_thorough_interval=20)
    try:
        assert store.commit_service is not None
        for i in range(50):
            assert store.put_message(body_msg(i)).ok
        deadline = time.monotonic() + 10
        while store.get_max_offset_in_queue("T0", 0) < 9 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert store.get_max_offset_in_queue("T0", 0) == 9  # committed by the service, dispatched by reput
        for i in range(50, 80):
            assert store.put_message(body_msg(i)).ok
    finally:
        store.shutdown()
    reopened = open_pool_store(tmp_path)
    try:
        assert reopened.last_exit_ok
        assert sum(reopened.get_max_offset_in_queue(f"T{q % 2}", q % 3) for q in range(6)) == 80
    finally:
        reopened.shutdown()
    assert run_doctor(str(tmp_path)).exit_status == 0
