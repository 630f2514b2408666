"""GTID_SUBSET and GTID_SUBTRACT in a SELECT without tables, and the MySQL errors for
functions such a SELECT cannot evaluate: 1305/1046 for a name MySQL does not know, 1235 for
a MySQL function this server does not evaluate there (it was 1105 with Python's words)."""

from __future__ import annotations

from typing import cast

import pytest
import sqlglot
from sqlglot import expressions as exp

from spark_replica.applier_core.errors import ReplicaError
from spark_replica.sql_handlers.virtual_query import function_error, static_select

U = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
V = "4e11fa47-71ca-11e1-9e33-c80aa9429562"


def _select(sql: str, database: str | None = None) -> tuple[list[tuple[object, ...]], list[str]]:
    answer = static_select(cast(exp.Expression, sqlglot.parse_one(sql, read="mysql")), database)
    assert answer is not None
    return answer


def test_gtid_subset_says_whether_every_gtid_of_the_first_set_is_in_the_second() -> None:
    rows, columns = _select(f"SELECT GTID_SUBSET('{U}:1-5', '{U}:1-10,{V}:1') AS a, "
                            f"gtid_subset('{U}:1-11', '{U}:1-10') AS b, "
                            f"GTID_SUBSET('', '{U}:1') AS c")  # fmt: skip
    assert (rows, columns) == ([(1, 0, 1)], ["a", "b", "c"])


def test_gtid_subtract_gives_mysqls_normalized_text() -> None:
    rows, _ = _select(f"SELECT GTID_SUBTRACT('{V.upper()}:3, {U}:21-57', '{U}:21')")
    assert rows == [(f"{U}:22-57,\n{V}:3",)]
    rows, _ = _select(f"SELECT GTID_SUBTRACT('{U}:1-3', '{U}:1-3')")
    assert rows == [("",)]


def test_nested_calls_and_calls_inside_expressions() -> None:
    rows, _ = _select(
        f"SELECT GTID_SUBTRACT(GTID_SUBTRACT('{U}:1-10', '{U}:1'), '{U}:10'), "
        f"GTID_SUBSET('{U}:2', '{U}:1-3') + 1 WHERE GTID_SUBSET('{U}:1', '{U}:1') = 1"
    )  # fmt: skip
    assert rows == [(f"{U}:2-9", 2)]


def test_a_result_column_is_named_after_the_call() -> None:
    _, columns = _select(f"SELECT GTID_SUBSET('{U}:1', '{U}:1-2')")
    assert columns == [f"GTID_SUBSET('{U}:1', '{U}:1-2')"]


def test_null_arguments_give_null() -> None:
    rows, _ = _select(f"SELECT GTID_SUBSET(NULL, '{U}:1'), GTID_SUBTRACT('{U}:1', NULL)")
    assert rows == [(None, None)]


@pytest.mark.parametrize(
    ("sql", "code", "message"),
    [
        (f"SELECT GTID_SUBSET('{U}:1')", 1582,
         "Incorrect parameter count in the call to native function 'GTID_SUBSET'"),
        (f"SELECT GTID_SUBTRACT('{U}:1', '{U}:1', '')", 1582,
         "Incorrect parameter count in the call to native function 'GTID_SUBTRACT'"),
        (f"SELECT GTID_SUBSET('{U}:0', '{U}:1')", 1772,
         f"Malformed GTID set specification '{U}:0'."),
        (f"SELECT GTID_SUBTRACT('nonsense', '{U}:1')", 1772,
         "Malformed GTID set specification 'nonsense'."),
    ],
)  # fmt: skip
def test_bad_calls_get_mysqls_errors(sql: str, code: int, message: str) -> None:
    with pytest.raises(ReplicaError) as excinfo:
        _select(sql)
    assert (excinfo.value.code, excinfo.value.message) == (code, message)


@pytest.mark.parametrize(
    ("sql", "database", "code", "message"),
    [
        ("SELECT NOSUCHFUNC(1)", "shop", 1305, "FUNCTION shop.NOSUCHFUNC does not exist"),
        ("SELECT 1 + my_func()", "shop", 1305, "FUNCTION shop.my_func does not exist"),
        ("SELECT NOSUCHFUNC(1)", None, 1046, "No database selected"),
        ("SELECT SLEEP(0)", None, 1235,
         "This version of MySQL doesn't yet support 'SLEEP() in a SELECT without tables'"),
        ("SELECT MD5('a')", "shop", 1235,
         "This version of MySQL doesn't yet support 'MD5() in a SELECT without tables'"),
        ("SELECT LPAD('a', 3, 'x')", None, 1235,
         "This version of MySQL doesn't yet support 'LPAD() in a SELECT without tables'"),
        (f"SELECT GTID_SUBSET(CONCAT('{U}', ':1'), '')", None, 1235,
         "This version of MySQL doesn't yet support 'GTID_SUBSET() with arguments other "
         "than constants and variables'"),
        ("SELECT DATE_FORMAT('2020-01-01', '%Y')", None, 1235,
         "This version of MySQL doesn't yet support 'DATE_FORMAT() in a SELECT without "
         "tables'"),
    ],
)  # fmt: skip
def test_functions_that_cannot_be_evaluated_get_mysql_errors(
    sql: str, database: str | None, code: int, message: str
) -> None:
    with pytest.raises(ReplicaError) as excinfo:
        _select(sql, database)
    assert (excinfo.value.code, excinfo.value.message) == (code, message)


def test_a_function_the_executor_lacks_in_a_query_on_a_system_table() -> None:
    """1235 says where the function cannot run: here a query on a performance_schema table,
    not a SELECT without tables."""
    query = sqlglot.parse_one(
        "SELECT NULLIF(TRANSACTIONS_COMMITTED, 0) FROM "
        "performance_schema.replication_applier_metrics",
        read="mysql",
    )
    error = function_error(query, "NULLIF", None)
    assert (error.code, error.message) == (
        1235,
        "This version of MySQL doesn't yet support 'NULLIF() in queries on the server's "
        "system tables'",
    )
