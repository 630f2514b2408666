"""The Spark engine's pure parts, without a JVM: the merged-view SQL of a table version, the
session options for a local and a cluster master, and Spark failures as MySQL errors."""

from __future__ import annotations

import pytest

from spark_replica.applier_core.storage import Column, TableDef, TableRef
from spark_replica.applier_core.storage.spark.ddl_state import DdlOutcome, apply_ddl
from spark_replica.applier_core.storage.spark.legacy_layout import merged_sql
from spark_replica.applier_core.storage.spark.queries import query_error
from spark_replica.applier_core.storage.spark.session import spark_options
from spark_replica.applier_core.storage.spark.state import DurableState, LegacyFiles, StoredTable

KEYED = TableDef((Column("id", "INT", False), Column("name", "VARCHAR(20)")), (0,))
PREFIXED = TableDef((Column("name", "VARCHAR(20)", False), Column("v", "INT")), (0,), (4,))
KEYLESS = TableDef((Column("a", "INT"), Column("b", "TEXT")))


def stored(
    definition: TableDef, *, base: bool = False, batches: tuple[int, ...] = ()
) -> StoredTable:
    return StoredTable(7, TableRef("d", "t"), definition, legacy=LegacyFiles(3, base, batches))


def test_a_table_with_no_files_reads_as_empty_with_its_types() -> None:
    sql = merged_sql("/w", stored(KEYED))
    assert sql == "SELECT CAST(NULL AS INT) AS `id`, CAST(NULL AS STRING) AS `name` WHERE 1 = 0"


def test_a_compacted_table_is_read_without_a_merge() -> None:
    """A base alone holds each key once: no window over it."""
    sql = merged_sql("/w", stored(KEYED, base=True))
    assert "ROW_NUMBER" not in sql
    assert (
        sql == "SELECT c0 AS `id`, c1 AS `name` FROM (SELECT c0, c1 FROM parquet.`/w/t7/g3/base`)"
    )


def test_a_keyed_table_reads_the_latest_row_per_key_of_its_recorded_batches_only() -> None:
    sql = merged_sql("/w", stored(KEYED, base=True, batches=(4, 9)), names=False)
    assert "FROM parquet.`/w/t7/g3/base`" in sql
    assert "FROM parquet.`/w/t7/g3/log` WHERE batch IN (4, 9)" in sql
    assert "ROW_NUMBER() OVER (PARTITION BY c0 ORDER BY _seq DESC)" in sql
    assert sql.endswith("WHERE _rn = 1 AND _op = 1")


def test_a_key_prefix_partitions_by_the_prefix() -> None:
    sql = merged_sql("/w", stored(PREFIXED, batches=(1,)))
    assert "PARTITION BY SUBSTRING(c0, 1, 4)" in sql


def test_a_keyless_table_sums_the_counts_of_each_whole_row() -> None:
    sql = merged_sql("/w", stored(KEYLESS, base=True, batches=(2,)))
    assert "SUM(_cnt) AS _n" in sql and "GROUP BY c0, c1 HAVING SUM(_cnt) > 0" in sql
    assert "EXPLODE(SEQUENCE(1, _n))" in sql


def test_the_driver_binds_to_loopback_only_with_a_local_master() -> None:
    local = spark_options()
    assert local["spark.master"] == "local[2]"
    assert local["spark.driver.host"] == local["spark.driver.bindAddress"] == "127.0.0.1"
    cluster = spark_options({"spark.master": "spark://10.0.0.9:7077"})
    assert "spark.driver.host" not in cluster and "spark.driver.bindAddress" not in cluster
    chosen = spark_options({"spark.driver.host": "10.0.0.5"})
    assert chosen["spark.driver.host"] == "10.0.0.5"


class _SparkError(Exception):
    def __init__(self, text: str, condition: str) -> None:
        super().__init__(text)
        self._condition = condition

    def getCondition(self) -> str:  # noqa: N802 (pyspark's name)
        return self._condition


@pytest.mark.parametrize(
    ("error", "code", "message"),
    [
        (
            _SparkError(
                "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter "
                "with name `nosuch` cannot be resolved.",
                "UNRESOLVED_COLUMN.WITH_SUGGESTION",
            ),
            1054,
            "Unknown column 'nosuch' in 'field list'",
        ),
        (
            _SparkError("Job 3 cancelled part of cancelled job group spark-replica-query-1", ""),
            1317,
            "Query execution was interrupted",
        ),
        (
            _SparkError("[DIVIDE_BY_ZERO] Division by zero.\nmore", "DIVIDE_BY_ZERO"),
            1105,
            "Spark: [DIVIDE_BY_ZERO] Division by zero.",
        ),
    ],
)
def test_spark_failures_become_mysql_errors(error: Exception, code: int, message: str) -> None:
    found = query_error(error)
    assert (found.code, found.message) == (code, message)


def _ddl_outcome(statements: list[str]) -> tuple[DurableState, DdlOutcome]:
    from spark_replica.applier_core.storage.ddl import (
        Catalog,
    )
    from spark_replica.applier_core.storage.ddl_parser import parse_ddl

    state = DurableState(frozenset({"d"}), next_table_id=1)
    operations = []
    catalog = Catalog(frozenset({"d"}))
    for statement in statements:
        for operation in parse_ddl(statement, "d"):
            catalog = catalog.apply(operation)
            operations.append(operation)
    return state, apply_ddl(state, tuple(operations))


def test_ddl_on_tables_it_creates_creates_them_once_under_their_final_names() -> None:
    """A table created, altered and renamed by one DDL transaction is created once, under
    its final name and definition, after the steps on older tables."""
    state, outcome = _ddl_outcome(
        [
            "CREATE TABLE a (id INT PRIMARY KEY)",
            "ALTER TABLE a ADD COLUMN v INT",
            "RENAME TABLE a TO b",
        ]  # fmt: skip
    )
    assert outcome.steps == [] and outcome.created == {1}
    created = outcome.state.tables[TableRef("d", "b")]
    assert (created.id, [c.name for c in created.definition.columns]) == (1, ["id", "v"])


def test_ddl_on_recorded_tables_takes_catalog_steps_in_order() -> None:
    """RENAME swaps, TRUNCATE, DROP and ALTER of recorded tables become catalog steps in
    statement order; an ALTER that converts values gives the table a new id and drops the
    old one."""
    base = {
        TableRef("d", name): StoredTable(i, TableRef("d", name), KEYED, snapshot=10 + i)
        for i, name in enumerate(("a", "b", "c"), 1)
    }
    state = DurableState(frozenset({"d"}), base, next_table_id=4)
    from spark_replica.applier_core.storage.ddl_parser import parse_ddl

    operations = tuple(
        op
        for text in (
            "RENAME TABLE a TO x, b TO a, x TO b",
            "TRUNCATE TABLE c",
            "ALTER TABLE c ADD COLUMN z INT DEFAULT 1",
            "DROP TABLE a",
        )  # fmt: skip
        for op in parse_ddl(text, "d")
    )
    outcome = apply_ddl(state, operations)
    steps = [(s.kind, s.table.table, s.table_id, s.to and s.to.table) for s in outcome.steps]
    assert steps == [
        ("rename", "a", 1, "x"), ("rename", "b", 2, "a"), ("rename", "x", 1, "b"),
        ("truncate", "c", 3, None), ("drop", "c", 3, None), ("drop", "a", 2, None),
    ]  # fmt: skip
    assert outcome.created == {4} and outcome.touched == {3}
    tables = {ref.table: t.id for ref, t in outcome.state.tables.items()}
    assert tables == {"b": 1, "c": 4}
