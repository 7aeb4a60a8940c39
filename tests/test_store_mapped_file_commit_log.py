"""MappedFile / MappedFileQueue and the CommitLog put path, incl. the END_OF_FILE roll rule."""

from __future__ import annotations

import os

import pytest

from pymq_ref.formats.message import BLANK_MAGIC_CODE, BlankRecord, decode_record, encode_message, iter_records
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.commit_log import CommitLog, PutMessageStatus, encode_for_append
from pymq_ref.store.errors import ReadOnlyStoreError, StoreLockedError, WrongFileSizeError
from pymq_ref.store.mapped_file import MappedFile, MappedFileQueue, offset_to_file_name, scan_segment_files
from store_helpers import VECTOR3_HEX, msg, open_store, vector3_message


def test_file_naming_and_full_size_creation(tmp_path):
    q = MappedFileQueue(str(tmp_path / "cl"), 1024)
    mf = q.get_last_mapped_file(0)
    assert mf.file_name == "00000000000000000000" and os.path.getsize(mf.path) == 1024
    mf.append(b"x" * 1024)
    mf2 = q.get_last_mapped_file()
    assert mf2.file_name == offset_to_file_name(1024) == "00000000000000001024"
    assert q.find_mapped_file_by_offset(1023) is mf and q.find_mapped_file_by_offset(1024) is mf2
    assert q.find_mapped_file_by_offset(2048) is None
    assert q.find_mapped_file_by_offset(5000, return_first_on_not_found=True) is mf
    q.shutdown()
    empty = MappedFileQueue(str(tmp_path / "cq"), 100)
    assert empty.get_last_mapped_file(250).file_from_offset == 200  # start - start % size


def test_wrong_size_file_is_refused_and_listed(tmp_path):
    d = tmp_path / "cl"
    d.mkdir()
    (d / "00000000000000000000").write_bytes(bytes(1024))
    (d / "00000000000000001024").write_bytes(bytes(1000))
    q = MappedFileQueue(str(d), 1024)
    with pytest.raises(WrongFileSizeError) as e:
        q.load()
    assert e.value.path.endswith("00000000000000001024") and (e.value.expected, e.value.actual) == (1024, 1000)
    infos = scan_segment_files(str(d), 1024)
    assert [i.ok for i in infos] == [True, False]


def test_read_only_never_creates_or_writes(tmp_path):
    q = MappedFileQueue(str(tmp_path / "nothing"), 1024, read_only=True)
    q.load()
    with pytest.raises(ReadOnlyStoreError):
        q.get_last_mapped_file(0)
    assert not (tmp_path / "nothing").exists()
    path = tmp_path / "00000000000000000000"
    path.write_bytes(bytes(64))
    mf = MappedFile(str(path), 64, read_only=True)
    with pytest.raises(ReadOnlyStoreError):
        mf.append(b"a")
    mf.close()


def test_flush_least_pages(tmp_path):
    mf = MappedFile(str(tmp_path / "00000000000000000000"), 4096 * 8)
    mf.append(b"a" * 4096 * 2)
    assert mf.flush(4) == 0  # 2 dirty pages < 4
    mf.append(b"b" * 4096 * 2)
    assert mf.flush(4) == 4096 * 4
    mf.append(b"c")
    assert mf.flush(0) == 4096 * 4 + 1
    mf.close()


def _commit_log(tmp_path, size):
    return CommitLog(str(tmp_path / "commitlog"), size, ManualClock(1_700_000_000_123))


