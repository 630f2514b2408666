"""The transactional store: tables, row locks, staged changes and key checks, with its
durability left to a backend (``Durability``): in memory for tests (``memory``), Apache
Iceberg for the replica (``spark.engine``). Both engines own a store and are its durability.

Committed data lives in ``CommittedTable`` objects (``memory_tables``): a table with a
primary key maps key → row, a table without one counts whole rows; the durability backend
makes them (Python dicts in memory, the key index under an overlay for Iceberg). A
transaction stages its changes per table after taking each row's lock and checking the key
against the committed data plus its own staged changes. ``commit`` applies every staged
change under the store's mutex (one atomic step, in the order commits are called), hands
the transaction to the backend (``Durability.committed``), releases the row locks, and may
wait until the backend made it durable.

Key checks read committed content (``CommittedTable.get`` / ``count``) without the store's
mutex: the reader holds the row's lock, so no other transaction writes that key meanwhile,
and a CPython dict lookup is atomic.

DDL (``ddl``, ``ddl_parser``) is checked when applied and runs at commit, under the same
mutex: tables it changes are rebuilt as new objects, so a failure changes nothing. A
transaction with DDL may change rows only of tables it creates (``CREATE TABLE ... SELECT`` is
logged that way, and CREATE SEQUENCE stages its first row so); a transaction whose tables a DDL
replaced meanwhile fails at commit (1412). A MariaDB sequence's written rows replace its one
row, and ALTER SEQUENCE is a change of that row (``ddl_sequence``).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Protocol

from spark_replica.applier_core.binlog.rows import ABSENT, RowKind
from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.accounts import Accounts
from spark_replica.applier_core.storage.collations import SERVER_DEFAULTS, CharsetDefaults
from spark_replica.applier_core.storage.ddl import (
    Catalog,
    no_such_table,
)
from spark_replica.applier_core.storage.ddl_operations import (
    DdlOperation,
    unsupported,
)
from spark_replica.applier_core.storage.ddl_parser import parse_ddl
from spark_replica.applier_core.storage.ddl_sequence import (
    SEQUENCE_LOCK,
    AlterSequence,
    altered_row,
    check_alter,
    created_rows,
    current_row,
    is_sequence,
    replace_row,
)
from spark_replica.applier_core.storage.ddl_sequence_parser import parse_alter_sequence
from spark_replica.applier_core.storage.interface import (
    EngineError,
    ExecMode,
    Row,
    RowChange,
    SessionState,
    TableDef,
    TableMap,
    TableRef,
    TransactionRef,
)
from spark_replica.applier_core.storage.locks import DEFAULT_LOCK_WAIT_TIMEOUT, LockManager
from spark_replica.applier_core.storage.memory_tables import (
    CommittedTable,
    Stage,
    Table,
    duplicate_key,
    fit,
    hashable,
    matches,
    missing_row,
    run_ddl,
    updated,
)
from spark_replica.applier_core.storage.objects import StoredObject
from spark_replica.applier_core.storage.prepared_xa import (
    NO_PREPARED,
    Prepared,
    PreparedXa,
    XaChanges,
)

_INSERT, _DELETE = RowKind.INSERT, RowKind.DELETE
_MISSING = object()


class Durability(Protocol):
    """How a store's commits become durable: the store calls these."""

    def new_table(self, ref: TableRef, definition: TableDef) -> CommittedTable:
        """A new, empty table (CREATE, TRUNCATE, ALTER)."""
        ...

    def commit_number(self) -> int:
        """The number of the commit being applied (under the store's mutex; 0: not
        counted)."""
        ...

    def committed(
        self,
        trx: TransactionRef,
        ddl: Sequence[DdlOperation],
        stages: Mapping[TableRef, Stage],
        xa: XaChanges,
        tables: Mapping[TableRef, CommittedTable],
    ) -> int:
        """``trx`` is applied (under the store's mutex, in commit order; ``tables``: the
        store's tables after it): keep it for the next flush; the flush group it joined."""
        ...

    def wait_flushed(self, group: int) -> None:
        """Return once flush ``group`` is done (a session's ``commit(durable=True)``)."""
        ...

    def throttle(self) -> None:
        """Called by a session after each commit, holding no lock: a backend that keeps
        commits in memory until it flushes them makes the session wait while too many do."""
        ...


