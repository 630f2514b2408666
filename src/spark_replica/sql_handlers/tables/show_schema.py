"""SHOW DATABASES, TABLES, COLUMNS, INDEX and CREATE TABLE, answered as MySQL 8.4 does.

mysql-mimic turns these statements into information_schema queries with its own column names
(``Table_name`` for SHOW TABLES, lower-case names for SHOW INDEX), an empty result for an
unknown table, and no SHOW CREATE TABLE. Here they read the same information_schema rows
(:class:`InfoRows`: the virtual tables and the replicated ones) and answer with MySQL's
column names and order, its sorting, and its errors: 1046 without a database, 1049 for an
unknown database, 1146 for an unknown table. Views are listed with the tables, and SHOW
CREATE TABLE of a view answers as SHOW CREATE VIEW (``show_objects``), as in MySQL.
https://dev.mysql.com/doc/refman/8.4/en/show.html
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sqlglot import expressions as exp
from sqlglot.errors import OptimizeError
from sqlglot.executor import execute

from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.storage.objects import ObjectKind, StoredObject
from spark_replica.sql_handlers.tables.ddl import create_table_statement
from spark_replica.sql_handlers.tables.definitions import ValueKind, get_table
from spark_replica.sql_handlers.tables.object_texts import create_view_text
from spark_replica.sql_handlers.tables.replica_tables import (
    InfoRow,
    InfoRows,
    ReplicaCatalog,
    create_table_text,
)
from spark_replica.sql_handlers.tables.replica_types import CHARSET, COLLATION

Columns = list[tuple[str, ValueKind]]
Rows = list[tuple[object, ...]]
ShowResult = tuple[Columns, Rows]

#: The SHOW statements :func:`show` answers (sqlglot's names; SHOW SCHEMAS is DATABASES).
KINDS = frozenset({"DATABASES", "TABLES", "COLUMNS", "INDEX", "CREATE TABLE"})
_UNRESOLVED = re.compile(r"Column '([^']*)' could not be resolved")
#: Schemas whose table names resolve in any case (their tables are the server's own).
_SYSTEM_SCHEMAS = frozenset({"information_schema", "performance_schema", "mysql"})

_S, _I = ValueKind.STRING, ValueKind.INTEGER
_COLUMNS: Columns = [("Field", _S), ("Type", _S), ("Null", _S), ("Key", _S), ("Default", _S),
                     ("Extra", _S)]  # fmt: skip
_FULL_COLUMNS: Columns = [("Field", _S), ("Type", _S), ("Collation", _S), ("Null", _S),
                          ("Key", _S), ("Default", _S), ("Extra", _S), ("Privileges", _S),
                          ("Comment", _S)]  # fmt: skip
_INDEX: Columns = [("Table", _S), ("Non_unique", _I), ("Key_name", _S), ("Seq_in_index", _I),
                   ("Column_name", _S), ("Collation", _S), ("Cardinality", _I),
                   ("Sub_part", _I), ("Packed", _S), ("Null", _S), ("Index_type", _S),
                   ("Comment", _S), ("Index_comment", _S), ("Visible", _S),
                   ("Expression", _S)]  # fmt: skip
CREATE_VIEW_COLUMNS: Columns = [("View", _S), ("Create View", _S),
                                ("character_set_client", _S),
                                ("collation_connection", _S)]  # fmt: skip
_INDEX_FIELDS = ("table_name", "non_unique", "index_name", "seq_in_index", "column_name",
                 "collation", "cardinality", "sub_part", "packed", "nullable", "index_type",
                 "comment", "index_comment", "is_visible", "expression")  # fmt: skip


def show(
    view: InfoRows, catalog: ReplicaCatalog, statement: exp.Show, database: str | None
) -> ShowResult | None:
    """The result of ``statement``, or None for a SHOW this module does not answer."""
    kind = statement.name.upper()
    like = statement.text("like") if statement.args.get("like") is not None else None
    db = statement.text("db") or database or None
    full = bool(statement.args.get("full"))
    if kind == "DATABASES":
        result = show_databases(view, like)
    elif kind == "TABLES":
        result = show_tables(view, db, full=full, like=like)
    elif kind == "COLUMNS":
        result = show_columns(view, db, statement.text("target"), full=full, like=like)
    elif kind == "INDEX":
        result = show_index(view, db, statement.text("target"))
    elif kind == "CREATE TABLE":
        return show_create_table(catalog, db, statement.text("target"), database)
    else:
        return None
    where = statement.args.get("where")
    if isinstance(where, exp.Where):
        columns, rows = result
        return columns, filter_where([name for name, _ in columns], rows, where)
    return result


def show_databases(view: InfoRows, like: str | None = None) -> ShowResult:
    """SHOW DATABASES [LIKE]: sorted by name, compared case-sensitively."""
    names = sorted({str(row["schema_name"]) for row in view.schemata})
    header = "Database" if like is None else f"Database ({like})"
    return [(header, _S)], [(name,) for name in names if like_match(name, like)]


def show_tables(
    view: InfoRows, db: str | None, *, full: bool = False, like: str | None = None
) -> ShowResult:
    """SHOW [FULL] TABLES [FROM db] [LIKE]: ``Tables_in_<db>`` and, with FULL, Table_type."""
    schema = known_schema(view, db)
    header = f"Tables_in_{schema}" + ("" if like is None else f" ({like})")
    columns: Columns = [(header, _S)] + ([("Table_type", _S)] if full else [])
    found = sorted(
        (str(row["table_name"]), row["table_type"])
        for row in view.tables
        if row["table_schema"] == schema and like_match(str(row["table_name"]), like)
    )
    return columns, [(name, kind) if full else (name,) for name, kind in found]


def show_columns(
    view: InfoRows, db: str | None, table: str, *, full: bool = False, like: str | None = None
) -> ShowResult:
    """SHOW [FULL] COLUMNS FROM t [FROM db] [LIKE] (and DESCRIBE): by ordinal position; LIKE
    ignores case, as column names do."""
    key = _table(view, db, table)
    rows = sorted(view.column_rows.get(key, []), key=lambda r: _int(r["ordinal_position"]))
    shown: Rows = []
    for row in rows:
        if not like_match(str(row["column_name"]), like, ignore_case=True):
            continue
        name, kind = row["column_name"], row["column_type"]
        null, key_, default, extra = (
            row["is_nullable"],
            row["column_key"] or "",
            row["column_default"],
            row["extra"] or "",
        )
        if full:
            collation = None if row["collation_name"] == "NULL" else row["collation_name"]
            shown.append((name, kind, collation, null, key_, default, extra, row["privileges"],
                          row["column_comment"] or ""))  # fmt: skip
        else:
            shown.append((name, kind, null, key_, default, extra))
    return (_FULL_COLUMNS if full else _COLUMNS), shown


def show_index(view: InfoRows, db: str | None, table: str) -> ShowResult:
    """SHOW INDEX FROM t [FROM db]: MySQL 8.4's fifteen columns, in the table's key order
    (PRIMARY first, then as the catalog keeps the keys), each key's parts by position."""
    key = _table(view, db, table)
    rows = view.statistics_rows.get(key, [])
    first: dict[object, int] = {}
    for row in rows:
        first.setdefault(row["index_name"], len(first))
    ordered = sorted(rows, key=lambda r: (r["index_name"] != "PRIMARY", first[r["index_name"]],
                                          _int(r["seq_in_index"])))  # fmt: skip
    return _INDEX, [tuple(row.get(name) for name in _INDEX_FIELDS) for row in ordered]


