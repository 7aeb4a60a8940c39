"""ConsumeQueue and IndexFile through the store: test vectors 4, 6 and 7, filler units, rolling, time search."""

from __future__ import annotations

import os

import pytest

from pymq_ref.formats.consume_queue import BLANK_UNIT
from pymq_ref.formats.index_file import entry_position, slot_position
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.consume_queue import ConsumeQueue
from pymq_ref.store.index import IndexFile, IndexService
from pymq_ref.store.message_store import GetMessageStatus
from store_helpers import UNIQ, msg, open_store, vector3_message


def test_cq_vector4(tmp_path):
    store = open_store(tmp_path, ManualClock(1_700_000_000_123))
    store.put_message(vector3_message())
    store.flush()
    data = (tmp_path / "consumequeue" / "TopicTest" / "0" / "00000000000000000000").read_bytes()
    assert data[:20].hex().upper() == "0000000000000000000000C6000000000027A807"
    assert data[20:] == bytes(len(data) - 20)
    store.shutdown()


def test_cq_vector6_schedule_topic(tmp_path):
    store = open_store(tmp_path, ManualClock(1_700_000_000_123))
    props = {"REAL_TOPIC": "TopicTest", "KEYS": "KEY1", "UNIQ_KEY": UNIQ, "CLUSTER": "DefaultCluster",
             "DELAY": "3", "WAIT": "true", "TAGS": "TagA", "REAL_QID": "0"}
    res = store.put_message(vector3_message(topic="SCHEDULE_TOPIC_XXXX", queue_id=2, properties=props))
    assert res.ok and res.append_result.wrote_bytes == 258
    data = (tmp_path / "consumequeue" / "SCHEDULE_TOPIC_XXXX" / "2" / "00000000000000000000").read_bytes()
    assert data[:20].hex().upper() == "0000000000000000" "00000102" "0000018BCFE58F8B"
    store.shutdown()


def test_index_vector7_full_size(tmp_path):
    """Default 5,000,000 slots x 20,000,000 entries: a sparse 420,000,040-byte file."""
    store = open_store(tmp_path, ManualClock(1_700_000_000_123), max_hash_slot_num=5_000_000,
                       max_index_num=20_000_000)
    store.put_message(vector3_message())
    f = store.index_service.files[0]
    assert os.path.getsize(f.path) == 420_000_040 and f.file_name == "20231114221320123"
    mm = f.mm
    assert mm[0:40].hex().upper() == ("0000018BCFE5687B" "0000018BCFE5687B" "0000000000000000"
                                      "0000000000000000" "00000002" "00000003")
    assert mm[slot_position(3792245):slot_position(3792245) + 4].hex() == "00000001"
    assert mm[slot_position(1969516):slot_position(1969516) + 4].hex() == "00000002"
    assert entry_position(1, 5_000_000) == 20000060
    assert mm[20000060:20000080].hex().upper() == "1B0C51F5" "0000000000000000" "00000000" "00000000"
    assert mm[20000080:20000100].hex().upper() == "62C3592C" "0000000000000000" "00000000" "00000000"
    assert f.select_phy_offset("TopicTest#KEY1", 32, 0, 2**63 - 1) == [0]
    assert [m.phy_offset for m in store.query_message("TopicTest", "KEY1").messages] == [0]
    assert [m.phy_offset for m in store.query_message("TopicTest", UNIQ).messages] == [0]
    assert store.query_message("Other", "KEY1").messages == []
    store.shutdown()


def test_index_small_rolls_and_query_across_files(tmp_path):
    clock = ManualClock(1_700_000_000_000, step_ms=10)
    store = open_store(tmp_path, clock, max_hash_slot_num=4, max_index_num=5)
    for i in range(20):  # 2 keys per message => files roll often
        assert store.put_message(msg(i, KEYS=f"K{i}")).ok
    names = sorted(os.listdir(tmp_path / "index"))
    assert len(names) >= 8 and all(len(n) == 17 and n.isdigit() for n in names)
    for i in range(20):
        got = store.query_message("T", f"K{i}").messages
        assert [m.properties["KEYS"] for m in got] == [f"K{i}"]
    for f in store.index_service.files[:-1]:
        assert f.index_count == 5  # at most index_num - 1 entries per file
    store.shutdown()


