"""SYNC_FLUSH with group commit under 16 concurrent writers vs one fsync per message.

Ours: ``MessageStore`` with ``flushDiskType=SYNC_FLUSH`` and its threads (GroupCommitService,
reput, ConsumeQueue flush), 1 KiB bodies, a put acknowledged only once its bytes are on disk:

* 16 asyncio tasks awaiting ``async_put_message`` (RocketMQ's ``asyncPutMessage``) on one loop:
  the puts of one loop turn share one ``fdatasync`` (the target row);
* 16 threads calling the blocking ``put_message``, sharing rounds leader/follower (informational:
  every put costs a thread wake-up, which on a 2-vCPU VM costs more CPU than the put).

Baseline (same run, same disk): one thread doing ``os.write`` of the same record bytes + ``fdatasync``
per message — what "durable before acknowledging" costs without grouping. An informational row
shows 16 threads each doing write + fdatasync on one file (the kernel alone does not group them
as well).

Target: ours >= 10x the baseline (messages per second).

The ceiling, printed with the results: 16 writers with one put in flight each can at best share
one flush per 16 puts, and none can append its next put before that flush returns, so a round
costs at least F16 + 16·w and the ratio is at most 16·F1 / (F16 + 16·w), where F1 is the
baseline's time per message, F16 the time of copying 16 records into a mapped segment and one
``fdatasync`` (a raw loop), and w one put alone (one asyncio writer, ASYNC_FLUSH, same store
settings) — all measured in the same run.
"""

from __future__ import annotations

import asyncio
import mmap
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Row, parser, report  # noqa: E402

from pymq_ref.formats.hosts import Host  # noqa: E402
from pymq_ref.formats.message import MessageRecord, encode_message  # noqa: E402
from pymq_ref.store.clock import SystemClock  # noqa: E402
from pymq_ref.store.commit_log import PutMessageStatus  # noqa: E402
from pymq_ref.store.message_store import MessageStore  # noqa: E402
from pymq_ref.store.store_config import FlushDiskType, MessageStoreConfig  # noqa: E402

WRITERS = 16
BODY = bytes(range(256)) * 4


def message(i: int) -> MessageRecord:
    return MessageRecord(topic="SyncTopic", body=BODY, queue_id=i % 8,
                         properties={"KEYS": f"key-{i}", "UNIQ_KEY": f"0A00000112340000ABCD{i:012X}",
                                     "CLUSTER": "DefaultCluster", "TAGS": "TagA"},
                         born_timestamp=1_700_000_000_000 + i, born_host=Host("10.0.0.1", 40000),
                         store_host=Host("127.0.0.1", 10911))


class Run(NamedTuple):
    rate: float  # puts per second
    puts: int
    rounds: int  # group-commit rounds (fdatasync calls of the service)
    flush_s: float  # time inside those rounds' flush calls
    elapsed_s: float


def _open(workdir: str, flush: FlushDiskType) -> tuple[MessageStore, str]:
    root = tempfile.mkdtemp(dir=workdir)
    config = MessageStoreConfig(store_path_root_dir=root, mapped_file_size_commit_log=128 << 20,
                                flush_disk_type=flush, max_hash_slot_num=100_000, max_index_num=400_000)
    return MessageStore.open(config, SystemClock(), threads=True), root


def _close(store: MessageStore, root: str, failures: list) -> None:
    store.shutdown()
    shutil.rmtree(root)
    if failures:
        raise SystemExit(f"{len(failures)} puts failed: {failures[:3]}")


def run_async(count: int, workdir: str, writers: int = WRITERS,
              flush: FlushDiskType = FlushDiskType.SYNC_FLUSH) -> Run:
    """``writers`` asyncio tasks on one loop, each awaiting its puts one after the other."""
    store, root = _open(workdir, flush)
    per_writer = count // writers
    msgs = [[message(w * per_writer + k) for k in range(per_writer)] for w in range(writers)]
    failures = []

    async def writer(batch):
        for m in batch:
            r = await store.async_put_message(m)
            if r.status is not PutMessageStatus.PUT_OK:
                failures.append(r.status)

    async def all_writers() -> float:
        started = time.perf_counter()
        await asyncio.gather(*(writer(b) for b in msgs))
        return time.perf_counter() - started

    elapsed = asyncio.run(all_writers())
    return _finish(store, root, failures, per_writer * writers, elapsed)


def _finish(store: MessageStore, root: str, failures: list, puts: int, elapsed: float) -> Run:
    gc = store.group_commit
    run = Run(puts / elapsed, puts, gc.rounds if gc else 0, gc.flush_seconds if gc else 0.0, elapsed)
    _close(store, root, failures)
    return run


def run_threads(count: int, workdir: str) -> Run:
    """16 threads, each calling the blocking ``put_message`` one after the other."""
    store, root = _open(workdir, FlushDiskType.SYNC_FLUSH)
    per_writer = count // WRITERS
    msgs = [[message(w * per_writer + k) for k in range(per_writer)] for w in range(WRITERS)]
    failures = []
    start_gate = threading.Barrier(WRITERS + 1)

    def writer(batch):
        start_gate.wait()
        for m in batch:
            r = store.put_message(m)
            if r.status is not PutMessageStatus.PUT_OK:
                failures.append(r.status)

    threads = [threading.Thread(target=writer, args=(b,)) for b in msgs]
    for t in threads:
        t.start()
    start_gate.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    return _finish(store, root, failures, per_writer * WRITERS, elapsed)


