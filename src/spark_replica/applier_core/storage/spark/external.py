"""Reading the replica's tables from any Spark job, outside the server.

``register_tables`` creates, in a SparkSession's catalog, one database per replicated database
and one view per table, each reading the table at the last recorded batch. The views pin that
batch: all of them show the same commit point of the source, and later flushes do not change
them (register again to move on). Files of a generation the views read are deleted by the
server once a compaction replaces it, so a long-running job should register again after a
failure to find a file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from spark_replica.applier_core.storage.interface import TableRef
from spark_replica.applier_core.storage.spark.layout import merged_sql, quote
from spark_replica.applier_core.storage.spark.state import DurableState, SparkStateStore

#: Names Spark's session catalog accepts for databases and views.
_SPARK_NAME = re.compile(r"[A-Za-z0-9_]+")


@dataclass(frozen=True, slots=True)
class Registration:
    """What ``register_tables`` did: the state the views read, and the tables whose names
    Spark's catalog does not accept (MySQL allows more characters); read those with
    ``SELECT ... FROM (<merged_sql>)`` instead."""

    state: DurableState
    views: list[TableRef] = field(default_factory=list)
    skipped: list[TableRef] = field(default_factory=list)


def register_tables(spark: Any, store: SparkStateStore, warehouse: str) -> Registration:
    """Create or replace a view ``db.table`` for every replicated table in ``spark``'s
    catalog, all at the last recorded batch."""
    state = store.load_spark_state()
    root = warehouse.rstrip("/")
    done = Registration(state)
    for database in sorted(d for d in state.databases if _SPARK_NAME.fullmatch(d)):
        spark.sql(f"CREATE DATABASE IF NOT EXISTS {quote(database)}")
    for ref, table in sorted(state.tables.items()):
        if not (_SPARK_NAME.fullmatch(ref.schema) and _SPARK_NAME.fullmatch(ref.table)):
            done.skipped.append(ref)
            continue
        name = f"{quote(ref.schema)}.{quote(ref.table)}"
        spark.sql(f"CREATE OR REPLACE VIEW {name} AS {merged_sql(root, table)}")
        done.views.append(ref)
    return done