class TransactionalStore:
    """Tables, locks and sessions; thread-safe: any number of sessions work at once."""

    def __init__(
        self,
        durability: Durability,
        *,
        exec_mode: ExecMode = ExecMode.STRICT,
        lock_wait_timeout: float = DEFAULT_LOCK_WAIT_TIMEOUT,
    ) -> None:
        self.exec_mode = exec_mode
        self.durability = durability
        self.locks = LockManager[TransactionRef](lock_wait_timeout)
        # _mutex guards _catalog, _tables (replaced whole by DDL, so they may be read without
        # it), the content of every table in _tables, _prepared (replaced whole) and _active.
        self._mutex = threading.Lock()
        self._catalog = Catalog()
        self._tables: dict[TableRef, CommittedTable] = {}
        self._prepared: Prepared = NO_PREPARED
        self._active: set[TransactionRef] = set()

    def __repr__(self) -> str:
        return (
            f"TransactionalStore(exec_mode={self.exec_mode.value}, tables={len(self._tables)}, "
            f"active={len(self._active)})"
        )

    def load(
        self, catalog: Catalog, tables: dict[TableRef, CommittedTable], prepared: Prepared
    ) -> None:
        """Start from recorded content (before any session)."""
        with self._mutex:
            self._catalog, self._tables, self._prepared = catalog, tables, prepared

    @property
    def mutex(self) -> threading.Lock:
        """Held while committed tables change (a backend changing their content holds it)."""
        return self._mutex

    @property
    def table_count(self) -> int:
        return len(self._tables)

    def session(self, name: str) -> StoreSession:
        return StoreSession(self, name)

    def databases(self) -> list[str]:
        return sorted(self._catalog.databases)

    def database_collation(self, name: str) -> str:
        return self._catalog.collations.get(name, "")

    def tables(self) -> list[TableRef]:
        return sorted(self._catalog.tables)

    def definition(self, table: TableRef) -> TableDef:
        return self._catalog.definition(table)

    def objects(self) -> list[StoredObject]:
        return sorted(self._catalog.objects.values(), key=lambda o: o.ref)

    def accounts(self) -> Accounts:
        return self._catalog.accounts

    def prepared_xa(self) -> list[PreparedXa]:
        return [self._prepared[xid] for xid in sorted(self._prepared)]

    def rows(self, table: TableRef) -> list[Row]:
        with self._mutex:
            found = self._tables.get(table)
            if found is None:
                raise no_such_table(table)
            return found.snapshot()

    # -- for the sessions ---------------------------------------------------------------------

    def _begin(self, trx: TransactionRef) -> None:
        with self._mutex:
            if trx in self._active:
                raise RuntimeError(f"transaction {trx} is already active in another session")
            self._active.add(trx)

    def _end(self, trx: TransactionRef) -> None:
        with self._mutex:
            self._active.discard(trx)

    def _table(self, ref: TableRef) -> CommittedTable:
        found = self._tables.get(ref)
        if found is None:
            raise no_such_table(ref)
        return found

    def _commit(
        self,
        trx: TransactionRef,
        ddl: Sequence[DdlOperation],
        stages: dict[TableRef, Stage],
        xa: XaChanges,
    ) -> int:
        """Apply a transaction at once; returns the flush group it joined."""
        durability = self.durability
        with self._mutex:
            catalog, tables = self._catalog, self._tables
            prepared = xa.applied_to(self._prepared)
            if ddl:
                catalog, tables = run_ddl(ddl, catalog, tables, durability.new_table)
            targets = []
            for ref, stage in stages.items():
                target = tables.get(ref)
                if target is None:
                    raise no_such_table(ref)
                if target is not stage.table and not (ddl and stage.created):
                    raise EngineError.of(ErrorCode.TABLE_DEF_CHANGED, table=ref)
                targets.append((stage, target))
            # Nothing below can fail: the transaction is applied whole or not at all.
            number = durability.commit_number()
            for stage, target in targets:
                target.commit(stage, number)
            self._catalog, self._tables, self._prepared = catalog, tables, prepared
            self._active.discard(trx)
            return durability.committed(trx, ddl, stages, xa, tables)


