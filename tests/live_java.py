"""Running the real RocketMQ 4.9.4 Java client (built at ``/tmp/realrmq``, see tools/rocketmq_broker_live/README.md)
from tests: compile ``LiveClient.java`` once per session and run a scenario. No tests here."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

REAL = os.environ.get("PYMQ_REAL_ROCKETMQ", "/tmp/realrmq")
SOURCE = os.path.join(os.path.dirname(__file__), "..", "tools", "rocketmq_broker_live", "java", "LiveClient.java")


def require_java_client() -> None:
    if not os.path.exists(os.path.join(REAL, "run.sh")) or shutil.which("javac") is None:
        pytest.skip(f"needs the real RocketMQ 4.9.4 build at {REAL} (run.sh) and a JDK: not on this machine")


def compile_live_client(out_dir) -> str:
    require_java_client()
    with open(os.path.join(REAL, "classpath"), encoding="utf-8") as f:
        cp = f.read().strip()
    subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", str(out_dir), SOURCE], check=True, capture_output=True)
    return str(out_dir)


def run_live_client(classes: str, namesrv: str, scenario: str, topic: str, *args, home, timeout: float = 120):
    env = dict(os.environ, RMQ_EXTRA_CP=classes, RMQ_USER_HOME=str(home))
    return subprocess.run([os.path.join(REAL, "run.sh"), "class", "LiveClient", namesrv, scenario, topic,
                           *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env)
