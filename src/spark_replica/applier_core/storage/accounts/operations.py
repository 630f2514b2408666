"""What account statements do to the replicated accounts, with MySQL's checks and errors.

Each statement is read (``parser``) into operations; ``apply_account`` runs one on an
``Accounts`` value and returns the new one, or raises MySQL's error for what the source could
not have run on the same accounts (an account the replica does not know, a grant it does not
hold). A statement's operations are applied together by the engine: all or none.
https://dev.mysql.com/doc/refman/8.4/en/account-management-statements.html
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from types import MappingProxyType

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.accounts.model import (
    Account,
    AccountName,
    Accounts,
    GrantLevel,
)
from spark_replica.applier_core.storage.interface import EngineError

#: ALL [PRIVILEGES] at each level (MySQL 8.4's static privileges; GRANT OPTION apart).
#: https://dev.mysql.com/doc/refman/8.4/en/privileges-provided.html
TABLE_ALL = frozenset({"ALTER", "CREATE", "CREATE VIEW", "DELETE", "DROP", "INDEX", "INSERT",
                       "REFERENCES", "SELECT", "SHOW VIEW", "TRIGGER", "UPDATE"})  # fmt: skip
DATABASE_ALL = TABLE_ALL | {"ALTER ROUTINE", "CREATE ROUTINE", "CREATE TEMPORARY TABLES",
                            "EVENT", "EXECUTE", "LOCK TABLES"}  # fmt: skip
GLOBAL_ALL = DATABASE_ALL | {
    "CREATE ROLE", "CREATE TABLESPACE", "CREATE USER", "DROP ROLE", "FILE", "PROCESS", "RELOAD",
    "REPLICATION CLIENT", "REPLICATION SLAVE", "SHOW DATABASES", "SHUTDOWN", "SUPER",
}  # fmt: skip
ROUTINE_ALL = frozenset({"ALTER ROUTINE", "EXECUTE"})
GRANT_OPTION = "GRANT OPTION"


def all_privileges(level: GrantLevel) -> frozenset[str]:
    """What ALL PRIVILEGES grants at ``level``."""
    if level.kind:
        return ROUTINE_ALL
    if level.is_global:
        return GLOBAL_ALL
    return DATABASE_ALL if level.is_database else TABLE_ALL


@dataclass(frozen=True, slots=True)
class Authentication:
    """A plugin and the hash to store (a clear password is hashed by the parser)."""

    plugin: str
    auth_string: str


@dataclass(frozen=True, slots=True)
class CreateAccount:
    """CREATE USER / CREATE ROLE (``role``), one account of the statement."""

    name: AccountName
    auth: Authentication | None = None
    role: bool = False
    if_not_exists: bool = False
    replace: bool = False
    locked: bool = False
    default_roles: tuple[AccountName, ...] = ()


@dataclass(frozen=True, slots=True)
class AlterAccount:
    """ALTER USER and SET PASSWORD (``verb``); None leaves a property as it is."""

    name: AccountName
    verb: str = "ALTER USER"
    auth: Authentication | None = None
    if_exists: bool = False
    locked: bool | None = None
    default_roles: tuple[AccountName, ...] | None = None


@dataclass(frozen=True, slots=True)
class DropAccount:
    name: AccountName
    role: bool = False
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class RenameAccount:
    old: AccountName
    new: AccountName


@dataclass(frozen=True, slots=True)
class GrantPrivileges:
    """GRANT privileges ON level TO grantee: ``privileges`` by level (column privileges at
    their column's level); ``auth`` from MariaDB's ``IDENTIFIED BY`` in a GRANT."""

    grantee: AccountName
    privileges: tuple[tuple[GrantLevel, frozenset[str]], ...]
    auth: Authentication | None = None


@dataclass(frozen=True, slots=True)
class RevokePrivileges:
    """REVOKE privileges ON level FROM grantee; ``everything``: REVOKE ALL, GRANT OPTION."""

    grantee: AccountName
    privileges: tuple[tuple[GrantLevel, frozenset[str]], ...] = ()
    everything: bool = False
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class GrantRoles:
    roles: tuple[AccountName, ...]
    grantee: AccountName


@dataclass(frozen=True, slots=True)
class RevokeRoles:
    roles: tuple[AccountName, ...]
    grantee: AccountName


@dataclass(frozen=True, slots=True)
class SetDefaultRoles:
    """SET DEFAULT ROLE: ``roles`` None means ALL granted roles."""

    grantee: AccountName
    roles: tuple[AccountName, ...] | None


@dataclass(frozen=True, slots=True)
class ProxyGrant:
    """GRANT/REVOKE PROXY ON: kept as text for SHOW GRANTS (``revoke`` removes it)."""

    grantee: AccountName
    text: str
    revoke: bool = False


AccountOperation = (
    CreateAccount
    | AlterAccount
    | DropAccount
    | RenameAccount
    | GrantPrivileges
    | RevokePrivileges
    | GrantRoles
    | RevokeRoles
    | SetDefaultRoles
    | ProxyGrant
)


def apply_account(operation: AccountOperation, accounts: Accounts) -> Accounts:
    """The accounts after ``operation``.

    Raises:
        EngineError: 1396 (CREATE/ALTER/DROP/RENAME of an account that is, or is not,
            there), 1133 (SET PASSWORD for an unknown account), 1410 (GRANT to an unknown
            account), 1141/1147 (REVOKE of a grant not held), 3523 (an unknown role),
            3530 (a default role not granted).
    """
    return _apply(operation, accounts)


def _changed(accounts: Accounts, *updated: Account, gone: AccountName | None = None) -> Accounts:
    result = dict(accounts)
    if gone is not None:
        del result[gone]
    for account in updated:
        result[account.name] = account
    return MappingProxyType(result)


def _cannot(verb: str, name: AccountName) -> EngineError:
    return EngineError.of(ErrorCode.CANNOT_USER, verb, str(name))


def _role(accounts: Accounts, name: AccountName) -> Account:
    found = accounts.get(name)
    if found is None:
        raise EngineError.of(ErrorCode.UNKNOWN_AUTHID, name.user, name.host)
    return found


@functools.singledispatch
def _apply(operation: object, accounts: Accounts) -> Accounts:
    raise TypeError(f"not an account operation: {operation!r}")


@_apply.register
def _(op: CreateAccount, accounts: Accounts) -> Accounts:
    if op.name in accounts and not op.replace:
        if op.if_not_exists:
            return accounts
        raise _cannot("CREATE ROLE" if op.role else "CREATE USER", op.name)
    for role in op.default_roles:
        _role(accounts, role)
    auth = op.auth or Authentication("mysql_native_password", "")
    account = Account(
        op.name,
        auth.plugin,
        auth.auth_string,
        op.role,
        op.locked or op.role,  # a role is a locked account: it never logs in
        roles=frozenset(op.default_roles),
        default_roles=op.default_roles,
    )
    return _changed(accounts, account)


@_apply.register
def _(op: AlterAccount, accounts: Accounts) -> Accounts:
    found = accounts.get(op.name)
    if found is None:
        if op.if_exists:
            return accounts
        if op.verb == "SET PASSWORD":
            raise EngineError.of(ErrorCode.PASSWORD_NO_MATCH)
        raise _cannot(op.verb, op.name)
    changed = found
    if op.auth is not None:
        changed = replace(changed, plugin=op.auth.plugin, auth_string=op.auth.auth_string)
    if op.locked is not None:
        changed = replace(changed, locked=op.locked)
    if op.default_roles is not None:
        return _apply(SetDefaultRoles(op.name, op.default_roles), _changed(accounts, changed))
    return _changed(accounts, changed)


@_apply.register
def _(op: DropAccount, accounts: Accounts) -> Accounts:
    if op.name not in accounts:
        if op.if_exists:
            return accounts
        raise _cannot("DROP ROLE" if op.role else "DROP USER", op.name)
    # A dropped role is revoked from every account that has it, as MySQL does.
    others = [_without_role(a, op.name) for n, a in accounts.items() if n != op.name]
    return MappingProxyType({a.name: a for a in others})


def _without_role(account: Account, role: AccountName) -> Account:
    if role not in account.roles and role not in account.default_roles:
        return account
    defaults = tuple(r for r in account.default_roles if r != role)
    return replace(account, roles=account.roles - {role}, default_roles=defaults)


@_apply.register
def _(op: RenameAccount, accounts: Accounts) -> Accounts:
    found = accounts.get(op.old)
    if found is None or op.new in accounts:
        raise _cannot("RENAME USER", op.old)
    result: dict[AccountName, Account] = {}
    for name, account in accounts.items():
        if name == op.old:
            result[op.new] = replace(account, name=op.new)
            continue
        if op.old in account.roles:  # a renamed role stays granted under its new name
            defaults = tuple(op.new if r == op.old else r for r in account.default_roles)
            roles = (account.roles - {op.old}) | {op.new}
            account = replace(account, roles=roles, default_roles=defaults)
        result[name] = account
    return MappingProxyType(result)


@_apply.register
def _(op: GrantPrivileges, accounts: Accounts) -> Accounts:
    found = accounts.get(op.grantee)
    if found is None:
        if op.auth is None:
            raise EngineError.of(ErrorCode.CANT_CREATE_USER_WITH_GRANT)
        found = Account(op.grantee, op.auth.plugin, op.auth.auth_string)
    elif op.auth is not None:
        found = replace(found, plugin=op.auth.plugin, auth_string=op.auth.auth_string)
    privileges = dict(found.privileges)
    for level, granted in op.privileges:
        privileges[level] = privileges.get(level, frozenset()) | granted
    return _changed(accounts, found.with_privileges(privileges))


@_apply.register
def _(op: RevokePrivileges, accounts: Accounts) -> Accounts:
    found = accounts.get(op.grantee)
    if found is None:
        if op.if_exists:
            return accounts
        raise _no_grant(op.grantee, GrantLevel())
    if op.everything:
        return _changed(accounts, found.with_privileges({}))
    privileges = dict(found.privileges)
    for level, revoked in op.privileges:
        held = privileges.get(level, frozenset())
        if not held and not op.if_exists:
            raise _no_grant(op.grantee, level)
        privileges[level] = held - revoked
    return _changed(accounts, found.with_privileges(privileges))


def _no_grant(grantee: AccountName, level: GrantLevel) -> EngineError:
    if level.is_global or level.is_database:
        return EngineError.of(ErrorCode.NONEXISTING_GRANT, grantee.user, grantee.host)
    return EngineError.of(ErrorCode.NONEXISTING_TABLE_GRANT, grantee.user, grantee.host,
                          level.table)  # fmt: skip


@_apply.register
def _(op: GrantRoles, accounts: Accounts) -> Accounts:
    grantee = accounts.get(op.grantee)
    if grantee is None:
        raise EngineError.of(ErrorCode.UNKNOWN_AUTHID, op.grantee.user, op.grantee.host)
    for role in op.roles:
        _role(accounts, role)
    return _changed(accounts, replace(grantee, roles=grantee.roles | set(op.roles)))


@_apply.register
def _(op: RevokeRoles, accounts: Accounts) -> Accounts:
    grantee = accounts.get(op.grantee)
    if grantee is None:
        raise EngineError.of(ErrorCode.UNKNOWN_AUTHID, op.grantee.user, op.grantee.host)
    for role in op.roles:
        _role(accounts, role)
        grantee = _without_role(grantee, role)
    return _changed(accounts, grantee)


@_apply.register
def _(op: SetDefaultRoles, accounts: Accounts) -> Accounts:
    grantee = accounts.get(op.grantee)
    if grantee is None:
        raise _cannot("SET DEFAULT ROLE", op.grantee)
    roles = tuple(sorted(grantee.roles)) if op.roles is None else op.roles
    for role in roles:
        if role not in grantee.roles:
            raise EngineError.of(ErrorCode.ROLE_NOT_GRANTED, role.user, role.host,
                                 op.grantee.user, op.grantee.host)  # fmt: skip
    return _changed(accounts, replace(grantee, default_roles=roles))


@_apply.register
def _(op: ProxyGrant, accounts: Accounts) -> Accounts:
    grantee = accounts.get(op.grantee)
    if grantee is None:
        if op.revoke:
            raise _no_grant(op.grantee, GrantLevel())
        raise EngineError.of(ErrorCode.CANT_CREATE_USER_WITH_GRANT)
    base = op.text.removesuffix(" WITH GRANT OPTION")
    proxies = tuple(p for p in grantee.proxies if p.removesuffix(" WITH GRANT OPTION") != base)
    if not op.revoke:
        proxies = (*proxies, op.text)
    return _changed(accounts, replace(grantee, proxies=proxies))
