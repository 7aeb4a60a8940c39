"""Shared helpers for the broker tests (no tests here)."""

from __future__ import annotations

from pymq_ref.broker.broker import Broker
from pymq_ref.broker.config import BrokerConfig
from pymq_ref.broker.scheduler import ManualScheduler
from pymq_ref.formats.hosts import Host
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.store_config import MessageStoreConfig

UNIQ = "7F00000112340000ABCD000000640001"
T0 = 1_700_000_000_000
BORN = Host("127.0.0.1", 50000)


def store_config(root, **kw) -> MessageStoreConfig:
    base = dict(store_path_root_dir=str(root), mapped_file_size_commit_log=256 * 1024,
                mapped_file_size_consume_queue=20 * 200, max_hash_slot_num=256, max_index_num=1024)
    base.update(kw)
    return MessageStoreConfig(**base)


def make_broker(root, scheduler=None, *, start_ms=T0 + 123, step_ms=0, config=None, store_kw=None, **kw) -> Broker:
    scheduler = scheduler or ManualScheduler(ManualClock(start_ms, step_ms=step_ms))
    cfg = config or BrokerConfig(total_physical_memory_size=16 * 1024 ** 3)
    return Broker(str(root), cfg, scheduler, store_config=store_config(root, **(store_kw or {})), **kw).start()


def wire(*pairs: tuple[str, str]) -> str:
    """A properties string in exactly this order (what a client put on the wire)."""
    return "\x02".join(f"{k}\x01{v}" for k, v in pairs)


def stored(*pairs: tuple[str, str]) -> bytes:
    return wire(*pairs).encode()
