"""The Spark engine's table maintenance, on a thread of its own so that flushes go on
meanwhile (``spark-engine-maintenance``).

After each flush the flusher asks for a round (``request``). A round, in a Spark session
of its own (its Iceberg commits carry none of the flush's snapshot properties):

1. compacts every table with ``compact_after`` flushes since its last compaction, with
   Iceberg's ``rewrite_data_files`` and ``rewrite_position_delete_files`` in file groups
   that commit on their own (``partial-progress``): a group whose files a concurrent flush
   deleted rows from fails Iceberg's validation and is left for a later round, the others
   commit. A flush that loses such a race the other way is run again (``table_writes``).
   Only the files below ``TARGET_FILE_BYTES`` (the flushes' small ones) or with many of
   their rows deleted are rewritten, so a round's cost follows what changed since the last
   one, not the table's size; a table with a primary key is rewritten sorted by it, so a
   lookup by key reads few files and row groups (their statistics exclude the rest);
2. expires each compacted table's snapshots older than both ``snapshot_retention`` and its
   recorded snapshot (never the recorded one or a newer one, which a crash recovery or a
   reader may need), unless a query reads the table;
3. removes each compacted table's orphan files (``remove_orphan_files``: files under its
   location no snapshot names, left by failed writes or a crash) older than ``orphan_age``
   (three days: far longer than any write takes), at most every ``orphan_interval`` per
   table;
4. purges the dropped tables no query reads any more (``recovery.purge_dropped``).

A compaction's snapshot is not recorded here: the round hands the tables it compacted to
``done``, and the flusher records them at its next commit point (it owns every commit
point). A crash before that sets the table back to its recorded snapshot: same rows, not
compacted yet.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from spark_replica.applier_core import failpoints
from spark_replica.applier_core.storage.interface import TableDef, TableRef
from spark_replica.applier_core.storage.spark.catalog import IcebergCatalog, namespace_name
from spark_replica.applier_core.storage.spark.recovery import purge_dropped
from spark_replica.applier_core.storage.spark.session import activate, active
from spark_replica.applier_core.storage.spark.state import DurableState, StoredTable
from spark_replica.applier_core.storage.spark.types import quote_name, string_text

logger = logging.getLogger(__name__)

#: The Spark job group of maintenance jobs (cancelled when the engine closes).
JOB_GROUP = "spark-replica-maintenance"
#: Orphan files younger than this (seconds) are kept: a write in progress may own them
#: (Iceberg's procedure refuses less than a day).
ORPHAN_AGE = 3 * 24 * 3600.0
#: How often (seconds) one table's orphan files are looked for (it lists the location).
ORPHAN_INTERVAL = 3600.0
#: The size of the data files compaction writes; files this big (three quarters of it,
#: Iceberg's default ``min-file-size-bytes``) are left as they are unless Iceberg's
#: ``delete-ratio-threshold`` (30 % of their rows deleted) says otherwise.
TARGET_FILE_BYTES = 128 * 1024 * 1024
#: Rewrite options: files groups that commit on their own; two small files are enough to
#: rewrite.
_REWRITE_OPTIONS = (
    "map('partial-progress.enabled', 'true', 'partial-progress.max-commits', '10', "
    f"'min-input-files', '2', 'target-file-size-bytes', '{TARGET_FILE_BYTES}')"
)


class Maintenance:
    """The maintenance thread of one engine (see the module): in its own session ``spark``,
    on the Iceberg catalog ``open_catalog(spark)`` gives (opened at the first use: not on a
    restart's way to serving). ``state`` gives the recorded state, ``pinned(table_id)``
    whether a query reads a table, ``done(round, compacted)`` takes a finished round's
    number and the tables it compacted."""

    def __init__(
        self,
        spark: Any,
        open_catalog: Callable[[Any], IcebergCatalog],
        state: Callable[[], DurableState],
        pinned: Callable[[int], bool],
        done: Callable[[int, list[StoredTable]], None],
        *,
        compact_after: int,
        snapshot_retention: float,
        orphan_age: float = ORPHAN_AGE,
        orphan_interval: float = ORPHAN_INTERVAL,
    ) -> None:
        self.spark = spark
        self._open_catalog = open_catalog
        self._catalog: IcebergCatalog | None = None
        self._catalog_lock = threading.Lock()
        self._state = state
        self._pinned = pinned
        self._done = done
        self.compact_after = compact_after
        self.snapshot_retention = snapshot_retention
        self.orphan_age = orphan_age
        self.orphan_interval = orphan_interval
        self._orphans_removed: dict[int, float] = {}  # table id → when (monotonic)
        self._cond = threading.Condition()
        self._requested = 0
        self._stopping = False
        self._busy = False  # a round runs
        self._thread = threading.Thread(target=self._run, name="spark-engine-maintenance")
        self._thread.start()

    @property
    def catalog(self) -> IcebergCatalog:
        with self._catalog_lock:
            if self._catalog is None:
                with active(self.spark):
                    self._catalog = self._open_catalog(self.spark)
            return self._catalog

    def request(self, number: int) -> None:
        """Run a round numbered ``number`` (the latest request wins)."""
        with self._cond:
            self._requested = max(self._requested, number)
            self._cond.notify_all()

    def close(self) -> None:
        """Stop: a running Spark job is cancelled, the thread joined. Idempotent."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread.is_alive():
            try:
                if self._busy:
                    self.spark.sparkContext.cancelJobGroup(JOB_GROUP)
            except Exception:  # the context is gone: nothing runs then
                logger.debug("could not cancel the maintenance jobs", exc_info=True)
            self._thread.join()

    def stopping(self) -> bool:
        """Whether ``close`` was called (a compaction failing then was cancelled)."""
        return self._stopping

    # -- the thread ----------------------------------------------------------------------------

    def _run(self) -> None:
        activate(self.spark)
        self.spark.sparkContext.setJobGroup(JOB_GROUP, "table maintenance", True)
        served = 0
        while True:
            with self._cond:
                while not self._stopping and self._requested <= served:
                    self._cond.wait()
                if self._stopping:
                    return
                served = self._requested
                self._busy = True
            try:
                compacted = self._round()
            finally:
                with self._cond:
                    self._busy = False
            self._done(served, compacted)

    def _round(self) -> list[StoredTable]:
        state = self._state()
        compacted: list[StoredTable] = []
        for table in state.tables.values():
            if table.changes < self.compact_after or self.stopping():
                continue
            try:
                self.compact(table)
            except Exception:
                if self.stopping():  # cancelled
                    return compacted
                logger.exception("compaction of %s failed; it is tried again later", table.ref)
                continue
            compacted.append(table)
            failpoints.hit("spark.compacted")
            try:
                self.expire_snapshots(table)
            except Exception:
                logger.warning("could not expire the snapshots of %s", table.ref, exc_info=True)
            try:
                self.remove_orphan_files(table)
            except Exception:
                logger.warning("could not remove the orphan files of %s", table.ref,
                               exc_info=True)  # fmt: skip
        if not self.stopping():
            try:
                purge_dropped(self.catalog, state, self._pinned)
            except Exception:
                logger.warning("could not purge dropped tables; tried again later",
                               exc_info=True)  # fmt: skip
        return compacted

    def compact(self, table: StoredTable) -> None:
        """Rewrite ``table``'s small data and delete files into few (sorted by its primary
        key when it has one); a table an earlier version made takes the engine's table
        properties first (``IcebergCatalog.adopt_properties``)."""
        adopted = self.catalog.adopt_properties(table.ref, table.definition)
        if adopted:
            logger.info("%s takes the table properties %s", table.ref, ", ".join(adopted))
        name = self._literal(table.ref)
        procedures = f"{self.catalog.name}.system"
        self.spark.sql(f"CALL {procedures}.rewrite_data_files(table => '{name}', "
                       f"{_sort_by_key(table.definition)}"
                       f"options => {_REWRITE_OPTIONS})").collect()  # fmt: skip
        self.spark.sql(f"CALL {procedures}.rewrite_position_delete_files(table => '{name}', "
                       f"options => {_REWRITE_OPTIONS})").collect()  # fmt: skip

    def expire_snapshots(self, table: StoredTable) -> None:
        """Expire ``table``'s snapshots older than ``snapshot_retention`` seconds and than
        its recorded snapshot, and delete the files only they read; not while a query reads
        the table (it may read an older snapshot)."""
        if self._pinned(table.id):
            return
        iceberg = self.catalog.load(namespace_name(table.ref.schema), table.ref.table)
        recorded = iceberg.snapshot(table.snapshot)
        if recorded is None:
            return
        cutoff = min(time.time() - self.snapshot_retention, recorded.timestampMillis() / 1000)
        procedure = f"{self.catalog.name}.system.expire_snapshots"
        arguments = (f"table => '{self._literal(table.ref)}', older_than => TIMESTAMP "
                     f"'{_timestamp(cutoff)}', retain_last => 1")  # fmt: skip
        self.spark.sql(f"CALL {procedure}({arguments})").collect()

    def remove_orphan_files(self, table: StoredTable) -> None:
        """Delete the files under ``table``'s location that no snapshot names and that are
        older than ``orphan_age`` seconds (not more often than ``orphan_interval``)."""
        now = time.monotonic()
        last = self._orphans_removed.get(table.id)
        if last is not None and now - last < self.orphan_interval:
            return
        procedure = f"{self.catalog.name}.system.remove_orphan_files"
        arguments = (f"table => '{self._literal(table.ref)}', older_than => TIMESTAMP "
                     f"'{_timestamp(time.time() - self.orphan_age)}'")  # fmt: skip
        removed = self.spark.sql(f"CALL {procedure}({arguments})").collect()
        self._orphans_removed[table.id] = now
        if removed:
            logger.info("removed %d orphan files of %s", len(removed), table.ref)

    def _literal(self, ref: TableRef) -> str:
        """``ref``'s name as a procedure's string argument."""
        return string_text(self.catalog.sql_name(ref))


def _timestamp(seconds: float) -> str:
    """A Spark TIMESTAMP literal's text for the epoch ``seconds``, in UTC, to the
    millisecond (Iceberg keeps milliseconds)."""
    whole = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))
    return f"{whole}.{int(seconds * 1000) % 1000:03d}+00:00"


def _sort_by_key(definition: TableDef) -> str:
    """The arguments of ``rewrite_data_files`` that sort a table by its primary key (none
    for a table without one: files are then packed as they are)."""
    if not definition.primary_key:
        return ""
    columns = (definition.columns[i].name for i in definition.primary_key)
    order = ", ".join(f"{quote_name(name)} ASC NULLS FIRST" for name in columns)
    return f"strategy => 'sort', sort_order => '{string_text(order)}', "
