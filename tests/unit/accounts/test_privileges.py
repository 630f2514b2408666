"""Which replicated account a login uses (host patterns, specificity, anonymous accounts),
what its grants and default roles let it read, and the password hashes it is checked
against."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from spark_replica.applier_core.storage import Catalog, parse_ddl
from spark_replica.applier_core.storage.accounts import Accounts, Grants, match_account
from spark_replica.applier_core.storage.accounts.passwords import (
    sha2_hash,
    sha2_matches,
    sha256_crypt,
)
from spark_replica.applier_core.storage.accounts.privileges import host_matches


def accounts(*statements: str) -> Accounts:
    catalog = Catalog(frozenset({"shop"}), MappingProxyType({}))
    for statement in statements:
        for operation in parse_ddl(statement, "shop"):
            catalog = catalog.apply(operation)
    return catalog.accounts


@pytest.mark.parametrize(
    ("pattern", "host", "matches"),
    [
        ("%", "10.1.2.3", True),
        ("10.0.0.%", "10.0.0.7", True),
        ("10.0.0.%", "10.0.1.7", False),
        ("10.0.0._", "10.0.0.7", True),
        ("10.0.0.0/255.255.255.0", "10.0.0.200", True),
        ("10.0.0.0/255.255.255.0", "10.0.1.1", False),
        ("localhost", "127.0.0.1", True),
        ("localhost", "10.0.0.1", False),
        ("Db.Example", "db.example", True),
    ],
)
def test_host_patterns(pattern: str, host: str, matches: bool) -> None:
    assert host_matches(pattern.lower(), host) is matches


def test_the_most_specific_host_wins_then_a_named_user_over_the_anonymous_one() -> None:
    found = accounts("CREATE USER u@'%'", "CREATE USER u@'127.0.0.%'", "CREATE USER ''@'127.0.0.1'",
                     "CREATE USER u@'127.0.0.1'", "CREATE ROLE r")  # fmt: skip
    chosen = match_account(found, "u", "127.0.0.1")
    assert chosen is not None and chosen.name.host == "127.0.0.1" and chosen.name.user == "u"
    other = match_account(found, "u", "127.0.0.9")
    assert other is not None and other.name.host == "127.0.0.%"
    anonymous = match_account(found, "someone", "127.0.0.1")
    assert anonymous is not None and anonymous.name.user == ""
    assert match_account(found, "r", "10.0.0.1") is None  # roles never log in
    assert match_account(found, "someone", "10.0.0.1") is None


def test_select_comes_from_global_database_table_grants_and_default_roles() -> None:
    found = accounts(
        "CREATE USER a", "CREATE ROLE r1", "CREATE ROLE r2", "CREATE ROLE r3",
        "GRANT SELECT ON shop.t1 TO a", "GRANT SELECT ON `sh_p`.* TO r1",
        "GRANT SELECT ON other.* TO r2", "GRANT r2 TO r1", "GRANT r1, r3 TO a",
        "SET DEFAULT ROLE r1 FOR a", "GRANT SELECT ON secret.* TO r3",
        "GRANT INSERT ON shop.t2 TO a", "GRANT SELECT (c) ON shop.t3 TO a",
    )  # fmt: skip
    grants = Grants.of(found, found[next(n for n in found if n.user == "a")])
    assert grants.may_select("shop", "t1")
    assert grants.may_select("shop", "anything")  # `sh_p`.*: _ is a wildcard
    assert grants.may_select("other", "x")  # r2 through r1
    assert not grants.may_select("secret", "x")  # r3 is granted, not a default role
    assert not grants.may_select("shop2", "t1")
    assert grants.sees_table("shop", "t2") and grants.selectable_columns("shop", "t3") == {"c"}
    assert grants.sees_database("other") and not grants.sees_database("secret")


def test_sha_crypt_matches_the_specification_vectors() -> None:
    # https://www.akkadia.org/drepper/SHA-crypt.txt, SHA-256, rounds 5000 (the default)
    assert sha256_crypt(b"Hello world!", b"saltstring", 5000) == (
        "5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"
    )
    stored = sha2_hash("pw", b"01234567890123456789")
    assert stored.startswith("$A$005$01234567890123456789") and len(stored) == 70
    assert sha2_matches(stored, b"pw") and not sha2_matches(stored, b"pw2")
    assert sha2_matches("", b"") and not sha2_matches("", b"x")