def test_index_collisions_are_filtered(tmp_path):
    # "Aa" and "BB" have the same Java hashCode: the raw index returns both, the store only the right one
    store = open_store(tmp_path)
    store.put_message(msg(1, KEYS="xAa"))
    store.put_message(msg(2, KEYS="xBB"))
    f = store.index_service.files[-1]
    assert len(f.select_phy_offset("T#xAa", 32, 0, 2**63 - 1)) == 2
    assert [m.properties["KEYS"] for m in store.query_message("T", "xAa").messages] == ["xAa"]
    store.shutdown()


def test_index_time_range_and_max_num(tmp_path):
    clock = ManualClock(1_700_000_000_000, step_ms=0)
    store = open_store(tmp_path, clock)
    for i in range(6):
        store.put_message(msg(i, KEYS="same"))
        clock.advance(5000)
    assert len(store.query_message("T", "same", max_num=32).messages) == 6
    assert len(store.query_message("T", "same", max_num=2).messages) == 2
    mid = store.query_message("T", "same", begin=1_700_000_010_000, end=1_700_000_020_000).messages
    assert [m.store_timestamp for m in mid] == [1_700_000_010_000, 1_700_000_015_000, 1_700_000_020_000]
    store.shutdown()


def test_index_file_inherits_previous_end(tmp_path):
    clock = ManualClock(1_700_000_000_000)
    svc = IndexService(str(tmp_path / "index"), 4, 3, clock)
    f1 = svc.get_and_create_last_index_file()
    assert f1.put_key("a", 100, 1_700_000_000_500) and f1.put_key("b", 200, 1_700_000_001_500)
    assert not f1.put_key("c", 300, 1_700_000_002_000)  # full: index_count 3 >= 3
    f2 = svc.get_and_create_last_index_file()
    assert f2 is not f1 and (f2.begin_phy_offset, f2.begin_timestamp) == (200, 1_700_000_001_500)
    assert f2.file_name != f1.file_name  # same millisecond: pymq-ref bumps the name
    reopened = IndexFile(f2.path, 4, 3)
    reopened.load()
    assert reopened.index_count == 1 and reopened.end_timestamp == 1_700_000_001_500
    reopened.close()
    svc.shutdown()


def test_cq_blank_filler_when_first_file_starts_late(tmp_path):
    cq = ConsumeQueue("T", 0, str(tmp_path), 200)
    assert cq.put_message_position_info(1000, 50, 7, cq_offset=13)
    assert os.listdir(tmp_path / "T" / "0") == ["00000000000000000200"]  # byte 260 is in file 200
    mf = cq.queue.files[0]
    assert mf.mm[0:60] == BLANK_UNIT * 3 and cq.min_offset_in_queue == 13 and cq.max_offset_in_queue == 14
    assert cq.get_unit(13).phy_offset == 1000 and cq.get_unit(12) is None
    assert cq.put_message_position_info(1000, 50, 7, cq_offset=13) and cq.max_offset_in_queue == 14
    cq.shutdown()


def test_cq_recover_and_truncate(tmp_path):
    cq = ConsumeQueue("T", 0, str(tmp_path), 100)  # 5 units per file
    for i in range(12):
        cq.put_message_position_info(i * 100, 100, i, i)
    cq.shutdown()
    cq = ConsumeQueue("T", 0, str(tmp_path), 100)
    cq.load()
    cq.recover()
    assert cq.max_offset_in_queue == 12 and cq.max_physic_offset == 1200
    cq.truncate_dirty_logic_files(700)
    assert cq.max_offset_in_queue == 7 and cq.max_physic_offset == 700
    assert len(cq.queue.files) == 2 and cq.queue.files[-1].mm[40:] == bytes(60)
    cq.truncate_dirty_logic_files(500)
    assert cq.max_offset_in_queue == 5 and len(cq.queue.files) == 1
    cq.shutdown()


