"""Account statements, as MySQL 8 and MariaDB write them to the binary log, read into
``operations``.

MySQL logs each account statement rewritten with the stored hash
(``CREATE USER 'u'@'%' IDENTIFIED WITH 'caching_sha2_password' AS '$A$005$...'``); MariaDB
logs the statement as the client sent it (``IDENTIFIED BY 'clear'``, ``IDENTIFIED VIA
mysql_native_password USING PASSWORD('clear')``) but SET PASSWORD with the hash. A clear
password is hashed here, for its plugin, and goes no further.

Read: CREATE/ALTER/DROP/RENAME USER, CREATE/DROP ROLE, GRANT and REVOKE of privileges, roles
and PROXY, SET PASSWORD, SET DEFAULT ROLE. Clauses that do not decide who may log in or read
(REQUIRE, resource limits, password policies, COMMENT, ATTRIBUTE) are accepted and not kept.
A form the accounts cannot represent (several authentication methods, CURRENT_USER(),
multi-factor authentication) raises 1235 naming it.
https://dev.mysql.com/doc/refman/8.4/en/account-management-statements.html
https://mariadb.com/kb/en/account-management-sql-commands/
"""

from __future__ import annotations

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.accounts.model import (
    CACHING_SHA2,
    NATIVE,
    AccountName,
    GrantLevel,
)
from spark_replica.applier_core.storage.accounts.operations import (
    GRANT_OPTION,
    AccountOperation,
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
    all_privileges,
)
from spark_replica.applier_core.storage.accounts.passwords import native_hash, sha2_hash
from spark_replica.applier_core.storage.accounts.reader import Reader
from spark_replica.applier_core.storage.accounts.tokens import Kind, redacted
from spark_replica.applier_core.storage.interface import EngineError

_LEADS = {
    ("CREATE", "USER"),
    ("CREATE", "ROLE"),
    ("CREATE", "OR"),
    ("ALTER", "USER"),
    ("DROP", "USER"),
    ("DROP", "ROLE"),
    ("RENAME", "USER"),
    ("SET", "PASSWORD"),
    ("SET", "DEFAULT"),
}


def is_account_statement(statement: str) -> bool:
    """Whether ``statement`` manages accounts (its leading words say so)."""
    words = statement.split(None, 4)
    upper = tuple(w.upper() for w in words[:2])
    if upper[:1] in (("GRANT",), ("REVOKE",)):
        return True
    if upper == ("CREATE", "OR"):
        return len(words) > 3 and words[3].upper() in ("USER", "ROLE")
    return upper in _LEADS


def parse_account_statement(statement: str, database: str | None) -> tuple[AccountOperation, ...]:
    """The operations of one account statement; ``database`` resolves ``ON *`` and
    unqualified table names.

    Raises:
        EngineError: 1064 when the statement does not read, 1235 for a form the accounts
            cannot represent, 1046 for ``ON *`` without a database.
    """
    reader = Reader(statement)
    first = reader.word()
    if first == "CREATE":
        return _create(reader)
    if first == "ALTER":
        return _alter(reader)
    if first in ("DROP", "RENAME"):
        return _drop(reader) if first == "DROP" else _rename(reader)
    if first == "SET":
        return _set(reader)
    if first == "GRANT":
        return _grant(reader, database)
    if first == "REVOKE":
        return _revoke(reader, database)
    raise reader.syntax()


def unsupported(what: str, statement: str) -> EngineError:
    return EngineError.of(ErrorCode.NOT_SUPPORTED_YET, f"{what}: {redacted(statement)[:200]}")


# -- CREATE / ALTER / DROP / RENAME -----------------------------------------------------------


def _create(reader: Reader) -> tuple[AccountOperation, ...]:
    replace = reader.accept("OR", "REPLACE")
    role = reader.expect_one("USER", "ROLE") == "ROLE"
    exists = reader.accept("IF", "NOT", "EXISTS")
    entries = []
    while True:
        name = reader.account(role_default=role)
        auth = None if role else _authentication(reader)
        entries.append((name, auth))
        if not reader.accept_punct(","):
            break
    defaults: tuple[AccountName, ...] = ()
    locked = False
    while not reader.done():
        if reader.accept("DEFAULT", "ROLE"):
            defaults = reader.account_list(role_default=True)
        elif reader.accept("ACCOUNT"):
            locked = reader.expect_one("LOCK", "UNLOCK") == "LOCK"
        else:
            reader.skip_clause()
    return tuple(CreateAccount(name, auth, role, exists, replace, locked, defaults)
                 for name, auth in entries)  # fmt: skip


