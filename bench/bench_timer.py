"""Timer wheel: enqueue + dequeue of N timers with uniformly random delays vs plain put, same run.

Ours: N messages go through the 5.x put hook with ``TIMER_DELAY_MS`` uniform in [1 s, 1 h]
(seeded) and are stored in ``rmq_sys_wheel_timer`` (not timed). Timed: the enqueue (read the
timer topic's ConsumeQueue, decode each record, append a TimerLog unit, update the slot of the
default 604,800-slot wheel) and, after the clock jumps past the last delivery time, the dequeue
(walk every slot's chain backwards through the TimerLog, decode each record, rebuild the real
message, put it). Rate = N / (enqueue + dequeue seconds).

Baseline: ``MessageStore.put_message`` of the same N messages without timer properties.

Target: timers per second >= 0.3x plain puts per second. ``--quick``: 50,000 timers (default 1,000,000).
"""

from __future__ import annotations

import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Row, interleaved_best, parser, plain_put_rate, report  # noqa: E402

from pymq_ref.broker.scheduler import ManualScheduler  # noqa: E402
from pymq_ref.broker.timer import TimerConfig, TimerMessageStore  # noqa: E402
from pymq_ref.formats.hosts import Host  # noqa: E402
from pymq_ref.formats.message import MessageRecord  # noqa: E402
from pymq_ref.store.clock import ManualClock  # noqa: E402
from pymq_ref.store.message_store import MessageStore  # noqa: E402
from pymq_ref.store.store_config import MessageStoreConfig  # noqa: E402

BODY = bytes(range(256))
BORN, STORE = Host("10.0.0.1", 40000), Host("127.0.0.1", 10911)
T0 = 1_700_000_000_000
MAX_DELAY_MS = 3_600_000


def messages(count: int, timer: bool) -> list[MessageRecord]:
    rng = random.Random(42)
    out = []
    for i in range(count):
        props = {"KEYS": f"key-{i}", "UNIQ_KEY": f"0A00000112340000ABCD{i:012X}", "CLUSTER": "DefaultCluster",
                 "TAGS": "TagA"}
        if timer:
            props["TIMER_DELAY_MS"] = str(rng.randint(1000, MAX_DELAY_MS))
        out.append(MessageRecord(topic="BenchTopic", body=BODY, queue_id=i % 8, properties=props,
                                 born_timestamp=T0 + i, born_host=BORN, store_host=STORE))
    return out


def open_store(workdir: str, clock) -> MessageStore:
    root = tempfile.mkdtemp(dir=workdir)
    config = MessageStoreConfig(store_path_root_dir=root, mapped_file_size_commit_log=1 << 30,
                                max_hash_slot_num=2_000_000, max_index_num=8_000_000)
    return MessageStore.open(config, clock)


def timer_rate(msgs, workdir: str) -> tuple[float, float, float]:
    clock = ManualClock(T0)
    store = open_store(workdir, clock)
    tms = TimerMessageStore(store, ManualScheduler(clock), TimerConfig())
    tms.load()
    tms.start()
    while tms.dequeue() == 0:  # a fresh wheel starts reading 7 days back: skip the empty past first
        pass
    for m in msgs:
        store.put_message(tms.handle_schedule_message(m))
    start = time.perf_counter()
    while tms.enqueue(0):
        pass
    enqueued = time.perf_counter()
    clock.set(T0 + MAX_DELAY_MS + 2000)
    tms.maybe_move_write_time()
    while tms.dequeue() != -1:
        pass
    done = time.perf_counter()
    n = len(msgs)
    assert tms.stats.enqueued == n and tms.stats.delivered == n, tms.stats
    tms.shutdown()
    store.shutdown()
    shutil.rmtree(store.root)
    return n / (done - start), n / (enqueued - start), n / (done - enqueued)


def main() -> int:
    args = parser(__doc__.splitlines()[0]).parse_args()
    count = 50_000 if args.quick else 1_000_000
    repeat = args.repeat or 1
    plain, timers = messages(count, False), messages(count, True)
    with tempfile.TemporaryDirectory(prefix="bench-timer-") as workdir:
        (ours, enq, deq), base = interleaved_best(
            lambda: timer_rate(timers, workdir), lambda: plain_put_rate(plain, open_store(workdir, ManualClock(T0))),
            repeat, ours_key=lambda r: r[0])
    rows = [Row("timer wheel: enqueue + dequeue", ours, base, "t/s", 0.3,
                "baseline: plain put_message of the same messages without timer properties"),
            Row("  enqueue only (CQ -> TimerLog + slot)", enq, base, "t/s", None),
            Row("  dequeue only (slot chain -> real topic put)", deq, base, "t/s", None)]
    return report("timer", f"Timer wheel, {count} timers, delays uniform in [1 s, 1 h] (best of {repeat})", rows,
                  {"timers": count, "body_bytes": len(BODY), "max_delay_ms": MAX_DELAY_MS, "repeat": repeat})


if __name__ == "__main__":
    sys.exit(main())
