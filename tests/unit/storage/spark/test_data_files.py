"""Appends written as Parquet data files by pyarrow and committed through Iceberg's API
(``data_files``): the table reads the same as one Spark's own writer filled, through Spark
and through pyiceberg, with the file layout the engine's tables ask for."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spark_replica.applier_core.storage.interface import Column, TableDef, TableRef
from spark_replica.applier_core.storage.spark import iceberg
from spark_replica.applier_core.storage.spark.catalog import IcebergCatalog
from spark_replica.applier_core.storage.spark.data_files import (
    BLOOM_FILTER_VALUES,
    DataFileAppender,
    UnsupportedType,
    bloom_filters,
    file_schema,
    to_file_schema,
)
from spark_replica.applier_core.storage.spark.iceberg import local_path
from spark_replica.applier_core.storage.spark.state import StoredTable
from spark_replica.applier_core.storage.spark.types import (
    from_arrow_rows,
    spark_schema,
    to_arrow_table,
)
from tests.unit.storage.spark.test_types import (
    EDGE_COLUMNS,
    EDGE_ROWS,
    assert_same_rows,
    expected_rows,
)

pytestmark = pytest.mark.spark

SUMMARY = {"replica.batch": "12", "replica.gtids": "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5"}


@pytest.fixture
def catalog(spark: Any, tmp_path: Path) -> Iterator[IcebergCatalog]:
    """A new Iceberg JDBC catalog (SQLite) in the running session, as the engine has one."""
    name = f"files_{uuid.uuid4().hex[:12]}"
    warehouse = tmp_path / "warehouse"
    options = iceberg.catalog_options(name, f"sqlite:///{tmp_path / 'meta.db'}", warehouse)
    options[f"spark.sql.catalog.{name}.cache-enabled"] = "false"  # as the engine's
    for key, value in options.items():
        spark.conf.set(key, value)
    yield IcebergCatalog(spark, name, str(warehouse))
    for key in options:
        spark.conf.unset(key)


def _table(catalog: IcebergCatalog, name: str, definition: TableDef, table_id: int) -> StoredTable:
    ref = TableRef("shop", name)
    catalog.create(ref, definition, table_id)
    return StoredTable(table_id, ref, definition, catalog.current_snapshot(ref))


def _read(spark: Any, catalog: IcebergCatalog, table: StoredTable) -> pa.Table:
    return spark.table(catalog.sql_name(table.ref)).orderBy("id").toArrow()


EDGE = TableDef(EDGE_COLUMNS, primary_key=(0,))


def test_a_table_appended_by_file_reads_as_one_spark_wrote(
    spark: Any, catalog: IcebergCatalog, pyiceberg_pool: None
) -> None:
    """Every MySQL type's edge values (NULLs, zero dates, extremes, TIME text, DECIMAL(65)
    as text, BIT(64), geometry, vectors): appended by file and by Spark's writer, the two
    tables read back the same rows of the same Spark types, and the engine's values."""
    by_spark = _table(catalog, "by_spark", EDGE, 1)
    by_file = _table(catalog, "by_file", EDGE, 2)
    data = to_arrow_table(EDGE_COLUMNS, EDGE_ROWS)
    spark.createDataFrame(data, schema=spark_schema(EDGE_COLUMNS)).writeTo(
        catalog.sql_name(by_spark.ref)
    ).append()
    assert DataFileAppender(catalog).append(by_file, data, SUMMARY, file_bytes=1 << 20)

    theirs, ours = _read(spark, catalog, by_spark), _read(spark, catalog, by_file)
    assert ours.schema == theirs.schema
    assert ours == theirs
    rows = from_arrow_rows(EDGE_COLUMNS, ours)
    assert_same_rows(EDGE_COLUMNS, rows, expected_rows(EDGE_COLUMNS, EDGE_ROWS))

    from pyiceberg.catalog.sql import SqlCatalog

    reader = SqlCatalog(catalog.name, **iceberg.pyiceberg_properties(
        f"sqlite:///{Path(catalog.root).parent / 'meta.db'}", catalog.root))  # fmt: skip
    scanned = {
        name: reader.load_table(("shop", name)).scan().to_arrow().sort_by("id")
        for name in ("by_spark", "by_file")
    }
    assert scanned["by_file"] == scanned["by_spark"]


