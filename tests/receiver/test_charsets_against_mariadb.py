"""Character sets and collations replicated from a real MariaDB: databases, tables and
columns created and altered on the source with and without CHARACTER SET/COLLATE (the
server's default, a database's, a table's, a column's, BINARY, NCHAR, CONVERT TO, ALTER
DATABASE, ALTER TABLE ... DEFAULT CHARSET, CREATE TABLE ... LIKE), then
information_schema.SCHEMATA, TABLES and COLUMNS, SHOW FULL COLUMNS and the character set
clauses of SHOW CREATE TABLE on the replica compared with the source's, value by value.

The suite's MariaDB runs with its compiled-in defaults (``collation_server`` latin1_swedish_ci),
so a database created without a character set is latin1 on the source, and must be on the
replica too: the replica learns it from the Query event's status variables.
"""

from __future__ import annotations

import re
from typing import Any

import pymysql
import pymysql.cursors
import pytest

from spark_replica.applier_core.storage import InMemoryEngine
from tests.helpers.live_source import caught_up, following
from tests.helpers.mariadb import MariaDB
from tests.helpers.replica_channel import WAIT
from tests.helpers.source_compare import described_by_both

DATABASES = ("cs_server", "cs_utf8", "cs_bin")
SOURCE = (
    "CREATE DATABASE cs_server",
    "CREATE DATABASE cs_utf8 CHARACTER SET utf8mb4",
    "CREATE DATABASE cs_bin DEFAULT COLLATE = utf8mb4_bin",
    "CREATE TABLE cs_server.plain (id INT PRIMARY KEY, a VARCHAR(10), b TEXT, "
    "c CHAR(3) CHARACTER SET utf8mb4, d VARCHAR(5) COLLATE latin1_bin, "
    "e ENUM('x','y') CHARACTER SET ascii, f SET('p','q'), g CHAR(2) BINARY, h NCHAR(4), "
    "i VARBINARY(8), j BLOB, k DECIMAL(5,2), l TINYTEXT CHARSET utf8 COLLATE utf8_unicode_ci)",
    "CREATE TABLE cs_server.wide (a VARCHAR(20), b MEDIUMTEXT) DEFAULT CHARSET=utf8mb4",
    "CREATE TABLE cs_utf8.t (a VARCHAR(20), b VARCHAR(20) CHARACTER SET latin1) "
    "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci",
    "CREATE TABLE cs_utf8.u (a VARCHAR(20), b LONGTEXT)",
    "CREATE TABLE cs_bin.t (a VARCHAR(20), b CHAR(1) CHARACTER SET latin1)",
    "ALTER TABLE cs_server.wide ADD COLUMN c VARCHAR(3), MODIFY a VARCHAR(30) COLLATE utf8mb4_bin",
    "ALTER TABLE cs_utf8.u CONVERT TO CHARACTER SET latin1 COLLATE latin1_general_ci",
    "ALTER TABLE cs_utf8.t DEFAULT CHARSET=latin1",
    "ALTER TABLE cs_utf8.t ADD COLUMN c VARCHAR(4), CHANGE b b2 VARCHAR(21)",
    "ALTER DATABASE cs_server CHARACTER SET utf8mb4",
    "CREATE TABLE cs_server.later (a VARCHAR(7))",
    "CREATE TABLE cs_bin.copy LIKE cs_server.plain",
)
_TRAILER = re.compile(r"DEFAULT CHARSET=(\w+)(?: COLLATE=(\w+))?")
_COLUMN_CHARSET = re.compile(r"^\s+`([^`]+)` .*?(?:CHARACTER SET (\w+) COLLATE (\w+)|$)")


def _info(conn: Any, query: str) -> list[tuple[object, ...]]:
    with conn.cursor() as cursor:
        cursor.execute(query)
        return sorted(tuple(row) for row in cursor.fetchall())


def _create_table_charsets(conn: Any, table: str) -> tuple[object, ...]:
    """The table's DEFAULT CHARSET/COLLATE and each column's CHARACTER SET ... COLLATE."""
    with conn.cursor() as cursor:
        cursor.execute(f"SHOW CREATE TABLE {table}")
        text = cursor.fetchone()[1]
    trailer = _TRAILER.search(text)
    assert trailer is not None, text
    columns = []
    for line in text.splitlines()[1:]:
        found = _COLUMN_CHARSET.match(line)
        if found is not None:
            columns.append(found.groups())
    return trailer.groups(), tuple(columns)


def _describe(conn: Any) -> dict[str, object]:
    schemas = ", ".join(f"'{d}'" for d in DATABASES)
    found: dict[str, object] = {
        "schemata": _info(
            conn,
            "SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME "
            f"FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN ({schemas})",
        ),
        "tables": _info(
            conn,
            "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_COLLATION FROM information_schema.TABLES "
            f"WHERE TABLE_SCHEMA IN ({schemas})",
        ),
        "columns": _info(
            conn,
            "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, CHARACTER_SET_NAME, COLLATION_NAME, "
            "CHARACTER_MAXIMUM_LENGTH, CHARACTER_OCTET_LENGTH FROM information_schema.COLUMNS "
            f"WHERE TABLE_SCHEMA IN ({schemas})",
        ),
    }
    tables = [f"{row[0]}.{row[1]}" for row in found["tables"]]  # type: ignore[attr-defined]
    for table in tables:
        found[f"create {table}"] = _create_table_charsets(conn, table)
        with conn.cursor(pymysql.cursors.DictCursor) as cursor:
            cursor.execute(f"SHOW FULL COLUMNS FROM {table}")
            found[f"full columns {table}"] = [(r["Field"], r["Collation"]) for r in cursor]
    return found


@pytest.mark.parametrize("applier", ["csa", "mta"])
def test_charsets_and_collations_read_as_the_sources(
    mariadb: MariaDB, port: int, engine: InMemoryEngine, applier: str
) -> None:
    """A database's, table's and column's character set and collation read on the replica
    as on the source, through either applier."""
    for database in DATABASES:
        mariadb.sql(f"DROP DATABASE IF EXISTS {database}")
    for statement in SOURCE:
        mariadb.sql(statement)
    with following(port, mariadb, applier) as cursor:
        caught_up(cursor, mariadb, WAIT)
    expected, found = described_by_both(mariadb, port, _describe)
    assert expected["schemata"] == [
        ("cs_bin", "utf8mb4", "utf8mb4_bin"),
        ("cs_server", "utf8mb4", "utf8mb4_general_ci"),
        ("cs_utf8", "utf8mb4", "utf8mb4_general_ci"),
    ]
    for what, rows in expected.items():
        assert found[what] == rows, what
