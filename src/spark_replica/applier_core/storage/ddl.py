"""Replicated DDL: the catalog (databases, table definitions, objects, accounts) that
operations change.

``ddl_parser.parse_ddl`` turns MySQL statements into operations (``ddl_operations``);
``Catalog.apply`` checks an operation against the catalog with MySQL's errors and returns the
catalog after it. Both are engine-independent: the store checks a statement this way and then
changes its data to match: for ALTER TABLE, ``ddl_alter.alter_columns`` gives the new
definition and how each existing row converts.
https://dev.mysql.com/doc/refman/8.4/en/sql-data-definition-statements.html
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.accounts import (
    AccountOperation,
    Accounts,
    apply_account,
    no_accounts,
)
from spark_replica.applier_core.storage.collations import with_collations
from spark_replica.applier_core.storage.constraints import (
    after_rename,
    referencing_renamed,
    renamed_constraints,
)
from spark_replica.applier_core.storage.ddl_alter import alter_columns
from spark_replica.applier_core.storage.ddl_operations import (
    AlterDatabase,
    AlterTable,
    CreateDatabase,
    CreateTable,
    DdlOperation,
    DropDatabase,
    DropTable,
    Objects,
    RenameTable,
    TruncateTable,
)
from spark_replica.applier_core.storage.interface import (
    EngineError,
    TableDef,
    TableRef,
)
from spark_replica.applier_core.storage.objects import (
    AlterObject,
    CreateObject,
    DropObject,
    ObjectKind,
    ObjectRef,
    StoredObject,
)

# -- the catalog ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Catalog:
    """Databases and table definitions; immutable (``apply`` returns a new catalog)."""

    databases: frozenset[str] = frozenset()
    tables: Mapping[TableRef, TableDef] = field(default_factory=lambda: MappingProxyType({}))
    #: Views, triggers, routines and events (``objects``), by ``ObjectRef.key``.
    objects: Objects = field(default_factory=lambda: MappingProxyType({}))
    #: The replicated accounts (``accounts``): they change with the transaction that carries
    #: the account statement, like the rest of the catalog.
    accounts: Accounts = field(default_factory=no_accounts)
    #: Each database's default collation (``collations``), where it is known.
    collations: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def apply(self, operation: DdlOperation) -> Catalog:
        """The catalog after ``operation``; raises ``EngineError`` with MySQL's error when the
        operation cannot run (1007, 1008, 1049, 1050, 1051, 1054, 1060, 1061, 1068, 1072,
        1090, 1091, 1146, 1176, 1280; 1235 for an ALTER TABLE this module refuses to guess)."""
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
        objects: dict[tuple[ObjectKind, str, str], StoredObject] | None = None,
        collations: dict[str, str] | None = None,
    ) -> Catalog:
        return Catalog(
            self.databases if databases is None else databases,
            self.tables if tables is None else MappingProxyType(tables),
            self.objects if objects is None else MappingProxyType(objects),
            self.accounts,
            self.collations if collations is None else MappingProxyType(collations),
        )

    def view(self, table: TableRef) -> StoredObject | None:
        """The view named ``table``, if there is one."""
        return self.objects.get((ObjectKind.VIEW, table.schema, table.table))


def no_such_table(table: TableRef) -> EngineError:
    return EngineError.of(ErrorCode.NO_SUCH_TABLE, table.schema, table.table, table=table)


@functools.singledispatch
def _apply(operation: object, catalog: Catalog) -> Catalog:
    raise TypeError(f"not a DDL operation: {operation!r}")


#: The dispatcher of ``Catalog.apply``, for modules whose operations refine these
#: (``ddl_sequence``: CREATE and DROP SEQUENCE are CREATE and DROP TABLE with checks).
apply_operation = _apply


@_apply.register
def _(op: CreateDatabase, catalog: Catalog) -> Catalog:
    if op.name in catalog.databases:
        if op.if_not_exists:
            return catalog
        raise EngineError.of(ErrorCode.DB_CREATE_EXISTS, op.name)
    collations = {**catalog.collations, op.name: op.collation} if op.collation else None
    return catalog._with(databases=catalog.databases | {op.name}, collations=collations)


@_apply.register
def _(op: AlterDatabase, catalog: Catalog) -> Catalog:
    if op.name not in catalog.databases:
        raise EngineError.of(ErrorCode.BAD_DB_ERROR, op.name)
    return catalog._with(collations={**catalog.collations, op.name: op.collation})


@_apply.register
def _(op: DropDatabase, catalog: Catalog) -> Catalog:
    if op.name not in catalog.databases:
        if op.if_exists:
            return catalog
        raise EngineError.of(ErrorCode.DB_DROP_EXISTS, op.name)
    tables = {ref: d for ref, d in catalog.tables.items() if ref.schema != op.name}
    objects = {key: o for key, o in catalog.objects.items() if o.ref.schema != op.name}
    collations = {name: c for name, c in catalog.collations.items() if name != op.name}
    return catalog._with(catalog.databases - {op.name}, tables, objects, collations)


@_apply.register
def _(op: CreateTable, catalog: Catalog) -> Catalog:
    if op.table.schema not in catalog.databases:
        raise EngineError.of(ErrorCode.BAD_DB_ERROR, op.table.schema)
    if op.table in catalog.tables or catalog.view(op.table) is not None:
        if op.if_not_exists:
            return catalog
        raise EngineError.of(ErrorCode.TABLE_EXISTS_ERROR, op.table.table, table=op.table)
    definition = op.definition
    objects = None
    if definition is None:  # LIKE copies checks, not foreign keys
        assert op.like is not None
        definition = renamed_constraints(catalog.definition(op.like), op.like.table, op.table.table)
        definition = replace(definition, foreign_keys=())
        marker = catalog.objects.get(_sequence_key(op.like))
        if marker is not None:  # a copy of a MariaDB sequence is a sequence (ddl_sequence)
            copy = replace(marker, ref=marker.ref._replace(schema=op.table.schema,
                                                           name=op.table.table))  # fmt: skip
            objects = {**catalog.objects, copy.ref.key: copy}
    else:
        definition = with_collations(definition, catalog.collations.get(op.table.schema, ""))
    return catalog._with(tables={**catalog.tables, op.table: definition}, objects=objects)


@_apply.register
def _(op: DropTable, catalog: Catalog) -> Catalog:
    if op.table not in catalog.tables:
        if op.if_exists:
            return catalog
        raise EngineError.of(ErrorCode.BAD_TABLE_ERROR, str(op.table), table=op.table)
    tables = dict(catalog.tables)
    del tables[op.table]
    return catalog._with(tables=tables, objects=_without_triggers_of(catalog, op.table))


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
    tables.update(after_rename(catalog.tables, op.old, op.new))
    objects = dict(catalog.objects)
    for key, found in catalog.objects.items():  # triggers and the sequence mark follow
        if key == _sequence_key(op.old):
            del objects[key]
            objects[_sequence_key(op.new)] = replace(found, ref=found.ref._replace(
                schema=op.new.schema, name=op.new.table))  # fmt: skip
        elif (
            found.ref.kind is ObjectKind.TRIGGER
            and TableRef(found.ref.schema, found.table) == op.old
        ):
            if op.new.schema == op.old.schema:
                objects[key] = replace(found, table=op.new.table)
            else:
                del objects[key]
    return catalog._with(tables=tables, objects=objects)


@_apply.register
def _(op: AlterTable, catalog: Catalog) -> Catalog:
    old = catalog.definition(op.table)
    altered = alter_columns(op, old)
    definition = altered.definition
    renamed = {
        old.columns[source].name: column.name
        for source, column in zip(altered.sources, definition.columns, strict=True)
        if source is not None and old.columns[source].name != column.name
    }
    tables = {**catalog.tables, op.table: definition}
    tables.update(referencing_renamed(tables, op.table, renamed))
    return catalog._with(tables=tables)


def _without_triggers_of(
    catalog: Catalog, table: TableRef
) -> dict[tuple[ObjectKind, str, str], StoredObject]:
    """The objects without ``table``'s triggers and its sequence mark."""
    return {
        key: found
        for key, found in catalog.objects.items()
        if (found.ref.kind is not ObjectKind.TRIGGER
            or TableRef(found.ref.schema, found.table) != table)
        and key != _sequence_key(table)
    }  # fmt: skip