def test_get_message_statuses_and_tag_filter(tmp_path):
    store = open_store(tmp_path)
    r = store.get_message("g", "T", 0, 0)  # a queue never written reads as an empty one, as in 4.9.4
    assert (r.status, r.next_begin_offset, r.min_offset, r.max_offset) == (GetMessageStatus.NO_MESSAGE_IN_QUEUE, 0, 0, 0)
    assert store.get_min_offset_in_queue("T", 0) == 0 and not (tmp_path / "consumequeue").exists()
    for i in range(6):
        store.put_message(msg(i))
    assert store.get_message("g", "T", 0, 6).status is GetMessageStatus.OFFSET_OVERFLOW_ONE
    r = store.get_message("g", "T", 0, 9)
    assert (r.status, r.next_begin_offset) == (GetMessageStatus.OFFSET_OVERFLOW_BADLY, 6)
    r = store.get_message("g", "T", 0, 0, 3)
    assert r.status is GetMessageStatus.FOUND and r.message_count == 3 and r.next_begin_offset == 3
    r = store.get_message("g", "T", 0, 0, 32, "Tag1 || Tag2")
    assert [x.properties["TAGS"] for x in r.records()] == ["Tag1", "Tag2", "Tag1", "Tag2"]
    r = store.get_message("g", "T", 0, 0, 32, "Nope")
    assert r.status is GetMessageStatus.NO_MATCHED_MESSAGE and r.next_begin_offset == 6
    store.shutdown()


def test_search_offset_by_time(tmp_path):
    clock = ManualClock(1_700_000_000_000, step_ms=0)
    store = open_store(tmp_path, clock, mapped_file_size_consume_queue=2000)
    for i in range(10):
        store.put_message(msg(i))
        clock.advance(1000)
    base = 1_700_000_000_000
    assert store.search_offset_by_time("T", 0, base + 3000) == 3        # exact
    assert store.search_offset_by_time("T", 0, base + 3400) == 3        # nearer to 3
    assert store.search_offset_by_time("T", 0, base + 3600) == 4        # nearer to 4
    assert store.search_offset_by_time("T", 0, base + 3500) == 3        # tie -> earlier
    assert store.search_offset_by_time("T", 0, base - 50_000) == 0      # all later -> first
    assert store.search_offset_by_time("T", 0, base + 90_000) == 9      # all earlier -> last
    assert store.search_offset_by_time("X", 0, base) == 0
    store.shutdown()


@pytest.mark.parametrize("check_in_slave,expected", [(False, 100), (True, 6)])
def test_slave_keeps_the_requested_offset_unless_offset_check_in_slave(tmp_path, check_in_slave, expected):
    """``nextOffsetCorrection``: on a SLAVE the next offset of a miss is the requested one,
    unless ``offsetCheckInSlave``."""
    from pymq_ref.store.store_config import BrokerRole

    store = open_store(tmp_path)
    for i in range(6):
        store.put_message(msg(i))
    store.shutdown()
    slave = open_store(tmp_path, broker_role=BrokerRole.SLAVE, offset_check_in_slave=check_in_slave)
    r = slave.get_message("g", "T", 0, 100)
    assert (r.status, r.next_begin_offset) == (GetMessageStatus.OFFSET_OVERFLOW_BADLY, expected)
    r = slave.get_message("g", "T", 9, 3)  # a queue never written
    assert (r.status, r.next_begin_offset) == (GetMessageStatus.NO_MESSAGE_IN_QUEUE, 0 if check_in_slave else 3)
    slave.shutdown()
