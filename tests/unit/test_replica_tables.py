"""Replicated tables as MySQL 8.4 shows them: column types, information_schema rows, SHOW
results and errors, without a server (sql_handlers/tables/replica_*.py, show_schema.py)."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import expressions as exp

from spark_replica.applier_core.errors import ReplicaError
from spark_replica.applier_core.storage import (
    Column,
    EngineError,
    InMemoryEngine,
    TableDef,
    TableRef,
    TransactionRef,
)
from spark_replica.applier_core.storage.objects import StoredObject
from spark_replica.sql_handlers.tables.replica_tables import (
    InfoRows,
    ReplicaCatalog,
    create_table_text,
    schemata_row,
)
from spark_replica.sql_handlers.tables.replica_types import TypeInfo, type_info
from spark_replica.sql_handlers.tables.show_schema import show

ITEMS = TableDef(
    (
        Column("id", "INT UNSIGNED", False),
        Column("name", "VARCHAR(10)", False),
        Column("price", "DECIMAL(10, 2)", True),
        Column("kind", "ENUM('a', 'it''s')", True),
        Column("seen", "TIMESTAMP(3)", True),
        Column("note", "TEXT", True),
    ),
    primary_key=(0, 1),
    key_prefix=(0, 4),
)


def _engine(*statements: str) -> InMemoryEngine:
    """An engine whose catalog holds ``statements``' tables, one transaction each."""
    engine = InMemoryEngine()
    session = engine.session("ddl")
    for number, statement in enumerate(statements, start=1):
        session.begin(TransactionRef(f"uuid:{number}", number))
        session.apply_ddl(statement, None)
        session.prepare()
        session.commit()
    return engine


def _catalog() -> ReplicaCatalog:
    return ReplicaCatalog(
        ("empty", "shop"),
        {
            TableRef("shop", "items"): ITEMS,
            TableRef("shop", "log"): TableDef((Column("a", "INT"),)),
        },
    )


def _show(sql: str, database: str | None = None) -> tuple[list[str], list[tuple[object, ...]]]:
    catalog = _catalog()
    statement = sqlglot.parse_one(sql, read="mysql")
    if isinstance(statement, exp.Describe):
        table = statement.this
        statement = exp.Show(this="COLUMNS", target=table.this, db=table.args.get("db"))
    assert isinstance(statement, exp.Show)
    result = show(InfoRows.of(catalog), catalog, statement, database)
    assert result is not None
    columns, rows = result
    return [name for name, _ in columns], rows


