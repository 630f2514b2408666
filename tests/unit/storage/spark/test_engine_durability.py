"""The Spark engine's durability (architecture §5, issue: group commit, recovery, compaction,
consistent reads): what is recorded at a commit point, what a restart finds, and what a
failed or interrupted flush leaves behind."""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pytest

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.storage import (
    EngineError,
    PreparedXa,
    RowChange,
    TableRef,
    TransactionRef,
)
from spark_replica.applier_core.storage.key_index import KeyIndexError
from spark_replica.applier_core.storage.spark.engine import SparkEngine
from spark_replica.applier_core.storage.spark.state import DurableState
from spark_replica.applier_core.storage.spark.table_writes import slices
from spark_replica.metadata.store import MetadataStore

pytestmark = pytest.mark.spark

UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
T = TableRef("d", "t")
N = TableRef("d", "n")
WAIT = 30.0


@dataclass(frozen=True)
class Map:
    schema: str
    table: str


@dataclass
class GatedStore:
    """A metadata store whose commit point can be held (``hold``) or made to fail."""

    inner: MetadataStore
    gate: threading.Event = field(default_factory=threading.Event)
    reached: threading.Event = field(default_factory=threading.Event)
    fail: bool = False

    def __post_init__(self) -> None:
        self.gate.set()

    def load_spark_state(self) -> DurableState:
        return self.inner.load_spark_state()

    def catalog_url(self) -> str:
        return self.inner.catalog_url()

    def commit_spark_state(self, before: DurableState, after: DurableState) -> None:
        self.reached.set()
        assert self.gate.wait(WAIT)
        if self.fail:
            raise OSError("metadata database unreachable")
        self.inner.commit_spark_state(before, after)


class Writer:
    """Commits transactions one at a time through one session, numbering their GTIDs."""

    def __init__(self, engine: SparkEngine, first: int = 1) -> None:
        self.engine = engine
        self.session = engine.session("writer")
        self.gno = first - 1

    def ddl(self, statement: str) -> None:
        self._run(lambda: self.session.apply_ddl(statement, "d"))

    def rows(self, table: TableRef, changes: list[RowChange]) -> None:
        self._run(lambda: self.session.apply_rows(Map(table.schema, table.table), changes))

    def run(self, apply: Any) -> None:
        """Commit one transaction made of what ``apply`` does in the session."""
        self._run(apply)

    def _run(self, apply: Any) -> None:
        self.gno += 1
        self.session.begin(TransactionRef(f"{UUID}:{self.gno}", self.gno))
        try:
            apply()
        except EngineError:
            self.session.rollback()
            raise
        self.session.commit()


def start(spark: Any, place: tuple[str, Any], **options: Any) -> SparkEngine:
    root, store = place
    options.setdefault("flush_interval", 0.05)
    return SparkEngine(spark, root, store, **options)


