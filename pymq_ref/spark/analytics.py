"""Store analytics on Spark: each question a function from the store's DataFrames to a DataFrame.

Everything is derived from the store bytes with RocketMQ's own conventions, so the answers hold
for any 4.x store (ours or a real broker's), with or without the broker services that wrote it:

* traffic — messages and bytes per topic/queue per time bucket of STORETIMESTAMP;
* delay (``ScheduleMessageService``) — records parked in ``SCHEDULE_TOPIC_XXXX`` (queue = level − 1,
  ``REAL_TOPIC``/``REAL_QID``, due at store time + the level's delay, which is also the CQ
  tagsCode); delivered when a record of the real topic carries the same ``UNIQ_KEY`` and the
  ``DELAY`` property (``messageTimeup`` copies both), else waiting; ``delayOffset.json``
  (next CQ offset per level) shown next to it when present;
* transactions (``TransactionalMessageServiceImpl``) — per transaction (``UNIQ_KEY``, shared by the
  half message and its put-back copies): committed (a COMMIT record whose
  PREPAREDTRANSACTIONOFFSET is one of the half records), rolled back (an op message, tag
  ``d``, whose body names a half queue offset, and no commit), discarded (a copy in
  ``TRANS_CHECK_MAX_TIME_TOPIC``), else pending;
* retry/DLQ (``SendMessageProcessor.asyncConsumerSendMsgBack``) — per consumer group: messages that entered
  ``%RETRY%G``
  (directly, or parked in the schedule topic with ``REAL_TOPIC=%RETRY%G``) by reconsume
  count, and those that reached ``%DLQ%G``, counted by ``ORIGIN_MESSAGE_ID``;
* consumer lag — ``consumerOffset.json`` (``topic@group`` → queue → next offset) against the
  ConsumeQueues: max offset, lag in messages and in bytes (sizes of the unconsumed units).

Functions take DataFrames (``commitlog`` = the ``pymq-commitlog`` rows) so that callers choose
how to load and cache; :func:`load_store` gives the usual pair. Pure Spark: no file writes.
"""

from __future__ import annotations

from typing import Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..store.config_files import config_path, read_config_file
from ..store.delay import DEFAULT_MESSAGE_DELAY_LEVEL, parse_delay_level

SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"
HALF_TOPIC = "RMQ_SYS_TRANS_HALF_TOPIC"
OP_TOPIC = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
CHECK_MAX_TOPIC = "TRANS_CHECK_MAX_TIME_TOPIC"
RETRY_PREFIX = "%RETRY%"
DLQ_PREFIX = "%DLQ%"


def load_store(spark: SparkSession, store: str, *, body: bool = True) -> tuple[DataFrame, DataFrame]:
    """``(commitlog messages, consume queue units)`` of a store directory."""
    cl = spark.read.format("pymq-commitlog").option("body", str(body).lower()).load(str(store))
    cq = spark.read.format("pymq-consumequeue").load(str(store))
    return cl, cq


def _prop(name: str):
    return F.col("properties").getItem(name)


# --------------------------------------------------------------------------- traffic

def traffic(commitlog: DataFrame, bucket_ms: int = 3_600_000, *, by_queue: bool = True) -> DataFrame:
    """Messages and bytes (TOTALSIZE) per topic (and queue) per ``bucket_ms`` of store time."""
    keys = ["topic", "queue_id"] if by_queue else ["topic"]
    start = F.col("store_timestamp") - F.pmod(F.col("store_timestamp"), F.lit(bucket_ms))
    return (commitlog.withColumn("bucket_start_ms", start)
            .groupBy("bucket_start_ms", *keys)
            .agg(F.count("*").alias("messages"), F.sum("total_size").alias("bytes"))
            .withColumn("bucket_start", F.timestamp_millis("bucket_start_ms"))
            .select("bucket_start", "bucket_start_ms", *keys, "messages", "bytes"))


def topic_growth(commitlog: DataFrame) -> DataFrame:
    """Per topic: messages, bytes, first/last store time and bytes per second over that span."""
    return (commitlog.groupBy("topic")
            .agg(F.count("*").alias("messages"), F.sum("total_size").alias("bytes"),
                 F.min("store_timestamp").alias("first_store_timestamp"),
                 F.max("store_timestamp").alias("last_store_timestamp"))
            .withColumn("bytes_per_second", F.col("bytes") * 1000.0 / F.greatest(
                F.lit(1), F.col("last_store_timestamp") - F.col("first_store_timestamp"))))


