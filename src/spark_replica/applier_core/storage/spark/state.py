"""The Spark engine's durable state: what the metadata store records at every commit point.

The engine's catalog of record is the metadata store (architecture §5). ``DurableState`` is
one consistent version of it: the databases, every table with its definition and the
Iceberg snapshot that holds its rows at that point, the kept objects (views, triggers,
routines, events), the replicated accounts, the number of the last commit point and the
executed GTID set. The flusher derives the next version and hands both to
``SparkStateStore.commit_spark_state``, which records the difference in one metadata
transaction: that transaction is the commit point. Iceberg commits each table on its own;
the snapshot ids recorded here say which of those commits belong to the source's history
(recovery sets each table back to its recorded snapshot, ``iceberg_recovery``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Protocol

from spark_replica.applier_core.progress import GtidInterval
from spark_replica.applier_core.storage.accounts import Accounts, no_accounts
from spark_replica.applier_core.storage.ddl_operations import Objects
from spark_replica.applier_core.storage.interface import (
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    IndexKind,
    IndexPart,
    ReferenceRule,
    TableDef,
    TableRef,
)
from spark_replica.applier_core.storage.prepared_xa import NO_PREPARED, Prepared


@dataclass(frozen=True, slots=True)
class LegacyFiles:
    """Where a table written in the earlier layout of the engine keeps its rows (a base
    snapshot and change-log batches of one generation, ``legacy_layout``); only read once,
    to move the table into Iceberg (``migration``)."""

    generation: int = 1
    base: bool = False
    batches: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class StoredTable:
    """One replicated table as recorded: its Iceberg ``snapshot`` at the commit point, and
    the flushes that changed it since its last compaction (``changes``). A table of the
    earlier layout has no snapshot yet (0) and its ``legacy`` files."""

    id: int
    ref: TableRef
    definition: TableDef
    snapshot: int = 0
    changes: int = 0
    legacy: LegacyFiles | None = None

    @property
    def keyed(self) -> bool:
        return bool(self.definition.primary_key)

    @property
    def version(self) -> tuple[int, int]:
        """Changes whenever the table's content may change: (id, snapshot)."""
        return (self.id, self.snapshot)

    def with_snapshot(self, snapshot: int, *, changed: bool = True) -> StoredTable:
        return replace(self, snapshot=snapshot, changes=self.changes + 1 if changed else 0)


@dataclass(frozen=True, slots=True)
class DurableState:
    """One recorded version of the engine's catalog and progress. Immutable."""

    databases: frozenset[str] = frozenset()
    tables: Mapping[TableRef, StoredTable] = field(default_factory=lambda: MappingProxyType({}))
    last_batch: int = 0
    gtids: tuple[GtidInterval, ...] = ()
    next_table_id: int = 1
    #: Views, triggers, routines and events (``storage.objects``), by ``ObjectRef.key``.
    objects: Objects = field(default_factory=lambda: MappingProxyType({}))
    #: The replicated accounts (``storage.accounts``), recorded at the same commit points.
    accounts: Accounts = field(default_factory=no_accounts)
    #: Each database's default collation, where known (``storage.collations``).
    collations: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: The prepared XA transactions (``storage.prepared_xa``), by xid, recorded with the GTIDs
    #: of the transactions that prepared, committed or rolled them back.
    prepared_xa: Prepared = field(default_factory=lambda: NO_PREPARED)

    def with_tables(
        self, tables: Mapping[TableRef, StoredTable], **changes: object
    ) -> DurableState:
        return replace(self, tables=MappingProxyType(dict(tables)), **changes)  # type: ignore[arg-type]


class SparkStateStore(Protocol):
    """Where the engine's state is recorded (the metadata store implements it)."""

    def load_spark_state(self) -> DurableState:
        """The last recorded state (an empty one before the first commit point)."""
        ...

    def commit_spark_state(self, before: DurableState, after: DurableState) -> None:
        """Record ``after`` in one transaction (``before`` is the state recorded now: the
        store writes only what changed). Raises on failure; nothing is recorded then.

        Raises:
            CommitPointMoved: the recorded state is not ``before`` any more (another
                process records commit points in the same metadata database).
        """
        ...

    def catalog_url(self) -> str:
        """The database's SQLAlchemy URL, password included: the Iceberg catalog's tables
        live in the same database (decision 0017)."""
        ...


