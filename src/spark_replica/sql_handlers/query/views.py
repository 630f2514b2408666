"""SELECT over replicated views: each reference to a view becomes its query, as a derived
table under the name the query uses for the view (MySQL's TEMPTABLE algorithm; MERGE gives
the same rows).

The view's query is the text the source logged (``StoredObject.select``), read again at
every query, so it runs over the same snapshot as the rest of the query. Its tables without
a database belong to the view's database, not the session's. A view over views is expanded
in turn; a view that reaches itself is refused with 1462, one whose tables are gone with
1356, as MySQL does.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlglot
from sqlglot import expressions as exp
from sqlglot.errors import SqlglotError

from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.storage import TableRef
from spark_replica.applier_core.storage.objects import ObjectKind, StoredObject
from spark_replica.sql_handlers.query.interfaces import TableCatalog
from spark_replica.sql_handlers.query.routines import FunctionLookup, qualify_calls

#: The view of a table name, if it names one.
ViewLookup = Callable[[TableRef], StoredObject | None]
#: Whether the replicated table exists (the query engine's resolver, as a predicate).
TableExists = Callable[[TableRef], bool]
#: The table references of a tree that name replicated tables or views (not CTEs, not DUAL).
FindTables = Callable[[exp.Expr], list[exp.Table]]
#: Names the result columns of a query the way MySQL does (the view's own column names).
NameColumns = Callable[[exp.Expr], None]


def view_lookup(catalog: TableCatalog) -> ViewLookup:
    """The views ``catalog`` keeps now, by name."""
    views = {
        TableRef(o.ref.schema, o.ref.name): o
        for o in catalog.objects()
        if o.ref.kind is ObjectKind.VIEW
    }
    return views.get


def stored_functions(catalog: TableCatalog) -> FunctionLookup:
    """The stored functions ``catalog`` keeps now, by ``(database, folded name)``."""
    kept = {
        (o.ref.schema, o.ref.name.casefold()): o
        for o in catalog.objects()
        if o.ref.kind is ObjectKind.FUNCTION
    }
    return kept.get


def expand_views(
    tree: exp.Expr,
    database: str | None,
    lookup: ViewLookup,
    exists: TableExists,
    find_tables: FindTables,
    name_columns: NameColumns,
    functions: FunctionLookup = lambda name: None,
) -> None:
    """Replace, in place, every reference to a view in ``tree`` by the view's query (its
    calls of stored functions named with the view's database: ``routines``).

    Raises:
        ReplicaError: 1462 for a view that reaches itself, 1356 for one whose query names
            a table that is gone or cannot be read."""
    for table in find_tables(tree):
        schema = table.db or database
        view = lookup(TableRef(schema, table.name)) if schema else None
        if view is not None:
            _expand(table, view, (), lookup, exists, find_tables, name_columns, functions)


def _expand(
    table: exp.Table,
    view: StoredObject,
    outer: tuple[StoredObject, ...],
    lookup: ViewLookup,
    exists: TableExists,
    find_tables: FindTables,
    name_columns: NameColumns,
    functions: FunctionLookup,
) -> None:
    ref = view.ref
    if any(o.ref == ref for o in outer):
        raise ReplicaError.from_code(ErrorCode.VIEW_RECURSIVE, ref.schema, ref.name)
    body = _query(view)
    qualify_calls(body, ref.schema, functions)
    name_columns(body)
    for inner in find_tables(body):
        inner_ref = TableRef(inner.db or ref.schema, inner.name)
        inner.set("db", exp.to_identifier(inner_ref.schema, quoted=True))
        nested = lookup(inner_ref)
        if nested is not None:
            chain = (*outer, view)
            _expand(inner, nested, chain, lookup, exists, find_tables, name_columns, functions)
        elif not exists(inner_ref):
            raise ReplicaError.from_code(ErrorCode.VIEW_INVALID, ref.schema, ref.name)
    alias = table.alias or table.name
    columns = [exp.to_identifier(c, quoted=True) for c in view.columns]
    derived = exp.Subquery(
        this=body,
        alias=exp.TableAlias(this=exp.to_identifier(alias, quoted=True), columns=columns),
    )
    _unqualify_columns(table, ref.schema, alias)
    table.replace(derived)


def _query(view: StoredObject) -> exp.Expr:
    try:
        return sqlglot.parse_one(view.select, read="mysql")
    except SqlglotError as error:
        raise ReplicaError.from_code(
            ErrorCode.VIEW_INVALID, view.ref.schema, view.ref.name
        ) from error


def _unqualify_columns(table: exp.Table, schema: str, alias: str) -> None:
    """``db.view.col`` in the query becomes ``view.col``: a derived table has no database."""
    select = table.parent.parent if table.parent is not None else None
    if select is None or not table.db:
        return
    for column in select.find_all(exp.Column):
        if column.text("db") == schema and column.table == alias:
            column.set("db", None)
