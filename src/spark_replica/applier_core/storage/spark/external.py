"""Reading the replica's tables from any Spark job, outside the server.

The tables are Iceberg tables in the replica's catalog (``catalog``): a session with
``catalog_options`` set reads ``replica.shop.orders`` at its current snapshot, which a
flush in progress may have moved for one table and not yet for another.
``register_tables`` configures that catalog in a session and creates, in the session's own
catalog, one database per replicated database and one view per table, each ``VERSION AS
OF`` the snapshot of the last commit point: together they show one commit point of the
source, and later flushes do not change them (register again to move on).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from spark_replica.applier_core.storage.interface import TableRef
from spark_replica.applier_core.storage.spark.catalog import IcebergCatalog
from spark_replica.applier_core.storage.spark.iceberg import catalog_options
from spark_replica.applier_core.storage.spark.snapshots import pinned_sql
from spark_replica.applier_core.storage.spark.state import DurableState, SparkStateStore
from spark_replica.applier_core.storage.spark.types import quote_name

#: Names Spark's session catalog accepts for databases and views.
_SPARK_NAME = re.compile(r"[A-Za-z0-9_]+")


@dataclass(frozen=True, slots=True)
class Registration:
    """What ``register_tables`` did: the state the views read, and the tables whose names
    Spark's session catalog does not accept (MySQL allows more characters); read those with
    ``SELECT ... FROM (<sql[table]>)`` instead."""

    state: DurableState
    views: list[TableRef] = field(default_factory=list)
    skipped: list[TableRef] = field(default_factory=list)
    sql: dict[TableRef, str] = field(default_factory=dict)


def register_tables(
    spark: Any,
    store: SparkStateStore,
    warehouse: str,
    catalog: str = "replica",
    properties: Mapping[str, str] | None = None,
) -> Registration:
    """Configure the replica's Iceberg ``catalog`` in ``spark`` (with the catalog
    ``properties`` the server has: ``[spark.iceberg]``, an object store's endpoint and
    credentials) and create or replace a view ``db.table`` per replicated table in its
    session catalog, all at the last commit point."""
    options = catalog_options(catalog, store.catalog_url(), warehouse, properties)
    for key, value in options.items():
        spark.conf.set(key, value)
    iceberg = IcebergCatalog(spark, catalog, warehouse)
    state = store.load_spark_state()
    done = Registration(state)
    for database in sorted(d for d in state.databases if _SPARK_NAME.fullmatch(d)):
        spark.sql(f"CREATE DATABASE IF NOT EXISTS spark_catalog.{quote_name(database)}")
    for ref, table in sorted(state.tables.items()):
        sql = done.sql[ref] = pinned_sql(iceberg, table)
        if not (_SPARK_NAME.fullmatch(ref.schema) and _SPARK_NAME.fullmatch(ref.table)):
            done.skipped.append(ref)
            continue
        name = f"spark_catalog.{quote_name(ref.schema)}.{quote_name(ref.table)}"
        spark.sql(f"CREATE OR REPLACE VIEW {name} AS {sql}")
        done.views.append(ref)
    return done
