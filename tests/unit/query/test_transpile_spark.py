"""Transpiled MySQL queries run on Spark give the values MySQL 8 gives for the same data.

The replicated tables are temp views (unique names for this module); the expected rows are
MySQL's answers. Where the replica differs on purpose (case-sensitive comparisons, JSON
spacing), the test says so and pins the replica's answer.
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
import sqlglot

from spark_replica.applier_core.storage import TableRef
from spark_replica.sql_handlers.query.transpile import to_spark_sql

pytestmark = pytest.mark.spark

Row = tuple[object, ...]

PEOPLE_SCHEMA = (
    "id INT, name STRING, score INT, active TINYINT, doc STRING, ts TIMESTAMP_NTZ,"
    " price DECIMAL(10,2)"
)
PEOPLE = [
    (
        1,
        "alice",
        10,
        1,
        '{"a": {"b": 1}, "s": "x", "n": null}',
        datetime.datetime(2024, 1, 2, 3, 4, 5),
        Decimal("1.50"),
    ),
    (2, "Bob", None, 0, None, datetime.datetime(2024, 2, 3, 4, 5, 6), Decimal("-2.50")),
    (3, None, 30, 1, '{"s": "y"}', None, Decimal("2.49")),
]


@pytest.fixture(scope="module")
def views(spark: Any) -> Iterator[dict[TableRef, str]]:
    """The replicated tables of these tests as temp views: ``TableRef -> view name``."""
    suffix = uuid.uuid4().hex[:8]
    frames = {
        TableRef("shop", "people"): spark.createDataFrame(PEOPLE, PEOPLE_SCHEMA),
        TableRef("other", "people"): spark.createDataFrame([(1, "other")], "id INT, name STRING"),
        TableRef("shop", "orders"): spark.createDataFrame(
            [(10, 1, 5), (11, 1, 7), (12, 3, 1)], "id INT, person_id INT, amount INT"
        ),
        TableRef("my db", "t-1"): spark.createDataFrame([(1, 2)], ["odd col", "a`b"]),
    }
    names = {}
    for index, (ref, frame) in enumerate(frames.items()):
        names[ref] = f"__transpile_{suffix}_{index}"
        frame.createOrReplaceTempView(names[ref])
    yield names
    for name in names.values():
        spark.catalog.dropTempView(name)


@pytest.fixture
def run(spark: Any, views: dict[TableRef, str]) -> Any:
    """``run(mysql_sql)``: the rows Spark returns for the transpiled query."""

    def _run(sql: str, database: str | None = "shop") -> list[Row]:
        query = to_spark_sql(
            sqlglot.parse_one(sql, read="mysql"), database=database, resolve=views.get
        )
        return [tuple(row) for row in spark.sql(query.sql).collect()]

    return _run


def columns(spark: Any, views: dict[TableRef, str], sql: str) -> list[str]:
    query = to_spark_sql(sqlglot.parse_one(sql, read="mysql"), database="shop", resolve=views.get)
    return list(spark.sql(query.sql).columns)


# --- tables, names, scopes ------------------------------------------------------------------


def test_count_star_and_mysql_column_names(
    spark: Any, views: dict[TableRef, str], run: Any
) -> None:
    assert run("SELECT COUNT(*) FROM people") == [(3,)]
    assert columns(spark, views, "SELECT COUNT(*), 'abc' FROM people") == ["COUNT(*)", "abc"]
    assert columns(spark, views, "SELECT ID, t.name, t.* FROM people t LIMIT 0")[:3] == [
        "ID",
        "name",
        "id",
    ]


def test_qualified_column_references(run: Any) -> None:
    sql = "SELECT shop.people.id, people.name FROM shop.people WHERE shop.people.id = 1"
    assert run(sql, database=None) == [(1, "alice")]
    assert run("SELECT p.id FROM people AS p WHERE p.id > 1 ORDER BY p.id DESC") == [(3,), (2,)]


def test_same_table_name_in_two_databases(run: Any) -> None:
    sql = (
        "SELECT shop.people.name, other.people.name FROM shop.people "
        "JOIN other.people ON shop.people.id = other.people.id"
    )
    assert run(sql) == [("alice", "other")]


def test_ctes_unions_and_subqueries(run: Any) -> None:
    cte = "WITH x AS (SELECT id FROM people WHERE id < 3) "
    assert run(cte + "SELECT id FROM x UNION SELECT id FROM x ORDER BY id") == [(1,), (2,)]
    assert run(cte + "SELECT COUNT(*) FROM (SELECT id FROM x UNION ALL SELECT id FROM x) u") == [
        (4,)
    ]
    assert run("SELECT d.n FROM (SELECT COUNT(*) AS n FROM people) AS d") == [(3,)]
    in_orders = "SELECT id FROM people WHERE id IN (SELECT person_id FROM orders) ORDER BY id"
    assert run(in_orders) == [(1,), (3,)]
    correlated = (
        "SELECT name FROM shop.people WHERE EXISTS "
        "(SELECT 1 FROM shop.orders WHERE shop.orders.person_id = shop.people.id "
        "AND shop.orders.amount > 5)"
    )
    assert run(correlated) == [("alice",)]
    recursive = (
        "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) "
        "SELECT n FROM r ORDER BY n"
    )
    assert run(recursive) == [(1,), (2,), (3,)]


def test_backquoted_odd_identifiers(run: Any) -> None:
    assert run("SELECT `odd col`, `a``b` FROM `my db`.`t-1`") == [(1, 2)]


def test_order_by_aliased_expressions(run: Any) -> None:
    assert run("SELECT DISTINCT id + 1 FROM people ORDER BY id + 1") == [(2,), (3,), (4,)]
    assert run("SELECT COUNT(*) FROM people GROUP BY active ORDER BY COUNT(*)") == [(1,), (2,)]


def test_nulls_sort_first_ascending_and_last_descending(run: Any) -> None:
    assert run("SELECT id FROM people ORDER BY score") == [(2,), (1,), (3,)]
    assert run("SELECT id FROM people ORDER BY score DESC") == [(3,), (1,), (2,)]


# --- casts --------------------------------------------------------------------------------


def test_unsigned_and_signed_casts(run: Any) -> None:
    sql = (
        "SELECT CAST(-1 AS UNSIGNED), CAST(2.5 AS UNSIGNED INTEGER), "
        "CAST('18446744073709551615' AS UNSIGNED), CAST(1.5 AS SIGNED), "
        "CAST(-1.5 AS SIGNED INTEGER), CAST('9007199254740993' AS SIGNED) FROM dual"
    )
    assert run(sql) == [
        (
            Decimal("18446744073709551615"),
            Decimal("3"),
            Decimal("18446744073709551615"),
            2,
            -2,
            9007199254740993,
        )
    ]
    # DECIMAL values round half away from zero; a negative result wraps modulo 2^64.
    prices = "SELECT CAST(price AS SIGNED), CAST(price AS UNSIGNED) FROM people ORDER BY id"
    assert run(prices) == [
        (2, Decimal("2")),
        (-3, Decimal("18446744073709551613")),
        (2, Decimal("2")),
    ]


def test_char_and_datetime_casts(run: Any) -> None:
    sql = (
        "SELECT CAST(12345 AS CHAR(3)), CAST(12 AS CHAR), CONVERT(7, CHAR), "
        "CAST('2024-01-02 03:04:05' AS DATETIME), CAST(CAST('2024-01-02' AS DATE) AS DATETIME)"
    )
    assert run(sql) == [
        (
            "123",
            "12",
            "7",
            datetime.datetime(2024, 1, 2, 3, 4, 5),
            datetime.datetime(2024, 1, 2),
        )
    ]


# --- MySQL syntax Spark lacks ---------------------------------------------------------------


def test_from_dual(run: Any) -> None:
    assert run("SELECT 1 + 1 FROM dual") == [(2,)]
    assert run("SELECT 1 FROM DUAL WHERE 1 = 0") == []


def test_modifiers_straight_join_and_locking_clauses(run: Any) -> None:
    sql = (
        "SELECT SQL_CALC_FOUND_ROWS SQL_NO_CACHE HIGH_PRIORITY SQL_BUFFER_RESULT STRAIGHT_JOIN "
        "p.id, o.amount FROM people p STRAIGHT_JOIN orders o ON o.person_id = p.id "
        "ORDER BY o.id FOR UPDATE"
    )
    assert run(sql) == [(1, 5), (1, 7), (3, 1)]
    assert run("SELECT id FROM people ORDER BY id LOCK IN SHARE MODE") == [(1,), (2,), (3,)]


def test_collations(run: Any) -> None:
    where = "SELECT id FROM people WHERE name = 'ALICE' COLLATE "
    assert run(where + "utf8mb4_general_ci") == [(1,)]
    assert run(where + "utf8mb4_0900_ai_ci") == [(1,)]
    assert run(where + "utf8mb4_bin") == []
    like = "SELECT id FROM people WHERE name COLLATE utf8mb4_unicode_ci LIKE 'b%'"
    assert run(like) == [(2,)]


def test_xor_truth_table_with_nulls(run: Any) -> None:
    pairs = (
        "SELECT 1 AS k, 1 AS a, 1 AS b UNION ALL SELECT 2, 1, 0 UNION ALL SELECT 3, 0, 0 "
        "UNION ALL SELECT 4, NULL, 1 UNION ALL SELECT 5, 0, NULL UNION ALL SELECT 6, 2, 3"
    )
    assert run(f"SELECT k, a XOR b FROM ({pairs}) p ORDER BY k") == [
        (1, 0),
        (2, 1),
        (3, 0),
        (4, None),
        (5, None),
        (6, 0),
    ]
    assert run(f"SELECT k FROM ({pairs}) p WHERE a XOR b") == [(2,)]
    assert run("SELECT (1 > 0) XOR (2 > 3), 1 XOR 1 XOR 1") == [(1, 1)]


def test_numbers_as_conditions_and_comparisons_as_numbers(run: Any) -> None:
    assert run("SELECT SUM(score > 5), COUNT(*) FROM people WHERE active") == [(2, 2)]
    assert run("SELECT id FROM people WHERE NOT active") == [(2,)]
    assert run("SELECT score > 5, TRUE, NOT 5 FROM people ORDER BY id") == [
        (1, 1, 0),
        (None, 1, 0),
        (1, 1, 0),
    ]
    having = "SELECT active FROM people GROUP BY active HAVING SUM(active) ORDER BY active"
    assert run(having) == [(1,)]
    conditions = "SELECT IF(score, 'y', 'n'), CASE WHEN active THEN 1 ELSE 0 END FROM people"
    assert run(conditions + " ORDER BY id") == [("y", 1), ("n", 0), ("y", 1)]


def test_division_and_modulo(run: Any) -> None:
    sql = "SELECT 7 DIV 2, -7 DIV 2, 7 % 0, 7 / 0, 7 DIV 0, MOD(-7, 3), 7 % -3, 6 / 3"
    # MySQL's 6 / 3 is the DECIMAL 2.0000, Spark's the DOUBLE 2.0 (equal as numbers).
    assert run(sql) == [(3, -3, None, None, None, -1, 1, 2.0)]


def test_limit_offset_forms(run: Any) -> None:
    assert run("SELECT id FROM people ORDER BY id LIMIT 1, 1") == [(2,)]
    assert run("SELECT id FROM people ORDER BY id LIMIT 1, 18446744073709551615") == [(2,), (3,)]
    assert run("SELECT id FROM people ORDER BY id LIMIT 2 OFFSET 2") == [(3,)]


# --- functions ------------------------------------------------------------------------------


def test_ifnull_if_concat(run: Any) -> None:
    sql = (
        "SELECT IFNULL(score, 0), IF(score > 5, 'hi', 'lo'), CONCAT(name, '-', id) "
        "FROM people ORDER BY id"
    )
    assert run(sql) == [(10, "hi", "alice-1"), (0, "lo", "Bob-2"), (30, "hi", None)]


def test_date_format_and_from_unixtime(run: Any) -> None:
    sql = (
        "SELECT DATE_FORMAT(ts, '%Y-%m-%d %H:%i:%s'), DATE_FORMAT(ts, '%b %e %Y %W'), "
        "FROM_UNIXTIME(86400, '%Y-%m-%d %H:%i') FROM people WHERE id = 1"
    )
    assert run(sql) == [("2024-01-02 03:04:05", "Jan 2 2024 Tuesday", "1970-01-02 00:00")]


def test_group_concat(run: Any) -> None:
    sql = (
        "SELECT GROUP_CONCAT(id ORDER BY id DESC SEPARATOR ';'), "
        "GROUP_CONCAT(DISTINCT active ORDER BY active) FROM people"
    )
    assert run(sql) == [("3;2;1", "0,1")]


def test_group_concat_distinct_ordered_by_another_expression(run: Any) -> None:
    """Spark's LISTAGG refuses DISTINCT with another ordering; MySQL keeps each value once,
    in the order of the keys, skips NULLs and gives NULL for none (sakila's actor_info)."""
    assert run("SELECT GROUP_CONCAT(DISTINCT name ORDER BY id DESC) FROM people") == [
        ("Bob,alice",)
    ]
    sql = (
        "SELECT p.id, GROUP_CONCAT(DISTINCT CONCAT(p.name, ':', (SELECT SUM(o2.amount) "
        "FROM orders o2 WHERE o2.person_id = p.id)) ORDER BY o.id SEPARATOR '; ') "
        "FROM people p LEFT JOIN orders o ON o.person_id = p.id GROUP BY p.id ORDER BY p.id"
    )
    assert run(sql) == [(1, "alice:12"), (2, None), (3, None)]


def test_null_safe_equality_and_regexp(run: Any) -> None:
    assert run("SELECT id FROM people WHERE score <=> NULL") == [(2,)]
    assert run("SELECT NULL <=> NULL, 1 <=> NULL") == [(1, 0)]
    assert run("SELECT id FROM people WHERE name REGEXP '^a'") == [(1,)]


def test_json_extract_operators(run: Any) -> None:
    sql = (
        "SELECT doc->'$.s', doc->>'$.s', JSON_EXTRACT(doc, '$.a.b'), doc->'$.a', "
        "JSON_UNQUOTE(JSON_EXTRACT(doc, '$.s')), doc->'$.missing', doc->'$.n' "
        "FROM people WHERE id = 1"
    )
    # MySQL prints the object as {"b": 1}; Spark's JSON text has no spaces.
    assert run(sql) == [('"x"', "x", "1", '{"b":1}', "x", None, "null")]
    assert run("SELECT id FROM people WHERE doc->'$.s' = 'y'") == [(3,)]
    assert run("SELECT id FROM people WHERE doc->>'$.a.b' = 1") == [(1,)]


def test_string_functions(run: Any) -> None:
    sql = "SELECT LENGTH('é'), CHAR_LENGTH('é'), MID('abc', 2, 1), 'it''s', 'a\\\\b'"
    assert run(sql) == [(2, 1, "b", "it's", "a\\b")]


def test_rollup_and_window_functions(run: Any) -> None:
    rollup = run("SELECT active, COUNT(*) FROM people GROUP BY active WITH ROLLUP")
    assert sorted(rollup, key=repr) == sorted([(0, 1), (1, 2), (None, 3)], key=repr)
    window = (
        "SELECT id, ROW_NUMBER() OVER (ORDER BY id DESC), SUM(id) OVER () FROM people ORDER BY id"
    )
    assert run(window) == [(1, 3, 6), (2, 2, 6), (3, 1, 6)]


# --- known differences ----------------------------------------------------------------------


def test_known_difference_string_comparisons_are_case_sensitive(run: Any) -> None:
    """MySQL (utf8mb4_0900_ai_ci) answers [(1,)] to both; the views compare bytes."""
    assert run("SELECT id FROM people WHERE name = 'ALICE'") == []
    assert run("SELECT id FROM people WHERE name LIKE 'A%'") == []