# --------------------------------------------------------------------------- delay

def read_offset_table(store: str, name: str) -> dict:
    """``offsetTable`` of ``config/<name>`` (with the .bak fallback), ``{}`` when absent."""
    obj = read_config_file(config_path(str(store), name))
    return dict((obj or {}).get("offsetTable") or {})


def delayed_messages(commitlog: DataFrame, delay_levels: str = DEFAULT_MESSAGE_DELAY_LEVEL,
                     delay_offsets: Mapping[int, int] | None = None) -> DataFrame:
    """One row per parked record: level, due time, real topic/queue, and ``status`` waiting|delivered.

    ``delay_offsets`` (``delayOffset.json``: level → next CQ offset to deliver) adds
    ``before_delay_offset`` (the schedule service has moved past this unit).
    """
    table = parse_delay_level(delay_levels)
    spark = commitlog.sparkSession
    levels = spark.createDataFrame([(lvl, ms) for lvl, ms in sorted(table.items())], "level int, delay_ms bigint")
    parked = (commitlog.where(F.col("topic") == SCHEDULE_TOPIC)
              .select(F.col("queue_offset"), F.col("phy_offset"), F.col("store_timestamp"), F.col("uniq_key"),
                      (F.col("queue_id") + 1).alias("level"), _prop("REAL_TOPIC").alias("real_topic"),
                      _prop("REAL_QID").cast("int").alias("real_queue_id"), _prop("DELAY").alias("delay"))
              .join(F.broadcast(levels), "level", "left")
              .withColumn("deliver_timestamp", F.col("store_timestamp") + F.coalesce(F.col("delay_ms"), F.lit(1000))))
    delivered = (commitlog.where((F.col("topic") != SCHEDULE_TOPIC) & _prop("DELAY").isNotNull()
                                 & F.col("uniq_key").isNotNull())
                 .select(F.col("topic").alias("d_topic"), F.col("uniq_key").alias("d_uniq_key"),
                         F.col("store_timestamp").alias("d_timestamp"), F.col("phy_offset").alias("d_phy_offset")))
    # the first record of the real topic with the same UNIQ_KEY written after the parked one
    # (a message retried several times is parked and delivered several times under one UNIQ_KEY)
    cond = ((parked.real_topic == delivered.d_topic) & (parked.uniq_key == delivered.d_uniq_key)
            & (delivered.d_phy_offset > parked.phy_offset))
    out = (parked.join(delivered, cond, "left")
           .groupBy(*parked.columns)
           .agg(F.min("d_phy_offset").alias("delivered_phy_offset"), F.min("d_timestamp").alias("delivered_timestamp"))
           .withColumn("status", F.when(F.col("delivered_phy_offset").isNotNull(), "delivered").otherwise("waiting")))
    if delay_offsets:
        offs = spark.createDataFrame([(int(k), int(v)) for k, v in delay_offsets.items()],
                                     "level int, delay_offset bigint")
        out = (out.join(F.broadcast(offs), "level", "left")
               .withColumn("before_delay_offset", F.col("queue_offset") < F.coalesce(F.col("delay_offset"), F.lit(0))))
    else:
        out = out.withColumn("delay_offset", F.lit(None).cast("bigint")) \
                 .withColumn("before_delay_offset", F.lit(None).cast("boolean"))
    return out.select("level", "queue_offset", "phy_offset", "store_timestamp", "deliver_timestamp", "real_topic",
                      "real_queue_id", "uniq_key", "status", "delivered_timestamp", "delay_offset",
                      "before_delay_offset")


def delay_levels_summary(delayed: DataFrame, now_ms: int | None = None) -> DataFrame:
    """Per level: waiting and delivered counts, earliest and latest due time of the waiting ones,
    and (given ``now_ms``) how many waiting ones are already overdue."""
    waiting = F.col("status") == "waiting"
    aggs = [F.count(F.when(waiting, 1)).alias("waiting"), F.count(F.when(~waiting, 1)).alias("delivered"),
            F.min(F.when(waiting, F.col("deliver_timestamp"))).alias("next_due"),
            F.max(F.when(waiting, F.col("deliver_timestamp"))).alias("last_due")]
    if now_ms is not None:
        aggs.append(F.count(F.when(waiting & (F.col("deliver_timestamp") <= now_ms), 1)).alias("overdue"))
    return delayed.groupBy("level").agg(*aggs)


