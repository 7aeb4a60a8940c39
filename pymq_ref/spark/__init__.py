"""pymq-ref on Spark: store files as DataFrames, rebuild-and-verify of derived files, store analytics.

* :mod:`.datasource` — the formats ``pymq-commitlog``, ``pymq-consumequeue``, ``pymq-index``
  (Spark 4 Python data sources; partitions are byte ranges of segments, see :mod:`.ranges`).
* :mod:`.session` — :func:`spark_session` (the measured local settings, formats registered).
* :mod:`.verify` — ConsumeQueues and the key index derived from the CommitLog, diffed against disk.
* :mod:`.analytics` — one function per question, each returning a DataFrame.
* :mod:`.cli` — ``pymq spark analyze|verify|export``.

Importing this package does not import pyspark; the submodules that need it do.
"""

from __future__ import annotations

__all__ = ["spark_session", "check_spark_available", "SparkUnavailable"]


def __getattr__(name):
    if name in __all__:
        from . import session

        return getattr(session, name)
    raise AttributeError(name)
