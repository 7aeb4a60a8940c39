"""SYNC_FLUSH with group commit under 16 concurrent writers vs one fsync per message.

Ours: ``MessageStore`` with ``flushDiskType=SYNC_FLUSH`` and its threads (GroupCommitService,
reput, ConsumeQueue flush), 16 writer threads calling ``put_message`` (1 KiB bodies); a put
returns only once its bytes are on disk, and the group-commit thread makes one flush serve every
put waiting at that moment.

Baseline (same run, same disk): one thread doing ``os.write`` of the same record bytes + ``fdatasync``
per message — what "durable before acknowledging" costs without grouping. An informational row
shows 16 threads each doing write + fdatasync on one file (the kernel alone does not group them
as well).

Target: ours >= 10x the baseline (messages per second).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

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


def run_ours(count: int, workdir: str) -> tuple[float, int]:
    root = tempfile.mkdtemp(dir=workdir)
    config = MessageStoreConfig(store_path_root_dir=root, mapped_file_size_commit_log=128 << 20,
                                flush_disk_type=FlushDiskType.SYNC_FLUSH, max_hash_slot_num=100_000,
                                max_index_num=400_000)
    store = MessageStore.open(config, SystemClock(), threads=True)
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
    rounds = store.group_commit.rounds if store.group_commit else 0
    store.shutdown()
    shutil.rmtree(root)
    if failures:
        raise SystemExit(f"{len(failures)} puts failed: {failures[:3]}")
    return per_writer * WRITERS / elapsed, rounds


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


def main() -> int:
    args = parser(__doc__.splitlines()[0]).parse_args()
    count = 3_200 if args.quick else 16_000
    base_count = 500 if args.quick else 2_000
    repeat = args.repeat or (1 if args.quick else 3)
    workdir = tempfile.mkdtemp(prefix="pymq-bench-sync-", dir=os.environ.get("PYMQ_BENCH_DIR"))
    try:
        ours, rounds = max(run_ours(count, workdir) for _ in range(repeat))
        base = max(run_fsync_per_message(base_count, workdir) for _ in range(repeat))
        base16 = max(run_fsync_per_message(base_count, workdir, WRITERS) for _ in range(repeat))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    rows = [Row(f"SYNC_FLUSH group commit, {WRITERS} writers", ours, base, "msg/s", 10.0,
                f"{rounds} group-commit rounds for {count} puts ({count / max(rounds, 1):.1f} puts per flush); "
                f"baseline: 1 thread, write + fdatasync per message"),
            Row(f"  vs {WRITERS} threads each write + fdatasync", ours, base16, "msg/s", None,
                "informational: concurrent fdatasync calls on one file")]
    return report("group_commit", f"Durable puts, 1 KiB bodies (best of {repeat}; files in {os.path.dirname(workdir)})",
                  rows, {"puts": count, "baseline_messages": base_count, "writers": WRITERS, "repeat": repeat})


if __name__ == "__main__":
    sys.exit(main())
