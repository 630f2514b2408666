"""The Spark engine's key index on disk: a restart reads no table, an index a batch ahead is
undone, a missing or damaged one is rebuilt from the tables, ``check_index`` compares them."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.storage import EngineError, RowChange, TableRef
from spark_replica.applier_core.storage.key_index import LmdbKeyIndex, TableChanges
from spark_replica.applier_core.storage.spark import engine as engine_module
from spark_replica.applier_core.storage.spark.engine import SparkEngine
from spark_replica.applier_core.storage.spark.table_writes import iter_rows
from tests.unit.storage.spark.test_engine_durability import N, T, Writer, setup_tables

pytestmark = pytest.mark.spark


def start(spark: Any, place: tuple[str, Any]) -> SparkEngine:
    root, store = place
    return SparkEngine(spark, root, store, flush_interval=0.05)


def filled(spark: Any, place: Any) -> int:
    """An engine's tables filled, flushed and closed; the number of its last GTID."""
    engine = start(spark, place)
    writer = Writer(engine)
    setup_tables(writer)
    writer.rows(T, [RowChange.insert((i, f"v{i}")) for i in range(20)])
    writer.rows(N, [RowChange.insert((1, "x")), RowChange.insert((1, "x"))])
    engine.flush()
    engine.close()
    assert engine.key_index_path == str(Path(place[0]).parent / "key-index")
    return writer.gno


def code_of(writer: Writer, table: TableRef, change: RowChange) -> int:
    with pytest.raises(EngineError) as caught:
        writer.rows(table, [change])
    return caught.value.code


def add_ghost_row(path: str, table_id: int) -> None:
    """Damage the index of ``filled``'s table T: a row (77) the table lacks, at the same
    batch."""
    with LmdbKeyIndex(path) as index:
        batch = index.batch
        rows = [(i, f"v{i}") for i in range(20)] + [(77, "ghost")]
        index.rebuild(table_id, rows, lambda row: row[:1])
        index.set_batch(batch)


def fail(*args: Any) -> Any:
    raise AssertionError("the tables were read")


def test_a_restart_reads_no_table(spark: Any, place: Any, monkeypatch: Any) -> None:
    gno = filled(spark, place)
    monkeypatch.setattr(engine_module, "iter_rows", fail)
    monkeypatch.setattr(engine_module, "rebuild_key_index", fail)
    again = start(spark, place)
    try:
        writer = Writer(again, gno + 1)
        assert code_of(writer, T, RowChange.insert((5, "dup"))) == 1062
        assert code_of(writer, T, RowChange.delete((99, "none"))) == 1032
        assert code_of(writer, N, RowChange.delete((2, "y"))) == 1032
        writer.rows(T, [RowChange.update((5, "v5"), (5, "five"))])
        writer.rows(N, [RowChange.delete((1, "x"))])
        again.flush()
        assert dict(again.rows(T))[5] == "five"  # type: ignore[arg-type]
        assert again.rows(N) == [(1, "x")]
    finally:
        again.close()


def test_an_index_a_batch_ahead_is_undone_at_start(spark: Any, place: Any) -> None:
    gno = filled(spark, place)
    engine = start(spark, place)
    state = engine.durable_state()
    table_id = state.tables[T].id
    path = engine.key_index_path
    engine.close()
    with LmdbKeyIndex(path) as index:  # a flush that crashed before its commit point
        index.apply(state.last_batch + 1, {table_id: TableChanges(puts={(500,): (500, "x")})})
    again = start(spark, place)
    try:
        assert again.index.batch == state.last_batch
        Writer(again, gno + 1).rows(T, [RowChange.insert((500, "new"))])  # not a duplicate
        assert again.check_index() == {}
    finally:
        again.close()


def test_a_missing_index_is_rebuilt_and_a_damaged_one_is_found(spark: Any, place: Any) -> None:
    gno = filled(spark, place)
    engine = start(spark, place)
    path, state = engine.key_index_path, engine.durable_state()
    engine.close()
    LmdbKeyIndex.remove(path)
    again = start(spark, place)
    try:
        assert again.index.batch == state.last_batch
        assert code_of(Writer(again, gno + 1), T, RowChange.insert((5, "dup"))) == 1062
        assert sorted(again.rows(N)) == [(1, "x"), (1, "x")]
        assert again.check_index() == {}
    finally:
        again.close()
    add_ghost_row(path, state.tables[T].id)
    damaged = start(spark, place)
    try:
        found = damaged.check_index()
        assert list(found) == [T]
        assert [(d.kind, d.key) for d in found[T]] == [("extra", (77,))]
    finally:
        damaged.close()


def test_a_change_the_table_cannot_match_fails_the_flush_naming_the_table(
    spark: Any, place: Any
) -> None:
    """The flush's ``MERGE`` joins only the rows the key index says the table holds (an
    inner join, the changes broadcast); an index holding a row the table lacks would lose
    that row's update silently, so the rows the ``MERGE`` matched are counted: fewer fails
    the flush with an error naming the table, and nothing of the flush is recorded."""
    gno = filled(spark, place)
    engine = start(spark, place)
    path, state = engine.key_index_path, engine.durable_state()
    engine.close()
    add_ghost_row(path, state.tables[T].id)
    damaged = start(spark, place)
    try:
        writer = Writer(damaged, gno + 1)
        writer.rows(T, [RowChange.update((77, "ghost"), (77, "seen")),
                        RowChange.update((3, "v3"), (3, "three"))])  # fmt: skip
        writer.rows(T, [RowChange.insert((100, "new"))])
        with pytest.raises(RuntimeError) as caught:
            damaged.flush()
        text = str(caught.value)
        assert f"Iceberg table {damaged.iceberg.sql_name(T)} holds 1 of the 2 rows" in text
        assert damaged.failure is not None and damaged.failure in text  # flushing stopped
        assert damaged.durable_state().last_batch == state.last_batch
        recorded = damaged.durable_state().tables[T].snapshot
        assert damaged.iceberg.current_snapshot(T) == recorded  # the MERGE was undone
    finally:
        damaged.close()
    with LmdbKeyIndex(path) as index:
        assert index.batch == state.last_batch


