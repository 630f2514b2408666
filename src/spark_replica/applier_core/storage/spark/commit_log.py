"""The commit log: transactions committed in memory and not yet durable, and the net
changes per table a run of them makes.

Each committed transaction leaves a ``Commit`` (in commit order, recorded under the engine's
mutex): its staged changes per table, its DDL, and for tables its DDL rewrote (ALTER TABLE) the
table's content right after it: the rows themselves when the table was in memory whole, else
where the ALTER staged them in the key index (``Staged``). A flush keeps one change per key
(the last one wins) for a keyed table and one summed count change per row for a keyless
one, so it writes no more rows than the tables it touches have changed keys.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from spark_replica.applier_core.storage.ddl_operations import DdlOperation
from spark_replica.applier_core.storage.interface import (
    Column,
    Key,
    Row,
    TableDef,
    TableRef,
    TransactionRef,
)
from spark_replica.applier_core.storage.prepared_xa import XaChanges
from spark_replica.applier_core.storage.spark.legacy_layout import physical


@dataclass(frozen=True, slots=True)
class TableChanges:
    """One transaction's changes to one table: ``keyed`` maps key → row (None: deleted);
    ``deltas`` maps a whole row → count change (keyless tables)."""

    ref: TableRef
    definition: TableDef
    keyed: dict[Key, Row | None] | None
    deltas: dict[Row, int] | None
    #: Keys of ``keyed`` the table did not hold when the transaction first touched them.
    fresh: frozenset[Key] | set[Key] = frozenset()


@dataclass(frozen=True, slots=True)
class Staged:
    """A rewritten table's rows, staged in the key index under ``stage`` by its ALTER;
    ``plain`` turns a row as the index holds it into one to write."""

    stage: int
    plain: Callable[[Row], Row]


#: A rewritten table's content right after its DDL.
Rewrite: TypeAlias = list[Row] | Staged


@dataclass(frozen=True, slots=True)
class Commit:
    """A committed transaction waiting to be made durable. ``number`` counts commits from 1
    in commit order; ``rewrites`` holds, for each table an ALTER in ``ddl`` rewrote, its rows
    right after the transaction (``Rewrite``)."""

    number: int
    trx: TransactionRef
    changes: tuple[TableChanges, ...]
    ddl: tuple[DdlOperation, ...] = ()
    rewrites: dict[TableRef, Rewrite] = field(default_factory=dict)
    #: The prepared XA transactions it kept and took (``storage.prepared_xa``).
    xa: XaChanges | None = None
    #: The engine's table objects it changed (their overlay entries go once it is flushed).
    targets: tuple[Any, ...] = ()
    #: With DDL: the engine's table objects by name right after it.
    tables: dict[TableRef, Any] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return sum(len(c.keyed or c.deltas or ()) for c in self.changes)


@dataclass(slots=True)
class PendingChanges:
    """The net changes of a run of commits to one table: ``keyed`` maps key → row (None:
    deleted), ``fresh`` holds the keys that were not in the table before the run (their
    rows are plain inserts); ``deltas`` maps a whole row → its count change (keyless
    tables)."""

    definition: TableDef
    keyed: dict[Key, Row | None] = field(default_factory=dict)
    fresh: set[Key] = field(default_factory=set)
    deltas: dict[Row, int] = field(default_factory=dict)


def collect(commits: Sequence[Commit]) -> dict[TableRef, PendingChanges]:
    """The net changes of ``commits`` (none with DDL on tables they touch) per table."""
    tables: dict[TableRef, PendingChanges] = {}
    for commit in commits:
        for change in commit.changes:
            pending = tables.get(change.ref)
            if pending is None or pending.definition is not change.definition:
                pending = tables[change.ref] = PendingChanges(change.definition)
            if change.keyed is not None:
                # A key is fresh when no earlier commit of the run changed it and it was
                # not in the table before this one (dict and set loops in C: 3x faster).
                if change.fresh:
                    pending.fresh.update(change.fresh.difference(pending.keyed))
                pending.keyed.update(change.keyed)
            elif change.deltas is not None:
                deltas = pending.deltas
                for row, delta in change.deltas.items():
                    deltas[row] = deltas.get(row, 0) + delta
    return tables


def physical_columns(definition: TableDef, *, nullable: bool = True) -> list[Column]:
    """The definition's columns under the positional names of the earlier layout; log
    columns are all nullable (a delete row carries only the key)."""
    return [
        Column(physical(i), c.type, True if nullable else c.nullable)
        for i, c in enumerate(definition.columns)
    ]
