"""Who a client is and what it may read, from the replicated accounts, as MySQL decides.

* ``match_account``: the account a login uses: the user name matches exactly (an anonymous
  account, user ``''``, matches any name), the host pattern matches the client's address
  (``%`` and ``_`` wildcards, ``addr/netmask``, ``localhost`` for a loopback address); the
  most specific host wins, then a named user over the anonymous one.
  https://dev.mysql.com/doc/refman/8.4/en/connection-access.html
* ``Grants``: an account's privileges with those of its default roles (roles granted to
  roles included): the roles MySQL activates at login.
  https://dev.mysql.com/doc/refman/8.4/en/roles.html
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from spark_replica.applier_core.storage.accounts.model import (
    ANY,
    Account,
    AccountName,
    Accounts,
    GrantLevel,
)

_LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def match_account(accounts: Accounts, user: str, host: str) -> Account | None:
    """The account ``user`` connecting from ``host`` logs in as (roles never log in)."""
    found = [a for a in accounts.values() if not a.role and a.name.user in (user, "")
             and host_matches(a.name.host, host)]  # fmt: skip
    if not found:
        return None
    return min(found, key=lambda a: (_host_rank(a.name.host), a.name.user == ""))


def host_matches(pattern: str, host: str) -> bool:
    """Whether the account host ``pattern`` admits a client at ``host``."""
    host = host.lower()
    if pattern == "localhost":
        return host in _LOOPBACK
    if "/" in pattern:
        return _in_netmask(pattern, host)
    if "%" not in pattern and "_" not in pattern:
        return pattern == host
    return re.fullmatch(like_regex(pattern), host) is not None


def like_regex(pattern: str) -> str:
    """A LIKE pattern (``%``, ``_``, ``\\`` escapes) as a regular expression."""
    out, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if char == "%" else "." if char == "_" else re.escape(char))
        i += 1
    return "".join(out)


def _in_netmask(pattern: str, host: str) -> bool:
    try:
        address, mask = pattern.split("/", 1)
        network = ipaddress.IPv4Network(f"{address}/{mask}", strict=False)
        return ipaddress.IPv4Address(host) in network
    except ValueError:
        return False


def _host_rank(pattern: str) -> tuple[int, int]:
    """Sort key: literal hosts first, then patterns with a longer literal prefix; ``%``
    last."""
    wild = [i for i, c in enumerate(pattern) if c in "%_"]
    if not wild:
        return (0, 0)
    return (1, -wild[0])


@dataclass(frozen=True, slots=True)
class Grants:
    """The privileges an account holds at login: its own and its default roles'."""

    levels: dict[GrantLevel, frozenset[str]]

    @classmethod
    def of(cls, accounts: Accounts, account: Account) -> Grants:
        levels: dict[GrantLevel, frozenset[str]] = {}
        seen: set[AccountName] = set()
        pending = [account]
        while pending:
            current = pending.pop()
            if current.name in seen:
                continue
            seen.add(current.name)
            for level, privileges in current.privileges.items():
                levels[level] = levels.get(level, frozenset()) | privileges
            roles = current.default_roles if current is account else tuple(current.roles)
            pending += [accounts[r] for r in roles if r in accounts]
        return cls(levels)

    def may_select(self, schema: str, table: str) -> bool:
        """SELECT on the whole table: globally, on its database, or on the table."""
        return any(
            "SELECT" in privileges and not level.column and not level.kind
            and _covers(level, schema, table)
            for level, privileges in self.levels.items()
        )  # fmt: skip

    def selectable_columns(self, schema: str, table: str) -> frozenset[str]:
        """The columns of the table with a column-level SELECT (lower case)."""
        return frozenset(
            level.column
            for level, privileges in self.levels.items()
            if level.column
            and "SELECT" in privileges
            and (level.schema, level.table) == (schema, table)
        )

    def sees_table(self, schema: str, table: str) -> bool:
        """Any privilege on the table, one of its columns, its database or all databases
        (what SHOW TABLES and information_schema.TABLES show a user)."""
        return any(
            privileges - {"GRANT OPTION"} and not level.kind and _covers(level, schema, table)
            for level, privileges in self.levels.items()
        )

    def sees_database(self, schema: str) -> bool:
        """Any privilege in the database (SHOW DATABASES without the SHOW DATABASES
        privilege), or SHOW DATABASES itself."""
        for level, privileges in self.levels.items():
            useful = privileges - {"GRANT OPTION"}
            if not useful:
                continue
            if level.is_global or _schema_matches(level.schema, schema):
                return True
        return False


def _covers(level: GrantLevel, schema: str, table: str) -> bool:
    if level.is_global:
        return True
    if level.table != ANY:  # names in table and column grants are not patterns
        return (level.schema, level.table) == (schema, table)
    return _schema_matches(level.schema, schema)


def _schema_matches(pattern: str, schema: str) -> bool:
    """Database names in a database-level grant may hold ``%``/``_`` wildcards."""
    if pattern == schema:
        return True
    if "%" not in pattern and "_" not in pattern:
        return False
    return re.fullmatch(like_regex(pattern), schema) is not None
