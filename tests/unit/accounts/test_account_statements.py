"""Account statements as MySQL 8 and MariaDB write them to the binary log, read into
operations: hashes kept as logged, clear passwords (MariaDB logs them) hashed, clauses that
do not decide logins or reads accepted, forms the accounts cannot hold refused with 1235, and
secrets masked in every text an error shows."""

from __future__ import annotations

import pytest

from spark_replica.applier_core.storage import EngineError
from spark_replica.applier_core.storage.accounts import (
    AccountName,
    GrantLevel,
    is_account_statement,
    parse_account_statement,
    redacted,
)
from spark_replica.applier_core.storage.accounts.operations import (
    DATABASE_ALL,
    AlterAccount,
    Authentication,
    CreateAccount,
    DropAccount,
    GrantPrivileges,
    GrantRoles,
    ProxyGrant,
    RenameAccount,
    RevokePrivileges,
    RevokeRoles,
    SetDefaultRoles,
)
from spark_replica.applier_core.storage.accounts.passwords import (
    native_hash,
    sha2_hash,
    sha2_matches,
)

ALICE = AccountName("alice", "%")
BOB = AccountName("bob", "localhost")
READER = AccountName("reader", "%")
#: A caching_sha2_password hash as MySQL 8 logs it (salt and digest from sha2_hash).
SHA2 = sha2_hash("s3cret", b"abcdefghij0123456789")


def parse(statement: str, database: str | None = "shop") -> tuple[object, ...]:
    return parse_account_statement(statement, database)


def test_mariadb_create_user_with_a_clear_password_keeps_only_the_native_hash() -> None:
    (op,) = parse("CREATE USER 'alice'@'%' IDENTIFIED BY 'alice-pw'")
    assert op == CreateAccount(
        ALICE, Authentication("mysql_native_password", native_hash("alice-pw"))
    )
    assert "alice-pw" not in repr(op)


NATIVE_PW = "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"  # native_hash("password")


@pytest.mark.parametrize(
    "statement",
    [
        "CREATE USER bob@localhost IDENTIFIED VIA mysql_native_password USING PASSWORD('password')",
        f"CREATE USER bob@localhost IDENTIFIED BY PASSWORD '{NATIVE_PW}'",
        f"CREATE USER `bob`@`localhost` IDENTIFIED WITH mysql_native_password AS '{NATIVE_PW}'",
        "CREATE USER 'bob'@'LocalHost' IDENTIFIED WITH 'mysql_native_password' BY 'password' "
        "REQUIRE NONE PASSWORD EXPIRE DEFAULT ACCOUNT UNLOCK PASSWORD HISTORY DEFAULT "
        "PASSWORD REUSE INTERVAL DEFAULT PASSWORD REQUIRE CURRENT DEFAULT COMMENT 'x'",
    ],
)
def test_native_password_forms_give_the_same_hash(statement: str) -> None:
    (op,) = parse(statement)
    assert isinstance(op, CreateAccount)
    assert (op.name, op.auth) == (BOB, Authentication("mysql_native_password", NATIVE_PW))


def test_mysql_caching_sha2_hash_is_kept_as_logged_in_quotes_or_hex() -> None:
    quoted = SHA2.replace("\\", "\\\\").replace("'", "\\'")
    (op,) = parse(
        f"CREATE USER 'u'@'%' IDENTIFIED WITH 'caching_sha2_password' AS '{quoted}' "
        "REQUIRE NONE PASSWORD EXPIRE DEFAULT ACCOUNT LOCK"
    )
    assert op == CreateAccount(
        AccountName("u", "%"), Authentication("caching_sha2_password", SHA2), locked=True
    )
    (hexed,) = parse(
        "ALTER USER u IDENTIFIED WITH caching_sha2_password AS 0x" + SHA2.encode("latin-1").hex()
    )
    assert hexed == AlterAccount(
        AccountName("u", "%"), auth=Authentication("caching_sha2_password", SHA2)
    )
    assert sha2_matches(SHA2, b"s3cret") and not sha2_matches(SHA2, b"other")


def test_several_accounts_in_one_statement() -> None:
    ops = parse("CREATE USER IF NOT EXISTS a, b@'10.0.0.%' IDENTIFIED BY 'x' DEFAULT ROLE reader")
    assert [
        (o.name, o.if_not_exists, o.default_roles)
        for o in ops  # type: ignore[attr-defined]
    ] == [(AccountName("a", "%"), True, (READER,)), (AccountName("b", "10.0.0.%"), True, (READER,))]
    assert parse("DROP USER IF EXISTS carl, 'nobody'@'h'") == (
        DropAccount(AccountName("carl", "%"), if_exists=True),
        DropAccount(AccountName("nobody", "h"), if_exists=True),
    )
    assert parse("RENAME USER carol TO carl@'%', x@y TO z") == (
        RenameAccount(AccountName("carol", "%"), AccountName("carl", "%")),
        RenameAccount(AccountName("x", "y"), AccountName("z", "%")),
    )


