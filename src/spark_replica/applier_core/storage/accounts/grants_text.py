"""SHOW GRANTS for a replicated account, in MySQL 8's form: the global privileges (USAGE when
there are none), then each database, table and routine level with its column privileges, the
roles granted, and the PROXY grants.
https://dev.mysql.com/doc/refman/8.4/en/show-grants.html
"""

from __future__ import annotations

from spark_replica.applier_core.storage.accounts.model import Account, GrantLevel
from spark_replica.applier_core.storage.accounts.operations import GRANT_OPTION, all_privileges


def show_grants(account: Account) -> list[str]:
    """The statements that would give ``account`` its privileges, one per level."""
    to = account.name.backquoted()
    by_level: dict[GrantLevel, list[str]] = {}
    columns: dict[GrantLevel, dict[str, list[str]]] = {}
    options: set[GrantLevel] = set()
    for level, privileges in sorted(account.privileges.items()):
        whole = level._replace(column="")
        if GRANT_OPTION in privileges:
            options.add(whole)
        named = privileges - {GRANT_OPTION}
        if level.column:
            for privilege in named:
                columns.setdefault(whole, {}).setdefault(privilege, []).append(level.column)
        elif named:
            full = named >= all_privileges(level)
            by_level[whole] = ["ALL PRIVILEGES"] if full else sorted(named)
    for whole, named_columns in columns.items():
        by_level.setdefault(whole, []).extend(
            f"{privilege} ({', '.join(f'`{c}`' for c in names)})"
            for privilege, names in sorted(named_columns.items())
        )
    lines = []
    global_level = GrantLevel()
    if global_level not in by_level:
        by_level = {global_level: ["USAGE"], **by_level}
    for level, listed in sorted(by_level.items(), key=lambda item: item[0] != global_level):
        option = " WITH GRANT OPTION" if level in options else ""
        lines.append(f"GRANT {', '.join(listed)} ON {level.text()} TO {to}{option}")
    if account.roles:
        roles = ",".join(r.backquoted() for r in sorted(account.roles))
        lines.append(f"GRANT {roles} TO {to}")
    lines += [f"GRANT {proxy} TO {to}" for proxy in account.proxies]
    return lines
