"""Accounts created on a real MariaDB source log in to the replica with their source
passwords and read what the source lets them read: every login and every SELECT, SHOW and
information_schema query is run as the same user on both servers and the outcomes compared
(success, or the error number). Both appliers, the in-memory engine (a SELECT it allows
answers 1146 there, having no query engine: the Spark test compares the rows too:
test_replicated_accounts_spark.py)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

import pymysql
import pytest

from tests.helpers.live_source import caught_up, following
from tests.helpers.mariadb import MariaDB
from tests.helpers.replica_channel import CHANNEL, WAIT
from tests.helpers.server import READER

#: Run on the source, one statement at a time.
SOURCE = (
    "DROP DATABASE IF EXISTS acct",
    "DROP DATABASE IF EXISTS acct_other",
    "DROP USER IF EXISTS acct_a, acct_b, acct_c, acct_gone, acct_moved, acct_d, acct_locked, "
    "reader",
    "DROP ROLE IF EXISTS acct_role",
    "CREATE DATABASE acct",
    "CREATE DATABASE acct_other",
    "CREATE TABLE acct.pub (id INT PRIMARY KEY, v VARCHAR(10))",
    "CREATE TABLE acct.priv (id INT PRIMARY KEY, secret VARCHAR(10))",
    "CREATE TABLE acct.via_role (id INT PRIMARY KEY)",
    "CREATE TABLE acct_other.t (id INT PRIMARY KEY)",
    "INSERT INTO acct.pub VALUES (1, 'one'), (2, 'two')",
    "INSERT INTO acct.priv VALUES (1, 'hidden')",
    "INSERT INTO acct.via_role VALUES (7)",
    "INSERT INTO acct_other.t VALUES (9)",
    "CREATE USER 'acct_a'@'%' IDENTIFIED BY 'a-pw'",
    "GRANT SELECT ON acct.pub TO 'acct_a'@'%'",
    "CREATE ROLE acct_role",
    "GRANT SELECT ON acct.via_role TO acct_role",
    "GRANT acct_role TO acct_a",
    "SET DEFAULT ROLE acct_role FOR acct_a",
    "CREATE USER acct_b IDENTIFIED VIA mysql_native_password USING PASSWORD('b-pw')",
    "GRANT SELECT, INSERT ON acct.* TO acct_b WITH GRANT OPTION",
    "REVOKE INSERT ON acct.* FROM acct_b",
    "CREATE USER acct_c IDENTIFIED BY 'c-old'",
    "SET PASSWORD FOR acct_c = PASSWORD('c-pw')",
    "GRANT SELECT ON *.* TO acct_c",
    "REVOKE SELECT ON *.* FROM acct_c",
    "GRANT SELECT ON acct_other.* TO acct_c",
    "GRANT SELECT (id) ON acct.priv TO acct_c",
    "CREATE USER acct_gone IDENTIFIED BY 'g-pw'",
    "GRANT SELECT ON acct.priv TO acct_gone",
    "RENAME USER acct_gone TO acct_moved",
    "CREATE USER acct_d IDENTIFIED BY 'd-pw'",
    "DROP USER acct_d",
    "CREATE USER acct_locked IDENTIFIED BY 'l-pw' ACCOUNT LOCK",
    "ALTER USER acct_b IDENTIFIED BY 'b-pw2'",
    # A source account named like a local account of the replica: the local one wins.
    "CREATE USER reader IDENTIFIED BY 'source-reader-pw'",
    "GRANT SELECT ON acct.* TO reader",
    "FLUSH PRIVILEGES",
)
#: (user, password) pairs tried on both servers.
LOGINS = (
    ("acct_a", "a-pw"),
    ("acct_b", "b-pw"),
    ("acct_b", "b-pw2"),
    ("acct_c", "c-old"),
    ("acct_c", "c-pw"),
    ("acct_gone", "g-pw"),
    ("acct_moved", "g-pw"),
    ("acct_d", "d-pw"),
    ("nobody", "x"),
)
QUERIES = (
    "SELECT * FROM acct.pub ORDER BY id",
    "SELECT id FROM acct.priv",
    "SELECT * FROM acct.priv",
    "SELECT q.secret FROM acct.priv q",
    "SELECT COUNT(*) FROM acct.priv WHERE id > 0",
    "SELECT * FROM acct.via_role",
    "SELECT * FROM acct_other.t",
    "SELECT p.id FROM acct.pub p JOIN acct.priv q ON p.id = q.id",
    "WITH c AS (SELECT id FROM acct.pub) SELECT * FROM c",
)
#: The catalog as each user sees it.
LISTINGS = (
    "SHOW TABLES FROM acct",
    "SELECT table_schema, table_name FROM information_schema.tables "
    "WHERE table_schema LIKE 'acct%' ORDER BY 1, 2",
)
#: MariaDB's number for a locked account, and MySQL's (which the replica answers).
MARIADB_LOCKED, MYSQL_LOCKED = 4151, 3118


def _outcome(action: Any) -> object:
    """What ``action()`` returns, or the MySQL error number it fails with."""
    try:
        return action()
    except pymysql.err.MySQLError as error:
        return ("error", error.args[0])


def _login(host: str, port: int, user: str, password: str) -> Any:
    return pymysql.connect(host=host, port=port, user=user, password=password, autocommit=True)


def _run(conn: Any, query: str) -> object:
    def run() -> object:
        with conn.cursor() as cursor:
            cursor.execute(query)
            return [tuple(row) for row in cursor.fetchall()]

    return _outcome(run)


def _databases(conn: Any) -> object:
    found = _run(conn, "SHOW DATABASES")
    if isinstance(found, list):
        return sorted(row[0] for row in found if row[0].startswith("acct"))
    return found


@pytest.fixture
def replicated(mariadb: MariaDB, port: int, request: pytest.FixtureRequest) -> Iterator[int]:
    """The replica at ``port``, having applied ``SOURCE`` from ``mariadb`` with the applier
    of the test's ``applier`` parameter."""
    for statement in SOURCE:
        mariadb.sql(statement)
    with following(port, mariadb, request.node.callspec.params["applier"]) as cursor:
        caught_up(cursor, mariadb, WAIT)
        yield port


