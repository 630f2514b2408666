"""ALTER TABLE on a table the Spark engine's key index holds: its rows stream from the index
(the overlay of unflushed changes merged in) through the conversion into a stage of the
index, and from there into the new Iceberg table, a chunk at a time; the table is never in
Python's memory whole (requirement: DDL that needs a rewrite is rewritten in bounded
memory). The content, MySQL's errors (1062 for a key twice under the new key, the row
number of a value that does not convert) and a restart agree with the in-memory engine."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from spark_replica.applier_core.storage import EngineError, InMemoryEngine, RowChange
from spark_replica.applier_core.storage.key_index import LmdbKeyIndex, lmdb_index
from spark_replica.applier_core.storage.spark import table_writes
from spark_replica.applier_core.storage.spark.engine import SparkEngine
from spark_replica.applier_core.storage.spark.indexed_tables import IndexedTable
from tests.unit.storage.spark.test_engine_durability import (
    GatedStore,
    Map,
    N,
    T,
    Writer,
    setup_tables,
    start,
)
from tests.unit.storage.spark.test_engine_schema_evolution import recorded_read

pytestmark = pytest.mark.spark

ROWS = 40


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lmdb_index, "CHUNK_ROWS", 7)
    monkeypatch.setattr(lmdb_index, "SCAN_CHUNK", 5)
    monkeypatch.setattr(table_writes, "APPEND_ROWS", 9)


@contextmanager
def streamed() -> Iterator[None]:
    """Meanwhile, a table of the key index read whole fails the test."""

    def whole(table: IndexedTable) -> list[Any]:
        if table.content.complete:  # a table created by a DDL not flushed yet
            return list(table.stored_rows())
        raise AssertionError(f"{table.ref} read whole into memory")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(IndexedTable, "snapshot", whole)
        yield


def value(i: int) -> str:
    return str(i * 7 % 30)  # rows i and i + 30 share theirs


def fill(writer: Writer) -> None:
    setup_tables(writer)
    writer.rows(T, [RowChange.insert((i, value(i))) for i in range(ROWS)])
    writer.rows(N, [RowChange.insert((i % 10, f"n{i}")) for i in range(ROWS)])


def filled_gated(spark: Any, place: Any) -> tuple[SparkEngine, GatedStore]:
    """An engine whose commit point can be held, its tables filled and flushed."""
    root, inner = place
    store = GatedStore(inner)
    engine = SparkEngine(spark, root, store, flush_interval=0.05)  # type: ignore[arg-type]
    fill(Writer(engine))
    engine.flush()
    return engine, store


def assert_index_agrees(engine: SparkEngine) -> None:
    """The key index holds the tables' rows, and no stage is left in it."""
    assert engine.check_index() == {}
    assert all(table_id >= 0 for table_id in engine.index.table_ids())


@contextmanager
def restarted(spark: Any, place: Any, expected: set[Any]) -> Iterator[SparkEngine]:
    """The engine started again on the same place, checked to hold ``expected`` in ``T``
    with a key index that agrees."""
    again = start(spark, place)
    try:
        assert set(again.store.rows(T)) == expected
        assert again.check_index() == {}
        yield again
    finally:
        again.close()


def test_a_rewriting_alter_streams_the_table_with_its_unflushed_changes(
    spark: Any, place: Any
) -> None:
    """Changes committed but not yet at the commit point (the overlay) are part of the
    copy; the new table (new Iceberg table, new id) holds the converted rows, the key index
    agrees, no stage is left, and a restart finds the same."""
    engine, store = filled_gated(spark, place)
    try:
        writer = Writer(engine, 10)
        old_id = engine.durable_state().tables[T].id
        store.gate.clear()  # the next changes stay in the overlay
        writer.rows(T, [RowChange.update((3, "21"), (3, "x")), RowChange.delete((4, "28")),
                        RowChange.insert((100, "100"))])  # fmt: skip
        with streamed():
            writer.ddl("ALTER TABLE t ADD COLUMN w INT NOT NULL DEFAULT 5, MODIFY v VARCHAR(3)")
            writer.rows(T, [RowChange.insert((101, "y", 6))])
            store.gate.set()
            engine.flush()

        state = engine.durable_state()
        assert state.tables[T].id != old_id
        expected = {(i, value(i), 5) for i in range(ROWS) if i not in (3, 4)}
        expected |= {(3, "x", 5), (100, "100", 5), (101, "y", 6)}
        columns, rows = recorded_read(engine, T)
        assert (columns, set(rows), len(rows)) == (["id", "v", "w"], expected, len(expected))
        assert set(engine.store.rows(T)) == expected
        assert_index_agrees(engine)
    finally:
        store.gate.set()
        engine.close()

    with restarted(spark, place, expected):
        pass


