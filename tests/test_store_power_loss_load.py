"""Loading accepts exactly what a power loss can leave, and refuses real damage.

What a power loss leaves (names kept, sizes and bytes only as synced): the last files of a chain
with 0 bytes (or short and all zeros), an index file of 0 bytes, a short checkpoint, an empty
config file next to its ``.bak``, a file left under its temporary ``.creating`` name. Each is
rebuilt with one log line and the recovery is abnormal. Real damage below the durable end — a
short file holding data, an empty file followed by a full one — is refused as before, and
``strict_load`` refuses all of it as RocketMQ 4.9.4 does.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from pymq_ref.store.config_files import OffsetTableFile, write_config_file
from pymq_ref.store.errors import WrongFileSizeError
from pymq_ref.store.message_store import MessageStore
from store_helpers import msg, open_store

SEG = 4096


@pytest.fixture
def root(tmp_path) -> Path:
    """A store of a few CommitLog segments, ConsumeQueue and index files, cleanly shut down."""
    with open_store(tmp_path) as s:
        for i in range(40):
            assert s.put_message(msg(i, size=200, queue_id=i % 2)).ok
    return tmp_path


def _next_name(directory: Path) -> Path:
    last = sorted(p for p in directory.iterdir() if p.name.isdigit())[-1]
    size = last.stat().st_size
    return directory / f"{int(last.name) + size:020d}"


def _contents(s: MessageStore) -> list[bytes]:
    return [s.commit_log.get_data(u.phy_offset, u.size) for q in (0, 1)
            for u in (s.find_consume_queue("T", q).get_unit(i) for i in range(s.get_max_offset_in_queue("T", q)))]


def test_zero_length_last_files_are_deleted_and_recovery_is_abnormal(root, caplog):
    with open_store(root, read_only=True) as s:
        before = _contents(s)
    empty = [_next_name(root / "commitlog"), _next_name(root / "consumequeue" / "T" / "0"),
             root / "index" / "99991231235959999"]
    for p in empty:
        p.write_bytes(b"")
    short_zero = _next_name(root / "consumequeue" / "T" / "1")
    short_zero.write_bytes(bytes(40))  # short and all zeros: nothing durable either
    with caplog.at_level(logging.WARNING, logger="pymq_ref"):
        s = open_store(root)
    try:
        assert not s.last_exit_ok  # the last run did not end cleanly
        assert len(s.power_loss_repairs) == 4
        assert all(not p.exists() for p in empty + [short_zero])
        assert sum("power-loss repair" in r.message for r in caplog.records) == 5  # 4 files + "recovering abnormally"
        assert _contents(s) == before
        assert s.put_message(msg(99, size=200)).ok
    finally:
        s.shutdown()


def test_real_damage_is_still_refused(root):
    segments = sorted((root / "commitlog").iterdir())
    # an empty file followed by a full one: its bytes were durable once (a later segment exists)
    with open(segments[1], "r+b") as f:
        f.truncate(0)
    with pytest.raises(WrongFileSizeError):
        open_store(root)


def test_short_last_file_holding_data_is_refused(root):
    last = sorted((root / "commitlog").iterdir())[-1]
    with open(last, "r+b") as f:
        f.truncate(300)  # records were in it: cut off, not a power loss's leftover
    with pytest.raises(WrongFileSizeError):
        open_store(root)


def test_strict_load_refuses_as_rocketmq_does(root):
    _next_name(root / "commitlog").write_bytes(b"")
    with pytest.raises(WrongFileSizeError):
        open_store(root, strict_load=True)
    assert open_store(root).shutdown() is None  # the default store repairs the same store


def test_short_checkpoint_and_leftover_temporary_files(root):
    (root / "checkpoint").write_bytes(b"")
    creating = root / "commitlog" / "00000000000000999999.creating"
    creating.write_bytes(b"")
    with open_store(root) as s:
        assert (root / "checkpoint").stat().st_size == 4096
        assert not creating.exists()
        assert any("checkpoint" in line for line in s.power_loss_repairs)
        assert s.put_message(msg(50)).ok


def test_read_only_leaves_the_files_and_ignores_the_leftovers(root):
    empty = _next_name(root / "commitlog")
    empty.write_bytes(b"")
    with open_store(root, read_only=True) as s:
        assert empty.exists() and empty.stat().st_size == 0
        assert len(s.commit_log.queue.files) == len(list((root / "commitlog").iterdir())) - 1
        assert s.power_loss_repairs and "ignored" in s.power_loss_repairs[0]


def test_empty_config_file_is_rebuilt_from_its_bak(tmp_path, caplog):
    path = os.path.join(tmp_path, "config", "consumerOffset.json")
    offsets = OffsetTableFile(str(tmp_path))
    offsets.offset_table = {"t@g": {0: 5}}
    offsets.persist()
    offsets.offset_table = {"t@g": {0: 7}}
    offsets.persist()  # the .bak now holds counter 5
    Path(path).write_bytes(b"")  # what a power loss left of the file
    again = OffsetTableFile(str(tmp_path))
    with caplog.at_level(logging.WARNING, logger="pymq_ref"):
        assert again.load()
    assert again.offset_table["t@g"][0] == 5 or again.offset_table["t@g"]["0"] == 5
    assert Path(path).read_bytes() == Path(path + ".bak").read_bytes()
    assert any("rebuilt from consumerOffset.json.bak" in r.message for r in caplog.records)


def test_config_write_leaves_the_files_rocketmq_leaves(tmp_path):
    path = os.path.join(tmp_path, "config", "topics.json")
    write_config_file(path, "{}")
    write_config_file(path, '{"a":1}')
    assert sorted(os.listdir(os.path.join(tmp_path, "config"))) == ["topics.json", "topics.json.bak"]
    assert Path(path).read_text() == '{"a":1}' and Path(path + ".bak").read_text() == "{}"
