"""Character sets and collations of replicated databases, tables and columns: what a DDL
statement names, the defaults the source's Query event gives, the catalog filling in the
enclosing defaults, and how SHOW CREATE TABLE and information_schema show them."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, text

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage import Column, EngineError, TableDef, TableRef
from spark_replica.applier_core.storage.collations import (
    SERVER_DEFAULTS,
    CharsetDefaults,
    charset_of,
)
from spark_replica.applier_core.storage.ddl import Catalog
from spark_replica.applier_core.storage.ddl_parser import parse_ddl
from spark_replica.applier_core.storage.spark.state import (
    definition_from_json,
    definition_to_json,
)
from spark_replica.metadata import open_store
from spark_replica.sql_handlers.tables.replica_tables import (
    columns_rows,
    create_table_text,
    schemata_row,
    tables_row,
)

#: A MariaDB 10.11 source with its compiled-in server default (Query event ids 33, 33, 8).
MARIADB = CharsetDefaults.of_source((33, 33, 8), None, mariadb=True)
#: A MySQL 8.4 source (collation_server 255, default_collation_for_utf8mb4 255).
MYSQL = CharsetDefaults.of_source((255, 255, 255), 255, mariadb=False)


def _catalog(defaults: CharsetDefaults, *statements: str) -> Catalog:
    catalog = Catalog()
    for statement in statements:
        for operation in parse_ddl(statement, "d", defaults):
            catalog = catalog.apply(operation)
    return catalog


def _collations(definition: TableDef) -> list[tuple[str, str]]:
    return [(c.name, c.collation) for c in definition.columns]


def test_the_source_defaults_come_from_the_query_event() -> None:
    assert MARIADB == CharsetDefaults("latin1_swedish_ci", "utf8mb4_general_ci", mariadb=True)
    assert MYSQL == CharsetDefaults("utf8mb4_0900_ai_ci", "utf8mb4_0900_ai_ci")
    # MySQL 8.0 with default_collation_for_utf8mb4 = utf8mb4_general_ci (45).
    assert CharsetDefaults.of_source((45, 45, 45), 45, mariadb=False).utf8mb4 == (
        "utf8mb4_general_ci"
    )
    # No status variables: MySQL 8.4's defaults.
    assert CharsetDefaults.of_source(None, None, mariadb=False) == SERVER_DEFAULTS


@pytest.mark.parametrize(
    ("charset", "collation", "mariadb", "mysql"),
    [
        (None, None, None, None),
        ("utf8mb4", None, "utf8mb4_general_ci", "utf8mb4_0900_ai_ci"),
        ("UTF8", None, "utf8mb3_general_ci", "utf8mb3_general_ci"),
        ("latin1", None, "latin1_swedish_ci", "latin1_swedish_ci"),
        (None, "utf8_bin", "utf8mb3_bin", "utf8mb3_bin"),
        ("latin1", "LATIN1_BIN", "latin1_bin", "latin1_bin"),
        ("DEFAULT", "DEFAULT", None, None),
        ("binary", None, "binary", "binary"),
    ],
)
def test_a_clause_names_a_collation(
    charset: str | None, collation: str | None, mariadb: str | None, mysql: str | None
) -> None:
    assert MARIADB.resolve(charset, collation) == mariadb
    assert MYSQL.resolve(charset, collation) == mysql


def test_unknown_charsets_and_mismatched_collations_are_mysqls_errors() -> None:
    with pytest.raises(EngineError) as unknown:
        MYSQL.resolve("klingon", None)
    assert (unknown.value.code, unknown.value.message) == (
        ErrorCode.UNKNOWN_CHARACTER_SET,
        "Unknown character set: 'klingon'",
    )
    with pytest.raises(EngineError) as mismatch:
        parse_ddl("CREATE TABLE t (a CHAR(1) CHARACTER SET latin1 COLLATE utf8mb4_bin)", "d")
    assert (mismatch.value.code, mismatch.value.message) == (
        ErrorCode.COLLATION_CHARSET_MISMATCH,
        "COLLATION 'utf8mb4_bin' is not valid for CHARACTER SET 'latin1'",
    )


def test_each_level_takes_the_enclosing_default() -> None:
    catalog = _catalog(
        MARIADB,
        "CREATE DATABASE d",
        "CREATE TABLE t (a VARCHAR(5), b TEXT CHARACTER SET utf8mb4, c CHAR(2) BINARY, "
        "e ENUM('x') COLLATE latin1_bin, n NCHAR(3), i INT, v VARBINARY(4))",
        "CREATE TABLE u (a VARCHAR(5), c CHAR(2) BINARY) DEFAULT CHARSET=utf8mb4",
    )
    assert catalog.collations == {"d": "latin1_swedish_ci"}
    t = catalog.definition(TableRef("d", "t"))
    assert t.collation == "latin1_swedish_ci"
    assert _collations(t) == [
        ("a", "latin1_swedish_ci"),
        ("b", "utf8mb4_general_ci"),
        ("c", "latin1_bin"),
        ("e", "latin1_bin"),
        ("n", "utf8mb3_general_ci"),
        ("i", ""),
        ("v", ""),
    ]
    u = catalog.definition(TableRef("d", "u"))
    assert (u.collation, _collations(u)) == (
        "utf8mb4_general_ci",
        [("a", "utf8mb4_general_ci"), ("c", "utf8mb4_bin")],
    )


def test_alter_database_and_alter_table_change_defaults_not_columns() -> None:
    catalog = _catalog(
        MYSQL,
        "CREATE DATABASE d CHARACTER SET latin1",
        "CREATE TABLE t (a VARCHAR(5))",
        "ALTER DATABASE d CHARACTER SET utf8mb4",
        "CREATE TABLE u (a VARCHAR(5))",
        "ALTER TABLE t DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_bin",
        "ALTER TABLE t ADD COLUMN b VARCHAR(3), MODIFY a VARCHAR(6)",
        "ALTER SCHEMA READ ONLY = 0",
    )
    assert catalog.collations == {"d": "utf8mb4_0900_ai_ci"}
    assert _collations(catalog.definition(TableRef("d", "u"))) == [("a", "utf8mb4_0900_ai_ci")]
    t = catalog.definition(TableRef("d", "t"))
    # A column redefined without a collation takes the table's, as in MySQL.
    assert (t.collation, _collations(t)) == (
        "utf8mb4_bin",
        [("a", "utf8mb4_bin"), ("b", "utf8mb4_bin")],
    )


def test_convert_to_sets_the_table_and_every_text_column() -> None:
    catalog = _catalog(
        MYSQL,
        "CREATE DATABASE d",
        "CREATE TABLE t (a VARCHAR(5) COLLATE utf8mb4_bin, b INT, c TEXT)",
        "ALTER TABLE t CONVERT TO CHARACTER SET latin1",
    )
    t = catalog.definition(TableRef("d", "t"))
    assert (t.collation, _collations(t)) == (
        "latin1_swedish_ci",
        [("a", "latin1_swedish_ci"), ("b", ""), ("c", "latin1_swedish_ci")],
    )
    gone = catalog.apply(parse_ddl("DROP DATABASE d", None)[0])
    assert gone.collations == {}
    with pytest.raises(EngineError) as unknown:
        gone.apply(parse_ddl("ALTER DATABASE d COLLATE latin1_bin", None)[0])
    assert unknown.value.code == ErrorCode.BAD_DB_ERROR


def test_definitions_keep_collations_through_json() -> None:
    definition = TableDef(
        (Column("id", "INT", False), Column("a", "VARCHAR(5)", True, "latin1_bin")),
        (0,),
        collation="latin1_swedish_ci",
    )
    assert definition_from_json(definition_to_json(definition)) == definition
    # A definition recorded before collations were kept reads with none.
    old = '{"columns":[["a","VARCHAR(5)",true]],"primary_key":[],"key_prefix":[]}'
    assert definition_from_json(old) == TableDef((Column("a", "VARCHAR(5)"),))


def test_show_create_table_and_information_schema_show_them() -> None:
    catalog = _catalog(
        MARIADB,
        "CREATE DATABASE d",
        "CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(5), b VARCHAR(4) CHARACTER SET utf8mb4)",
    )
    ref = TableRef("d", "t")
    definition = catalog.definition(ref)
    assert create_table_text("t", definition) == (
        "CREATE TABLE `t` (\n"
        "  `id` int NOT NULL,\n"
        "  `a` varchar(5) DEFAULT NULL,\n"
        "  `b` varchar(4) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci DEFAULT NULL,\n"
        "  PRIMARY KEY (`id`)\n"
        ") ENGINE=SparkSQL DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci"
    )
    rows = {r["column_name"]: r for r in columns_rows(ref, definition)}
    found = {
        name: (r["character_set_name"], r["collation_name"], r["character_octet_length"])
        for name, r in rows.items()
    }
    assert found == {
        "id": (None, None, None),
        "a": ("latin1", "latin1_swedish_ci", 5),
        "b": ("utf8mb4", "utf8mb4_general_ci", 16),
    }
    assert tables_row(ref, definition)["table_collation"] == "latin1_swedish_ci"
    row = schemata_row("d", catalog.collations["d"])
    assert (row["default_character_set_name"], row["default_collation_name"]) == (
        "latin1",
        "latin1_swedish_ci",
    )
    assert charset_of("binary") == "binary"


def test_a_metadata_database_of_an_earlier_version_gains_the_new_columns(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    old = create_engine(url)
    with old.begin() as conn:  # replica_databases as it was before default collations
        conn.execute(text("CREATE TABLE replica_databases (name VARCHAR(64) PRIMARY KEY)"))
        conn.execute(text("INSERT INTO replica_databases VALUES ('shop')"))
    old.dispose()
    store = open_store(url)
    try:
        state = store.load_spark_state()
        assert (state.databases, dict(state.collations)) == (frozenset({"shop"}), {})
        columns = {c["name"] for c in inspect(store.engine).get_columns("replica_databases")}
        assert columns == {"name", "default_collation"}
    finally:
        store.close()
