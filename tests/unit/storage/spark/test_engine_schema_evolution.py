"""ALTER TABLE on the Spark engine as Iceberg schema evolution (decision 0019): an ALTER that
keeps the stored values changes the schema of the same Iceberg table, with no data file
written, and a reader of the recorded snapshot sees the new schema; a crash between the
schema change and the commit point is undone at start."""

from __future__ import annotations

from typing import Any

import pytest

from spark_replica.applier_core.storage import RowChange, TableRef
from spark_replica.applier_core.storage.spark.catalog import IcebergCatalog
from spark_replica.applier_core.storage.spark.engine import SparkEngine
from spark_replica.applier_core.storage.spark.schema_evolution import SchemaChange
from spark_replica.applier_core.storage.spark.session import active
from spark_replica.applier_core.storage.spark.types import quote_name
from tests.unit.storage.spark.test_engine_durability import (
    N,
    T,
    Writer,
    one_row_durable,
    setup_tables,
)

pytestmark = pytest.mark.spark


def start(spark: Any, place: tuple[str, Any]) -> SparkEngine:
    root, store = place
    return SparkEngine(spark, root, store, flush_interval=0.05)


def files_of(engine: SparkEngine, ref: TableRef) -> set[str]:
    """The data files of the table's recorded snapshot."""
    snapshot = engine.durable_state().tables[ref].snapshot
    name = engine.iceberg.sql_name(ref)
    query = f"SELECT file_path FROM {name}.data_files VERSION AS OF {snapshot}"
    return {r[0] for r in engine.spark.sql(query).collect()}