def delay_due_histogram(delayed: DataFrame, bucket_ms: int = 1000) -> DataFrame:
    """Waiting messages per level per due-time bucket (``due_bucket_ms`` = bucket start)."""
    return (delayed.where(F.col("status") == "waiting")
            .withColumn("due_bucket_ms", F.col("deliver_timestamp") - F.pmod(F.col("deliver_timestamp"), F.lit(bucket_ms)))
            .groupBy("level", "due_bucket_ms").agg(F.count("*").alias("messages")))


# --------------------------------------------------------------------------- transactions

def transactions(commitlog: DataFrame, check_max: int = 15) -> DataFrame:
    """One row per transaction (UNIQ_KEY of the half message): status committed | rolled_back |
    discarded | pending, with the half copies, check count, and where the outcome was written."""
    half = (commitlog.where(F.col("topic") == HALF_TOPIC)
            .select("uniq_key", "phy_offset", "queue_offset", "store_timestamp",
                    _prop("REAL_TOPIC").alias("real_topic"), _prop("PGROUP").alias("producer_group"),
                    F.coalesce(_prop("TRANSACTION_CHECK_TIMES").cast("int"), F.lit(0)).alias("check_times")))
    ops = (commitlog.where((F.col("topic") == OP_TOPIC) & (F.col("tags") == "d"))
           .select(F.col("queue_offset").alias("op_queue_offset"),
                   F.explode(F.split(F.decode(F.col("body"), "UTF-8"), ",")).alias("half_offset_text"))
           .where(F.length(F.trim("half_offset_text")) > 0)
           .select("op_queue_offset", F.trim("half_offset_text").cast("bigint").alias("queue_offset")))
    commits = (commitlog.where((F.col("sys_flag").bitwiseAND(0xC) == 0x8) & (F.col("prepared_transaction_offset") > 0))
               .select(F.col("prepared_transaction_offset").alias("phy_offset"),
                       F.col("phy_offset").alias("commit_phy_offset"), F.col("topic").alias("commit_topic")))
    discards = (commitlog.where(F.col("topic") == CHECK_MAX_TOPIC)
                .groupBy("uniq_key").agg(F.min("phy_offset").alias("discard_phy_offset")))
    per_copy = (half.join(ops, "queue_offset", "left").join(commits, "phy_offset", "left"))
    per_tx = (per_copy.groupBy("uniq_key")
              .agg(F.min("phy_offset").alias("half_phy_offset"), F.min("queue_offset").alias("half_queue_offset"),
                   F.countDistinct("phy_offset").alias("half_copies"), F.max("check_times").alias("check_times"),
                   F.first("real_topic", ignorenulls=True).alias("real_topic"),
                   F.first("producer_group", ignorenulls=True).alias("producer_group"),
                   F.min("store_timestamp").alias("first_store_timestamp"),
                   F.min("op_queue_offset").alias("op_queue_offset"),
                   F.min("commit_phy_offset").alias("commit_phy_offset"))
              .join(discards, "uniq_key", "left"))
    status = (F.when(F.col("commit_phy_offset").isNotNull(), "committed")
              .when(F.col("op_queue_offset").isNotNull(), "rolled_back")
              .when(F.col("discard_phy_offset").isNotNull(), "discarded")
              .otherwise("pending"))
    return per_tx.withColumn("status", status).withColumn(
        "checks_left", F.greatest(F.lit(0), F.lit(check_max) - F.col("check_times"))).select(
        "uniq_key", "status", "real_topic", "producer_group", "half_phy_offset", "half_queue_offset", "half_copies",
        "check_times", "checks_left", "first_store_timestamp", "op_queue_offset", "commit_phy_offset",
        "discard_phy_offset")


# --------------------------------------------------------------------------- retry / DLQ