class StoreBacked:
    """The catalog reads and sessions of a storage engine that owns ``store``."""

    store: TransactionalStore

    @property
    def exec_mode(self) -> ExecMode:
        return self.store.exec_mode

    @exec_mode.setter
    def exec_mode(self, mode: ExecMode) -> None:
        self.store.exec_mode = mode

    @property
    def locks(self) -> LockManager[TransactionRef]:
        return self.store.locks

    @property
    def lock_wait_timeout(self) -> float:
        return self.store.locks.lock_wait_timeout

    @lock_wait_timeout.setter
    def lock_wait_timeout(self, seconds: float) -> None:
        self.store.locks.lock_wait_timeout = seconds

    def session(self, name: str) -> StoreSession:
        return self.store.session(name)

    def databases(self) -> list[str]:
        return self.store.databases()

    def database_collation(self, name: str) -> str:
        return self.store.database_collation(name)

    def tables(self) -> list[TableRef]:
        return self.store.tables()

    def definition(self, table: TableRef) -> TableDef:
        return self.store.definition(table)

    def objects(self) -> list[StoredObject]:
        return self.store.objects()

    def accounts(self) -> Accounts:
        return self.store.accounts()

    def prepared_xa(self) -> list[PreparedXa]:
        return self.store.prepared_xa()


