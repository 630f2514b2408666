"""The process's SparkSession as ``spark-replica serve`` configures it, started early.

``serve`` launches Spark's JVM on a thread (``spark-start``) before it imports and opens the
rest of the server, so the JVM boots while Python works (on a restart, most of the time to
serving is Spark's start); the Spark engine's ``get_spark`` then finds the session created,
or waits for the thread to create it. A failure here is left to the engine, which starts
Spark again and reports it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from spark_replica.server.config import ServerConfig

logger = logging.getLogger(__name__)


def session_options(config: ServerConfig) -> dict[str, str]:
    """The SparkSession options of ``config``."""
    options = config.spark.session_options()
    options.setdefault("spark.sql.warehouse.dir", spark_catalog_dir(config))
    return options


def spark_catalog_dir(config: ServerConfig) -> str:
    """Spark's own catalog directory (the engine's tables are in its Iceberg catalog):
    ``_spark_catalog`` in the warehouse; in the data directory when the warehouse is on
    object storage, which only Iceberg's file IO reaches (not Hadoop's file systems)."""
    from spark_replica.applier_core.storage.spark.iceberg import on_object_store

    if on_object_store(config.warehouse):
        return str(config.data_dir.resolve() / "spark-catalog")
    return f"{config.warehouse}/_spark_catalog"


@contextmanager
def spark_started_early(config: ServerConfig) -> Iterator[None]:
    """Start the SparkSession on a thread when ``config`` uses the Spark engine; the thread
    is joined when the block ends."""
    if config.engine != "spark":
        yield
        return
    thread = threading.Thread(target=_start, args=(session_options(config),), name="spark-start")
    thread.start()
    try:
        yield
    finally:
        thread.join()


def _start(options: Mapping[str, str]) -> None:
    from spark_replica.applier_core.storage.spark.session import get_spark

    try:
        get_spark(options)
    except Exception:
        logger.debug("starting Spark early failed; the engine starts it again", exc_info=True)
