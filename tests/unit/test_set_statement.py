"""SET of system and user variables: scopes, values, expressions, and what is not an assignment."""

from __future__ import annotations

import pytest

from spark_replica.applier_core.errors import ReplicaError
from spark_replica.applier_core.settings import DEFAULT
from spark_replica.sql_handlers.set_statement import Assignment, Expression, Scope, parse_set

SYNTAX = (
    "You have an error in your SQL syntax; check the manual that corresponds to your MySQL "
    "server version for the right syntax to use"
)


def near(text: str, line: int = 1) -> str:
    return f"{SYNTAX} near '{text}' at line {line}"


def one(sql: str) -> Assignment:
    assignments = parse_set(sql)
    assert assignments is not None
    assert len(assignments) == 1
    return assignments[0]


def summary(sql: str) -> list[tuple[Scope, bool, str, object]]:
    assignments = parse_set(sql)
    assert assignments is not None
    return [(a.scope, a.explicit_scope, a.name, a.value) for a in assignments]


# -- scopes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "scope", "explicit"),
    [
        ("SET replica_parallel_workers = 8", Scope.SESSION, False),
        ("SET GLOBAL replica_parallel_workers = 8", Scope.GLOBAL, True),
        ("SET SESSION replica_parallel_workers = 8", Scope.SESSION, True),
        ("SET LOCAL replica_parallel_workers = 8", Scope.SESSION, True),
        ("SET PERSIST replica_parallel_workers = 8", Scope.PERSIST, True),
        ("SET PERSIST_ONLY replica_parallel_workers = 8", Scope.PERSIST_ONLY, True),
        ("set global replica_parallel_workers = 8", Scope.GLOBAL, True),
        ("SET @@global.replica_parallel_workers = 8", Scope.GLOBAL, True),
        ("SET @@GLOBAL.replica_parallel_workers = 8", Scope.GLOBAL, True),
        ("SET @@session.replica_parallel_workers = 8", Scope.SESSION, True),
        ("SET @@local.replica_parallel_workers = 8", Scope.SESSION, True),
        ("SET @@persist.replica_parallel_workers = 8", Scope.PERSIST, True),
        ("SET @@persist_only.replica_parallel_workers = 8", Scope.PERSIST_ONLY, True),
        ("SET @@replica_parallel_workers = 8", Scope.SESSION, False),
    ],
)
def test_scopes(sql: str, scope: Scope, explicit: bool) -> None:
    assert summary(sql) == [(scope, explicit, "replica_parallel_workers", 8)]


def test_user_variable() -> None:
    assert summary("SET @u = 5") == [(Scope.USER, True, "u", 5)]
    assert summary("SET @My_Var = 'x'") == [(Scope.USER, True, "my_var", "x")]


@pytest.mark.parametrize("sql", ["SET @u := 5", "SET @u:=5", "SET x := 5"])
def test_colon_equals(sql: str) -> None:
    assert one(sql).value == 5


def test_names_are_lower_cased_and_may_be_quoted() -> None:
    assert one("SET GLOBAL Replica_Parallel_Workers = 1").name == "replica_parallel_workers"
    assert one("SET `Weird Name` = 1").name == "weird name"
    assert one("SET @'quoted' = 1").name == "quoted"


# -- several assignments ----------------------------------------------------------------------


def test_multiple_assignments_with_their_own_scopes() -> None:
    assert summary("SET a = 1, GLOBAL b = 2, @c = 3, @@session.d = 4") == [
        (Scope.SESSION, False, "a", 1),
        (Scope.GLOBAL, True, "b", 2),
        (Scope.USER, True, "c", 3),
        (Scope.SESSION, True, "d", 4),
    ]


def test_scope_keyword_carries_to_following_assignments() -> None:
    """MySQL manual (SET syntax): the most recent scope keyword applies to later assignments."""
    assert [a.scope for a in parse_set("SET GLOBAL a = 1, b = 2") or []] == [
        Scope.GLOBAL,
        Scope.GLOBAL,
    ]
    assert [a.scope for a in parse_set("SET GLOBAL a = 1, SESSION b = 2, c = 3") or []] == [
        Scope.GLOBAL,
        Scope.SESSION,
        Scope.SESSION,
    ]
    assert [a.scope for a in parse_set("SET PERSIST a = 1, b = 2") or []] == [
        Scope.PERSIST,
        Scope.PERSIST,
    ]


def test_no_scope_keyword_nothing_carries() -> None:
    assert [a.scope for a in parse_set("SET @@global.a = 1, b = 2") or []] == [
        Scope.GLOBAL,
        Scope.SESSION,
    ]