@pytest.mark.parametrize("extra, rolls", [(0, False), (1, False), (-1, True), (-8, True)])
def test_end_of_file_rule_boundaries(tmp_path, extra, rolls):
    """A record of length L is placed iff L + 8 <= remaining."""
    enc = encode_for_append(msg(1, size=100))
    length = len(enc.data)
    cl = _commit_log(tmp_path, 2 * length + 8 + extra)
    cl.append(enc)  # first record at 0; remaining = length + 8 + extra
    res = cl.append(encode_for_append(msg(2, size=100)))
    first = cl.queue.files[0]
    if rolls:
        assert res.wrote_offset == cl.file_size and len(cl.queue.files) == 2
        blank = decode_record(first.mm, length, base=0)
        assert isinstance(blank, BlankRecord) and blank.total_size == length + 8 + extra
        assert first.mm[length:length + 8] == (length + 8 + extra).to_bytes(4, "big") + \
            (BLANK_MAGIC_CODE & 0xFFFFFFFF).to_bytes(4, "big")
        assert first.mm[length + 8:] == bytes(cl.file_size - length - 8)  # only 8 blank bytes written
    else:
        assert res.wrote_offset == length and len(cl.queue.files) == 1
    cl.shutdown()


def test_exact_eight_bytes_left_then_blank(tmp_path):
    enc = encode_for_append(msg(1))
    n = len(enc.data)
    cl = _commit_log(tmp_path, n + 8)
    assert cl.append(enc).wrote_offset == 0
    assert cl.queue.files[0].remaining == 8
    res = cl.append(encode_for_append(msg(2)))
    assert res.wrote_offset == n + 8
    assert decode_record(cl.queue.files[0].mm, n).total_size == 8
    cl.shutdown()


def test_record_larger_than_file_is_illegal(tmp_path):
    from pymq_ref.store.errors import MessageIllegalError

    cl = _commit_log(tmp_path, 256)
    with pytest.raises(MessageIllegalError):
        cl.append(encode_for_append(msg(1, size=300)))
    cl.shutdown()


def test_fast_encoder_matches_format_encoder():
    for m in (vector3_message(), msg(7, size=0), msg(8, topic="中文", size=33)):
        enc = encode_for_append(m)
        assert enc.data == encode_message(m)
    assert encode_for_append(vector3_message()).data.hex().upper() != VECTOR3_HEX  # store ts patched later


def test_vector3_through_the_store(tmp_path):
    store = open_store(tmp_path, ManualClock(1_700_000_000_123))
    res = store.put_message(vector3_message())
    assert res.status is PutMessageStatus.PUT_OK and res.append_result.msg_id == "7F00000100002A9F0000000000000000"
    assert store.commit_log.get_data(0, 198).hex().upper() == VECTOR3_HEX
    store.shutdown()


def test_queue_offsets_and_phy_offsets_patched(tmp_path):
    store = open_store(tmp_path)
    for i in range(30):
        assert store.put_message(msg(i, queue_id=i % 3)).ok
    recs = [r for f in store.commit_log.queue.files
            for r in iter_records(f.mm, base=f.file_from_offset) if not isinstance(r, BlankRecord)]
    assert len(recs) == 30
    per_q = {}
    for r in recs:
        assert r.queue_offset == per_q.get(r.queue_id, 0)
        per_q[r.queue_id] = r.queue_offset + 1
        assert decode_record(store.commit_log.get_data(r.phy_offset, r.total_size)).phy_offset == r.phy_offset
    ts = [r.store_timestamp for r in recs]
    assert ts == sorted(ts) and len(set(ts)) == 30
    assert store.commit_log.topic_queue_table == {"T-0": 10, "T-1": 10, "T-2": 10}
    store.shutdown()


def test_limits(tmp_path):
    store = open_store(tmp_path, max_message_size=100)
    assert store.put_message(msg(1, size=101)).status is PutMessageStatus.MESSAGE_ILLEGAL
    assert store.put_message(msg(1, size=100)).ok
    assert store.put_message(msg(1, topic="t" * 128)).status is PutMessageStatus.MESSAGE_ILLEGAL
    big = store.put_message(msg(1, BIG="é" * 16384))  # 32768 UTF-8 bytes, fewer chars
    assert big.status is PutMessageStatus.PROPERTIES_SIZE_EXCEEDED and "32767" in big.error
    assert store.put_message(msg(1, BIG="x" * 33000)).status is PutMessageStatus.MESSAGE_ILLEGAL
    store.shutdown()
    assert store.put_message(msg(1)).status is PutMessageStatus.SERVICE_NOT_AVAILABLE


