"""The commit log: transactions committed in memory and not yet durable, and how a run of
them becomes one change-log batch per table.

Each committed transaction leaves a ``Commit`` (in commit order, recorded under the engine's
mutex): its staged changes per table, its DDL, and for tables its DDL rewrote (ALTER TABLE) the
table's content right after it. A batch keeps one log row per key (the last change wins) for
a keyed table and one summed count change per row for a keyless one, so a batch writes no more
rows than the tables it touches have changed keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from spark_replica.applier_core.storage.ddl import DdlOperation
from spark_replica.applier_core.storage.interface import (
    Column,
    Key,
    Row,
    TableDef,
    TableRef,
    TransactionRef,
)
from spark_replica.applier_core.storage.prepared_xa import XaChanges
from spark_replica.applier_core.storage.spark.layout import CNT, GTID, OP, SEQ, physical
from spark_replica.applier_core.storage.spark.types import to_arrow_table


@dataclass(frozen=True, slots=True)
class TableChanges:
    """One transaction's changes to one table: ``keyed`` maps key → row (None: deleted);
    ``deltas`` maps a whole row → count change (keyless tables)."""

    ref: TableRef
    definition: TableDef
    keyed: dict[Key, Row | None] | None
    deltas: dict[Row, int] | None


@dataclass(frozen=True, slots=True)
class Commit:
    """A committed transaction waiting to be made durable. ``number`` counts commits from 1
    in commit order; ``rewrites`` holds, for each table an ALTER in ``ddl`` rewrote, its rows
    right after the transaction."""

    number: int
    trx: TransactionRef
    changes: tuple[TableChanges, ...]
    ddl: tuple[DdlOperation, ...] = ()
    rewrites: dict[TableRef, list[Row]] = field(default_factory=dict)
    #: The prepared XA transactions it kept and took (``storage.prepared_xa``).
    xa: XaChanges | None = None

    @property
    def rows(self) -> int:
        return sum(len(c.keyed or c.deltas or ()) for c in self.changes)


@dataclass(slots=True)
class _Pending:
    definition: TableDef
    keyed: dict[Key, tuple[Row | None, int, str]] = field(default_factory=dict)
    deltas: dict[Row, list[object]] = field(default_factory=dict)  # row → [count, seq, gtid]


def collect(commits: Sequence[Commit], batch: int) -> dict[TableRef, _Pending]:
    """The net changes of ``commits`` (none with DDL on tables they touch) per table."""
    tables: dict[TableRef, _Pending] = {}
    base = batch << 32
    for commit in commits:
        seq, gtid = base + commit.number % (1 << 32), commit.trx.gtid
        for change in commit.changes:
            pending = tables.get(change.ref)
            if pending is None or pending.definition is not change.definition:
                pending = tables[change.ref] = _Pending(change.definition)
            if change.keyed is not None:
                keyed = pending.keyed
                for key, row in change.keyed.items():
                    keyed[key] = (row, seq, gtid)
            elif change.deltas is not None:
                deltas = pending.deltas
                for row, delta in change.deltas.items():
                    found = deltas.get(row)
                    if found is None:
                        deltas[row] = [delta, seq, gtid]
                    else:
                        found[0] = int(found[0]) + delta  # type: ignore[call-overload]
                        found[1], found[2] = seq, gtid
    return tables


def log_table(pending: _Pending) -> pa.Table | None:
    """The change-log rows of one table (None when its changes cancel out)."""
    definition = pending.definition
    columns = physical_columns(definition)
    if definition.primary_key:
        rows: list[Row] = []
        ops: list[int] = []
        seqs: list[int] = []
        gtids: list[str] = []
        width, key_columns = len(definition.columns), definition.primary_key
        for key, (row, seq, gtid) in pending.keyed.items():
            if row is None:
                deleted: list[object] = [None] * width
                for index, value in zip(key_columns, key, strict=True):
                    deleted[index] = value
                rows.append(tuple(deleted))
                ops.append(0)
            else:
                rows.append(row)
                ops.append(1)
            seqs.append(seq)
            gtids.append(gtid)
        if not rows:
            return None
        extra: dict[str, tuple[pa.DataType, Sequence[object]]] = {
            OP: (pa.int8(), ops),
            SEQ: (pa.int64(), seqs),
            GTID: (pa.string(), gtids),
        }
        return to_arrow_table(columns, rows, extra)
    kept = [(row, found) for row, found in pending.deltas.items() if found[0] != 0]
    if not kept:
        return None
    counts: dict[str, tuple[pa.DataType, Sequence[object]]] = {
        CNT: (pa.int64(), [found[0] for _, found in kept]),
        SEQ: (pa.int64(), [found[1] for _, found in kept]),
        GTID: (pa.string(), [found[2] for _, found in kept]),
    }
    return to_arrow_table(columns, [row for row, _ in kept], counts)


def base_table(definition: TableDef, rows: Sequence[Row]) -> pa.Table:
    """A base snapshot's rows with their physical column names."""
    return to_arrow_table(physical_columns(definition, nullable=False), rows)


def physical_columns(definition: TableDef, *, nullable: bool = True) -> list[Column]:
    """The definition's columns under their physical names; log columns are all nullable (a
    delete row carries only the key)."""
    return [
        Column(physical(i), c.type, True if nullable else c.nullable)
        for i, c in enumerate(definition.columns)
    ]