def show_create_table(
    catalog: ReplicaCatalog, db: str | None, table: str, current: str | None = None
) -> ShowResult:
    """SHOW CREATE TABLE: a virtual table's MySQL DDL, or a replicated table's definition;
    for a view, what SHOW CREATE VIEW shows, as MySQL answers (``current``: the session's
    database, which a view's name is printed without)."""
    if not db:
        raise ReplicaError.from_code(ErrorCode.NO_DB_ERROR)
    view = catalog.find(ObjectKind.VIEW, db, table)
    if view is not None:
        return CREATE_VIEW_COLUMNS, [create_view_row(view, current)]
    virtual = get_table(db, table)
    if virtual is not None:
        text = create_table_statement(virtual)
        name = virtual.name
    else:
        definition = catalog.definition(db, table)
        if definition is None:
            raise ReplicaError.from_code(ErrorCode.NO_SUCH_TABLE, db, table)
        text, name = create_table_text(table, definition, db), table
    return [("Table", _S), ("Create Table", _S)], [(name, text)]


def create_view_row(view: StoredObject, current: str | None) -> tuple[object, ...]:
    """SHOW CREATE VIEW's row (the creating session's character set and collation are not
    kept: MySQL 8.4's defaults)."""
    return (view.ref.name, create_view_text(view, current), CHARSET, COLLATION)


