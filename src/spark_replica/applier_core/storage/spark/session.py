"""The process's SparkSession: local[2] by default, any ``spark.master`` at scale.

One session per process (Spark allows no more). The defaults follow what was measured on
small machines (architecture §5): shuffle partitions ≈ cores, UI off, Arrow on, session time
zone UTC so TIMESTAMP values keep their instant. ``options`` override any of them and add
others (``spark.master``, ``spark.sql.warehouse.dir``, executor settings, ...). The jars
``make install`` fetched (Iceberg, JDBC drivers: ``jars.py``) are on its class path when
present, its class archive mapped (``class_archive.py``); an Iceberg catalog is added by
its settings (``iceberg.catalog_options``).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from spark_replica.applier_core.storage.spark.class_archive import with_archive
from spark_replica.applier_core.storage.spark.iceberg import EXTENSIONS as ICEBERG_EXTENSIONS
from spark_replica.applier_core.storage.spark.jars import ICEBERG_RUNTIME, installed_jars

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
    # Spark's own rewrite of LIMIT in correlated subqueries answers wrong when the correlation
    # compares different types; without it Spark refuses them, and the usual forms are
    # written as aggregates (sql_handlers/query/first_row.py).
    "spark.sql.optimizer.decorrelateLimit.enabled": "false",
}

_lock = threading.Lock()


#: Added when the master is local: the driver then needs no address other machines reach.
LOCAL_OPTIONS: Mapping[str, str] = {
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
}


def spark_options(
    overrides: Mapping[str, str] | None = None,
    jars: Sequence[Path] | None = None,
    archive: Path | None = None,
) -> dict[str, str]:
    """The defaults with ``overrides`` applied; loopback driver addresses with a local
    master (a cluster's executors must reach the driver, so they are left to Spark then).

    ``jars`` (by default the installed ones of ``jars.py``: Iceberg's runtime and the JDBC
    drivers) go on ``spark.jars``, after any given there (not ``spark.jars.packages``:
    nothing is resolved from a repository when a session starts).
    With Iceberg's runtime among them, Iceberg's SQL extensions are on as well unless
    ``spark.sql.extensions`` is given (they parse only Iceberg's own statements, such as
    ``ALTER TABLE ... SET IDENTIFIER FIELDS``, and hand every other one to Spark's parser).
    The driver JVM maps the class archive ``make install`` recorded (``archive``, by
    default ``class_archive.archive_path()``) when it is there.
    """
    options = {**DEFAULT_OPTIONS, **(overrides or {})}
    if options["spark.master"].startswith("local"):
        options = {**LOCAL_OPTIONS, **options}
    paths = [str(path) for path in (installed_jars() if jars is None else jars)]
    if paths:
        given = options.get("spark.jars")
        options["spark.jars"] = ",".join([given, *paths] if given else paths)
    if any(Path(path).name == ICEBERG_RUNTIME.file_name for path in paths):
        options.setdefault("spark.sql.extensions", ICEBERG_EXTENSIONS)
    return with_archive(options, archive)


def get_spark(options: Mapping[str, str] | None = None) -> Any:
    """The process's SparkSession, created with ``spark_options(options)`` on first use.

    Later calls return the same session (options that need a new JVM are ignored by Spark
    then). Quiet: the JVM's log level is WARN, and a failed query leaves no stack in the
    log unless the ``spark_replica`` logger is at DEBUG.
    """
    from pyspark.sql import SparkSession

    settings = spark_options(options)
    with _lock:
        if settings["spark.master"].startswith("local"):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        # The driver JVM inherits the environment: two malloc arenas instead of one per
        # thread keep its native memory from fragmenting over its many threads.
        os.environ.setdefault("MALLOC_ARENA_MAX", "2")
        os.environ.setdefault("PYSPARK_PYTHON", _python())
        builder = SparkSession.builder
        for key, value in settings.items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
        session.sparkContext.setLogLevel("WARN")
        _quiet_hint_warnings(session)
        if not logging.getLogger("spark_replica").isEnabledFor(logging.DEBUG):
            _quiet_failure_stacks(session)
        return session


#: JVM loggers that write a task's whole stack when a query fails (ERROR "Exception in
#: task", WARN "Lost task", ERROR "Aborting task"): the failure reaches its caller, and a
#: client, in one line.
_TASK_FAILURE_LOGGERS = ("org.apache.spark.executor.Executor",
                         "org.apache.spark.scheduler.TaskSetManager",
                         "org.apache.spark.util.Utils")  # fmt: skip
#: pyspark's loggers that print a failed query's JVM stack as JSON on the way to Python.
_QUERY_CONTEXT_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")


def _quiet_hint_warnings(session: Any) -> None:
    """A flush's ``MERGE INTO`` broadcasts its changes by a hint (``table_writes``) that
    Spark also meets in a plan of the statement without the join, and warns about at every
    flush; the hint works (the join broadcasts the changes)."""
    log4j = session.sparkContext._jvm.org.apache.logging.log4j
    log4j.core.config.Configurator.setLevel(
        "org.apache.spark.sql.catalyst.analysis.HintErrorLogger", log4j.Level.ERROR
    )


def _quiet_failure_stacks(session: Any) -> None:
    """Leave a failed query or task to its caller: no stacks in the server's log unless it
    logs at DEBUG. Each logger still reports FATAL (the JVM about to end)."""
    from pyspark.logger import PySparkLogger

    log4j = session.sparkContext._jvm.org.apache.logging.log4j
    for name in _TASK_FAILURE_LOGGERS:
        log4j.core.config.Configurator.setLevel(name, log4j.Level.FATAL)
    for name in _QUERY_CONTEXT_LOGGERS:
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)


def activate(session: Any) -> None:
    """Make ``session`` the active session of the calling thread (its JVM thread: pyspark
    pins one per Python thread). Iceberg's writers look the session up that way when they
    commit, and a thread the engine starts has none."""
    session._jvm.org.apache.spark.sql.SparkSession.setActiveSession(session._jsparkSession)


@contextmanager
def active(session: Any) -> Iterator[None]:
    """``session`` active in the calling thread meanwhile; the previous one (or none)
    afterwards."""
    jvm = session._jvm.org.apache.spark.sql.SparkSession
    previous = jvm.getActiveSession()
    activate(session)
    try:
        yield
    finally:
        if previous.isDefined():
            jvm.setActiveSession(previous.get())
        else:
            jvm.clearActiveSession()


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
