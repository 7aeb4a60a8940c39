"""Spark decode throughput: a >= 1 GiB store into a DataFrame on local[2] vs the same decoder in one process.

A store of 1 GiB CommitLog segments (default ``mappedFileSizeCommitLog``) is written once through
``MessageStore`` into ``_build/bench-data/spark-<bytes>-v1/`` (~1.1 GiB of ~1 KiB messages, 5 topics;
keyed by its parameters and reused by later runs). Both sides decode the *same* byte ranges (128 MiB,
:func:`pymq_ref.spark.ranges.plan_ranges`: 8 per segment, so both cores stay busy; each Spark task
also costs a fixed ~30 ms of Python worker and ~15 ms of JVM CPU, measured, hence not smaller)
with the *same* function, :func:`pymq_ref.spark.batches.commitlog_batches` (walk + full decode of
every record + Arrow batches of the columns the answer needs, ``topic`` and ``total_size``: the
``columns`` option, since the Python data source API does not prune columns itself), and compute
the same answers — the record count and the sum of record sizes (the target row), and the same per
topic (informational: Spark's JVM then also copies every topic string out of Arrow, ~1 µs a row):

* baseline: one Python process, ranges one after the other, ``pyarrow.compute`` for the aggregate;
* ours: ``spark.read.format("pymq-commitlog")`` on ``local[2]``, one job
  (``groupBy(topic).agg(count, sum(total_size))``).

Target: ours >= 1.3x the baseline's bytes per second. Spark start-up is reported, not counted; nor is
a first query on a 1 MiB store (Python workers forked and importing, JVM classes loaded and compiled:
a fixed ~5-10 s whatever the data size), reported as the warm-up.
Memory: the driver runs with Spark's default ``spark.driver.memory`` (1g, not set here); the
driver JVM's peak RSS (``VmHWM``) and the Python driver's peak RSS are reported. No file is
ever loaded whole: workers map their range read-only.
"""

from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, Row, parser, report  # noqa: E402

DATA = ROOT / "_build" / "bench-data"
STORE_LAYOUT = "v1"  # bump when build_store writes different messages
GIB = 1 << 30
COLUMNS = "topic,total_size"  # what the answer needs; both sides decode every field of every record
GLOBAL_COLUMNS = "total_size"  # the global aggregate: count + sum of record sizes


def store_path(target_bytes: int) -> Path:
    """Where the store of ``target_bytes`` lives (built once, then reused)."""
    return DATA / f"spark-{target_bytes}-{STORE_LAYOUT}" / "store"


def build_store(store: Path, target_bytes: int) -> None:
    from pymq_ref.formats.hosts import Host
    from pymq_ref.formats.message import MessageRecord
    from pymq_ref.store.clock import ManualClock
    from pymq_ref.store.message_store import MessageStore
    from pymq_ref.store.store_config import MessageStoreConfig

    marker = store / "BENCH_COMPLETE"
    if marker.exists():
        return
    import shutil

    shutil.rmtree(store, ignore_errors=True)
    config = MessageStoreConfig(store_path_root_dir=str(store), message_index_enable=False,
                                mapped_file_size_consume_queue=300_000 * 20)
    store = MessageStore.open(config, ManualClock(1_700_000_000_000, step_ms=1))
    born, host = Host("10.0.0.1", 40000), Host("127.0.0.1", 10911)
    bodies = [bytes([65 + k]) * (800 + 37 * k) for k in range(12)]
    i, start = 0, time.perf_counter()
    while store.get_max_phy_offset() < target_bytes:
        store.put_message(MessageRecord(topic=f"Topic{i % 5}", queue_id=i % 8, body=bodies[i % 12],
                                        properties={"UNIQ_KEY": f"0A0000019C4018B4AAC2{i:012X}", "KEYS": f"k{i}",
                                                    "TAGS": f"Tag{i % 3}"},
                                        born_timestamp=1_700_000_000_000 + i, born_host=born, store_host=host))
        i += 1
    written = store.get_max_phy_offset()
    store.shutdown()
    marker.write_text(str(written))
    print(f"wrote {i:,} messages, {written / GIB:.2f} GiB in {time.perf_counter() - start:.0f} s")


