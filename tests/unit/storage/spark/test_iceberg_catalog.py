"""Iceberg tables in a JDBC catalog kept in the metadata database, written by Spark and read
back by Spark and by pyiceberg (decision 0017).

One table goes through what the engine will do: a format-version-2 table with an identifier
field, an append carrying a snapshot property, a row-level DELETE and a MERGE INTO written as
position deletes (merge-on-read), a read of an older snapshot; then pyiceberg's
``SqlCatalog``, on the same database, finds the namespace and the table Spark made and reads
the same rows, now and at that snapshot.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy

from spark_replica.applier_core.storage.spark import iceberg
from spark_replica.applier_core.storage.spark.jars import iceberg_available

pytestmark = pytest.mark.spark

NAMESPACE = "replica_db"
MERGE_ON_READ = ", ".join(
    f"'write.{kind}.mode' = 'merge-on-read'" for kind in ("delete", "update", "merge")
)


@pytest.fixture
def catalog(spark: Any, metadata_url: str, tmp_path: Path) -> Iterator[str]:
    """A new Iceberg JDBC catalog on ``metadata_url`` in the running session; its name.

    A catalog stays loaded in the session once used, so each test has a name of its own.
    """
    assert iceberg_available(), "the Iceberg runtime is missing: run make install"
    name = f"ice_{uuid.uuid4().hex[:12]}"
    options = iceberg.catalog_options(name, metadata_url, tmp_path / "warehouse")
    for key, value in options.items():
        spark.conf.set(key, value)
    yield name
    for key in options:
        spark.conf.unset(key)


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(row) for row in frame.collect())


def _arrow_rows(table: Any) -> list[tuple[Any, ...]]:
    columns = [table.column(name).to_pylist() for name in ("id", "v", "n")]
    return sorted(zip(*columns, strict=True))


def _snapshots(spark: Any, table: str) -> list[Any]:
    return spark.sql(
        f"SELECT snapshot_id, operation, summary FROM {table}.snapshots ORDER BY committed_at"
    ).collect()


def test_spark_writes_and_pyiceberg_reads_the_same_table(
    spark: Any, catalog: str, metadata_url: str, tmp_path: Path, pyiceberg_pool: None
) -> None:
    from pyiceberg.catalog.sql import SqlCatalog

    table = f"{catalog}.{NAMESPACE}.t"
    spark.sql(f"CREATE NAMESPACE {catalog}.{NAMESPACE}")
    spark.sql(
        f"CREATE TABLE {table} (id BIGINT NOT NULL, v STRING, n INT) USING iceberg "
        f"TBLPROPERTIES ('format-version' = '2', {MERGE_ON_READ})"
    )
    spark.sql(f"ALTER TABLE {table} SET IDENTIFIER FIELDS id")

    first = [(1, "a", 10), (2, "b", 20), (3, "c", 30), (4, "d", 40), (5, "e", 50)]
    frame = spark.createDataFrame(first, "id BIGINT, v STRING, n INT")
    frame.writeTo(table).option("snapshot-property.replica.batch", "7").append()
    spark.sql(f"DELETE FROM {table} WHERE id = 2")
    spark.conf.set("spark.sql.iceberg.snapshot-property.replica.batch", "8")
    try:
        spark.sql(
            f"MERGE INTO {table} AS t USING (SELECT * FROM VALUES "
            "(3, 'C', 31, 'u'), (4, NULL, NULL, 'd'), (6, 'f', 60, 'u') AS s(id, v, n, op)) AS s "
            "ON t.id = s.id "
            "WHEN MATCHED AND s.op = 'd' THEN DELETE "
            "WHEN MATCHED THEN UPDATE SET v = s.v, n = s.n "
            "WHEN NOT MATCHED AND s.op = 'u' THEN INSERT (id, v, n) VALUES (s.id, s.v, s.n)"
        )
    finally:
        spark.conf.unset("spark.sql.iceberg.snapshot-property.replica.batch")

    now = [(1, "a", 10), (3, "C", 31), (5, "e", 50), (6, "f", 60)]
    assert _rows(spark.table(table)) == now
    appended, deleted, merged = _snapshots(spark, table)
    assert (appended.operation, appended.summary["replica.batch"]) == ("append", "7")
    assert "replica.batch" not in deleted.summary
    assert merged.summary["replica.batch"] == "8"
    for change in (deleted, merged):  # merge-on-read: position deletes, no data file rewritten
        assert int(change.summary["added-position-deletes"]) > 0
        assert "deleted-data-files" not in change.summary
    assert merged.summary["total-equality-deletes"] == "0"
    at_append = spark.sql(f"SELECT * FROM {table} VERSION AS OF {appended.snapshot_id}")
    assert _rows(at_append) == first

    # The catalog tables Spark made hold the table as a TABLE row (schema version 1).
    engine = sqlalchemy.create_engine(metadata_url)
    try:
        with engine.connect() as connection:
            kinds = connection.execute(
                sqlalchemy.text(
                    "SELECT table_namespace, table_name, iceberg_type FROM iceberg_tables "
                    "WHERE catalog_name = :name"
                ),
                {"name": catalog},
            ).all()
    finally:
        engine.dispose()
    assert [tuple(row) for row in kinds] == [(NAMESPACE, "t", "TABLE")]

    reader = SqlCatalog(
        catalog, **iceberg.pyiceberg_properties(metadata_url, tmp_path / "warehouse")
    )
    try:
        assert (NAMESPACE,) in reader.list_namespaces()
        loaded = reader.load_table((NAMESPACE, "t"))
        assert loaded.format_version == 2
        assert loaded.schema().identifier_field_names() == {"id"}
        assert loaded.current_snapshot().snapshot_id == merged.snapshot_id
        assert loaded.current_snapshot().summary["replica.batch"] == "8"
        assert _arrow_rows(loaded.scan().to_arrow()) == now
        old = loaded.scan(snapshot_id=appended.snapshot_id).to_arrow()
        assert _arrow_rows(old) == first
    finally:
        reader.engine.dispose()


def test_the_engines_catalog_lists_tables_in_few_jvm_calls(
    spark: Any, catalog: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each JVM call waits for the GIL behind the applier's threads: a namespace (a Java
    array and a ``Namespace``, three calls) is made once, and a Java list is read by index
    (Python's iteration of one cost 78 calls for an empty list)."""
    import threading

    import py4j.clientserver

    from spark_replica.applier_core.storage.spark.catalog import IcebergCatalog

    caching = f"spark.sql.catalog.{catalog}.cache-enabled"
    spark.conf.set(caching, "false")  # as the engine's
    try:
        engine_catalog = IcebergCatalog(spark, catalog, str(tmp_path / "warehouse"))
    finally:
        spark.conf.unset(caching)
    engine_catalog.create_namespace("shop")
    calls: list[str] = []
    send = py4j.clientserver.ClientServerConnection.send_command
    this_thread = threading.get_ident()

    def counted(connection: Any, command: str) -> Any:
        if threading.get_ident() == this_thread:
            calls.append(command)
        return send(connection, command)

    monkeypatch.setattr(py4j.clientserver.ClientServerConnection, "send_command", counted)
    assert engine_catalog.tables_in("shop") == []
    assert engine_catalog.tables_in("shop") == []
    monkeypatch.undo()
    assert len(calls) <= 2 * 3, calls  # namespaceExists, listTables, its size, each time
