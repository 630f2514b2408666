"""The Spark storage engine: merge-on-read tables with group commit (architecture §5).

Applying works exactly as in the in-memory engine, which this engine extends: row locks, key
checks against an in-memory copy of every table (its key index, rebuilt from Spark at start),
staged changes made visible at commit, in commit order. Each commit also lands in the commit
log (``commit_log``). One flusher thread per engine makes them durable in groups: every
``flush_interval`` seconds, or sooner when ``flush_rows`` changed rows wait, it writes each
touched table's changes as one change-log batch with Spark, then records the batch, the table
files and the executed GTID set in one metadata transaction (``SparkStateStore``): the commit
point. DDL is replayed there too, alone, after everything before it is durable.

Durability is in the background (``background_durability``): ``commit`` never waits for a
flush; the applier holds the relay log files of a transaction until ``after_durable`` says its
batch is recorded, so a crash loses nothing the relay log does not still hold, and the GTIDs
recorded are exactly those whose changes are in recorded batches.

Compaction runs on the flusher thread between flushes: a table with ``compact_after``
batches gets a new generation whose base is its merged content, so the files a query reads
stay bounded. Old files go once no query's snapshot pins them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from spark_replica.applier_core.errors import ReplicaError
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.storage.ddl import (
    AlterTable,
    DdlOperation,
    RenameTable,
    no_such_table,
)
from spark_replica.applier_core.storage.group_commit import EngineStats
from spark_replica.applier_core.storage.interface import ExecMode, Row, TableRef, TransactionRef
from spark_replica.applier_core.storage.locks import DEFAULT_LOCK_WAIT_TIMEOUT
from spark_replica.applier_core.storage.memory import InMemoryEngine
from spark_replica.applier_core.storage.memory_tables import Stage
from spark_replica.applier_core.storage.prepared_xa import XaChanges
from spark_replica.applier_core.storage.spark.commit_log import (
    Commit,
    TableChanges,
    base_table,
    collect,
    log_table,
)
from spark_replica.applier_core.storage.spark.ddl_state import apply_ddl
from spark_replica.applier_core.storage.spark.files import WarehouseFiles
from spark_replica.applier_core.storage.spark.layout import (
    base_dir,
    batch_dir,
    generation_dir,
    merged_sql,
    table_dir,
)
from spark_replica.applier_core.storage.spark.recovery import recover
from spark_replica.applier_core.storage.spark.snapshots import Snapshot, SnapshotRegistry
from spark_replica.applier_core.storage.spark.state import (
    DurableState,
    SparkStateStore,
    StoredTable,
)

logger = logging.getLogger(__name__)

#: Seconds between flushes while commits wait.
DEFAULT_FLUSH_INTERVAL = 0.5
#: Changed rows that start a flush before the interval ends.
DEFAULT_FLUSH_ROWS = 50_000
#: Change-log batches a table gathers before compaction rewrites its base.
DEFAULT_COMPACT_AFTER = 16
#: Seconds the flusher waits before trying again after a failed flush.
RETRY_DELAY = 1.0
#: Arrow bytes per parquet file of a batch or base: most batches are one file.
FILE_BYTES = 128 << 20
#: Arrow bytes handed to Spark at once. A larger batch (one large transaction) goes over in
#: slices of about this size, each written by its own job into the batch's directory, so the
#: driver JVM holds one slice (and the task made of it), never the whole batch: a 1 GiB
#: transaction is flushed by a driver with the default heap.
SLICE_BYTES = 32 << 20


class SparkEngine(InMemoryEngine):
    """Tables in Spark (parquet under ``root``), state in ``store``. ``close`` ends it."""

    def __init__(
        self,
        spark: Any,
        root: str,
        store: SparkStateStore,
        *,
        exec_mode: ExecMode = ExecMode.STRICT,
        lock_wait_timeout: float = DEFAULT_LOCK_WAIT_TIMEOUT,
        flush_interval: float = DEFAULT_FLUSH_INTERVAL,
        flush_rows: int = DEFAULT_FLUSH_ROWS,
        compact_after: int = DEFAULT_COMPACT_AFTER,
    ) -> None:
        super().__init__(exec_mode=exec_mode, lock_wait_timeout=lock_wait_timeout)
        self.spark = spark
        self.root = root.rstrip("/")
        self.flush_interval = flush_interval
        self.flush_rows = flush_rows
        self.compact_after = compact_after
        self._store = store
        self._files = WarehouseFiles(spark)
        state = store.load_spark_state()
        self._catalog, self._tables = recover(spark, self._files, self.root, state)
        self._state = state
        self._prepared = state.prepared_xa
        self._gtids = GtidSet.from_intervals(state.gtids)
        self.snapshots = SnapshotRegistry(spark, self.root, state)
        # _cond guards the commit log and counters below; the flusher waits on it.
        self._cond = threading.Condition()
        self._log: list[Commit] = []
        self._log_rows = 0
        self._commits = 0
        self._durable = 0
        self._maintained = 0  # commits whose flush's maintenance is done
        self._flushes = 0
        self._forced = 0  # flush() calls waiting
        self._callbacks: list[tuple[int, Callable[[], None]]] = []
        self._closing = False
        self._closed = False
        self._deferred_deletes: list[tuple[str, int, int | None]] = []
        #: The error of the last failed flush (None once a flush succeeds again).
        self.flush_error: BaseException | None = None
        #: The last flush failed while a ``flush()`` call waited: that call raises.
        self._forced_failed = False
        self._thread = threading.Thread(target=self._run, name="spark-engine-flusher")
        self._thread.start()

    def __repr__(self) -> str:
        return (
            f"SparkEngine({self.root!r}, tables={len(self._tables)}, batch="
            f"{self._state.last_batch}, {self.stats()})"
        )

    # -- the storage-engine interface ----------------------------------------------------------

    @property
    def background_durability(self) -> bool:
        return True

    def after_durable(self, callback: Callable[[], None]) -> None:
        with self._cond:
            if self._durable < self._commits:
                self._callbacks.append((self._commits, callback))
                return
        callback()

    def stats(self) -> EngineStats:
        with self._cond:
            return EngineStats(self._commits, self._flushes, self._commits - self._durable)

    def flush(self) -> None:
        """Return once every commit made so far is durable (flushing at once) and the
        maintenance after that flush (compaction, deleting unused files) is done.

        Raises:
            RuntimeError: the engine is closed, or a flush attempt made while this call
                waited failed (``flush_error``; the flusher tries again, and so may the
                caller).
        """
        with self._cond:
            target = self._commits
            self._forced_failed = False  # an earlier attempt's failure is not this call's
            self._forced += 1
            self._cond.notify_all()
            try:
                while self._maintained < target:
                    if self._closed:
                        raise RuntimeError("the Spark engine is closed")
                    if self.flush_error is not None and self._forced_failed:
                        raise RuntimeError(f"flush failed: {self.flush_error}")
                    self._cond.wait()
            finally:
                self._forced -= 1

    def wait_for(self, predicate: Callable[[EngineStats], bool], timeout: float) -> bool:
        def check() -> bool:
            return predicate(
                EngineStats(self._commits, self._flushes, self._commits - self._durable)
            )

        with self._cond:
            return self._cond.wait_for(check, timeout)

    def _flush(self, group: int) -> None:
        """Sessions never wait for a flush (``background_durability``)."""

    def _committed(
        self,
        trx: TransactionRef,
        ddl: Sequence[DdlOperation],
        stages: dict[TableRef, Stage],
        xa: XaChanges,
    ) -> int:
        changes = tuple(
            TableChanges(
                ref,
                stage.table.definition,
                stage.changes if stage.table.key_of is not None else None,
                stage.deltas if stage.table.key_of is None else None,
            )
            for ref, stage in stages.items()
            if stage.changes or stage.deltas
        )
        rewrites = self._rewrites(ddl) if ddl else {}
        with self._cond:
            self._commits += 1
            commit = Commit(self._commits, trx, changes, tuple(ddl), rewrites, xa or None)
            self._log.append(commit)
            self._log_rows += commit.rows
            if self._log_rows >= self.flush_rows or len(self._log) == 1:
                self._cond.notify_all()
            return self._commits

    def _rewrites(self, ddl: Sequence[DdlOperation]) -> dict[TableRef, list[Row]]:
        """The rows of every table an ALTER in ``ddl`` rewrote, by its final name (called
        under the mutex, after the DDL ran)."""
        rewrites: dict[TableRef, list[Row]] = {}
        for index, operation in enumerate(ddl):
            if not isinstance(operation, AlterTable):
                continue
            ref = operation.table
            for later in ddl[index + 1 :]:
                if isinstance(later, RenameTable) and later.old == ref:
                    ref = later.new
            table = self._tables.get(ref)
            if table is not None:
                rewrites[ref] = table.snapshot()
        return rewrites

    # -- queries -------------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The recorded state for one query (release it when the query is done)."""
        return self.snapshots.acquire()

    def durable_state(self) -> DurableState:
        return self._state

    def merged_sql(self, ref: TableRef) -> str:
        """Spark SQL for ``ref``'s content at the last recorded batch."""
        table = self._state.tables.get(ref)
        if table is None:
            raise no_such_table(ref)
        return merged_sql(self.root, table)

    # -- lifecycle -----------------------------------------------------------------------------

    def close(self) -> None:
        """Flush what is committed, stop the flusher and join it. Idempotent."""
        with self._cond:
            if self._closing:
                already = True
            else:
                already = False
                self._closing = True
                self._cond.notify_all()
        if not already or self._thread.is_alive():
            self._thread.join()
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    # -- the flusher thread --------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                commits = self._take()
                if commits is None:
                    return
            try:
                self._write(commits)
            except Exception as error:  # a Spark or metadata failure: retry later
                logger.exception("flush of %d commits failed; retrying", len(commits))
                with self._cond:
                    self.flush_error = error
                    self._forced_failed = self._forced > 0
                    self._log[:0] = commits
                    self._log_rows += sum(c.rows for c in commits)
                    self._cond.notify_all()
                    if self._closing:
                        return  # the commits stay in the relay log for the next start
                    self._cond.wait(RETRY_DELAY)
                continue
            with self._cond:
                self.flush_error = None
                self._forced_failed = False
            self._maintain()
            with self._cond:
                self._maintained = self._durable
                self._cond.notify_all()

    def _take(self) -> list[Commit] | None:
        """Wait (holding ``_cond``) until a flush is due; the commits to flush, or None when
        the engine closes with nothing left to flush."""
        deadline: float | None = None
        while True:
            if self._log:
                if deadline is None:
                    deadline = time.monotonic() + self.flush_interval
                due = (
                    self._closing
                    or self._forced > 0
                    or self._log_rows >= self.flush_rows
                    or time.monotonic() >= deadline
                )
                if due:
                    commits, self._log, self._log_rows = self._log, [], 0
                    return commits
                self._cond.wait(max(0.0, deadline - time.monotonic()))
                continue
            if self._closing:
                return None
            self._cond.wait()

    def _write(self, commits: list[Commit]) -> None:
        """Make ``commits`` durable: runs of row changes as one batch, DDL alone."""
        start = 0
        for index, commit in enumerate(commits):
            if commit.ddl:
                if start < index:
                    self._write_batch(commits[start:index])
                self._write_ddl(commit)
                start = index + 1
        if start < len(commits):
            self._write_batch(commits[start:])

    def _write_batch(self, commits: Sequence[Commit]) -> None:
        state = self._state
        batch = state.last_batch + 1
        tables = self._write_changes(commits, batch, state.tables)
        self._record(commits, state.with_tables(tables, last_batch=batch))

    def _write_changes(
        self, commits: Sequence[Commit], batch: int, tables: Mapping[TableRef, StoredTable]
    ) -> dict[TableRef, StoredTable]:
        """Write the net changes of ``commits`` as batch ``batch`` of each touched table;
        the tables with that batch added."""
        result = dict(tables)
        for ref, pending in collect(commits, batch).items():
            stored = result.get(ref)
            if stored is None or (data := log_table(pending)) is None:
                continue
            self._write_parquet(data, batch_dir(self.root, stored, batch))
            result[ref] = stored.with_batch(batch)
        return result

    def _write_ddl(self, commit: Commit) -> None:
        state = self._state
        batch = state.last_batch + 1
        outcome = apply_ddl(state, commit.ddl, commit.rewrites, self._write_base)
        after = outcome.state
        # Rows of tables the transaction created (CREATE TABLE ... SELECT is logged that way).
        tables = self._write_changes([commit], batch, after.tables)
        self._record([commit], after.with_tables(tables, last_batch=batch))
        for table_id in outcome.dropped:
            self._delete_later(table_dir(self.root, table_id), table_id, None)
        for old in outcome.obsolete:
            self._delete_later(generation_dir(self.root, old), old.id, old.generation)

    def _write_base(self, table: StoredTable, rows: list[Row]) -> bool:
        if not rows:
            return False
        self._write_parquet(base_table(table.definition, rows), base_dir(self.root, table))
        return True

    def _write_parquet(self, data: pa.Table, path: str) -> None:
        """Write ``data`` as the parquet files of ``path`` (replacing what a failed attempt
        left there), in slices of ``SLICE_BYTES``."""
        for number, part in enumerate(slices(data, SLICE_BYTES)):
            frame, files = self._frame(part)
            self._write_frame(frame, files, path, append=number > 0)

    def _frame(self, data: pa.Table) -> tuple[Any, int]:
        """A Spark DataFrame of ``data``, and how many files to write it as: one per
        ``FILE_BYTES`` of Arrow data, so that a large batch (one large transaction) is
        written by several tasks rather than gathered into one."""
        from pyspark.sql.pandas.types import from_arrow_schema

        schema = from_arrow_schema(data.schema, prefer_timestamp_ntz=True)
        frame = self.spark.createDataFrame(data, schema=schema)
        return frame, max(1, -(-data.nbytes // FILE_BYTES))

    def _write_frame(self, frame: Any, files: int, path: str, *, append: bool = False) -> None:
        frame.coalesce(files).write.mode("append" if append else "overwrite").parquet(path)
        # Arrow keeps freed buffers for reuse; a large batch's would stay in the process.
        pa.default_memory_pool().release_unused()

    def _record(self, commits: Sequence[Commit], after: DurableState) -> None:
        """The commit point: record ``after`` with the commits' GTIDs, then tell waiters."""
        gtids = self._gtids.copy()
        prepared = after.prepared_xa
        for commit in commits:
            _add_gtid(gtids, commit.trx.gtid)
            if commit.xa is not None:
                prepared = commit.xa.applied_to(prepared)
        after = after.with_tables(
            after.tables, gtids=tuple(gtids.intervals()), prepared_xa=prepared
        )
        self._store.commit_spark_state(self._state, after)
        self._state, self._gtids = after, gtids
        self.snapshots.publish(after)
        last = commits[-1].number
        with self._cond:
            self._durable = last
            self._flushes += 1
            ready = [cb for number, cb in self._callbacks if number <= last]
            self._callbacks = [(n, cb) for n, cb in self._callbacks if n > last]
            self._cond.notify_all()
        for callback in ready:
            try:
                callback()
            except Exception:
                logger.exception("a callback after a durable flush failed")

    # -- compaction and file cleanup (flusher thread) ------------------------------------------

    def _maintain(self) -> None:
        for table in list(self._state.tables.values()):
            if len(table.batches) >= self.compact_after:
                try:
                    self.compact(table.ref)
                except Exception:
                    logger.exception("compaction of %s failed; it is tried again later",
                                     table.ref)  # fmt: skip
        # Views first: dropping a view makes Spark look at its files.
        self.snapshots.forget_unused_views()
        self._delete_unpinned()

    def compact(self, ref: TableRef) -> None:
        """Rewrite ``ref``'s base from its merged content as a new generation (flusher thread
        or, in tests, a thread that owns the engine while nothing commits)."""
        state = self._state
        old = state.tables[ref]
        new = old.next_generation(base=True)
        frame = self.spark.sql(merged_sql(self.root, old, names=False))
        frame.write.mode("overwrite").parquet(base_dir(self.root, new))
        tables = dict(state.tables)
        tables[ref] = new
        after = state.with_tables(tables)
        self._store.commit_spark_state(state, after)
        self._state = after
        self.snapshots.publish(after)
        self._delete_later(generation_dir(self.root, old), old.id, old.generation)

    def _delete_later(self, path: str, table_id: int, generation: int | None) -> None:
        """Delete ``path`` once no snapshot reads it (``_maintain``, after every flush)."""
        self._deferred_deletes.append((path, table_id, generation))

    def _delete_unpinned(self) -> None:
        kept = []
        for path, table_id, generation in self._deferred_deletes:
            if self.snapshots.pinned(table_id, generation):
                kept.append((path, table_id, generation))
                continue
            try:
                self._files.delete(path)
            except Exception:
                logger.warning("could not delete %s; recovery removes it", path, exc_info=True)
        self._deferred_deletes = kept


def slices(data: pa.Table, size: int) -> list[pa.Table]:
    """``data`` cut by rows into tables of about ``size`` bytes each (views, not copies);
    at least one, even when ``data`` has no rows."""
    rows = data.num_rows
    if data.nbytes <= size or rows <= 1:
        return [data]
    per_slice = max(1, rows * size // data.nbytes)
    return [data.slice(start, per_slice) for start in range(0, rows, per_slice)]


def _add_gtid(gtids: GtidSet, text: str) -> None:
    """Add the GTID ``uuid[:tag]:number`` to ``gtids``; anything else (an anonymous
    transaction, a test's placeholder) adds nothing."""
    parts = text.split(":")
    if len(parts) in (2, 3) and parts[-1].isdigit() and len(parts[0]) == 36:
        gtids.add(parts[0].lower(), parts[1].lower() if len(parts) == 3 else "", int(parts[-1]))
        return
    try:
        gtids.update(GtidSet.parse(text))
    except ReplicaError:
        pass
