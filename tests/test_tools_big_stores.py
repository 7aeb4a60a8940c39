"""The read-only tools on production-sized stores: bounded memory, open files and maps.

Two stores (``tests/big_stores.py``): one with more than 2,000 CommitLog segments and 300
index files, one with RocketMQ's default sizes as sparse files (a 1 GiB segment, 6 MB
ConsumeQueue files, a 420 MB index file) holding real records at their start. Each tool runs as
a ``pymq`` process allowed only 128 open files; its exit status and output are checked, and its
peak RSS (``wait4``) is printed and bounded. The Spark data sources' worker code (the batch
functions an executor runs) is measured the same way; the sources themselves run on these
stores in ``tests/test_spark_datasource.py``.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from pymq_ref.tools.doctor import Doctor

pytest_plugins = ["big_stores"]
REPO = Path(__file__).resolve().parent.parent
MAX_OPEN_FILES = 128
MAX_RSS_MB = 200


#: runs the command, then reports the process's peak RSS (VmHWM: since its exec, unlike ru_maxrss,
#: which keeps the forking parent's size)
_WRAPPER = ("import sys\nfrom pymq_ref.cli import main\nrc = main(sys.argv[1:])\n"
            "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]\n"
            "sys.stderr.write(f'\\nPEAK_RSS_KB {hwm}\\n')\nsys.exit(rc)\n")


def _run_measured(argv: list[str]) -> tuple[int, str, str, int]:
    """``(status, stdout, stderr, peak RSS in MiB)`` of ``pymq ARGV`` in a process allowed at most
    ``MAX_OPEN_FILES`` descriptors."""
    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (MAX_OPEN_FILES, MAX_OPEN_FILES))

    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, *argv], capture_output=True, text=True, env=env,
                          preexec_fn=limit, timeout=300)
    err, _, peak = proc.stderr.rpartition("PEAK_RSS_KB ")
    assert peak, proc.stderr
    return proc.returncode, proc.stdout, err, int(peak) // 1024


@pytest.fixture(params=["many_files_store", "default_sizes_store"])
def big(request):
    return request.param, *request.getfixturevalue(request.param)


def _report(tool: str, name: str, facts: dict, rss: int) -> None:
    print(f"{tool} on {name}: {facts['commitlog_files']} CommitLog files, {facts['index_files']} index files, "
          f"{facts['bytes']} bytes ({facts['allocated']} allocated), peak RSS {rss} MiB, at most "
          f"{MAX_OPEN_FILES} open files")


def test_doctor(big):
    name, root, facts = big
    status, out, err, rss = _run_measured(["doctor", str(root), "--json", "--quiet"])
    assert status == 0, err + out[:2000]
    doc = json.loads(out)
    assert doc["clean"] and doc["counts"]["commitlog"]["messages"] == facts["messages"]
    assert doc["counts"]["commitlog"]["files"] == facts["commitlog_files"]
    assert doc["counts"]["index"]["files"] == facts["index_files"]
    assert doc["counts"]["index"]["keys_matched"] == 2 * facts["messages"]  # UNIQ_KEY and KEYS
    assert doc["counts"]["consumequeue"]["units_matched"] == facts["messages"]
    _report("doctor", name, facts, rss)
    assert rss < MAX_RSS_MB


def test_inspect(big):
    name, root, facts = big
    status, out, err, rss = _run_measured(["inspect", str(root), "--format", "json"])
    assert status == 0, err
    doc = json.loads(out)
    assert len(doc["commitlog"]["files"]) == facts["commitlog_files"]
    assert doc["commitlog"]["max_offset"] == facts["end_offset"]
    assert sum(t["messages"] for t in doc["topics"].values()) == facts["messages"]
    _report("inspect (store)", name, facts, rss)
    assert rss < MAX_RSS_MB
    first = sorted((root / "commitlog").iterdir())[0]
    status, out, err, rss = _run_measured(["inspect", str(first), "--format", "jsonl"])
    assert status == 0, err
    assert len(out.splitlines()) >= 1 and json.loads(out.splitlines()[0])["phy_offset"] == 0
    _report("inspect (first segment)", name, facts, rss)
    assert rss < MAX_RSS_MB


def test_query(big):
    name, root, facts = big
    key = f"k-{facts['messages'] - 7}"
    status, out, err, rss = _run_measured(["query", str(root), "--topic", facts["topic"], "--key", key,
                                           "--format", "jsonl"])
    assert status == 0, err
    (doc,) = [json.loads(line) for line in out.splitlines()]
    assert key in doc["properties"]["KEYS"]
    _report("query", name, facts, rss)
    assert rss < MAX_RSS_MB


def test_doctor_maps_stay_bounded(many_files_store):
    """In process: more files than the map cache holds were read, and no more maps than it holds
    were ever alive at once (the views fetch buffers when they read them)."""
    root, facts = many_files_store
    doctor = Doctor(root)
    assert doctor.run().clean
    maps = doctor.maps
    assert maps.opened > 2 * maps.limit
    assert maps.peak_live <= maps.limit + 2


def test_spark_worker_code_on_sparse_default_sizes(default_sizes_store):
    """The code a Spark executor runs for the three sources, over every partition of the store
    with default sizes, in one process: rows as the doctor counts them, bounded RSS (holes not read)."""
    pytest.importorskip("pyarrow")
    root, facts = default_sizes_store
    code = f"""
import sys
from pymq_ref.spark.datasource import CommitLogReader, ConsumeQueueReader, IndexReader
rows = []
for reader in (CommitLogReader({{"path": {str(root)!r}}}), ConsumeQueueReader({{"path": {str(root)!r}}}),
               IndexReader({{"path": {str(root)!r}}})):
    rows.append(sum(b.num_rows for p in reader.partitions() for b in reader.read(p)))
hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]
print(*rows, int(hwm) // 1024)
"""
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    commitlog, units, entries, rss = map(int, out.stdout.split())
    assert (commitlog, units, entries) == (facts["messages"], facts["messages"], 2 * facts["messages"])
    print(f"Spark source worker code on the default-size store: {commitlog} records, {units} units, {entries} index "
          f"entries, peak RSS {rss} MiB")
    assert rss < MAX_RSS_MB
