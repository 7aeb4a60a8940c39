"""Spark rebuild-and-verify of ConsumeQueues and the key index, on clean stores and damaged copies."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

from pymq_ref.formats.consume_queue import CQ_UNIT
from pymq_ref.formats.index_file import entry_position
from pymq_ref.spark.verify import verify_store

pytest_plugins = ["spark_fixtures"]
REAL_STORE = Path(__file__).parent / "data" / "rocketmq-4.9.4" / "store"


def findings(df, *cols):
    return sorted(tuple(r[c] for c in cols) for r in df.collect())


def test_real_rocketmq_store_verifies_clean(spark):
    result = verify_store(spark, str(REAL_STORE))
    assert result.ok, (result.consume_queue_counts, result.index_counts)
    assert (result.expected_units, result.expected_keys) == (135, 288)  # messages.jsonl: 135 units, 288 index keys


def test_demo_store_verifies_clean(spark, demo_store):
    root, facts = demo_store
    result = verify_store(spark, str(root))
    assert result.ok, (findings(result.consume_queue, "kind", "topic", "queue_id", "queue_offset"),
                       result.index_counts)
    # rolled-back / half records get no unit of their real topic; half records do get one in the half topic
    assert result.expected_units > sum(facts["plain"].values())


def test_damaged_copy_reports_each_damage_at_its_offset(spark, tmp_path):
    store = tmp_path / "store"
    shutil.copytree(REAL_STORE, store)
    cq = store / "consumequeue" / "TopicTest" / "1" / "00000000000000000000"
    data = bytearray(cq.read_bytes())
    phy, size, tags = CQ_UNIT.unpack_from(data, 3 * 20)
    CQ_UNIT.pack_into(data, 3 * 20, phy, size, tags + 1)                  # unit 3: wrong tagsCode
    data[5 * 20:6 * 20] = bytes(20)                                        # unit 5: zeroed
    CQ_UNIT.pack_into(data, 30 * 20, 123456, 99, 7)                        # unit 30: never written by a record
    cq.write_bytes(bytes(data))
    (store / "consumequeue" / "OtherTopic" / "0" / "00000000000000000000").unlink()   # a whole queue gone
    index = store / "index" / "20261121131039782"
    idata = bytearray(index.read_bytes())
    at = entry_position(5, 100)
    victim_hash, victim_phy = struct.unpack_from(">iq", idata, at)
    idata[at:at + 20] = bytes(20)                                          # one index entry gone
    index.write_bytes(bytes(idata))

    # the zeroed entry defeats geometry inference from the first entries: say it (as RocketMQ's config would)
    result = verify_store(spark, str(store), index_options={"hashSlots": "100", "indexNum": "200"})
    assert not result.ok
    got = findings(result.consume_queue, "kind", "topic", "queue_id", "queue_offset")
    assert got == sorted([("mismatched", "TopicTest", 1, 3), ("missing", "TopicTest", 1, 5), ("extra", "TopicTest", 1, 30),
                          ("missing", "OtherTopic", 0, 0), ("missing", "OtherTopic", 0, 1), ("missing", "OtherTopic", 0, 2)])
    mismatch = result.consume_queue.where("kind = 'mismatched'").first()
    assert (mismatch["expected_tags_code"], mismatch["found_tags_code"]) == (tags, tags + 1)
    assert mismatch["file"] == "consumequeue/TopicTest/1/00000000000000000000" and mismatch["position"] == 60
    assert findings(result.index, "kind", "key_hash", "phy_offset") == [("missing", victim_hash, victim_phy)]


def test_delayed_units_rebuilt_by_a_4_9_4_style_recovery_are_their_own_kind(spark, tmp_path):
    """After ``delayed_units_lost`` (recovery as 4.9.4 runs it: the rebuilt SCHEDULE_TOPIC_XXXX
    units carry TAGS hashes) verify reports ``delay_tags_hash``, as the doctor warns, not a mismatch."""
    import recovery_scenarios as R
    from pymq_ref.store.clock import ManualClock
    from pymq_ref.store.message_store import MessageStore

    R.build_delayed_base(tmp_path / "delayed")
    root = tmp_path / "store"
    R.make(tmp_path, "delayed_units_lost", root)
    MessageStore.open(R.config(root), ManualClock(R.T0 + 10**6)).shutdown()  # the recovery
    result = verify_store(spark, str(root))
    assert findings(result.consume_queue, "kind", "topic", "queue_id", "queue_offset", "found_tags_code") == [
        ("delay_tags_hash", "SCHEDULE_TOPIC_XXXX", 2, 0, 2598919), ("delay_tags_hash", "SCHEDULE_TOPIC_XXXX", 2, 1, 2598920)]
    assert not result.ok and result.consume_queue_counts == {"delay_tags_hash": 2}
