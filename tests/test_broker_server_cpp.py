"""The official RocketMQ C++ client (PyPI ``rocketmq==0.4.4``) against ``pymq up``: producer (sync,
oneway, batch), push consumer, pull consumer; the store checked by ``pymq doctor`` afterwards.

The client runs in a child process (:mod:`cpp_client_scenario`): it has its own threads and may
not exit cleanly. Skipped when the package (or its bundled ``librocketmq.so``) cannot be loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pymq_ref.broker.server.up import UpServer

from broker_server_helpers import SMALL_STORE

HERE = os.path.dirname(os.path.abspath(__file__))


def test_cpp_client_produces_and_consumes_through_pymq_up(tmp_path):
    pytest.importorskip("rocketmq.client", reason="PyPI rocketmq==0.4.4 (the C++ client) is not installed")
    store = tmp_path / "store"
    with UpServer(str(store), namesrv_port=0, broker_port=0, settings=SMALL_STORE) as up:
        run = subprocess.run([sys.executable, os.path.join(HERE, "cpp_client_scenario.py"), up.namesrv_addr, "TCpp", "5"],
                             capture_output=True, text=True, timeout=240, cwd=tmp_path)
        assert run.returncode == 0, run.stderr[-3000:]
        result = json.loads(run.stdout.strip().splitlines()[-1])
        stored = up.call(lambda: sum(up.broker.get_max_offset("TCpp", q) for q in range(4)))
    ok = result["ok_status"]
    assert result["sent_status"] == [ok] * 5 and result["batch_status"] == ok
    expected = sorted(result["sent"])  # k0..k4, oneway, and the batch stored as one message
    assert result["push_done"] and result["pushed"] == expected
    assert result["pulled"] == expected
    assert stored == len(expected)
    doctor = subprocess.run([sys.executable, "-m", "pymq_ref.cli", "doctor", str(store)], capture_output=True, text=True,
                            timeout=120)
    assert doctor.returncode == 0 and "clean: no findings" in doctor.stdout, doctor.stdout + doctor.stderr
