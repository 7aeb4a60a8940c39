"""Spark 4 Python data sources for RocketMQ store files: ``pymq-commitlog``, ``pymq-consumequeue``, ``pymq-index``.

Usage (after :func:`register`, which :func:`pymq_ref.spark.session.spark_session` calls)::

    spark.read.format("pymq-commitlog").load("path/to/store")          # or commitlog/, or one segment
    spark.read.format("pymq-commitlog").option("records", "all").load(store)   # + blank and gap rows
    spark.read.format("pymq-consumequeue").load(store)                 # or consumequeue/T/Q
    spark.read.format("pymq-index").load(store)                        # or index/

Options (all optional): ``rangeBytes`` (CommitLog/ConsumeQueue bytes per partition, default
64 MiB), ``records`` (``messages`` default, or ``all``), ``body`` (``true`` default; ``false``
leaves the body column null, which makes scans that do not need it faster), ``hashSlots`` /
``indexNum`` (IndexFile geometry when it cannot be inferred from the file size), ``columns``
(CommitLog: a comma-separated subset of the columns; the Python data source API does not prune
columns by itself, so a scan that needs three columns should say so — decoding is the same,
but only those Arrow columns are built and shipped to the JVM).

Planning (``partitions()``) only lists and ``stat``s files; the workers map their byte range
read-only and decode it (:mod:`pymq_ref.spark.batches`). Nothing here writes a store file.
"""

from __future__ import annotations

import os

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from .batches import (CONSUMEQUEUE_SCHEMA, INDEX_SCHEMA, commitlog_batches, consumequeue_batches, index_batches,
                      project, spark_ddl)
from ..formats.index_file import INDEX_HEADER_SIZE
from .files import SparkInputError, commitlog_files, consumequeue_files, index_files
from .ranges import DEFAULT_RANGE_BYTES, plan_ranges

DATA_SOURCE_NAMES = ("pymq-commitlog", "pymq-consumequeue", "pymq-index")


def _path(options) -> str:
    path = options.get("path")
    if not path:
        raise SparkInputError("no path: use spark.read.format(...).load('path/to/store')")
    return path


def _lower(options) -> dict:
    return {k.lower(): v for k, v in dict(options).items()}