def test_a_metadata_only_alter_streams_the_key_index(spark: Any, place: Any) -> None:
    """An ALTER Iceberg does as schema evolution (same table id) still gives the key index
    the rows of the new shape, streamed."""
    engine = start(spark, place)
    try:
        writer = Writer(engine)
        fill(writer)
        engine.flush()
        table_id = engine.durable_state().tables[N].id
        with streamed():
            writer.ddl("ALTER TABLE n ADD COLUMN c BIGINT FIRST")
            writer.rows(N, [RowChange.insert((7, 1, "new"))])
            engine.flush()
        assert engine.durable_state().tables[N].id == table_id
        expected = sorted([(None, i % 10, f"n{i}") for i in range(ROWS)] + [(7, 1, "new")],
                          key=repr)  # fmt: skip
        assert sorted(engine.store.rows(N), key=repr) == expected
        assert recorded_read(engine, N) == (["c", "a", "b"], expected)
        assert engine.check_index() == {}
    finally:
        engine.close()


def test_an_alter_that_keeps_rows_and_key_shares_the_content(
    spark: Any, place: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ADD INDEX and a renamed column keep every row and the key: the table keeps its id
    and its key index entries (nothing staged, nothing copied), its unflushed changes
    included; a TRUNCATE after it still empties the index."""
    engine, store = filled_gated(spark, place)
    try:
        writer = Writer(engine, 10)
        table_id = engine.durable_state().tables[T].id
        store.gate.clear()  # the next change stays in the overlay
        writer.rows(T, [RowChange.update((3, value(3)), (3, "x"))])
        monkeypatch.setattr(LmdbKeyIndex, "stage", None)  # staging would fail the test
        with streamed():
            writer.ddl("ALTER TABLE t ADD INDEX (v)")
            writer.ddl("ALTER TABLE t RENAME COLUMN v TO label, MODIFY id BIGINT")
            writer.rows(T, [RowChange.update((5, value(5)), (5, "y"))])
            store.gate.set()
            engine.flush()
        assert engine.durable_state().tables[T].id == table_id
        expected = {(i, value(i)) for i in range(ROWS)} - {(3, value(3)), (5, value(5))}
        expected |= {(3, "x"), (5, "y")}
        columns, rows = recorded_read(engine, T)
        assert (columns, set(rows)) == (["id", "label"], expected)
        assert set(engine.store.rows(T)) == expected
        assert engine.check_index() == {}
        writer.ddl("TRUNCATE TABLE t")
        engine.flush()
        assert engine.store.rows(T) == []
        assert engine.check_index() == {}
    finally:
        store.gate.set()
        engine.close()


def test_columns_added_dropped_and_moved_copy_no_row(spark: Any, place: Any) -> None:
    """ADD, DROP and moved columns of a keyed table (Iceberg schema changes) copy no row:
    the table keeps its id and its key index entries, read through the layout each ALTER's
    flush records; changes committed before an ALTER but not yet flushed, and after it, land
    in their columns; a key twice is still 1062; a restart reads the layout again, and a
    rewriting ALTER afterwards streams the rows through it."""
    engine, store = filled_gated(spark, place)
    table_id = engine.durable_state().tables[T].id
    try:
        writer = Writer(engine, 10)
        store.gate.clear()  # the next change stays in the overlay, unflushed
        writer.rows(T, [RowChange.update((3, value(3)), (3, "x"))])
        with streamed(), pytest.MonkeyPatch.context() as patch:
            patch.setattr(LmdbKeyIndex, "stage", None)  # staging would fail the test
            writer.ddl("ALTER TABLE t ADD COLUMN w INT, ADD COLUMN z VARCHAR(5) FIRST")
            writer.rows(
                T,
                [
                    RowChange.insert(("a", 100, "new", 1)),
                    RowChange.update((None, 5, value(5), None), (None, 5, "y", 2)),
                ],
            )
            store.gate.set()
            engine.flush()
            writer.ddl("ALTER TABLE t DROP COLUMN v")  # (z, id, w)
            writer.rows(T, [RowChange.insert(("b", 101, 3))])
            writer.ddl("ALTER TABLE t MODIFY w INT FIRST")  # (w, z, id)
            writer.ddl("ALTER TABLE t ADD COLUMN v VARCHAR(3) AFTER z")  # (w, z, v, id)
            writer.rows(T, [RowChange.update((3, "b", None, 101), (3, "b", "q", 101))])
            engine.flush()
        assert engine.durable_state().tables[T].id == table_id
        expected = {(None, None, None, i) for i in range(ROWS) if i != 5}
        expected |= {(2, None, None, 5), (1, "a", None, 100), (3, "b", "q", 101)}
        columns, rows = recorded_read(engine, T)
        assert (columns, set(rows)) == (["w", "z", "v", "id"], expected)
        assert set(engine.store.rows(T)) == expected
        assert engine.check_index() == {}
        assert engine.index.layout(table_id) is not None
        code, message = errors_of(engine, lambda s: s.apply_rows(
            Map("d", "t"), [RowChange.insert((9, "c", None, 100))]))  # fmt: skip
        assert (code, message) == (1062, "Duplicate entry '100' for key 't.PRIMARY'")
    finally:
        store.gate.set()
        engine.close()

    with restarted(spark, place, expected) as again:
        Writer(again, 60).rows(T, [RowChange.update((1, "a", None, 100), (1, "a", "z", 100))])
        with streamed():
            again.flush()
            Writer(again, 61).ddl("ALTER TABLE t MODIFY w VARCHAR(4)")  # converts: streamed
            again.flush()
        expected = {(None if w is None else str(w), z, v, i) for w, z, v, i in expected}
        expected = (expected - {("1", "a", None, 100)}) | {("1", "a", "z", 100)}
        assert set(again.store.rows(T)) == expected
        assert again.durable_state().tables[T].id != table_id
        assert again.index.layout(again.durable_state().tables[T].id) is None
        assert again.check_index() == {}


def test_an_alter_after_a_rewrite_not_yet_flushed_copies_the_staged_rows(
    spark: Any, place: Any
) -> None:
    """A rewriting ALTER staged the rows; before its flush, an ALTER that only adds a
    column (and one that only adds an index) follows: they copy the staged rows rather
    than share the stage, which the first ALTER's flush adopts and forgets (sharing it
    made the next flush adopt a forgotten stage and retry forever)."""
    engine, store = filled_gated(spark, place)
    try:
        writer = Writer(engine, 10)
        store.gate.clear()  # the ALTERs stay unflushed until all three are committed
        writer.ddl("ALTER TABLE t ADD COLUMN w INT NOT NULL DEFAULT 5")  # staged
        writer.ddl("ALTER TABLE t ADD COLUMN c BIGINT AFTER id")
        writer.ddl("ALTER TABLE t ADD INDEX (v)")
        writer.rows(T, [RowChange.update((3, None, value(3), 5), (3, 9, "x", 5))])
        store.gate.set()
        engine.flush()
        expected = {(i, None, value(i), 5) for i in range(ROWS) if i != 3} | {(3, 9, "x", 5)}
        assert set(engine.store.rows(T)) == expected
        assert recorded_read(engine, T)[0] == ["id", "c", "v", "w"]
        assert_index_agrees(engine)
    finally:
        store.gate.set()
        engine.close()


def test_a_layout_whose_commit_point_is_not_recorded_is_taken_out(spark: Any, place: Any) -> None:
    """The flush of a column-moving ALTER fails at its commit point: the key index's batch,
    layout included, is undone; the process then dies at the retried commit point, the
    layout applied: the next start undoes it again (CPT.0030), reads the rows in their old
    columns, and the replayed ALTER records it."""
    engine, store = filled_gated(spark, place)
    table_id = engine.durable_state().tables[T].id
    store.fail = True
    Writer(engine, 10).ddl("ALTER TABLE t ADD COLUMN z INT FIRST")
    with pytest.raises(RuntimeError, match="metadata database unreachable"):
        engine.flush()
    assert engine.index.layout(table_id) is None
    store.reached.clear()
    store.gate.clear()  # the next attempt stops at its commit point: the process "dies" there
    assert store.reached.wait(30)
    assert engine.index.layout(table_id) is not None
    engine.index.close()
    again = start(spark, place)
    try:
        assert again.index.layout(table_id) is None
        assert set(again.store.rows(T)) == {(i, value(i)) for i in range(ROWS)}
        assert again.check_index() == {}
        Writer(again, 10).ddl("ALTER TABLE t ADD COLUMN z INT FIRST")
        again.flush()
        assert again.index.layout(table_id) is not None
        assert set(again.store.rows(T)) == {(None, i, value(i)) for i in range(ROWS)}
        assert again.check_index() == {}
    finally:
        again.close()
        engine._closing = True  # the first engine gives up: its commit point fails
        store.gate.set()
        engine.close()


def contents(engine: SparkEngine) -> dict[Any, list[Any]]:
    """Both tables' rows, in a stable order."""
    return {ref: sorted(engine.store.rows(ref), key=repr) for ref in (T, N)}


