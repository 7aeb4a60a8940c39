"""Start (or reuse) a SparkSession with the pymq data sources registered, or say clearly why not.

:func:`spark_session` applies these settings, measured on a 2-core machine: workers run
this interpreter (``PYSPARK_PYTHON``), loopback only (``SPARK_LOCAL_IP``), no UI or console
progress bar, 2 shuffle partitions, UTC, Arrow on, log level ERROR, scratch space under
``_build/spark-tmp`` (so killed sessions leave nothing in the system temp directory). The
driver memory is left at Spark's default (1g): the data sources never load a whole file. A
``local`` master's JVM compiles with C1 only (``-XX:TieredStopAtLevel=1``): each new query's
generated code is otherwise still being recompiled by C2 for several queries — measured on 2
cores, 1 GiB CommitLog count + aggregate, JVM CPU per query 2.5 s -> 1.6 s on the second query
of a session, 1.3 -> 1.2 s later on, session warm-up query 9 s -> 6 s. Pass your own
``spark.driver.extraJavaOptions`` in ``conf`` to replace these JVM options.
With ``quiet=True`` the JVM's start-up lines go to ``<tmp>/spark-startup.log`` instead of the
process's stdout/stderr (notebooks: ipykernel captures file descriptors 1 and 2). With a master
that is not ``local`` (``spark://…``, ``yarn``, ``k8s://…``) the ``pymq_ref`` package is added
to the job as a zip (:func:`pymq_ref.spark.cluster.package_zip`): the executors' Python needs
pyarrow and numpy (pandas for analytics), not pymq_ref; set ``PYSPARK_PYTHON`` to the
interpreter the workers have.

:func:`check_spark_available` raises :class:`SparkUnavailable` (a PymqError) when PySpark or
Java is missing, with the command that installs it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..errors import PymqError

DEFAULT_MASTER = "local[*]"


class SparkUnavailable(PymqError):
    """PySpark or a Java runtime is missing."""


def check_spark_available() -> None:
    """Raise :class:`SparkUnavailable` unless ``pyspark``, ``pyarrow`` and a working ``java`` are present."""
    try:
        import pyspark  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as exc:
        raise SparkUnavailable(
            f"{exc.name} is not installed: run `.venv/bin/pip install 'pyspark>=4,<5' pyarrow` "
            f"(or `make` / tools/bootstrap.sh, which installs requirements.txt)") from None
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not java or not Path(java).exists():
        raise SparkUnavailable("no Java runtime found (Spark needs Java 17 or 21): install one, e.g. "
                               "`apt-get install default-jre-headless`, or set JAVA_HOME")
    try:
        subprocess.run([java, "-version"], capture_output=True, check=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        raise SparkUnavailable(f"{java} -version failed ({exc}): Spark needs a working Java 17 or 21") from None


def default_tmp_dir() -> Path:
    """``_build/spark-tmp`` of the project this package lives in (else of the working directory)."""
    repo = Path(__file__).resolve().parents[2]
    base = repo if (repo / "pyproject.toml").exists() else Path.cwd()
    return base / "_build" / "spark-tmp"


@contextlib.contextmanager
def _fds_to(log_path: Path):
    """Point file descriptors 1 and 2 at ``log_path`` for the duration (JVM start-up chatter)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(log_path, "ab") as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def spark_session(master: str = DEFAULT_MASTER, app_name: str = "pymq", *, tmp_dir: str | os.PathLike | None = None,
                  quiet: bool = False, conf: dict[str, str] | None = None):
    """A SparkSession (``getOrCreate``) with the pymq formats registered. See the module docstring."""
    check_spark_available()
    from pyspark.sql import SparkSession

    from .datasource import register

    tmp = Path(tmp_dir) if tmp_dir else default_tmp_dir()
    tmp.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    log4j = tmp / "log4j2.properties"
    if not log4j.exists():
        log4j.write_text("rootLogger.level = error\nrootLogger.appenderRef.stderr.ref = console\n"
                         "appender.console.type = Console\nappender.console.name = console\n"
                         "appender.console.target = SYSTEM_ERR\nappender.console.layout.type = PatternLayout\n"
                         "appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%ex\n")
    java_opts = f"-Djava.io.tmpdir={tmp} -Dlog4j2.configurationFile=file:{log4j}"
    driver_opts = f"{java_opts} -XX:TieredStopAtLevel=1" if master.startswith("local") else java_opts
    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true")
               .config("spark.local.dir", str(tmp))
               .config("spark.driver.extraJavaOptions", driver_opts)
               .config("spark.executor.extraJavaOptions", java_opts))
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    if quiet:
        with _fds_to(tmp / "spark-startup.log"):
            spark = builder.getOrCreate()
    else:
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if not master.startswith("local"):
        # a cluster's executors import pymq_ref from this zip (as `spark-submit --py-files` would ship it)
        from .cluster import package_zip

        spark.sparkContext.addPyFile(str(package_zip(tmp)))
    register(spark)
    return spark
