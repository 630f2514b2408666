"""Replicated accounts as the replica keeps them: users and roles (``user@host``), their
authentication plugin and hash as the source logged them, the roles granted to them, and
their privileges at global, database, table (and column or routine) level.

The store is a value: ``Accounts`` maps each ``AccountName`` to an immutable ``Account``;
applying an account statement (``operations``) returns a new mapping, so the engine keeps
it with its catalog and records it at the same commit point as the data.
https://dev.mysql.com/doc/refman/8.4/en/account-names.html
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import NamedTuple

NATIVE = "mysql_native_password"
CACHING_SHA2 = "caching_sha2_password"
ANY = "*"


class AccountName(NamedTuple):
    """``'user'@'host'``: user names compare exactly, host names are kept lower case (MySQL
    folds them when it stores an account)."""

    user: str
    host: str

    @classmethod
    def of(cls, user: str, host: str = "%") -> AccountName:
        return cls(user, host.lower())

    def __str__(self) -> str:
        return f"'{self.user}'@'{self.host}'"

    def backquoted(self) -> str:
        return f"`{self.user}`@`{self.host}`"


class GrantLevel(NamedTuple):
    """Where privileges apply: ``*.*`` (global), ``db.*`` (a database; the name may hold the
    ``%``/``_`` wildcards), ``db.t`` (a table), a column of a table, or a routine (``kind``
    FUNCTION or PROCEDURE)."""

    schema: str = ANY
    table: str = ANY
    column: str = ""
    kind: str = ""

    @property
    def is_global(self) -> bool:
        return self.schema == ANY

    @property
    def is_database(self) -> bool:
        return self.schema != ANY and self.table == ANY

    def text(self) -> str:
        """The ``ON`` clause of SHOW GRANTS."""
        if self.is_global:
            return "*.*"
        name = "*" if self.table == ANY else f"`{self.table}`"
        prefix = f"{self.kind} " if self.kind else ""
        return f"{prefix}`{self.schema}`.{name}"


#: Privileges by level (a column's privileges at its column's level).
Privileges = Mapping[GrantLevel, frozenset[str]]


def _empty() -> Privileges:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Account:
    """One user or role. ``auth_string`` is the stored hash (never a clear password);
    ``roles`` are the roles granted to it, ``default_roles`` those active at login;
    ``proxies`` the PROXY grants, kept as text."""

    name: AccountName
    plugin: str = NATIVE
    auth_string: str = ""
    role: bool = False
    locked: bool = False
    privileges: Privileges = field(default_factory=_empty)
    roles: frozenset[AccountName] = frozenset()
    default_roles: tuple[AccountName, ...] = ()
    proxies: tuple[str, ...] = ()

    def with_privileges(self, privileges: dict[GrantLevel, frozenset[str]]) -> Account:
        kept = {level: privs for level, privs in privileges.items() if privs}
        return replace(self, privileges=MappingProxyType(kept))


#: The replicated accounts, by name.
Accounts = Mapping[AccountName, Account]


def no_accounts() -> Accounts:
    return MappingProxyType({})


def account_to_json(account: Account) -> str:
    """``account`` without its name, as the Spark engine records it."""
    return json.dumps(
        {
            "plugin": account.plugin,
            "auth_string": account.auth_string,
            "role": account.role,
            "locked": account.locked,
            "privileges": [[list(level), sorted(privs)]
                           for level, privs in sorted(account.privileges.items())],
            "roles": sorted(list(r) for r in account.roles),
            "default_roles": [list(r) for r in account.default_roles],
            "proxies": list(account.proxies),
        },
        separators=(",", ":"),
    )  # fmt: skip


def account_from_json(name: AccountName, text: str) -> Account:
    data = json.loads(text)
    privileges = {GrantLevel(*level): frozenset(privs) for level, privs in data["privileges"]}
    return Account(
        name,
        data["plugin"],
        data["auth_string"],
        bool(data["role"]),
        bool(data["locked"]),
        MappingProxyType(privileges),
        frozenset(AccountName(*r) for r in data["roles"]),
        tuple(AccountName(*r) for r in data["default_roles"]),
        tuple(data["proxies"]),
    )