def errors_of(engine: Any, statement: str | Callable[[Any], None]) -> tuple[int, str]:
    """The error of a DDL ``statement`` (or of a transaction running what it does with
    the session)."""
    writer = Writer(engine, 50)
    with pytest.raises(EngineError) as raised:
        if isinstance(statement, str):
            writer.ddl(statement)
        else:
            writer.run(lambda: statement(writer.session))
    return raised.value.code, raised.value.message


def fails_cleanly(engine: SparkEngine, failing: Callable[[], tuple[int, str]]) -> tuple[int, str]:
    """``failing``'s error, once checked that it changed no row and left no stage in the
    key index, and that no table was read whole meanwhile."""
    before = contents(engine)
    with streamed():
        error = failing()
    assert contents(engine) == before
    assert all(table_id >= 0 for table_id in engine.index.table_ids())
    return error


@pytest.mark.parametrize(
    "statement",
    [
        "ALTER TABLE n ADD PRIMARY KEY (a)",  # 1062: a key twice under the new key
        "ALTER TABLE t MODIFY v INT NOT NULL, ADD UNIQUE (v), DROP PRIMARY KEY, "
        "ADD PRIMARY KEY (v)",  # 1062 after the conversion
        "ALTER TABLE t MODIFY v ENUM('0', '7', '14')",  # a value that does not convert: row 4
    ],
)
def test_an_alter_that_fails_gives_the_in_memory_engines_error_and_changes_nothing(
    spark: Any, place: Any, statement: str
) -> None:
    memory = InMemoryEngine()
    fill(Writer(memory))
    expected = errors_of(memory, statement)
    engine = start(spark, place)
    try:
        fill(Writer(engine))
        engine.flush()
        assert fails_cleanly(engine, lambda: errors_of(engine, statement)) == expected
        Writer(engine, 60).rows(T, [RowChange.insert((200, "z"))])  # the table goes on
        engine.flush()
        assert engine.check_index() == {}
    finally:
        engine.close()


