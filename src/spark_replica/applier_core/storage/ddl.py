"""Replicated DDL: the operations a DDL statement stands for, and the catalog (databases and
table definitions) they change.

``ddl_parser.parse_ddl`` turns MySQL statements into operations; ``Catalog.apply`` checks an
operation against the catalog with MySQL's errors and returns the catalog after it. Both are
engine-independent: the in-memory engine and the Spark engine check a statement this way and
then change their data to match.
https://dev.mysql.com/doc/refman/8.4/en/sql-data-definition-statements.html
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.interface import Column, EngineError, TableDef, TableRef

# -- operations -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CreateDatabase:
    name: str
    if_not_exists: bool = False


@dataclass(frozen=True, slots=True)
class DropDatabase:
    name: str
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class CreateTable:
    """``definition`` is None for ``CREATE TABLE t LIKE other`` (``like`` names the other)."""

    table: TableRef
    definition: TableDef | None
    if_not_exists: bool = False
    like: TableRef | None = None


@dataclass(frozen=True, slots=True)
class DropTable:
    table: TableRef
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class TruncateTable:
    table: TableRef


@dataclass(frozen=True, slots=True)
class RenameTable:
    old: TableRef
    new: TableRef


@dataclass(frozen=True, slots=True)
class AddColumn:
    """``after``: the column to follow; neither it nor ``first``: the new column goes last."""

    column: Column
    first: bool = False
    after: str | None = None
    if_not_exists: bool = False


@dataclass(frozen=True, slots=True)
class DropColumn:
    name: str
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class AlterTable:
    table: TableRef
    actions: tuple[AddColumn | DropColumn, ...]


DdlOperation = (
    CreateDatabase
    | DropDatabase
    | CreateTable
    | DropTable
    | TruncateTable
    | RenameTable
    | AlterTable
)


# -- the catalog ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Catalog:
    """Databases and table definitions; immutable (``apply`` returns a new catalog)."""

    databases: frozenset[str] = frozenset()
    tables: Mapping[TableRef, TableDef] = field(default_factory=lambda: MappingProxyType({}))

    def apply(self, operation: DdlOperation) -> Catalog:
        """The catalog after ``operation``; raises ``EngineError`` with MySQL's error when the
        operation cannot run (1007, 1008, 1049, 1050, 1051, 1060, 1090, 1091, 1146)."""
        return _apply(operation, self)

    def definition(self, table: TableRef) -> TableDef:
        found = self.tables.get(table)
        if found is None:
            raise no_such_table(table)
        return found

    def _with(
        self,
        databases: frozenset[str] | None = None,
        tables: dict[TableRef, TableDef] | None = None,
    ) -> Catalog:
        return Catalog(
            self.databases if databases is None else databases,
            self.tables if tables is None else MappingProxyType(tables),
        )


def no_such_table(table: TableRef) -> EngineError:
    return EngineError.of(ErrorCode.NO_SUCH_TABLE, table.schema, table.table, table=table)


@functools.singledispatch
def _apply(operation: object, catalog: Catalog) -> Catalog:
    raise TypeError(f"not a DDL operation: {operation!r}")


@_apply.register
def _(op: CreateDatabase, catalog: Catalog) -> Catalog:
    if op.name in catalog.databases:
        if op.if_not_exists:
            return catalog
        raise EngineError.of(ErrorCode.DB_CREATE_EXISTS, op.name)
    return catalog._with(databases=catalog.databases | {op.name})


@_apply.register
def _(op: DropDatabase, catalog: Catalog) -> Catalog:
    if op.name not in catalog.databases:
        if op.if_exists:
            return catalog
        raise EngineError.of(ErrorCode.DB_DROP_EXISTS, op.name)
    tables = {ref: d for ref, d in catalog.tables.items() if ref.schema != op.name}
    return catalog._with(catalog.databases - {op.name}, tables)


@_apply.register
def _(op: CreateTable, catalog: Catalog) -> Catalog:
    if op.table.schema not in catalog.databases:
        raise EngineError.of(ErrorCode.BAD_DB_ERROR, op.table.schema)
    if op.table in catalog.tables:
        if op.if_not_exists:
            return catalog
        raise EngineError.of(ErrorCode.TABLE_EXISTS_ERROR, op.table.table, table=op.table)
    definition = op.definition
    if definition is None:
        assert op.like is not None
        definition = catalog.definition(op.like)
    return catalog._with(tables={**catalog.tables, op.table: definition})


@_apply.register
def _(op: DropTable, catalog: Catalog) -> Catalog:
    if op.table not in catalog.tables:
        if op.if_exists:
            return catalog
        raise EngineError.of(ErrorCode.BAD_TABLE_ERROR, str(op.table), table=op.table)
    tables = dict(catalog.tables)
    del tables[op.table]
    return catalog._with(tables=tables)


@_apply.register
def _(op: TruncateTable, catalog: Catalog) -> Catalog:
    catalog.definition(op.table)
    return catalog


@_apply.register
def _(op: RenameTable, catalog: Catalog) -> Catalog:
    definition = catalog.definition(op.old)
    if op.new in catalog.tables:
        raise EngineError.of(ErrorCode.TABLE_EXISTS_ERROR, op.new.table, table=op.new)
    if op.new.schema not in catalog.databases:
        raise EngineError.of(ErrorCode.BAD_DB_ERROR, op.new.schema)
    tables = {ref: d for ref, d in catalog.tables.items() if ref != op.old}
    tables[op.new] = definition
    return catalog._with(tables=tables)


@_apply.register
def _(op: AlterTable, catalog: Catalog) -> Catalog:
    definition, _sources = alter_columns(op.table, catalog.definition(op.table), op.actions)
    return catalog._with(tables={**catalog.tables, op.table: definition})


def alter_columns(
    table: TableRef, definition: TableDef, actions: tuple[AddColumn | DropColumn, ...]
) -> tuple[TableDef, tuple[int | None, ...]]:
    """The definition after ADD/DROP COLUMN ``actions``, and for each of its columns the
    index of the column it comes from (None: a new column, NULL in existing rows).

    A dropped key column leaves the primary key (a key left with no column is dropped)."""
    columns: list[tuple[Column, int | None]] = list(
        zip(definition.columns, range(len(definition.columns)), strict=True)
    )
    key = dict(zip(definition.primary_key, definition.key_prefix, strict=True))
    key_order = list(definition.primary_key)

    def position(name: str) -> int | None:
        folded = name.casefold()
        return next((i for i, (c, _) in enumerate(columns) if c.name.casefold() == folded), None)

    for action in actions:
        if isinstance(action, AddColumn):
            if position(action.column.name) is not None:
                if action.if_not_exists:
                    continue
                raise EngineError.of(ErrorCode.DUP_FIELDNAME, action.column.name)
            at = len(columns)
            if action.first:
                at = 0
            elif action.after is not None:
                after = position(action.after)
                if after is None:
                    raise EngineError.of(ErrorCode.BAD_FIELD_ERROR, action.after, table.table)
                at = after + 1
            columns.insert(at, (action.column, None))
        else:
            at_drop = position(action.name)
            if at_drop is None:
                if action.if_exists:
                    continue
                raise EngineError.of(ErrorCode.CANT_DROP_FIELD_OR_KEY, action.name)
            columns.pop(at_drop)
    if not columns:
        raise EngineError.of(ErrorCode.CANT_REMOVE_ALL_FIELDS)
    sources = tuple(source for _, source in columns)
    new_index = {source: i for i, source in enumerate(sources) if source is not None}
    kept = [old for old in key_order if old in new_index]
    result = TableDef(
        tuple(column for column, _ in columns),
        tuple(new_index[old] for old in kept),
        tuple(key[old] for old in kept),
    )
    return result, sources


def unsupported(what: str, statement: str) -> EngineError:
    """ER_NOT_SUPPORTED_YET (1235) for ``what``, naming the statement."""
    text = " ".join(statement.split())
    if len(text) > 200:
        text = text[:197] + "..."
    error = EngineError.of(ErrorCode.NOT_SUPPORTED_YET, what)
    error.message = f"{error.message} (statement: {text})"
    error.args = (error.message,)
    return error
