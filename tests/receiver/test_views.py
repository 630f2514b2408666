"""Replicated views and stored functions answer like the source's: views created on a real
MariaDB (a column list, a join with an aggregate, a view over a view, unqualified tables,
ALTER VIEW and CREATE OR REPLACE VIEW) and stored functions (DECLARE with DEFAULT, SET of
local and user variables, RETURN; scalar subqueries, COUNT over no rows, LIMIT 1, calls of
other functions in a DEFAULT and in a subquery, RETURNS truncating, no arguments), called
from queries and from a view, are queried through the replica (Spark engine) and compared
with MariaDB's answers, column names and values, errors included."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pymysql
import pytest

from spark_replica.server.storage import configured_components
from tests.helpers.live_source import caught_up, following, recorded
from tests.helpers.mariadb import ROOT_PASSWORD as MARIADB_ROOT_PASSWORD
from tests.helpers.mariadb import MariaDB
from tests.helpers.server import connect, no_leaks_but_a_servers, running_server
from tests.helpers.source_compare import source_connection

pytestmark = pytest.mark.spark

WAIT = 120.0
SOURCE = (
    "DROP DATABASE IF EXISTS vshop",
    "CREATE DATABASE vshop",
    "CREATE TABLE vshop.items (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(8,2))",
    "CREATE TABLE vshop.orders (id INT PRIMARY KEY, item INT, qty INT)",
    "INSERT INTO vshop.items VALUES (1, 'apple', 0.50), (2, 'pear', 0.75), (3, 'fig', 2.00)",
    "INSERT INTO vshop.orders VALUES (1, 1, 4), (2, 2, 1), (3, 1, 2), (4, 3, 5)",
    "CREATE VIEW vshop.cheap (item_id, item_name) AS SELECT id, name FROM vshop.items "
    "WHERE price < 1",
    "USE vshop; CREATE VIEW sales AS SELECT i.name, SUM(o.qty) AS sold, SUM(o.qty * i.price) "
    "AS revenue FROM orders o JOIN items i ON i.id = o.item GROUP BY i.name",
    "CREATE VIEW vshop.top_sales AS SELECT name, revenue FROM vshop.sales WHERE revenue > 1",
    "CREATE VIEW vshop.later AS SELECT 1 AS one",
    "ALTER VIEW vshop.later AS SELECT id FROM vshop.orders WHERE qty > 1",
    "CREATE OR REPLACE VIEW vshop.cheap (item_id, item_name) AS SELECT id, name "
    "FROM vshop.items WHERE price <= 0.75",
    "INSERT INTO vshop.orders VALUES (5, 2, 3)",
    "INSERT INTO vshop.items VALUES (4, 'kiwi', 1.25)",
)
#: Stored functions, each sent as one statement (no DELIMITER: the client sends it whole).
FUNCTIONS = (
    "CREATE FUNCTION vshop.item_name(i INT) RETURNS VARCHAR(20) READS SQL DATA "
    "RETURN (SELECT name FROM items WHERE id = i)",
    "CREATE FUNCTION vshop.best_item() RETURNS INT READS SQL DATA BEGIN "
    "DECLARE best INT DEFAULT 0; "
    "SET best = (SELECT item FROM orders GROUP BY item ORDER BY SUM(qty) DESC LIMIT 1); "
    "RETURN best; END",
    "CREATE FUNCTION vshop.sold(i INT) RETURNS INT READS SQL DATA BEGIN "
    "DECLARE n INT; SET n = (SELECT COUNT(*) FROM orders WHERE item = i); "
    "SET @last_item = i; "
    "RETURN n * 10 + (SELECT SUM(qty) FROM orders WHERE item = i); END",
    "CREATE FUNCTION vshop.label(i INT) RETURNS CHAR(6) READS SQL DATA BEGIN "
    "DECLARE nm VARCHAR(20) DEFAULT item_name(i); RETURN CONCAT(UPPER(nm), '!'); END",
    "CREATE FUNCTION vshop.item_of_qty(q INT) RETURNS VARCHAR(20) READS SQL DATA "
    "RETURN (SELECT item_name(item) FROM orders WHERE qty = q LIMIT 1)",
    "CREATE FUNCTION vshop.branchy(i INT) RETURNS INT DETERMINISTIC BEGIN "
    "IF i > 1 THEN RETURN 1; END IF; RETURN 0; END",
    "CREATE VIEW vshop.item_report AS SELECT id, item_name(id) AS nm, sold(id) AS s, "
    "label(id) AS l FROM items",
)
QUERIES = (
    "SELECT * FROM vshop.cheap ORDER BY item_id",
    "SELECT * FROM vshop.sales ORDER BY name",
    "SELECT name, revenue FROM vshop.top_sales ORDER BY revenue DESC, name",
    "SELECT * FROM vshop.later ORDER BY id",
    "SELECT c.item_name, s.sold FROM vshop.cheap c JOIN vshop.sales s ON s.name = c.item_name "
    "ORDER BY 1",
    "SELECT vshop.later.id FROM vshop.later WHERE id > 2 ORDER BY 1",
    "SELECT * FROM vshop.item_report ORDER BY id",
    "SELECT id, vshop.item_name(id) AS n, vshop.label(id + 0) AS l FROM vshop.items ORDER BY id",
    "SELECT vshop.best_item() AS b, vshop.item_name(3) AS n",
    "SELECT o.id, vshop.item_of_qty(o.qty) AS t FROM vshop.orders o ORDER BY o.id",
    "SELECT id FROM vshop.items WHERE vshop.sold(id) > 10 ORDER BY id",
    "USE vshop; SELECT label(id) AS l, COUNT(*) AS c FROM items GROUP BY label(id) ORDER BY 1",
)


@pytest.fixture(autouse=True)
def no_thread_leaks() -> Iterator[None]:
    """The module's server keeps its query threads as long as it runs."""
    yield from no_leaks_but_a_servers()


