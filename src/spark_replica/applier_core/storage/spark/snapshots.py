"""Consistent reads: a query reads every table at one recorded state.

A ``Snapshot`` pins the state recorded last when the query starts. Each table it reads is
exposed as a temporary view named after the table's version (id, generation, last batch), so
a view's content never changes: two tables read by one query come from the same commit point
however many flushes happen meanwhile, and never show half a transaction. Files of a
generation a snapshot pins are not deleted until it is released.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from spark_replica.applier_core.storage.interface import TableRef
from spark_replica.applier_core.storage.spark.layout import merged_sql
from spark_replica.applier_core.storage.spark.state import DurableState, StoredTable


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

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, *exc: object) -> None:
        self._registry.release(self)


class SnapshotRegistry:
    """The recorded state queries start from, and the generations they pin. Thread-safe."""

    def __init__(self, spark: Any, root: str, state: DurableState) -> None:
        self._spark = spark
        self._root = root
        # _lock guards _state, _pins and _views; view creation runs outside it.
        self._lock = threading.Lock()
        self._state = state
        self._pins: Counter[tuple[int, int]] = Counter()
        self._views: dict[tuple[int, int, int], str] = {}
        self._creating = threading.Lock()

    def publish(self, state: DurableState) -> None:
        """A new state was recorded: later snapshots read it."""
        with self._lock:
            self._state = state

    def acquire(self) -> Snapshot:
        with self._lock:
            state = self._state
            self._pins.update((t.id, t.generation) for t in state.tables.values())
        return Snapshot(self, state)

    def release(self, snapshot: Snapshot) -> None:
        with self._lock:
            self._pins.subtract((t.id, t.generation) for t in snapshot.state.tables.values())
            self._pins = +self._pins

    def pinned(self, table_id: int, generation: int | None = None) -> bool:
        """Whether a snapshot in use reads the table (that generation of it)."""
        with self._lock:
            if generation is not None:
                return self._pins[(table_id, generation)] > 0
            return any(pin[0] == table_id for pin in self._pins)

    def _view(self, table: StoredTable) -> str:
        version = table.version
        with self._lock:
            found = self._views.get(version)
        if found is not None:
            return found
        name = "__replica_t{}_g{}_b{}".format(*version)
        with self._creating:
            if version not in self._views:
                sql = merged_sql(self._root, table)
                self._spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW `{name}` AS {sql}")
                with self._lock:
                    self._views[version] = name
        return name

    def forget_unused_views(self) -> None:
        """Drop the views of table versions that are neither current nor pinned."""
        with self._lock:
            current = {t.version for t in self._state.tables.values()}
            pinned = {pin for pin, count in self._pins.items() if count > 0}
            stale = [
                (version, name)
                for version, name in self._views.items()
                if version not in current and (version[0], version[1]) not in pinned
            ]
            for version, _ in stale:
                del self._views[version]
        for _, name in stale:
            try:
                self._spark.catalog.dropTempView(name)
            except Exception:  # Spark could not analyse it any more: it is gone all the same
                pass