def test_a_table_is_read_in_slices(spark: Any, place: Any) -> None:
    filled(spark, place)
    engine = start(spark, place)
    try:
        stored = engine.durable_state().tables[T]
        rows = list(iter_rows(engine.spark, engine.iceberg, stored, slice_rows=6))
        assert sorted(rows) == [(i, f"v{i}") for i in range(20)]  # type: ignore[type-var]
    finally:
        engine.close()


def test_ddl_keeps_the_index_with_the_tables_across_a_restart(
    spark: Any, place: Any, monkeypatch: Any
) -> None:
    gno = filled(spark, place)
    engine = start(spark, place)
    writer = Writer(engine, gno + 1)
    writer.ddl("ALTER TABLE t ADD COLUMN w INT")
    writer.rows(T, [RowChange.insert((100, "new", 1))])  # before the ALTER is flushed
    writer.ddl("RENAME TABLE t TO r")
    writer.ddl("TRUNCATE TABLE n")
    writer.rows(N, [RowChange.insert((3, "z"))])
    writer.ddl("CREATE TABLE gone (id INT PRIMARY KEY)")
    writer.ddl("DROP TABLE gone")
    assert engine.check_index() == {}
    engine.close()
    monkeypatch.setattr(engine_module, "rebuild_key_index", fail)
    again = start(spark, place)
    try:
        writer = Writer(again, writer.gno + 1)
        r = TableRef("d", "r")
        assert code_of(writer, r, RowChange.insert((100, "dup", 2))) == 1062
        assert code_of(writer, r, RowChange.insert((5, "dup", 2))) == 1062
        assert code_of(writer, N, RowChange.delete((1, "x"))) == 1032
        assert len(again.rows(r)) == 21 and again.rows(N) == [(3, "z")]
        assert again.check_index() == {}
    finally:
        again.close()


WAIT = 60.0


def test_the_key_index_takes_a_batch_while_spark_writes_it(
    spark: Any, place: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flush applies its batch to the key index beside the tables' Iceberg commits, not
    after them: the Iceberg write here waits until the key index has begun the batch."""
    engine = start(spark, place)
    try:
        writer = Writer(engine)
        setup_tables(writer)
        engine.flush()
        began, threads = threading.Event(), []
        apply, write = engine.index.apply, engine_module.write_changes

        def applying(batch: int, writes: Any) -> None:
            threads.append(threading.current_thread().name)
            began.set()
            apply(batch, writes)

        def writing(*args: Any) -> bool:
            assert began.wait(WAIT), "the key index waited for the Iceberg commits"
            return write(*args)

        monkeypatch.setattr(engine.index, "apply", applying)
        monkeypatch.setattr(engine_module, "write_changes", writing)
        writer.rows(T, [RowChange.insert((i, f"v{i}")) for i in range(5)])
        engine.flush()
        assert threads == ["spark-engine-key-index"]
        assert sorted(engine.rows(T)) == [(i, f"v{i}") for i in range(5)]  # type: ignore[type-var]
        assert engine.check_index() == {}
    finally:
        engine.close()
    assert not [t for t in threading.enumerate() if t.name == "spark-engine-key-index"]


@pytest.mark.parametrize("failing", ["iceberg", "index"])
def test_a_batch_that_fails_on_either_side_leaves_the_index_as_recorded(
    spark: Any, place: Any, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    """The Iceberg commits fail (the key index took the batch meanwhile: undone) or the key
    index fails (the Iceberg commits are not recorded): the flush fails, the index stays at
    the recorded batch, and the flush that retries it gives the rows and an index that
    agrees with the tables."""
    engine = start(spark, place)
    try:
        writer = Writer(engine)
        setup_tables(writer)
        engine.flush()
        recorded = engine.durable_state().last_batch
        failures = [RuntimeError(f"the {failing} side failed (as a test)")]
        apply, write = engine.index.apply, engine_module.write_changes

        def applying(batch: int, writes: Any) -> None:
            apply(batch, writes)
            if failing == "index" and failures:
                raise failures.pop()

        def writing(*args: Any) -> bool:
            done = write(*args)
            if failing == "iceberg" and failures:
                raise failures.pop()
            return done

        undo, after_undo = engine._undo_index, []

        def undoing(batch: int) -> None:
            undo(batch)
            after_undo.append(engine.index.batch)

        monkeypatch.setattr(engine.index, "apply", applying)
        monkeypatch.setattr(engine_module, "write_changes", writing)
        monkeypatch.setattr(engine, "_undo_index", undoing)
        with pytest.raises(RuntimeError, match="as a test"):
            writer.rows(T, [RowChange.insert((i, f"v{i}")) for i in range(5)])
            engine.flush()
        engine.flush()  # the retry
        assert after_undo == ([recorded] if failing == "iceberg" else [])
        assert engine.durable_state().last_batch == engine.index.batch > recorded
        assert sorted(engine.rows(T)) == [(i, f"v{i}") for i in range(5)]  # type: ignore[type-var]
        assert engine.check_index() == {}
    finally:
        engine.close()
