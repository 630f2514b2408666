"""Consistent reads: a query reads every table at one recorded state.

A ``Snapshot`` pins the state recorded last when the query starts. Each table it reads is
exposed as a temporary view of its Iceberg table ``VERSION AS OF`` the recorded snapshot,
named after the table's version (id, snapshot), so a view's content never changes: two
tables read by one query come from the same commit point however many flushes happen
meanwhile, and never show half a transaction (nor a flush's commit to one table before the
commit point records it). A dropped table a snapshot pins is not purged until it is
released.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter

from spark_replica.applier_core.storage.interface import TableRef
from spark_replica.applier_core.storage.spark.catalog import IcebergCatalog
from spark_replica.applier_core.storage.spark.state import DurableState, StoredTable
from spark_replica.applier_core.storage.spark.types import quote_name, spark_type

logger = logging.getLogger(__name__)

#: Spark types Iceberg keeps as a wider one (``int``): the views cast them back, so queries
#: see the column types the engine defines.
_NARROW = frozenset({"TINYINT", "SMALLINT"})


class Snapshot:
    """One query's view of the tables; release it (``SnapshotRegistry.release`` or ``with``)
    when the query is done."""

    def __init__(self, registry: SnapshotRegistry, state: DurableState) -> None:
        self._registry = registry
        self.state = state

    def view(self, ref: TableRef) -> str | None:
        """The temporary view holding ``ref`` at this snapshot; None for an unknown table."""
        table = self.state.tables.get(ref)
        if table is None:
            return None
        return self._registry._view(table)

    def row_count(self, ref: TableRef) -> int | None:
        """The rows ``ref`` holds at this snapshot as Iceberg's metadata counts them
        (``IcebergCatalog.live_rows``); None where it cannot tell, or for an unknown table."""
        table = self.state.tables.get(ref)
        if table is None or not table.snapshot:
            return None
        return self._registry._row_count(table)

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, *exc: object) -> None:
        self._registry.release(self)


class SnapshotRegistry:
    """The recorded state queries start from, and the generations they pin. Thread-safe."""

    def __init__(self, catalog: IcebergCatalog, state: DurableState) -> None:
        self._spark = catalog.spark
        self._catalog = catalog
        # _lock guards _state, _pins and _views; view creation runs outside it.
        self._lock = threading.Lock()
        self._state = state
        self._pins: Counter[int] = Counter()
        self._views: dict[tuple[int, int], str] = {}
        #: Row counts by table version, as views (a version's count never changes).
        self._counts: dict[tuple[int, int], int | None] = {}
        self._creating = threading.Lock()

    def publish(self, state: DurableState) -> None:
        """A new state was recorded: later snapshots read it."""
        with self._lock:
            self._state = state

    def acquire(self) -> Snapshot:
        with self._lock:
            state = self._state
            self._pins.update(t.id for t in state.tables.values())
        return Snapshot(self, state)

    def release(self, snapshot: Snapshot) -> None:
        with self._lock:
            self._pins.subtract(t.id for t in snapshot.state.tables.values())
            self._pins = +self._pins

    def pinned(self, table_id: int) -> bool:
        """Whether a snapshot in use reads the table."""
        with self._lock:
            return self._pins[table_id] > 0

    def _view(self, table: StoredTable) -> str:
        version = table.version
        with self._lock:
            found = self._views.get(version)
        if found is not None:
            return found
        name = f"__replica_t{table.id}_s{table.snapshot & (1 << 64) - 1:x}"
        with self._creating:
            if version not in self._views:
                sql = pinned_sql(self._catalog, table)
                self._spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW `{name}` AS {sql}")
                with self._lock:
                    self._views[version] = name
        return name

    def _row_count(self, table: StoredTable) -> int | None:
        version = table.version
        with self._lock:
            if version in self._counts:
                return self._counts[version]
        try:
            rows = self._catalog.live_rows(table.ref, table.snapshot)
        except Exception:  # the metadata cannot be read now: the query counts by a scan
            logger.warning("could not count %s from its metadata", table.ref, exc_info=True)
            return None
        with self._lock:
            self._counts[version] = rows
        return rows

    def forget_unused_views(self) -> None:
        """Drop the views of table versions that are neither current nor pinned."""
        with self._lock:
            current = {t.version for t in self._state.tables.values()}
            pinned = {pin for pin, count in self._pins.items() if count > 0}
            stale = [
                (version, name)
                for version, name in self._views.items()
                if version not in current and version[0] not in pinned
            ]
            for version, _ in stale:
                del self._views[version]
            for version in [v for v in self._counts if v not in current and v[0] not in pinned]:
                del self._counts[version]
        for _, name in stale:
            try:
                self._spark.catalog.dropTempView(name)
            except Exception:  # Spark could not analyse it any more: it is gone all the same
                pass


def pinned_sql(catalog: IcebergCatalog, table: StoredTable) -> str:
    """Spark SQL reading ``table`` at its recorded snapshot, with the engine's column
    types."""
    columns = []
    for column in table.definition.columns:
        name = quote_name(column.name)
        kind = spark_type(column.type).spark_sql
        columns.append(f"CAST({name} AS {kind}) AS {name}" if kind in _NARROW else name)
    return (
        f"SELECT {', '.join(columns)} FROM {catalog.sql_name(table.ref)} "
        f"VERSION AS OF {table.snapshot}"
    )
