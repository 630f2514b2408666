"""Starting the Spark engine from its recorded state (architecture §5, Recovery).

Iceberg commits each table on its own, before the metadata transaction that records the
commit point; a crash between them leaves the catalog ahead of the recorded state. Each
table carries its engine id (``catalog.TABLE_ID``), so the catalog is put back by id:

1. a table whose id the state does not record (created, or re-created by ALTER, by a DDL
   that never reached its commit point; dropped by one that did) is purged;
2. a recorded table found under another name (renamed, or moved aside by a DROP or an ALTER
   that never reached its commit point) gets its recorded name back, through a namespace of
   its own so that names swapped by one RENAME TABLE never collide;
3. a table whose current snapshot is not the recorded one (a flush, TRUNCATE or ALTER that
   never reached its commit point) is set back to the recorded snapshot, and its current
   schema to the one that snapshot was written with (an ALTER's schema change comes first);
4. namespaces of recorded databases exist; empty ones of no recorded database go.

The tables are not read: the engine's key index (``key_index``, on disk) is brought to the
recorded commit point instead, and rebuilt from the tables only when it cannot be.
"""

from __future__ import annotations

import logging
from types import MappingProxyType
from typing import Any

from spark_replica.applier_core.storage.ddl import Catalog
from spark_replica.applier_core.storage.interface import TableRef
from spark_replica.applier_core.storage.spark.catalog import (
    DROPPED,
    IcebergCatalog,
    database_name,
    namespace_name,
)
from spark_replica.applier_core.storage.spark.state import DurableState

logger = logging.getLogger(__name__)

#: Where recovery parks tables on their way back to their recorded names.
MOVING = "%replica_moving"


class CatalogDamaged(RuntimeError):
    """A recorded table is not in the Iceberg catalog: its rows are gone."""


def reconcile(catalog: IcebergCatalog, state: DurableState) -> list[str]:
    """Make the catalog hold exactly the tables of ``state`` at their recorded names and
    snapshots; returns what it changed, one line each (also logged)."""
    done: list[str] = []

    def note(what: str) -> None:
        logger.info("recovery: %s", what)
        done.append(what)

    recorded = {t.id: t for t in state.tables.values() if t.snapshot}
    found: dict[int, tuple[str, str]] = {}
    for place in list(catalog.tables()):
        table_id = catalog.table_id(*place)
        if table_id is None:
            logger.warning("table %s.%s in the replica's catalog is not the replica's; left",
                           *place)  # fmt: skip
        elif table_id in recorded and table_id not in found:
            found[table_id] = place
        else:
            catalog.drop(*place)
            note(f"purged {place[0]}.{place[1]} (table id {table_id}, not recorded)")
    missing = sorted(recorded.keys() - found.keys())
    if missing:
        names = ", ".join(str(recorded[i].ref) for i in missing)
        raise CatalogDamaged(
            f"the Iceberg catalog {catalog.name!r} lacks recorded tables: {names}; restore "
            "the metadata database and the warehouse from one backup, or reset the replica"
        )
    misplaced = {i: p for i, p in found.items() if p != _place(recorded[i].ref)}
    for table_id, place in misplaced.items():
        catalog.rename(place, (MOVING, f"t{table_id}"))
    for table_id, place in misplaced.items():
        catalog.rename((MOVING, f"t{table_id}"), _place(recorded[table_id].ref))
        note(f"renamed {place[0]}.{place[1]} back to {recorded[table_id].ref}")
    for table in recorded.values():
        if catalog.current_snapshot(table.ref) != table.snapshot:
            place = _place(table.ref)
            catalog.set_current_snapshot(*place, table.snapshot)
            note(f"set {table.ref} back to its recorded snapshot {table.snapshot}")
        if catalog.restore_schema(*_place(table.ref), table.snapshot):
            note(f"set {table.ref} back to the schema of its recorded snapshot")
    _reconcile_namespaces(catalog, state, note)
    return done


def _reconcile_namespaces(catalog: IcebergCatalog, state: DurableState, note: Any) -> None:
    present = set(catalog.namespaces())
    wanted = {namespace_name(d) for d in state.databases}
    for namespace in sorted(wanted - present):
        catalog.create_namespace(namespace)
    for namespace in sorted(present - wanted):
        ours = database_name(namespace) is not None or namespace in (DROPPED, MOVING)
        if ours and catalog.drop_namespace(namespace):
            note(f"dropped the empty namespace {namespace}")


def _place(ref: TableRef) -> tuple[str, str]:
    return namespace_name(ref.schema), ref.table


def purge_dropped(catalog: IcebergCatalog, state: DurableState, pinned: Any) -> bool:
    """Purge the tables moved aside by recorded DROPs and ALTERs that no query reads
    (``pinned(table_id)``); whether some still wait."""
    recorded = {t.id for t in state.tables.values()}
    waiting = False
    for name in catalog.tables_in(DROPPED):
        table_id = catalog.table_id(DROPPED, name)
        if table_id is not None and (table_id in recorded or pinned(table_id)):
            waiting = True
            continue
        catalog.drop(DROPPED, name)
    return waiting


def load_catalog(state: DurableState) -> Catalog:
    """The in-memory catalog of ``state``."""
    definitions = {ref: t.definition for ref, t in state.tables.items()}
    return Catalog(
        state.databases,
        MappingProxyType(definitions),
        state.objects,
        state.accounts,
        state.collations,
    )