def retry_funnel(commitlog: DataFrame) -> DataFrame:
    """Per consumer group and stage: ``retry`` rows per reconsume count (the RECONSUMETIMES of the record
    sent back = attempt number), and one ``dlq`` row; ``messages`` counts distinct original messages."""
    target = F.when(F.col("topic") == SCHEDULE_TOPIC, _prop("REAL_TOPIC")).otherwise(F.col("topic"))
    origin = F.coalesce(_prop("ORIGIN_MESSAGE_ID"), F.col("uniq_key"), F.col("msg_id"))
    rows = (commitlog.withColumn("target", target)
            .where(F.col("target").startswith(RETRY_PREFIX) | F.col("target").startswith(DLQ_PREFIX))
            .select(F.when(F.col("target").startswith(RETRY_PREFIX), "retry").otherwise("dlq").alias("stage"),
                    F.regexp_replace("target", r"^%(RETRY|DLQ)%", "").alias("group"),
                    "reconsume_times", origin.alias("origin_message_id")))
    retry = (rows.where(F.col("stage") == "retry").groupBy("group", "stage", "reconsume_times")
             .agg(F.countDistinct("origin_message_id").alias("messages")))
    dlq = (rows.where(F.col("stage") == "dlq").groupBy("group", "stage")
           .agg(F.countDistinct("origin_message_id").alias("messages"),
                F.max("reconsume_times").alias("reconsume_times")))
    return retry.unionByName(dlq)


# --------------------------------------------------------------------------- consumer lag

def consumer_offsets(spark: SparkSession, store: str) -> DataFrame:
    """``consumerOffset.json`` as rows ``(topic, group, queue_id, consumer_offset)``."""
    table = read_offset_table(store, "consumerOffset.json")
    rows = []
    for key, queues in sorted(table.items()):
        topic, sep, group = str(key).rpartition("@")
        if not sep:
            continue
        for qid, offset in sorted((queues or {}).items(), key=lambda kv: int(kv[0])):
            rows.append((topic, group, int(qid), int(offset)))
    return spark.createDataFrame(rows, "topic string, `group` string, queue_id int, consumer_offset bigint")


def consumer_lag(offsets: DataFrame, consume_queues: DataFrame) -> DataFrame:
    """Per group/topic/queue: max offset (last unit + 1), committed offset, lag in messages and bytes."""
    units = consume_queues.where(~F.col("is_blank"))
    maxes = units.groupBy("topic", "queue_id").agg((F.max("queue_offset") + 1).alias("max_offset"),
                                                   F.min("queue_offset").alias("min_offset"))
    pending = (units.join(offsets.select("topic", "queue_id", "group", "consumer_offset"), ["topic", "queue_id"])
               .where(F.col("queue_offset") >= F.col("consumer_offset"))
               .groupBy("group", "topic", "queue_id").agg(F.sum("size").alias("lag_bytes")))
    return (offsets.join(maxes, ["topic", "queue_id"], "left")
            .join(pending, ["group", "topic", "queue_id"], "left")
            .withColumn("max_offset", F.coalesce("max_offset", F.lit(0)))
            .withColumn("lag", F.greatest(F.lit(0), F.col("max_offset") - F.col("consumer_offset")))
            .withColumn("lag_bytes", F.coalesce("lag_bytes", F.lit(0)))
            .select("group", "topic", "queue_id", "min_offset", "max_offset", "consumer_offset", "lag", "lag_bytes"))


ANALYSES = ("traffic", "growth", "delay", "transactions", "retry", "lag")


def run_analysis(spark: SparkSession, store: str, name: str, *, bucket_ms: int = 3_600_000,
                 delay_levels: str = DEFAULT_MESSAGE_DELAY_LEVEL) -> DataFrame:
    """One analysis by name (the CLI's entry point)."""
    cl, cq = load_store(spark, store, body=name == "transactions")
    if name == "traffic":
        return traffic(cl, bucket_ms)
    if name == "growth":
        return topic_growth(cl)
    if name == "delay":
        offsets = read_offset_table(store, "delayOffset.json")
        return delayed_messages(cl, delay_levels, {int(k): int(v) for k, v in offsets.items()})
    if name == "transactions":
        return transactions(cl)
    if name == "retry":
        return retry_funnel(cl)
    if name == "lag":
        return consumer_lag(consumer_offsets(spark, store), cq)
    raise ValueError(f"unknown analysis {name!r}: expected one of {', '.join(ANALYSES)}")


__all__ = ["load_store", "traffic", "topic_growth", "delayed_messages", "delay_levels_summary", "delay_due_histogram",
           "transactions", "retry_funnel", "consumer_offsets", "consumer_lag", "read_offset_table", "run_analysis",
           "ANALYSES"]