class StoreSession:
    """A worker's session on a ``TransactionalStore`` (one transaction at a time)."""

    def __init__(self, store: TransactionalStore, name: str) -> None:
        self._store = store
        self._name = name
        self._state = SessionState.IDLE
        self._trx: TransactionRef | None = None
        self._strict = True
        self._stages: dict[TableRef, Stage] = {}
        self._ddl: list[DdlOperation] = []
        self._xa = XaChanges()
        #: The catalog after the staged DDL (None: no DDL staged).
        self._ddl_catalog: Catalog | None = None
        #: The flush group of this session's last commit not known to be flushed (0: none).
        self._unflushed = 0
        #: Set when applying, preparing or committing failed: the transaction can only roll
        #: back.
        self._failed: BaseException | None = None

    def __repr__(self) -> str:
        return f"StoreSession({self._name!r}, {self._state.value}, {self._trx})"

    @property
    def name(self) -> str:
        return self._name

    @property
    def state(self) -> SessionState:
        return self._state

    @property
    def transaction(self) -> TransactionRef | None:
        return self._trx

    def begin(self, trx: TransactionRef) -> None:
        if self._state is not SessionState.IDLE:
            raise RuntimeError(f"{self!r}: begin({trx}) while a transaction is open")
        self._store._begin(trx)
        self._reset()
        self._trx = trx
        self._strict = self._store.exec_mode is ExecMode.STRICT
        self._state = SessionState.ACTIVE

    def apply_rows(self, table_map: TableMap, changes: Sequence[RowChange]) -> None:
        trx = self._require(SessionState.ACTIVE)
        ref = TableRef(table_map.schema, table_map.table)
        try:
            stage = self._stages.get(ref) or self._stage(ref)
            normalize = stage.table.normalize
            if normalize is not None:
                changes = [
                    RowChange(
                        c.kind,
                        None if c.before is None else normalize(c.before),
                        None if c.after is None else normalize(c.after),
                    )
                    for c in changes
                ]
            if stage.sequence:
                self._apply_sequence(trx, stage, changes)
            elif stage.table.key_of is not None:
                self._apply_keyed(trx, stage, changes)
            else:
                self._apply_keyless(trx, stage, changes)
        except BaseException as error:
            if isinstance(error, EngineError):
                missing = error.code == ErrorCode.NO_SUCH_TABLE
                kind = changes[0].kind if changes and not missing else None
                error.add_context(table=ref, kind=kind, gtid=trx.gtid)
            self._fail(trx, error)
            raise

    def apply_ddl(
        self, statement: str, database: str | None, defaults: CharsetDefaults = SERVER_DEFAULTS
    ) -> None:
        trx = self._require(SessionState.ACTIVE)
        try:
            if self._stages:
                raise unsupported("DDL after row changes in one transaction", statement)
            before = catalog = self._ddl_catalog or self._store._catalog
            altered = parse_alter_sequence(statement, database)
            if altered is not None:  # a row change (ddl_sequence)
                if check_alter(altered, catalog):
                    self._alter_sequence(trx, altered)
                return
            operations = parse_ddl(statement, database, defaults)
            for operation in operations:
                catalog = catalog.apply(operation)
            self._ddl += operations
            self._ddl_catalog = catalog
            for ref, row in created_rows(operations, before, catalog):  # a new sequence's row
                self._apply_sequence(trx, self._stage(ref, created=True), [RowChange.insert(row)])
        except BaseException as error:
            if isinstance(error, EngineError):
                error.add_context(gtid=trx.gtid)
            self._fail(trx, error)
            raise

    def keep_prepared(self, prepared: PreparedXa) -> None:
        trx = self._require(SessionState.ACTIVE)
        try:
            self._xa.keep(prepared, self._store._prepared)
        except BaseException as error:
            if isinstance(error, EngineError):
                error.add_context(gtid=trx.gtid)
            self._fail(trx, error)
            raise

    def take_prepared(self, xid: str) -> PreparedXa | None:
        self._require(SessionState.ACTIVE)
        return self._xa.take(xid, self._store._prepared)

    def prepare(self) -> None:
        trx = self._require(SessionState.ACTIVE)
        try:
            self._store.locks.check_abort(trx)
        except BaseException as error:
            self._fail(trx, error)
            raise
        self._state = SessionState.PREPARED

    def commit(self, *, durable: bool = True) -> None:
        """Apply the transaction at once and release its locks; with ``durable``, wait for its
        group's flush too (an exception of the engine's ``on_flush`` hook propagates then; the
        transaction stays committed)."""
        trx = self._require(SessionState.ACTIVE, SessionState.PREPARED)
        try:
            group = self._store._commit(trx, self._ddl, self._stages, self._xa)
        except BaseException as error:
            if isinstance(error, EngineError):
                error.add_context(gtid=trx.gtid)
            self._fail(trx, error)
            raise
        self._store.locks.release_all(trx)
        self._reset()
        self._unflushed = group
        self._store.durability.throttle()
        if durable:
            self.wait_durable()

    def wait_durable(self) -> None:
        group, self._unflushed = self._unflushed, 0
        if group:
            self._store.durability.wait_flushed(group)

    def rollback(self) -> None:
        trx = self._trx
        if trx is None:
            return
        self._store.locks.release_all(trx)
        self._store._end(trx)
        self._reset()

    # -- internals ----------------------------------------------------------------------------

    def _require(self, *states: SessionState) -> TransactionRef:
        if self._state not in states or self._trx is None:
            raise RuntimeError(f"{self!r}: expected a transaction in state {states[0].value}")
        if self._failed is not None:
            raise RuntimeError(f"{self!r}: the transaction failed ({self._failed}); roll it back")
        return self._trx

    def _fail(self, trx: TransactionRef, error: BaseException) -> None:
        if self._trx == trx:  # not rolled back meanwhile by another thread
            self._failed = error

    def _reset(self) -> None:
        self._state = SessionState.IDLE
        self._trx = None
        self._stages = {}
        self._ddl = []
        self._xa = XaChanges()
        self._ddl_catalog = None
        self._failed = None

    def _stage(self, ref: TableRef, *, created: bool = False) -> Stage:
        """``created``: the transaction's DDL has just created ``ref`` (perhaps replacing a
        table of that name)."""
        if self._ddl_catalog is None:
            table = self._store._table(ref)
            catalog = self._store._catalog
        else:
            catalog = self._ddl_catalog
            definition = catalog.definition(ref)
            if ref in self._store._tables and not created:
                raise unsupported(
                    "row changes to an existing table in a transaction with DDL", str(ref)
                )
            table = Table(ref, definition)  # created by this transaction: empty so far
            created = True
        stage = Stage(table, created=created, sequence=is_sequence(catalog, ref))
        self._stages[ref] = stage
        return stage

    def _apply_sequence(
        self, trx: TransactionRef, stage: Stage, changes: Sequence[RowChange]
    ) -> None:
        """A sequence's row changes: a row written replaces the row it holds (MariaDB logs
        NEXTVAL, SETVAL and INSERT as Write_rows of the whole new row). Every change takes
        the sequence's one lock, so transactions on it follow each other."""
        table = stage.table
        self._store.locks.acquire(trx, table.ref, SEQUENCE_LOCK)
        for change in changes:
            if change.after is None:
                self._apply_keyless(trx, stage, [change])
                continue
            with self._store._mutex:
                current = table.counts()
            replace_row(current, stage.deltas, hashable(fit(change.after, table.width)))

    def _alter_sequence(self, trx: TransactionRef, altered: AlterSequence) -> None:
        stage = self._stages.get(altered.table) or self._stage(altered.table)
        self._store.locks.acquire(trx, altered.table, SEQUENCE_LOCK)
        with self._store._mutex:
            current = stage.table.counts()
        row = current_row(current, stage.deltas)
        if row is None:
            raise missing_row(stage.table)
        new = tuple(altered_row(row, altered.options))
        self._apply_sequence(trx, stage, [RowChange.update(tuple(row), new)])

    def _apply_keyed(self, trx: TransactionRef, stage: Stage, changes: Sequence[RowChange]) -> None:
        table = stage.table
        key_of = table.key_of
        assert key_of is not None
        if len(changes) > 1 and changes[0].kind is _INSERT:
            changes = changes[self._insert_run(trx, stage, changes) :]
        width, committed, staged, fresh = table.width, table, stage.changes, stage.fresh
        acquire, ref, strict = self._store.locks.acquire, table.ref, self._strict
        for kind, before, after in changes:
            if kind is _INSERT:
                assert after is not None
                row = after if len(after) == width and ABSENT not in after else fit(after, width)
                key = key_of(row)
                acquire(trx, ref, key)
                current = staged.get(key, _MISSING)
                if current is _MISSING:
                    current = committed.get(key)
                    if current is None:
                        fresh.add(key)
                if current is not None and strict:
                    raise duplicate_key(table, key)
                staged[key] = row
                continue
            assert before is not None
            if len(before) != width:
                before = fit(before, width, ABSENT)
            key = key_of(before)
            found: object
            if ABSENT in key:
                found = self._scan_keyed(trx, stage, before)
                if found is not None:
                    key = key_of(found)
            else:
                acquire(trx, ref, key)
                found = staged.get(key, _MISSING)
                if found is _MISSING:
                    found = committed.get(key)
            if found is None:
                if strict:
                    raise missing_row(table)
                continue
            assert isinstance(found, tuple)
            if kind is _DELETE:
                staged[key] = None
                continue
            assert after is not None
            row = updated(found, before, after, width)
            new_key = key_of(row)
            if new_key != key:
                acquire(trx, ref, new_key)
                clash = staged.get(new_key, _MISSING)
                if clash is _MISSING:
                    clash = committed.get(new_key)
                    if clash is None:
                        fresh.add(new_key)
                if clash is not None:
                    if strict:
                        raise duplicate_key(table, new_key)
                    continue  # IDEMPOTENT: the update is skipped, as MySQL ignores the error
                staged[key] = None
            staged[new_key] = row

    def _insert_run(self, trx: TransactionRef, stage: Stage, changes: Sequence[RowChange]) -> int:
        """The leading inserts of ``changes`` whose rows no other transaction has locked,
        as ``_apply_keyed`` does them one by one (same checks, same order, the same row
        reported), their locks taken and the table's rows looked up in one go; how many it
        did."""
        table = stage.table
        key_of, width = table.key_of, table.width
        assert key_of is not None
        rows: list[Row] = []
        for kind, _, after in changes:
            if kind is not _INSERT:
                break
            assert after is not None
            rows.append(after if len(after) == width and ABSENT not in after else fit(after, width))
        keys = [key_of(row) for row in rows]
        taken = self._store.locks.acquire_free(trx, table.ref, keys)
        staged, fresh, strict = stage.changes, stage.fresh, self._strict
        unstaged = [key for key in keys[:taken] if key not in staged]
        present = dict(zip(unstaged, table.present(unstaged), strict=True))
        for row, key in zip(rows[:taken], keys, strict=False):
            current = staged.get(key, _MISSING)
            if current is _MISSING:
                found = present[key]
                if not found:
                    fresh.add(key)
            else:
                found = current is not None
            if found and strict:
                raise duplicate_key(table, key)
            staged[key] = row
        return taken

    def _apply_keyless(
        self, trx: TransactionRef, stage: Stage, changes: Sequence[RowChange]
    ) -> None:
        table = stage.table
        width, count, deltas = table.width, table.count, stage.deltas
        acquire, ref, strict = self._store.locks.acquire, table.ref, self._strict
        for kind, before, after in changes:
            if kind is not _INSERT:
                assert before is not None
                if len(before) != width:
                    before = fit(before, width, ABSENT)
                if ABSENT in before:
                    found = self._scan_keyless(trx, stage, before)
                else:
                    found = hashable(before)
                    acquire(trx, ref, found)
                    if count(found) + deltas.get(found, 0) <= 0:
                        found = None
                if found is None:
                    if strict:
                        raise missing_row(table)
                    continue
                deltas[found] = deltas.get(found, 0) - 1
                if kind is _DELETE:
                    continue
                assert after is not None
                row = updated(found, before, after, width)
            else:
                assert after is not None
                row = after if len(after) == width and ABSENT not in after else fit(after, width)
            row = hashable(row)
            acquire(trx, ref, row)
            deltas[row] = deltas.get(row, 0) + 1

    def _scan_keyed(self, trx: TransactionRef, stage: Stage, image: Row) -> Row | None:
        """The row matching a before image that lacks key columns (compared on the columns
        it has), locked; None when there is none."""
        table, staged = stage.table, stage.changes
        assert table.key_of is not None
        while True:
            with self._store._mutex:
                rows = [r for k, r in table.items() if k not in staged]
            rows += [r for r in staged.values() if r is not None]
            candidate = next((r for r in rows if matches(image, r)), None)
            if candidate is None:
                return None
            key = table.key_of(candidate)
            self._store.locks.acquire(trx, table.ref, key)
            current = staged[key] if key in staged else table.get(key)
            if current is not None and matches(image, current):
                return current

    def _scan_keyless(self, trx: TransactionRef, stage: Stage, image: Row) -> Row | None:
        table, deltas = stage.table, stage.deltas
        while True:
            with self._store._mutex:
                counts = table.counts()
            counts.update(deltas)
            candidate = next((r for r, n in counts.items() if n > 0 and matches(image, r)), None)
            if candidate is None:
                return None
            self._store.locks.acquire(trx, table.ref, candidate)
            if table.count(candidate) + deltas.get(candidate, 0) > 0:
                return candidate
