"""Which ALTERs the Spark engine runs as an Iceberg schema change, and the change
(``schema_evolution``): values kept → metadata only; values converted → a rewrite."""

from __future__ import annotations

import pytest

from spark_replica.applier_core.storage import TableRef
from spark_replica.applier_core.storage.ddl import Catalog
from spark_replica.applier_core.storage.ddl_alter import alter_columns
from spark_replica.applier_core.storage.ddl_parser import parse_ddl
from spark_replica.applier_core.storage.spark.schema_evolution import SchemaChange, schema_change

TABLE = (
    "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(20) NOT NULL, c TINYINT, "
    "d DECIMAL(10,2), f FLOAT, tm TIME, y YEAR)"
)
ORDER = ("id", "a", "b", "c", "d", "f", "tm", "y")


def change(alter: str) -> SchemaChange | None:
    catalog = Catalog(frozenset({"d"}))
    for operation in parse_ddl(TABLE, "d"):
        catalog = catalog.apply(operation)
    definition = catalog.tables[TableRef("d", "t")]
    (operation,) = parse_ddl(f"ALTER TABLE t {alter}", "d")
    return schema_change(definition, alter_columns(operation, definition))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("alter", "expected"),
    [
        ("ADD COLUMN z INT", SchemaChange(adds=(("z", "INT"),), order=(*ORDER, "z"))),
        ("ADD COLUMN z INT FIRST", SchemaChange(adds=(("z", "INT"),), order=("z", *ORDER))),
        ("DROP COLUMN a", SchemaChange(drops=("a",), order=tuple(c for c in ORDER if c != "a"))),
        ("RENAME COLUMN a TO a2", SchemaChange(renames=(("a", "a2"),), order=ORDER)),
        ("CHANGE a A INT", SchemaChange(renames=(("a", "A"),), order=ORDER)),
        ("MODIFY a BIGINT", SchemaChange(widens=(("a", "BIGINT"),), order=ORDER)),
        ("MODIFY f DOUBLE", SchemaChange(widens=(("f", "DOUBLE"),), order=ORDER)),
        ("MODIFY d DECIMAL(12,2)", SchemaChange(widens=(("d", "DECIMAL(12,2)"),), order=ORDER)),
        ("MODIFY c INT", SchemaChange(order=ORDER)),  # Iceberg keeps both as int
        ("MODIFY b VARCHAR(30) NOT NULL", SchemaChange(order=ORDER)),
        ("MODIFY b VARCHAR(20)", SchemaChange(optional=("b",), order=ORDER)),
        ("MODIFY a INT AFTER b", SchemaChange(order=("id", "b", "a", "c", "d", "f", "tm", "y"))),
        ("ADD INDEX (a), ENGINE=InnoDB", SchemaChange(order=ORDER)),
    ],
)
def test_alters_that_keep_the_values_are_schema_changes(alter: str, expected: SchemaChange) -> None:
    assert change(alter) == expected


@pytest.mark.parametrize(
    "alter",
    [
        "ADD COLUMN z INT DEFAULT 5",  # existing rows take 5
        "ADD COLUMN z INT NOT NULL",  # existing rows take 0
        "MODIFY a VARCHAR(10)",  # INT → text
        "MODIFY b VARCHAR(10) NOT NULL",  # values checked and maybe cut
        "MODIFY a INT NOT NULL",  # Iceberg cannot make a column required
        "MODIFY tm TIME(3)",  # TIME is kept as text with its digits
        "MODIFY d DECIMAL(12,3)",  # the scale changes
        "MODIFY y SMALLINT",
        "MODIFY a INT UNSIGNED",
        "RENAME COLUMN a TO c, RENAME COLUMN c TO a",  # names swap during the change
        "DROP COLUMN a, ADD COLUMN a INT",
    ],
)
def test_alters_that_convert_values_rewrite(alter: str) -> None:
    assert change(alter) is None