def _allowed(outcome: object) -> object:
    """A SELECT the in-memory replica allows ends in 1146 (no query engine): "allowed"."""
    if outcome == ("error", 1146) or isinstance(outcome, list):
        return "allowed"
    return outcome


@pytest.mark.parametrize("applier", ["csa", "mta"])
def test_replicated_users_log_in_and_read_as_on_the_source(
    mariadb: MariaDB, replicated: int, applier: str
) -> None:
    for user, password in LOGINS:
        theirs = _outcome(partial(_login, mariadb.host, mariadb.port, user, password))
        ours = _outcome(partial(_login, "127.0.0.1", replicated, user, password))
        assert isinstance(ours, tuple) == isinstance(theirs, tuple), (user, password, ours)
        if isinstance(theirs, tuple):
            assert ours == theirs == ("error", 1045), (user, password)
            continue
        with theirs, ours:
            for query in QUERIES:
                expected, found = _run(theirs, query), _run(ours, query)
                assert _allowed(found) == _allowed(expected), (user, query, found)
            for query in LISTINGS:
                assert _run(ours, query) == _run(theirs, query), (user, query)
            assert _databases(ours) == _databases(theirs), user
            for database in ("acct", "acct_other"):
                used = _outcome(partial(ours.select_db, database))
                assert used == _outcome(partial(theirs.select_db, database)), (user, database)


@pytest.mark.parametrize("applier", ["csa"])
def test_locked_accounts_local_accounts_and_replication_privileges(
    mariadb: MariaDB, replicated: int, applier: str
) -> None:
    theirs = _outcome(lambda: _login(mariadb.host, mariadb.port, "acct_locked", "l-pw"))
    ours = _outcome(lambda: _login("127.0.0.1", replicated, "acct_locked", "l-pw"))
    assert (theirs, ours) == (("error", MARIADB_LOCKED), ("error", MYSQL_LOCKED))
    # The replica's own 'reader' wins over the source's: its local password, its local role.
    assert _outcome(lambda: _login("127.0.0.1", replicated, "reader", "source-reader-pw")) == (
        "error", 1045)  # fmt: skip
    with _login("127.0.0.1", replicated, READER.name, READER.password) as local:
        assert _run(local, "SHOW TABLES FROM acct") == [("priv",), ("pub",), ("via_role",)]
    # A replicated account manages nothing on the replica.
    with _login("127.0.0.1", replicated, "acct_c", "c-pw") as conn:
        assert _run(conn, f"STOP REPLICA FOR CHANNEL '{CHANNEL}'") == ("error", 1227)
        denied = _outcome(lambda: conn.cursor().execute("SELECT * FROM acct.pub"))
        assert denied == ("error", 1142)
        with conn.cursor() as cursor, pytest.raises(pymysql.err.MySQLError) as caught:
            cursor.execute("SELECT * FROM acct.pub")
        assert caught.value.args[1] == (
            "SELECT command denied to user 'acct_c'@'127.0.0.1' for table 'pub'"
        )