def filter_where(columns: Sequence[str], rows: Rows, where: exp.Where) -> Rows:
    """The rows of a SHOW result that satisfy its WHERE clause (column names ignore case)."""
    names = [c.lower() for c in columns]
    table = [dict(zip(names, row, strict=True), __row=i) for i, row in enumerate(rows)]
    if not table:
        return []
    condition = where.this.copy().transform(_lower_column)
    query = exp.select(exp.column("__row")).from_("t").where(condition)
    try:
        result = execute(query, tables={"t": table}, dialect="mysql")
    except OptimizeError as e:
        unknown = _UNRESOLVED.search(str(e))
        if unknown is None:
            raise
        raise ReplicaError.from_code(
            ErrorCode.BAD_FIELD_ERROR, unknown.group(1), "where clause"
        ) from e
    return [rows[int(r[0])] for r in result.rows]


def _lower_column(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Column):
        return exp.column(node.name.lower(), quoted=True)
    return node


def known_schema(view: InfoRows, db: str | None) -> str:
    """The stored name of database ``db``: 1046 when there is none, 1049 when unknown."""
    if not db:
        raise ReplicaError.from_code(ErrorCode.NO_DB_ERROR)
    names = {str(row["schema_name"]) for row in view.schemata}
    if db in names:
        return db
    if db.lower() == "information_schema":
        return "information_schema"
    raise ReplicaError.from_code(ErrorCode.BAD_DB_ERROR, db)


def _table(view: InfoRows, db: str | None, table: str) -> tuple[str, str]:
    """The (schema, table) key of a table: 1046 without a database, 1146 when unknown."""
    if not db:
        raise ReplicaError.from_code(ErrorCode.NO_DB_ERROR)
    if (db, table) in view.table_rows:
        return db, table
    if db.lower() in _SYSTEM_SCHEMAS:
        folded = (db.lower(), table.lower())
        for schema, name in view.table_rows:
            if (schema.lower(), name.lower()) == folded:
                return schema, name
    raise ReplicaError.from_code(ErrorCode.NO_SUCH_TABLE, db, table)


def like_match(value: str, pattern: str | None, *, ignore_case: bool = False) -> bool:
    """SQL LIKE: ``%`` any run, ``_`` one character, ``\\`` escapes the next one."""
    if pattern is None:
        return True
    regex = "".join(
        ".*" if part == "%" else "." if part == "_" else re.escape(part[-1])
        for part in re.findall(r"\\.|.", pattern, re.S)
    )
    flags = re.S | (re.I if ignore_case else 0)
    return re.fullmatch(regex, value, flags) is not None


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


__all__ = ["KINDS", "InfoRow", "ShowResult", "show", "show_create_table"]
