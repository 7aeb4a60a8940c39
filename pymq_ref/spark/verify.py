"""Rebuild-and-verify on Spark: derive every ConsumeQueue unit and IndexFile entry from the CommitLog
DataFrame and diff them against the files on disk (the distributed twin of ``pymq doctor``).

Derived files are functions of the log (``store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java``,
``ReputMessageService``). The derivation reuses the
store's own dispatch code — :func:`pymq_ref.store.dispatch.dispatch_tags_code` (tagsCode, the
delivery time on ``SCHEDULE_TOPIC_XXXX``) and :func:`pymq_ref.formats.hashing.index_key_hash`
over ``topic#UNIQ_KEY`` and ``topic#<each KEYS token>`` — inside ``mapInArrow``, so Spark only
joins. Which records get what:

* a ConsumeQueue unit ``(phy_offset, size, tags_code)`` at ``(topic, queue_id, queue_offset)``
  for transaction types NOT and COMMIT (``CommitLogDispatcherBuildConsumeQueue``);
* index entries for every type but ROLLBACK (``IndexService.buildIndex``).

Findings (one row each): ``missing`` (derived, not on disk), ``extra`` (on disk, derived from
no record), ``mismatched`` (same key, different values; both sides shown), ``delay_tags_hash``
(a SCHEDULE_TOPIC_XXXX unit holding the TAGS hash instead of the delivery time: what 4.9.4's
abnormal recovery writes, before its delay levels load — the doctor's warning) and ``expired``
(points below the CommitLog's first offset: retention deleted the record first — a note, not
an error). Read-only: nothing here writes a store file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..formats.hashing import index_key_hash
from ..store.dispatch import SCHEDULE_TOPIC, dispatch_tags_code
from ..store.delay import DEFAULT_MESSAGE_DELAY_LEVEL, parse_delay_level

FINDING_KINDS = ("missing", "extra", "mismatched", "delay_tags_hash", "expired")
#: The CommitLog columns the derivations read (pass as the ``columns`` option to load less).
VERIFY_COLUMNS = "type,topic,queue_id,queue_offset,phy_offset,total_size,sys_flag,store_timestamp,properties,uniq_key,keys"
_CQ_UNITS = pa.schema([("topic", pa.string()), ("queue_id", pa.int32()), ("queue_offset", pa.int64()),
                       ("phy_offset", pa.int64()), ("size", pa.int32()), ("tags_code", pa.int64()),
                       ("recovery_tags_code", pa.int64())])  # as 4.9.4's abnormal recovery writes it
_INDEX_KEYS = pa.schema([("key", pa.string()), ("key_hash", pa.int32()), ("phy_offset", pa.int64()),
                         ("store_timestamp", pa.int64())])


def load_commitlog(spark: SparkSession, store: str, **options) -> DataFrame:
    """The message rows of a store's CommitLog (``options`` as in :mod:`pymq_ref.spark.datasource`)."""
    reader = spark.read.format("pymq-commitlog")
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return reader.load(str(store))


def expected_consume_queue_units(commitlog: DataFrame, delay_levels: str = DEFAULT_MESSAGE_DELAY_LEVEL) -> DataFrame:
    """The ConsumeQueue unit the dispatcher writes for each record (NOT and COMMIT types only)."""
    table = parse_delay_level(delay_levels)

    def derive(batches):
        for batch in batches:
            d = batch.to_pydict()
            rows = {name: [] for name in _CQ_UNITS.names}
            for topic, qid, qoff, phy, size, sys_flag, ts, props in zip(
                    d["topic"], d["queue_id"], d["queue_offset"], d["phy_offset"], d["total_size"], d["sys_flag"],
                    d["store_timestamp"], d["properties"]):
                if sys_flag & 0xC not in (0x0, 0x8):
                    continue
                rows["topic"].append(topic)
                rows["queue_id"].append(qid)
                rows["queue_offset"].append(qoff)
                rows["phy_offset"].append(phy)
                rows["size"].append(size)
                props = dict(props)
                code = dispatch_tags_code(topic, props, ts, table)
                rows["tags_code"].append(code)
                # only SCHEDULE_TOPIC_XXXX units depend on the delay table
                rows["recovery_tags_code"].append(dispatch_tags_code(topic, props, ts, {}) if topic == SCHEDULE_TOPIC
                                                  else code)
            yield pa.RecordBatch.from_pydict(rows, schema=_CQ_UNITS)

    cols = ["topic", "queue_id", "queue_offset", "phy_offset", "total_size", "sys_flag", "store_timestamp",
            "properties"]
    return commitlog.where(F.col("type") == "message").select(*cols).mapInArrow(derive, _ddl(_CQ_UNITS))