def setup_tables(writer: Writer) -> None:
    writer.ddl("CREATE DATABASE d")
    writer.ddl("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
    writer.ddl("CREATE TABLE n (a INT, b VARCHAR(10))")


def one_row_durable(spark: Any, place: Any) -> tuple[SparkEngine, Writer, DurableState]:
    """An engine with the tables of ``setup_tables`` and one row of ``t``, flushed; its
    writer and the recorded state."""
    engine = start(spark, place)
    writer = Writer(engine)
    setup_tables(writer)
    writer.rows(T, [RowChange.insert((1, "a"))])
    engine.flush()
    return engine, writer, engine.durable_state()


def test_a_restart_finds_exactly_what_was_flushed(spark: Any, place: Any) -> None:
    engine = start(spark, place)
    writer = Writer(engine)
    setup_tables(writer)
    writer.rows(T, [RowChange.insert((i, f"v{i}")) for i in range(100)])
    writer.rows(T, [RowChange.update((1, "v1"), (1, "one")), RowChange.delete((2, "v2"))])
    writer.rows(N, [RowChange.insert((1, "x")), RowChange.insert((1, "x"))])
    writer.rows(N, [RowChange.delete((1, "x")), RowChange.insert((2, "y"))])
    engine.flush()
    engine.close()

    again = start(spark, place)
    try:
        rows = dict(again.rows(T))  # type: ignore[arg-type]
        assert len(rows) == 99 and rows[1] == "one" and 2 not in rows
        assert sorted(again.rows(N)) == [(1, "x"), (2, "y")]
        assert again.durable_state().gtids == ((UUID, "", 1, 7),)
        assert GtidSet.from_intervals(place[1].load_gtid_executed()) == GtidSet.parse(f"{UUID}:1-7")
        # The key index came back too: a duplicate insert is refused (STRICT).
        with pytest.raises(EngineError) as caught:
            Writer(again, 8).rows(T, [RowChange.insert((5, "dup"))])
        assert caught.value.code == 1062
    finally:
        again.close()


def data_files(engine: SparkEngine, table: TableRef) -> int:
    """How many data files the table's recorded snapshot reads."""
    stored = engine.durable_state().tables[table]
    name = engine.iceberg.sql_name(table)
    return int(
        engine.spark.sql(
            f"SELECT COUNT(*) FROM {name}.data_files VERSION AS OF {stored.snapshot}"
        ).collect()[0][0]
    )


def test_a_large_batch_is_written_as_several_files_and_read_back_whole(
    spark: Any, place: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flush larger than ``FILE_BYTES`` (one large transaction) is written by several
    tasks, one file each, rather than gathered into one task; a restart reads it whole."""
    monkeypatch.setattr("spark_replica.applier_core.storage.spark.table_writes.FILE_BYTES", 4096)
    engine = start(spark, place)
    writer = Writer(engine)
    setup_tables(writer)
    engine.flush()
    writer.rows(T, [RowChange.insert((i, f"v{i}")) for i in range(2000)])
    engine.flush()
    assert data_files(engine, T) > 1
    engine.close()

    again = start(spark, place)
    try:
        assert sorted(again.rows(T)) == [(i, f"v{i}") for i in range(2000)]  # type: ignore[arg-type]
    finally:
        again.close()


def test_a_flush_adds_one_data_file_and_the_manifests_stay_merged(spark: Any, place: Any) -> None:
    """Between compactions a read pays for every file and manifest the flushes added: a
    flush of a keyed table's updates, deletes and inserts adds one data file (the rows it
    replaces are deleted by deletion vectors, every new image written in one file) and each
    commit merges the manifests (requirement: reads between compactions stay fast)."""
    engine = start(spark, place, compact_after=1000)
    try:
        writer = Writer(engine)
        setup_tables(writer)
        writer.rows(T, [RowChange.insert((i, "a")) for i in range(100)])
        engine.flush()
        for n in range(1, 6):
            writer.rows(T, [RowChange.update((n, "a"), (n, "b")), RowChange.delete((50 + n, "a")),
                            RowChange.insert((100 + n, "c"))])  # fmt: skip
            engine.flush()
        assert data_files(engine, T) == 1 + 5
        name = engine.iceberg.sql_name(T)
        manifests = engine.spark.sql(
            f"SELECT content, COUNT(*) FROM {name}.manifests GROUP BY content"
        ).collect()
        assert sorted(tuple(row) for row in manifests) == [(0, 1), (1, 1)]
        expected = {(i, "b" if 1 <= i <= 5 else "a") for i in range(100) if not 51 <= i <= 55}
        expected |= {(100 + n, "c") for n in range(1, 6)}
        assert set(engine.rows(T)) == expected  # type: ignore[arg-type]
    finally:
        engine.close()


def failing_writes(
    monkeypatch: pytest.MonkeyPatch, seen: list[str], failing: int, message: str
) -> None:
    """Wraps what a flush writes a table's rows with (``table_writes._view`` for SQL
    statements; for an append by data files, its commit, once the files are written): each
    call notes the table in ``seen``, and the ``failing``-th fails with ``OSError(message)``."""
    from spark_replica.applier_core.storage.spark import table_writes
    from spark_replica.applier_core.storage.spark.data_files import DataFileAppender

    def wrap(original: Any, table_of: Any) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            seen.append(table_of(*args))
            if len(seen) == failing:
                raise OSError(message)
            return original(*args, **kwargs)

        return wrapped

    def view_table(spark: Any, table: Any, data: Any) -> str:
        return str(table.ref.table)

    def committed_table(appender: Any, table: Any, paths: Any, summary: Any) -> str:
        return str(table.name()).rpartition(".")[2]

    monkeypatch.setattr(table_writes, "_view", wrap(table_writes._view, view_table))
    monkeypatch.setattr(
        DataFileAppender, "_commit", wrap(DataFileAppender._commit, committed_table)
    )


def test_a_flush_larger_than_a_slice_goes_over_in_slices_and_a_failed_one_is_redone(
    spark: Any, place: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flush over ``SLICE_BYTES`` is handed to Spark a slice at a time, each its own
    Iceberg commit (the driver JVM never holds the whole flush). A flush that fails after
    some slices landed sets the table back to its recorded snapshot and is tried again
    whole: the rows are recorded once each."""
    from spark_replica.applier_core.storage.spark import table_writes

    monkeypatch.setattr(table_writes, "SLICE_BYTES", 8192)
    monkeypatch.setattr("spark_replica.applier_core.storage.spark.engine.RETRY_DELAY", 0.01)
    # The SQL path, as on object storage (appended files are not sliced: they never pass
    # through the JVM).
    monkeypatch.setattr(
        "spark_replica.applier_core.storage.spark.data_files.is_local", lambda warehouse: False
    )
    engine = start(spark, place)
    statements: list[str] = []

    try:
        writer = Writer(engine)
        setup_tables(writer)
        engine.flush()
        recorded = engine.durable_state().tables[T].snapshot
        failing_writes(monkeypatch, statements, 3, "disk went away")  # the third slice
        writer.rows(T, [RowChange.insert((i, f"v{i:05d}")) for i in range(3000)])
        with pytest.raises(RuntimeError, match="flush failed: disk went away"):
            engine.flush()
        # The two slices committed before the failure were undone.
        assert engine.iceberg.current_snapshot(T) == recorded
        engine.flush()  # the flusher tried again
        assert len(statements) - 3 >= 4  # several slices in the attempt that landed
        assert engine.flush_error is None
    finally:
        engine.close()
    again = start(spark, place)
    try:
        assert sorted(again.rows(T)) == [(i, f"v{i:05d}") for i in range(3000)]  # type: ignore[arg-type]
    finally:
        again.close()


