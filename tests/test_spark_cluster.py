"""``pymq spark verify|analyze|export --master spark://…`` on a real standalone cluster.

A master and a worker are started with PySpark's own launcher (``bin/spark-class``) on
127.0.0.1; the worker's executors run a Python that has pyarrow, numpy, pandas and pyspark but not
pymq_ref (a virtual environment that sees only the third-party packages), so the jobs work only
because the driver ships the package to them as a zip. The three commands run in one driver
process (one JVM start), as the ``pymq`` command runs them. Ports: free ones, in
``$PYMQ_PORT_RANGE`` (e.g. ``21000-21999``) when it is set. Skipped without Java or PySpark.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
REAL_STORE = REPO / "tests" / "data" / "rocketmq-4.9.4" / "store"


@pytest.fixture(scope="module")
def worker_python(tmp_path_factory) -> str:
    """A Python with the third-party packages of this environment but not pymq_ref."""
    from pymq_ref.spark.cluster import third_party_python

    python = third_party_python(tmp_path_factory.mktemp("worker-venv") / "venv")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = subprocess.run([python, "-c", "import importlib.util as u, pyarrow, numpy, pandas, pyspark; "
                                          "print(u.find_spec('pymq_ref'))"],
                           capture_output=True, text=True, env=env, cwd=str(Path(python).parent))
    assert probe.returncode == 0 and probe.stdout.strip() == "None", probe.stdout + probe.stderr
    return python


def test_verify_analyze_export_on_a_standalone_cluster(tmp_path, worker_python, demo_store):
    from pymq_ref.spark.session import SparkUnavailable, check_spark_available

    try:
        check_spark_available()
    except SparkUnavailable as exc:
        pytest.skip(str(exc))
    from pymq_ref.spark.cluster import StandaloneCluster, free_ports

    master, master_ui, worker, worker_ui, driver, block = free_ports(6)
    demo, facts = demo_store
    with StandaloneCluster(tmp_path / "cluster", python=worker_python, ports=(master, master_ui, worker, worker_ui),
                           cores=1, memory="1g") as cluster:
        assert cluster.alive_workers() == 1
        m = cluster.master_url
        script = (
            "import sys\n"
            "from pymq_ref.cli import main\n"
            f"codes = [main(['spark', 'verify', {str(REAL_STORE)!r}, '--quiet', '--master', {m!r}]),\n"
            f"         main(['spark', 'analyze', {str(demo)!r}, 'transactions', '--quiet', '--master', {m!r}]),\n"
            f"         main(['spark', 'export', {str(demo)!r}, '--out', {str(tmp_path / 'pq')!r}, '--what', 'lag',\n"
            f"               'commitlog', '--quiet', '--master', {m!r}])]\n"
            "from pyspark.sql import SparkSession\n"
            "spark = SparkSession.getActiveSession()\n"
            "print('MASTER', spark.sparkContext.master)\n"
            f"print('ROWS', spark.read.parquet({str(tmp_path / 'pq' / 'commitlog')!r}).count())\n"
            "print('CODES', *codes)\n")
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": worker_python,
               "SPARK_LOCAL_IP": "127.0.0.1",
               "PYSPARK_SUBMIT_ARGS": f"--conf spark.driver.port={driver} --conf spark.blockManager.port={block} "
                                      f"--conf spark.executor.memory=512m pyspark-shell"}
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600,
                             cwd=str(tmp_path))
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
        text = out.stdout
        assert "CODES 0 0 0" in text, text
        assert f"MASTER {m}" in text
        assert "consume queues: 135 units derived; all match" in text and "index: 288 keys derived; all match" in text
        assert text.count("committed") == list(facts["transactions"].values()).count("committed")
        from pymq_ref.spark.datasource import CommitLogReader

        reader = CommitLogReader({"path": str(demo)})  # the same rows, without Spark
        assert int(text.split("ROWS ")[1].split()[0]) == sum(b.num_rows for p in reader.partitions()
                                                             for b in reader.read(p))
        # the executors ran on the worker, with pymq_ref from the zip the driver shipped
        shipped = list(cluster.worker_dir.rglob("pymq_ref-*.zip"))
        assert shipped, list(cluster.worker_dir.rglob("*"))[:20]
        apps = [p for p in cluster.worker_dir.iterdir() if p.name.startswith("app-")]
        assert len(apps) == 1  # one application: the three commands shared the driver
    print(json.dumps({"master": m, "worker_python": worker_python, "shipped": [p.name for p in shipped]}))


pytest_plugins = ["spark_fixtures"]
