"""Account statements applied by the engine to the replicated accounts it keeps with its
catalog: committed with the transaction, all of a statement or none of it, with MySQL's
errors for what the source could not have run on the same accounts. Both engines (the Spark
engine also records them: tests/unit/storage/spark/test_engine_durability.py)."""

from __future__ import annotations

import pytest

from spark_replica.applier_core.storage import StorageEngine
from spark_replica.applier_core.storage.accounts import AccountName, GrantLevel, show_grants
from spark_replica.applier_core.storage.accounts.passwords import native_hash
from tests.unit.storage.test_engine_behaviour import ddl, ddl_error

ALICE = AccountName("alice", "%")


@pytest.fixture
def db(engine: StorageEngine) -> StorageEngine:
    ddl(engine, "CREATE DATABASE shop", database=None)
    return engine


def _error(engine: StorageEngine, statement: str) -> tuple[int, str]:
    error = ddl_error(engine, statement, "shop")
    return error.code, error.message


def test_users_roles_and_grants_change_with_each_committed_statement(db: StorageEngine) -> None:
    ddl(
        db,
        "CREATE USER 'alice'@'%' IDENTIFIED BY 'alice-pw'",
        "CREATE ROLE reader",
        "GRANT SELECT ON shop.items TO 'alice'@'%'",
        "GRANT SELECT ON shop.* TO reader",
        "GRANT reader TO alice",
        "SET DEFAULT ROLE reader FOR alice",
        "GRANT SELECT (id), INSERT (id, name) ON shop.secret TO alice WITH GRANT OPTION",
        database="shop",
    )
    alice = db.accounts()[ALICE]
    assert (alice.plugin, alice.auth_string) == ("mysql_native_password", native_hash("alice-pw"))
    assert alice.default_roles == (AccountName("reader", "%"),)
    assert show_grants(alice) == [
        "GRANT USAGE ON *.* TO `alice`@`%`",
        "GRANT SELECT ON `shop`.`items` TO `alice`@`%`",
        "GRANT INSERT (`id`, `name`), SELECT (`id`) ON `shop`.`secret` TO `alice`@`%` "
        "WITH GRANT OPTION",
        "GRANT `reader`@`%` TO `alice`@`%`",
    ]
    ddl(
        db,
        "REVOKE SELECT ON shop.items FROM alice",
        "RENAME USER alice TO al@'10.%'",
        "SET PASSWORD FOR al@'10.%' = PASSWORD('new')",
        database="shop",
    )
    renamed = db.accounts()[AccountName("al", "10.%")]
    assert ALICE not in db.accounts()
    assert renamed.auth_string == native_hash("new")
    assert GrantLevel("shop", "items") not in renamed.privileges
    ddl(db, "DROP ROLE reader", database="shop")  # revoked from everyone who had it
    assert db.accounts()[renamed.name].roles == frozenset()
    assert db.accounts()[renamed.name].default_roles == ()
    ddl(
        db,
        "REVOKE ALL PRIVILEGES, GRANT OPTION FROM al@'10.%'",
        "DROP USER al@'10.%'",
        database="shop",
    )
    assert dict(db.accounts()) == {}


@pytest.mark.parametrize(
    ("setup", "statement", "code", "message"),
    [
        ("CREATE USER a", "CREATE USER a", 1396, "Operation CREATE USER failed for 'a'@'%'"),
        ("CREATE ROLE r", "CREATE ROLE r", 1396, "Operation CREATE ROLE failed for 'r'@'%'"),
        ("", "DROP USER a", 1396, "Operation DROP USER failed for 'a'@'%'"),
        ("", "ALTER USER a IDENTIFIED BY 'x'", 1396, "Operation ALTER USER failed for 'a'@'%'"),
        (
            "CREATE USER a, b",
            "RENAME USER a TO b",
            1396,
            "Operation RENAME USER failed for 'a'@'%'",
        ),
        (
            "",
            "SET PASSWORD FOR a = PASSWORD('x')",
            1133,
            "Can't find any matching row in the user table",
        ),
        (
            "",
            "GRANT SELECT ON shop.* TO a",
            1410,
            "You are not allowed to create a user with GRANT",
        ),
        (
            "CREATE USER a",
            "REVOKE SELECT ON shop.* FROM a",
            1141,
            "There is no such grant defined for user 'a' on host '%'",
        ),
        (
            "CREATE USER a",
            "REVOKE SELECT ON shop.t FROM a",
            1147,
            "There is no such grant defined for user 'a' on host '%' on table 't'",
        ),
        ("CREATE USER a", "GRANT r TO a", 3523, "Unknown authorization ID `r`@`%`"),
        (
            "CREATE USER a; CREATE ROLE r",
            "SET DEFAULT ROLE r TO a",
            3530,
            "`r`@`%` is not granted to `a`@`%`",
        ),
    ],
)
def test_mysql_errors_for_statements_the_accounts_cannot_take(
    db: StorageEngine, setup: str, statement: str, code: int, message: str
) -> None:
    for step in filter(None, setup.split("; ")):
        ddl(db, step, database="shop")
    before = dict(db.accounts())
    assert _error(db, statement) == (code, message)
    assert dict(db.accounts()) == before


def test_a_statement_is_applied_whole_or_not_at_all(db: StorageEngine) -> None:
    ddl(db, "CREATE USER b", database="shop")
    assert _error(db, "CREATE USER a, b")[0] == 1396
    assert list(db.accounts()) == [AccountName("b", "%")]
    ddl(db, "CREATE USER IF NOT EXISTS a, b", "DROP USER IF EXISTS b, nobody", database="shop")
    assert list(db.accounts()) == [AccountName("a", "%")]


def test_accounts_change_only_when_the_transaction_commits(db: StorageEngine) -> None:
    session = db.session("rolled-back")
    from tests.unit.storage.test_engine_behaviour import trx

    session.begin(trx())
    session.apply_ddl("CREATE USER ghost", "shop")
    assert dict(db.accounts()) == {}
    session.rollback()
    assert dict(db.accounts()) == {}