@pytest.mark.parametrize("local", [True, False], ids=["data-files", "sql"])
def test_a_flush_failing_after_its_ddl_was_recorded_retries_only_the_rest(
    spark: Any, place: Any, monkeypatch: pytest.MonkeyPatch, local: bool
) -> None:
    """A flush records each DDL commit on its own before the row changes after it; when
    the rows then fail (a full disk), the retry takes only what no commit point recorded:
    the DDL is not applied twice (it would fail with 1007 forever) and the rows land once.
    The rows go in as data files where the warehouse is local (their commit fails, the files
    written), by SQL elsewhere."""
    monkeypatch.setattr("spark_replica.applier_core.storage.spark.engine.RETRY_DELAY", 0.01)
    if not local:
        monkeypatch.setattr(
            "spark_replica.applier_core.storage.spark.data_files.is_local", lambda path: False
        )
    engine = start(spark, place, flush_interval=3600)
    statements: list[str] = []

    try:
        writer = Writer(engine)
        setup_tables(writer)
        engine.flush()
        failing_writes(monkeypatch, statements, 1, "No space left on device")
        writer.run(lambda: writer.session.apply_ddl("CREATE DATABASE e", "d"))
        writer.rows(T, [RowChange.insert((1, "a")), RowChange.insert((2, "b"))])
        with pytest.raises(RuntimeError, match="No space left on device"):
            engine.flush()
        assert "e" in engine.durable_state().databases  # recorded before the rows failed
        engine.flush()  # the retry: the rows alone
        assert statements == ["t", "t"] and engine.flush_error is None
        assert sorted(engine.rows(T)) == [(1, "a"), (2, "b")]  # type: ignore[arg-type]
    finally:
        engine.close()
    again = start(spark, place)
    try:
        assert sorted(again.rows(T)) == [(1, "a"), (2, "b")]  # type: ignore[arg-type]
        assert again.durable_state().gtids == ((UUID, "", 1, 5),)
    finally:
        again.close()


def test_a_snapshot_counts_a_table_with_deletion_vectors_from_its_metadata(
    spark: Any, place: Any
) -> None:
    """Between compactions a table holds deletion vectors, and Spark scans it to count it;
    a snapshot counts its rows from Iceberg's metadata instead (each data file's records
    less its vector's), which a bare ``SELECT COUNT(*)`` returns (``bare_count``). A
    table whose deletes are not deletion vectors (format 2's position delete files) is
    not counted so: the query scans it."""
    engine = start(spark, place)
    try:
        writer = Writer(engine)
        setup_tables(writer)
        writer.rows(T, [RowChange.insert((i, f"v{i}")) for i in range(50)])
        writer.rows(N, [RowChange.insert((1, "x")), RowChange.insert((1, "x")),
                        RowChange.insert((2, "y"))])  # fmt: skip
        engine.flush()
        writer.rows(T, [RowChange.update((1, "v1"), (1, "one")), RowChange.delete((2, "v2")),
                        RowChange.delete((3, "v3")), RowChange.insert((60, "new"))])  # fmt: skip
        writer.rows(N, [RowChange.delete((1, "x"))])
        engine.flush()
        catalog = engine.iceberg
        for ref in (T, N):
            formats = engine.spark.sql(
                f"SELECT file_format FROM {catalog.sql_name(ref)}.delete_files"
            ).collect()
            assert [row[0] for row in formats] == ["PUFFIN"]  # one vector, one data file
        with engine.snapshot() as snapshot:
            assert snapshot.row_count(T) == 49 == len(engine.rows(T))
            assert snapshot.row_count(N) == 2 == len(engine.rows(N))
            assert snapshot.row_count(TableRef("d", "missing")) is None
        # More deletes in the same data files: each vector replaced by a larger one (the
        # metadata's total of deleted positions drops the replaced vector's).
        writer.rows(T, [RowChange.delete((i, f"v{i}")) for i in range(10, 20)])
        writer.rows(N, [RowChange.delete((2, "y"))])
        engine.flush()
        with engine.snapshot() as snapshot:
            assert snapshot.row_count(T) == 39 == len(engine.rows(T))
            assert snapshot.row_count(N) == 1 == len(engine.rows(N))
        engine.compact(T)
        with engine.snapshot() as snapshot:
            assert snapshot.row_count(T) == 39
        writer.rows(T, [RowChange.delete((20, "v20"))])  # a vector after the compaction
        engine.flush()
        with engine.snapshot() as snapshot:
            assert snapshot.row_count(T) == 38 == len(engine.rows(T))
        v2 = TableRef("d", "v2")
        engine.spark.sql(
            f"CREATE TABLE {catalog.sql_name(v2)} (id INT) USING iceberg TBLPROPERTIES "
            "('format-version' = '2', 'write.delete.mode' = 'merge-on-read')"
        )
        engine.spark.sql(f"INSERT INTO {catalog.sql_name(v2)} VALUES (1), (2), (3)")
        engine.spark.sql(f"DELETE FROM {catalog.sql_name(v2)} WHERE id = 2")
        assert catalog.live_rows(v2, catalog.current_snapshot(v2)) is None
    finally:
        engine.close()