def test_scope_keyword_carries_over_a_user_variable() -> None:
    assert [a.scope for a in parse_set("SET GLOBAL a = 1, @u = 2, b = 3") or []] == [
        Scope.GLOBAL,
        Scope.USER,
        Scope.GLOBAL,
    ]


# -- values -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("8", 8),
        ("-5", -5),
        ("- 5", -5),
        ("0x1f", 31),
        ("1.5", 1.5),
        ("-1.5", -1.5),
        ("1e3", 1000.0),
        ("'text'", "text"),
        ('"dq"', "dq"),
        ("''", ""),
        ("ON", "ON"),
        ("on", "ON"),
        ("off", "OFF"),
        ("LOGICAL_CLOCK", "LOGICAL_CLOCK"),
        ("TRUE", True),
        ("false", False),
        ("NULL", None),
        ("DEFAULT", DEFAULT),
        ("default", DEFAULT),
    ],
)
def test_literal_values(text: str, value: object) -> None:
    assert one(f"SET GLOBAL x = {text}").value == value


def test_integer_and_float_types() -> None:
    assert type(one("SET x = 8").value) is int
    assert type(one("SET x = 8.0").value) is float
    assert one("SET x = DEFAULT").value is DEFAULT


@pytest.mark.parametrize(
    ("text", "expression"),
    [
        ("1 + 2", "1 + 2"),
        ("@@sql_mode", "@@sql_mode"),
        ("-abc", "-abc"),
        ("(1, 2)", "(1, 2)"),
        ("CONCAT('a', ',b')", "CONCAT('a', ',b')"),
    ],
)
def test_expressions_are_kept_as_text(text: str, expression: str) -> None:
    assert one(f"SET x = {text}").value == Expression(expression)


def test_connector_j_statement() -> None:
    sql = "set autocommit=1, sql_mode = concat(@@sql_mode,',STRICT_TRANS_TABLES')"
    assert summary(sql) == [
        (Scope.SESSION, False, "autocommit", 1),
        (
            Scope.SESSION,
            False,
            "sql_mode",
            Expression("concat(@@sql_mode,',STRICT_TRANS_TABLES')"),
        ),
    ]


def test_comma_inside_parentheses_does_not_split() -> None:
    assert summary("SET a = f(1, 2), b = 3") == [
        (Scope.SESSION, False, "a", Expression("f(1, 2)")),
        (Scope.SESSION, False, "b", 3),
    ]


@pytest.mark.parametrize(
    "sql",
    ["SET x = 1;", "SET x = 1 ;  ", "/* c */ SET x = 1", "SET x = 1 # c", "SET x = 1 -- c"],
)
def test_comments_and_terminator(sql: str) -> None:
    assert summary(sql) == [(Scope.SESSION, False, "x", 1)]


# -- not assignments --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "SET NAMES utf8mb4",
        "SET NAMES 'utf8mb4' COLLATE 'utf8mb4_general_ci'",
        "set names utf8",
        "SET CHARACTER SET utf8mb4",
        "SET CHARSET utf8mb4",
        "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
        "SET GLOBAL TRANSACTION READ WRITE",
        "SET TRANSACTION READ ONLY",
        "SET PASSWORD = 'x'",
        "SET ROLE ALL",
        "SELECT 1",
        "SHOW VARIABLES",
        "START REPLICA",
        "",
    ],
)
def test_other_statements_return_none(sql: str) -> None:
    assert parse_set(sql) is None


# -- syntax errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "rest"),
    [
        ("SET", ""),
        ("SET x", ""),
        ("SET x =", ""),
        ("SET x 1", "1"),
        ("SET GLOBAL = 1", "= 1"),
        ("SET x = 1,", ""),
        ("SET x = 1; y", "y"),
        ("SET 5 = 1", "5 = 1"),
        ("SET x = 1,\n  = 2", "= 2"),
    ],
)
def test_syntax_errors_are_1064(sql: str, rest: str) -> None:
    with pytest.raises(ReplicaError) as caught:
        parse_set(sql)
    line = 2 if "\n" in sql else 1
    assert (caught.value.code, caught.value.message) == (1064, near(rest, line))


@pytest.mark.parametrize("sql", ["SET @@", "SET a = 1, @@"])
def test_dangling_at_at_is_1064(sql: str) -> None:
    with pytest.raises(ReplicaError) as caught:
        parse_set(sql)
    assert (caught.value.code, caught.value.message) == (1064, near(""))
