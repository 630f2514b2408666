"""The CREATE statements SHOW CREATE VIEW/PROCEDURE/FUNCTION/EVENT print for kept objects,
laid out as MySQL 8.4 prints them.

MySQL prints these from its data dictionary, not from the statement that created the
object: the options in a fixed order (ALGORITHM, DEFINER, SQL SECURITY for a view), the name
in backticks (a view's with its database when that is not the current one), a routine's
characteristics one per line, an event's full schedule. The view's SELECT and the bodies are
the source's text: MySQL prints its own canonical SELECT, which a source logged in that form
(as mysqldump writes it) reproduces exactly. SHOW CREATE TRIGGER prints the statement as
kept, which MySQL also does (``SQL Original Statement``).
https://dev.mysql.com/doc/refman/8.4/en/show-create-view.html
https://dev.mysql.com/doc/refman/8.4/en/show-create-procedure.html
https://dev.mysql.com/doc/refman/8.4/en/show-create-event.html
"""

from __future__ import annotations

import re

from spark_replica.applier_core.storage.objects import ObjectKind, StoredObject
from spark_replica.sql_handlers.tables.key_rows import quote
from spark_replica.sql_handlers.tables.object_parts import event_parts, quote_string, routine_parts
from spark_replica.sql_handlers.tables.replica_types import type_info

#: An event a replica received from its source, as SHOW CREATE EVENT names its status.
EVENT_STATUS_CLAUSE = "DISABLE ON REPLICA"
_PLAIN_NUMBER = re.compile(r"-?\d+")
_LITERALS = re.compile(r"('(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.)*\")")


def definer_clause(definer: str) -> str:
    """``DEFINER=`user`@`host` `` (with its trailing blank), or nothing without a definer."""
    if not definer:
        return ""
    user, _, host = definer.rpartition("@") if "@" in definer else (definer, "", "")
    return f"DEFINER={quote(user)}@{quote(host)} " if host or user else ""


def create_view_text(view: StoredObject, current: str | None) -> str:
    """SHOW CREATE VIEW's text for a session whose database is ``current``: the view's name
    and the SELECT's tables without it."""
    name = quote(view.ref.name)
    if current != view.ref.schema:
        name = f"{quote(view.ref.schema)}.{name}"
    columns = f" ({','.join(quote(c) for c in view.columns)})" if view.columns else ""
    check = "" if view.check_option == "NONE" else f" WITH {view.check_option} CHECK OPTION"
    select = without_database(view.select, current) if current else view.select
    return (
        f"CREATE ALGORITHM={view.algorithm} {definer_clause(view.definer)}"
        f"SQL SECURITY {view.security} VIEW {name}{columns} AS {select}{check}"
    )


def without_database(select: str, database: str) -> str:
    """``select`` with the quoted qualifier `database`. left out outside string literals, as
    MySQL prints a view's SELECT for a session whose current database it is.

    >>> without_database("select `d`.`t`.`a` AS `a` from `d`.`t` where x = '`d`.'", "d")
    "select `t`.`a` AS `a` from `t` where x = '`d`.'"
    """
    qualifier = quote(database) + "."
    parts = _LITERALS.split(select)
    return "".join(p if i % 2 else p.replace(qualifier, "") for i, p in enumerate(parts))


def returns_text(returns: str) -> str:
    """A function's RETURNS type as MySQL 8.4 prints it: a number or time type in MySQL's
    spelling (``int``, not ``INT`` or a source's ``int(11)``); a string type as written, with
    the character set the source gave it."""
    info = type_info(returns)
    return info.column_type if info.character_set_name is None else returns


def create_routine_text(routine: StoredObject) -> str:
    parts = routine_parts(routine)
    function = routine.ref.kind is ObjectKind.FUNCTION
    returns = f" RETURNS {returns_text(parts.returns)}" if function else ""
    lines = [
        f"CREATE {definer_clause(routine.definer)}{routine.ref.kind.value} "
        f"{quote(routine.ref.name)}({parts.params}){returns}"
    ]
    if parts.data_access != "CONTAINS SQL":
        lines.append(f"    {parts.data_access}")
    if parts.deterministic:
        lines.append("    DETERMINISTIC")
    if parts.security == "INVOKER":
        lines.append("    SQL SECURITY INVOKER")
    if parts.comment:
        lines.append(f"    COMMENT {quote_string(parts.comment)}")
    return "\n".join(lines) + "\n" + parts.body


def create_event_text(event: StoredObject) -> str:
    """The schedule as MySQL prints it: STARTS and ENDS when the source gave them as
    literals (MySQL fills STARTS with the creation time, which the replica does not have)."""
    parts = event_parts(event)
    text = f"CREATE {definer_clause(event.definer)}EVENT {quote(event.ref.name)} ON SCHEDULE "
    if parts.recurring:
        value = parts.interval_value or ""
        shown = value if _PLAIN_NUMBER.fullmatch(value) else quote_string(value)
        text += f"EVERY {shown} {parts.interval_field}"
        if parts.starts is not None:
            text += f" STARTS '{parts.starts}'"
        if parts.ends is not None:
            text += f" ENDS '{parts.ends}'"
    elif parts.execute_at is not None:
        text += f"AT '{parts.execute_at}'"
    else:
        text += f"AT {parts.at_expression}"
    completion = "PRESERVE" if parts.preserve else "NOT PRESERVE"
    text += f" ON COMPLETION {completion} {EVENT_STATUS_CLAUSE}"
    if parts.comment:
        text += f" COMMENT {quote_string(parts.comment)}"
    return f"{text} DO {parts.body}"