def expected_index_entries(commitlog: DataFrame) -> DataFrame:
    """One row per index key the dispatcher puts: ``topic#UNIQ_KEY`` then ``topic#KEY`` for each KEYS token."""

    def derive(batches):
        for batch in batches:
            d = batch.to_pydict()
            rows = {name: [] for name in _INDEX_KEYS.names}
            for topic, phy, sys_flag, ts, uniq, keys in zip(d["topic"], d["phy_offset"], d["sys_flag"],
                                                             d["store_timestamp"], d["uniq_key"], d["keys"]):
                if sys_flag & 0xC == 0xC:  # rollback: no index
                    continue
                for key in ([uniq] if uniq is not None else []) + list(keys or ()):
                    full = f"{topic}#{key}"
                    rows["key"].append(full)
                    rows["key_hash"].append(index_key_hash(full))
                    rows["phy_offset"].append(phy)
                    rows["store_timestamp"].append(ts)
            yield pa.RecordBatch.from_pydict(rows, schema=_INDEX_KEYS)

    cols = ["topic", "phy_offset", "sys_flag", "store_timestamp", "uniq_key", "keys"]
    return commitlog.where(F.col("type") == "message").select(*cols).mapInArrow(derive, _ddl(_INDEX_KEYS))


def _ddl(schema: pa.Schema) -> str:
    names = {pa.string(): "string", pa.int64(): "bigint", pa.int32(): "int"}
    return ", ".join(f"{f.name} {names[f.type]}" for f in schema)


def diff_consume_queues(expected: DataFrame, on_disk: DataFrame, min_phy_offset: int | None) -> DataFrame:
    """Findings per unit: kind, topic, queue_id, queue_offset, expected_* and found_* values, file, position."""
    e = expected.select("topic", "queue_id", "queue_offset", F.col("phy_offset").alias("expected_phy_offset"),
                        F.col("size").alias("expected_size"), F.col("tags_code").alias("expected_tags_code"),
                        "recovery_tags_code")
    d = on_disk.where(~F.col("is_blank")).select(
        "topic", "queue_id", "queue_offset", F.col("phy_offset").alias("found_phy_offset"),
        F.col("size").alias("found_size"), F.col("tags_code").alias("found_tags_code"), "file", "position")
    j = e.join(d, ["topic", "queue_id", "queue_offset"], "full_outer")
    below = F.lit(False) if min_phy_offset is None else F.col("found_phy_offset") < F.lit(min_phy_offset)
    same_place = ((F.col("expected_phy_offset") == F.col("found_phy_offset"))
                  & (F.col("expected_size") == F.col("found_size")))
    kind = (F.when(F.col("found_phy_offset").isNull(), "missing")
            .when(F.col("expected_phy_offset").isNull() & below, "expired")
            .when(F.col("expected_phy_offset").isNull(), "extra")
            .when(same_place & (F.col("expected_tags_code") == F.col("found_tags_code")), None)
            .when(same_place & (F.col("recovery_tags_code") == F.col("found_tags_code")), "delay_tags_hash")
            .otherwise("mismatched"))
    return (j.withColumn("kind", kind).where(F.col("kind").isNotNull())
            .select("kind", "topic", "queue_id", "queue_offset", "expected_phy_offset", "found_phy_offset",
                    "expected_size", "found_size", "expected_tags_code", "found_tags_code", "file", "position"))


