"""Replicated DDL on the Spark engine's durable state.

The in-memory side has already checked and applied each operation at commit (``ddl``); here
the flusher replays it on the recorded state, in commit order, after every earlier commit is
durable. What an operation means for the files:

* CREATE/DROP DATABASE, CREATE TABLE [LIKE]: state only (a new table has no files yet).
* DROP TABLE / DROP DATABASE: the table leaves the state; its directory is deleted after the
  commit point.
* RENAME TABLE: state only (files live under the table's id).
* TRUNCATE TABLE: a new, empty generation; the old one is deleted after the commit point.
* ALTER TABLE: a new generation whose base is the table's content right after the transaction
  (``Commit.rewrites``, by the table's final name), written before the commit point.
* Views, triggers, routines and events: state only (``DurableState.objects``).
* Account statements: state only (``DurableState.accounts``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import get_args

from spark_replica.applier_core.storage.accounts import AccountOperation
from spark_replica.applier_core.storage.ddl import (
    AlterDatabase,
    AlterTable,
    Catalog,
    CreateDatabase,
    CreateTable,
    DdlOperation,
    DropDatabase,
    DropTable,
    RenameTable,
    TruncateTable,
)
from spark_replica.applier_core.storage.interface import Row, TableRef
from spark_replica.applier_core.storage.objects import AlterObject, CreateObject, DropObject
from spark_replica.applier_core.storage.spark.state import DurableState, StoredTable

#: Operations that change only the recorded state: kept objects and accounts.
_STATE_ONLY = (AlterDatabase, CreateObject, DropObject, AlterObject, *get_args(AccountOperation))


@dataclass(slots=True)
class DdlOutcome:
    """The state after some DDL, and the files to delete once it is recorded."""

    state: DurableState
    obsolete: list[StoredTable] = field(default_factory=list)  # generations no longer used
    dropped: list[int] = field(default_factory=list)  # table ids whose directories go
    rewritten: set[int] = field(default_factory=set)  # table ids that need a new base


def apply_ddl(
    state: DurableState,
    operations: tuple[DdlOperation, ...],
    rewrites: dict[TableRef, list[Row]],
    write_base: Callable[[StoredTable, list[Row]], bool],
) -> DdlOutcome:
    """Replay ``operations`` on ``state``. ``write_base(table, rows)`` writes a new
    generation's base and returns whether it wrote one (no rows: no base)."""
    outcome = DdlOutcome(state)
    for operation in operations:
        _apply(operation, outcome)
    # A table altered several times (or altered and renamed) gets one base: its final rows.
    tables = dict(outcome.state.tables)
    for ref, table in outcome.state.tables.items():
        if table.id in outcome.rewritten:
            tables[ref] = replace(table, base=write_base(table, rewrites.get(ref, [])))
    outcome.state = outcome.state.with_tables(tables)
    return outcome


def _catalog(state: DurableState) -> Catalog:
    tables = {ref: t.definition for ref, t in state.tables.items()}
    return Catalog(
        state.databases, MappingProxyType(tables), state.objects, state.accounts, state.collations
    )


def _apply(op: DdlOperation, outcome: DdlOutcome) -> None:
    catalog = _change_files(op, outcome)
    outcome.state = replace(
        outcome.state,
        objects=catalog.objects,
        accounts=catalog.accounts,
        collations=catalog.collations,
    )


def _change_files(op: DdlOperation, outcome: DdlOutcome) -> Catalog:
    """The state's tables and files after ``op``; the catalog after it."""
    state = outcome.state
    catalog = _catalog(state).apply(op)  # checked at commit already: this does not fail
    tables = dict(state.tables)
    if isinstance(op, CreateDatabase | DropDatabase):
        for ref in [ref for ref in tables if ref not in catalog.tables]:
            outcome.dropped.append(tables.pop(ref).id)
        outcome.state = state.with_tables(tables, databases=catalog.databases)
    elif isinstance(op, CreateTable):
        if op.table in tables:  # IF NOT EXISTS on an existing table
            return catalog
        tables[op.table] = StoredTable(state.next_table_id, op.table, catalog.tables[op.table])
        outcome.state = state.with_tables(tables, next_table_id=state.next_table_id + 1)
    elif isinstance(op, DropTable):
        found = tables.pop(op.table, None)
        if found is not None:
            outcome.dropped.append(found.id)
        outcome.state = state.with_tables(tables)
    elif isinstance(op, RenameTable):
        moved = tables.pop(op.old)
        tables[op.new] = replace(moved, ref=op.new)
        outcome.state = state.with_tables(tables)
    elif isinstance(op, TruncateTable):
        old = tables[op.table]
        tables[op.table] = old.next_generation(base=False)
        outcome.rewritten.discard(old.id)
        outcome.obsolete.append(old)
        outcome.state = state.with_tables(tables)
    elif isinstance(op, AlterTable):
        old = tables[op.table]
        if old.id in outcome.rewritten:  # altered earlier in the same transaction
            tables[op.table] = replace(old, definition=catalog.tables[op.table])
        else:
            tables[op.table] = old.next_generation(catalog.tables[op.table], base=False)
            outcome.obsolete.append(old)
            outcome.rewritten.add(old.id)
        outcome.state = state.with_tables(tables)
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
