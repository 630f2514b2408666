"""The process's SparkSession: local[2] by default, any ``spark.master`` at scale.

One session per process (Spark allows no more). The defaults follow what was measured on
small machines (architecture §5): shuffle partitions ≈ cores, UI off, Arrow on, session time
zone UTC so TIMESTAMP values keep their instant. ``options`` override any of them and add
others (``spark.master``, ``spark.sql.warehouse.dir``, executor settings, ...).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any

DEFAULT_OPTIONS: Mapping[str, str] = {
    "spark.master": "local[2]",
    "spark.app.name": "spark-replica",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    # The engine writes one small file per table and batch; keep Spark from splitting it.
    "spark.sql.files.maxRecordsPerFile": "0",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
}

_lock = threading.Lock()


#: Added when the master is local: the driver then needs no address other machines reach.
LOCAL_OPTIONS: Mapping[str, str] = {
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
}


def spark_options(overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """The defaults with ``overrides`` applied; loopback driver addresses with a local
    master (a cluster's executors must reach the driver, so they are left to Spark then)."""
    options = {**DEFAULT_OPTIONS, **(overrides or {})}
    if options["spark.master"].startswith("local"):
        options = {**LOCAL_OPTIONS, **options}
    return options


def get_spark(options: Mapping[str, str] | None = None) -> Any:
    """The process's SparkSession, created with ``spark_options(options)`` on first use.

    Later calls return the same session (options that need a new JVM are ignored by Spark
    then). Quiet: the JVM's log level is WARN.
    """
    from pyspark.sql import SparkSession

    settings = spark_options(options)
    with _lock:
        if settings["spark.master"].startswith("local"):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        os.environ.setdefault("PYSPARK_PYTHON", _python())
        builder = SparkSession.builder
        for key, value in settings.items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
        session.sparkContext.setLogLevel("WARN")
        return session


def stop_spark() -> None:
    """Stop the process's SparkSession, if one runs (at process exit)."""
    from pyspark.sql import SparkSession

    with _lock:
        session = SparkSession.getActiveSession()
        if session is not None:
            session.stop()


def _python() -> str:
    import sys

    return sys.executable
