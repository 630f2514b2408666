"""Secondary keys in replicated DDL: CREATE INDEX, DROP INDEX, and the key clauses of CREATE
TABLE and ALTER TABLE as ``indexes.IndexSpec``.

CREATE INDEX and DROP INDEX are ALTER TABLE ADD INDEX and DROP INDEX on the named table
(which must exist: 1146); DROP INDEX `PRIMARY` drops the primary key. Their head is read with
a pattern (sqlglot parses neither ``USING BTREE`` before ``ON`` nor FULLTEXT and SPATIAL
indexes there); the key parts and options are read by sqlglot as the ADD INDEX clause they
equal. https://dev.mysql.com/doc/refman/8.4/en/create-index.html

A functional key part (``KEY ((a + 1))``) is kept with its expression as MySQL 8.4 shows it
(``ddl_constraints.key_expression``). Foreign keys and CHECK constraints are read by
``ddl_constraints``.
"""

from __future__ import annotations

import re

from sqlglot import expressions as exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.ddl_constraints import key_expression
from spark_replica.applier_core.storage.ddl_operations import (
    AddIndex,
    AlterTable,
    DdlOperation,
    DropIndex,
    DropPrimaryKey,
    unsupported,
)
from spark_replica.applier_core.storage.indexes import IndexSpec, KeyPart
from spark_replica.applier_core.storage.interface import EngineError, IndexKind, TableRef

_NAME = r"(?:`(?:[^`]|``)+`|\w+)"
_TABLE = rf"(?P<first>{_NAME})(?:\s*\.\s*(?P<second>{_NAME}))?"
_CREATE = re.compile(
    r"\s*CREATE\s+(?:(?:ONLINE|OFFLINE)\s+)?(?:(?P<kind>UNIQUE|FULLTEXT|SPATIAL)\s+)?INDEX\s+"
    rf"(?P<exists>IF\s+NOT\s+EXISTS\s+)?(?P<index>{_NAME})\s+(?P<using>USING\s+\w+\s+)?"
    rf"ON\s+{_TABLE}",
    re.IGNORECASE,
)
_DROP = re.compile(
    rf"\s*DROP\s+INDEX\s+(?:(?:ONLINE|OFFLINE)\s+)?(?P<exists>IF\s+EXISTS\s+)?(?P<index>{_NAME})"
    rf"\s+ON\s+{_TABLE}",
    re.IGNORECASE,
)
_MYSQL = Dialect.get_or_raise("mysql")


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
    ref = TableRef(schema, table)
    name = _unquote(found.group("index"))
    exists = bool(found.group("exists"))
    if dropping:
        drop = DropPrimaryKey() if name.upper() == "PRIMARY" else DropIndex(name, exists)
        return (AlterTable(ref, (drop,), statement=statement),)
    spec = _created_index(statement, found)
    return (AlterTable(ref, (AddIndex(spec, exists),), statement=statement),)


def _created_index(statement: str, head: re.Match[str]) -> IndexSpec:
    """CREATE INDEX's key, read as ``ALTER TABLE t ADD <kind> INDEX <name> <the rest>``."""
    kind = head.group("kind") or ""
    clause = f"ADD {kind} INDEX {head.group('index')} {head.group('using') or ''}"
    rest = statement[head.end() :]
    try:
        trees = _MYSQL.parse(f"ALTER TABLE t {clause}{rest}")
    except (ParseError, TokenError) as error:
        raise unsupported(f"this CREATE INDEX ({error})", statement) from error
    tree = trees[0] if len(trees) == 1 else None
    actions = (tree.args.get("actions") or []) if isinstance(tree, exp.Alter) else []
    added = actions[0].expressions if len(actions) == 1 else []
    spec = index_spec(added[0]) if len(added) == 1 else None
    if spec is None:
        raise unsupported("this CREATE INDEX", statement)
    return spec


def index_spec(item: exp.Expression) -> IndexSpec | None:
    """A key clause of CREATE TABLE or ALTER TABLE ADD as a secondary key; None for what is
    no secondary key the catalog keeps (PRIMARY KEY, FOREIGN KEY, CHECK).
    ``CONSTRAINT c UNIQUE (a)`` names the key ``c`` unless the key has its own name, as in
    MySQL."""
    if isinstance(item, exp.Constraint):
        inner = [index_spec(part) for part in item.expressions]
        found = next((spec for spec in inner if spec is not None), None)
        if found is not None and found.name is None and found.kind is IndexKind.UNIQUE:
            return IndexSpec(item.name, found.kind, found.parts, found.comment, found.visible)
        return found
    if isinstance(item, exp.UniqueColumnConstraint):
        schema = item.this
        if not isinstance(schema, exp.Schema):
            return None
        name = schema.this.name if schema.this is not None else None
        return _spec(name, IndexKind.UNIQUE, schema.expressions, item)
    if isinstance(item, exp.IndexColumnConstraint):
        kind = str(item.args.get("kind") or "").upper()
        index_kind = IndexKind(kind) if kind in ("FULLTEXT", "SPATIAL") else IndexKind.INDEX
        name = item.this.name if item.this is not None else None
        return _spec(name, index_kind, item.expressions, item)
    return None


def column_unique(column: str) -> IndexSpec:
    """A column's UNIQUE [KEY] attribute: a one-column UNIQUE key MySQL names."""
    return IndexSpec(None, IndexKind.UNIQUE, (KeyPart(column),))


def _spec(
    name: str | None, kind: IndexKind, parts: list[exp.Expression], key: exp.Expression
) -> IndexSpec | None:
    read = [_key_part(part) for part in parts]
    if not read or any(part is None for part in read):
        return None
    comment, visible = "", True
    for option in key.args.get("options") or ():
        if option.args.get("comment") is not None:
            comment = option.args["comment"].name
        if option.args.get("visible") is not None:
            visible = bool(option.args["visible"])
    return IndexSpec(name or None, kind, tuple(p for p in read if p is not None), comment, visible)


def _key_part(part: exp.Expression) -> KeyPart | None:
    descending = False
    if isinstance(part, exp.Ordered):
        descending = bool(part.args.get("desc"))
        part = part.this
    if isinstance(part, exp.ColumnPrefix):
        return KeyPart(part.this.name, int(part.expression.name), descending)
    if isinstance(part, exp.Column | exp.Identifier):
        return KeyPart(part.name, 0, descending)
    if isinstance(part, exp.Paren):  # a functional key part: ((expression))
        return KeyPart("", 0, descending, key_expression(part.this))
    return None


def _unquote(name: str) -> str:
    return name[1:-1].replace("``", "`") if name.startswith("`") else name