# -- column types -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "column_type", "data_type"),
    [
        ("INT", "int", "int"),
        ("INT(11)", "int", "int"),
        ("INT UNSIGNED", "int unsigned", "int"),
        ("SMALLINT(5) UNSIGNED", "smallint unsigned", "smallint"),
        ("TINYINT(1)", "tinyint(1)", "tinyint"),
        ("TINYINT(4)", "tinyint", "tinyint"),
        ("BOOLEAN", "tinyint(1)", "tinyint"),
        ("BIGINT UNSIGNED", "bigint unsigned", "bigint"),
        ("SERIAL", "bigint unsigned", "bigint"),
        ("DECIMAL(10, 2)", "decimal(10,2)", "decimal"),
        ("DECIMAL(5)", "decimal(5,0)", "decimal"),
        ("DECIMAL", "decimal(10,0)", "decimal"),
        ("DECIMAL(10, 2) UNSIGNED", "decimal(10,2) unsigned", "decimal"),
        ("FLOAT", "float", "float"),
        ("FLOAT(30)", "double", "double"),
        ("FLOAT(10, 2)", "float(10,2)", "float"),
        ("DOUBLE", "double", "double"),
        ("BIT", "bit(1)", "bit"),
        ("BIT(3)", "bit(3)", "bit"),
        ("DATE", "date", "date"),
        ("DATETIME", "datetime", "datetime"),
        ("DATETIME(6)", "datetime(6)", "datetime"),
        ("TIME(3)", "time(3)", "time"),
        ("YEAR(4)", "year", "year"),
        ("CHAR", "char(1)", "char"),
        ("VARCHAR(255)", "varchar(255)", "varchar"),
        ("BINARY(4)", "binary(4)", "binary"),
        ("VARBINARY(20)", "varbinary(20)", "varbinary"),
        ("TEXT", "text", "text"),
        ("TEXT(100)", "text", "text"),
        ("TEXT(50)", "tinytext", "tinytext"),
        ("LONGBLOB", "longblob", "longblob"),
        ("JSON", "json", "json"),
        ("ENUM('a', 'B')", "enum('a','B')", "enum"),
        ("SET('x', 'y,z')", "set('x','y,z')", "set"),
        ("GEOMETRY", "geometry", "geometry"),
    ],
)
def test_column_type_as_mysql_shows_it(written: str, column_type: str, data_type: str) -> None:
    info = type_info(written)
    assert (info.column_type, info.data_type) == (column_type, data_type)


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("INT", TypeInfo("int", "int", numeric_precision=10, numeric_scale=0)),
        ("MEDIUMINT UNSIGNED", TypeInfo("mediumint unsigned", "mediumint", None, None, 8, 0)),
        ("BIGINT", TypeInfo("bigint", "bigint", numeric_precision=19, numeric_scale=0)),
        ("DECIMAL(10, 2)", TypeInfo("decimal(10,2)", "decimal", None, None, 10, 2)),
        ("DOUBLE", TypeInfo("double", "double", numeric_precision=22)),
        ("DATETIME(6)", TypeInfo("datetime(6)", "datetime", datetime_precision=6)),
        (
            "VARCHAR(10)",
            TypeInfo(
                "varchar(10)", "varchar", 10, 40, None, None, None, "utf8mb4", "utf8mb4_0900_ai_ci"
            ),
        ),  # fmt: skip
        ("VARBINARY(10)", TypeInfo("varbinary(10)", "varbinary", 10, 10)),
        (
            "TEXT",
            TypeInfo(
                "text", "text", 65535, 65535, None, None, None, "utf8mb4", "utf8mb4_0900_ai_ci"
            ),
        ),  # fmt: skip
        (
            "ENUM('a', 'it''s')",
            TypeInfo(
                "enum('a','it''s')",
                "enum",
                4,
                16,
                None,
                None,
                None,
                "utf8mb4",
                "utf8mb4_0900_ai_ci",
            ),
        ),  # fmt: skip
        (
            "SET('a', 'bc')",
            TypeInfo(
                "set('a','bc')", "set", 4, 16, None, None, None, "utf8mb4", "utf8mb4_0900_ai_ci"
            ),
        ),  # fmt: skip
        ("JSON", TypeInfo("json", "json")),
    ],
)
def test_information_schema_type_metadata(written: str, expected: TypeInfo) -> None:
    assert type_info(written) == expected


def test_every_type_the_ddl_parser_writes_is_described() -> None:
    """The engine stores the parser's rendering; each maps to MySQL's text (no fallback)."""
    engine = _engine(
        "CREATE DATABASE d",
        "CREATE TABLE d.t (a INTEGER, b NUMERIC(5), c DEC(5,2), d FIXED(4,1), e DOUBLE "
        "PRECISION, f BOOL, g NCHAR(3), h CHARACTER VARYING(5), i INT(11) UNSIGNED ZEROFILL, "
        "j ENUM('x','y''z'))",
    )
    definition = engine.definition(TableRef("d", "t"))
    assert [type_info(c.type).column_type for c in definition.columns] == [
        "int",
        "decimal(5,0)",
        "decimal(5,2)",
        "decimal(4,1)",
        "double",
        "tinyint(1)",
        "char(3)",
        "varchar(5)",
        "int(11) unsigned zerofill",
        "enum('x','y''z')",
    ]


# -- the catalog copy ---------------------------------------------------------------------------


def test_catalog_copy_compares_equal_until_ddl_commits() -> None:
    engine = _engine("CREATE DATABASE shop", "CREATE TABLE shop.t (id INT PRIMARY KEY)")
    first = ReplicaCatalog.read(engine)
    assert first == ReplicaCatalog.read(engine)
    assert first.databases == ("shop",)
    session = engine.session("alter")
    session.begin(TransactionRef("uuid:9", 9))
    session.apply_ddl("ALTER TABLE shop.t ADD COLUMN v INT", None)
    session.prepare()
    session.commit()
    second = ReplicaCatalog.read(engine)
    assert second != first
    definition = second.definition("shop", "t")
    assert definition is not None and definition.column_names == ("id", "v")


def test_no_engine_means_no_replicated_tables() -> None:
    assert ReplicaCatalog.read(None) == ReplicaCatalog()