def baseline(store: Path, range_bytes: int, columns: str = COLUMNS) -> tuple[float, int, dict]:
    import pyarrow as pa
    import pyarrow.compute as pc

    from pymq_ref.spark.batches import commitlog_batches, project
    from pymq_ref.spark.files import commitlog_files
    from pymq_ref.spark.ranges import plan_ranges

    files = commitlog_files(store)
    names = {f.path: f for f in files}
    start = time.perf_counter()
    count, per_topic = 0, {}
    for r in plan_ranges([(f.path, f.base) for f in files], range_bytes):
        for batch in commitlog_batches(r.path, names[r.path].name, names[r.path].base, r.start, r.end,
                                       schema=project(columns)):
            count += batch.num_rows
            if "topic" not in columns:  # the global aggregate: count + sum of record sizes
                per_topic[""] = per_topic.get("", 0) + pc.sum(batch.column("total_size")).as_py()
                continue
            grouped = pa.table({"topic": batch.column("topic"), "total_size": batch.column("total_size")}) \
                .group_by("topic").aggregate([("total_size", "sum")])
            for topic, total in zip(grouped.column("topic").to_pylist(), grouped.column("total_size_sum").to_pylist()):
                per_topic[topic] = per_topic.get(topic, 0) + total
    del pc
    return time.perf_counter() - start, count, per_topic


def spark_run(spark, store: Path, range_bytes: int, columns: str = COLUMNS) -> tuple[float, int, dict]:
    from pyspark.sql import functions as F

    start = time.perf_counter()
    frame = (spark.read.format("pymq-commitlog").option("rangeBytes", str(range_bytes)).option("columns", columns)
             .load(str(store)))
    if "topic" in columns:
        rows = frame.groupBy("topic").agg(F.count("*").alias("n"), F.sum("total_size").alias("bytes")).collect()
        answer = {r["topic"]: r["bytes"] for r in rows}
    else:  # the global aggregate: count + sum of record sizes
        rows = frame.agg(F.count("*").alias("n"), F.sum("total_size").alias("bytes")).collect()
        answer = {"": rows[0]["bytes"]}
    elapsed = time.perf_counter() - start
    return elapsed, sum(r["n"] for r in rows), answer


def tree_cpu_s(root: int) -> float:
    """User + system CPU seconds of process ``root`` and its live descendants (the JVM and its Python
    workers), from /proc; finished processes are not counted (Spark reuses its workers)."""
    tick = os.sysconf("SC_CLK_TCK")
    parent, cpu = {}, {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(pid)], cpu[int(pid)] = int(fields[1]), (int(fields[11]) + int(fields[12])) / tick
    tree, grew = {root}, True
    while grew:
        new = {p for p, pp in parent.items() if pp in tree} - tree
        tree |= new
        grew = bool(new)
    return sum(cpu.get(p, 0.0) for p in tree)


