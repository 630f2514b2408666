"""The Spark storage engine: Iceberg tables with group commit (architecture §5).

Applying works exactly as in the in-memory engine, which this engine extends: row locks, key
checks, staged changes made visible at commit, in commit order. The committed content the
key checks read is the key index on disk (``key_index``: every table's rows by key, as of the
last commit point) under an in-memory overlay of the commits not yet flushed
(``indexed_tables``); neither the tables nor the index are read into memory at start. Each
commit also lands in the commit log (``commit_log``). One flusher thread per engine makes
them durable in groups: every ``flush_interval`` seconds, or sooner when ``flush_rows``
changed rows wait, it commits each touched table's net changes to its Iceberg table
(``table_writes``: one commit per table, the batch number and executed GTID set in the
snapshot's summary), then records every table's snapshot id and the executed GTID set in one
metadata transaction (``SparkStateStore``): the commit point. Between the Iceberg commits and
the commit point the flush applies the same changes to the key index as batch N
(``LmdbKeyIndex.apply``); after the commit point it drops the overlay entries the index now
holds. DDL is replayed there too, alone, after everything before it is durable
(``ddl_state``).

At start the key index is brought to the recorded commit point (``align``: a batch applied
after it is undone); an index that is missing, of another codec, or further off is rebuilt
from the Iceberg tables at their recorded snapshots, read in slices (``iter_rows``).

Durability is in the background (``background_durability``): ``commit`` never waits for a
flush; the applier holds the relay log files of a transaction until ``after_durable`` says its
batch is recorded, so a crash loses nothing the relay log does not still hold, and the GTIDs
recorded are exactly those whose changes are in recorded snapshots (``recovery`` sets every
table back to them).

The engine works in a Spark session of its own (``spark.newSession()``): its catalog, the
snapshot properties it sets per flush and its temporary views are not the caller's.
Compaction, snapshot expiry and the purge of dropped tables run on a maintenance thread
(``maintenance``) while flushes go on; the flusher records what it compacted.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from spark_replica.applier_core import failpoints
from spark_replica.applier_core.errors import ReplicaError
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.storage.ddl import no_such_table
from spark_replica.applier_core.storage.ddl_operations import (
    AlterTable,
    DdlOperation,
    RenameTable,
)
from spark_replica.applier_core.storage.group_commit import EngineStats
from spark_replica.applier_core.storage.interface import (
    ExecMode,
    Row,
    TableDef,
    TableRef,
    TransactionRef,
)
from spark_replica.applier_core.storage.key_index import (
    Difference,
    KeyIndexError,
    KeyIndexIncompatible,
    KeyIndexOutOfDate,
    LmdbKeyIndex,
)
from spark_replica.applier_core.storage.key_index import TableChanges as IndexChanges
from spark_replica.applier_core.storage.locks import DEFAULT_LOCK_WAIT_TIMEOUT
from spark_replica.applier_core.storage.memory_tables import CommittedTable, Stage, hashable
from spark_replica.applier_core.storage.prepared_xa import XaChanges
from spark_replica.applier_core.storage.spark.beside import Beside
from spark_replica.applier_core.storage.spark.catalog import DROPPED, IcebergCatalog, namespace_name
from spark_replica.applier_core.storage.spark.commit_log import (
    Commit,
    PendingChanges,
    Rewrite,
    Staged,
    TableChanges,
    collect,
)
from spark_replica.applier_core.storage.spark.ddl_state import DdlOutcome, apply_ddl
from spark_replica.applier_core.storage.spark.driver import driver_gone
from spark_replica.applier_core.storage.spark.iceberg import catalog_options, is_local, local_path
from spark_replica.applier_core.storage.spark.indexed_tables import Content, IndexedTable
from spark_replica.applier_core.storage.spark.maintenance import ORPHAN_AGE, Maintenance
from spark_replica.applier_core.storage.spark.migration import migrate
from spark_replica.applier_core.storage.spark.queries import SparkQueries
from spark_replica.applier_core.storage.spark.recovery import (
    load_catalog,
    reconcile,
)
from spark_replica.applier_core.storage.spark.session import activate, active
from spark_replica.applier_core.storage.spark.snapshots import (
    Snapshot,
    SnapshotRegistry,
    pinned_sql,
)
from spark_replica.applier_core.storage.spark.state import (
    CommitPointMoved,
    DurableState,
    SparkStateStore,
    StoredTable,
)
from spark_replica.applier_core.storage.spark.table_writes import (
    IndexDisagrees,
    append_rows,
    iter_rows,
    write_changes,
)
from spark_replica.applier_core.storage.store import StoreBacked, TransactionalStore

logger = logging.getLogger(__name__)

#: Seconds between flushes while commits wait.
DEFAULT_FLUSH_INTERVAL = 0.5
#: Changed rows that start a flush before the interval ends.
DEFAULT_FLUSH_ROWS = 50_000
#: Changed rows committed and not flushed before committing sessions wait (``throttle``).
DEFAULT_MAX_UNFLUSHED_ROWS = 100_000
#: Bytes of the key index's file the process keeps mapped in memory at most between two
#: flushes (``LmdbKeyIndex.resident_limit``).
DEFAULT_KEY_INDEX_MEMORY = 64 * 1024 * 1024
#: Seconds between a waiting session's checks (it is woken at each flush's end too).
THROTTLE_CHECK = 1.0
#: Seconds between looks at whether the Spark driver JVM runs, while nothing is flushed.
LIVENESS_INTERVAL = 1.0
#: Change-log batches a table gathers before compaction rewrites its base.
DEFAULT_COMPACT_AFTER = 16
#: Seconds of snapshots a table keeps for time travel when it is compacted (older ones are
#: expired, with the files only they read).
DEFAULT_SNAPSHOT_RETENTION = 300.0
#: Seconds the flusher waits before trying again after a failed flush.
RETRY_DELAY = 1.0
#: Failures of a flush that trying it again meets again, so flushing stops with them: the
#: key index disagreeing with a table, or refusing a batch (``KeyIndexError``: a bug in what
#: asked it), and Python's own errors of type and value. The others (Spark's, the metadata
#: database's, the disk's) may pass: the flush is tried again.
DETERMINISTIC = (
    IndexDisagrees,
    KeyIndexError,
    TypeError,
    ValueError,
    LookupError,
    AttributeError,
    ArithmeticError,
    AssertionError,
    NameError,
)
#: The Iceberg catalog's name: in Spark (``spark.table("replica.shop.orders")``) and in the
#: metadata database's catalog tables, where pyiceberg finds it by the same name.
DEFAULT_CATALOG = "replica"
#: Snapshot summary properties of every commit a flush makes.
BATCH_PROPERTY = "replica.batch"
GTIDS_PROPERTY = "replica.gtids"
_SESSION_PROPERTY = "spark.sql.iceberg.snapshot-property."


def default_key_index_path(root: str) -> str:
    """The key index's directory for the warehouse ``root``: ``key-index`` beside it. A
    warehouse elsewhere than on this machine has no such place: refused."""
    if not is_local(root):
        raise ValueError(f"the key index must be a local directory: give key_index for {root}")
    path = local_path(root).rstrip("/")
    return os.path.join(os.path.dirname(path), "key-index")


class SparkEngine(StoreBacked):
    """Tables in Iceberg (files under ``root``, catalog ``catalog`` in the metadata
    database, further catalog properties ``catalog_properties``: an object store's, for
    one), state in ``store``, the key index in ``key_index`` (a local directory; ``key-index``
    beside a local warehouse by default). ``close`` ends it."""

    def __init__(
        self,
        spark: Any,
        root: str,
        store: SparkStateStore,
        *,
        catalog: str = DEFAULT_CATALOG,
        exec_mode: ExecMode = ExecMode.STRICT,
        lock_wait_timeout: float = DEFAULT_LOCK_WAIT_TIMEOUT,
        flush_interval: float = DEFAULT_FLUSH_INTERVAL,
        flush_rows: int = DEFAULT_FLUSH_ROWS,
        max_unflushed_rows: int = DEFAULT_MAX_UNFLUSHED_ROWS,
        key_index_memory: int = DEFAULT_KEY_INDEX_MEMORY,
        compact_after: int = DEFAULT_COMPACT_AFTER,
        snapshot_retention: float = DEFAULT_SNAPSHOT_RETENTION,
        key_index: str | None = None,
        catalog_properties: Mapping[str, str] | None = None,
        orphan_age: float = ORPHAN_AGE,
    ) -> None:
        self.store = TransactionalStore(
            self, exec_mode=exec_mode, lock_wait_timeout=lock_wait_timeout
        )
        self.root = root.rstrip("/")
        self.key_index_path = key_index or default_key_index_path(self.root)
        self.key_index_memory = key_index_memory
        self.spark = engine_session(
            spark, catalog, store.catalog_url(), self.root, catalog_properties
        )
        self.flush_interval = flush_interval
        self.flush_rows = flush_rows
        self.max_unflushed_rows = max(max_unflushed_rows, flush_rows)
        self.compact_after = compact_after
        self.snapshot_retention = snapshot_retention
        self._metadata = store
        with active(self.spark):  # recovery and migration commit from the calling thread
            self.iceberg = IcebergCatalog(self.spark, catalog, self.root)
            state = store.load_spark_state()
            reconcile(self.iceberg, state)
            state = migrate(self.spark, self.iceberg, store, state)
            self.index = self._open_key_index(state)
            tables: dict[TableRef, CommittedTable] = {
                ref: IndexedTable(ref, stored.definition, Content.stored(self.index, stored.id))
                for ref, stored in state.tables.items()
            }
            self.store.load(load_catalog(state), tables, state.prepared_xa)
        self._state = state
        self._gtids = GtidSet.from_intervals(state.gtids)
        self.snapshots = SnapshotRegistry(self.iceberg, state)
        # _cond guards the commit log and counters below; the flusher waits on it.
        self._cond = threading.Condition()
        self._log: list[Commit] = []
        self._log_rows = 0
        self._flushing_rows = 0  # rows of the flush under way (in memory until it ends)
        self._throttled = 0  # sessions waiting in throttle
        self._commits = 0
        self._durable = 0
        self._maintained = 0  # commits whose flush's maintenance is done
        self._flushes = 0
        self._forced = 0  # flush() calls waiting
        self._callbacks: list[tuple[int, Callable[[], None]]] = []
        self._closing = False
        self._closed = False
        #: Namespaces of dropped databases (their tables moved aside), dropped after a flush.
        self._dropped_databases: set[str] = set()
        #: Maintenance rounds finished and not recorded yet; records made of them.
        self._finished: list[tuple[int, list[StoredTable]]] = []
        self._records = 0
        #: The error of the last failed flush (None once a flush succeeds again).
        self.flush_error: BaseException | None = None
        #: The last flush failed while a ``flush()`` call waited: that call raises.
        self._forced_failed = False
        #: The commit point moved under the engine (another process), or the Spark driver
        #: JVM exited: it flushes no more (``failure`` says why).
        self._refused = False
        self.failure: str | None = None
        self._failure_callbacks: list[Callable[[str], None]] = []
        self._maintenance = Maintenance(
            engine_session(spark, catalog, store.catalog_url(), self.root, catalog_properties),
            lambda session: IcebergCatalog(session, catalog, self.root),
            lambda: self._state,
            self.snapshots.pinned,
            self._round_done,
            compact_after=compact_after,
            snapshot_retention=snapshot_retention,
            orphan_age=orphan_age,
        )
        self._thread = threading.Thread(target=self._run, name="spark-engine-flusher")
        self._thread.start()

    def __repr__(self) -> str:
        return (
            f"SparkEngine({self.root!r}, {self.iceberg.name!r}, "
            f"tables={self.store.table_count}, batch={self._state.last_batch}, {self.stats()})"
        )

    # -- the key index -------------------------------------------------------------------------

    def _open_key_index(self, state: DurableState) -> LmdbKeyIndex:
        """The key index at the recorded commit point: as found, one batch undone, or
        rebuilt from the tables."""
        path = self.key_index_path
        try:
            index = LmdbKeyIndex(path, resident_limit=self.key_index_memory)
        except KeyIndexIncompatible as error:
            logger.warning("the key index is rebuilt: %s", error)
            LmdbKeyIndex.remove(path)
            index = LmdbKeyIndex(path, resident_limit=self.key_index_memory)
        try:
            try:
                index.align(state.last_batch)
            except KeyIndexOutOfDate as error:
                logger.warning("the key index is rebuilt: %s", error)
            else:
                index.drop_stages()  # of ALTERs a crash cut off
                if set(index.table_ids()) == {t.id for t in state.tables.values()}:
                    return index
                logger.warning("the key index does not hold the recorded tables: rebuilt")
            rebuild_key_index(self.spark, self.iceberg, index, state)
        except BaseException:
            index.close()
            raise
        return index

    def check_index(self, *, limit: int = 1000) -> dict[TableRef, list[Difference]]:
        """Compare every table at its last commit point with the key index (flushing
        first); the tables that differ, with their differences. Call it while nothing
        commits (a flush meanwhile may show as differences)."""
        self.flush()
        state = self._state
        found: dict[TableRef, list[Difference]] = {}
        with active(self.spark):
            for ref, stored in state.tables.items():
                key_of = IndexedTable(ref, stored.definition, Content(self.index, None)).key_of
                rows = _index_rows(iter_rows(self.spark, self.iceberg, stored), key_of)
                differences = self.index.verify(stored.id, rows, key_of, limit=limit)
                if differences:
                    found[ref] = differences
        return found

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

    def on_failure(self, callback: Callable[[str], None]) -> None:
        with self._cond:
            failure = self.failure
            if failure is None:
                self._failure_callbacks.append(callback)
                return
        callback(failure)

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
                    if self._refused:
                        raise RuntimeError(f"flushing stopped: {self.flush_error}")
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

    def throttled_sessions(self, at_least: int, timeout: float) -> bool:
        """Wait until ``at_least`` sessions wait in ``throttle`` (False: ``timeout``
        seconds passed first)."""
        with self._cond:
            return self._cond.wait_for(lambda: self._throttled >= at_least, timeout)

    # -- the store's durability ----------------------------------------------------------------

    def new_table(self, ref: TableRef, definition: TableDef) -> CommittedTable:
        return IndexedTable(ref, definition, Content(self.index, None))

    def commit_number(self) -> int:
        return self._commits + 1

    def wait_flushed(self, group: int) -> None:
        """Sessions never wait for a flush (``background_durability``)."""

    def throttle(self) -> None:
        """Back-pressure: while more than ``max_unflushed_rows`` changed rows are committed
        and not flushed (the commit log and the tables' overlays hold them in memory), the
        committing session waits for the flusher, so memory stays bounded whatever the
        applier's lead (the relay log keeps what is not applied yet). Not while flushes
        fail or stopped: the session goes on, as it would without a bound."""
        with self._cond:
            self._throttled += 1
            self._cond.notify_all()  # a flush is due (and ``throttled_sessions`` changed)
            try:
                while (
                    self._log_rows + self._flushing_rows > self.max_unflushed_rows
                    and not self._closing
                    and not self._refused
                    and self.flush_error is None
                ):
                    self._cond.wait(THROTTLE_CHECK)
            finally:
                self._throttled -= 1

    def committed(
        self,
        trx: TransactionRef,
        ddl: Sequence[DdlOperation],
        stages: Mapping[TableRef, Stage],
        xa: XaChanges,
        tables: Mapping[TableRef, CommittedTable],
    ) -> int:
        changes = tuple(
            TableChanges(
                ref,
                stage.table.definition,
                stage.changes if stage.table.key_of is not None else None,
                stage.deltas if stage.table.key_of is None else None,
                stage.fresh,
            )
            for ref, stage in stages.items()
            if stage.changes or stage.deltas
        )
        rewrites = _rewrites(ddl, tables) if ddl else {}
        targets = tuple({id(t): t for t in map(tables.__getitem__, stages)}.values())
        after = dict(tables) if ddl else {}
        with self._cond:
            self._commits += 1
            commit = Commit(
                self._commits, trx, changes, tuple(ddl), rewrites, xa or None, targets, after
            )
            self._log.append(commit)
            self._log_rows += commit.rows
            if self._log_rows >= self.flush_rows or len(self._log) == 1:
                self._cond.notify_all()
            return self._commits

    def rows(self, table: TableRef) -> list[Row]:
        """The table's rows; once the engine is closed, as its key index holds them at the
        last commit point (everything committed is flushed then)."""
        with self._cond:
            closed = self._closed
        if not closed:
            return self.store.rows(table)
        stored = self._state.tables.get(table)
        if stored is None:
            raise no_such_table(table)
        with LmdbKeyIndex(self.key_index_path) as index:
            content = Content.stored(index, stored.id)
            return IndexedTable(table, stored.definition, content).snapshot()

    # -- queries -------------------------------------------------------------------------------

    def queries(self, max_queries: int) -> SparkQueries:
        """The server's query runner: SELECTs on the recorded snapshots, in the engine's
        session."""
        return SparkQueries(self.spark, self.snapshot, max_queries)

    def snapshot(self) -> Snapshot:
        """The recorded state for one query (release it when the query is done)."""
        return self.snapshots.acquire()

    def durable_state(self) -> DurableState:
        return self._state

    def merged_sql(self, ref: TableRef) -> str:
        """Spark SQL for ``ref``'s content at the last commit point."""
        table = self._state.tables.get(ref)
        if table is None:
            raise no_such_table(ref)
        return pinned_sql(self.iceberg, table)

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
        self._maintenance.close()
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self.index.close()

    # -- the flusher thread --------------------------------------------------------------------

    def _run(self) -> None:
        activate(self.spark)
        while True:
            with self._cond:
                commits = self._take()
                if commits is None:  # closing: no maintenance round any more
                    self._maintained = self._durable
                    self._cond.notify_all()
                    return
                finished, self._finished = self._finished, []
            if finished:
                self._record_maintenance(finished)
            if not commits:
                gone = driver_gone(self.spark)  # looked at while idle, too
                if gone is not None:
                    self._stop_flushing(gone, [])
                    return
                continue
            try:
                self._write(commits)
            except Exception as error:  # a Spark or metadata failure: retry later
                commits = self._unrecorded(commits)
                fatal: Exception | None = driver_gone(self.spark)
                if fatal is None and isinstance(error, CommitPointMoved):
                    fatal = error
                if fatal is None and isinstance(error, DETERMINISTIC):
                    self._undo_unrecorded()
                    fatal = error  # trying again would meet it again
                if fatal is not None:
                    self._stop_flushing(fatal, commits)
                    return  # the commits stay in the relay log for the next start
                logger.exception("flush of %d commits failed; retrying", len(commits))
                self._undo_unrecorded()
                with self._cond:
                    self._requeue(error, commits)
                    if self._closing:
                        return
                    self._cond.wait(RETRY_DELAY)
                continue
            with self._cond:
                self.flush_error = None
                self._forced_failed = False
                self._flushing_rows = 0
                self._cond.notify_all()  # sessions waiting in throttle
                durable = self._durable
            self.snapshots.forget_unused_views()
            self._drop_namespaces()
            self._maintenance.request(durable)

    def _unrecorded(self, commits: list[Commit]) -> list[Commit]:
        """Those of a failed flush's ``commits`` that no commit point recorded: a flush
        records a DDL commit and each run of row changes between them on its own, so a
        failure part-way leaves the first ones durable."""
        with self._cond:
            durable = self._durable
        return [commit for commit in commits if commit.number > durable]

    def _requeue(self, error: BaseException, commits: list[Commit]) -> None:
        """A flush of ``commits`` failed with ``error``: they go back to the head of the
        log (holding ``_cond``)."""
        self.flush_error = error
        self._forced_failed = self._forced > 0
        self._log[:0] = commits
        self._log_rows += sum(c.rows for c in commits)
        self._flushing_rows = 0
        self._cond.notify_all()

    def _stop_flushing(self, error: BaseException, commits: list[Commit]) -> None:
        """Flushing cannot go on in this process (``error``): stop, and tell the
        ``on_failure`` callbacks."""
        raised = error if error.__traceback__ is not None else None  # not a found condition
        logger.error("flushing stops: %s", error, exc_info=raised)
        with self._cond:
            self._requeue(error, commits)
            self._refused = True
            self.failure = str(error)
            callbacks, self._failure_callbacks = self._failure_callbacks, []
        for callback in callbacks:
            callback(str(error))

    def _take(self) -> list[Commit] | None:
        """Wait (holding ``_cond``) until a flush is due; the commits to flush, or None when
        the engine closes with nothing left to flush."""
        deadline: float | None = None
        while True:
            if self._finished:
                return []  # a maintenance round to record first
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
                    self._flushing_rows = sum(c.rows for c in commits)
                    return commits
                self._cond.wait(max(0.0, deadline - time.monotonic()))
                continue
            if self._closing:
                return None
            if not self._cond.wait(LIVENESS_INTERVAL):
                return []  # idle: the flusher looks at the driver JVM

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
        """Make a run of row-change commits durable as one batch: each touched table's
        Iceberg commit and, beside them on a thread of its own, the batch in the key index;
        then the commit point. A failure on either side fails the batch with the key index
        as it was (the retried flush applies it again)."""
        state = self._state
        batch = state.last_batch + 1
        gtids = self._gtids_after(commits)
        changes = collect(commits)
        writes: dict[int, IndexChanges] = {}
        for ref, pending in changes.items():
            stored = state.tables.get(ref)
            if stored is not None:
                writes[stored.id] = IndexChanges(puts=pending.keyed, deltas=pending.deltas)
        timing: dict[str, float] = {}
        started, cpu = time.perf_counter(), time.thread_time()

        def index() -> None:
            index_cpu = time.thread_time()
            self._index_apply(batch, writes)
            timing["index"] = time.perf_counter() - started
            timing["index_cpu"] = time.thread_time() - index_cpu

        indexing = Beside("spark-engine-key-index", index)
        try:
            with self._commit_properties(batch, gtids) as summary:
                tables = self._write_changes(changes, state.tables, summary)
        except BaseException:
            if indexing.join() is None:
                self._undo_index(batch)
            raise
        timing["iceberg"] = time.perf_counter() - started
        timing["iceberg_cpu"] = time.thread_time() - cpu
        error = indexing.join()
        if error is not None:
            raise error
        recording = time.perf_counter()
        self._record(commits, state.with_tables(tables, last_batch=batch), gtids)
        logger.debug(
            "batch %d: %d commits, %d changed rows in %d tables; Iceberg %.3f s (this "
            "thread's CPU %.3f s), key index %.3f s beside it (its CPU %.3f s), commit point "
            "%.3f s", batch, len(commits), sum(c.rows for c in commits), len(changes),
            timing["iceberg"], timing["iceberg_cpu"], timing["index"], timing["index_cpu"],
            time.perf_counter() - recording,
        )  # fmt: skip
        last = commits[-1].number
        with self.store.mutex:
            for table in {id(t): t for c in commits for t in c.targets}.values():
                if isinstance(table, IndexedTable):
                    table.content.drain(last)

    def _write_changes(
        self,
        changes: Mapping[TableRef, PendingChanges],
        tables: Mapping[TableRef, StoredTable],
        summary: Mapping[str, str],
    ) -> dict[TableRef, StoredTable]:
        """Commit the net ``changes`` (``collect``) to each touched table, each snapshot's
        summary carrying ``summary``; the tables with their new snapshots."""
        result = dict(tables)
        for ref, pending in changes.items():
            stored = result.get(ref)
            if stored is None or not write_changes(
                self.spark, self.iceberg, stored, pending, summary
            ):
                continue
            result[ref] = stored.with_snapshot(self.iceberg.committed_since(ref, stored.snapshot))
            failpoints.hit("spark.table_committed")
        return result

    def _write_ddl(self, commit: Commit) -> None:
        state = self._state
        batch = state.last_batch + 1
        gtids = self._gtids_after([commit])
        outcome = apply_ddl(state, commit.ddl)
        with self._commit_properties(batch, gtids) as summary:
            after = self._run_ddl(outcome, commit.rewrites, summary)
            # Rows of tables the transaction created (CREATE TABLE ... SELECT is logged so).
            tables = self._write_changes(collect([commit]), after.tables, summary)
        based = self._index_ddl(batch, commit, outcome, after)
        self._record([commit], after.with_tables(tables, last_batch=batch), gtids)
        with self.store.mutex:
            for table_id, table in based:
                table.content.rebase(table_id, commit.number)
        for rewrite in commit.rewrites.values():
            if isinstance(rewrite, Staged):
                self.index.unstage(rewrite.stage)  # adopted: its rows stay
        self._dropped_databases |= outcome.dropped_databases

    def _index_ddl(
        self, batch: int, commit: Commit, outcome: DdlOutcome, after: DurableState
    ) -> list[tuple[int, IndexedTable]]:
        """Apply a DDL commit to the key index as ``batch``: tables dropped, and created,
        truncated or rewritten ones replaced (with the rows the commit staged in them);
        the tables to rebase on the index once the commit point is recorded."""
        writes: dict[int, IndexChanges] = {}
        for step in outcome.steps:
            if step.kind == "drop":
                writes[step.table_id] = IndexChanges(drop=True)
        based: list[tuple[int, IndexedTable]] = []
        pending = collect([commit])
        for ref, stored in after.tables.items():
            created = stored.id in outcome.created
            if not created and stored.id not in outcome.touched:
                continue
            table = commit.tables.get(ref)
            if not isinstance(table, IndexedTable):
                continue
            evolved = stored.id in outcome.evolved and not created
            rewrite = commit.rewrites.get(ref) if created or evolved else None
            staged, rows = None, None
            if isinstance(rewrite, Staged):
                staged = rewrite.stage
            elif rewrite is not None:
                rows = rewrite
            elif not evolved:  # created empty, or truncated
                rows = []
            if rows is not None and table.key_of is None:
                rows = [hashable(row) for row in rows]
            # An ALTER sharing the table's index entries may read them anew
            # (``IndexedTable.altered``): the layout it reads them by is recorded.
            layout = table.content.layout if evolved and rewrite is None else None
            changes = pending.get(ref)
            writes[stored.id] = IndexChanges(
                puts=changes.keyed if changes else {},
                deltas=changes.deltas if changes else {},
                replace=rows,
                key_of=table.key_of,
                drop=stored.id in writes,
                adopt=staged,
                layout=layout,
            )
            based.append((stored.id, table))
        self._index_apply(batch, writes)
        return based

    def _run_ddl(
        self,
        outcome: DdlOutcome,
        rewrites: Mapping[TableRef, Rewrite],
        summary: Mapping[str, str],
    ) -> DurableState:
        """Run ``outcome``'s catalog steps and create its tables; the state with their
        snapshots."""
        catalog = self.iceberg
        for database in sorted(outcome.databases):
            catalog.create_namespace(namespace_name(database))
        for step in outcome.steps:
            place = (namespace_name(step.table.schema), step.table.table)
            if step.kind == "drop":
                catalog.rename(place, (DROPPED, f"t{step.table_id}"))
            elif step.kind == "rename":
                assert step.to is not None
                catalog.rename(place, (namespace_name(step.to.schema), step.to.table))
            elif step.kind == "evolve":
                assert step.change is not None
                catalog.evolve(step.table, step.change)
            else:  # truncate
                self.spark.sql(f"DELETE FROM {catalog.sql_name(step.table)}")
        if outcome.steps:
            failpoints.hit("spark.ddl_steps")
        tables = dict(outcome.state.tables)
        for ref, table in outcome.state.tables.items():
            changes = 0
            if table.id in outcome.created:
                catalog.create(ref, table.definition, table.id)
                rewrite = rewrites.get(ref)
                if isinstance(rewrite, Staged):
                    rows = map(rewrite.plain, self.index.rows(rewrite.stage))
                    append_rows(self.spark, catalog, table, rows, summary)
                elif rewrite:
                    append_rows(self.spark, catalog, table, rewrite, summary)
            elif table.id not in outcome.touched:
                continue
            elif table.id in outcome.evolved:
                catalog.adopt_properties(ref, table.definition)  # its key may have changed
                catalog.empty_commit(ref)  # a snapshot of the new schema
                changes = table.changes
            tables[ref] = replace(table, snapshot=catalog.current_snapshot(ref), changes=changes)
        return outcome.state.with_tables(tables)

    def _gtids_after(self, commits: Sequence[Commit]) -> GtidSet:
        gtids = self._gtids.copy()
        for commit in commits:
            _add_gtid(gtids, commit.trx.gtid)
        return gtids

    @contextmanager
    def _commit_properties(self, batch: int, gtids: GtidSet) -> Iterator[Mapping[str, str]]:
        """The snapshot summary of every Iceberg commit made meanwhile names ``batch`` and
        the GTID set executed once it is recorded: set on the session for SQL statements,
        and given to the commits made through Iceberg's API."""
        summary = {BATCH_PROPERTY: str(batch), GTIDS_PROPERTY: str(gtids)}
        conf = self.spark.conf
        for key, value in summary.items():
            conf.set(_SESSION_PROPERTY + key, value)
        try:
            yield summary
        finally:
            conf.unset(_SESSION_PROPERTY + BATCH_PROPERTY)
            conf.unset(_SESSION_PROPERTY + GTIDS_PROPERTY)

    def _record(self, commits: Sequence[Commit], after: DurableState, gtids: GtidSet) -> None:
        """The commit point: record ``after`` with the commits' GTIDs, then tell waiters."""
        prepared = after.prepared_xa
        for commit in commits:
            if commit.xa is not None:
                prepared = commit.xa.applied_to(prepared)
        after = after.with_tables(
            after.tables, gtids=tuple(gtids.intervals()), prepared_xa=prepared
        )
        failpoints.hit("spark.before_commit_point")
        self._commit_point(after)
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

    def _commit_point(self, after: DurableState) -> None:
        """Record ``after``. A failure that may have happened after the metadata database
        committed (a connection lost on the way back) is resolved by reading the recorded
        state again: it is ``after``, or the commit point did not move there and the error
        stands."""
        try:
            self._metadata.commit_spark_state(self._state, after)
        except Exception:
            try:
                landed = self._metadata.load_spark_state() == after
            except Exception:
                landed = False
            if not landed:
                self._undo_index(after.last_batch)
                raise
            logger.warning("the commit point of batch %d was recorded despite an error",
                           after.last_batch)  # fmt: skip

    def _index_apply(self, batch: int, writes: Mapping[int, IndexChanges]) -> None:
        """Apply ``batch`` to the key index (beside the flusher's Iceberg commits or after
        them, before its commit point)."""
        if self.index.batch == batch:  # left by a failed commit point whose undo failed
            self.index.undo(batch)
        self.index.apply(batch, writes)

    def _undo_index(self, batch: int) -> None:
        """The commit point of ``batch`` was not recorded: take the batch out of the key
        index again (a restart would)."""
        if self.index.batch != batch:
            return
        try:
            self.index.undo(batch)
        except Exception:
            logger.exception("could not undo batch %d in the key index; a restart will", batch)

    def _undo_unrecorded(self) -> None:
        """After a failed flush: put the catalog back to the recorded state (Iceberg
        commits the flush made to some tables, DDL steps it took), so that trying again
        applies every change once."""
        try:
            reconcile(self.iceberg, self._state)
        except Exception:
            logger.exception("could not put the tables back to the recorded state; a restart "
                             "will")  # fmt: skip

    # -- maintenance (``maintenance``: its own thread; recorded here) -------------------------

    def _round_done(self, number: int, compacted: list[StoredTable]) -> None:
        """The maintenance thread finished round ``number``: the flusher records it."""
        with self._cond:
            self._finished.append((number, compacted))
            self._cond.notify_all()

    def _record_maintenance(self, finished: list[tuple[int, list[StoredTable]]]) -> None:
        """Record the snapshots of the tables finished rounds compacted as a commit point
        (flusher thread, between flushes: every flush before is recorded, so a table's
        current snapshot is its recorded one plus the compaction's)."""
        state = self._state
        tables = dict(state.tables)
        try:
            for _, compacted in finished:
                for before in compacted:
                    current = tables.get(before.ref)
                    if current is None or current.id != before.id:
                        continue  # dropped or rewritten since
                    snapshot = self.iceberg.committed_since(current.ref, current.snapshot)
                    changes = max(0, current.changes - before.changes)
                    tables[current.ref] = replace(current, snapshot=snapshot, changes=changes)
            if tables != state.tables:
                after = state.with_tables(tables, last_batch=state.last_batch + 1)
                self._index_apply(after.last_batch, {})  # the index counts every commit point
                self._commit_point(after)
                self._state = after
                self.snapshots.publish(after)
        except Exception:
            logger.exception("could not record a compaction; it is tried again later")
            self._undo_unrecorded()
        finally:
            with self._cond:
                self._maintained = max(self._maintained, *(n for n, _ in finished))
                self._records += 1
                self._cond.notify_all()

    def compact(self, ref: TableRef) -> None:
        """Compact ``ref`` now, in the calling thread, and return once the flusher recorded
        it (benchmarks and tests; the engine compacts on its maintenance thread)."""
        table = self._state.tables[ref]
        with active(self._maintenance.spark):
            self._maintenance.compact(table)
        with self._cond:
            target = self._records + 1
            self._finished.append((0, [table]))
            self._cond.notify_all()
            while self._records < target and not self._closed:
                self._cond.wait()

    def _drop_namespaces(self) -> None:
        """Drop the namespaces of databases a flush dropped (their tables are aside)."""
        for database in sorted(self._dropped_databases):
            if database in self._state.databases:
                self._dropped_databases.discard(database)
                continue
            try:
                if self.iceberg.drop_namespace(namespace_name(database)):
                    self._dropped_databases.discard(database)
            except Exception:
                logger.warning("could not drop the namespace of %s; tried again later",
                               database, exc_info=True)  # fmt: skip


def _rewrites(
    ddl: Sequence[DdlOperation], tables: Mapping[TableRef, CommittedTable]
) -> dict[TableRef, Rewrite]:
    """The content of every table an ALTER in ``ddl`` rewrote, by its final name (called
    under the store's mutex, after the DDL ran; ``tables``: the store's tables then): its
    stage in the key index, or its rows when it was in memory whole."""
    rewrites: dict[TableRef, Rewrite] = {}
    for index, operation in enumerate(ddl):
        if not isinstance(operation, AlterTable):
            continue
        ref = operation.table
        for later in ddl[index + 1 :]:
            if isinstance(later, RenameTable) and later.old == ref:
                ref = later.new
        table = tables.get(ref)
        if isinstance(table, IndexedTable) and not table.content.complete:
            table_id = table.content.table_id
            assert table_id is not None
            if table_id < 0:  # staged; else the content is shared: the rows stay
                rewrites[ref] = Staged(table_id, table.plain)
        elif table is not None:
            rewrites[ref] = table.snapshot()
    return rewrites


def rebuild_key_index(
    spark: Any, catalog: IcebergCatalog, index: LmdbKeyIndex, state: DurableState
) -> None:
    """Fill ``index`` with every table of ``state`` at its recorded snapshot, read in
    slices (never a whole table in memory), and name the recorded batch."""
    recorded = {t.id for t in state.tables.values()}
    for table_id in index.table_ids():
        if table_id not in recorded:
            index.drop_table(table_id)
    for ref, stored in state.tables.items():
        key_of = IndexedTable(ref, stored.definition, Content(index, None)).key_of
        rows = _index_rows(iter_rows(spark, catalog, stored), key_of)
        index.rebuild(stored.id, rows, key_of)
        logger.info("key index: rebuilt %s (%d rows)", ref, index.size(stored.id))
    index.set_batch(state.last_batch)


def _index_rows(rows: Iterator[Row], key_of: object) -> Iterator[Row]:
    """A table's rows as the index keeps them (a keyless table's ``hashable``)."""
    return rows if key_of is not None else map(hashable, rows)


def engine_session(
    spark: Any,
    catalog: str,
    metadata_url: str,
    root: str,
    properties: Mapping[str, str] | None = None,
) -> Any:
    """A session of ``spark``'s context for one engine, its Iceberg catalog configured (with
    the catalog ``properties``)."""
    session = spark.newSession()
    options = catalog_options(catalog, metadata_url, root, properties)
    # A catalog that caches tables would not see the engine's own snapshot changes made
    # through the Java API at recovery.
    options[f"spark.sql.catalog.{catalog}.cache-enabled"] = "false"
    for key, value in options.items():
        session.conf.set(key, value)
    return session


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