class _DroppingCatalog:
    """A catalog whose table is dropped between tables() and definition()."""

    def databases(self) -> list[str]:
        return ["shop"]

    def database_collation(self, name: str) -> str:
        return ""

    def tables(self) -> list[TableRef]:
        return [TableRef("shop", "gone"), TableRef("shop", "kept")]

    def definition(self, table: TableRef) -> TableDef:
        if table.table == "gone":
            raise EngineError(1146, "Table 'shop.gone' doesn't exist")
        return TableDef((Column("a", "INT"),))

    def objects(self) -> list[StoredObject]:
        return []


def test_a_table_dropped_while_reading_is_left_out() -> None:
    assert list(ReplicaCatalog.read(_DroppingCatalog()).definitions) == [TableRef("shop", "kept")]


# -- information_schema rows --------------------------------------------------------------------


def test_columns_rows() -> None:
    rows = InfoRows.of(_catalog()).column_rows[("shop", "items")]
    assert [
        (r["column_name"], r["ordinal_position"], r["data_type"], r["column_type"]) for r in rows
    ] == [
        ("id", 1, "int", "int unsigned"),
        ("name", 2, "varchar", "varchar(10)"),
        ("price", 3, "decimal", "decimal(10,2)"),
        ("kind", 4, "enum", "enum('a','it''s')"),
        ("seen", 5, "timestamp", "timestamp(3)"),
        ("note", 6, "text", "text"),
    ]
    assert [(r["is_nullable"], r["column_key"]) for r in rows[:3]] == [
        ("NO", "PRI"),
        ("NO", "PRI"),
        ("YES", ""),
    ]


def test_tables_and_schemata_rows() -> None:
    rows = InfoRows.of(_catalog())
    assert [(r["schema_name"], r["default_collation_name"]) for r in rows.schemata] == [
        ("empty", "utf8mb4_0900_ai_ci"),
        ("shop", "utf8mb4_0900_ai_ci"),
    ]
    assert [(r["table_name"], r["table_type"], r["engine"]) for r in rows.tables] == [
        ("items", "BASE TABLE", "SparkSQL"),
        ("log", "BASE TABLE", "SparkSQL"),
    ]


def test_merged_rows_keep_the_first_source_for_a_duplicate_table() -> None:
    mine = InfoRows.of(_catalog())
    clash = InfoRows.of(ReplicaCatalog(("shop",), {TableRef("shop", "log"): ITEMS}))
    merged = mine.merged(clash)
    assert [r["schema_name"] for r in merged.schemata] == ["empty", "shop"]
    assert [r["column_name"] for r in merged.column_rows[("shop", "log")]] == ["a"]
    assert merged.merged(InfoRows([schemata_row("new")])).schemata[-1]["schema_name"] == "new"


# -- SHOW ---------------------------------------------------------------------------------------


def test_show_databases() -> None:
    assert _show("SHOW DATABASES") == (["Database"], [("empty",), ("shop",)])
    assert _show("SHOW SCHEMAS LIKE 's%'") == (["Database (s%)"], [("shop",)])
    assert _show("SHOW DATABASES LIKE 'S%'") == (["Database (S%)"], [])
    assert _show("SHOW DATABASES WHERE `Database` <> 'shop'") == (["Database"], [("empty",)])


def test_show_tables() -> None:
    assert _show("SHOW TABLES FROM shop") == (["Tables_in_shop"], [("items",), ("log",)])
    assert _show("SHOW TABLES", "shop") == (["Tables_in_shop"], [("items",), ("log",)])
    assert _show("SHOW FULL TABLES IN shop LIKE 'l_g'") == (
        ["Tables_in_shop (l_g)", "Table_type"],
        [("log", "BASE TABLE")],
    )
    assert _show("SHOW TABLES FROM empty") == (["Tables_in_empty"], [])
    assert _show("SHOW TABLES FROM shop WHERE tables_in_shop LIKE 'i%'")[1] == [("items",)]


