"""Result column definitions as MySQL sends them, checked against a real MariaDB holding the
same rows: a table of every common type replicated from MariaDB into Spark, then the same
SELECTs sent to both servers, comparing type codes, binary character set, lengths, decimals,
the flags drivers read (NOT_NULL, PRI_KEY, UNSIGNED, ZEROFILL, BINARY, BLOB, ENUM, SET), the
schema/table/column names, and every value. Then every Python driver reads a BLOB that is
not UTF-8 (``sakila.staff.picture``-like) as bytes, in the text and the binary protocol."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest

from spark_replica.server.storage import configured_components
from tests.helpers.live_source import caught_up, following, recorded
from tests.helpers.mariadb import ROOT_PASSWORD as MARIADB_ROOT_PASSWORD
from tests.helpers.mariadb import MariaDB
from tests.helpers.server import ROOT_PASSWORD, connect, no_leaks_but_a_servers, running_server

pytestmark = pytest.mark.spark

WAIT = 120.0
TABLE = """CREATE TABLE meta.t (
  id INT NOT NULL PRIMARY KEY, u INT UNSIGNED, tiny TINYINT, flag TINYINT(1),
  small SMALLINT UNSIGNED NOT NULL, big BIGINT, ubig BIGINT UNSIGNED NOT NULL,
  price DECIMAL(10,2), f FLOAT, d DOUBLE, c CHAR(10), vc VARCHAR(100) NOT NULL, tx TEXT,
  bl BLOB, mb MEDIUMBLOB, bin BINARY(4), vb VARBINARY(20), day DATE, at DATETIME(3),
  hm TIME, yr YEAR, e ENUM('small','large'), s SET('x','y'), l1 VARCHAR(10) CHARACTER SET latin1
)"""
ROWS = (
    "INSERT INTO meta.t VALUES "
    "(1, 4294967295, -128, 1, 65535, -9223372036854775808, 18446744073709551615, 12.50, 1.5, "
    "2.25, 'abc', 'Zoë', 'long text', 0x89504E470D0A1A0AFF00, 0xFFD8FFE0, 0x00FF7F80, "
    "0xC3, '2024-02-29', '2024-02-29 12:34:56.789', '-12:30:00', 2024, 'large', 'x,y', 'été'), "
    "(2, NULL, 5, 0, 0, 0, 0, NULL, NULL, NULL, NULL, '', NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL, NULL, NULL, NULL)"
)
QUERIES = (
    "SELECT * FROM meta.t ORDER BY id",
    "SELECT x.id AS ident, x.bl, vb, ubig, price FROM meta.t x ORDER BY ident",
    "SELECT id, tiny, u, hm FROM meta.t WHERE id = 1",
)
#: Flags both servers set the same way (MariaDB adds PART_KEY, NO_DEFAULT_VALUE, and
#: MULTIPLE_KEY for secondary indexes, which these tables do not have).
COMPARED_FLAGS = 1 | 2 | 16 | 32 | 64 | 128 | 256 | 2048


def _definition(field: Any) -> tuple[object, ...]:
    return (
        field.name,
        field.type_code,
        field.charsetnr == 63,
        field.length,
        field.scale,
        field.flags & COMPARED_FLAGS,
        field.db,
        field.table_name,
        field.org_table,
        field.org_name,
    )


def _result(cursor: Any, query: str) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    cursor.execute(query)
    rows = list(cursor.fetchall())
    return [_definition(f) for f in cursor._result.fields], rows


@pytest.fixture(autouse=True)
def no_thread_leaks() -> Iterator[None]:
    """The module's server keeps its query threads as long as it runs."""
    yield from no_leaks_but_a_servers()


