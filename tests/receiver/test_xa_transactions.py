"""XA transactions run on a real MariaDB source reach the replica as a MySQL replica applies
them: a prepared transaction's rows stay invisible until its XA COMMIT, XA ROLLBACK drops
them, XA COMMIT ... ONE PHASE commits at once, prepared transactions interleave, an XA COMMIT
of a transaction the replica never saw stops the channel with 1397, and one prepared before a
restart of the replica server is committed after it (on the Spark engine too, whose commit
points record the prepared transactions). Both appliers end with every table equal to the
source's, row by row, and the channel running."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

from spark_replica.applier_core.storage import InMemoryEngine, TableRef
from spark_replica.server.components import default_components
from spark_replica.server.storage import configured_components
from tests.helpers.live_source import caught_up, following, fresh_source, recorded
from tests.helpers.mariadb import ROOT_PASSWORD as MARIADB_ROOT_PASSWORD
from tests.helpers.mariadb import MariaDB
from tests.helpers.replica_channel import WAIT, poll
from tests.helpers.server import connect, running_server

TABLE = TableRef("xa", "t")
SPARK_WAIT = 120.0


def _source_rows(mariadb: MariaDB) -> list[tuple[Any, ...]]:
    conn = pymysql.connect(host=mariadb.host, port=mariadb.port, user="root",
                           password=MARIADB_ROOT_PASSWORD)  # fmt: skip
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT * FROM xa.t ORDER BY id")
            return [tuple(row) for row in cursor.fetchall()]
    finally:
        conn.close()


def _rows(engine: InMemoryEngine) -> list[tuple[Any, ...]]:
    return sorted(engine.rows(TABLE), key=lambda row: row[0])


def _prepare(mariadb: MariaDB, xid: str, *statements: str) -> None:
    """Run ``statements`` in XA transaction ``xid`` and prepare it (MariaDB keeps it prepared
    after the client disconnects)."""
    body = "; ".join(statements)
    mariadb.sql(f"XA START {xid}; {body}; XA END {xid}; XA PREPARE {xid}")


@pytest.fixture(autouse=True)
def _no_prepared_left(mariadb: MariaDB) -> Iterator[None]:
    """A test that fails midway leaves no prepared transaction on the shared source (its
    locks would hold up every later test)."""
    yield
    for line in mariadb.sql("XA RECOVER FORMAT='SQL'").splitlines():
        mariadb.sql(f"XA ROLLBACK {line.split(chr(9))[3]}")  # the xid as SQL


def _prepared(engine: InMemoryEngine) -> list[str]:
    return [prepared.xid for prepared in engine.prepared_xa()]


@pytest.mark.parametrize("applier", ["csa", "mta"])
def test_xa_transactions_apply_as_on_a_mysql_replica(
    mariadb: MariaDB, port: int, engine: InMemoryEngine, applier: str
) -> None:
    fresh_source(mariadb, "xa")
    mariadb.sql("CREATE DATABASE xa; CREATE TABLE xa.t (id INT PRIMARY KEY, v VARCHAR(20))")
    mariadb.sql("INSERT INTO xa.t VALUES (1, 'one'), (2, 'two')")
    with following(port, mariadb, applier) as cursor:
        _prepare(mariadb, "'c1'", "INSERT INTO xa.t VALUES (3, 'c1')",
                 "UPDATE xa.t SET v = 'c1' WHERE id = 1")  # fmt: skip
        caught_up(cursor, mariadb, WAIT)
        assert _rows(engine) == [(1, "one"), (2, "two")]  # prepared: not visible
        assert _prepared(engine) == ["X'6331',X'',1"]

        mariadb.sql("XA COMMIT 'c1'")
        caught_up(cursor, mariadb, WAIT)
        assert _rows(engine) == [(1, "c1"), (2, "two"), (3, "c1")]
        assert _prepared(engine) == []

        _prepare(mariadb, "'r1','branch',7", "DELETE FROM xa.t WHERE id = 2")
        mariadb.sql("XA ROLLBACK 'r1','branch',7")
        mariadb.sql("XA START 'o1'; INSERT INTO xa.t VALUES (4, 'o1'); XA END 'o1'; "
                    "XA COMMIT 'o1' ONE PHASE")  # fmt: skip
        # Interleaved: two prepared at once, a plain transaction between, committed out of
        # their prepare order, one rolled back.
        _prepare(mariadb, "'i1'", "INSERT INTO xa.t VALUES (5, 'i1')")
        _prepare(mariadb, "'i2'", "INSERT INTO xa.t VALUES (6, 'i2')",
                 "UPDATE xa.t SET v = 'i2' WHERE id = 4")  # fmt: skip
        mariadb.sql("INSERT INTO xa.t VALUES (7, 'plain')")
        caught_up(cursor, mariadb, WAIT)
        assert _prepared(engine) == ["X'6931',X'',1", "X'6932',X'',1"]
        mariadb.sql("XA COMMIT 'i2'")
        mariadb.sql("XA ROLLBACK 'i1'")
        mariadb.sql("UPDATE xa.t SET v = 'after' WHERE id = 6")
        caught_up(cursor, mariadb, WAIT)
        assert _prepared(engine) == []
        assert _rows(engine) == _source_rows(mariadb)


@pytest.mark.parametrize("applier", ["csa", "mta"])
def test_many_interleaved_xa_transactions_end_as_on_the_source(
    mariadb: MariaDB, port: int, engine: InMemoryEngine, applier: str
) -> None:
    """Twenty XA transactions, up to four prepared at a time, completed out of their prepare
    order (every third rolled back) among plain transactions on the same table."""
    fresh_source(mariadb, "xa")
    mariadb.sql("CREATE DATABASE xa; CREATE TABLE xa.t (id INT PRIMARY KEY, v VARCHAR(20))")
    mariadb.sql("INSERT INTO xa.t VALUES " + ", ".join(f"({i}, 'r{i}')" for i in range(20)))
    open_xids: list[int] = []
    with following(port, mariadb, applier) as cursor:
        for n in range(20):
            _prepare(mariadb, f"'m{n}'", f"UPDATE xa.t SET v = 'm{n}' WHERE id = {n}",
                     f"INSERT INTO xa.t VALUES ({100 + n}, 'm{n}')")  # fmt: skip
            open_xids.append(n)
            mariadb.sql(f"INSERT INTO xa.t VALUES ({200 + n}, 'plain')")
            if len(open_xids) == 4:
                done = open_xids.pop(n % 2 - 2)  # the newest or the one before it
                verb = "ROLLBACK" if done % 3 == 0 else "COMMIT"
                mariadb.sql(f"XA {verb} 'm{done}'")
        for done in open_xids:
            mariadb.sql(f"XA COMMIT 'm{done}'")
        caught_up(cursor, mariadb, WAIT)
    assert _prepared(engine) == []
    assert _rows(engine) == _source_rows(mariadb)


@pytest.mark.parametrize("applier", ["csa", "mta"])
def test_xa_commit_of_a_transaction_the_replica_never_saw_stops_the_channel_with_1397(
    mariadb: MariaDB, port: int, engine: InMemoryEngine, applier: str
) -> None:
    fresh_source(mariadb, "xa")
    mariadb.sql("CREATE DATABASE xa; CREATE TABLE xa.t (id INT PRIMARY KEY, v VARCHAR(20))")
    with following(port, mariadb, applier) as cursor:
        caught_up(cursor, mariadb, WAIT)
        # Prepared unlogged: only its XA COMMIT reaches the binary log.
        mariadb.sql("SET sql_log_bin = 0; XA START 'u'; INSERT INTO xa.t VALUES (1, 'u'); "
                    "XA END 'u'; XA PREPARE 'u'")  # fmt: skip
        mariadb.sql("XA COMMIT 'u'")
        found = poll(cursor, lambda s: s["Replica_SQL_Running"] == "No", WAIT)
        assert found["Last_SQL_Errno"] == 1397
        cursor.execute("SELECT LAST_ERROR_NUMBER, LAST_ERROR_MESSAGE FROM "
                       "performance_schema.replication_applier_status_by_worker "
                       "WHERE LAST_ERROR_NUMBER <> 0")  # fmt: skip
        [(number, message)] = cursor.fetchall()
        assert number == 1397
        assert message.endswith("Error 'XAER_NOTA: Unknown XID' on query. Default database: "
                                "''. Query: 'XA COMMIT X'75',X'',1'"), message  # fmt: skip
        assert found["Replica_IO_Running"] == "Yes"
    assert _rows(engine) == []


@pytest.mark.parametrize("applier", ["csa", "mta"])
def test_a_transaction_prepared_before_a_replica_restart_commits_after_it(
    mariadb: MariaDB, tmp_path: Path, applier: str
) -> None:
    fresh_source(mariadb, "xa")
    mariadb.sql("CREATE DATABASE xa; CREATE TABLE xa.t (id INT PRIMARY KEY, v VARCHAR(20))")
    engine = InMemoryEngine()
    data = tmp_path / "data"
    with running_server(data, default_components(engine)) as server:
        with following(server.port, mariadb, applier) as cursor:
            _prepare(mariadb, "'k1'", "INSERT INTO xa.t VALUES (1, 'k1')")
            _prepare(mariadb, "'k2'", "INSERT INTO xa.t VALUES (2, 'k2')")
            caught_up(cursor, mariadb, WAIT)
    assert _prepared(engine) == ["X'6b31',X'',1", "X'6b32',X'',1"]
    mariadb.sql("XA COMMIT 'k1'")
    mariadb.sql("XA ROLLBACK 'k2'")
    with running_server(data, default_components(engine)) as server:
        with following(server.port, mariadb, applier) as cursor:
            caught_up(cursor, mariadb, WAIT)
    assert _prepared(engine) == []
    assert _rows(engine) == _source_rows(mariadb) == [(1, "k1")]


def _replica_rows(port: int) -> list[tuple[Any, ...]]:
    with connect(port) as conn, conn.cursor() as cursor:
        cursor.execute("SELECT * FROM xa.t ORDER BY id")
        return [tuple(row) for row in cursor.fetchall()]


@pytest.mark.spark
@pytest.mark.parametrize("applier", ["csa", "mta"])
def test_on_spark_a_prepared_transaction_is_recorded_and_commits_after_a_restart(
    mariadb: MariaDB, tmp_path: Path, applier: str
) -> None:
    fresh_source(mariadb, "xa")
    mariadb.sql("CREATE DATABASE xa; CREATE TABLE xa.t (id INT PRIMARY KEY, v VARCHAR(20))")
    mariadb.sql("INSERT INTO xa.t VALUES (1, 'one')")
    data = tmp_path / "data"
    with running_server(data, configured_components) as server:
        with following(server.port, mariadb, applier) as cursor:
            _prepare(mariadb, "'s1'", "INSERT INTO xa.t VALUES (2, 's1')",
                     "UPDATE xa.t SET v = 's1' WHERE id = 1")  # fmt: skip
            _prepare(mariadb, "'s2'", "INSERT INTO xa.t VALUES (3, 's2')")
            mariadb.sql("XA START 'o'; INSERT INTO xa.t VALUES (4, 'o'); XA END 'o'; "
                        "XA COMMIT 'o' ONE PHASE")  # fmt: skip
            caught_up(cursor, mariadb, SPARK_WAIT)
            recorded(cursor, mariadb, SPARK_WAIT)
            assert _replica_rows(server.port) == [(1, "one"), (4, "o")]
    mariadb.sql("XA COMMIT 's1'")
    mariadb.sql("XA ROLLBACK 's2'")
    with running_server(data, configured_components) as server:
        with following(server.port, mariadb, applier) as cursor:
            caught_up(cursor, mariadb, SPARK_WAIT)
            recorded(cursor, mariadb, SPARK_WAIT)
            assert _replica_rows(server.port) == _source_rows(mariadb)
    assert _source_rows(mariadb) == [(1, "s1"), (2, "s1"), (4, "o")]
