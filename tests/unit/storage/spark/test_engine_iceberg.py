"""The Spark engine's tables are Iceberg tables in a JDBC catalog in the metadata database
(decision 0019): other readers (pyiceberg, a second Spark session) read them by name with
the content the engine shows; every flush's commit names its batch and GTID set; a second
engine on the same metadata database is refused at its first commit point; a data directory
of the earlier layout moves into Iceberg at start."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.storage import RowChange, TableRef, TransactionRef
from spark_replica.applier_core.storage.interface import Column, TableDef
from spark_replica.applier_core.storage.spark import iceberg
from spark_replica.applier_core.storage.spark.engine import SparkEngine
from spark_replica.applier_core.storage.spark.legacy_layout import base_dir, batch_dir
from spark_replica.applier_core.storage.spark.state import (
    CommitPointMoved,
    DurableState,
    LegacyFiles,
    StoredTable,
)
from spark_replica.metadata.factory import open_store
from spark_replica.metadata.store import MetadataStore

pytestmark = pytest.mark.spark

UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
ORDERS = TableRef("shop", "orders")
ODD = TableRef("odd.db", "Odd Name")


class Map:
    def __init__(self, ref: TableRef) -> None:
        self.schema, self.table = ref.schema, ref.table


@pytest.fixture
def place(tmp_path: Path, metadata_url: str) -> Iterator[tuple[str, MetadataStore]]:
    store = open_store(metadata_url)
    yield str(tmp_path / "warehouse"), store
    store.close()


def run(engine: SparkEngine, gno: int, work: Any) -> None:
    session = engine.session(f"s{gno}")
    session.begin(TransactionRef(f"{UUID}:{gno}", gno))
    work(session)
    session.commit()


def load_shop(engine: SparkEngine) -> None:
    run(engine, 1, lambda s: s.apply_ddl("CREATE DATABASE shop", None))
    orders = "CREATE TABLE orders (id INT PRIMARY KEY, status VARCHAR(10), n TINYINT)"
    run(engine, 2, lambda s: s.apply_ddl(orders, "shop"))
    run(engine, 3, lambda s: s.apply_ddl("CREATE DATABASE `odd.db`", None))
    run(engine, 4, lambda s: s.apply_ddl("CREATE TABLE `Odd Name` (`a b` INT)", "odd.db"))
    run(engine, 5, lambda s: s.apply_rows(Map(ORDERS), [
        RowChange.insert((i, "new", i % 3)) for i in range(1, 11)]))  # fmt: skip
    paid = RowChange.update((1, "new", 1), (1, "paid", 1))
    run(engine, 6, lambda s: s.apply_rows(Map(ORDERS), [paid, RowChange.delete((2, "new", 2))]))
    run(engine, 7, lambda s: s.apply_rows(Map(ODD), [
        RowChange.insert((5,)), RowChange.insert((5,)), RowChange.insert((6,))]))  # fmt: skip
    run(engine, 8, lambda s: s.apply_rows(Map(ODD), [RowChange.delete((5,))]))


def test_other_readers_read_the_tables_by_name_with_the_engine_content(
    spark: Any, place: Any, pyiceberg_pool: None
) -> None:
    from pyiceberg.catalog.sql import SqlCatalog

    root, store = place
    engine = SparkEngine(spark, root, store, flush_interval=0.05)
    try:
        load_shop(engine)
        engine.flush()
        expected = sorted(engine.rows(ORDERS))  # type: ignore[type-var]
        assert len(expected) == 9 and (1, "paid", 1) in expected
        state = engine.durable_state()
    finally:
        engine.close()

    # A second Spark session, configured as docs/spark-engine.md says.
    other = spark.newSession()
    for key, value in iceberg.catalog_options("replica", store.catalog_url(), root).items():
        other.conf.set(key, value)
    rows = other.sql("SELECT id, status, n FROM replica.shop.orders").collect()
    assert sorted(tuple(r) for r in rows) == expected
    odd = other.sql("SELECT `a b` FROM replica.`odd%2Edb`.`Odd Name`").collect()
    assert sorted(r[0] for r in odd) == [5, 6]
    summary = other.sql(
        "SELECT summary FROM replica.shop.orders.snapshots ORDER BY committed_at DESC LIMIT 1"
    ).collect()[0][0]
    assert summary["replica.batch"] == str(state.last_batch)
    assert summary["replica.gtids"] == f"{UUID}:1-8"

    reader = SqlCatalog("replica", **iceberg.pyiceberg_properties(store.catalog_url(), root))
    try:
        table = reader.load_table(("shop", "orders"))
        assert table.current_snapshot().snapshot_id == state.tables[ORDERS].snapshot
        # Small Parquet row groups: what a writing task buffers, and what a lookup skips.
        assert table.properties["write.parquet.row-group-size-bytes"] == str(16 << 20)
        arrow = table.scan().to_arrow()
        got = sorted(zip(*(arrow.column(c).to_pylist() for c in ("id", "status", "n")),
                         strict=True))  # fmt: skip
        assert got == expected
    finally:
        reader.engine.dispose()


def test_a_second_engine_on_the_same_metadata_database_is_refused(
    spark: Any, place: Any, metadata_url: str
) -> None:
    """Two replica processes on one metadata database: the one whose commit point moved
    under it fails its flush (compare and swap) rather than interleave."""
    root, store = place
    first = SparkEngine(spark, root, store, flush_interval=0.05)
    second_store = open_store(metadata_url)
    try:
        run(first, 1, lambda s: s.apply_ddl("CREATE DATABASE shop", None))
        first.flush()
        # Another process (on another machine: a key index of its own).
        second = SparkEngine(
            spark, root, second_store, flush_interval=0.05, key_index=f"{root}-second-index"
        )
        try:
            run(second, 2, lambda s: s.apply_ddl("CREATE DATABASE other", None))
            second.flush()
            run(first, 3, lambda s: s.apply_ddl("CREATE DATABASE late", None))
            with pytest.raises(RuntimeError, match="another replica process"):
                first.flush()
            assert isinstance(first.flush_error, CommitPointMoved)
        finally:
            second.close()
    finally:
        first.close()
        second_store.close()
    assert store.load_spark_state().databases == frozenset({"shop", "other"})


def test_tables_of_the_earlier_layout_move_into_iceberg_at_start(spark: Any, place: Any) -> None:
    root, store = place
    definition = TableDef(
        (Column("id", "int", False), Column("v", "varchar(10)", True)), (0,), (0,)
    )
    legacy = StoredTable(1, ORDERS, definition, legacy=LegacyFiles(1, True, (2,)))
    spark.createDataFrame([(1, "a"), (2, "b"), (3, "c")], "c0 INT, c1 STRING").write.parquet(
        base_dir(root, legacy)
    )
    spark.createDataFrame(
        [(2, "B", 1, 2 << 32, f"{UUID}:2"), (3, None, 0, 2 << 32, f"{UUID}:2")],
        "c0 INT, c1 STRING, _op TINYINT, _seq BIGINT, _gtid STRING",
    ).write.parquet(batch_dir(root, legacy, 2))
    recorded = DurableState(frozenset({"shop"}), {ORDERS: legacy}, 2, ((UUID, "", 1, 2),), 2)
    store.commit_spark_state(DurableState(), recorded)

    engine = SparkEngine(spark, root, store, flush_interval=0.05)
    try:
        assert sorted(engine.rows(ORDERS)) == [(1, "a"), (2, "B")]  # type: ignore[type-var]
        moved = engine.durable_state().tables[ORDERS]
        assert moved.snapshot and moved.legacy is None
        assert not Path(root, "t1", "g1").exists()
        rows = engine.spark.sql(f"SELECT * FROM {engine.iceberg.sql_name(ORDERS)}").collect()
        assert sorted(tuple(r) for r in rows) == [(1, "a"), (2, "B")]
    finally:
        engine.close()
    assert store.load_spark_state().tables[ORDERS].snapshot == moved.snapshot
