"""Comparing what a replica's in-memory engine holds with a MariaDB source, table by table and
row by row, normalising only what docs/type-mapping.md documents as different: TIMESTAMP
values are instants (read from the source in UTC), zero and invalid dates are NULL, BIT values
are numbers, and spatial values are the source's bytes (a 4-byte SRID, then the WKB)."""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

import pymysql
from pymysql.constants import FIELD_TYPE

from spark_replica.applier_core.binlog.rows.values import Geometry
from spark_replica.applier_core.storage import InMemoryEngine, TableRef
from tests.helpers.mariadb import ROOT_PASSWORD, MariaDB
from tests.helpers.server import connect

T = TypeVar("T")

Row = tuple[Any, ...]
_DATES = {FIELD_TYPE.DATE, FIELD_TYPE.NEWDATE, FIELD_TYPE.DATETIME, FIELD_TYPE.TIMESTAMP}


@contextmanager
def source_connection(mariadb: MariaDB) -> Iterator[Any]:
    """A root connection to the source whose session shows TIMESTAMP values in UTC."""
    conn = pymysql.connect(
        host=mariadb.host, port=mariadb.port, user="root", password=ROOT_PASSWORD,
        init_command="SET time_zone = '+00:00'",
    )  # fmt: skip
    try:
        yield conn
    finally:
        conn.close()


def described_by_both(mariadb: MariaDB, port: int, describe: Callable[[Any], T]) -> tuple[T, T]:
    """``describe`` of a root connection to the source, then of one to the replica on
    ``port``: what a differential test compares."""
    with source_connection(mariadb) as source:
        expected = describe(source)
    replica = connect(port)
    try:
        return expected, describe(replica)
    finally:
        replica.close()


def source_tables(conn: Any, database: str) -> list[str]:
    """The base tables of ``database`` on the source (views are not tables)."""
    with conn.cursor() as cursor:
        cursor.execute(
            "SELECT TABLE_NAME FROM information_schema.TABLES "
            "WHERE TABLE_SCHEMA = %s AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME",
            (database,),
        )
        return [name for (name,) in cursor.fetchall()]


def source_rows(conn: Any, database: str, table: str) -> list[Row]:
    with conn.cursor() as cursor:
        cursor.execute(f"SELECT * FROM `{database}`.`{table}`")
        kinds = [d[1] for d in cursor.description]
        return [tuple(_source_value(k, v) for k, v in zip(kinds, row, strict=True))
                for row in cursor.fetchall()]  # fmt: skip


def _source_value(kind: int, value: Any) -> Any:
    if kind in _DATES and isinstance(value, str):
        return None  # a zero or invalid date, which pymysql leaves as text
    if kind == FIELD_TYPE.BIT and isinstance(value, bytes):
        return int.from_bytes(value, "big")
    return value


def replica_rows(engine: InMemoryEngine, database: str, table: str) -> list[Row]:
    return [tuple(_replica_value(v) for v in row) for row in engine.rows(TableRef(database, table))]


def _replica_value(value: Any) -> Any:
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.astimezone(UTC).replace(tzinfo=None)
    if isinstance(value, Geometry):
        return struct.pack("<I", value.srid) + value.wkb
    return value


def differences(source: list[Row], replica: list[Row], shown: int = 3) -> str:
    """'' when both hold the same rows (as multisets); otherwise a few rows of each side."""
    missing = Counter(source) - Counter(replica)
    extra = Counter(replica) - Counter(source)
    if not missing and not extra:
        return ""
    return (
        f"{sum(missing.values())} source rows missing, e.g. {list(missing)[:shown]}; "
        f"{sum(extra.values())} rows not on the source, e.g. {list(extra)[:shown]}"
    )


def assert_same_databases(mariadb: MariaDB, engine: InMemoryEngine, *databases: str) -> int:
    """Every base table of each database is on the replica with the source's rows, and the
    replica has no other table there; the number of rows compared."""
    compared = 0
    problems = []
    with source_connection(mariadb) as conn:
        for database in databases:
            tables = source_tables(conn, database)
            held = sorted(t.table for t in engine.tables() if t.schema == database)
            if held != tables:
                problems.append(f"{database}: source tables {tables}, replica tables {held}")
            for table in set(tables) & set(held):
                source = source_rows(conn, database, table)
                if found := differences(source, replica_rows(engine, database, table)):
                    problems.append(f"{database}.{table}: {found}")
                compared += len(source)
    assert not problems, "\n".join(problems)
    return compared
