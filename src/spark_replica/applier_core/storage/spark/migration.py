"""Moving tables of the engine's earlier layout (``legacy_layout``) into Iceberg, at start.

A metadata database written by an earlier version records its tables with their
generation and change-log batches and no snapshot. Each such table is copied by Spark
(``INSERT INTO`` the new Iceberg table ``SELECT`` its merged content: no row passes through
Python) and the state recorded with the new snapshots in one commit point; only then are
the old files deleted. A crash before that commit point leaves the old layout recorded and
the new tables unrecorded: recovery purges them and the next start copies again.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from spark_replica.applier_core.storage.spark.catalog import IcebergCatalog
from spark_replica.applier_core.storage.spark.files import WarehouseFiles
from spark_replica.applier_core.storage.spark.legacy_layout import generation_dir, merged_sql
from spark_replica.applier_core.storage.spark.state import DurableState, SparkStateStore

logger = logging.getLogger(__name__)


def migrate(
    spark: Any, catalog: IcebergCatalog, store: SparkStateStore, state: DurableState
) -> DurableState:
    """The recorded state with every table of the earlier layout in Iceberg (recorded)."""
    legacy = [t for t in state.tables.values() if t.legacy is not None]
    if not legacy:
        return state
    tables = dict(state.tables)
    for table in legacy:
        logger.info("moving %s into the Iceberg table %s", table.ref, catalog.sql_name(table.ref))
        catalog.create(table.ref, table.definition, table.id)
        spark.sql(f"INSERT INTO {catalog.sql_name(table.ref)} {merged_sql(catalog.root, table)}")
        tables[table.ref] = replace(
            table, snapshot=catalog.current_snapshot(table.ref), changes=0, legacy=None
        )
    after = state.with_tables(tables, last_batch=state.last_batch + 1)
    store.commit_spark_state(state, after)
    files = WarehouseFiles(spark)
    for table in legacy:
        try:
            files.delete(generation_dir(catalog.root, table))
        except Exception:
            logger.warning("could not delete the old files of %s", table.ref, exc_info=True)
    return after