def test_roles() -> None:
    assert parse("CREATE ROLE reader") == (CreateAccount(READER, role=True),)
    assert parse("CREATE OR REPLACE ROLE reader") == (
        CreateAccount(READER, role=True, replace=True),
    )
    assert parse("DROP ROLE IF EXISTS reader") == (DropAccount(READER, True, True),)
    assert parse("GRANT reader, 'w'@'%' TO alice, bob@localhost WITH ADMIN OPTION") == (
        GrantRoles((READER, AccountName("w", "%")), ALICE),
        GrantRoles((READER, AccountName("w", "%")), BOB),
    )
    assert parse("REVOKE reader FROM alice") == (RevokeRoles((READER,), ALICE),)
    assert parse("SET DEFAULT ROLE 'reader' FOR 'alice'@'%'") == (
        SetDefaultRoles(ALICE, (READER,)),
    )
    assert parse("SET DEFAULT ROLE ALL TO alice, bob@localhost") == (
        SetDefaultRoles(ALICE, None),
        SetDefaultRoles(BOB, None),
    )
    assert parse("SET DEFAULT ROLE NONE TO alice") == (SetDefaultRoles(ALICE, ()),)
    assert parse("ALTER USER alice DEFAULT ROLE reader") == (
        AlterAccount(ALICE, default_roles=(READER,)),
    )


def test_grants_at_every_level() -> None:
    (glob,) = parse("GRANT SELECT ON *.* TO carol")
    assert glob == GrantPrivileges(
        AccountName("carol", "%"), ((GrantLevel(), frozenset({"SELECT"})),)
    )
    (db,) = parse("GRANT SELECT, INSERT ON shop.* TO bob@localhost WITH GRANT OPTION")
    assert isinstance(db, GrantPrivileges)
    assert db.privileges == (
        (GrantLevel("shop"), frozenset({"SELECT", "INSERT"})),
        (GrantLevel("shop"), frozenset({"GRANT OPTION"})),
    )
    (table,) = parse("GRANT SELECT ON items TO alice")  # the default database
    assert isinstance(table, GrantPrivileges)
    assert table.privileges == ((GrantLevel("shop", "items"), frozenset({"SELECT"})),)
    (columns,) = parse("GRANT SELECT (id, Name), UPDATE (id) ON `shop`.`secret` TO alice")
    assert isinstance(columns, GrantPrivileges)
    assert dict(columns.privileges) == {
        GrantLevel("shop", "secret", "id"): frozenset({"SELECT", "UPDATE"}),
        GrantLevel("shop", "secret", "name"): frozenset({"SELECT"}),
    }
    (everything,) = parse("GRANT ALL PRIVILEGES ON * TO dave")
    assert isinstance(everything, GrantPrivileges)
    assert everything.privileges == ((GrantLevel("shop"), DATABASE_ALL),)
    (routine,) = parse("GRANT EXECUTE ON PROCEDURE shop.p TO dave")
    assert isinstance(routine, GrantPrivileges)
    assert routine.privileges == (
        (GrantLevel("shop", "p", "", "PROCEDURE"), frozenset({"EXECUTE"})),
    )
    (mariadb,) = parse(
        "GRANT USAGE ON *.* TO erin@'10.0.0.%' IDENTIFIED BY 'x' "
        "REQUIRE SSL WITH MAX_QUERIES_PER_HOUR 5"
    )
    assert mariadb == GrantPrivileges(
        AccountName("erin", "10.0.0.%"),
        (),
        Authentication("mysql_native_password", native_hash("x")),
    )


def test_revokes() -> None:
    assert parse("REVOKE INSERT ON shop.* FROM bob@localhost") == (
        RevokePrivileges(BOB, ((GrantLevel("shop"), frozenset({"INSERT"})),)),
    )
    assert parse("REVOKE ALL PRIVILEGES, GRANT OPTION FROM dave") == (
        RevokePrivileges(AccountName("dave", "%"), everything=True),
    )
    (every,) = parse("REVOKE IF EXISTS ALL ON shop.t FROM dave IGNORE UNKNOWN USER")
    assert isinstance(every, RevokePrivileges) and every.if_exists
    assert dict(every.privileges)[GrantLevel("shop", "t")] == frozenset({"GRANT OPTION"})


