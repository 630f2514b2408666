"""Secondary keys replicated from a real MariaDB: tables with keys of every kind, created and
altered on the source (CREATE TABLE keys, a column's UNIQUE, CREATE INDEX, ADD INDEX/UNIQUE/
CONSTRAINT, DROP/RENAME INDEX, a renamed and a dropped column, CREATE TABLE ... LIKE), then
SHOW INDEX, information_schema.STATISTICS, TABLE_CONSTRAINTS and KEY_COLUMN_USAGE on the
replica compared column by column with the source's; SQLAlchemy reflects the same keys.

Normalised, as documented differences: CARDINALITY (the replica keeps no statistics), MySQL's
Visible against MariaDB's Ignored, and a SPATIAL key part's COLLATION and SUB_PART (MySQL 8.4
reports none, MariaDB 'A' and 32).
"""

from __future__ import annotations

from typing import Any

import pymysql
import pymysql.cursors
import pytest
import sqlalchemy

from spark_replica.applier_core.storage import InMemoryEngine
from tests.helpers.live_source import caught_up, following
from tests.helpers.mariadb import ROOT_PASSWORD as MARIADB_ROOT_PASSWORD
from tests.helpers.mariadb import MariaDB
from tests.helpers.replica_channel import WAIT
from tests.helpers.server import ROOT_PASSWORD
from tests.helpers.source_compare import described_by_both

DB = "keys_db"
SOURCE = (
    f"CREATE DATABASE {DB}",
    f"CREATE TABLE {DB}.k (id INT NOT NULL, a INT NOT NULL, b VARCHAR(40), c TEXT, "
    "g GEOMETRY NOT NULL, e VARCHAR(10) UNIQUE, n INT, PRIMARY KEY (id), "
    "KEY (b(10) DESC, a), UNIQUE KEY uk (a, b), FULLTEXT KEY ft (c), SPATIAL INDEX (g), "
    "INDEX ix (a) COMMENT 'by a', CONSTRAINT cu UNIQUE (b(5)), UNIQUE INDEX (a), KEY (n)"
    ") ENGINE=InnoDB",
    f"CREATE INDEX iab ON {DB}.k (a, b)",
    f"CREATE UNIQUE INDEX un USING BTREE ON {DB}.k (id, a)",
    f"ALTER TABLE {DB}.k ADD INDEX (b), ADD KEY kd (a DESC), ADD CONSTRAINT cx UNIQUE (a, id)",
    f"ALTER TABLE {DB}.k RENAME INDEX ix TO ix2, DROP INDEX iab",
    f"ALTER TABLE {DB}.k CHANGE b bb VARCHAR(40)",
    f"ALTER TABLE {DB}.k DROP COLUMN n",
    f"DROP INDEX kd ON {DB}.k",
    f"CREATE TABLE {DB}.l LIKE {DB}.k",
    f"CREATE TABLE {DB}.m (x INT, y INT, z INT NOT NULL, KEY (x), KEY (x, z), KEY (y))",
    f"ALTER TABLE {DB}.m ADD INDEX (x), ADD UNIQUE (z)",
    f"ALTER TABLE {DB}.m DROP COLUMN x",
    f"INSERT INTO {DB}.m VALUES (1, 1), (NULL, 2)",
)
TABLES = ("k", "l", "m")
_SHOW_INDEX = ("Table", "Non_unique", "Key_name", "Seq_in_index", "Column_name", "Collation",
               "Sub_part", "Packed", "Null", "Index_type", "Comment",
               "Index_comment")  # fmt: skip
_STATISTICS = ("TABLE_NAME", "NON_UNIQUE", "INDEX_SCHEMA", "INDEX_NAME", "SEQ_IN_INDEX",
               "COLUMN_NAME", "COLLATION", "SUB_PART", "PACKED", "NULLABLE", "INDEX_TYPE",
               "COMMENT", "INDEX_COMMENT")  # fmt: skip


def _rows(conn: Any, query: str) -> list[dict[str, Any]]:
    with conn.cursor(pymysql.cursors.DictCursor) as cursor:
        cursor.execute(query)
        return list(cursor.fetchall())


def _info_rows(conn: Any, query: str) -> list[dict[str, Any]]:
    """information_schema rows by upper-case column name (the replica's information_schema
    names its result columns in lower case)."""
    return [{k.upper(): v for k, v in row.items()} for row in _rows(conn, query)]