def jvm_peak_rss_mib(spark) -> float | None:
    proc = getattr(spark.sparkContext._gateway, "proc", None)
    if proc is None:
        return None
    try:
        for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--gib", type=float, default=1.05, help="store size in GiB (default 1.05)")
    args = p.parse_args()
    target = int((0.1 if args.quick else args.gib) * GIB)
    repeat = args.repeat or (1 if args.quick else 2)
    range_bytes = 128 << 20
    store, warm_store = store_path(target), store_path(1 << 20)
    build_store(store, target)
    build_store(warm_store, 1 << 20)
    data_bytes = int((store / "BENCH_COMPLETE").read_text())

    from pymq_ref.spark.session import spark_session

    t0 = time.perf_counter()
    spark = spark_session("local[2]", "bench-spark", quiet=True)
    startup = time.perf_counter() - t0
    driver_memory = spark.sparkContext.getConf().get("spark.driver.memory", "1g (Spark default)")
    warmup = spark_run(spark, warm_store, range_bytes)[0]

    jvm_pid = spark.sparkContext._gateway.proc.pid
    best_base = best_spark = None
    cpu_spark, cpu_base = [], []
    best_global_spark = best_global_base = None
    for _ in range(repeat):
        before = tree_cpu_s(jvm_pid)
        t_spark, n_spark, topics_spark = spark_run(spark, store, range_bytes)
        cpu_spark.append(tree_cpu_s(jvm_pid) - before)
        before = time.process_time()
        t_base, n_base, topics_base = baseline(store, range_bytes)
        cpu_base.append(time.process_time() - before)
        if (n_spark, topics_spark) != (n_base, topics_base):
            raise SystemExit(f"answers differ: spark {n_spark} {topics_spark} vs python {n_base} {topics_base}")
        best_spark = t_spark if best_spark is None else min(best_spark, t_spark)
        best_base = t_base if best_base is None else min(best_base, t_base)
        g_spark, gn_spark, gs_spark = spark_run(spark, store, range_bytes, GLOBAL_COLUMNS)
        g_base, gn_base, gs_base = baseline(store, range_bytes, GLOBAL_COLUMNS)
        if (gn_spark, gs_spark) != (gn_base, gs_base):
            raise SystemExit(f"answers differ: spark {gn_spark} {gs_spark} vs python {gn_base} {gs_base}")
        best_global_spark = g_spark if best_global_spark is None else min(best_global_spark, g_spark)
        best_global_base = g_base if best_global_base is None else min(best_global_base, g_base)
    jvm = jvm_peak_rss_mib(spark)
    spark.stop()
    py_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    mib = 1 << 20
    rows = [
        Row("decode >= 1 GiB, count + sum(size): local[2] vs one process", data_bytes / best_global_spark / mib,
            data_bytes / best_global_base / mib, "MiB/s", 1.3,
            f"the global aggregate (one Arrow column); spark {best_global_spark:.1f} s, one process {best_global_base:.1f} s"),
        Row("decode >= 1 GiB, count + sum(size) per topic", data_bytes / best_spark / mib,
            data_bytes / best_base / mib, "MiB/s", None,
            f"{n_base:,} records, {data_bytes / GIB:.2f} GiB in {len(list((store / 'commitlog').iterdir()))} "
            f"segment(s) of 1 GiB, {range_bytes >> 20} MiB ranges; spark {best_spark:.1f} s, one process {best_base:.1f} s"),
        Row("records per second: local[2] vs one process", n_base / best_spark, n_base / best_base, "rec/s", None),
        Row("records per CPU second (JVM + Python workers)", n_base / min(cpu_spark), n_base / min(cpu_base),
            "rec/s", None, "what two free cores can give at most: 2 x this ratio (the others' load does not "
            f"change it); CPU us/record: spark {min(cpu_spark) / n_base * 1e6:.2f}, one process "
            f"{min(cpu_base) / n_base * 1e6:.2f}"),
    ]
    params = {"store_bytes": data_bytes, "records": n_base, "range_bytes": range_bytes, "repeat": repeat,
              "spark_startup_s": round(startup, 1),
              "spark_warmup_query_s": round(warmup, 1), "spark.driver.memory": driver_memory,
              "driver_jvm_peak_rss_mib": None if jvm is None else round(jvm), "bench_process_peak_rss_mib (driver + baseline)": round(py_peak),
              "cpus": os.cpu_count(),
              "spark_cpu_s": [round(c, 2) for c in cpu_spark], "one_process_cpu_s": [round(c, 2) for c in cpu_base],
              "load_average_at_end": os.getloadavg()}
    code = report("spark", f"Spark data source decode, {data_bytes / GIB:.2f} GiB store (best of {repeat})", rows, params)
    print(f"spark start-up {startup:.1f} s and first query on 1 MiB {warmup:.1f} s (not counted); spark.driver.memory = {driver_memory}; "
          f"driver JVM peak RSS {jvm if jvm is None else round(jvm)} MiB; this process (Spark driver + the baseline) peak RSS {py_peak:.0f} MiB")
    return code


if __name__ == "__main__":
    sys.exit(main())
