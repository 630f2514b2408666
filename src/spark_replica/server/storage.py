"""The storage engine ``spark-replica serve`` installs, from the configuration.

``engine = "spark"`` (the default) starts the process's SparkSession (``spark.master`` from
the configuration, ``local[2]`` by default) and the Spark engine on the configured warehouse,
its state in the metadata store; ``engine = "memory"`` keeps tables in memory only (tests,
trying the front end without a JVM).

A warehouse on object storage (``s3://bucket/prefix``) is written by Iceberg's ``S3FileIO``
with the catalog properties of ``[spark.iceberg]``; Spark's own catalog directory (which
holds none of the replica's tables) and the key index stay in the data directory then.
"""

from __future__ import annotations

import logging

from spark_replica.applier_core.channels.components import Components
from spark_replica.applier_core.storage import InMemoryEngine, StorageEngine
from spark_replica.metadata import MetadataStore
from spark_replica.server.components import default_components
from spark_replica.server.config import ServerConfig
from spark_replica.server.spark_start import session_options
from spark_replica.sql_handlers.query.interfaces import QueryEngine

logger = logging.getLogger(__name__)


def configured_components(config: ServerConfig, store: MetadataStore) -> Components:
    """The components for ``config``, the Spark engine's state kept in ``store``."""
    return default_components(build_engine(config, store))


def build_engine(config: ServerConfig, store: MetadataStore) -> StorageEngine:
    if config.engine == "memory":
        return InMemoryEngine()
    from spark_replica.applier_core.storage.spark.engine import SparkEngine
    from spark_replica.applier_core.storage.spark.iceberg import redacted
    from spark_replica.applier_core.storage.spark.session import get_spark

    spark = get_spark(session_options(config))
    properties = config.spark.catalog_properties()
    logger.info("Spark engine: warehouse %s, catalog %s, catalog properties %s",
                config.warehouse, config.spark.catalog, redacted(properties))  # fmt: skip
    return SparkEngine(
        spark,
        config.warehouse,
        store,
        catalog_properties=properties,
        flush_interval=config.spark.flush_interval,
        flush_rows=config.spark.flush_rows,
        max_unflushed_rows=config.spark.max_unflushed_rows,
        key_index_memory=config.spark.key_index_memory,
        compact_after=config.spark.compact_after,
        snapshot_retention=config.spark.snapshot_retention,
        catalog=config.spark.catalog,
        key_index=config.key_index,
    )


def query_engine(engine: StorageEngine | None, config: ServerConfig) -> QueryEngine | None:
    """The query runner of ``engine`` (None for an engine without one)."""
    if engine is None:
        return None
    runner: QueryEngine | None = engine.queries(config.spark.max_queries)
    return runner


def close_engine(engine: StorageEngine | None) -> None:
    """Flush and stop the engine's threads."""
    if engine is not None:
        engine.close()
