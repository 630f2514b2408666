"""CREATE INDEX and DROP INDEX as replicated DDL.

Indexes change no row: applied to the engine's catalog they are an ALTER TABLE without
actions on the named table (which must exist: 1146), except DROP INDEX `PRIMARY`, which
drops the primary key. Read here with a pattern rather than sqlglot, which parses neither
``USING BTREE`` before ``ON`` nor FULLTEXT and SPATIAL indexes.
https://dev.mysql.com/doc/refman/8.4/en/create-index.html
"""

from __future__ import annotations

import re

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.ddl import AlterTable, DdlOperation, DropPrimaryKey
from spark_replica.applier_core.storage.interface import EngineError, TableRef

_NAME = r"(?:`(?:[^`]|``)+`|\w+)"
_TABLE = rf"(?P<first>{_NAME})(?:\s*\.\s*(?P<second>{_NAME}))?"
_CREATE = re.compile(
    r"\s*CREATE\s+(?:(?:ONLINE|OFFLINE)\s+)?(?:(?:UNIQUE|FULLTEXT|SPATIAL)\s+)?INDEX\s+"
    rf"(?:IF\s+NOT\s+EXISTS\s+)?(?P<index>{_NAME})\s+(?:USING\s+\w+\s+)?ON\s+{_TABLE}",
    re.IGNORECASE,
)
_DROP = re.compile(
    rf"\s*DROP\s+INDEX\s+(?:(?:ONLINE|OFFLINE)\s+)?(?:IF\s+EXISTS\s+)?(?P<index>{_NAME})\s+"
    rf"ON\s+{_TABLE}",
    re.IGNORECASE,
)


def parse_index_statement(statement: str, database: str | None) -> tuple[DdlOperation, ...] | None:
    """The operations of a CREATE INDEX or DROP INDEX statement; None for any other."""
    found = _CREATE.match(statement)
    dropping = found is None
    if found is None:
        found = _DROP.match(statement)
    if found is None:
        return None
    first, second = _unquote(found.group("first")), found.group("second")
    schema, table = (first, _unquote(second)) if second else (database, first)
    if not schema:
        raise EngineError.of(ErrorCode.NO_DB_ERROR)
    primary = dropping and _unquote(found.group("index")).upper() == "PRIMARY"
    actions = (DropPrimaryKey(),) if primary else ()
    return (AlterTable(TableRef(schema, table), actions, statement=statement),)


def _unquote(name: str) -> str:
    return name[1:-1].replace("``", "`") if name.startswith("`") else name
