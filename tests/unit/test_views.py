"""SELECT over replicated views: a view's reference becomes its query as a derived table,
its unqualified tables in the view's database; views over views; MySQL's 1356 and 1462."""

from __future__ import annotations

import pytest
import sqlglot

from spark_replica.applier_core.errors import ReplicaError
from spark_replica.applier_core.storage import TableRef
from spark_replica.applier_core.storage.objects import (
    CreateObject,
    ObjectKind,
    ObjectRef,
    StoredObject,
    parse_object_statement,
)
from spark_replica.sql_handlers.query.transpile import to_spark_sql

TABLES = {TableRef("shop", "orders"): "__v1", TableRef("shop", "items"): "__v2"}


def _view(statement: str, database: str = "shop") -> StoredObject:
    operation = parse_object_statement(statement, database)
    assert isinstance(operation, CreateObject)
    return operation.stored


def _sql(query: str, *views: StoredObject, database: str = "other") -> str:
    known = {TableRef(v.ref.schema, v.ref.name): v for v in views}
    tree = sqlglot.parse_one(query, read="mysql")
    return to_spark_sql(tree, database=database, resolve=TABLES.get, views=known.get).sql


def test_a_view_is_its_query_over_its_own_database() -> None:
    big = _view("CREATE VIEW big (id, total) AS SELECT id, qty * price FROM orders WHERE qty > 1")
    sql = _sql("SELECT total FROM shop.big b WHERE id = 3", big)
    assert "`__v1` AS `orders`" in sql
    assert ") AS `b`(`id`, `total`)" in sql


def test_views_over_views_and_qualified_columns() -> None:
    base = _view("CREATE VIEW base AS SELECT id, COUNT(*) FROM items GROUP BY id")
    top = _view("CREATE VIEW top AS SELECT * FROM base WHERE id > 1")
    sql = _sql("SELECT shop.top.id FROM shop.top", base, top)
    assert "`__v2` AS `items`" in sql and "`COUNT(*)`" in sql
    assert "`top`.`id`" in sql and "`shop`.`top`" not in sql


def test_a_view_reaching_itself_is_1462() -> None:
    loop = _view("CREATE VIEW loop1 AS SELECT * FROM loop2")
    back = _view("CREATE VIEW loop2 AS SELECT * FROM loop1")
    with pytest.raises(ReplicaError) as caught:
        _sql("SELECT * FROM shop.loop1", loop, back)
    assert (caught.value.code, caught.value.message) == (
        1462, "`shop`.`loop1` contains view recursion")  # fmt: skip


def test_a_view_over_a_dropped_table_is_1356() -> None:
    stale = _view("CREATE VIEW stale AS SELECT * FROM gone")
    with pytest.raises(ReplicaError) as caught:
        _sql("SELECT * FROM shop.stale", stale)
    assert caught.value.code == 1356
    assert caught.value.message == (
        "View 'shop.stale' references invalid table(s) or column(s) or function(s) or "
        "definer/invoker of view lack rights to use them"
    )


def test_a_view_calls_stored_functions_of_its_own_database() -> None:
    """The view's call names the view's database, wherever the view is read; a function
    whose body a query cannot compute is refused naming it."""
    calls = _view("CREATE VIEW calls AS SELECT id, next_id(id) AS n FROM orders")
    next_id = StoredObject(ObjectRef(ObjectKind.FUNCTION, "shop", "next_id"),
                           "CREATE FUNCTION next_id(i INT) RETURNS INT RETURN i + 1")  # fmt: skip
    tree = sqlglot.parse_one("SELECT * FROM shop.calls", read="mysql")
    sql = to_spark_sql(tree, database="other", resolve=TABLES.get,
                       views={TableRef("shop", "calls"): calls}.get,
                       functions={("shop", "next_id"): next_id}.get).sql  # fmt: skip
    assert "LEFT JOIN (SELECT `__s`.`__p0`, CAST(CAST((`__s`.`i` + 1) AS DECIMAL(20, 0)) " in sql
    branchy = StoredObject(ObjectRef(ObjectKind.FUNCTION, "shop", "next_id"),
                           "CREATE FUNCTION next_id(i INT) RETURNS INT BEGIN "
                           "WHILE i < 0 DO SET i = i + 1; END WHILE; RETURN i; END")  # fmt: skip
    with pytest.raises(ReplicaError) as caught:
        to_spark_sql(tree, database="other", resolve=TABLES.get,
                     views={TableRef("shop", "calls"): calls}.get,
                     functions={("shop", "next_id"): branchy}.get)  # fmt: skip
    assert (caught.value.code, caught.value.message) == (
        1235, "This version of MySQL doesn't yet support 'calling the stored function "
        "shop.next_id() in a query, with WHILE in its body'")  # fmt: skip
