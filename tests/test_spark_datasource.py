"""The pymq Spark data sources against pymq inspect, RocketMQ's ground truth and the golden corpus."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest

from pymq_ref.formats.message import BlankRecord, MessageRecord
from pymq_ref.tools.segments import open_readonly, walk_segment


pytest_plugins = ["spark_fixtures", "big_stores"]
CORPUS = Path(__file__).parent.parent / "corpus"
REAL_STORE = Path(__file__).parent / "data" / "rocketmq-4.9.4" / "store"
INSPECT_FIELDS = ("phy_offset", "total_size", "magic_code", "body_crc", "crc_ok", "queue_id", "flag", "queue_offset",
                  "sys_flag", "born_timestamp", "born_host", "store_timestamp", "store_host", "reconsume_times",
                  "prepared_transaction_offset", "topic", "msg_id")


def inspect_records(store: Path) -> list[dict]:
    """What ``pymq inspect --format jsonl`` prints for every message of the store's CommitLog."""
    out = []
    for path in sorted((store / "commitlog").iterdir()):
        with open_readonly(path) as buf:
            for item in walk_segment(buf, base=int(path.name)):
                if isinstance(item, MessageRecord):
                    out.append(item.to_json())
    return out


def rows_as_inspect(df) -> list[dict]:
    rows = []
    for r in df.orderBy("phy_offset").collect():
        d = {k: r[k] for k in INSPECT_FIELDS}
        d["properties"] = dict(r["properties"])
        d["body_base64"] = base64.b64encode(bytes(r["body"])).decode()
        d["type"] = r["type"]
        rows.append(d)
    return rows


def test_real_rocketmq_store_decodes_like_pymq_inspect(spark):
    df = spark.read.format("pymq-commitlog").option("rangeBytes", 20000).load(str(REAL_STORE))
    assert df.rdd.getNumPartitions() == 4 * 4  # 64 KiB segments in 20000-byte ranges
    got = rows_as_inspect(df)
    want = inspect_records(REAL_STORE)
    assert len(got) == 135
    assert got == [{k: w[k] for k in got[0]} for w in want]