@pytest.fixture(scope="module")
def replicated(
    spark: Any, mariadb: MariaDB, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[int]:
    """A replica (Spark engine on the test run's SparkSession, CSA) holding ``meta.t`` as
    the MariaDB source does."""
    mariadb.sql(f"DROP DATABASE IF EXISTS meta; CREATE DATABASE meta; {TABLE}; {ROWS}")
    root = tmp_path_factory.mktemp("column-definitions")
    with running_server(root / "data", configured_components) as server:
        with following(server.port, mariadb, "csa") as cursor:
            caught_up(cursor, mariadb, WAIT)
            recorded(cursor, mariadb, WAIT)  # the commit point queries read
            # The server's query threads start here, with the module's server, not in a test.
            cursor.execute("SELECT COUNT(*) FROM meta.t")
            assert cursor.fetchone()[0] == 2
        yield server.port


@pytest.mark.parametrize("query", QUERIES)
def test_column_definitions_and_values_match_the_source(
    replicated: int, mariadb: MariaDB, query: str
) -> None:
    source = pymysql.connect(host=mariadb.host, port=mariadb.port, user="root",
                             password=MARIADB_ROOT_PASSWORD)  # fmt: skip
    try:
        with source.cursor() as theirs, connect(replicated) as conn, conn.cursor() as ours:
            expected, expected_rows = _result(theirs, query)
            found, rows = _result(ours, query)
    finally:
        source.close()
    assert found == expected
    assert rows == expected_rows


PICTURE = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0xFF, 0x00])


def _pymysql(port: int, prepared: bool) -> object:
    with connect(port) as conn, conn.cursor() as cursor:
        cursor.execute("SELECT bl, vb, bin FROM meta.t WHERE id = 1")
        return cursor.fetchone()


def _mysqlclient(port: int, prepared: bool) -> object:
    MySQLdb = pytest.importorskip("MySQLdb")
    conn = MySQLdb.connect(host="127.0.0.1", port=port, user="root", password=ROOT_PASSWORD)
    try:
        cursor = conn.cursor()
        cursor.execute("SELECT bl, vb, bin FROM meta.t WHERE id = 1")
        return cursor.fetchone()
    finally:
        conn.close()


def _mysql_connector(port: int, prepared: bool) -> object:
    import mysql.connector

    conn = mysql.connector.connect(host="127.0.0.1", port=port, user="root",
                                   password=ROOT_PASSWORD, use_pure=True)  # fmt: skip
    try:
        cursor = conn.cursor(prepared=prepared)
        cursor.execute("SELECT bl, vb, bin FROM meta.t WHERE id = %s", (1,))
        return tuple(cursor.fetchone())
    finally:
        conn.close()


def _async_driver(module: str) -> Any:
    """The row read through an asyncio driver (aiomysql, asyncmy: the same API)."""

    def read(port: int, prepared: bool) -> object:
        driver = pytest.importorskip(module)

        async def fetch() -> object:
            conn = await driver.connect(host="127.0.0.1", port=port, user="root",
                                        password=ROOT_PASSWORD)  # fmt: skip
            try:
                async with conn.cursor() as cursor:
                    await cursor.execute("SELECT bl, vb, bin FROM meta.t WHERE id = 1")
                    return await cursor.fetchone()
            finally:
                conn.close()

        return asyncio.run(fetch())

    return read


_aiomysql = _async_driver("aiomysql")
_asyncmy = _async_driver("asyncmy")


@pytest.mark.parametrize(
    ("driver", "prepared"),
    [
        (_pymysql, False),
        (_mysqlclient, False),
        (_mysql_connector, False),
        (_mysql_connector, True),
        (_aiomysql, False),
        (_asyncmy, False),
    ],  # fmt: skip
)
def test_every_python_driver_reads_binary_columns_as_bytes(
    replicated: int, driver: Any, prepared: bool
) -> None:
    row = driver(replicated, prepared)
    assert tuple(row) == (PICTURE, bytes([0xC3]), bytes([0x00, 0xFF, 0x7F, 0x80]))


def test_unsigned_and_small_integers_survive_the_binary_protocol(replicated: int) -> None:
    """COM_STMT_EXECUTE packs each integer by its type and sign (an INT UNSIGNED of 2^32 - 1,
    a TINYINT of -128, a BIGINT UNSIGNED of 2^64 - 1) and TIME as a time."""
    import datetime

    import mysql.connector

    conn = mysql.connector.connect(host="127.0.0.1", port=replicated, user="root",
                                   password=ROOT_PASSWORD, use_pure=True)  # fmt: skip
    try:
        cursor = conn.cursor(prepared=True)
        cursor.execute("SELECT u, tiny, ubig, small, hm FROM meta.t WHERE id = %s", (1,))
        row = tuple(cursor.fetchone())
    finally:
        conn.close()
    assert row == (4294967295, -128, 18446744073709551615, 65535,
                   -datetime.timedelta(hours=12, minutes=30))  # fmt: skip