def _normalised(row: dict[str, Any], names: tuple[str, ...]) -> tuple[object, ...]:
    """The compared columns; a SPATIAL key part without MariaDB's COLLATION and SUB_PART."""
    values = {name: row[name] for name in names}
    if values.get("Index_type", values.get("INDEX_TYPE")) == "SPATIAL":
        for name in ("Collation", "Sub_part", "COLLATION", "SUB_PART"):
            if name in values:
                values[name] = None
    for name in ("Sub_part", "SUB_PART"):  # information_schema may type it as text
        if values.get(name) is not None:
            values[name] = int(str(values[name]))
    return tuple(values.values())


def _visible(row: dict[str, Any]) -> str:
    """MySQL's Visible from MariaDB's Ignored."""
    if "Ignored" in row or "IGNORED" in row:
        return "NO" if row.get("Ignored", row.get("IGNORED")) == "YES" else "YES"
    return str(row.get("Visible", row.get("IS_VISIBLE")))


def _describe(conn: Any) -> dict[str, object]:
    found: dict[str, object] = {}
    for table in TABLES:
        rows = _rows(conn, f"SHOW INDEX FROM {DB}.{table}")
        found[f"index {table}"] = [(*_normalised(r, _SHOW_INDEX), _visible(r)) for r in rows]
    statistics = _info_rows(
        conn,
        f"SELECT {', '.join(_STATISTICS)} FROM information_schema.STATISTICS "
        f"WHERE TABLE_SCHEMA = '{DB}'",
    )
    found["statistics"] = sorted(_normalised(r, _STATISTICS) for r in statistics)
    constraints = _info_rows(
        conn,
        "SELECT CONSTRAINT_SCHEMA, CONSTRAINT_NAME, TABLE_NAME, CONSTRAINT_TYPE "
        f"FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_SCHEMA = '{DB}'",
    )
    found["constraints"] = sorted(tuple(r.values()) for r in constraints)
    usage = _info_rows(
        conn,
        "SELECT CONSTRAINT_NAME, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, "
        "POSITION_IN_UNIQUE_CONSTRAINT, REFERENCED_TABLE_NAME "
        f"FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = '{DB}'",
    )
    found["key usage"] = sorted(tuple(r.values()) for r in usage)
    return found


def _reflected(url: str) -> dict[str, object]:
    """What SQLAlchemy's MySQL dialect reflects (it reads SHOW CREATE TABLE)."""
    engine = sqlalchemy.create_engine(url)
    try:
        inspector = sqlalchemy.inspect(engine)
        found: dict[str, object] = {}
        for table in TABLES:
            indexes = inspector.get_indexes(table, schema=DB)
            found[f"indexes {table}"] = sorted(
                (
                    i["name"],
                    tuple(i["column_names"]),
                    bool(i["unique"]),
                    i.get("dialect_options", {}).get("mysql_prefix"),
                    i.get("dialect_options", {}).get("mysql_length"),
                )  # fmt: skip
                for i in indexes
            )
            uniques = inspector.get_unique_constraints(table, schema=DB)
            found[f"unique {table}"] = sorted(
                (u["name"], tuple(u["column_names"])) for u in uniques
            )
        return found
    finally:
        engine.dispose()


@pytest.mark.filterwarnings("ignore:Did not recognize type 'geometry'")  # SQLAlchemy's
@pytest.mark.parametrize("applier", ["csa"])
def test_replicated_keys_read_as_the_sources(
    mariadb: MariaDB, port: int, engine: InMemoryEngine, applier: str
) -> None:
    mariadb.sql(f"DROP DATABASE IF EXISTS {DB}")
    for statement in SOURCE:
        mariadb.sql(statement)
    with following(port, mariadb, applier) as cursor:
        caught_up(cursor, mariadb, WAIT)
    expected, found = described_by_both(mariadb, port, _describe)
    for what, rows in expected.items():
        assert found[what] == rows, what
    assert _reflected(f"mysql+pymysql://root:{ROOT_PASSWORD}@127.0.0.1:{port}/{DB}") == (
        _reflected(
            f"mysql+pymysql://root:{MARIADB_ROOT_PASSWORD}@{mariadb.host}:{mariadb.port}/{DB}"
        )
    )