def _sequence_key(table: TableRef) -> tuple[ObjectKind, str, str]:
    return (ObjectKind.SEQUENCE, table.schema, table.table)


@_apply.register
def _(op: CreateObject, catalog: Catalog) -> Catalog:
    ref = op.stored.ref
    if ref.schema not in catalog.databases:
        raise EngineError.of(ErrorCode.BAD_DB_ERROR, ref.schema)
    existing = catalog.objects.get(ref.key)
    if op.alter and existing is None:
        raise EngineError.of(ErrorCode.NO_SUCH_TABLE, ref.schema, ref.name)
    table = TableRef(ref.schema, ref.name)
    if ref.kind is ObjectKind.VIEW and table in catalog.tables:
        if op.replace or op.alter:
            raise EngineError.of(ErrorCode.WRONG_OBJECT, ref.schema, ref.name, "VIEW")
        raise EngineError.of(ErrorCode.TABLE_EXISTS_ERROR, ref.name, table=table)
    if ref.kind is ObjectKind.TRIGGER:
        owner = TableRef(ref.schema, op.stored.table)
        catalog.definition(owner)  # 1146 when the table is not there
    if existing is not None and not (op.replace or op.alter):
        if op.if_not_exists:
            return catalog
        raise _exists(ref)
    return catalog._with(objects={**catalog.objects, ref.key: op.stored})