def test_real_store_columns_match_rocketmq_ground_truth(spark):
    truth = [json.loads(line) for line in (REAL_STORE.parent / "messages.jsonl").read_text().splitlines()]
    rows = spark.read.format("pymq-commitlog").load(str(REAL_STORE)).orderBy("phy_offset").collect()
    for r, t in zip(rows, truth, strict=True):
        assert (r["phy_offset"], r["total_size"], r["queue_offset"], r["msg_id"]) == \
            (t["physicalOffset"], t["wroteBytes"], t["queueOffset"], t["msgId"])
        assert (r["tags"], r["uniq_key"], r["store_timestamp"]) == (t["tags"], t["uniqKey"], t["storeTimestamp"])
        assert r["keys"] == ([k for k in t["keys"].split(" ") if k] if t["keys"] else [])
        assert r["file"] == "commitlog/%020d" % (t["physicalOffset"] // 65536 * 65536)
        assert r["position"] == t["physicalOffset"] % 65536
        assert r["crc_ok"] is True


def test_blanks_and_gaps_with_records_all(spark, tmp_path):
    df = spark.read.format("pymq-commitlog").option("records", "all").load(str(REAL_STORE))
    blanks = [(r["position"], r["total_size"]) for r in df.where("type = 'blank'").orderBy("phy_offset").collect()]
    assert blanks == [(64939, 597), (64533, 1003), (63174, 2362)]
    damaged = tmp_path / "store"
    shutil.copytree(REAL_STORE, damaged)
    seg = damaged / "commitlog" / "00000000000000065536"
    victim = next(t for t in map(json.loads, (REAL_STORE.parent / "messages.jsonl").read_text().splitlines())
                  if t["seq"] == 40)
    pos = victim["physicalOffset"] - 65536
    data = bytearray(seg.read_bytes())
    data[pos + 4:pos + 8] = b"\xee" * 4  # its magic code: it and only it becomes a gap
    seg.write_bytes(bytes(data))
    rows = spark.read.format("pymq-commitlog").option("records", "all").option("rangeBytes", 20000) \
        .load(str(damaged)).where("type != 'blank'").orderBy("phy_offset").collect()
    gaps = [r for r in rows if r["type"] == "gap"]
    assert len(gaps) == 1 and gaps[0]["file"] == "commitlog/00000000000000065536"
    good = {r["phy_offset"] for r in rows if r["type"] == "message"}
    lost = [t for t in inspect_records(REAL_STORE) if t["phy_offset"] not in good]
    assert [(t["phy_offset"], t["total_size"]) for t in lost] == [(gaps[0]["phy_offset"], gaps[0]["total_size"])]
    assert (gaps[0]["phy_offset"], gaps[0]["total_size"]) == (victim["physicalOffset"], victim["wroteBytes"])
    assert "magic_code" in gaps[0]["reason"]


def test_consumequeue_source_matches_rocketmq_units(spark):
    truth = {(t["topic"], t["queueId"], t["queueOffset"]): t["consumeQueueEntry"]
             for t in map(json.loads, (REAL_STORE.parent / "messages.jsonl").read_text().splitlines())}
    rows = spark.read.format("pymq-consumequeue").option("rangeBytes", 600).load(str(REAL_STORE)).collect()
    got = {(r["topic"], r["queue_id"], r["queue_offset"]): r for r in rows}
    assert set(got) == set(truth)
    for key, t in truth.items():
        r = got[key]
        assert (r["file"], r["position"], r["phy_offset"], r["size"], r["tags_code"]) == \
            (t["file"], t["byteOffsetInFile"], t["commitLogOffset"], t["size"], t["tagsCode"])
        assert not r["is_blank"]


def test_index_source_reads_every_entry_with_its_header(spark):
    rows = spark.read.format("pymq-index").load(str(REAL_STORE)).collect()
    per_file = {}
    for r in rows:
        per_file.setdefault(r["file"], []).append(r["entry_number"])
        assert r["hash_slot_num"] == 100
    assert {f: sorted(n) for f, n in per_file.items()} == {
        "index/20261121131039741": list(range(1, 200)), "index/20261121131039782": list(range(1, 90))}


def test_a_path_that_is_not_a_store_is_a_clear_error(spark, tmp_path):
    with pytest.raises(Exception, match="no CommitLog segments"):
        spark.read.format("pymq-commitlog").load(str(tmp_path)).count()
    with pytest.raises(Exception, match="expected an integer"):
        spark.read.format("pymq-commitlog").option("rangeBytes", "lots").load(str(REAL_STORE)).count()
    with pytest.raises(Exception, match="unknown column"):
        spark.read.format("pymq-commitlog").option("columns", "topic,nope").load(str(REAL_STORE))


def test_columns_option_builds_only_those_columns_with_the_same_values(spark):
    full = spark.read.format("pymq-commitlog").load(str(REAL_STORE))
    narrow = spark.read.format("pymq-commitlog").option("columns", "keys, phy_offset,topic").load(str(REAL_STORE))
    assert narrow.columns == ["phy_offset", "topic", "keys"]  # schema order
    assert sorted(map(tuple, narrow.collect())) == sorted(map(tuple, full.select(*narrow.columns).collect()))


@pytest.mark.skipif(not (CORPUS / "roll_blank" / "expected.json").exists(), reason="golden corpus not present")
def test_golden_corpus_commitlogs_decode_like_the_corpus_says(spark):
    from pyspark.sql import functions as F

    cases = sorted(p.parent for p in CORPUS.glob("*/expected.json"))
    assert cases
    df = None
    for case in cases:
        one = (spark.read.format("pymq-commitlog").option("records", "all").option("rangeBytes", 2000)
               .load(str(case / "store")).withColumn("case", F.lit(case.name)))
        df = one if df is None else df.unionByName(one)
    rows = df.collect()
    for case in cases:
        expected = json.loads((case / "expected.json").read_text())
        want, stops = [], {}
        for name, doc in expected["files"].items():
            if name.startswith("commitlog/"):
                want += [(name, r["type"], r["phy_offset"], r.get("total_size"), r.get("body_crc"), r.get("topic"),
                          r.get("properties")) for r in doc["records"] if r["type"] in ("message", "blank")]
                fatal = [f["phy_offset"] for f in doc.get("findings", []) if f.get("type") == "error"]
                stops[name] = min(fatal) if fatal else None
        # inspect stops at the first fatal finding of a file; the Spark walk resynchronises after it
        got = [(r["file"], r["type"], r["phy_offset"], r["total_size"], r["body_crc"], r["topic"],
                dict(r["properties"]) if r["properties"] is not None else None)
               for r in rows if r["case"] == case.name and r["type"] != "gap"
               and (stops.get(r["file"]) is None or r["phy_offset"] < stops[r["file"]])]
        key = lambda t: (t[0], t[2])  # noqa: E731
        assert sorted(got, key=key) == sorted(want, key=key), case.name


@pytest.mark.parametrize("columns", ["topic", "total_size,topic", "type", "file,reason", "position,msg_id,crc_ok,tags",
                                     "body,keys,uniq_key,born_host,store_host,queue_offset", None])
def test_commitlog_batches_projection_equals_full_schema_columns(columns):
    """What a scan keeps per record (one list per needed field, or whole records) builds the same values as
    the full schema, across many small batches (no Spark: the benchmark baseline runs this function)."""
    from pymq_ref.spark.batches import commitlog_batches, project

    path = sorted((REAL_STORE / "commitlog").iterdir())[0]
    base = int(path.name)
    schema = project(columns)
    full = [b.to_pydict() for b in commitlog_batches(str(path), path.name, base, 0, path.stat().st_size,
                                                     batch_rows=1000)]
    narrow = list(commitlog_batches(str(path), path.name, base, 0, path.stat().st_size, schema=schema, batch_rows=7))
    assert all(b.schema == schema for b in narrow) and all(b.num_rows <= 7 for b in narrow)
    got = {name: [v for b in narrow for v in b.column(name).to_pylist()] for name in schema.names}
    want = {name: [v for b in full for v in b[name]] for name in schema.names}
    assert len(got[schema.names[0]]) > 7
    assert got == want


def test_sources_on_production_sized_stores(spark, many_files_store, default_sizes_store):
    """Thousands of small files (grouped into few partitions) and RocketMQ's default sizes as
    sparse files (holes skipped): every record, unit and index entry, as the doctor counts them."""
    for root, facts in (many_files_store, default_sizes_store):
        cl = spark.read.format("pymq-commitlog").option("columns", "phy_offset,topic").load(str(root))
        assert cl.count() == facts["messages"]
        assert cl.rdd.getNumPartitions() <= 16  # 64 MiB of segments per partition
        assert spark.read.format("pymq-consumequeue").load(str(root)).count() == facts["messages"]
        assert spark.read.format("pymq-index").load(str(root)).count() == 2 * facts["messages"]