def test_show_columns() -> None:
    names, rows = _show("SHOW COLUMNS FROM items FROM shop")
    assert names == ["Field", "Type", "Null", "Key", "Default", "Extra"]
    assert rows[:3] == [
        ("id", "int unsigned", "NO", "PRI", None, ""),
        ("name", "varchar(10)", "NO", "PRI", None, ""),
        ("price", "decimal(10,2)", "YES", "", None, ""),
    ]
    assert _show("DESCRIBE shop.items")[1] == rows
    names, rows = _show("SHOW FULL COLUMNS FROM shop.items LIKE 'N%'")
    assert names == ["Field", "Type", "Collation", "Null", "Key", "Default", "Extra",
                     "Privileges", "Comment"]  # fmt: skip
    assert rows == [
        ("name", "varchar(10)", "utf8mb4_0900_ai_ci", "NO", "PRI", None, "",
         "select,insert,update,references", ""),
        ("note", "text", "utf8mb4_0900_ai_ci", "YES", "", None, "",
         "select,insert,update,references", ""),
    ]  # fmt: skip
    assert _show("SHOW COLUMNS FROM shop.items WHERE `Key` = 'PRI'")[1] == [
        ("id", "int unsigned", "NO", "PRI", None, ""),
        ("name", "varchar(10)", "NO", "PRI", None, ""),
    ]


def test_show_index() -> None:
    names, rows = _show("SHOW INDEX FROM items", "shop")
    assert names == ["Table", "Non_unique", "Key_name", "Seq_in_index", "Column_name",
                     "Collation", "Cardinality", "Sub_part", "Packed", "Null", "Index_type",
                     "Comment", "Index_comment", "Visible", "Expression"]  # fmt: skip
    assert rows == [
        ("items", 0, "PRIMARY", 1, "id", "A", None, None, None, "", "BTREE", "", "", "YES", None),
        ("items", 0, "PRIMARY", 2, "name", "A", None, 4, None, "", "BTREE", "", "", "YES", None),
    ]
    assert _show("SHOW INDEX FROM shop.log")[1] == []


def test_show_create_table() -> None:
    assert _show("SHOW CREATE TABLE shop.items") == (
        ["Table", "Create Table"],
        [
            (
                "items",
                "CREATE TABLE `items` (\n"
                "  `id` int unsigned NOT NULL,\n"
                "  `name` varchar(10) NOT NULL,\n"
                "  `price` decimal(10,2) DEFAULT NULL,\n"
                "  `kind` enum('a','it''s') DEFAULT NULL,\n"
                "  `seen` timestamp(3) NULL DEFAULT NULL,\n"
                "  `note` text,\n"
                "  PRIMARY KEY (`id`,`name`(4))\n"
                ") ENGINE=SparkSQL DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci",
            )
        ],
    )


def test_create_table_without_key_and_with_odd_names() -> None:
    definition = TableDef((Column("we`ird", "INT", True),))
    assert create_table_text("a b", definition) == (
        "CREATE TABLE `a b` (\n  `we``ird` int DEFAULT NULL\n"
        ") ENGINE=SparkSQL DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    )


@pytest.mark.parametrize(
    ("sql", "database", "code", "message"),
    [
        ("SHOW TABLES", None, 1046, "No database selected"),
        ("SHOW TABLES FROM nope", None, 1049, "Unknown database 'nope'"),
        ("SHOW COLUMNS FROM items", None, 1046, "No database selected"),
        ("SHOW COLUMNS FROM nope", "shop", 1146, "Table 'shop.nope' doesn't exist"),
        ("DESCRIBE nope.items", None, 1146, "Table 'nope.items' doesn't exist"),
        ("SHOW COLUMNS FROM shop.ITEMS", None, 1146, "Table 'shop.ITEMS' doesn't exist"),
        ("SHOW INDEX FROM nope", "shop", 1146, "Table 'shop.nope' doesn't exist"),
        ("SHOW CREATE TABLE shop.nope", None, 1146, "Table 'shop.nope' doesn't exist"),
        ("SHOW CREATE TABLE items", None, 1046, "No database selected"),
        (
            "SHOW TABLES FROM shop WHERE nope = 1",
            None,
            1054,
            "Unknown column 'nope' in 'where clause'",
        ),  # fmt: skip
    ],
)
def test_show_errors(sql: str, database: str | None, code: int, message: str) -> None:
    with pytest.raises(ReplicaError) as caught:
        _show(sql, database)
    assert (caught.value.code, caught.value.message) == (code, message)


def test_other_show_statements_are_not_answered_here() -> None:
    catalog = _catalog()
    statement = sqlglot.parse_one("SHOW VARIABLES", read="mysql")
    assert isinstance(statement, exp.Show)
    assert show(InfoRows.of(catalog), catalog, statement, None) is None