def _alter(reader: Reader) -> tuple[AccountOperation, ...]:
    reader.expect("USER")
    exists = reader.accept("IF", "EXISTS")
    if reader.peek_word() in ("USER", "CURRENT_USER") and reader.peek_punct(1, "("):
        raise unsupported("ALTER USER of the current user", reader.statement)
    entries = []
    while True:
        name = reader.account()
        if reader.accept("DEFAULT", "ROLE"):
            return (AlterAccount(name, if_exists=exists, default_roles=_role_choice(reader)),)
        entries.append((name, _authentication(reader)))
        if not reader.accept_punct(","):
            break
    locked: bool | None = None
    while not reader.done():
        if reader.accept("ACCOUNT"):
            locked = reader.expect_one("LOCK", "UNLOCK") == "LOCK"
        else:
            reader.skip_clause()
    return tuple(AlterAccount(name, "ALTER USER", auth, exists, locked) for name, auth in entries)


def _role_choice(reader: Reader) -> tuple[AccountName, ...] | None:
    if reader.accept("ALL"):
        return None
    if reader.accept("NONE"):
        return ()
    return reader.account_list(role_default=True)


def _drop(reader: Reader) -> tuple[AccountOperation, ...]:
    role = reader.expect_one("USER", "ROLE") == "ROLE"
    exists = reader.accept("IF", "EXISTS")
    names = reader.account_list(role_default=role)
    reader.end()
    return tuple(DropAccount(name, role, exists) for name in names)


def _rename(reader: Reader) -> tuple[AccountOperation, ...]:
    reader.expect("USER")
    pairs = []
    while True:
        old = reader.account()
        reader.expect("TO")
        pairs.append(RenameAccount(old, reader.account()))
        if not reader.accept_punct(","):
            break
    reader.end()
    return tuple(pairs)


# -- authentication ---------------------------------------------------------------------------


def _authentication(reader: Reader) -> Authentication | None:
    """IDENTIFIED ... after an account name, hashed; None without one."""
    if not reader.accept("IDENTIFIED"):
        return None
    if reader.accept("BY"):
        if reader.accept("PASSWORD"):  # a native hash: BY PASSWORD '*HEX'
            return Authentication(NATIVE, reader.string())
        if reader.accept("RANDOM"):
            raise unsupported("IDENTIFIED BY RANDOM PASSWORD", reader.statement)
        return Authentication(NATIVE, native_hash(reader.string()))
    reader.expect_one("WITH", "VIA")
    plugin = reader.plugin()
    auth = Authentication(plugin, "")
    if reader.accept("BY"):
        if reader.accept("RANDOM"):
            raise unsupported("IDENTIFIED BY RANDOM PASSWORD", reader.statement)
        auth = _hashed(plugin, reader.string(), reader)
    elif reader.accept("AS") or reader.accept("USING"):
        if reader.accept("PASSWORD"):
            reader.expect_punct("(")
            auth = _hashed(plugin, reader.string(), reader)
            reader.expect_punct(")")
        else:
            auth = Authentication(plugin, reader.secret())
    if reader.peek_word() in ("OR", "AND", "INITIAL"):
        raise unsupported("several authentication methods for one account", reader.statement)
    return auth


def _hashed(plugin: str, password: str, reader: Reader) -> Authentication:
    if plugin == NATIVE:
        return Authentication(plugin, native_hash(password))
    if plugin == CACHING_SHA2:
        return Authentication(plugin, sha2_hash(password))
    raise unsupported(f"a clear password for the {plugin} plugin", reader.statement)


# -- SET PASSWORD / SET DEFAULT ROLE ----------------------------------------------------------


def _set(reader: Reader) -> tuple[AccountOperation, ...]:
    if reader.accept("DEFAULT", "ROLE"):
        roles = _role_choice(reader)
        if reader.accept("FOR"):  # MariaDB: SET DEFAULT ROLE r FOR u
            return (SetDefaultRoles(reader.account(), roles),)
        reader.expect("TO")
        return tuple(SetDefaultRoles(name, roles) for name in reader.account_list())
    reader.expect("PASSWORD")
    if not reader.accept("FOR"):
        raise unsupported("SET PASSWORD without FOR", reader.statement)
    name = reader.account()
    reader.expect_punct("=")
    if reader.accept("PASSWORD"):
        reader.expect_punct("(")
        value = native_hash(reader.string())
        reader.expect_punct(")")
        return (AlterAccount(name, "SET PASSWORD", Authentication(NATIVE, value)),)
    value = reader.secret()
    if not _is_native_hash(value):  # MySQL 8: the clear password, for the account's plugin
        raise unsupported("SET PASSWORD with a clear password", reader.statement)
    return (AlterAccount(name, "SET PASSWORD", Authentication(NATIVE, value)),)