class CommitPointMoved(RuntimeError):
    """The metadata database's commit point is not the one this engine recorded last."""


# -- serialisation of table definitions (the store keeps them as JSON text) -------------------


def definition_to_json(definition: TableDef) -> str:
    """A definition as JSON. Columns are ``[name, type, nullable]`` and a text column's
    collation; the table's default collation is ``collation``. Secondary keys are
    ``[name, kind, parts, comment, visible]`` with parts ``[column position, prefix,
    descending]``; a table without any has no ``indexes`` member, as definitions recorded
    before keys were kept. Foreign keys are ``[name, columns, [schema, table],
    referenced columns, on delete, on update, implicit rule]`` and checks ``[name, clause,
    enforced, column]``, in ``foreign_keys`` and ``checks`` members that a table without
    any (and a definition recorded before they were kept) has not."""
    data: dict[str, object] = {
        "columns": [_column_to_json(c) for c in definition.columns],
        "primary_key": list(definition.primary_key),
        "key_prefix": list(definition.key_prefix),
    }
    if definition.collation:
        data["collation"] = definition.collation
    if definition.indexes:
        data["indexes"] = [_index_to_json(i) for i in definition.indexes]
    if definition.foreign_keys:
        data["foreign_keys"] = [
            [k.name, list(k.columns), [k.referenced.schema, k.referenced.table],
             list(k.referenced_columns), k.on_delete.value, k.on_update.value, k.implicit.value]
            for k in definition.foreign_keys
        ]  # fmt: skip
    if definition.checks:
        data["checks"] = [[c.name, c.clause, c.enforced, c.column] for c in definition.checks]
    return json.dumps(data, separators=(",", ":"))


def _index_to_json(index: Index) -> list[object]:
    """``[name, kind, parts, comment, visible]`` and ``true`` for a key generated for a
    foreign key; a part is ``[column, prefix, descending]`` and a functional part's
    expression."""
    parts = [
        [p.column, p.prefix, p.descending, *([p.expression] if p.expression else [])]
        for p in index.parts
    ]
    found: list[object] = [index.name, index.kind.value, parts, index.comment, index.visible]
    return [*found, True] if index.generated else found


def definition_from_json(text: str) -> TableDef:
    data = json.loads(text)
    indexes = tuple(
        Index(
            name,
            IndexKind(kind),
            tuple(IndexPart(c, p, bool(d), *e) for c, p, d, *e in parts),
            comment,
            bool(visible),
            bool(generated and generated[0]),
        )  # fmt: skip
        for name, kind, parts, comment, visible, *generated in data.get("indexes", ())
    )
    foreign_keys = tuple(
        ForeignKey(name, tuple(columns), TableRef(*target), tuple(referenced),
                   ReferenceRule(delete), ReferenceRule(update), ReferenceRule(implicit))
        for name, columns, target, referenced, delete, update, implicit
        in data.get("foreign_keys", ())
    )  # fmt: skip
    checks = tuple(
        CheckConstraint(name, clause, bool(enforced), column)
        for name, clause, enforced, column in data.get("checks", ())
    )
    return TableDef(
        tuple(
            Column(name, type_, bool(nullable), *rest)
            for name, type_, nullable, *rest in data["columns"]
        ),
        tuple(data["primary_key"]),
        tuple(data["key_prefix"]),
        indexes,
        data.get("collation", ""),
        foreign_keys,
        checks,
    )


def _column_to_json(column: Column) -> list[object]:
    """``[name, type, nullable]``, then the collation of a text column."""
    found: list[object] = [column.name, column.type, column.nullable]
    return [*found, column.collation] if column.collation else found


def batches_to_text(batches: tuple[int, ...]) -> str:
    return ",".join(map(str, batches))


def batches_from_text(text: str) -> tuple[int, ...]:
    return tuple(int(b) for b in text.split(",")) if text else ()
