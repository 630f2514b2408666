"""Result column definitions from the catalog: which table column each result column shows
(``origins``) and the definition MySQL sends for it (``describe``); computed columns from the
engine's type. The figures are MySQL's (and MariaDB's: tests/receiver/test_column_definitions
checks them against a real server)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import sqlglot

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage import Column, EngineError, TableDef, TableRef
from spark_replica.sql_handlers.query.column_meta import (
    ColumnMeta,
    Flag,
    describe,
    origins,
)

ITEMS = TableDef(
    (Column("id", "INT", False), Column("Name", "VARCHAR(40)"), Column("price", "DECIMAL(10, 2)"),
     Column("photo", "BLOB"), Column("qty", "INT UNSIGNED"), Column("flag", "TINYINT(1)")),
    primary_key=(0,),
)  # fmt: skip
NOTES = TableDef((Column("id", "INT", False), Column("body", "TEXT")), primary_key=(0,))
FLAGS = TableDef((Column("b", "BOOLEAN"), Column("z", "INT(5) UNSIGNED ZEROFILL"),
                  Column("bits", "BIT(5)")))  # fmt: skip


class _Catalog:
    definitions = {
        TableRef("shop", "items"): ITEMS,
        TableRef("shop", "notes"): NOTES,
        TableRef("shop", "flags"): FLAGS,
    }

    def databases(self) -> list[str]:
        return ["shop"]

    def tables(self) -> list[TableRef]:
        return list(self.definitions)

    def definition(self, table: TableRef) -> TableDef:
        if table not in self.definitions:
            raise EngineError.of(ErrorCode.NO_SUCH_TABLE, table.schema, table.table)
        return self.definitions[table]


@dataclass(frozen=True)
class _Field:
    name: str
    mysql_type: str
    precision: int = 0
    scale: int = 0
    binary: bool = False
    nullable: bool = True


def _origins(sql: str) -> list[tuple[str, str, str] | None] | None:
    found = origins(sqlglot.parse_one(sql, read="mysql"), "shop", _Catalog())
    if found is None:
        return None
    return [None if o is None else (o.table.table, o.alias, o.column.name) for o in found]


def test_a_star_expands_every_table_in_order() -> None:
    assert _origins("SELECT * FROM items i JOIN notes ON i.id = notes.id") == [
        *[("items", "i", c.name) for c in ITEMS.columns],
        ("notes", "notes", "id"),
        ("notes", "notes", "body"),
    ]


def test_columns_resolve_case_insensitively_and_through_aliases() -> None:
    assert _origins("SELECT x.NAME AS n, PRICE, qty + 1, body FROM shop.items x, notes") == [
        ("items", "x", "Name"), ("items", "x", "price"), None, ("notes", "notes", "body"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT id FROM items UNION SELECT id FROM notes",  # not one SELECT
        "SELECT * FROM items JOIN notes USING (id)",  # MySQL reorders the columns
        "SELECT * FROM (SELECT id FROM items) d",  # a derived table
    ],
)
def test_unmappable_select_lists_give_no_origins(sql: str) -> None:
    assert _origins(sql) is None


def test_an_ambiguous_column_has_no_origin() -> None:
    assert _origins("SELECT id FROM items, notes") == [None]


def test_definitions_follow_the_table_columns() -> None:
    fields = [_Field("id", "LONG", nullable=False), _Field("Name", "VAR_STRING"),
              _Field("price", "NEWDECIMAL", 10, 2), _Field("photo", "BLOB", binary=True),
              _Field("qty", "LONGLONG"), _Field("flag", "TINY")]  # fmt: skip
    expression = sqlglot.parse_one("SELECT * FROM items", read="mysql")
    found = describe(fields, origins(expression, "shop", _Catalog()))
    common = {"schema": "shop", "table": "items", "org_table": "items"}
    assert found == [
        ColumnMeta("id", "LONG", True, 11, 0, Flag.NOT_NULL | Flag.PRI_KEY | Flag.PART_KEY,
                   org_name="id", **common),
        ColumnMeta("Name", "VAR_STRING", False, 160, org_name="Name", **common),
        ColumnMeta("price", "NEWDECIMAL", True, 12, 2, org_name="price", **common),
        ColumnMeta("photo", "BLOB", True, 65535, 0, Flag.BLOB | Flag.BINARY, org_name="photo",
                   **common),
        ColumnMeta("qty", "LONG", True, 10, 0, Flag.UNSIGNED, org_name="qty", **common),
        ColumnMeta("flag", "TINY", True, 1, 0, org_name="flag", **common),
    ]  # fmt: skip


def test_integer_widths_and_zerofill_follow_the_column_type() -> None:
    """BOOLEAN is TINYINT(1): width 1, as MySQL sends it (was 4, the text has no digits)."""
    fields = [_Field("b", "TINY"), _Field("z", "LONG"), _Field("bits", "BIT")]
    expression = sqlglot.parse_one("SELECT * FROM flags", read="mysql")
    common = {"schema": "shop", "table": "flags", "org_table": "flags"}
    assert describe(fields, origins(expression, "shop", _Catalog())) == [
        ColumnMeta("b", "TINY", True, 1, 0, org_name="b", **common),
        ColumnMeta("z", "LONG", True, 5, 0, Flag.UNSIGNED | Flag.ZEROFILL, org_name="z",
                   **common),
        ColumnMeta("bits", "BIT", True, 5, 0, Flag.UNSIGNED, org_name="bits", **common),
    ]  # fmt: skip


def test_computed_columns_are_described_from_the_engine_type() -> None:
    fields = [_Field("1", "LONG", nullable=False), _Field("SUM(price)", "NEWDECIMAL", 20, 2),
              _Field("LEFT(photo, 2)", "BLOB", binary=True), _Field("UPPER(Name)", "VAR_STRING"),
              _Field("AVG(qty)", "DOUBLE")]  # fmt: skip
    assert describe(fields, None) == [
        ColumnMeta("1", "LONG", True, 11, 0, Flag.BINARY | Flag.NOT_NULL),
        ColumnMeta("SUM(price)", "NEWDECIMAL", True, 22, 2),
        ColumnMeta("LEFT(photo, 2)", "BLOB", True, 4294967295, 0, Flag.BINARY | Flag.BLOB),
        ColumnMeta("UPPER(Name)", "VAR_STRING", False, 1024),
        ColumnMeta("AVG(qty)", "DOUBLE", True, 22, 31),
    ]  # fmt: skip