def test_the_append_is_one_snapshot_carrying_the_summary_the_engine_recognises(
    spark: Any, catalog: IcebergCatalog
) -> None:
    definition = TableDef((Column("id", "INT", nullable=False), Column("v", "VARCHAR(20)")), (0,))
    table = _table(catalog, "t", definition, 3)
    data = to_arrow_table(definition.columns, [(i, f"v{i}") for i in range(1000)])
    # Two files of about 4 KiB of Arrow each, in one commit.
    assert DataFileAppender(catalog).append(table, data, SUMMARY, file_bytes=data.nbytes // 2)

    snapshot = catalog.committed_since(table.ref, table.snapshot)  # ours, not a foreign one
    found = spark.sql(
        f"SELECT snapshot_id, parent_id, operation, summary "
        f"FROM {catalog.sql_name(table.ref)}.snapshots ORDER BY committed_at"
    ).collect()
    assert [row.snapshot_id for row in found] == [table.snapshot, snapshot]
    assert found[-1].parent_id == table.snapshot and found[-1].operation == "append"
    summary = found[-1].summary
    assert {key: summary[key] for key in SUMMARY} == SUMMARY
    assert summary["spark.app.id"] == spark.sparkContext.applicationId
    assert (summary["added-data-files"], summary["added-records"]) == ("2", "1000")
    files = spark.sql(
        f"SELECT file_path, record_count FROM {catalog.sql_name(table.ref)}.files"
    ).collect()
    assert sorted(row.record_count for row in files) == [500, 500]
    assert all(local_path(row.file_path).startswith(catalog.location(3)) for row in files)
    assert spark.sql(f"SELECT count(*), max(v) FROM {catalog.sql_name(table.ref)}").collect()[
        0
    ] == (1000, "v999")


def test_files_carry_field_ids_and_bloom_filters_of_the_primary_key(
    spark: Any, catalog: IcebergCatalog
) -> None:
    definition = TableDef(
        (Column("a", "INT", nullable=False), Column("b", "TINYINT"), Column("k", "BIGINT")),
        primary_key=(2, 0),
    )
    table = _table(catalog, "keyed", definition, 4)
    data = to_arrow_table(definition.columns, [(i, i % 100, -i) for i in range(5000)])
    assert DataFileAppender(catalog).append(table, data, SUMMARY, file_bytes=1 << 30)
    (path,) = [
        local_path(row.file_path)
        for row in spark.sql(f"SELECT file_path FROM {catalog.sql_name(table.ref)}.files").collect()
    ]
    schema = pq.read_schema(path)
    assert [field.metadata[b"PARQUET:field_id"] for field in schema] == [b"1", b"2", b"3"]
    assert schema.field("b").type == pa.int32()  # Iceberg's int, not Spark's TINYINT
    group = pq.ParquetFile(path).metadata.row_group(0)
    offsets = {group.column(i).path_in_schema: group.column(i).bloom_filter_offset
               for i in range(group.num_columns)}  # fmt: skip
    assert offsets["a"] is not None and offsets["k"] is not None and offsets["b"] is None
    assert spark.sql(
        f"SELECT b FROM {catalog.sql_name(table.ref)} WHERE a = 4321 AND k = -4321"
    ).collect() == [(21,)]


def test_a_null_in_a_required_column_writes_nothing(spark: Any, catalog: IcebergCatalog) -> None:
    definition = TableDef((Column("id", "INT", nullable=False),), (0,))
    table = _table(catalog, "strict", definition, 5)
    data = pa.table({"id": pa.array([1, None], pa.int32())})
    with pytest.raises(ValueError, match="'id' is NOT NULL but a value is NULL"):
        DataFileAppender(catalog).append(table, data, SUMMARY, file_bytes=1 << 20)
    assert catalog.current_snapshot(table.ref) == table.snapshot
    assert not (Path(catalog.location(5)) / "data").exists()


def test_a_warehouse_elsewhere_is_left_to_spark(spark: Any, catalog: IcebergCatalog) -> None:
    assert DataFileAppender(catalog).enabled
    elsewhere = IcebergCatalog(spark, catalog.name, "s3://bucket/warehouse")
    definition = TableDef((Column("id", "INT", nullable=False),), (0,))
    table = StoredTable(6, TableRef("shop", "remote"), definition, 0)
    data = to_arrow_table(definition.columns, [(1,)])
    assert not DataFileAppender(elsewhere).append(table, data, SUMMARY, file_bytes=1 << 20)


def test_iceberg_types_outside_the_mapping_are_refused() -> None:
    schema = (
        '{"type":"struct","schema-id":0,'
        '"fields":[{"id":1,"name":"u","required":false,"type":"uuid"}]}'
    )
    with pytest.raises(UnsupportedType, match="uuid"):
        file_schema(schema)
    mapped = file_schema(
        '{"type":"struct","schema-id":0,"fields":['
        '{"id":1,"name":"d","required":true,"type":"decimal(20, 0)"},'
        '{"id":2,"name":"v","required":false,"type":{"type":"list","element-id":3,'
        '"element":"float","element-required":false}}]}'
    )
    assert mapped.field("d").type == pa.decimal128(20, 0) and not mapped.field("d").nullable
    element = mapped.field("v").type.value_field
    assert element.type == pa.float32() and element.metadata == {b"PARQUET:field_id": b"3"}


def test_columns_other_than_the_tables_are_refused() -> None:
    schema = file_schema(
        '{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"a","required":false,"type":"int"}]}'
    )
    with pytest.raises(ValueError, match=r"do not match the Iceberg table's \['a'\]"):
        to_file_schema(pa.table({"b": pa.array([1], pa.int32())}), schema)


def test_bloom_filters_fit_the_size_iceberg_gives_them() -> None:
    definition = TableDef((Column("x.y", "INT"), Column("id", "INT")), primary_key=(1, 0))
    options = bloom_filters(definition, 10_000_000)
    # A dotted name is a nested path to pyarrow: that column goes without.
    assert options == {"id": {"ndv": BLOOM_FILTER_VALUES, "fpp": 0.01}}
    assert bloom_filters(definition, 10)["id"]["ndv"] == 10
