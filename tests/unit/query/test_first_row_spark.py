"""A scalar subquery taking its first row (``ORDER BY ... LIMIT 1``, ``LIMIT 1``) answers as
MySQL does on the replica's Spark session, also when its correlation compares an INT column
with a BIGINT one, the shape Spark's own LIMIT decorrelation answered wrong (999 wrong rows
of 1,000 for the ORDER BY form, 87 for the plain one, without an error). The expected values
are computed here from the same rows, as MySQL defines them."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import sqlglot

from spark_replica.applier_core.storage import TableRef
from spark_replica.sql_handlers.query.transpile import to_spark_sql

pytestmark = pytest.mark.spark

PEOPLE = [(n, n) for n in range(1, 1001)]  # id INT, wide_id BIGINT: the same numbers
#: Each person's visits: 1 to 3, on distinct days, at most one of them with no day (so no
#: two rows tie in either order).
VISITS = [
    (person, datetime.date(2000, 1, 1) + datetime.timedelta(days=(person * 7 + k * 13) % 900)
     if (person + k) % 11 else None, f"p{person}-{k}")
    for person in range(1, 1001)
    for k in range(1 + person % 3)
]  # fmt: skip


@pytest.fixture(scope="module")
def run(spark: Any) -> Iterator[Any]:
    suffix = uuid.uuid4().hex[:8]
    people, visits = f"__first_people_{suffix}", f"__first_visits_{suffix}"
    spark.createDataFrame(PEOPLE, "id INT, wide_id BIGINT").createOrReplaceTempView(people)
    spark.createDataFrame(VISITS, "person INT, day DATE, page STRING").createOrReplaceTempView(
        visits
    )
    names = {TableRef("shop", "people"): people, TableRef("shop", "visits"): visits}

    def _run(sql: str) -> dict[int, object]:
        query = to_spark_sql(sqlglot.parse_one(sql, read="mysql"), database="shop",
                             resolve=names.get)  # fmt: skip
        return {row[0]: row[1] for row in spark.sql(query.sql).collect()}

    yield _run
    spark.catalog.dropTempView(people)
    spark.catalog.dropTempView(visits)


def _expected(descending: bool) -> dict[int, object]:
    """MySQL's first page per person by day: NULL days first ascending, last descending."""
    found: dict[int, object] = {}
    for person in range(1, 1001):
        mine = [(day, page) for p, day, page in VISITS if p == person]
        known = sorted((v for v in mine if v[0] is not None), reverse=descending)
        unknown = [v for v in mine if v[0] is None]
        ordered = known + unknown if descending else unknown + known
        found[person] = ordered[0][1]
    return found


@pytest.mark.parametrize("column", ["id", "wide_id"])
@pytest.mark.parametrize("direction", ["DESC", "ASC"])
def test_the_first_row_by_an_order(run: Any, column: str, direction: str) -> None:
    found = run(
        f"SELECT p.id, (SELECT v.page FROM visits v WHERE v.person = p.{column} "
        f"ORDER BY v.day {direction} LIMIT 1) FROM people p"
    )
    expected = _expected(direction == "DESC")
    assert [p for p in expected if found[p] != expected[p]] == []


@pytest.mark.parametrize("column", ["id", "wide_id"])
def test_any_first_row(run: Any, column: str) -> None:
    found = run(
        f"SELECT p.id, (SELECT v.page FROM visits v WHERE v.person = p.{column} LIMIT 1) "
        "FROM people p"
    )
    pages = {p: {page for q, _, page in VISITS if q == p} for p in range(1, 1001)}
    assert [p for p in pages if found[p] not in pages[p]] == []