def test_batch_put(tmp_path):
    from pymq_ref.formats.batch import BatchEntry, encode_batch
    from pymq_ref.formats.message import MessageRecord

    store = open_store(tmp_path)
    body = encode_batch([BatchEntry(body=b"a", properties={"KEYS": "k1"}, flag=1),
                         BatchEntry(body=b"bb", properties={"TAGS": "TagB"})])
    batch = MessageRecord(topic="B", body=body, queue_id=2, properties={"CLUSTER": "DefaultCluster"},
                          born_timestamp=5)
    res = store.put_messages(batch)
    assert res.ok and res.append_result.msg_num == 2 and res.append_result.msg_id.count(",") == 1
    got = store.get_message("g", "B", 2, 0, 10).records()
    assert [(r.body, r.flag, r.queue_offset) for r in got] == [(b"a", 1, 0), (b"bb", 0, 1)]
    assert got[0].properties == {"KEYS": "k1", "CLUSTER": "DefaultCluster"}
    assert got[1].properties_string == "TAGS\x01TagB\x02CLUSTER\x01DefaultCluster"
    assert [m.body for m in store.query_message("B", "k1").messages] == [b"a"]
    delayed = MessageRecord(topic="B", body=body, properties={"DELAY": "2"})
    assert store.put_messages(delayed).status is PutMessageStatus.MESSAGE_ILLEGAL
    store.shutdown()


def test_second_store_on_same_dir_is_refused(tmp_path):
    store = open_store(tmp_path)
    with pytest.raises(StoreLockedError):
        open_store(tmp_path)
    assert (tmp_path / "lock").read_bytes() == b"lock"
    store.shutdown()
    open_store(tmp_path).shutdown()


def test_lock_across_processes(tmp_path):
    import subprocess
    import sys

    store = open_store(tmp_path)
    code = ("import sys; sys.path.insert(0, 'tests'); from store_helpers import open_store\n"
            "from pymq_ref.store.errors import StoreLockedError\n"
            f"try:\n    open_store({str(tmp_path)!r})\nexcept StoreLockedError:\n    print('LOCKED')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(__file__)), env={**os.environ, "PYTHONPATH": "."})
    assert "LOCKED" in out.stdout, out.stderr
    store.shutdown()


def test_delete_expired_files_by_time(tmp_path):
    store = open_store(tmp_path)
    for i in range(200):
        store.put_message(msg(i, size=100))
    files = list(store.commit_log.queue.files)
    assert len(files) > 3
    old = 1_000_000_000_000
    for f in files[:2]:
        os.utime(f.path, ns=(old * 1_000_000,) * 2)
    deleted = store.delete_expired_files(now_ms=old + 72 * 3_600_000)
    assert deleted == 2 and store.commit_log.min_offset == files[2].file_from_offset
    g = store.get_message("g", "T", 0, 0, 5)
    assert g.status.name == "OFFSET_TOO_SMALL" or g.records()[0].phy_offset >= files[2].file_from_offset
    store.shutdown()


# -- hot-path helpers agree with the reference implementations ---------------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pymq_ref.formats.hashing import index_key_hash  # noqa: E402
from pymq_ref.formats.properties import encode_properties  # noqa: E402
from pymq_ref.store.commit_log import properties_string  # noqa: E402
from pymq_ref.store.index import fast_index_key_hash  # noqa: E402


@given(st.text(max_size=60) | st.from_regex(r"[A-Za-z_%]{1,20}#[0-9A-F]{32}", fullmatch=True))
def test_fast_index_key_hash_matches_reference(key):
    assert fast_index_key_hash(key) == index_key_hash(key)


@given(st.dictionaries(st.text(min_size=1, max_size=8), st.text(max_size=8) | st.none(), max_size=6))
def test_properties_string_matches_reference(props):
    try:
        expected = encode_properties(props)
    except ValueError:
        with pytest.raises(ValueError):
            properties_string(props)
        return
    assert properties_string(props) == expected