def recorded_read(engine: SparkEngine, ref: TableRef) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Column names and rows of the table's recorded snapshot, as any Spark session reads
    it by name (rows in the order of their text)."""
    snapshot = engine.durable_state().tables[ref].snapshot
    frame = engine.spark.sql(f"SELECT * FROM {engine.iceberg.sql_name(ref)} VERSION AS OF "
                             f"{snapshot}")  # fmt: skip
    return frame.columns, sorted((tuple(r) for r in frame.collect()), key=repr)


def test_alters_that_keep_the_values_change_only_the_schema(spark: Any, place: Any) -> None:
    """ADD (nullable, placed), DROP, RENAME, CHANGE, widening MODIFY and reordering keep the
    table's id and data files; the content, the recorded snapshot's schema, the key index
    and a restart agree."""
    engine = start(spark, place)
    try:
        writer = Writer(engine)
        setup_tables(writer)
        writer.ddl("ALTER TABLE t ADD COLUMN n SMALLINT, ADD COLUMN gone INT")
        writer.rows(T, [RowChange.insert((i, f"v{i}", i * 10, i)) for i in range(5)])
        writer.rows(N, [RowChange.insert((1, "x")), RowChange.insert((1, "x"))])
        engine.flush()
        table_id = engine.durable_state().tables[T].id
        before = files_of(engine, T)

        writer.ddl("ALTER TABLE t ADD COLUMN w VARCHAR(5) FIRST, DROP COLUMN gone, "
                   "RENAME COLUMN v TO label, MODIFY n BIGINT AFTER id")  # fmt: skip
        writer.ddl("ALTER TABLE n CHANGE a aa INT, ADD INDEX (b)")
        writer.rows(T, [RowChange.insert(("new", 7, 70, "seven"))])
        engine.flush()

        state = engine.durable_state()
        assert state.tables[T].id == table_id
        assert before <= files_of(engine, T)  # nothing rewritten; the insert added a file
        columns, rows = recorded_read(engine, T)
        assert columns == ["w", "id", "n", "label"]
        written = [(None, i, i * 10, f"v{i}") for i in range(5)] + [("new", 7, 70, "seven")]
        expected = sorted(written, key=repr)
        assert rows == expected
        assert sorted(engine.rows(T), key=lambda r: r[1]) == sorted(expected, key=lambda r: r[1])
        assert recorded_read(engine, N) == (["aa", "b"], [(1, "x"), (1, "x")])
        assert engine.check_index() == {}
    finally:
        engine.close()

    again = start(spark, place)
    try:
        assert [c.name for c in again.definition(T).columns] == ["w", "id", "n", "label"]
        assert sorted(again.rows(T), key=lambda r: r[1]) == sorted(expected, key=lambda r: r[1])
        assert again.check_index() == {}
        with again.snapshot() as snapshot:
            view = snapshot.view(T)
            found = again.spark.sql(f"SELECT n, label FROM `{view}` WHERE id = 7").collect()
        assert [tuple(r) for r in found] == [(70, "seven")]
    finally:
        again.close()


def test_an_alter_that_converts_values_rewrites_the_table(spark: Any, place: Any) -> None:
    """A new column with a DEFAULT fills the existing rows: a new Iceberg table (new id)."""
    engine = start(spark, place)
    try:
        writer = Writer(engine)
        setup_tables(writer)
        writer.rows(T, [RowChange.insert((1, "a"))])
        engine.flush()
        table_id = engine.durable_state().tables[T].id
        writer.ddl("ALTER TABLE t ADD COLUMN w INT NOT NULL DEFAULT 5")
        engine.flush()
        assert engine.durable_state().tables[T].id != table_id
        assert recorded_read(engine, T) == (["id", "v", "w"], [(1, "a", 5)])
    finally:
        engine.close()


def test_a_schema_change_without_its_commit_point_is_undone_at_start(
    spark: Any, place: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash after Iceberg took the new schema but before the commit point: the next
    start puts back the schema of the recorded snapshot, and the ALTER replayed from the
    relay log then applies on the table as it was."""
    engine, writer, recorded = one_row_durable(spark, place)
    engine.close()

    catalog: IcebergCatalog = engine.iceberg
    with active(engine.spark):
        catalog.evolve(T, SchemaChange(drops=("v",), adds=(("w", "INT"),), order=("id", "w")))
        catalog.empty_commit(T)  # the crash came after the empty commit, too
        catalog.evolve(N, SchemaChange(renames=(("a", "z"),), order=("a", "b")))

    again = start(spark, place)
    try:
        assert again.durable_state().tables == recorded.tables
        for ref, columns in ((T, ["id", "v"]), (N, ["a", "b"])):
            name = again.iceberg.sql_name(ref)
            assert again.spark.table(name).columns == columns
        assert again.spark.sql(f"SELECT * FROM {again.iceberg.sql_name(T)}").collect() == [
            (1, "a")
        ]  # the dropped column's values come back with it
        Writer(again, 10).ddl("ALTER TABLE t DROP COLUMN v, ADD COLUMN w INT")
        again.flush()
        assert recorded_read(again, T) == (["id", "w"], [(1, None)])
        assert again.check_index() == {}
    finally:
        again.close()


def bloom_filtered(engine: SparkEngine, ref: TableRef) -> list[set[str]]:
    """For each data file of the table's recorded snapshot, the columns its Parquet row
    groups carry a bloom filter of."""
    import pyarrow.parquet as pq

    found = []
    for path in sorted(files_of(engine, ref)):
        metadata = pq.ParquetFile(path.removeprefix("file:")).metadata
        found.append(
            {
                chunk.path_in_schema
                for group in range(metadata.num_row_groups)
                for chunk in (
                    metadata.row_group(group).column(i) for i in range(metadata.num_columns)
                )  # fmt: skip
                if chunk.bloom_filter_offset is not None
            }
        )
    return found


def table_properties(engine: SparkEngine, ref: TableRef) -> dict[str, str]:
    rows = engine.spark.sql(f"SHOW TBLPROPERTIES {engine.iceberg.sql_name(ref)}").collect()
    return {str(r[0]): str(r[1]) for r in rows}


