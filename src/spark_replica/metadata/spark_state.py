"""The Spark engine's state in the metadata database (``SparkStateStore``).

``commit_spark_state`` is the engine's commit point: the databases, the tables, kept
objects, replicated accounts and prepared XA transactions that changed, the engine counters
and the executed GTID set are written in one transaction, so after a crash the store holds
either the whole batch or none of it.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from sqlalchemy import CursorResult, Engine, delete, insert, select, update
from sqlalchemy.orm import Session

from spark_replica.applier_core.storage.accounts import (
    AccountName,
    account_from_json,
    account_to_json,
)
from spark_replica.applier_core.storage.interface import TableRef
from spark_replica.applier_core.storage.objects import (
    ObjectKind,
    ObjectRef,
    object_from_json,
    object_to_json,
)
from spark_replica.applier_core.storage.prepared_xa import PreparedXa
from spark_replica.applier_core.storage.spark.state import (
    CommitPointMoved,
    DurableState,
    LegacyFiles,
    StoredTable,
    batches_from_text,
    batches_to_text,
    definition_from_json,
    definition_to_json,
)
from spark_replica.metadata.models import (
    GtidExecuted,
    ReplicaAccount,
    ReplicaDatabase,
    ReplicaEngineState,
    ReplicaObject,
    ReplicaTable,
    ReplicaXaPrepared,
)

_STATE_ID = 1


class SparkStateRepository:
    """Mixed into ``MetadataStore``: it provides ``_transaction``."""

    def _transaction(self) -> AbstractContextManager[Session]:  # pragma: no cover - mixin
        raise NotImplementedError

    def load_spark_state(self) -> DurableState:
        with self._transaction() as s:
            counters = s.get(ReplicaEngineState, _STATE_ID)
            last_batch = counters.last_batch if counters else 0
            next_table_id = counters.next_table_id if counters else 1
            collations = {}
            for database in s.scalars(select(ReplicaDatabase)):
                if database.default_collation:
                    collations[database.name] = database.default_collation
            databases = frozenset(s.scalars(select(ReplicaDatabase.name)))
            tables = {}
            for row in s.scalars(select(ReplicaTable)):
                stored = _stored(row)
                tables[stored.ref] = stored
            accounts = {}
            for account in s.scalars(select(ReplicaAccount)):
                name = AccountName(account.user_name, account.host_name)
                accounts[name] = account_from_json(name, account.definition)
            objects = {}
            for found in s.scalars(select(ReplicaObject)):
                ref = ObjectRef(ObjectKind(found.kind), found.schema_name, found.name)
                objects[ref.key] = object_from_json(ref, found.definition)
            prepared = {
                row.xid: PreparedXa(row.xid, row.gtid, row.events)
                for row in s.scalars(select(ReplicaXaPrepared))
            }
            gtids = tuple(
                (r[0], r[1], r[2], r[3])
                for r in s.execute(
                    select(
                        GtidExecuted.source_uuid,
                        GtidExecuted.gtid_tag,
                        GtidExecuted.interval_start,
                        GtidExecuted.interval_end,
                    ).order_by(
                        GtidExecuted.source_uuid, GtidExecuted.gtid_tag, GtidExecuted.interval_start
                    )
                )
            )
        return DurableState(
            databases,
            MappingProxyType(tables),
            last_batch,
            gtids,
            next_table_id,
            MappingProxyType(objects),
            MappingProxyType(accounts),
            MappingProxyType(collations),
            MappingProxyType(prepared),
        )

    @property
    def engine(self) -> Engine:  # pragma: no cover - mixin
        raise NotImplementedError

    def catalog_url(self) -> str:
        return self.engine.url.render_as_string(hide_password=False)

    def commit_spark_state(self, before: DurableState, after: DurableState) -> None:
        with self._transaction() as s:
            for name in before.databases - after.databases:
                s.execute(delete(ReplicaDatabase).where(ReplicaDatabase.name == name))
            for name in after.databases - before.databases:
                s.add(ReplicaDatabase(name=name, default_collation=after.collations.get(name)))
            for name in after.databases & before.databases:
                if after.collations.get(name) != before.collations.get(name):
                    s.execute(
                        update(ReplicaDatabase)
                        .where(ReplicaDatabase.name == name)
                        .values(default_collation=after.collations.get(name))
                    )
            old = {t.id: t for t in before.tables.values()}
            new = {t.id: t for t in after.tables.values()}
            gone = [table_id for table_id in old if table_id not in new]
            if gone:
                s.execute(delete(ReplicaTable).where(ReplicaTable.id.in_(gone)))
            for table_id, table in new.items():
                if table_id not in old:
                    s.add(_row(table))
                elif old[table_id] != table:
                    s.execute(
                        update(ReplicaTable)
                        .where(ReplicaTable.id == table_id)
                        .values(**_values(table))
                    )
            if before.objects != after.objects:
                _commit_objects(s, before, after)
            if before.accounts != after.accounts:
                _commit_accounts(s, before, after)
            if before.prepared_xa != after.prepared_xa:
                _commit_prepared(s, before, after)
            _move_commit_point(s, before, after)
            if before.gtids != after.gtids:
                s.execute(delete(GtidExecuted))
                rows = [
                    {"source_uuid": u, "gtid_tag": t, "interval_start": a, "interval_end": b}
                    for u, t, a, b in after.gtids
                ]
                if rows:
                    s.execute(insert(GtidExecuted), rows)


def _move_commit_point(s: Session, before: DurableState, after: DurableState) -> None:
    """Compare and swap: the counters move from ``before``'s to ``after``'s, or nothing is
    recorded (another process moved them: two engines must not share a metadata
    database)."""
    now = datetime.now(UTC).replace(tzinfo=None)
    if s.get(ReplicaEngineState, _STATE_ID) is None and before.last_batch == 0:
        s.add(ReplicaEngineState(id=_STATE_ID, last_batch=after.last_batch,
                                 next_table_id=after.next_table_id, committed_at=now))  # fmt: skip
        return
    moved: CursorResult[Any] = s.execute(  # type: ignore[assignment]
        update(ReplicaEngineState)
        .where(ReplicaEngineState.id == _STATE_ID)
        .where(ReplicaEngineState.last_batch == before.last_batch)
        .values(
            last_batch=after.last_batch, next_table_id=after.next_table_id, committed_at=now
        )  # fmt: skip
    )
    if moved.rowcount != 1:
        raise CommitPointMoved(
            f"the commit point in the metadata database is not batch {before.last_batch} "
            "any more: another replica process records its state in the same metadata "
            "database"
        )


def _commit_objects(s: Session, before: DurableState, after: DurableState) -> None:
    for key, stored in before.objects.items():
        if after.objects.get(key) != stored:
            ref = stored.ref
            s.execute(delete(ReplicaObject).where(
                ReplicaObject.kind == ref.kind.value, ReplicaObject.schema_name == ref.schema,
                ReplicaObject.name == ref.name))  # fmt: skip
    for key, stored in after.objects.items():
        if before.objects.get(key) != stored:
            ref = stored.ref
            s.add(ReplicaObject(kind=ref.kind.value, schema_name=ref.schema, name=ref.name,
                                definition=object_to_json(stored)))  # fmt: skip


def _commit_prepared(s: Session, before: DurableState, after: DurableState) -> None:
    gone = [xid for xid in before.prepared_xa if xid not in after.prepared_xa]
    if gone:
        s.execute(delete(ReplicaXaPrepared).where(ReplicaXaPrepared.xid.in_(gone)))
    for xid, prepared in after.prepared_xa.items():
        if before.prepared_xa.get(xid) != prepared:
            s.merge(ReplicaXaPrepared(xid=xid, gtid=prepared.gtid, events=prepared.events))


def _commit_accounts(s: Session, before: DurableState, after: DurableState) -> None:
    for name, account in before.accounts.items():
        if after.accounts.get(name) != account:
            s.execute(
                delete(ReplicaAccount).where(
                    ReplicaAccount.user_name == name.user, ReplicaAccount.host_name == name.host
                )
            )
    for name, account in after.accounts.items():
        if before.accounts.get(name) != account:
            s.add(ReplicaAccount(user_name=name.user, host_name=name.host,
                                 definition=account_to_json(account)))  # fmt: skip


def _values(table: StoredTable) -> dict[str, object]:
    legacy = table.legacy or LegacyFiles(0)
    return {
        "schema_name": table.ref.schema,
        "table_name": table.ref.table,
        "definition": definition_to_json(table.definition),
        "generation": legacy.generation,
        "has_base": int(legacy.base),
        "batches": batches_to_text(legacy.batches),
        "snapshot_id": table.snapshot or None,
        "changes": table.changes,
    }


def _row(table: StoredTable) -> ReplicaTable:
    return ReplicaTable(id=table.id, **_values(table))  # type: ignore[arg-type]


def _stored(row: ReplicaTable) -> StoredTable:
    ref = TableRef(row.schema_name, row.table_name)
    definition = definition_from_json(row.definition)
    if row.snapshot_id is None:  # the earlier layout: migrated at the engine's start
        legacy = LegacyFiles(row.generation, bool(row.has_base), batches_from_text(row.batches))
        return StoredTable(row.id, ref, definition, legacy=legacy)
    return StoredTable(row.id, ref, definition, row.snapshot_id, row.changes or 0)


__all__ = ["SparkStateRepository"]