def _int_option(options, name: str, default: int | None) -> int | None:
    value = options.get(name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise SparkInputError(f"option {name}: expected an integer, got {value!r}") from None
    if number <= 0:
        raise SparkInputError(f"option {name}: expected a positive integer, got {number}")
    return number


class CommitLogPartition(InputPartition):
    """Byte ranges ``(path, name, base, start, end)`` of one or more segments: a range of a large
    segment, or several small segments together (up to ``rangeBytes``), so that a store of
    thousands of small files is not thousands of tasks."""

    def __init__(self, parts: list[tuple]):
        super().__init__(tuple((name, start, end) for _p, name, _b, start, end in parts))
        self.parts = parts


def group(items: list, size, limit: int) -> list[list]:
    """Consecutive ``items`` packed into groups whose ``size(item)`` add up to at most ``limit``
    (an item larger than ``limit`` alone)."""
    groups, current, total = [], [], 0
    for item in items:
        n = size(item)
        if current and total + n > limit:
            groups.append(current)
            current, total = [], 0
        current.append(item)
        total += n
    if current:
        groups.append(current)
    return groups


class CommitLogDataSource(DataSource):
    """One row per message record (``records=all``: also blanks and gaps) of every CommitLog segment."""

    @classmethod
    def name(cls) -> str:
        return "pymq-commitlog"

    def schema(self):
        try:
            return spark_ddl(project(_lower(self.options).get("columns")))
        except ValueError as exc:
            raise SparkInputError(f"option columns: {exc}") from None

    def reader(self, schema):
        return CommitLogReader(dict(self.options))


class CommitLogReader(DataSourceReader):
    def __init__(self, options: dict):
        options = {k.lower(): v for k, v in options.items()}
        self.path = _path(options)
        self.range_bytes = _int_option(options, "rangebytes", DEFAULT_RANGE_BYTES)
        self.records = options.get("records", "messages").lower()
        if self.records not in ("messages", "all"):
            raise SparkInputError(f"option records: expected 'messages' or 'all', got {self.records!r}")
        self.body = options.get("body", "true").lower() not in ("false", "0", "no")
        self.columns = options.get("columns")

    def partitions(self):
        files = commitlog_files(self.path)
        bases = {f.path: f for f in files}
        ranges = [r for r in plan_ranges([(f.path, f.base or 0) for f in files], self.range_bytes) if r.end > r.start]
        return [CommitLogPartition([(r.path, bases[r.path].name, bases[r.path].base, r.start, r.end) for r in g])
                for g in group(ranges, lambda r: r.end - r.start, self.range_bytes)] or [CommitLogPartition([])]

    def read(self, partition: CommitLogPartition):
        schema = project(self.columns)
        for path, name, base, start, end in partition.parts:
            yield from commitlog_batches(path, name, base, start, end, records=self.records, body=self.body,
                                         schema=schema)


class ConsumeQueuePartition(InputPartition):
    """Ranges ``(path, name, base, topic, queue_id, start, end)`` of one or more ConsumeQueue files."""

    def __init__(self, parts: list[tuple]):
        super().__init__(tuple((p[1], p[5], p[6]) for p in parts))
        self.parts = parts


class ConsumeQueueDataSource(DataSource):
    """One row per written (not all-zero) ConsumeQueue unit; ``is_blank`` marks filler units."""

    @classmethod
    def name(cls) -> str:
        return "pymq-consumequeue"

    def schema(self):
        return spark_ddl(CONSUMEQUEUE_SCHEMA)

    def reader(self, schema):
        return ConsumeQueueReader(dict(self.options))


class ConsumeQueueReader(DataSourceReader):
    def __init__(self, options: dict):
        options = {k.lower(): v for k, v in options.items()}
        self.path = _path(options)
        step = _int_option(options, "rangebytes", DEFAULT_RANGE_BYTES)
        self.range_bytes = max(20, step - step % 20)

    def partitions(self):
        parts = []
        for f in consumequeue_files(self.path):
            size = os.stat(f.path).st_size
            for start in range(0, size, self.range_bytes):
                parts.append((f.path, f.name, f.base, f.topic, f.queue_id, start, min(size, start + self.range_bytes)))
        return ([ConsumeQueuePartition(g) for g in group(parts, lambda p: p[6] - p[5], self.range_bytes)]
                or [ConsumeQueuePartition([])])

    def read(self, partition: ConsumeQueuePartition):
        for part in partition.parts:
            yield from consumequeue_batches(*part)


class IndexPartition(InputPartition):
    """Entry ranges ``(path, name, hash_slots, first, last)`` of one or more IndexFiles."""

    def __init__(self, parts: list[tuple]):
        super().__init__(tuple((p[1], p[3], p[4]) for p in parts))
        self.parts = parts


class IndexDataSource(DataSource):
    """One row per written (not all-zero) IndexFile entry, with its file's header values."""

    @classmethod
    def name(cls) -> str:
        return "pymq-index"

    def schema(self):
        return spark_ddl(INDEX_SCHEMA)

    def reader(self, schema):
        return IndexReader(dict(self.options))


class IndexReader(DataSourceReader):
    ENTRIES_PER_PARTITION = 4_000_000  # 80 MB of entries

    def __init__(self, options: dict):
        options = {k.lower(): v for k, v in options.items()}
        self.path = _path(options)
        self.hash_slots = _int_option(options, "hashslots", None)
        self.index_num = _int_option(options, "indexnum", None)

    def partitions(self):
        from ..formats.index_file import decode_index_header
        from ..tools.segments import open_readonly
        from ..tools.store_files import index_geometry

        # left empty by a power loss (never synced): no entries, no geometry
        files = [f for f in index_files(self.path) if os.path.getsize(f.path) > INDEX_HEADER_SIZE]
        written = {}
        for f in files:
            with open_readonly(f.path) as buf:
                written[f.path] = decode_index_header(buf, with_spans=False).effective_index_count > 1
        geometry: dict[int, tuple[int, int]] = {}  # per file size, inferred from a file with entries first
        for f in sorted(files, key=lambda f: not written[f.path]):
            size = os.path.getsize(f.path)
            if size in geometry:
                continue
            with open_readonly(f.path) as buf:  # the geometry inference reads a few entries, not the file
                try:
                    geometry[size] = index_geometry(buf, self.hash_slots, self.index_num)
                except ValueError as exc:
                    raise SparkInputError(f"{f.name}: {exc} (pass .option('hashSlots', N) and "
                                          f".option('indexNum', M))") from None
        parts = []
        for f in files:
            slots, num = geometry[os.path.getsize(f.path)]
            for first in range(1, num, self.ENTRIES_PER_PARTITION):
                parts.append((f.path, f.name, slots, first, min(num, first + self.ENTRIES_PER_PARTITION)))
        return ([IndexPartition(g) for g in group(parts, lambda p: p[4] - p[3], self.ENTRIES_PER_PARTITION)]
                or [IndexPartition([])])

    def read(self, partition: IndexPartition):
        for part in partition.parts:
            yield from index_batches(*part)


def register(spark) -> None:
    """Make the three formats known to ``spark`` (idempotent)."""
    for source in (CommitLogDataSource, ConsumeQueueDataSource, IndexDataSource):
        spark.dataSource.register(source)