def test_data_files_carry_bloom_filters_of_the_primary_key_as_it_is_named(
    spark: Any, place: Any
) -> None:
    """A keyed table's data files carry a bloom filter of its key column (a lookup by key
    skips a flush's file without reading its rows), a keyless table's none; after the key
    column is renamed the new files carry one under its new name, the old name's property
    is gone, and lookups by key in both kinds of file give the rows; a keyless table given a
    key has its next files carry a bloom filter of it."""
    from spark_replica.applier_core.storage.spark.catalog import BLOOM_FILTER_COLUMN

    engine = start(spark, place)
    try:
        writer = Writer(engine)
        setup_tables(writer)
        writer.rows(T, [RowChange.insert((i, f"v{i}")) for i in range(50)])
        writer.rows(N, [RowChange.insert((1, "x"))])
        engine.flush()
        assert bloom_filtered(engine, T) and all(f == {"id"} for f in bloom_filtered(engine, T))
        assert all(f == set() for f in bloom_filtered(engine, N))

        writer.ddl("ALTER TABLE t RENAME COLUMN id TO k")
        writer.rows(T, [RowChange.insert((100 + i, f"w{i}")) for i in range(50)])
        engine.flush()
        properties = table_properties(engine, T)
        assert properties.get(BLOOM_FILTER_COLUMN + "k") == "true"
        assert BLOOM_FILTER_COLUMN + "id" not in properties
        assert sorted(map(sorted, bloom_filtered(engine, T))) == [["id"], ["k"]]

        with engine.snapshot() as snapshot:
            view = snapshot.view(T)

            def lookup(key: int) -> list[tuple[Any, ...]]:
                query = f"SELECT * FROM `{view}` WHERE k = {key}"
                return [tuple(r) for r in engine.spark.sql(query).collect()]

            assert lookup(7) == [(7, "v7")]
            assert lookup(107) == [(107, "w7")]
            assert lookup(77) == []

        m = TableRef("d", "m")
        writer.ddl("CREATE TABLE m (a INT NOT NULL, b INT)")
        writer.rows(m, [RowChange.insert((1, 1))])
        engine.flush()
        table_id = engine.durable_state().tables[m].id
        writer.ddl("ALTER TABLE m ADD PRIMARY KEY (a)")  # a key for a keyless table
        writer.rows(m, [RowChange.insert((2, 2))])
        engine.flush()
        assert engine.durable_state().tables[m].id == table_id  # the same Iceberg table
        assert table_properties(engine, m).get(BLOOM_FILTER_COLUMN + "a") == "true"
        assert sorted(map(sorted, bloom_filtered(engine, m))) == [[], ["a"]]
    finally:
        engine.close()


def test_a_key_column_named_with_quotes_and_a_dot_is_stored_and_looked_up(
    spark: Any, place: Any
) -> None:
    """The bloom filter's table property names the key column: a name with a quote, a
    backslash and a dot (MySQL takes any of them backquoted) still creates the table, and
    its rows are written and found by key."""
    from spark_replica.applier_core.storage.spark.catalog import BLOOM_FILTER_COLUMN

    engine = start(spark, place)
    try:
        writer = Writer(engine)
        writer.ddl("CREATE DATABASE d")
        writer.ddl("CREATE TABLE q (`it's\\\\a.k` INT PRIMARY KEY, v INT)")
        q = TableRef("d", "q")
        writer.rows(q, [RowChange.insert((i, i * 10)) for i in range(5)])
        engine.flush()
        name = engine.durable_state().tables[q].definition.columns[0].name
        assert "'" in name and "\\" in name and "." in name
        assert table_properties(engine, q).get(BLOOM_FILTER_COLUMN + name) == "true"
        with engine.snapshot() as snapshot:
            query = f"SELECT v FROM `{snapshot.view(q)}` WHERE {quote_name(name)} = 3"
            assert [tuple(r) for r in engine.spark.sql(query).collect()] == [(30,)]
    finally:
        engine.close()