@pytest.fixture(scope="module")
def replica(
    spark: Any, mariadb: MariaDB, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[int]:
    """The replica server (Spark engine, on the test run's SparkSession) with ``vshop``."""
    for statement in SOURCE:
        mariadb.sql(statement)
    with source_connection(mariadb) as conn, conn.cursor() as cursor:
        cursor.execute("USE vshop")
        for statement in FUNCTIONS:
            cursor.execute(statement)
    root = tmp_path_factory.mktemp("views")
    with running_server(root / "data", configured_components) as server:
        with following(server.port, mariadb, "csa") as cursor:
            caught_up(cursor, mariadb, WAIT)
            recorded(cursor, mariadb, WAIT)  # the commit point queries read
            # The server's query threads start here, with the module's server, not in a test.
            cursor.execute("SELECT COUNT(*) FROM vshop.orders")
            assert cursor.fetchone()[0] == 5
        yield server.port


def _answer(cursor: Any, query: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    *uses, query = query.split("; ")
    for use in uses:
        cursor.execute(use)
    cursor.execute(query)
    return [d[0] for d in cursor.description], [tuple(r) for r in cursor.fetchall()]


@pytest.mark.parametrize("query", QUERIES)
def test_views_answer_as_the_source(replica: int, mariadb: MariaDB, query: str) -> None:
    source = pymysql.connect(host=mariadb.host, port=mariadb.port, user="root",
                             password=MARIADB_ROOT_PASSWORD)  # fmt: skip
    try:
        with source.cursor() as theirs, connect(replica) as conn, conn.cursor() as ours:
            assert _answer(ours, query) == _answer(theirs, query)
    finally:
        source.close()


def test_a_wrong_number_of_arguments_is_the_sources_error(replica: int, mariadb: MariaDB) -> None:
    query = "SELECT vshop.item_name(1, 2)"
    with source_connection(mariadb) as source, source.cursor() as theirs:
        with pytest.raises(pymysql.err.OperationalError) as expected:
            theirs.execute(query)
    with connect(replica) as conn, conn.cursor() as ours:
        with pytest.raises(pymysql.err.OperationalError) as found:
            ours.execute(query)
    assert found.value.args == expected.value.args
    assert found.value.args[0] == 1318


def test_a_body_a_query_cannot_compute_is_refused_naming_it(replica: int) -> None:
    with connect(replica) as conn, conn.cursor() as cursor:
        with pytest.raises(pymysql.err.NotSupportedError) as refused:
            cursor.execute("SELECT vshop.branchy(2)")
    assert refused.value.args == (
        1235,
        "This version of MySQL doesn't yet support 'calling the stored function "
        "vshop.branchy() in a query, with IF in its body'",
    )