def diff_index(expected: DataFrame, on_disk: DataFrame, min_phy_offset: int | None) -> DataFrame:
    """Findings per entry: an expected ``(key_hash, phy_offset)`` with no entry on disk is missing; an entry
    no record explains is extra; an entry whose time_diff disagrees with its record's store time is mismatched.
    Duplicate entries of a real key (re-dispatch after a crash) are fine."""
    e = expected.select("key", "key_hash", "phy_offset", "store_timestamp")
    d = on_disk.select("file", "entry_number", "key_hash", "phy_offset", "time_diff", "begin_timestamp")
    e_keys = e.select("key_hash", "phy_offset", "store_timestamp").dropDuplicates(["key_hash", "phy_offset"])
    missing = (e.join(d.select("key_hash", "phy_offset").distinct(), ["key_hash", "phy_offset"], "left_anti")
               .select(F.lit("missing").alias("kind"), "key", "key_hash", "phy_offset",
                       F.lit(None).cast("string").alias("file"), F.lit(None).cast("int").alias("entry_number"),
                       F.lit(None).cast("int").alias("expected_time_diff"), F.lit(None).cast("int").alias("found_time_diff")))
    joined = d.join(e_keys, ["key_hash", "phy_offset"], "left")
    expected_diff = F.when(F.col("begin_timestamp") <= 0, F.lit(0)).otherwise(
        F.greatest(F.lit(0), F.least(F.lit(2**31 - 1), F.expr(
            "CAST(CASE WHEN store_timestamp >= begin_timestamp THEN (store_timestamp - begin_timestamp) DIV 1000 "
            "ELSE -((begin_timestamp - store_timestamp) DIV 1000) END AS BIGINT)")))).cast("int")
    below = F.lit(False) if min_phy_offset is None else F.col("phy_offset") < F.lit(min_phy_offset)
    kind = (F.when(F.col("store_timestamp").isNull() & below, "expired")
            .when(F.col("store_timestamp").isNull(), "extra")
            .when(expected_diff != F.col("time_diff"), "mismatched"))
    others = (joined.withColumn("kind", kind).where(F.col("kind").isNotNull())
              .select("kind", F.lit(None).cast("string").alias("key"), "key_hash", "phy_offset", "file", "entry_number",
                      F.when(F.col("store_timestamp").isNotNull(), expected_diff).alias("expected_time_diff"),
                      F.col("time_diff").alias("found_time_diff")))
    return missing.unionByName(others)


@dataclass
class VerifyResult:
    """Counts per kind for each derived file type, and the finding DataFrames (sorted when collected)."""

    consume_queue: DataFrame
    index: DataFrame
    consume_queue_counts: dict[str, int]
    index_counts: dict[str, int]
    expected_units: int
    expected_keys: int

    @property
    def ok(self) -> bool:
        bad = ("missing", "extra", "mismatched", "delay_tags_hash")
        return not any(self.consume_queue_counts.get(k) or self.index_counts.get(k) for k in bad)


def verify_store(spark: SparkSession, store: str, *, delay_levels: str = DEFAULT_MESSAGE_DELAY_LEVEL,
                 index: bool = True, commitlog: DataFrame | None = None,
                 index_options: Mapping[str, str] | None = None) -> VerifyResult:
    """Derive ConsumeQueues (and, if ``index``, IndexFile entries) from the CommitLog and diff them with disk."""
    cl = commitlog if commitlog is not None else load_commitlog(spark, store, columns=VERIFY_COLUMNS)
    cl = cl.cache()
    min_phy = cl.agg(F.min("phy_offset")).first()[0]
    units = expected_consume_queue_units(cl, delay_levels).cache()
    disk_units = spark.read.format("pymq-consumequeue").load(str(store))
    cq = diff_consume_queues(units, disk_units, min_phy).cache()
    cq_counts = {row["kind"]: row["count"] for row in cq.groupBy("kind").count().collect()}
    expected_units = units.count()
    if index:
        keys = expected_index_entries(cl).cache()
        reader = spark.read.format("pymq-index")
        for key, value in (index_options or {}).items():
            reader = reader.option(key, value)
        ix = diff_index(keys, reader.load(str(store)), min_phy).cache()
        ix_counts = {row["kind"]: row["count"] for row in ix.groupBy("kind").count().collect()}
        expected_keys = keys.count()
    else:
        ix, ix_counts, expected_keys = spark.createDataFrame([], "kind string"), {}, 0
    return VerifyResult(cq, ix, cq_counts, ix_counts, expected_units, expected_keys)
