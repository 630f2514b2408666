"""The Spark engine's durability (architecture §5, issue: group commit, recovery, compaction,
consistent reads): what is recorded at a commit point, what a restart finds, and what a
failed or interrupted flush leaves behind."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
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
from spark_replica.applier_core.storage.spark.engine import SparkEngine, slices
from spark_replica.applier_core.storage.spark.layout import batch_dir, generation_dir
from spark_replica.applier_core.storage.spark.state import DurableState
from spark_replica.metadata.factory import open_store
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


@pytest.fixture
def place(tmp_path: Path) -> Iterator[tuple[str, MetadataStore]]:
    store = open_store(f"sqlite:///{tmp_path / 'metadata.db'}")
    yield str(tmp_path / "warehouse"), store
    store.close()


def start(spark: Any, place: tuple[str, Any], **options: Any) -> SparkEngine:
    root, store = place
    options.setdefault("flush_interval", 0.05)
    return SparkEngine(spark, root, store, **options)


def setup_tables(writer: Writer) -> None:
    writer.ddl("CREATE DATABASE d")
    writer.ddl("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
    writer.ddl("CREATE TABLE n (a INT, b VARCHAR(10))")


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


def test_a_large_batch_is_written_as_several_files_and_read_back_whole(
    spark: Any, place: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch larger than ``FILE_BYTES`` (one large transaction) is written by several
    tasks, one file each, rather than gathered into one task; a restart reads it whole."""
    monkeypatch.setattr("spark_replica.applier_core.storage.spark.engine.FILE_BYTES", 4096)
    engine = start(spark, place)
    writer = Writer(engine)
    setup_tables(writer)
    engine.flush()
    writer.rows(T, [RowChange.insert((i, f"v{i}")) for i in range(2000)])
    engine.flush()
    stored = engine.durable_state().tables[T]
    engine.close()
    files = list(Path(batch_dir(place[0], stored, stored.batches[-1])).glob("*.parquet"))
    assert len(files) > 1

    again = start(spark, place)
    try:
        assert sorted(again.rows(T)) == [(i, f"v{i}") for i in range(2000)]  # type: ignore[arg-type]
    finally:
        again.close()


