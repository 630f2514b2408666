"""Stored functions in queries: which bodies a query can compute, and the MySQL errors for the
rest (the answers themselves are compared with MariaDB's in tests/receiver/test_views.py)."""

from __future__ import annotations

import pytest
import sqlglot

from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.storage.objects import ObjectKind, ObjectRef, StoredObject
from spark_replica.sql_handlers.query.routine_bodies import function_body
from spark_replica.sql_handlers.query.routines import calls_kept_function
from spark_replica.sql_handlers.query.transpile import to_spark_sql


def _function(name: str, rest: str) -> StoredObject:
    return StoredObject(
        ObjectRef(ObjectKind.FUNCTION, "shop", name), f"CREATE FUNCTION shop.{name}{rest}"
    )


def _transpiled(query: str, *functions: StoredObject) -> str:
    kept = {(f.ref.schema, f.ref.name.casefold()): f for f in functions}
    tree = sqlglot.parse_one(query, read="mysql")
    resolve = lambda ref: f"t_{ref.table}"  # noqa: E731
    return to_spark_sql(tree, database="shop", resolve=resolve, functions=kept.get).sql


def test_a_body_of_assignments_and_one_return_is_read_as_steps() -> None:
    body = function_body(_function(
        "f", "(`Id` INT, b CHAR(2)) RETURNS VARCHAR(5) READS SQL DATA lbl: BEGIN "
        "DECLARE x, y INT DEFAULT 1; SET x = id + 1, @u := b; RETURN CONCAT(x, y, @u); END lbl",
    ))  # fmt: skip
    assert body.params == (("id", "INT"), ("b", "CHAR(2)"))
    assert body.returns == "VARCHAR(5)"
    assert [(s.name, s.type) for s in body.steps] == [
        ("x", "INT"), ("y", "INT"), ("x", ""), ("@u", "")]  # fmt: skip
    assert body.result.sql("mysql") == "CONCAT(x, y, @u)"


@pytest.mark.parametrize(
    ("rest", "what"),
    [
        ("(i INT) RETURNS INT BEGIN IF i > 1 THEN RETURN 1; END IF; RETURN 0; END",
         "IF in its body"),
        ("(i INT) RETURNS INT BEGIN DECLARE c CURSOR FOR SELECT 1; RETURN 0; END",
         "a DECLARE of no variable in its body"),
        ("(i INT) RETURNS INT BEGIN SELECT 1 INTO @x; RETURN 0; END", "SELECT in its body"),
        ("(i INT) RETURNS INT BEGIN SET @@sql_mode = ''; RETURN 0; END",
         "SET @@sql_mode = '' in its body"),
        ("(i INT) RETURNS INT BEGIN RETURN 0; SET i = 1; END", "SET after RETURN"),
        ("(i INT) RETURNS INT BEGIN SET i = 1; END", "no RETURN in its body"),
        ("(i INT) RETURNS INT RETURN (SELECT a FROM t WHERE a > i)",
         "the correlated condition a > `i`"),
        ("(i INT) RETURNS INT RETURN (SELECT a FROM t WHERE a = i ORDER BY a LIMIT 1)",
         "a correlated subquery with ORDER"),
    ],
)  # fmt: skip
def test_what_a_query_cannot_compute_is_refused_naming_it(rest: str, what: str) -> None:
    with pytest.raises(ReplicaError) as refused:
        _transpiled("SELECT shop.f(1)", _function("f", rest))
    assert refused.value.code == ErrorCode.NOT_SUPPORTED_YET
    assert refused.value.message == (
        "This version of MySQL doesn't yet support 'calling the stored function shop.f() in "
        f"a query, with {what}'"
    )


def test_a_wrong_number_of_arguments_is_1318() -> None:
    f = _function("f", "(a INT, b INT) RETURNS INT RETURN a + b")
    with pytest.raises(ReplicaError) as wrong:
        _transpiled("SELECT f(1) FROM t", f)
    assert (wrong.value.code, wrong.value.message) == (
        ErrorCode.SP_WRONG_NO_OF_ARGS,
        "Incorrect number of arguments for FUNCTION shop.f; expected 2, got 1",
    )


def test_a_call_becomes_a_join_computed_once_per_distinct_argument() -> None:
    f = _function("f", "(i INT) RETURNS INT READS SQL DATA RETURN (SELECT MAX(a) FROM t "
                       "WHERE t.k = i)")  # fmt: skip
    sql = _transpiled("SELECT id, f(id) AS m FROM u", f)
    assert "SELECT DISTINCT `id` AS `__p0` FROM `t_u` AS `u`" in sql
    assert "LEFT JOIN (SELECT `t`.`k` AS `__k0`, MAX(`a`) AS `__v` FROM `t_t` AS `t` " in sql
    assert sql.endswith("AS `__f1` ON `__f1`.`__p0` IS NOT DISTINCT FROM `id`")
    assert "SCALAR" not in sql and "LIMIT" not in sql


def test_only_calls_of_kept_functions_send_a_query_to_spark() -> None:
    f = _function("f", "() RETURNS INT RETURN 1")
    kept = {("shop", "f"): f}.get
    assert calls_kept_function(sqlglot.parse_one("SELECT f()", read="mysql"), "shop", kept)
    assert calls_kept_function(sqlglot.parse_one("SELECT shop.f()", read="mysql"), None, kept)
    assert not calls_kept_function(sqlglot.parse_one("SELECT g()", read="mysql"), "shop", kept)
    assert not calls_kept_function(sqlglot.parse_one("SELECT f()", read="mysql"), None, kept)
