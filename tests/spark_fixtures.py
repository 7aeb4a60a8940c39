"""Session-scoped Spark fixtures for tests/test_spark_*.py (loaded with ``pytest_plugins``).

One SparkSession per test run (``local[2]``, the TOOLCHAIN settings via
:func:`pymq_ref.spark.session.spark_session`), skipped with the reason when Java or PySpark is
missing. Stores: the real RocketMQ 4.9.4 store and the demo store (built once per run).
"""

from __future__ import annotations

from pathlib import Path

import pytest

REAL_STORE = Path(__file__).parent / "data" / "rocketmq-4.9.4" / "store"


@pytest.fixture(scope="session")
def spark():
    from pymq_ref.spark.session import SparkUnavailable, spark_session

    try:
        session = spark_session("local[2]", "pymq-tests", quiet=True)
    except SparkUnavailable as exc:
        pytest.skip(str(exc))
    yield session
    session.stop()


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory):
    """``(root, facts)`` of :func:`pymq_ref.spark.demo_store.build_demo_store`."""
    from pymq_ref.spark.demo_store import build_demo_store

    root = tmp_path_factory.mktemp("spark-demo") / "store"
    facts = build_demo_store(root)
    return root, facts