def test_slices_cut_a_table_by_rows_into_views_of_about_the_size() -> None:
    data = pa.table({"id": list(range(1000)), "v": [f"{i:08d}" for i in range(1000)]})
    parts = slices(data, data.nbytes // 4)
    assert len(parts) in (4, 5) and all(p.nbytes <= data.nbytes // 4 + 64 for p in parts)
    assert pa.concat_tables(parts).equals(data)
    assert slices(data, data.nbytes) == [data]
    empty = data.slice(0, 0)
    assert slices(empty, 1) == [empty]


def test_durability_is_reported_only_after_the_commit_point(spark: Any, place: Any) -> None:
    """``after_durable`` callbacks run once the batch is recorded, not when it is written:
    the relay log files a transaction needs are held until then."""
    root, inner = place
    store = GatedStore(inner)
    engine = SparkEngine(spark, root, store, flush_interval=0.05)  # type: ignore[arg-type]
    try:
        writer = Writer(engine)
        setup_tables(writer)
        engine.flush()
        store.gate.clear()
        store.reached.clear()
        writer.rows(T, [RowChange.insert((1, "a"))])
        durable = threading.Event()
        engine.after_durable(durable.set)
        assert store.reached.wait(WAIT)  # the batch is written, its record is held
        assert not durable.is_set()
        assert engine.stats().queued == 1
        store.gate.set()
        assert durable.wait(WAIT)
        assert engine.stats().queued == 0
    finally:
        store.gate.set()
        engine.close()


def test_a_failed_commit_point_keeps_the_commits_and_a_restart_drops_the_batch(
    spark: Any, place: Any
) -> None:
    """The metadata transaction fails: the flush's Iceberg commit is made but not recorded.
    The flush is retried while the engine runs; after a crash the next start sets the table
    back to its recorded snapshot and finds the state of the last commit point (the relay
    log still holds the rest)."""
    root, inner = place
    store = GatedStore(inner)
    engine = SparkEngine(spark, root, store, flush_interval=0.05)  # type: ignore[arg-type]
    writer = Writer(engine)
    setup_tables(writer)
    writer.rows(T, [RowChange.insert((1, "a"))])
    engine.flush()
    recorded = engine.durable_state()
    store.fail = True
    writer.rows(T, [RowChange.insert((2, "b"))])
    with pytest.raises(RuntimeError, match="metadata database unreachable"):
        engine.flush()
    assert engine.stats().queued == 1
    # The flush's Iceberg commit was undone before the flusher tries again.
    assert engine.iceberg.current_snapshot(T) == recorded.tables[T].snapshot
    store.reached.clear()
    store.gate.clear()  # the next attempt stops at its commit point: the process "dies" there
    assert store.reached.wait(WAIT)
    assert engine.iceberg.current_snapshot(T) != recorded.tables[T].snapshot
    engine.index.close()  # the process is gone: so is its hold on the key index

    again = start(spark, place)
    try:
        assert again.iceberg.current_snapshot(T) == recorded.tables[T].snapshot
        assert again.rows(T) == [(1, "a")]
        assert again.durable_state() == recorded
    finally:
        again.close()
        engine._closing = True  # the first engine gives up: its commit point fails
        store.gate.set()
        engine.close()


def test_a_flush_failing_the_same_way_each_time_stops_flushing_with_its_error(
    spark: Any, place: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flush the key index refuses (a ``KeyIndexError``: a bug, not a passing condition)
    is not tried again forever: flushing stops with the error, the server is told
    (``on_failure``, which stops it), the table stays at its recorded snapshot, and the
    next start finds the last commit point (the relay log still holds the rest)."""
    monkeypatch.setattr("spark_replica.applier_core.storage.spark.engine.RETRY_DELAY", 0.01)
    engine, writer, recorded = one_row_durable(spark, place)
    failures: list[str] = []
    engine.on_failure(failures.append)
    calls: list[int] = []

    def refused(batch: int, writes: Any) -> None:
        calls.append(batch)
        raise KeyIndexError(f"batch {batch} adopts stage -7, unknown (as a test)")

    monkeypatch.setattr(engine.index, "apply", refused)
    writer.rows(T, [RowChange.insert((2, "b"))])
    try:
        with pytest.raises(RuntimeError, match="flushing stopped: .*stage -7, unknown"):
            engine.flush()
        assert failures == [f"batch {calls[0]} adopts stage -7, unknown (as a test)"]
        assert engine.iceberg.current_snapshot(T) == recorded.tables[T].snapshot
        with pytest.raises(RuntimeError, match="flushing stopped"):
            engine.flush()  # asked again: still stopped, not tried again
        assert len(calls) == 1
    finally:
        monkeypatch.undo()
        engine.close()
    again = start(spark, place)
    try:
        assert again.rows(T) == [(1, "a")]
        assert again.durable_state() == recorded
    finally:
        again.close()


def test_the_catalog_is_put_back_to_the_recorded_state_at_start(spark: Any, place: Any) -> None:
    """What a crash between Iceberg commits and the commit point leaves (a commit to a
    table, a rename, a table created or moved aside by DDL) is undone at start, found by
    each table's id; a table in the catalog that is not the replica's is left alone."""
    engine = start(spark, place)
    writer = Writer(engine)
    setup_tables(writer)
    writer.rows(T, [RowChange.insert((1, "a"))])
    writer.rows(N, [RowChange.insert((1, "n"))])
    engine.close()
    catalog = engine.iceberg
    ours = engine.spark
    ours.sql(f"INSERT INTO {catalog.sql_name(T)} VALUES (2, 'stray')")
    catalog.rename(("d", "n"), ("%replica_dropped", "t2"))
    catalog.create(TableRef("d", "made"), engine.definition(T), 77)
    ours.sql(f"CREATE TABLE {catalog.name}.d.foreign_one (x INT) USING iceberg")

    again = start(spark, place)
    try:
        assert again.rows(T) == [(1, "a")] and again.rows(N) == [(1, "n")]
        assert sorted(again.iceberg.tables()) == [("d", "foreign_one"), ("d", "n"), ("d", "t")]
        for ref in (T, N):
            assert again.iceberg.current_snapshot(ref) == again.durable_state().tables[ref].snapshot
        with again.snapshot() as snapshot:
            rows = again.spark.sql(f"SELECT * FROM `{snapshot.view(N)}`").collect()
        assert [tuple(r) for r in rows] == [(1, "n")]
    finally:
        again.close()


def test_ddl_is_replayed_on_the_recorded_state(spark: Any, place: Any) -> None:
    engine = start(spark, place)
    writer = Writer(engine)
    setup_tables(writer)
    writer.rows(T, [RowChange.insert((1, "a")), RowChange.insert((2, "b"))])
    writer.ddl("ALTER TABLE t ADD COLUMN w INT, RENAME TO t2")
    writer.rows(TableRef("d", "t2"), [RowChange.update((1, "a", None), (1, "a", 10))])
    writer.ddl("TRUNCATE TABLE n")
    writer.ddl("CREATE TABLE gone (id INT PRIMARY KEY)")
    writer.rows(TableRef("d", "gone"), [RowChange.insert((1,))])
    engine.flush()
    writer.ddl("DROP TABLE gone")
    engine.close()

    again = start(spark, place)
    try:
        # The dropped table is purged by a maintenance round or, as here, at the next start.
        assert sorted(again.iceberg.tables()) == [("d", "n"), ("d", "t2")]
        assert again.tables() == [TableRef("d", "n"), TableRef("d", "t2")]
        assert sorted(again.rows(TableRef("d", "t2"))) == [(1, "a", 10), (2, "b", None)]
        assert [c.name for c in again.definition(TableRef("d", "t2")).columns] == ["id", "v", "w"]
        assert again.rows(N) == []
        # Any Spark session reads the tables by name, with their MySQL column names.
        name = again.iceberg.sql_name(TableRef("d", "t2"))
        rows = again.spark.sql(f"SELECT id, v, w FROM {name} ORDER BY id").collect()
        assert [tuple(r) for r in rows] == [(1, "a", 10), (2, "b", None)]
    finally:
        again.close()


def test_compaction_bounds_the_files_and_keeps_the_content(spark: Any, place: Any) -> None:
    """Compaction (on the maintenance thread; ``flush`` waits for the round after it)
    rewrites data and delete files into few and expires the snapshots older than the
    retention (here: 0 s) and than the recorded snapshot."""
    engine = start(spark, place, compact_after=3, snapshot_retention=0)
    try:
        writer = Writer(engine)
        setup_tables(writer)
        for i in range(7):
            writer.rows(T, [RowChange.insert((i, "a"))])
            writer.rows(N, [RowChange.insert((i % 2, "k"))])
            writer.rows(T, [RowChange.update((i, "a"), (i, "b"))])
            engine.flush()
        state = engine.durable_state()
        for ref in (T, N):
            assert state.tables[ref].changes < 3
            assert data_files(engine, ref) <= 3
            history = engine.spark.sql(
                f"SELECT COUNT(*) FROM {engine.iceberg.sql_name(ref)}.snapshots"
            ).collect()[0][0]
            # The snapshot recorded before the compaction (kept: a crash before the
            # compaction is recorded goes back to it), the compaction's two, then one per
            # flush since.
            assert history <= 4
        with engine.snapshot() as snapshot:
            view = snapshot.view(N)
            counts = engine.spark.sql(
                f"SELECT a, COUNT(*) FROM `{view}` GROUP BY a ORDER BY a"
            ).collect()
        assert [tuple(r) for r in counts] == [(0, 4), (1, 3)]
        assert sorted(engine.rows(T)) == [(i, "b") for i in range(7)]  # type: ignore[arg-type]
    finally:
        engine.close()


def test_compaction_sorts_a_keyed_table_by_its_primary_key(spark: Any, place: Any) -> None:
    """A compacted table with a primary key is written in key order, so a lookup by key
    skips the files and row groups whose statistics exclude it; a keyless one is packed."""
    engine = start(spark, place, compact_after=1000)
    try:
        writer = Writer(engine)
        setup_tables(writer)
        ids = list(range(40))
        random.Random(7).shuffle(ids)
        for start_at in range(0, 40, 10):
            writer.rows(T, [RowChange.insert((i, "a")) for i in ids[start_at : start_at + 10]])
            engine.flush()
        assert data_files(engine, T) >= 4
        engine.compact(T)
        assert data_files(engine, T) == 1
        stored = engine.durable_state().tables[T]
        name = engine.iceberg.sql_name(T)
        rows = engine.spark.sql(f"SELECT id FROM {name} VERSION AS OF {stored.snapshot}")
        assert [r[0] for r in rows.collect()] == list(range(40))  # the file's order
    finally:
        engine.close()


def test_a_snapshot_reads_one_recorded_state_while_flushes_go_on(spark: Any, place: Any) -> None:
    """Consistent reads: a query's tables come from one commit point, whatever flushes and
    compactions happen meanwhile."""
    engine = start(spark, place, compact_after=2)
    try:
        writer = Writer(engine)
        setup_tables(writer)
        writer.rows(T, [RowChange.insert((1, "a"))])
        writer.rows(N, [RowChange.insert((1, "a"))])
        engine.flush()
        snapshot = engine.snapshot()
        old = snapshot.state.tables[T]
        for i in range(2, 6):
            writer.rows(T, [RowChange.insert((i, "b"))])
            writer.rows(N, [RowChange.insert((i, "b"))])
            engine.flush()
        assert engine.durable_state().tables[T].snapshot != old.snapshot
        t_view, n_view = snapshot.view(T), snapshot.view(N)
        rows = engine.spark.sql(
            f"SELECT (SELECT COUNT(*) FROM `{t_view}`), (SELECT COUNT(*) FROM `{n_view}`)"
        ).collect()
        assert tuple(rows[0]) == (1, 1)
        snapshot.__exit__(None, None, None)
        with engine.snapshot() as fresh:
            count = engine.spark.sql(f"SELECT COUNT(*) FROM `{fresh.view(T)}`").collect()[0][0]
        assert count == 5
    finally:
        engine.close()


def test_a_spark_job_outside_the_server_reads_the_tables(spark: Any, place: Any) -> None:
    """Issue item 9: a function registers every replica table in a SparkSession at the latest
    recorded batch."""
    from spark_replica.applier_core.storage.spark.external import register_tables

    root, store = place
    engine = start(spark, place)
    writer = Writer(engine)
    writer.ddl("CREATE DATABASE ext")
    writer.session.begin(TransactionRef(f"{UUID}:100", 100))
    writer.session.apply_ddl("CREATE TABLE ext.items (id INT PRIMARY KEY, `v v` TEXT)", None)
    writer.session.commit()
    writer.session.begin(TransactionRef(f"{UUID}:101", 101))
    writer.session.apply_ddl("CREATE TABLE ext.`odd name` (id INT PRIMARY KEY)", None)
    writer.session.commit()
    writer.gno = 101
    items = TableRef("ext", "items")
    writer.rows(items, [RowChange.insert((1, "a")), RowChange.insert((2, "b"))])
    writer.rows(items, [RowChange.delete((1, "a"))])
    engine.close()

    done = register_tables(spark, store, root)
    assert done.state.last_batch == engine.durable_state().last_batch
    assert (done.views, done.skipped) == ([items], [TableRef("ext", "odd name")])
    rows = spark.sql("SELECT id, `v v` FROM ext.items").collect()
    assert [tuple(r) for r in rows] == [(2, "b")]


def test_kept_objects_are_recorded_at_the_commit_point_and_found_after_a_restart(
    spark: Any, place: Any
) -> None:
    engine = start(spark, place)
    writer = Writer(engine)
    setup_tables(writer)
    writer.ddl("CREATE DEFINER=`app`@`%` VIEW v (a) AS SELECT id FROM t")
    writer.ddl("CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET @a = 1")
    writer.ddl("CREATE PROCEDURE p() SELECT 1")
    writer.ddl("CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO SELECT 1")
    engine.flush()
    writer.ddl("DROP PROCEDURE p")
    writer.ddl("CREATE OR REPLACE DEFINER=`app`@`%` VIEW v (a) AS SELECT id + 1 FROM t")
    expected = engine.objects()
    engine.close()

    again = start(spark, place)
    try:
        assert again.objects() == expected
        assert [(o.ref.kind.value, o.ref.name) for o in expected] == [
            ("EVENT", "e"), ("TRIGGER", "tr"), ("VIEW", "v")]  # fmt: skip
        assert expected[2].select == "SELECT id + 1 FROM t" and expected[2].definer == "app@%"
        Writer(again, 9).ddl("DROP TABLE t")  # its trigger goes with it
        again.flush()
    finally:
        again.close()
    third = start(spark, place)
    try:
        assert [o.ref.name for o in third.objects()] == ["e", "v"]
    finally:
        third.close()


def test_replicated_accounts_are_recorded_at_the_commit_point_and_found_after_a_restart(
    spark: Any, place: Any
) -> None:
    from spark_replica.applier_core.storage.accounts import AccountName

    engine = start(spark, place)
    writer = Writer(engine)
    setup_tables(writer)
    writer.ddl("CREATE USER 'alice'@'%' IDENTIFIED BY 'alice-pw'")
    writer.ddl("CREATE ROLE reader")
    writer.ddl("GRANT SELECT ON d.t TO reader")
    writer.ddl("GRANT reader TO alice")
    engine.flush()
    writer.ddl("SET DEFAULT ROLE reader FOR alice")
    writer.ddl("GRANT SELECT (id) ON d.t TO 'alice'@'%'")
    expected = dict(engine.accounts())
    engine.close()

    again = start(spark, place)
    try:
        assert dict(again.accounts()) == expected
        alice = expected[AccountName("alice", "%")]
        assert alice.default_roles == (AccountName("reader", "%"),)
        Writer(again, 9).ddl("DROP USER alice")
        again.flush()
    finally:
        again.close()
    third = start(spark, place)
    try:
        assert list(third.accounts()) == [AccountName("reader", "%")]
    finally:
        third.close()


def test_secondary_keys_are_recorded_and_found_after_a_restart(spark: Any, place: Any) -> None:
    engine = start(spark, place)
    writer = Writer(engine)
    setup_tables(writer)
    writer.ddl("CREATE UNIQUE INDEX uv ON t (v(4) DESC)")
    writer.ddl("ALTER TABLE n ADD KEY ab (a, b) COMMENT 'both', ADD FULLTEXT (b)")
    writer.ddl("ALTER TABLE n RENAME INDEX ab TO ab2, ALTER INDEX ab INVISIBLE")
    expected = {ref: engine.definition(ref) for ref in (T, N)}
    assert [i.name for i in expected[N].indexes] == ["ab2", "b"]
    engine.flush()
    engine.close()

    again = start(spark, place)
    try:
        assert {ref: again.definition(ref) for ref in (T, N)} == expected
        with pytest.raises(EngineError) as caught:
            Writer(again, 9).ddl("ALTER TABLE t ADD INDEX UV (id)")
        assert caught.value.code == 1061
    finally:
        again.close()


def test_sequences_and_their_rows_are_found_after_a_restart(spark: Any, place: Any) -> None:
    """A sequence's first row (never logged by the source), its ALTERed row and a written row
    reach the recorded tables; after a restart it is still a sequence whose writes replace
    its row."""
    seq, other = TableRef("d", "s"), TableRef("d", "s2")
    engine = start(spark, place)
    writer = Writer(engine)
    writer.ddl("CREATE DATABASE d")
    writer.ddl("CREATE SEQUENCE s START WITH 10 CACHE 2")
    writer.ddl("CREATE SEQUENCE s2")
    writer.rows(seq, [RowChange.insert((12, 1, 99, 10, 1, 2, 0, 0))])
    writer.ddl("ALTER SEQUENCE s2 RESTART WITH 50")
    writer.ddl("CREATE OR REPLACE SEQUENCE s2 START WITH 7")
    engine.close()

    again = start(spark, place)
    try:
        assert again.rows(seq) == [(12, 1, 99, 10, 1, 2, 0, 0)]
        assert again.rows(other) == [(7, 1, 9223372036854775806, 7, 1, 1000, 0, 0)]
        assert [o.ref.name for o in again.objects()] == ["s", "s2"]
        Writer(again, 7).rows(seq, [RowChange.insert((14, 1, 99, 10, 1, 2, 0, 0))])
        assert again.rows(seq) == [(14, 1, 99, 10, 1, 2, 0, 0)]
        Writer(again, 8).ddl("ALTER SEQUENCE s INCREMENT BY 3 RESTART")
    finally:
        again.close()
    third = start(spark, place)
    try:
        assert third.rows(seq) == [(10, 1, 99, 10, 3, 2, 0, 0)]
    finally:
        third.close()


def test_a_prepared_xa_transaction_is_recorded_with_the_gtids_of_its_commit_points(
    spark: Any, place: Any
) -> None:
    """A prepared XA transaction is kept by the commit point of its prepare and dropped by the
    one of its XA COMMIT, with that transaction's rows: a crash between the two finds it
    prepared and none of its rows applied, so the XA COMMIT applies them once."""
    root, inner = place
    store = GatedStore(inner)
    engine = SparkEngine(spark, root, store, flush_interval=0.05)  # type: ignore[arg-type]
    writer = Writer(engine)
    setup_tables(writer)  # GTIDs 1-3
    prepared = PreparedXa("X'78',X'',1", f"{UUID}:4", b"events")
    writer.run(lambda: writer.session.keep_prepared(prepared))  # GTID 4: the prepare

    def commit(session: Any = writer.session) -> None:
        assert session.take_prepared(prepared.xid) == prepared
        session.apply_rows(Map("d", "t"), [RowChange.insert((1, "a"))])

    engine.flush()
    store.fail = True
    writer.run(commit)  # GTID 5: XA COMMIT, committed but never recorded (a crash)
    assert engine.prepared_xa() == [] and engine.rows(T) == [(1, "a")]
    with pytest.raises(RuntimeError, match="metadata database unreachable"):
        engine.flush()
    engine.close()

    again = start(spark, place)
    try:
        assert again.prepared_xa() == [prepared]
        assert again.rows(T) == []
        assert again.durable_state().gtids == ((UUID, "", 1, 4),)
        redo = Writer(again, 5)
        redo.run(lambda: commit(redo.session))
        again.flush()
    finally:
        again.close()
    last = start(spark, place)
    try:
        assert last.prepared_xa() == [] and last.rows(T) == [(1, "a")]
        assert last.durable_state().gtids == ((UUID, "", 1, 5),)
    finally:
        last.close()


def test_foreign_keys_and_checks_are_recorded_and_found_after_a_restart(
    spark: Any, place: Any
) -> None:
    engine = start(spark, place)
    writer = Writer(engine)
    setup_tables(writer)
    writer.ddl("ALTER TABLE n ADD FOREIGN KEY (a) REFERENCES t (id), ADD CHECK (a > 0)")
    writer.ddl("ALTER TABLE t RENAME COLUMN id TO tid")  # the reference in n follows
    writer.ddl("RENAME TABLE t TO t2")
    t2 = TableRef("d", "t2")
    expected = {ref: engine.definition(ref) for ref in (t2, N)}
    assert expected[N].foreign_keys[0].referenced == t2
    assert expected[N].foreign_keys[0].referenced_columns == ("tid",)
    assert [c.name for c in expected[N].checks] == ["n_chk_1"]
    engine.flush()
    engine.close()

    again = start(spark, place)
    try:
        assert {ref: again.definition(ref) for ref in (t2, N)} == expected
    finally:
        again.close()


def test_names_with_braces_go_through_the_flush_statements(spark: Any, place: Any) -> None:
    """The flush's statements are built around the change view's name; a column named with
    braces (legal in MySQL) is text in them, not a placeholder."""
    engine = start(spark, place)
    table = TableRef("d", "b")
    try:
        writer = Writer(engine)
        writer.ddl("CREATE DATABASE d")
        writer.ddl("CREATE TABLE b (`{id}` INT PRIMARY KEY, `v{0}` VARCHAR(10))")
        writer.rows(table, [RowChange.insert((i, f"v{i}")) for i in range(3)])
        engine.flush()
        writer.rows(table, [RowChange.update((1, "v1"), (1, "one")),
                            RowChange.delete((2, "v2")), RowChange.insert((3, "v3"))])  # fmt: skip
        engine.flush()
        assert sorted(engine.rows(table)) == [(0, "v0"), (1, "one"), (3, "v3")]  # type: ignore[arg-type]
    finally:
        engine.close()