def test_set_password_as_mariadb_logs_it() -> None:
    hashed = "*855B567D8BD7445ED98865C32FC05A0B636FE000"
    assert parse(f"SET PASSWORD FOR 'bob'@'localhost'='{hashed}'") == (
        AlterAccount(BOB, "SET PASSWORD", Authentication("mysql_native_password", hashed)),
    )
    assert parse("SET PASSWORD FOR bob@localhost = PASSWORD('bob2')") == (
        AlterAccount(
            BOB, "SET PASSWORD", Authentication("mysql_native_password", native_hash("bob2"))
        ),
    )


def test_proxy_grants_are_kept_as_text() -> None:
    assert parse("GRANT PROXY ON root@localhost TO erin@'10.0.0.%'") == (
        ProxyGrant(AccountName("erin", "10.0.0.%"), "PROXY ON `root`@`localhost`"),
    )
    assert parse("REVOKE PROXY ON root@localhost FROM erin") == (
        ProxyGrant(AccountName("erin", "%"), "PROXY ON `root`@`localhost`", revoke=True),
    )


@pytest.mark.parametrize(
    ("statement", "named"),
    [
        (
            "CREATE USER u IDENTIFIED VIA ed25519 USING PASSWORD('pw')",
            "a clear password for the ed25519 plugin",
        ),
        (
            "CREATE USER u IDENTIFIED VIA mysql_native_password USING PASSWORD('a') OR unix_socket",
            "several authentication methods for one account",
        ),
        (
            "CREATE USER u IDENTIFIED WITH caching_sha2_password BY 'a' AND IDENTIFIED WITH "
            "authentication_fido",
            "several authentication methods for one account",
        ),
        ("ALTER USER USER() IDENTIFIED BY 'pw'", "ALTER USER of the current user"),
        ("GRANT SELECT ON t TO CURRENT_USER", "CURRENT_USER in an account statement"),
        ("SET PASSWORD = PASSWORD('pw')", "SET PASSWORD without FOR"),
        ("SET PASSWORD FOR u = 'clear-text'", "SET PASSWORD with a clear password"),
        ("CREATE USER u IDENTIFIED BY RANDOM PASSWORD", "IDENTIFIED BY RANDOM PASSWORD"),
    ],
)
def test_forms_the_accounts_cannot_hold_fail_with_1235_naming_them(
    statement: str, named: str
) -> None:
    with pytest.raises(EngineError) as caught:
        parse(statement)
    assert caught.value.code == 1235
    assert named in caught.value.message
    for secret in ("'pw'", "clear-text", "('a')"):
        assert secret not in caught.value.message


def test_syntax_errors_are_1064_without_the_password() -> None:
    with pytest.raises(EngineError) as caught:
        parse("CREATE USER 'u'@'%' IDENTIFIED BY")
    assert caught.value.code == 1064
    with pytest.raises(EngineError) as caught:
        parse("GRANT SELECT ON * TO u", None)
    assert caught.value.code == 1046


@pytest.mark.parametrize(
    ("statement", "shown"),
    [
        ("CREATE USER 'a'@'%' IDENTIFIED BY 'pw'", "CREATE USER 'a'@'%' IDENTIFIED BY <secret>"),
        ("SET PASSWORD FOR 'b'@'h'='*855B'", "SET PASSWORD FOR 'b'@'h'=<secret>"),
        (
            "ALTER USER u IDENTIFIED VIA mysql_native_password USING PASSWORD('x') COMMENT 'c'",
            "ALTER USER u IDENTIFIED VIA mysql_native_password USING PASSWORD(<secret>) "
            "COMMENT 'c'",
        ),
        (
            "CREATE USER u IDENTIFIED WITH 'caching_sha2_password' AS 0x2441",
            "CREATE USER u IDENTIFIED WITH 'caching_sha2_password' AS <secret>",
        ),
        ("GRANT SELECT ON t TO 'u'@'%'", "GRANT SELECT ON t TO 'u'@'%'"),
    ],
)
def test_secrets_are_masked_in_texts_errors_show(statement: str, shown: str) -> None:
    assert redacted(statement) == shown


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("CREATE USER a", True),
        ("create or replace user a", True),
        ("CREATE OR REPLACE VIEW v AS SELECT 1", False),
        ("GRANT SELECT ON t TO a", True),
        ("SET DEFAULT ROLE r FOR a", True),
        ("SET PASSWORD FOR a = ''", True),
        ("CREATE TABLE t (a INT)", False),
    ],
)
def test_account_statements_are_recognised_by_their_leading_words(
    statement: str, expected: bool
) -> None:
    assert is_account_statement(statement) is expected
