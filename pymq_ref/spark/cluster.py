"""pymq on a real Spark cluster: the package shipped to the executors, and a standalone cluster to try it.

* :func:`package_zip` — ``pymq_ref`` as a zip, what a cluster's executors need on their Python
  path: :func:`pymq_ref.spark.session.spark_session` adds it to every job whose master is not
  ``local`` (``SparkContext.addPyFile``, the API form of ``spark-submit --py-files``), so the
  workers' Python needs the third-party packages (pyarrow, numpy; pandas for analytics) but not
  pymq_ref itself.
* :func:`third_party_python` — a virtual environment with this environment's third-party packages
  but not pymq_ref: a worker's Python as a cluster has it.
* :class:`StandaloneCluster` — a Spark standalone master and one worker started with PySpark's
  own launcher (``bin/spark-class`` of the installed ``pyspark``), bound to 127.0.0.1, for the
  tests and chapter 14. The worker runs its executors' Python as ``python`` says (another
  interpreter or virtual environment: the point is a Python that lacks pymq_ref).
  Call order: construct → ``start()`` (waits until the worker has registered) → use
  :attr:`master_url` → ``stop()`` (or use it as a context manager).

Nothing here touches a store.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import sysconfig
import time
import urllib.request
import zipfile
from pathlib import Path

from ..errors import PymqError
from pymq_ref.tools.ports import free_ports


class ClusterError(PymqError):
    """The standalone cluster did not come up (the message quotes its log)."""


def package_zip(directory: str | os.PathLike) -> Path:
    """A zip of the ``pymq_ref`` package (its ``.py`` files) in ``directory``, named by a digest of
    its content (an unchanged package is not zipped again)."""
    package = Path(__file__).resolve().parent.parent
    files = sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.parts)
    digest = hashlib.sha256()
    for p in files:
        digest.update(p.relative_to(package.parent).as_posix().encode())
        digest.update(p.read_bytes())
    out = Path(directory) / f"pymq_ref-{digest.hexdigest()[:16]}.zip"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
            for p in files:
                z.write(p, p.relative_to(package.parent).as_posix())
        tmp.replace(out)
    return out


def third_party_python(directory: str | os.PathLike) -> str:
    """A Python (a virtual environment in ``directory``) that sees this environment's third-party
    packages — pyarrow, numpy, pandas, pyspark — but not pymq_ref: the site-packages directory is
    added by a plain path line, so its own ``.pth`` files (an editable install among them) are not
    run. What a cluster's workers typically have."""
    venv = Path(directory)
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120,
                       capture_output=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "third-party.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return str(python)


def spark_class() -> Path:
    """``bin/spark-class`` of the installed PySpark."""
    import pyspark

    path = Path(pyspark.__file__).resolve().parent / "bin" / "spark-class"
    if not path.exists():
        raise ClusterError(f"{path}: PySpark's launcher is missing (a pip-installed pyspark 4 has it)")
    return path


class StandaloneCluster:
    """A standalone master and one worker on 127.0.0.1 (see the module docstring).

    ``ports``: master, master web UI, worker, worker web UI (default: :func:`free_ports`); ``python``:
    the interpreter the worker's executors run Python with; ``work_dir``: logs and the worker's
    directory; ``cores``/``memory``: what the worker offers.
    """

    def __init__(self, work_dir: str | os.PathLike, *, python: str, ports: tuple[int, int, int, int] | None = None,
                 cores: int = 1, memory: str = "1g"):
        self.work_dir = Path(work_dir)
        self.python = python
        self.ports = ports or tuple(free_ports(4))
        self.cores, self.memory = cores, memory
        self._procs: list[subprocess.Popen] = []

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.ports[0]}"

    @property
    def worker_dir(self) -> Path:
        return self.work_dir / "worker"

    def driver_conf(self) -> dict[str, str]:
        """Settings for a driver of this cluster (``spark_session(conf=...)``): its ports, free ones
        as :func:`free_ports` finds them, and executors that fit the worker."""
        driver, block = free_ports(2)
        return {"spark.driver.port": str(driver), "spark.blockManager.port": str(block),
                "spark.executor.memory": "512m", "spark.cores.max": str(self.cores)}

    def _env(self) -> dict:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_DRIVER_PYTHON")}
        env.update(SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY="256m", PYSPARK_PYTHON=self.python,
                   SPARK_LOG_DIR=str(self.work_dir / "logs"), SPARK_WORKER_DIR=str(self.worker_dir))
        return env

    def _launch(self, name: str, *args: str) -> None:
        log = open(self.work_dir / f"{name}.log", "ab")
        try:
            self._procs.append(subprocess.Popen([str(spark_class()), *args], stdout=log, stderr=subprocess.STDOUT,
                                                env=self._env(), start_new_session=True))
        finally:
            log.close()

    def start(self, timeout: float = 120) -> "StandaloneCluster":
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.worker_dir.mkdir(exist_ok=True)
        master, master_ui, worker, worker_ui = self.ports
        self._launch("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(master),
                     "--webui-port", str(master_ui))
        self._launch("worker", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--port", str(worker),
                     "--webui-port", str(worker_ui), "--cores", str(self.cores), "--memory", self.memory,
                     "--work-dir", str(self.worker_dir), self.master_url)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(p.poll() is not None for p in self._procs):
                break
            if self.alive_workers():
                return self
            time.sleep(0.5)
        self.stop()
        logs = "\n".join((self.work_dir / f"{n}.log").read_text(errors="replace")[-1500:] for n in ("master", "worker"))
        raise ClusterError(f"the standalone cluster did not come up within {timeout:.0f} s:\n{logs}")

    def alive_workers(self) -> int:
        """How many workers the master lists as ALIVE (its web UI's JSON); 0 if it does not answer."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ports[1]}/json/", timeout=2) as r:
                state = json.load(r)
        except (OSError, ValueError):
            return 0
        return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")

    def stop(self) -> None:
        for p in reversed(self._procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in self._procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        self._procs = []

    def __enter__(self) -> "StandaloneCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
