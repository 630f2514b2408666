"""Grouped queries selecting columns they do not group by (sakila's views do): the columns
are read as ANY_VALUE(), MySQL's meaning without ONLY_FULL_GROUP_BY; grouped columns,
aggregates, select-list names in HAVING and ORDER BY, and subqueries are left alone."""

from __future__ import annotations

import pytest
import sqlglot

from spark_replica.applier_core.storage import TableRef
from spark_replica.sql_handlers.query.transpile import to_spark_sql

TABLES = {TableRef("s", "film"): "v1", TableRef("s", "t"): "v3"}


def _sql(query: str) -> str:
    return to_spark_sql(sqlglot.parse_one(query, read="mysql"), database="s",
                        resolve=TABLES.get).sql  # fmt: skip


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("SELECT f.film_id, f.title, COUNT(*) AS n FROM film f GROUP BY f.film_id "
         "ORDER BY n, title",
         "SELECT `f`.`film_id` AS `film_id`, ANY_VALUE(`f`.`title`) AS `title`, COUNT(*) AS `n` "
         "FROM `v1` AS `f` GROUP BY `f`.`film_id` ORDER BY `n`, `title`"),
        ("SELECT title, SUM(x) AS total FROM film GROUP BY 1 HAVING total > 1",
         "SELECT `title` AS `title`, SUM(`x`) AS `total` FROM `v1` AS `film` GROUP BY 1 "
         "HAVING `total` > 1"),
        ("SELECT a, b FROM t GROUP BY a WITH ROLLUP",
         "SELECT `a` AS `a`, ANY_VALUE(`b`) AS `b` FROM `v3` AS `t` GROUP BY `a` WITH ROLLUP"),
        ("SELECT a FROM t WHERE b > (SELECT MAX(b) FROM t) GROUP BY a",
         "SELECT `a` AS `a` FROM `v3` AS `t` WHERE `b` > (SELECT MAX(`b`) FROM `v3` AS `t`) "
         "GROUP BY `a`"),
        ("SELECT a, b FROM t", "SELECT `a` AS `a`, `b` AS `b` FROM `v3` AS `t`"),
    ],
)  # fmt: skip
def test_ungrouped_columns_are_any_value(query: str, expected: str) -> None:
    assert _sql(query) == expected
