"""A grid of MessageStore read calls, run by our store and (once) by RocketMQ 4.9.4's.

Each call is a tuple ``(name, *args)``; :func:`grid_text` is the tab-separated form RocketMQ's
harness reads, :func:`run_ours` the answers of our store as the harness prints RocketMQ's
(tests/data/rocketmq-4.9.4-facade/, README.md there).
"""

from __future__ import annotations

from pathlib import Path

from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import MessageRecord
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.message_store import MessageStore
from pymq_ref.store.store_config import MessageStoreConfig

TOPIC = "TopicR"
FILTERS = ("-", "*", "TagA", "TagB || TagA", "TagZ")
#: the "wide" store: one CommitLog file, ConsumeQueue files of 50 units, 9 KiB bodies, so that
#: one pull can reach the transfer limits (in memory: 32 messages / 256 KiB; in disk: 8 / 64 KiB)
WIDE = dict(mapped_file_size_commit_log=1 << 20, mapped_file_size_consume_queue=1000, max_hash_slot_num=100,
            max_index_num=400)


def open_store(root: Path, wide_ratio: int | None = None) -> MessageStore:
    """The store a grid runs on, opened as it was for the recorded answers: a recovery scenario
    (``wide_ratio`` None) or the wide store at that ``accessMessageInMemoryMaxRatio``."""
    import recovery_scenarios as R

    if wide_ratio is None:
        return MessageStore.open(R.config(root), ManualClock(R.T0 + 10**6))
    config = MessageStoreConfig(store_path_root_dir=str(root), access_message_in_memory_max_ratio=wide_ratio, **WIDE)
    return MessageStore.open(config, ManualClock(10**13))


def build_wide(root: Path) -> None:
    """60 messages, queues 0 and 1 alternately, tags TagA / TagB / none; clean shutdown."""
    config = MessageStoreConfig(store_path_root_dir=str(root), **WIDE)
    with MessageStore.open(config, ManualClock(1_700_000_000_000, step_ms=1000)) as store:
        for i in range(60):
            props = {"KEYS": f"key-{i}", "UNIQ_KEY": f"7F00000112340000ABCD{i:012X}", "CLUSTER": "DefaultCluster"}
            if i % 3:
                props["TAGS"] = "TagA" if i % 3 == 1 else "TagB"
            assert store.put_message(MessageRecord(
                topic=TOPIC, body=bytes([65 + i % 26]) * 9000, queue_id=i % 2, properties=props,
                born_timestamp=1_699_999_999_000 + i, born_host=Host("127.0.0.1", 50000),
                store_host=Host("127.0.0.1", 10911))).ok
    (root / "lock").unlink()


def calls(store: MessageStore) -> list[tuple]:
    out: list[tuple] = []
    for q in (0, 1, 7):  # queue 7 was never written
        out.append(("minMax", TOPIC, q))
        for offset in (-1, 0, 1, 2, 3, 4, 5, 9, 11, 12, 13, 29, 30, 31, 100):
            for max_num in (1, 3, 32):
                for f in FILTERS:
                    out.append(("getMessage", TOPIC, q, offset, max_num, f))
        for offset in (-1, 0, 5, 11, 12):
            out.append(("storeTime", TOPIC, q, offset))
            out.append(("cqPhy", TOPIC, q, offset))
        times = {0, 2**62}
        cq = store.find_consume_queue(TOPIC, q, create=False)
        if cq is not None:
            for off in range(cq.min_offset_in_queue, cq.max_offset_in_queue):
                ts = store.get_message_store_timestamp(TOPIC, q, off)
                times |= {ts - 1, ts, ts + 1}
        out += [("byTime", TOPIC, q, ts) for ts in sorted(times)]
    keys = [f"key-{i}" for i in (0, 1, 7, 23)] + ["7F00000112340000ABCD000000000005", "missing"]
    first = store.get_message_store_timestamp(TOPIC, 0, 0)
    for key in keys:
        for max_num in (1, 64):
            for begin, end in ((0, 2**62), (first + 5000, first + 15000), (first + 10**7, 2**62)):
                out.append(("query", TOPIC, key, max_num, begin, end))
    return out


def grid_text(grid: list[tuple]) -> str:
    return "".join("\t".join(map(str, call)) + "\n" for call in grid)


def run_ours(store: MessageStore, grid: list[tuple]) -> list[dict]:
    out = []
    for call in grid:
        name, args = call[0], call[1:]
        doc: dict = {"call": "\t".join(map(str, call))}
        if name == "getMessage":
            topic, q, offset, max_num, f = args
            r = store.get_message("g", topic, q, offset, max_num, None if f == "-" else f)
            doc.update(status=r.status.name, nextBeginOffset=r.next_begin_offset, minOffset=r.min_offset,
                       maxOffset=r.max_offset, queueOffsets=[rec.queue_offset for rec in r.records()])
        elif name == "minMax":
            doc.update(min=store.get_min_offset_in_queue(*args), max=store.get_max_offset_in_queue(*args))
        elif name == "storeTime":
            doc.update(value=store.get_message_store_timestamp(*args))
        elif name == "cqPhy":
            doc.update(value=store.get_commit_log_offset_in_queue(*args))
        elif name == "byTime":
            doc.update(value=store.search_offset_by_time(*args))
        elif name == "query":
            topic, key, max_num, begin, end = args
            r = store.query_message(topic, key, max_num, begin, end)
            doc.update(phyOffsets=[m.phy_offset for m in r.messages],
                       indexLastUpdateTimestamp=r.index_last_update_timestamp,
                       indexLastUpdatePhyoffset=r.index_last_update_phyoffset)
        out.append(doc)
    return out
