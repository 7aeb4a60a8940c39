"""``pymq spark analyze|verify|export``: the Spark jobs from the command line.

Argument parsing and printing only; the jobs live in :mod:`.analytics` and :mod:`.verify`.
``--master`` defaults to ``local[*]`` (any Spark master URL works: ``spark://…``, ``yarn``,
``k8s://…``; on a cluster the package is shipped to the executors as a zip, see chapter 14). Progress goes
to stderr (one line per stage), results to stdout. Missing Java or PySpark is a one-line error
(exit 2), not a JVM stack trace. Exit status: 0 ok, 1 verify found damage, 2 usage/input errors.
"""

from __future__ import annotations

import argparse
import sys
import time

DATASETS = ("commitlog", "consumequeue", "index", "traffic", "growth", "delay", "transactions", "retry", "lag",
            "verify-consumequeue", "verify-index")


def add_spark_subcommand(commands) -> None:
    """Register ``spark`` and its subcommands on the ``pymq`` subparsers object."""
    spark = commands.add_parser("spark", help="Spark jobs over a store: analyze, verify, export",
                                description="Run the pymq Spark jobs over a store directory (read-only). Needs "
                                            "PySpark 4 and Java 17+.")
    sub = spark.add_subparsers(dest="spark_command", required=True, metavar="SPARK_COMMAND")

    def common(p):
        p.add_argument("store", metavar="STORE", help="store directory (the one holding commitlog/)")
        p.add_argument("--master", default="local[*]", help="Spark master URL (default: local[*])")
        p.add_argument("--range-bytes", type=int, default=None, metavar="N",
                       help="CommitLog bytes per partition (default 64 MiB)")
        p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")

    analyze = sub.add_parser("analyze", help="run one analysis and print its table")
    common(analyze)
    analyze.add_argument("analysis", choices=("traffic", "growth", "delay", "transactions", "retry", "lag"))
    analyze.add_argument("--bucket-ms", type=int, default=3_600_000, help="traffic time bucket (default 1 hour)")
    analyze.add_argument("--limit", type=int, default=50, help="rows to print (default 50)")
    analyze.set_defaults(run=_spark_errors(_run_analyze))

    verify = sub.add_parser("verify", help="rebuild ConsumeQueues and the index from the CommitLog and diff them")
    common(verify)
    verify.add_argument("--no-index", action="store_true", help="check the ConsumeQueues only")
    verify.add_argument("--hash-slots", type=int, help="IndexFile maxHashSlotNum, when it cannot be inferred")
    verify.add_argument("--index-num", type=int, help="IndexFile maxIndexNum, when it cannot be inferred")
    verify.add_argument("--limit", type=int, default=50, help="findings to print per file type (default 50)")
    verify.set_defaults(run=_spark_errors(_run_verify))

    export = sub.add_parser("export", help="write store DataFrames or analyses to Parquet")
    common(export)
    export.add_argument("--out", required=True, help="output directory (one Parquet folder per dataset)")
    export.add_argument("--what", nargs="+", choices=DATASETS, default=["commitlog"], help="datasets to write")
    export.set_defaults(run=_spark_errors(_run_export))


def _spark_errors(run):
    """Turn a Spark-side failure (e.g. a SparkInputError raised in the data source planner) into one line."""

    def wrapper(args) -> int:
        try:
            return run(args)
        except Exception as exc:
            try:
                from pyspark.errors import PySparkException
            except ImportError:
                raise exc from None
            if not isinstance(exc, PySparkException):
                raise
            lines = [line for line in str(exc).splitlines() if "Error:" in line or "Exception:" in line]
            print(f"pymq spark: error: {(lines[-1] if lines else str(exc).splitlines()[0]).strip()}", file=sys.stderr)
            return 2

    return wrapper


class _Progress:
    def __init__(self, quiet: bool):
        self.quiet, self.start = quiet, time.monotonic()

    def __call__(self, text: str) -> None:
        if not self.quiet:
            print(f"[{time.monotonic() - self.start:6.1f}s] {text}", file=sys.stderr, flush=True)


