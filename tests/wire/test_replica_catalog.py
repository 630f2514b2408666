"""SHOW statements and information_schema over the replicated tables, through the wire.

The server's storage engine holds the tables replicated DDL created; clients list and
describe them as on MySQL 8.4: pymysql, mysql.connector, SQLAlchemy's inspector (which
parses SHOW CREATE TABLE) and the query Connector/J sends for DatabaseMetaData.getTables.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mysql.connector
import pytest
from sqlalchemy import create_engine, inspect
from sqlalchemy.dialects.mysql import DECIMAL, ENUM, INTEGER, TEXT, TIMESTAMP, VARCHAR

from spark_replica.applier_core.storage import InMemoryEngine, TransactionRef
from spark_replica.server.components import default_components
from tests.helpers.server import ROOT_PASSWORD, connect, running_server

SCHEMA = (
    "CREATE DATABASE shop",
    "CREATE DATABASE Archive",
    "CREATE TABLE shop.items (id INT UNSIGNED NOT NULL, name VARCHAR(10), "
    "price DECIMAL(10,2), kind ENUM('a','b'), seen TIMESTAMP, note TEXT, "
    "PRIMARY KEY (id, name(4)))",
    "CREATE TABLE shop.log (line BIGINT)",
)
ITEMS_DDL = (
    "CREATE TABLE `items` (\n"
    "  `id` int unsigned NOT NULL,\n"
    "  `name` varchar(10) NOT NULL,\n"
    "  `price` decimal(10,2) DEFAULT NULL,\n"
    "  `kind` enum('a','b') DEFAULT NULL,\n"
    "  `seen` timestamp NULL DEFAULT NULL,\n"
    "  `note` text,\n"
    "  PRIMARY KEY (`id`,`name`(4))\n"
    ") ENGINE=SparkSQL DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
)
# What Connector/J 2.7 sends for DatabaseMetaData.getTables("shop", null, "%", {"TABLE"}).
GET_TABLES = (
    "SELECT TABLE_SCHEMA TABLE_CAT, NULL  TABLE_SCHEM,  TABLE_NAME, IF(TABLE_TYPE='BASE TABLE' "
    "or TABLE_TYPE='SYSTEM VERSIONED', 'TABLE', TABLE_TYPE) as TABLE_TYPE, TABLE_COMMENT "
    "REMARKS, NULL TYPE_CAT, NULL TYPE_SCHEM, NULL TYPE_NAME, NULL SELF_REFERENCING_COL_NAME,  "
    "NULL REF_GENERATION FROM INFORMATION_SCHEMA.TABLES  WHERE TABLE_SCHEMA='shop' AND "
    "TABLE_NAME LIKE '%' AND TABLE_TYPE IN ('BASE TABLE','SYSTEM VERSIONED') "
    "ORDER BY TABLE_TYPE, TABLE_SCHEMA, TABLE_NAME"
)


class _Ddl:
    """Commits DDL in the engine, as the applier does for replicated DDL."""

    def __init__(self, engine: InMemoryEngine) -> None:
        self._session = engine.session("ddl")
        self._order = 0

    def __call__(self, statement: str) -> None:
        self._order += 1
        self._session.begin(TransactionRef(f"uuid:{self._order}", self._order))
        self._session.apply_ddl(statement, None)
        self._session.prepare()
        self._session.commit()


@pytest.fixture
def engine() -> InMemoryEngine:
    engine = InMemoryEngine()
    ddl = _Ddl(engine)
    for statement in SCHEMA:
        ddl(statement)
    return engine


@pytest.fixture
def port(tmp_path: Path, engine: InMemoryEngine) -> Iterator[int]:
    with running_server(tmp_path / "data", default_components(engine)) as server:
        yield server.port


@pytest.fixture
def cursor(port: int) -> Iterator[Any]:
    connection = connect(port)
    try:
        yield connection.cursor()
    finally:
        connection.close()


def _query(cursor: Any, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    cursor.execute(sql)
    return [d[0] for d in cursor.description], [tuple(r) for r in cursor.fetchall()]


def _error(cursor: Any, sql: str) -> tuple[int, str]:
    with pytest.raises(Exception) as caught:
        cursor.execute(sql)
    code, message = caught.value.args[:2]
    return int(code), str(message)


# -- SHOW ---------------------------------------------------------------------------------------


def test_show_databases(cursor: Any) -> None:
    assert _query(cursor, "SHOW DATABASES") == (
        ["Database"],
        [("Archive",), ("information_schema",), ("mysql",), ("performance_schema",), ("shop",)],
    )
    assert _query(cursor, "SHOW SCHEMAS LIKE 's%'") == (["Database (s%)"], [("shop",)])


def test_show_tables(cursor: Any) -> None:
    assert _query(cursor, "SHOW TABLES FROM shop") == (
        ["Tables_in_shop"],
        [("items",), ("log",)],
    )
    assert _query(cursor, "SHOW FULL TABLES FROM shop LIKE 'i%'") == (
        ["Tables_in_shop (i%)", "Table_type"],
        [("items", "BASE TABLE")],
    )
    assert _query(cursor, "SHOW TABLES FROM Archive") == (["Tables_in_Archive"], [])
    cursor.execute("USE shop")
    assert _query(cursor, "SHOW TABLES") == (["Tables_in_shop"], [("items",), ("log",)])


def test_show_columns_and_describe(cursor: Any) -> None:
    expected = [
        ("id", "int unsigned", "NO", "PRI", None, ""),
        ("name", "varchar(10)", "NO", "PRI", None, ""),
        ("price", "decimal(10,2)", "YES", "", None, ""),
        ("kind", "enum('a','b')", "YES", "", None, ""),
        ("seen", "timestamp", "YES", "", None, ""),
        ("note", "text", "YES", "", None, ""),
    ]
    names = ["Field", "Type", "Null", "Key", "Default", "Extra"]
    assert _query(cursor, "SHOW COLUMNS FROM items FROM shop") == (names, expected)
    assert _query(cursor, "DESCRIBE shop.items") == (names, expected)
    cursor.execute("USE shop")
    assert _query(cursor, "SHOW FULL COLUMNS FROM items LIKE 'p%'") == (
        ["Field", "Type", "Collation", "Null", "Key", "Default", "Extra", "Privileges",
         "Comment"],
        [("price", "decimal(10,2)", None, "YES", "", None, "",
          "select,insert,update,references", "")],
    )  # fmt: skip


def test_show_index(cursor: Any) -> None:
    names, rows = _query(cursor, "SHOW INDEX FROM items FROM shop")
    assert names == ["Table", "Non_unique", "Key_name", "Seq_in_index", "Column_name",
                     "Collation", "Cardinality", "Sub_part", "Packed", "Null", "Index_type",
                     "Comment", "Index_comment", "Visible", "Expression"]  # fmt: skip
    assert rows == [
        ("items", 0, "PRIMARY", 1, "id", "A", None, None, None, "", "BTREE", "", "", "YES", None),
        ("items", 0, "PRIMARY", 2, "name", "A", None, 4, None, "", "BTREE", "", "", "YES", None),
    ]
    assert _query(cursor, "SHOW INDEX FROM shop.log")[1] == []


def test_show_create_table(cursor: Any) -> None:
    assert _query(cursor, "SHOW CREATE TABLE shop.items") == (
        ["Table", "Create Table"],
        [("items", ITEMS_DDL)],
    )
    cursor.execute("USE shop")
    assert _query(cursor, "SHOW CREATE TABLE log")[1] == [
        (
            "log",
            "CREATE TABLE `log` (\n  `line` bigint DEFAULT NULL\n"
            ") ENGINE=SparkSQL DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci",
        )
    ]


@pytest.mark.parametrize(
    ("sql", "code", "message"),
    [
        ("SHOW CREATE TABLE shop.nope", 1146, "Table 'shop.nope' doesn't exist"),
        ("SHOW COLUMNS FROM shop.nope", 1146, "Table 'shop.nope' doesn't exist"),
        ("DESCRIBE nope.items", 1146, "Table 'nope.items' doesn't exist"),
        ("SHOW INDEX FROM nope FROM shop", 1146, "Table 'shop.nope' doesn't exist"),
        ("SHOW TABLES FROM nope", 1049, "Unknown database 'nope'"),
        ("SHOW TABLES", 1046, "No database selected"),
        ("SHOW COLUMNS FROM items", 1046, "No database selected"),
    ],
)
def test_errors(cursor: Any, sql: str, code: int, message: str) -> None:
    assert _error(cursor, sql) == (code, message)


def test_replicated_ddl_shows_at_once(engine: InMemoryEngine, cursor: Any) -> None:
    """The catalog changes while the server runs: each statement sees the current one."""
    assert _query(cursor, "SHOW COLUMNS FROM shop.log")[1] == [
        ("line", "bigint", "YES", "", None, "")
    ]
    ddl = _Ddl(engine)
    ddl("ALTER TABLE shop.log ADD COLUMN at DATETIME(6) NOT NULL")
    ddl("CREATE TABLE shop.extra (k CHAR(2) PRIMARY KEY)")
    ddl("DROP TABLE shop.items")
    assert _query(cursor, "SHOW COLUMNS FROM shop.log")[1] == [
        ("line", "bigint", "YES", "", None, ""),
        ("at", "datetime(6)", "NO", "", None, ""),
    ]
    assert _query(cursor, "SHOW TABLES FROM shop")[1] == [("extra",), ("log",)]
    assert _query(cursor, "SELECT TABLE_NAME FROM information_schema.TABLES "
                          "WHERE TABLE_SCHEMA = 'shop' ORDER BY TABLE_NAME")[1] == [
        ("extra",),
        ("log",),
    ]  # fmt: skip
    assert _error(cursor, "SHOW CREATE TABLE shop.items") == (
        1146,
        "Table 'shop.items' doesn't exist",
    )


# -- information_schema -------------------------------------------------------------------------


def test_information_schema_tables(cursor: Any) -> None:
    _, rows = _query(
        cursor,
        "SELECT TABLE_CATALOG, TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, ENGINE, TABLE_COLLATION, "
        "TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'shop' "
        "ORDER BY TABLE_NAME",
    )
    assert rows == [
        ("def", "shop", "items", "BASE TABLE", "SparkSQL", "utf8mb4_0900_ai_ci", ""),
        ("def", "shop", "log", "BASE TABLE", "SparkSQL", "utf8mb4_0900_ai_ci", ""),
    ]
    _, rows = _query(
        cursor,
        "SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA "
        "WHERE SCHEMA_NAME IN ('shop', 'Archive') ORDER BY SCHEMA_NAME",
    )
    assert rows == [("Archive", "utf8mb4"), ("shop", "utf8mb4")]


def test_information_schema_columns(cursor: Any) -> None:
    _, rows = _query(
        cursor,
        "SELECT COLUMN_NAME, ORDINAL_POSITION, COLUMN_DEFAULT, IS_NULLABLE, DATA_TYPE, "
        "CHARACTER_MAXIMUM_LENGTH, CHARACTER_OCTET_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE, "
        "DATETIME_PRECISION, CHARACTER_SET_NAME, COLUMN_TYPE, COLUMN_KEY, EXTRA "
        "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'shop' AND TABLE_NAME = 'items' "
        "ORDER BY ORDINAL_POSITION",
    )
    assert rows == [
        ("id", 1, None, "NO", "int", None, None, 10, 0, None, None, "int unsigned", "PRI", ""),
        ("name", 2, None, "NO", "varchar", 10, 40, None, None, None, "utf8mb4", "varchar(10)",
         "PRI", ""),
        ("price", 3, None, "YES", "decimal", None, None, 10, 2, None, None, "decimal(10,2)", "",
         ""),
        ("kind", 4, None, "YES", "enum", 1, 4, None, None, None, "utf8mb4", "enum('a','b')", "",
         ""),
        ("seen", 5, None, "YES", "timestamp", None, None, None, None, 0, None, "timestamp", "",
         ""),
        ("note", 6, None, "YES", "text", 65535, 65535, None, None, None, "utf8mb4", "text", "",
         ""),
    ]  # fmt: skip


def test_information_schema_statistics(cursor: Any) -> None:
    _, rows = _query(
        cursor,
        "SELECT TABLE_NAME, NON_UNIQUE, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, SUB_PART, "
        "INDEX_TYPE, IS_VISIBLE FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'shop' "
        "ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX",
    )
    assert rows == [
        ("items", 0, "PRIMARY", 1, "id", None, "BTREE", "YES"),
        ("items", 0, "PRIMARY", 2, "name", 4, "BTREE", "YES"),
    ]


def test_connector_j_get_tables_query(cursor: Any) -> None:
    """The information_schema query behind JDBC DatabaseMetaData.getTables (ecosystem §7)."""
    _, rows = _query(cursor, GET_TABLES)
    assert rows == [
        ("shop", None, "items", "TABLE", "", None, None, None, None, None),
        ("shop", None, "log", "TABLE", "", None, None, None, None, None),
    ]


def test_virtual_tables_are_listed_beside_the_replicated_ones(cursor: Any) -> None:
    _, rows = _query(cursor, "SHOW FULL TABLES FROM mysql LIKE 'slave%'")
    assert rows == [
        ("slave_master_info", "BASE TABLE"),
        ("slave_relay_log_info", "BASE TABLE"),
        ("slave_worker_info", "BASE TABLE"),
    ]
    _, rows = _query(cursor, "SHOW CREATE TABLE mysql.gtid_executed")
    assert rows[0][1].endswith(") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci")
    _, rows = _query(
        cursor,
        "SELECT COUNT(*) FROM information_schema.TABLES "
        "WHERE TABLE_SCHEMA = 'performance_schema' AND TABLE_NAME LIKE 'replication%'",
    )
    assert rows[0][0] >= 8


# -- other clients ------------------------------------------------------------------------------


def test_mysql_connector(port: int) -> None:
    connection = mysql.connector.connect(
        host="127.0.0.1", port=port, user="root", password=ROOT_PASSWORD, use_pure=True,
        database="shop",
    )  # fmt: skip
    try:
        cursor = connection.cursor()
        assert _query(cursor, "SHOW TABLES") == (["Tables_in_shop"], [("items",), ("log",)])
        assert _query(cursor, "SHOW CREATE TABLE items")[1] == [("items", ITEMS_DDL)]
        assert _error(cursor, "DESCRIBE nope")[0] == 1146
        cursor.close()
    finally:
        connection.close()


@pytest.mark.parametrize(
    ("driver", "args"), [("pymysql", {}), ("mysqlconnector", {"use_pure": True})]
)
def test_sqlalchemy_inspector(port: int, driver: str, args: dict[str, Any]) -> None:
    engine = create_engine(
        f"mysql+{driver}://root:{ROOT_PASSWORD}@127.0.0.1:{port}/", connect_args=args
    )
    try:
        inspector = inspect(engine)
        assert {"shop", "Archive"} <= set(inspector.get_schema_names())
        assert inspector.get_table_names(schema="shop") == ["items", "log"]
        assert inspector.has_table("items", schema="shop")
        assert not inspector.has_table("nope", schema="shop")
        columns = inspector.get_columns("items", schema="shop")
        assert [(c["name"], c["nullable"]) for c in columns] == [
            ("id", False),
            ("name", False),
            ("price", True),
            ("kind", True),
            ("seen", True),
            ("note", True),
        ]
        types = [c["type"] for c in columns]
        assert isinstance(types[0], INTEGER) and types[0].unsigned
        assert isinstance(types[1], VARCHAR) and types[1].length == 10
        assert isinstance(types[2], DECIMAL) and (types[2].precision, types[2].scale) == (10, 2)
        assert isinstance(types[3], ENUM) and types[3].enums == ["a", "b"]
        assert isinstance(types[4], TIMESTAMP)
        assert isinstance(types[5], TEXT)
        assert inspector.get_pk_constraint("items", schema="shop")["constrained_columns"] == [
            "id",
            "name",
        ]
        assert inspector.get_pk_constraint("log", schema="shop")["constrained_columns"] == []
    finally:
        engine.dispose()


def test_use_of_an_unknown_database_is_refused(port: int, cursor: Any) -> None:
    """USE and COM_INIT_DB answer 1049 for a database that does not exist, and accept the
    replicated and the system ones."""
    assert _error(cursor, "USE nosuch") == (1049, "Unknown database 'nosuch'")
    cursor.execute("USE shop")
    cursor.execute("SELECT DATABASE()")
    assert cursor.fetchone()[0] == "shop"
    cursor.execute("USE performance_schema")
    with connect(port) as conn:
        with pytest.raises(Exception) as caught:
            conn.select_db("nosuch")  # COM_INIT_DB
        assert caught.value.args[0] == 1049
        conn.select_db("shop")
