"""``pymq spark analyze|verify|export`` (in-process, sharing the session-scoped SparkSession)."""

from __future__ import annotations

import shutil
from pathlib import Path

from pymq_ref.cli import main

pytest_plugins = ["spark_fixtures"]
REAL_STORE = Path(__file__).parent / "data" / "rocketmq-4.9.4" / "store"


def test_wrong_path_fails_in_one_line_before_spark_starts(tmp_path, capsys):
    assert main(["spark", "verify", str(tmp_path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pymq spark: error:") and "no CommitLog segments" in err and len(err.splitlines()) == 1


def test_verify_exit_status_and_report(spark, tmp_path, capsys):
    assert main(["spark", "verify", str(REAL_STORE), "--quiet", "--master", "local[2]"]) == 0
    out = capsys.readouterr().out
    assert "consume queues: 135 units derived; all match" in out and "index: 288 keys derived; all match" in out
    damaged = tmp_path / "store"
    shutil.copytree(REAL_STORE, damaged)
    (damaged / "consumequeue" / "OtherTopic" / "0" / "00000000000000000000").unlink()
    assert main(["spark", "verify", str(damaged), "--quiet", "--no-index"]) == 1
    out = capsys.readouterr().out
    assert "missing 3" in out and "OtherTopic" in out


def test_analyze_and_export_to_parquet(spark, demo_store, tmp_path, capsys):
    root, facts = demo_store
    assert main(["spark", "analyze", str(root), "transactions", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.count("committed") == list(facts["transactions"].values()).count("committed")
    assert main(["spark", "export", str(root), "--out", str(tmp_path / "pq"), "--what", "lag", "commitlog",
                 "--quiet"]) == 0
    lag = spark.read.parquet(str(tmp_path / "pq" / "lag"))
    assert lag.count() == sum(len(q) for q in facts["offsets"].values())
    assert spark.read.parquet(str(tmp_path / "pq" / "commitlog")).count() == \
        spark.read.format("pymq-commitlog").load(str(root)).count()