def _session(args, progress):
    from .files import commitlog_files
    from .session import check_spark_available, spark_session

    commitlog_files(args.store)  # a wrong path fails here, in a line, before the JVM starts
    check_spark_available()

    progress(f"starting Spark ({args.master})")
    return spark_session(args.master, "pymq-spark", quiet=True)


def _commitlog(spark, args, body: bool = True, columns: str | None = None):
    reader = spark.read.format("pymq-commitlog").option("body", str(body).lower())
    if columns:
        reader = reader.option("columns", columns)
    if args.range_bytes:
        reader = reader.option("rangeBytes", str(args.range_bytes))
    return reader.load(args.store)


def _print(df, limit: int, sort: list[str]) -> None:
    import pandas as pd

    collected = (df.orderBy(*sort) if sort else df).limit(limit).collect()
    table = pd.DataFrame([r.asDict() for r in collected], columns=df.columns, dtype=object)
    print(table.to_string(index=False) if len(table) else "(no rows)")


_SORT = {"traffic": ["bucket_start_ms", "topic", "queue_id"], "growth": ["topic"], "delay": ["level", "queue_offset"],
         "transactions": ["half_phy_offset"], "retry": ["group", "stage", "reconsume_times"],
         "lag": ["group", "topic", "queue_id"]}


def _run_analyze(args) -> int:
    from .analytics import run_analysis

    progress = _Progress(args.quiet)
    spark = _session(args, progress)
    progress(f"analysis {args.analysis} over {args.store}")
    df = run_analysis(spark, args.store, args.analysis, bucket_ms=args.bucket_ms)
    _print(df, args.limit, _SORT[args.analysis])
    progress("done")
    return 0


def _run_verify(args) -> int:
    from .verify import VERIFY_COLUMNS, verify_store

    progress = _Progress(args.quiet)
    spark = _session(args, progress)
    progress(f"decoding the CommitLog of {args.store} and deriving ConsumeQueue units and index keys")
    options = {}
    if args.hash_slots:
        options["hashSlots"] = str(args.hash_slots)
    if args.index_num:
        options["indexNum"] = str(args.index_num)
    result = verify_store(spark, args.store, index=not args.no_index,
                          commitlog=_commitlog(spark, args, columns=VERIFY_COLUMNS),
                          index_options=options)
    progress("diff done")
    print(f"consume queues: {result.expected_units} units derived; "
          + (", ".join(f"{k} {v}" for k, v in sorted(result.consume_queue_counts.items())) or "all match"))
    if result.consume_queue_counts:
        _print(result.consume_queue, args.limit, ["topic", "queue_id", "queue_offset"])
    if not args.no_index:
        print(f"index: {result.expected_keys} keys derived; "
              + (", ".join(f"{k} {v}" for k, v in sorted(result.index_counts.items())) or "all match"))
        if result.index_counts:
            _print(result.index, args.limit, ["phy_offset", "key_hash"])
    return 0 if result.ok else 1


def _run_export(args) -> int:
    from pathlib import Path

    from .analytics import run_analysis
    from .verify import VERIFY_COLUMNS, verify_store

    progress = _Progress(args.quiet)
    spark = _session(args, progress)
    out = Path(args.out)
    verified = None
    for name in args.what:
        progress(f"writing {name}")
        if name == "commitlog":
            df = _commitlog(spark, args)
        elif name in ("consumequeue", "index"):
            df = spark.read.format(f"pymq-{name}").load(args.store)
        elif name.startswith("verify-"):
            verified = verified or verify_store(spark, args.store,
                                                commitlog=_commitlog(spark, args, columns=VERIFY_COLUMNS))
            df = verified.consume_queue if name == "verify-consumequeue" else verified.index
        else:
            df = run_analysis(spark, args.store, name)
        df.write.mode("overwrite").parquet(str(out / name))
        print(f"{name}: {out / name}")
    progress("done")
    return 0