def run_fsync_per_message(count: int, workdir: str, threads: int = 1) -> float:
    path = os.path.join(tempfile.mkdtemp(dir=workdir), "00000000000000000000")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    records = [encode_message(message(i)) for i in range(count)]
    per = count // threads

    def work(part):
        for data in part:
            os.write(fd, data)
            os.fdatasync(fd)

    parts = [records[k * per:(k + 1) * per] for k in range(threads)]
    workers = [threading.Thread(target=work, args=(p,)) for p in parts]
    started = time.perf_counter()
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    elapsed = time.perf_counter() - started
    os.close(fd)
    shutil.rmtree(os.path.dirname(path))
    return per * threads / elapsed


def run_mmap_rounds(rounds: int, workdir: str, per_round: int = WRITERS) -> float:
    """Seconds per round of the least a mmap CommitLog can do per group commit: copy ``per_round``
    encoded records into a mapped, preallocated segment, then one ``fdatasync`` (no Python put,
    no other thread) — the F of a 16-record round, as the kernel charges it."""
    path = os.path.join(tempfile.mkdtemp(dir=workdir), "00000000000000000000")
    size = 128 << 20
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    os.ftruncate(fd, size)
    mm = mmap.mmap(fd, size)
    records = [encode_message(message(i)) for i in range(per_round)]
    pos = 0
    started = time.perf_counter()
    for _ in range(rounds):
        for data in records:
            mm[pos:pos + len(data)] = data
            pos += len(data)
        os.fdatasync(fd)
    elapsed = time.perf_counter() - started
    mm.close()
    os.close(fd)
    shutil.rmtree(os.path.dirname(path))
    return elapsed / rounds


def main() -> int:
    args = parser(__doc__.splitlines()[0]).parse_args()
    count = 3_200 if args.quick else 16_000
    base_count = 500 if args.quick else 2_000
    repeat = args.repeat or (1 if args.quick else 3)
    workdir = tempfile.mkdtemp(prefix="pymq-bench-sync-", dir=os.environ.get("PYMQ_BENCH_DIR"))
    try:
        ours = max((run_async(count, workdir) for _ in range(repeat)), key=lambda r: r.rate)
        threads = max((run_threads(count, workdir) for _ in range(repeat)), key=lambda r: r.rate)
        base = max(run_fsync_per_message(base_count, workdir) for _ in range(repeat))
        base16 = max(run_fsync_per_message(base_count, workdir, WRITERS) for _ in range(repeat))
        put_rate = max(run_async(count // 2, workdir, 1, FlushDiskType.ASYNC_FLUSH).rate for _ in range(repeat))
        f16 = min(run_mmap_rounds(base_count // 4, workdir) for _ in range(repeat)) * 1e6
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    f1, w = 1e6 / base, 1e6 / put_rate  # microseconds
    ceiling = WRITERS * f1 / (f16 + WRITERS * w)
    per_round = ours.elapsed_s / ours.rounds * 1e6
    flush = ours.flush_s / ours.rounds * 1e6
    w16 = (per_round - flush) / (ours.puts / ours.rounds)
    rows = [Row(f"SYNC_FLUSH group commit, {WRITERS} asyncio writers", ours.rate, base, "msg/s", 10.0,
                f"{ours.rounds} group-commit rounds for {ours.puts} puts ({ours.puts / ours.rounds:.1f} puts per flush); "
                f"baseline: 1 thread, write + fdatasync per message"),
            Row(f"  {WRITERS} writer threads (blocking put)", threads.rate, base, "msg/s", None,
                f"informational: {threads.puts / threads.rounds:.1f} puts per flush; a thread wake-up per put"),
            Row(f"  vs {WRITERS} threads each write + fdatasync", ours.rate, base16, "msg/s", None,
                "informational: concurrent fdatasync calls on one file")]
    print(f"\nWhere a round goes ({WRITERS} asyncio writers): {per_round:.0f} us = flush {flush:.0f} us "
          f"(fdatasync of ~{ours.puts / ours.rounds:.0f} records, getting the GIL back included) "
          f"+ {per_round - flush:.0f} us of puts ({w16:.1f} us each)."
          f"\nCeiling: the baseline's fdatasync per message F1 = {f1:.0f} us; {WRITERS} records copied into a mapped "
          f"segment + one fdatasync F{WRITERS} = {f16:.0f} us; one put alone w = {w:.1f} us (1 asyncio writer, "
          f"ASYNC_FLUSH). No round can cost less than F{WRITERS} + {WRITERS}w, so group commit is at most "
          f"{WRITERS}*F1/(F{WRITERS}+{WRITERS}w) = {ceiling:.1f}x on this machine.")
    return report("group_commit", f"Durable puts, 1 KiB bodies (best of {repeat}; files in {os.path.dirname(workdir)})",
                  rows, {"puts": count, "baseline_messages": base_count, "writers": WRITERS, "repeat": repeat,
                         "baseline_fdatasync_us": round(f1, 1), "mmap_round_of_16_us": round(f16, 1),
                         "put_alone_us": round(w, 2), "ceiling": round(ceiling, 2), "round_us": round(per_round, 1),
                         "round_flush_us": round(flush, 1), "round_put_us": round(w16, 2)})


if __name__ == "__main__":
    sys.exit(main())