def test_a_batch_larger_than_a_slice_goes_over_in_slices_and_a_failed_slice_is_redone(
    spark: Any, place: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch over ``SLICE_BYTES`` is handed to Spark a slice at a time, each by its own
    write into the batch's directory (the driver JVM never holds the whole batch). A write
    that fails after some slices landed is retried from the first slice, which replaces what
    they left: the batch is recorded once, with every row once."""
    monkeypatch.setattr("spark_replica.applier_core.storage.spark.engine.SLICE_BYTES", 8192)
    engine = start(spark, place)
    writes: list[bool] = []
    original = engine._write_frame

    def write_frame(frame: Any, files: int, path: str, *, append: bool = False) -> None:
        writes.append(append)
        if len(writes) == 3 and "/batch=" in path:  # the third slice of the first attempt
            raise OSError("disk went away")
        original(frame, files, path, append=append)

    monkeypatch.setattr(engine, "_write_frame", write_frame)
    monkeypatch.setattr("spark_replica.applier_core.storage.spark.engine.RETRY_DELAY", 0.01)
    try:
        writer = Writer(engine)
        setup_tables(writer)
        engine.flush()
        writes.clear()
        writer.rows(T, [RowChange.insert((i, f"v{i:05d}")) for i in range(3000)])
        with pytest.raises(RuntimeError, match="flush failed: disk went away"):
            engine.flush()
        engine.flush()  # the flusher tried again
        attempts = [n for n, append in enumerate(writes) if not append]
        assert len(attempts) == 2 and attempts[1] == 3  # failed at the third, then whole
        assert len(writes) - 3 >= 4  # several slices in the attempt that landed
        assert engine.flush_error is None
        stored = engine.durable_state().tables[T]
    finally:
        engine.close()
    files = list(Path(batch_dir(place[0], stored, stored.batches[-1])).glob("*.parquet"))
    assert len(files) == len(writes) - 3
    again = start(spark, place)
    try:
        assert sorted(again.rows(T)) == [(i, f"v{i:05d}") for i in range(3000)]  # type: ignore[arg-type]
    finally:
        again.close()


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
    """The metadata transaction fails: the batch's files are written but not recorded. The
    flush is retried while the engine runs; after a crash the next start removes the files
    and finds the state of the last recorded batch (the relay log still holds the rest)."""
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
    unrecorded = batch_dir(root, recorded.tables[T], recorded.last_batch + 1)
    assert Path(unrecorded).is_dir()
    engine.close()  # gives up: the flush still fails

    again = start(spark, place)
    try:
        assert not Path(unrecorded).exists()
        assert again.rows(T) == [(1, "a")]
        assert again.durable_state() == recorded
    finally:
        again.close()


def test_files_no_state_refers_to_are_removed_at_start(spark: Any, place: Any) -> None:
    root, _ = place
    engine = start(spark, place)
    writer = Writer(engine)
    setup_tables(writer)
    writer.rows(T, [RowChange.insert((1, "a"))])
    engine.close()
    stored = engine.durable_state().tables[T]
    strays = [
        Path(batch_dir(root, stored, 999)),  # a batch written, never recorded
        Path(generation_dir(root, stored.next_generation(base=True))),  # a compaction cut short
        Path(root) / "t77",  # a table dropped before its directory went
    ]
    for stray in strays:
        stray.mkdir(parents=True)
        (stray / "part-0.parquet").write_bytes(b"not parquet")

    again = start(spark, place)
    try:
        assert [stray for stray in strays if stray.exists()] == []
        assert again.rows(T) == [(1, "a")]
    finally:
        again.close()


def test_ddl_is_replayed_on_the_recorded_state(spark: Any, place: Any) -> None:
    root, _ = place
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
    gone = engine.durable_state().tables[TableRef("d", "gone")]
    writer.ddl("DROP TABLE gone")
    engine.close()
    assert not Path(root, f"t{gone.id}").exists()

    again = start(spark, place)
    try:
        assert again.tables() == [TableRef("d", "n"), TableRef("d", "t2")]
        assert sorted(again.rows(TableRef("d", "t2"))) == [(1, "a", 10), (2, "b", None)]
        assert [c.name for c in again.definition(TableRef("d", "t2")).columns] == ["id", "v", "w"]
        assert again.rows(N) == []
        stored = again.durable_state().tables[TableRef("d", "t2")]
        assert stored.generation == 2
        assert sorted(p.name for p in Path(root, f"t{stored.id}").iterdir()) == ["g2"]
    finally:
        again.close()


def test_compaction_bounds_the_batches_and_keeps_the_content(spark: Any, place: Any) -> None:
    root, _ = place
    engine = start(spark, place, compact_after=3)
    try:
        writer = Writer(engine)
        setup_tables(writer)
        for i in range(7):
            writer.rows(T, [RowChange.insert((i, "a"))])
            writer.rows(N, [RowChange.insert((i % 2, "k"))])
            engine.flush()
        state = engine.durable_state()
        for ref in (T, N):
            stored = state.tables[ref]
            assert stored.generation > 1 and stored.base and len(stored.batches) < 3
            assert sorted(p.name for p in Path(root, f"t{stored.id}").iterdir()) == [
                f"g{stored.generation}"
            ]
        with engine.snapshot() as snapshot:
            view = snapshot.view(N)
            counts = spark.sql(f"SELECT a, COUNT(*) FROM `{view}` GROUP BY a ORDER BY a").collect()
        assert [tuple(r) for r in counts] == [(0, 4), (1, 3)]
    finally:
        engine.close()


def test_a_snapshot_reads_one_recorded_state_while_flushes_go_on(spark: Any, place: Any) -> None:
    """Consistent reads: a query's tables come from one commit point, and files it reads are
    not deleted under it (compaction waits for the snapshot)."""
    root, _ = place
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
        assert engine.durable_state().tables[T].generation > old.generation
        assert Path(generation_dir(root, old)).exists()  # pinned by the snapshot
        t_view, n_view = snapshot.view(T), snapshot.view(N)
        rows = spark.sql(
            f"SELECT (SELECT COUNT(*) FROM `{t_view}`), (SELECT COUNT(*) FROM `{n_view}`)"
        ).collect()
        assert tuple(rows[0]) == (1, 1)
        snapshot.__exit__(None, None, None)
        writer.rows(T, [RowChange.insert((9, "c"))])
        engine.flush()  # the next maintenance deletes the unpinned generation
        assert not Path(generation_dir(root, old)).exists()
        with engine.snapshot() as fresh:
            count = spark.sql(f"SELECT COUNT(*) FROM `{fresh.view(T)}`").collect()[0][0]
        assert count == 6
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