@_apply.register
def _(op: DropObject, catalog: Catalog) -> Catalog:
    ref = op.ref
    if ref.key not in catalog.objects:
        if ref.kind is ObjectKind.VIEW and TableRef(ref.schema, ref.name) in catalog.tables:
            raise EngineError.of(ErrorCode.WRONG_OBJECT, ref.schema, ref.name, "VIEW")
        if op.if_exists:
            return catalog
        raise _missing(ref)
    objects = dict(catalog.objects)
    del objects[ref.key]
    return catalog._with(objects=objects)


@_apply.register
def _(op: AlterObject, catalog: Catalog) -> Catalog:
    found = catalog.objects.get(op.ref.key)
    if found is None:
        raise _missing(op.ref)
    if not op.rename_to:
        return catalog
    renamed = replace(found, ref=op.ref._replace(name=op.rename_to))
    objects = {k: o for k, o in catalog.objects.items() if k != op.ref.key}
    objects[renamed.ref.key] = renamed
    return catalog._with(objects=objects)


@_apply.register
def _(op: AccountOperation, catalog: Catalog) -> Catalog:
    return replace(catalog, accounts=apply_account(op, catalog.accounts))


def _exists(ref: ObjectRef) -> EngineError:
    if ref.kind is ObjectKind.VIEW:
        return EngineError.of(ErrorCode.TABLE_EXISTS_ERROR, ref.name)
    if ref.kind is ObjectKind.TRIGGER:
        return EngineError.of(ErrorCode.TRG_ALREADY_EXISTS)
    if ref.kind is ObjectKind.EVENT:
        return EngineError.of(ErrorCode.EVENT_ALREADY_EXISTS, ref.name)
    return EngineError.of(ErrorCode.SP_ALREADY_EXISTS, ref.kind.value, ref.name)


def _missing(ref: ObjectRef) -> EngineError:
    if ref.kind is ObjectKind.VIEW:
        return EngineError.of(ErrorCode.BAD_TABLE_ERROR, f"{ref.schema}.{ref.name}")
    if ref.kind is ObjectKind.TRIGGER:
        return EngineError.of(ErrorCode.TRG_DOES_NOT_EXIST)
    if ref.kind is ObjectKind.EVENT:
        return EngineError.of(ErrorCode.EVENT_DOES_NOT_EXIST, ref.name)
    return EngineError.of(ErrorCode.SP_DOES_NOT_EXIST, ref.kind.value, f"{ref.schema}.{ref.name}")
