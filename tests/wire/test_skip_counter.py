"""sql_replica_skip_counter with MySQL's rules (SV.sql-replica-skip-counter, LIM.3): with
GTID_MODE=ON it cannot be set unless a channel assigns GTIDs to anonymous transactions
(1858); one SQL thread takes it (3086 when several would start); a GTID channel takes it
without effect; the event groups of an assigning channel cannot be skipped here (1235)."""

from __future__ import annotations

import pymysql
import pytest

from tests.helpers.server import connect

ANONYMOUS = (
    "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h2', SOURCE_LOG_FILE='b.000001', "
    "SOURCE_LOG_POS=4, ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS=LOCAL FOR CHANNEL 'anon'"
)
GTIDS = "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h1', SOURCE_AUTO_POSITION=1 FOR CHANNEL 'g'"
NOT_SETTABLE = (
    1858,
    "sql_replica_skip_counter can not be set when the server is running with "
    "@@GLOBAL.GTID_MODE = ON. Instead, for each transaction that you want to skip, generate "
    "an empty transaction with the same GTID as the transaction",
)


def _counter(cursor: pymysql.cursors.Cursor) -> int:
    cursor.execute("SELECT @@global.sql_replica_skip_counter")
    return int(cursor.fetchone()[0])


def test_with_gtids_only_it_cannot_be_set(port: int) -> None:
    with connect(port) as conn, conn.cursor() as cursor:
        cursor.execute(GTIDS)
        for name in ("sql_replica_skip_counter", "sql_slave_skip_counter"):
            with pytest.raises(pymysql.err.MySQLError) as caught:
                cursor.execute(f"SET GLOBAL {name} = 1")
            assert caught.value.args == NOT_SETTABLE
        cursor.execute("SET GLOBAL sql_slave_skip_counter = 0")
        cursor.execute("SHOW WARNINGS")
        assert [row[1] for row in cursor.fetchall()] == [1287]
        assert _counter(cursor) == 0


def test_one_sql_thread_takes_it(port: int) -> None:
    with connect(port) as conn, conn.cursor() as cursor:
        cursor.execute(GTIDS)
        cursor.execute(ANONYMOUS)
        cursor.execute("SET GLOBAL sql_replica_skip_counter = 2")
        assert _counter(cursor) == 2
        with pytest.raises(pymysql.err.MySQLError) as caught:
            cursor.execute("START REPLICA SQL_THREAD")
        assert caught.value.args[0] == 3086
        assert caught.value.args[1].startswith(
            "When sql_replica_skip_counter > 0, it is not allowed to start more than one SQL "
            "thread by using 'START REPLICA [SQL_THREAD]'."
        )
        with pytest.raises(pymysql.err.MySQLError) as caught:
            cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'anon'")
        assert caught.value.args == (
            1235, "This version of MySQL doesn't yet support 'sql_replica_skip_counter with "
            "ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS'")  # fmt: skip
        assert _counter(cursor) == 2  # nothing started, nothing taken
        cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'g'")
        assert _counter(cursor) == 0  # taken, without effect on GTID transactions
        cursor.execute("STOP REPLICA SQL_THREAD FOR CHANNEL 'g'")
