"""Delay-level delivery: the ``SCHEDULE_TOPIC_XXXX`` scan vs plain put, measured in the same run.

Ours: N messages with ``DELAY=1`` are parked (not timed); the clock then jumps past their delivery
time and :meth:`ScheduleMessageService.execute_on_timeup` runs level 1 until every unit is done —
per message: read the ConsumeQueue unit, check the deliver time, read and decode the parked
CommitLog record, rebuild the real message (``messageTimeup``: HashMap-ordered properties text)
and put it (CommitLog append + ConsumeQueue + index). Timed: the delivery only.

Baseline: ``MessageStore.put_message`` of the same N messages without ``DELAY`` into a fresh store
(the plain put path, same clock kind, same file sizes).

Target: delivered messages per second >= 0.5x plain puts per second.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Row, interleaved_best, parser, plain_put_rate, report  # noqa: E402

from pymq_ref.broker.schedule import ScheduleMessageService  # noqa: E402
from pymq_ref.broker.scheduler import ManualScheduler  # noqa: E402
from pymq_ref.formats.hosts import Host  # noqa: E402
from pymq_ref.formats.message import MessageRecord  # noqa: E402
from pymq_ref.store.clock import ManualClock  # noqa: E402
from pymq_ref.store.message_store import MessageStore  # noqa: E402
from pymq_ref.store.store_config import MessageStoreConfig  # noqa: E402

BODY = bytes(range(256))
BORN, STORE = Host("10.0.0.1", 40000), Host("127.0.0.1", 10911)
T0 = 1_700_000_000_000


def messages(count: int, delay: bool) -> list[MessageRecord]:
    out = []
    for i in range(count):
        props = {"KEYS": f"key-{i}", "UNIQ_KEY": f"0A00000112340000ABCD{i:012X}", "CLUSTER": "DefaultCluster",
                 "TAGS": "TagA"}
        if delay:
            props["DELAY"] = "1"
        out.append(MessageRecord(topic="BenchTopic", body=BODY, queue_id=i % 8, properties=props,
                                 born_timestamp=T0 + i, born_host=BORN, store_host=STORE))
    return out


def open_store(workdir: str, clock) -> MessageStore:
    root = tempfile.mkdtemp(dir=workdir)
    config = MessageStoreConfig(store_path_root_dir=root, mapped_file_size_commit_log=512 << 20,
                                max_hash_slot_num=500_000, max_index_num=4_000_000)
    return MessageStore.open(config, clock)


def delivery_rate(msgs, workdir: str) -> float:
    clock = ManualClock(T0)
    store = open_store(workdir, clock)
    for m in msgs:
        store.put_message(m)
    service = ScheduleMessageService(store, ManualScheduler(clock))
    service.start()
    clock.set(T0 + 2000)  # everything is due
    offset, total = 0, len(msgs)
    start = time.perf_counter()
    while offset < total:
        offset, _ = service.execute_on_timeup(1, offset)
    elapsed = time.perf_counter() - start
    assert service.stats.delivered == total and store.get_max_offset_in_queue("BenchTopic", 0) == total // 8
    service.shutdown()
    store.shutdown()
    shutil.rmtree(store.root)
    return total / elapsed


def main() -> int:
    args = parser(__doc__.splitlines()[0]).parse_args()
    count = 10_000 if args.quick else 100_000
    repeat = args.repeat or (1 if args.quick else 3)
    plain, delayed = messages(count, False), messages(count, True)
    with tempfile.TemporaryDirectory(prefix="bench-delay-") as workdir:
        ours, base = interleaved_best(lambda: delivery_rate(delayed, workdir),
                                      lambda: plain_put_rate(plain, open_store(workdir, ManualClock(T0))), repeat)
    rows = [Row("delay level 1: deliver due messages", ours, base, "m/s", 0.5,
                "baseline: plain put_message of the same messages without DELAY")]
    return report("delay", f"Delay-level delivery, {count} due messages of 256 B (best of {repeat})", rows,
                  {"messages": count, "body_bytes": len(BODY), "repeat": repeat})


if __name__ == "__main__":
    sys.exit(main())
