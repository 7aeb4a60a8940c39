"""A real RocketMQ 4.9.4 broker's store after a power loss (tests/data/rocketmq-4.9.4-power-loss/,
recorded under LazyFS by tools/power_loss/record_rocketmq.py; README.md there).

4.9.4 refused to start on it (exit status 253, the line in ``restart.json``); after deleting the
files the doctor names — and only those — it started and served every acknowledged message
(``after_fix.json``). Here: the doctor says all that without touching a file; pymq-ref's store
opens the same store unattended with every acknowledged message, its ConsumeQueue unit and index
entry; with ``strict_load`` it refuses as 4.9.4 does.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pymq_ref.formats.msgid import parse_offset_msg_id
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.errors import WrongFileSizeError
from pymq_ref.store.message_store import MessageStore
from pymq_ref.store.store_config import FlushDiskType, MessageStoreConfig
from pymq_ref.tools.doctor import run_doctor
from pymq_ref.tools.doctor_power_loss import REFUSAL_EXIT_STATUS
from readonly_helpers import read_only_tree, tree_snapshot

DATA = Path(__file__).parent / "data" / "rocketmq-4.9.4-power-loss"
TOPIC = "PowerLossTopic"


def _json(name: str):
    return json.loads((DATA / name).read_text())


def _acks() -> list[dict]:
    return [json.loads(line) for line in (DATA / "acks.jsonl").read_text().splitlines()]


def _config(root: Path, **kw) -> MessageStoreConfig:
    return MessageStoreConfig(store_path_root_dir=str(root), mapped_file_size_commit_log=65536,
                              mapped_file_size_consume_queue=1000, max_hash_slot_num=100, max_index_num=400,
                              flush_disk_type=FlushDiskType.SYNC_FLUSH, **kw)


@pytest.fixture
def store(tmp_path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(DATA / "store", root)
    return root


def test_the_recording(store):
    """What 4.9.4 did: refused, then after the doctor's fix started and served every acknowledged message."""
    restart, after = _json("restart.json"), _json("after_fix.json")
    assert not restart["booted"] and restart["exit_status"] == REFUSAL_EXIT_STATUS
    assert after["booted"] and after["acknowledged"] == len(_acks()) > 1000
    assert after["acknowledged_consumed"] == after["acknowledged"] and not after["acknowledged_missing"]


def test_doctor_says_rocketmq_will_refuse_and_gives_the_minimal_fix(store, monkeypatch):
    restart, after = _json("restart.json"), _json("after_fix.json")
    with read_only_tree(store, monkeypatch) as log:
        report = run_doctor(store)
        snapshot = tree_snapshot(store)
    log.assert_read_only()
    assert snapshot == log.before  # not a byte, a size, a time or a file changed
    assert report.exit_status == 1
    leftovers = [p for p in report.findings if p.code == "power_loss_leftover"]
    # exactly the files whose deletion let 4.9.4 start
    assert sorted(p.file for p in leftovers) == after["deleted"]
    assert all(p.fix == f"rm -- {store / p.file}" for p in leftovers)
    # the line 4.9.4 logged for the first one it met, quoted with this store's path
    (line,) = restart["length_not_matched"]
    first = next(p for p in leftovers if p.file.startswith("commitlog/"))
    assert repr(line.replace("STORE", str(store))) in first.reason
    assert f"exit status {REFUSAL_EXIT_STATUS}" in first.reason
    # not blockers for 4.9.4, but said: the empty index file, the config files the power loss emptied
    assert [p.file for p in report.findings if p.code == "power_loss_index_file"] == ["index/20261125164019453"]
    config = {p.file: p.reason for p in report.findings if p.code == "power_loss_config"}
    assert "topic not exist" in config["config/topics.json"] and "offsets" in config["config/consumerOffset.json"]
    assert after["topic_recreated"]  # (what the recording had to do: topics.json was gone)


def test_pymq_ref_opens_it_unattended_with_every_acknowledged_message(store):
    with MessageStore.open(_config(store), ManualClock(1_800_000_000_000)) as s:
        assert len(s.power_loss_repairs) == 1 + 5 + 1  # the CommitLog, ConsumeQueue and index files
        for ack in _acks():
            _host, phy = parse_offset_msg_id(ack["offsetMsgId"])
            rec = s.look_message_by_offset(phy)
            assert rec is not None and rec.keys == [ack["keys"]]
            unit = s.find_consume_queue(TOPIC, ack["queueId"], create=False).get_unit(ack["queueOffset"])
            assert unit.phy_offset == phy
            assert [r.phy_offset for r in s.query_message(TOPIC, ack["keys"]).messages] == [phy]
    report = run_doctor(store)
    # only the emptied config files remain (the broker, not the store, writes those)
    assert {p.code for p in report.findings} == {"power_loss_config"}


def test_strict_load_refuses_as_rocketmq_does(store):
    with pytest.raises(WrongFileSizeError) as e:
        MessageStore.open(_config(store, strict_load=True))
    assert e.value.path.endswith("commitlog/00000000000000589824") and e.value.actual == 0
