"""Starting the Spark engine from its recorded state (architecture §5, Recovery).

Files the state does not list are what a crash left behind: a batch written but never
recorded, a generation a compaction or an ALTER never switched to (or switched away from and
did not delete yet), a dropped table's directory. They are deleted first, so nothing reads
them. Then every table's merged content is read back from Spark into the in-memory key index
the apply phase checks keys against.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

from spark_replica.applier_core.storage.ddl import Catalog
from spark_replica.applier_core.storage.interface import TableRef
from spark_replica.applier_core.storage.memory_tables import Table, hashable
from spark_replica.applier_core.storage.spark.commit_log import physical_columns
from spark_replica.applier_core.storage.spark.files import WarehouseFiles
from spark_replica.applier_core.storage.spark.layout import (
    base_dir,
    generation_dir,
    log_dir,
    merged_sql,
    parse_batch_dir,
    table_dir,
)
from spark_replica.applier_core.storage.spark.state import DurableState, StoredTable
from spark_replica.applier_core.storage.spark.types import from_arrow_rows

logger = logging.getLogger(__name__)


def recover(
    spark: Any, files: WarehouseFiles, root: str, state: DurableState
) -> tuple[Catalog, dict[TableRef, Table]]:
    """Remove unrecorded files under ``root``; the catalog and tables of ``state``."""
    remove_unrecorded(files, root, state)
    definitions = {ref: t.definition for ref, t in state.tables.items()}
    catalog = Catalog(
        state.databases,
        MappingProxyType(definitions),
        state.objects,
        state.accounts,
        state.collations,
    )
    tables = {ref: load_table(spark, root, stored) for ref, stored in state.tables.items()}
    return catalog, tables


def remove_unrecorded(files: WarehouseFiles, root: str, state: DurableState) -> list[str]:
    """Delete every file under ``root`` that ``state`` does not list; returns what went."""
    by_id = {t.id: t for t in state.tables.values()}
    removed: list[str] = []

    def remove(path: str) -> None:
        logger.info("removing %s: no recorded state refers to it", path)
        files.delete(path)
        removed.append(path)

    for name in files.children(root):
        table_id = int(name[1:]) if name.startswith("t") and name[1:].isdigit() else None
        stored = by_id.get(table_id) if table_id is not None else None
        if stored is None:
            remove(f"{root}/{name}")
            continue
        current = generation_dir(root, stored).rsplit("/", 1)[1]
        for generation in files.children(table_dir(root, stored.id)):
            if generation != current:
                remove(f"{table_dir(root, stored.id)}/{generation}")
        _clean_generation(files, root, stored, remove)
    return removed


def _clean_generation(
    files: WarehouseFiles, root: str, stored: StoredTable, remove: Callable[[str], None]
) -> None:
    if not stored.base and files.exists(base_dir(root, stored)):
        remove(base_dir(root, stored))
    recorded = set(stored.batches)
    for name in files.children(log_dir(root, stored)):
        batch = parse_batch_dir(name)
        if batch is None and name.startswith(("_", ".")):
            continue  # Spark's markers (_SUCCESS) and hidden files
        if batch not in recorded:
            remove(f"{log_dir(root, stored)}/{name}")


def load_table(spark: Any, root: str, stored: StoredTable) -> Table:
    """The table's merged content at its last recorded batch, as the in-memory engine keeps
    it (the key index the apply phase checks)."""
    table = Table(stored.ref, stored.definition)
    if not stored.base and not stored.batches:
        return table
    arrow = spark.sql(merged_sql(root, stored, names=False)).toArrow()
    rows = from_arrow_rows(physical_columns(stored.definition), arrow)
    if table.key_of is not None:
        key_of = table.key_of
        table.rows = {key_of(row): row for row in rows}
    else:
        for row in rows:
            table.bag[hashable(row)] += 1
    return table
