"""GTID_SUBSET and GTID_SUBTRACT over the wire, as a DBA checks a replica's progress against
the source's set (``@@gtid_executed`` and user variables as arguments), and the errors of
functions a SELECT without tables cannot evaluate, with their SQLSTATEs."""

from __future__ import annotations

import pymysql
import pytest

from tests.helpers.server import connect

U = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


def test_gtid_functions_take_variables_and_name_their_columns(port: int) -> None:
    with connect(port) as conn, conn.cursor() as cursor:
        cursor.execute(f"SET @source = '{U}:1-100'")
        cursor.execute("SELECT GTID_SUBSET(@@global.gtid_executed, @source) AS caught_up, "
                       "GTID_SUBTRACT(@source, @@gtid_executed) AS missing")  # fmt: skip
        assert cursor.fetchall() == ((1, f"{U}:1-100"),)
        cursor.execute(f"SELECT GTID_SUBSET('{U}:2', '{U}:1-3')")
        assert [column[0] for column in cursor.description] == [f"GTID_SUBSET('{U}:2', '{U}:1-3')"]
        assert cursor.fetchall() == ((1,),)


@pytest.mark.parametrize(
    ("sql", "code", "sqlstate"),
    [
        (f"SELECT GTID_SUBSET('{U}:1')", 1582, "42000"),
        ("SELECT GTID_SUBTRACT('nonsense', '')", 1772, "HY000"),
        ("SELECT NOSUCHFUNC(1)", 1046, "3D000"),
        ("SELECT MD5('a')", 1235, "42000"),
    ],
)
def test_functions_that_cannot_be_evaluated_get_mysql_errors(
    port: int, sql: str, code: int, sqlstate: str
) -> None:
    with connect(port) as conn, conn.cursor() as cursor:
        with pytest.raises(pymysql.MySQLError) as excinfo:
            cursor.execute(sql)
        assert (excinfo.value.args[0], excinfo.value.sqlstate) == (code, sqlstate)
        cursor.execute("SHOW ERRORS")
        assert cursor.fetchall()[0][1] == code
        cursor.execute("SELECT 1")  # the connection goes on
        assert cursor.fetchall() == ((1,),)


def test_wait_for_executed_gtid_set_times_out_and_checks_its_arguments(port: int) -> None:
    with connect(port) as conn, conn.cursor() as cursor:
        cursor.execute(f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{U}:1', 0.2) AS w, "
                       "WAIT_FOR_EXECUTED_GTID_SET('', 0) AS nothing, "
                       "WAIT_FOR_EXECUTED_GTID_SET(NULL, 1) AS n")  # fmt: skip
        assert cursor.fetchall() == ((1, 0, None),)
        for sql, code in (
            (f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{U}:1', -1)", 1210),
            ("SELECT WAIT_FOR_EXECUTED_GTID_SET('bad', 1)", 1772),
            ("SELECT WAIT_FOR_EXECUTED_GTID_SET()", 1582),
        ):
            with pytest.raises(pymysql.MySQLError) as excinfo:
                cursor.execute(sql)
            assert excinfo.value.args[0] == code, sql
