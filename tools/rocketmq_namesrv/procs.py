"""Starting, waiting for and stopping the processes of a recording run (shared by the recorders
and bench/bench_namesrv.py)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time


def port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def wait_port(port: int, timeout: float = 60.0) -> None:
    """Return once something listens on 127.0.0.1:``port``; exit with a reason after ``timeout``."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not port_free(port):
            return
        time.sleep(0.3)
    raise SystemExit(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def start(cmd: list[str], log: str | None = None, env=None) -> subprocess.Popen:
    """A process in its own session (so :func:`stop` reaches its children), output to ``log``."""
    out = open(log, "w") if log else subprocess.DEVNULL
    return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the whole session, SIGKILL if it does not stop within 30 s."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