def test_a_transaction_whose_second_alter_fails_forgets_the_first_ones_stage(
    spark: Any, place: Any
) -> None:
    """The first ALTER of a transaction staged its rows in the key index, the second one
    fails (1062): the transaction changes nothing and leaves no stage behind (before, the
    stage stayed until the next start; a retried transaction staged again each time)."""
    engine = start(spark, place)
    try:
        fill(Writer(engine))
        engine.flush()

        def two_alters(session: Any) -> None:
            session.apply_ddl("ALTER TABLE t ADD COLUMN x INT DEFAULT 1", "d")
            session.apply_ddl("ALTER TABLE n ADD PRIMARY KEY (a)", "d")

        assert fails_cleanly(engine, lambda: errors_of(engine, two_alters))[0] == 1062
        assert engine.check_index() == {}
    finally:
        engine.close()


def test_a_stage_a_crash_left_is_dropped_at_start(spark: Any, place: Any) -> None:
    """An ALTER staged its rows and the process died before its flush: the next start
    forgets the stage (the ALTER is replayed from the relay log)."""
    engine = start(spark, place)
    writer = Writer(engine)
    fill(writer)
    engine.flush()
    engine.close()
    with LmdbKeyIndex(engine.key_index_path) as index:
        stage = index.stage([(1, "a", 5)], lambda row: (row[0],))
        assert stage in index.table_ids()
    again = start(spark, place)
    try:
        assert all(table_id >= 0 for table_id in again.index.table_ids())
        assert len(again.store.rows(T)) == ROWS
        assert again.check_index() == {}
    finally:
        again.close()
