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
    def __init__(self, path: str, name: str, base: int | None, start: int, end: int):
        super().__init__((name, start, end))
        self.path, self.name, self.base, self.start, self.end = path, name, base, start, end


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
        ranges = plan_ranges([(f.path, f.base or 0) for f in files], self.range_bytes)
        return [CommitLogPartition(r.path, bases[r.path].name, bases[r.path].base, r.start, r.end) for r in ranges]

    def read(self, partition: CommitLogPartition):
        yield from commitlog_batches(partition.path, partition.name, partition.base, partition.start, partition.end,
                                     records=self.records, body=self.body, schema=project(self.columns))


class ConsumeQueuePartition(InputPartition):
    def __init__(self, path: str, name: str, base: int, topic: str, queue_id: int, start: int, end: int):
        super().__init__((name, start, end))
        self.path, self.name, self.base, self.topic, self.queue_id = path, name, base, topic, queue_id
        self.start, self.end = start, end


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
                parts.append(ConsumeQueuePartition(f.path, f.name, f.base, f.topic, f.queue_id, start,
                                                   min(size, start + self.range_bytes)))
        return parts or [ConsumeQueuePartition("", "", 0, "", 0, 0, 0)]

    def read(self, partition: ConsumeQueuePartition):
        if partition.path:
            yield from consumequeue_batches(partition.path, partition.name, partition.base, partition.topic,
                                            partition.queue_id, partition.start, partition.end)


class IndexPartition(InputPartition):
    def __init__(self, path: str, name: str, hash_slots: int, first: int, last: int):
        super().__init__((name, first, last))
        self.path, self.name, self.hash_slots, self.first, self.last = path, name, hash_slots, first, last


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
        from ..tools.segments import open_readonly
        from ..tools.store_files import index_geometry

        parts = []
        for f in index_files(self.path):
            with open_readonly(f.path) as buf:  # the geometry inference reads a few entries, not the file
                try:
                    slots, num = index_geometry(buf, self.hash_slots, self.index_num)
                except ValueError as exc:
                    raise SparkInputError(f"{f.name}: {exc} (pass .option('hashSlots', N) and "
                                          f".option('indexNum', M))") from None
            for first in range(1, num, self.ENTRIES_PER_PARTITION):
                parts.append(IndexPartition(f.path, f.name, slots, first, min(num, first + self.ENTRIES_PER_PARTITION)))
        return parts or [IndexPartition("", "", 0, 0, 0)]

    def read(self, partition: IndexPartition):
        if partition.path:
            yield from index_batches(partition.path, partition.name, partition.hash_slots, partition.first,
                                     partition.last)


def register(spark) -> None:
    """Make the three formats known to ``spark`` (idempotent)."""
    for source in (CommitLogDataSource, ConsumeQueueDataSource, IndexDataSource):
        spark.dataSource.register(source)