def _is_native_hash(value: str) -> bool:
    return value == "" or (len(value) == 41 and value[0] == "*" and _hex(value[1:]))


def _hex(text: str) -> bool:
    return all(c in "0123456789abcdefABCDEF" for c in text)


# -- GRANT / REVOKE ---------------------------------------------------------------------------


def _grant(reader: Reader, database: str | None) -> tuple[AccountOperation, ...]:
    if reader.peek_word() == "PROXY":
        return _proxy(reader, revoke=False)
    start = reader.position
    privileges, columns = reader.privilege_list()
    if not reader.accept("ON"):  # GRANT role, ... TO user, ...
        roles = tuple(reader.role_names(start))
        reader.expect("TO")
        grantees = reader.account_list()
        reader.skip_rest()  # WITH ADMIN OPTION
        return tuple(GrantRoles(roles, grantee) for grantee in grantees)
    level = reader.level(database)
    reader.expect("TO")
    operations: list[AccountOperation] = []
    while True:
        grantee = reader.account()
        auth = _authentication(reader)
        levels = _granted(level, privileges, columns)
        operations.append(GrantPrivileges(grantee, levels, auth))
        if not reader.accept_punct(","):
            break
    grant_option = False
    while not reader.done():
        if reader.accept("WITH", "GRANT", "OPTION"):
            grant_option = True
        elif reader.accept("AS"):
            raise unsupported("GRANT ... AS user", reader.statement)
        else:
            reader.skip_clause()
    if grant_option:
        extra = (level, frozenset({GRANT_OPTION}))
        operations = [GrantPrivileges(op.grantee, (*op.privileges, extra), op.auth)
                      if isinstance(op, GrantPrivileges) else op for op in operations]  # fmt: skip
    return tuple(operations)


def _granted(
    level: GrantLevel, privileges: list[str], columns: dict[str, tuple[str, ...]]
) -> tuple[tuple[GrantLevel, frozenset[str]], ...]:
    whole: set[str] = set()
    by_column: dict[GrantLevel, set[str]] = {}
    for privilege in privileges:
        if privilege in ("ALL", "ALL PRIVILEGES"):
            whole |= all_privileges(level)
        elif privilege == "USAGE":
            continue
        elif privilege in columns:
            for column in columns[privilege]:
                by_column.setdefault(level._replace(column=column.lower()), set()).add(privilege)
        else:
            whole.add(privilege)
    result = [(level, frozenset(whole))] if whole else []
    result += [(lvl, frozenset(privs)) for lvl, privs in by_column.items()]
    return tuple(result)


def _revoke(reader: Reader, database: str | None) -> tuple[AccountOperation, ...]:
    exists = reader.accept("IF", "EXISTS")
    if reader.peek_word() == "PROXY":
        return _proxy(reader, revoke=True)
    start = reader.position
    privileges, columns = reader.privilege_list()
    if not reader.accept("ON"):
        if reader.accept("FROM") and privileges[:2] in (
            ["ALL", GRANT_OPTION],
            ["ALL PRIVILEGES", GRANT_OPTION],
        ):
            grantees = reader.account_list()
            reader.skip_rest()
            return tuple(RevokePrivileges(g, everything=True, if_exists=exists) for g in grantees)
        roles = tuple(reader.role_names(start))
        reader.expect("FROM")
        grantees = reader.account_list()
        reader.skip_rest()
        return tuple(RevokeRoles(roles, grantee) for grantee in grantees)  # fmt: skip
    level = reader.level(database)
    reader.expect("FROM")
    grantees = reader.account_list()
    reader.skip_rest()  # MySQL 8: IGNORE UNKNOWN USER
    revoked = list(_granted(level, privileges, columns))
    if any(p in ("ALL", "ALL PRIVILEGES") for p in privileges):
        revoked.append((level, frozenset({GRANT_OPTION})))  # REVOKE ALL takes GRANT OPTION too
    return tuple(RevokePrivileges(g, tuple(revoked), if_exists=exists) for g in grantees)


def _proxy(reader: Reader, *, revoke: bool) -> tuple[AccountOperation, ...]:
    reader.expect("PROXY")
    reader.expect("ON")
    proxied = reader.account()
    reader.expect("FROM" if revoke else "TO")
    grantees = reader.account_list()
    grant_option = reader.accept("WITH", "GRANT", "OPTION")
    reader.end()
    text = f"PROXY ON {proxied.backquoted()}"
    return tuple(ProxyGrant(g, text + (" WITH GRANT OPTION" if grant_option else ""), revoke)
                 for g in grantees)  # fmt: skip


__all__ = ["Kind", "is_account_statement", "parse_account_statement"]
