"""Replicated DDL on the Spark engine's durable state and its Iceberg catalog.

The in-memory side has already checked and applied each operation at commit (``ddl``); here
the flusher replays it on the recorded state, in commit order, after every earlier commit is
durable, and lists what it means for the catalog (``DdlOutcome.steps``, run in order before
the commit point; ``created`` after them):

* CREATE DATABASE: the namespace. DROP DATABASE: its tables are dropped as below; the
  namespace goes after the commit point.
* CREATE TABLE [LIKE]: a new Iceberg table (with an empty first snapshot).
* DROP TABLE: the table moves to the ``DROPPED`` namespace; it is purged after the commit
  point once no query reads it.
* RENAME TABLE: a catalog rename.
* TRUNCATE TABLE: ``DELETE FROM`` the table (a new snapshot).
* ALTER TABLE that keeps the stored values (``schema_evolution``): an Iceberg schema
  change of the same table, then an empty commit so that reads of the recorded snapshot see
  the new schema. Any other ALTER: the table gets a new id and a new Iceberg table holding
  its rows right after the transaction (``Commit.rewrites``, by its final name); the old
  one is dropped as above.
* Views, triggers, routines, events and accounts: state only.

A crash anywhere before the commit point leaves the catalog ahead of the recorded state;
recovery (``iceberg_recovery``) puts every table back by its id.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import get_args

from spark_replica.applier_core.storage.accounts import AccountOperation
from spark_replica.applier_core.storage.ddl import Catalog
from spark_replica.applier_core.storage.ddl_alter import alter_columns
from spark_replica.applier_core.storage.ddl_operations import (
    AlterDatabase,
    AlterTable,
    CreateDatabase,
    CreateTable,
    DdlOperation,
    DropDatabase,
    DropTable,
    RenameTable,
    TruncateTable,
)
from spark_replica.applier_core.storage.interface import TableDef, TableRef
from spark_replica.applier_core.storage.objects import AlterObject, CreateObject, DropObject
from spark_replica.applier_core.storage.spark.schema_evolution import SchemaChange, schema_change
from spark_replica.applier_core.storage.spark.state import DurableState, StoredTable

#: Operations that change only the recorded state: kept objects and accounts.
_STATE_ONLY = (AlterDatabase, CreateObject, DropObject, AlterObject, *get_args(AccountOperation))


@dataclass(frozen=True, slots=True)
class Step:
    """One catalog operation of a DDL transaction on a table that existed before it:
    ``drop`` (move ``table`` aside), ``rename`` (``table`` → ``to``), ``truncate``,
    ``evolve`` (``change`` its schema)."""

    kind: str
    table: TableRef
    table_id: int
    to: TableRef | None = None
    change: SchemaChange | None = None


@dataclass(slots=True)
class DdlOutcome:
    """The state after some DDL, the catalog steps it takes (in order), the tables it
    creates (by id: created after the steps, under their final names, filled with their
    ``rewrites`` rows) and the databases whose namespaces go after the commit point."""

    state: DurableState
    steps: list[Step] = field(default_factory=list)
    created: set[int] = field(default_factory=set)
    databases: set[str] = field(default_factory=set)
    dropped_databases: set[str] = field(default_factory=set)
    #: Tables whose content the steps change (their snapshot is read after them).
    touched: set[int] = field(default_factory=set)
    #: Tables whose schema the steps change (their rows converted: ``Commit.rewrites``).
    evolved: set[int] = field(default_factory=set)


def apply_ddl(state: DurableState, operations: tuple[DdlOperation, ...]) -> DdlOutcome:
    """Replay ``operations`` on ``state``."""
    outcome = DdlOutcome(state)
    for operation in operations:
        _apply(operation, outcome)
    return outcome


def _catalog(state: DurableState) -> Catalog:
    tables = {ref: t.definition for ref, t in state.tables.items()}
    return Catalog(
        state.databases, MappingProxyType(tables), state.objects, state.accounts, state.collations
    )


def _apply(op: DdlOperation, outcome: DdlOutcome) -> None:
    catalog = _change_tables(op, outcome)
    outcome.state = replace(
        outcome.state,
        objects=catalog.objects,
        accounts=catalog.accounts,
        collations=catalog.collations,
    )


def _drop(outcome: DdlOutcome, table: StoredTable) -> None:
    if table.id in outcome.created:
        outcome.created.discard(table.id)
    else:
        outcome.steps.append(Step("drop", table.ref, table.id))


def _create(outcome: DdlOutcome, ref: TableRef, definition: TableDef) -> StoredTable:
    state = outcome.state
    table = StoredTable(state.next_table_id, ref, definition)
    outcome.state = replace(state, next_table_id=state.next_table_id + 1)
    outcome.created.add(table.id)
    return table


def _change_tables(op: DdlOperation, outcome: DdlOutcome) -> Catalog:
    """The state's tables after ``op`` (and the steps it takes); the catalog after it."""
    state = outcome.state
    catalog = _catalog(state).apply(op)  # checked at commit already: this does not fail
    tables = dict(state.tables)
    if isinstance(op, CreateDatabase | DropDatabase):
        for ref in [ref for ref in tables if ref not in catalog.tables]:
            _drop(outcome, tables.pop(ref))
        if isinstance(op, CreateDatabase):
            outcome.databases.add(op.name)
        else:
            outcome.dropped_databases.add(op.name)
        outcome.state = outcome.state.with_tables(tables, databases=catalog.databases)
    elif isinstance(op, CreateTable):
        if op.table in tables:  # IF NOT EXISTS on an existing table
            return catalog
        tables[op.table] = _create(outcome, op.table, catalog.tables[op.table])
        outcome.state = outcome.state.with_tables(tables)
    elif isinstance(op, DropTable):
        found = tables.pop(op.table, None)
        if found is not None:
            _drop(outcome, found)
        outcome.state = state.with_tables(tables)
    elif isinstance(op, RenameTable):
        moved = tables.pop(op.old)
        tables[op.new] = replace(moved, ref=op.new)
        if moved.id not in outcome.created:
            outcome.steps.append(Step("rename", op.old, moved.id, op.new))
        outcome.state = state.with_tables(tables)
    elif isinstance(op, TruncateTable):
        old = tables[op.table]
        if old.id not in outcome.created:
            outcome.steps.append(Step("truncate", op.table, old.id))
            outcome.touched.add(old.id)
        outcome.state = state.with_tables(tables)
    elif isinstance(op, AlterTable):
        old = tables[op.table]
        change = schema_change(old.definition, alter_columns(op, old.definition))
        if old.id in outcome.created:  # created or altered earlier in the same transaction
            tables[op.table] = replace(old, definition=catalog.tables[op.table])
            outcome.state = state.with_tables(tables)
        elif change is not None:
            outcome.steps.append(Step("evolve", op.table, old.id, change=change))
            outcome.touched.add(old.id)
            outcome.evolved.add(old.id)
            tables[op.table] = replace(old, definition=catalog.tables[op.table])
            outcome.state = state.with_tables(tables)
        else:
            _drop(outcome, old)
            tables[op.table] = _create(outcome, op.table, catalog.tables[op.table])
            outcome.state = outcome.state.with_tables(tables)
    elif not isinstance(op, _STATE_ONLY):  # pragma: no cover
        raise TypeError(f"not a DDL operation: {op!r}")  # every operation is handled above
    _follow_definitions(outcome, catalog)
    return catalog


def _follow_definitions(outcome: DdlOutcome, catalog: Catalog) -> None:
    """Definitions another table's DDL changed (foreign keys that reference a renamed table
    or column): state only, the files stay."""
    tables = dict(outcome.state.tables)
    changed = False
    for ref, table in tables.items():
        found = catalog.tables.get(ref)
        if found is not None and found is not table.definition and found != table.definition:
            tables[ref] = replace(table, definition=found)
            changed = True
    if changed:
        outcome.state = outcome.state.with_tables(tables)
