"""Shared helpers for the store tests (not a test module)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import MessageRecord
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.message_store import MessageStore
from pymq_ref.store.store_config import MessageStoreConfig

VECTOR3_HEX = (
    "000000C6DAA320A769C865ED000000000000000000000000000000000000000000000000000000000000018BCFE568007F0000010000C3500000018BCFE5687B7F00000100002A9F0000000000000000000000000000000E48656C6C6F20526F636B65744D5109546F7069635465737400544B455953014B45593102554E49515F4B455901374630303030303131323334303030304142434430303030303036343030303102434C55535445520144656661756C74436C757374657202544147530154616741"
)
UNIQ = "7F00000112340000ABCD000000640001"


def vector3_message(**overrides) -> MessageRecord:
    fields = dict(
        topic="TopicTest", body=b"Hello RocketMQ",
        properties={"KEYS": "KEY1", "UNIQ_KEY": UNIQ, "CLUSTER": "DefaultCluster", "TAGS": "TagA"},
        born_timestamp=1700000000000, born_host=Host("127.0.0.1", 50000), store_host=Host("127.0.0.1", 10911))
    fields.update(overrides)
    return MessageRecord(**fields)


def small_config(root, **kw) -> MessageStoreConfig:
    base = dict(store_path_root_dir=str(root), mapped_file_size_commit_log=4096,
                mapped_file_size_consume_queue=200, max_hash_slot_num=64, max_index_num=32)
    base.update(kw)
    return MessageStoreConfig(**base)


def msg(i: int, topic: str = "T", queue_id: int = 0, size: int = 10, **props) -> MessageRecord:
    p = {"UNIQ_KEY": f"U{i:08d}", "KEYS": f"K{i} common", "TAGS": f"Tag{i % 3}"}
    p.update(props)
    return MessageRecord(topic=topic, body=bytes([i % 251]) * size, queue_id=queue_id, properties=p,
                         born_timestamp=1_700_000_000_000 + i, born_host=Host("10.0.0.1", 40000),
                         store_host=Host("127.0.0.1", 10911))


def open_store(root, clock=None, **kw) -> MessageStore:
    threads = kw.pop("threads", False)
    read_only = kw.pop("read_only", False)
    return MessageStore.open(small_config(root, **kw), clock or ManualClock(1_700_000_000_123, step_ms=1),
                             threads=threads, read_only=read_only)


def kill_test_config(root, flush_disk_type, transient_pool: bool = False) -> MessageStoreConfig:
    return small_config(root, mapped_file_size_commit_log=64 * 1024, mapped_file_size_consume_queue=20 * 64,
                        max_hash_slot_num=128, max_index_num=256, flush_disk_type=flush_disk_type,
                        flush_interval_commit_log=20, flush_commit_log_thorough_interval=100,
                        transient_store_pool_enable=transient_pool, commit_interval_commit_log=20,
                        commit_commit_log_thorough_interval=50)


def kill_test_message(i: int) -> MessageRecord:
    return msg(i, topic=f"K{i % 2}", queue_id=i % 3, size=50 + i % 200)


def fail_first_flush(queue) -> None:
    """Fault injection for a disk error: the next ``queue.flush`` that has data to flush raises
    EIO, later ones flush (a service thread's flush of nothing does not use the failure up)."""
    real = queue.flush
    calls = []

    def failing_once(least_pages=0):
        if not calls and queue.remain_how_many_data_to_flush() > 0:
            calls.append(least_pages)
            raise OSError(5, "Input/output error")
        return real(least_pages)

    queue.flush = failing_once


def tree_digest(root, keep=lambda rel: True) -> dict[str, str]:
    """SHA-256 of every file under ``root`` whose relative path ``keep`` accepts (pins the bytes a
    recorded RocketMQ answer applies to)."""
    root = Path(root)
    return {rel: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*"))
            if p.is_file() and keep(rel := str(p.relative_to(root)))}
