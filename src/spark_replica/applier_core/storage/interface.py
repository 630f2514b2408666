"""The storage-engine interface: what the appliers need from a storage engine (docs/csa.md).

An engine hands out sessions; a worker runs one transaction at a time in its session:
``begin`` → ``apply_rows`` / ``apply_ddl`` … → ``prepare`` → ``commit`` (or ``rollback``).
Changes stay private to the transaction until ``commit`` makes all of them visible at once;
every row change first takes an exclusive lock on its row in the engine's ``LockManager``.
The same contract fits the in-memory engine (``memory``) and the Spark engine
(merge-on-read with group commit, architecture §5): ``commit`` makes a transaction's changes
visible to later transactions and releases its locks; durability may come later, in groups.

Rows are tuples in table-column order, with values as ``binlog.rows.values`` documents them
(``ABSENT`` marks a column a partial row image does not carry).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeAlias, cast

from spark_replica.applier_core.binlog.rows import RowKind
from spark_replica.applier_core.errors import ErrorCode, ReplicaError, format_message

if TYPE_CHECKING:
    from spark_replica.applier_core.storage.accounts import Accounts
    from spark_replica.applier_core.storage.collations import CharsetDefaults
    from spark_replica.applier_core.storage.group_commit import EngineStats
    from spark_replica.applier_core.storage.locks import LockManager
    from spark_replica.applier_core.storage.objects import StoredObject
    from spark_replica.applier_core.storage.prepared_xa import PreparedXa

#: A row: column values in table-column order.
Row: TypeAlias = tuple[object, ...]
#: A primary-key value: the key columns' values in key order (a whole row for keyless tables).
Key: TypeAlias = tuple[object, ...]


class ExecMode(enum.Enum):
    """``replica_exec_mode``: how key errors of row changes are handled.

    https://dev.mysql.com/doc/refman/8.4/en/replication-options-replica.html#sysvar_replica_exec_mode
    """

    #: Duplicate key (1062) and missing row (1032) stop the applier.
    STRICT = "STRICT"
    #: A duplicate insert overwrites the row; an update or delete of a missing row is skipped.
    IDEMPOTENT = "IDEMPOTENT"


class TableRef(NamedTuple):
    """A table by database (``schema``) and name. A named tuple: it is hashed for every row."""

    schema: str
    table: str

    def __str__(self) -> str:
        return f"{self.schema}.{self.table}"


class TransactionRef(NamedTuple):
    """The transaction a session runs: its GTID text and its position in the source order.

    ``order`` grows with the source's commit order (the applier's task id), so the lock
    manager's users can tell which of two conflicting transactions commits first. It is also
    the lock owner: two transactions active at once must not share a ``TransactionRef``.
    """

    gtid: str
    order: int

    def __str__(self) -> str:
        return self.gtid


class RowChange(NamedTuple):
    """One row change of a rows event: ``before`` for update/delete, ``after`` for
    insert/update (the other is None)."""

    kind: RowKind
    before: Row | None
    after: Row | None

    @classmethod
    def insert(cls, row: Row) -> RowChange:
        return cls(RowKind.INSERT, None, row)

    @classmethod
    def update(cls, before: Row, after: Row) -> RowChange:
        return cls(RowKind.UPDATE, before, after)

    @classmethod
    def delete(cls, row: Row) -> RowChange:
        return cls(RowKind.DELETE, row, None)

    @classmethod
    def of_rows(cls, kind: RowKind, rows: Iterable[object]) -> list[RowChange]:
        """The changes of a rows event's ``rows`` (UPDATE rows are ``(before, after)`` pairs)."""
        if kind is RowKind.INSERT:
            return [cls(kind, None, row) for row in cast("Iterable[Row]", rows)]
        if kind is RowKind.DELETE:
            return [cls(kind, row, None) for row in cast("Iterable[Row]", rows)]
        pairs = cast("Iterable[tuple[Row, Row]]", rows)
        return [cls(kind, before, after) for before, after in pairs]


class SessionState(enum.Enum):
    """Where a session's transaction is: IDLE (none) → ACTIVE → PREPARED → IDLE."""

    IDLE = "idle"
    ACTIVE = "active"
    PREPARED = "prepared"


class HandlerError(enum.StrEnum):
    """The storage handler's error behind an SQL error, as row-event error texts name it."""

    KEY_NOT_FOUND = "HA_ERR_KEY_NOT_FOUND"
    FOUND_DUPP_KEY = "HA_ERR_FOUND_DUPP_KEY"
    LOCK_WAIT_TIMEOUT = "HA_ERR_LOCK_WAIT_TIMEOUT"
    LOCK_DEADLOCK = "HA_ERR_LOCK_DEADLOCK"


#: Errors after which the applier retries the transaction (requirements §7.4).
TRANSIENT_ERRORS = frozenset({ErrorCode.LOCK_WAIT_TIMEOUT, ErrorCode.LOCK_DEADLOCK})

_EVENT_NAMES = {
    RowKind.INSERT: "Write_rows",
    RowKind.UPDATE: "Update_rows",
    RowKind.DELETE: "Delete_rows",
}


class EngineError(ReplicaError):
    """Raised when a storage engine cannot apply, prepare or commit a transaction.

    ``message`` is MySQL's text for ``code`` (what a client or ``Last_SQL_Error`` shows);
    ``handler_error`` the storage handler's error behind it, when there is one. The context
    fields say where it happened: ``table``, ``kind`` (the rows event's kind) and ``gtid``;
    ``str(error)`` names them all, and ``row_event_detail`` renders MySQL's row-event text.
    """

    def __init__(
        self,
        code: int,
        message: str,
        handler_error: HandlerError | None = None,
        *,
        table: TableRef | None = None,
        kind: RowKind | None = None,
        gtid: str | None = None,
    ) -> None:
        super().__init__(code, message)
        self.handler_error = handler_error
        self.table = table
        self.kind = kind
        self.gtid = gtid

    @classmethod
    def of(
        cls,
        code: ErrorCode,
        *args: object,
        handler_error: HandlerError | None = None,
        table: TableRef | None = None,
        kind: RowKind | None = None,
        gtid: str | None = None,
    ) -> EngineError:
        """The error ``code`` with the catalogue's text for ``args``."""
        message = format_message(code, *args)
        return cls(code, message, handler_error, table=table, kind=kind, gtid=gtid)

    @property
    def transient(self) -> bool:
        """True for lock wait timeouts (1205) and deadlocks (1213): retrying may succeed."""
        return self.code in TRANSIENT_ERRORS

    def add_context(
        self, *, table: TableRef | None = None, kind: RowKind | None = None, gtid: str | None = None
    ) -> None:
        """Fill in the context fields that are still unknown."""
        self.table = self.table or table
        self.kind = self.kind or kind
        self.gtid = self.gtid or gtid

    def row_event_detail(self, source_log: str, end_log_pos: int) -> str:
        """MySQL's text for a rows event that failed (``Rows_log_event``, sql/log_event.cc):
        with a handler error, ``Could not execute ... end_log_pos <n>``; without one (the
        table could not be opened), ``Error executing row event: '<message>'``."""
        if self.handler_error is None:
            return f"Error executing row event: '{self.message}'"
        return (
            f"{self._what()}; {self.message}, Error_code: {self.code}; handler error "
            f"{self.handler_error}; the event's source log {source_log}, "
            f"end_log_pos {end_log_pos}"
        )

    def _what(self) -> str:
        event = _EVENT_NAMES[self.kind] if self.kind is not None else "row"
        where = f" on table {self.table}" if self.table is not None else ""
        return f"Could not execute {event} event{where}"

    def __str__(self) -> str:
        if self.kind is not None:
            text = f"{self._what()}; {self.message}, Error_code: {self.code}"
            if self.handler_error is not None:
                text += f"; handler error {self.handler_error}"
        else:
            text = self.message
            if self.table is not None and str(self.table) not in text:
                text += f" (table {self.table})"
        return f"{text}; transaction '{self.gtid}'" if self.gtid else text

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code}, {self.message!r}, {self.handler_error})"


@dataclass(frozen=True, slots=True)
class Column:
    """A column as the engine's catalog knows it: name, MySQL type text, and for a text
    column (CHAR, VARCHAR, TEXT, ENUM, SET) its collation (``storage.collations``; empty
    for other types, and in a definition being parsed, where the table's applies)."""

    name: str
    type: str
    nullable: bool = True
    collation: str = ""


class IndexKind(enum.StrEnum):
    """What a secondary key is, as CREATE TABLE names it (``INDEX`` and ``KEY`` are one)."""

    INDEX = "INDEX"
    UNIQUE = "UNIQUE"
    FULLTEXT = "FULLTEXT"
    SPATIAL = "SPATIAL"


@dataclass(frozen=True, slots=True)
class IndexPart:
    """One key part: the column's position in the table, its prefix length (0: the whole
    value) and whether it is sorted descending (``DESC``). A functional key part
    (``KEY ((a + 1))``) has ``expression``, its text as SHOW INDEX's ``Expression`` shows it,
    and ``column`` -1."""

    column: int
    prefix: int = 0
    descending: bool = False
    expression: str = ""


@dataclass(frozen=True, slots=True)
class Index:
    """A secondary key as the catalog keeps it: shown by SHOW INDEX and SHOW CREATE TABLE,
    not used by the engines (a UNIQUE key is not enforced: the source checked its rows)."""

    name: str
    kind: IndexKind
    parts: tuple[IndexPart, ...]
    comment: str = ""
    visible: bool = True
    #: Created for a foreign key that no other key served: a key added later that serves
    #: the foreign key replaces it, as in MySQL.
    generated: bool = False

    @property
    def unique(self) -> bool:
        return self.kind is IndexKind.UNIQUE


class ReferenceRule(enum.StrEnum):
    """What a foreign key does when the referenced row is deleted or updated."""

    RESTRICT = "RESTRICT"
    CASCADE = "CASCADE"
    SET_NULL = "SET NULL"
    NO_ACTION = "NO ACTION"
    SET_DEFAULT = "SET DEFAULT"


@dataclass(frozen=True, slots=True)
class ForeignKey:
    """A FOREIGN KEY constraint as the catalog keeps it: shown, not enforced (the source
    checked its rows). ``columns`` are positions in the table, like key parts;
    ``referenced`` and ``referenced_columns`` name the parent table and its columns.
    ``on_delete``/``on_update`` are the rules information_schema shows; SHOW CREATE TABLE
    leaves out a rule equal to ``implicit``, the source's rule when none is written
    (MySQL: NO ACTION, MariaDB: RESTRICT)."""

    name: str
    columns: tuple[int, ...]
    referenced: TableRef
    referenced_columns: tuple[str, ...]
    on_delete: ReferenceRule = ReferenceRule.NO_ACTION
    on_update: ReferenceRule = ReferenceRule.NO_ACTION
    implicit: ReferenceRule = ReferenceRule.NO_ACTION


@dataclass(frozen=True, slots=True)
class CheckConstraint:
    """A CHECK constraint as the catalog keeps it (shown, not enforced). ``clause`` is its
    expression as the source's information_schema.CHECK_CONSTRAINTS shows it (identifiers
    in backticks); ``column``: the column a MariaDB column-level check belongs to (it goes
    when the column is redefined), empty for the others."""

    name: str
    clause: str
    enforced: bool = True
    column: str = ""


@dataclass(frozen=True, slots=True)
class TableDef:
    """A table's definition: its columns, primary key and secondary keys.

    ``primary_key`` holds column indexes (empty: no primary key, the table is a multiset of
    whole rows); ``key_prefix`` the prefix length of each key column (0 = the whole value),
    as in ``PRIMARY KEY (name(10))``. ``indexes`` are the secondary keys in MySQL's order
    (``storage.indexes.mysql_order``), which SHOW INDEX and SHOW CREATE TABLE follow.
    ``collation`` is the table's default collation (empty: not known, or in a definition
    being parsed, the database's applies). ``foreign_keys`` and ``checks`` are the table's
    FOREIGN KEY and CHECK constraints (``storage.constraints``), in the order they were
    defined.
    """

    columns: tuple[Column, ...]
    primary_key: tuple[int, ...] = ()
    key_prefix: tuple[int, ...] = ()
    indexes: tuple[Index, ...] = ()
    collation: str = ""
    foreign_keys: tuple[ForeignKey, ...] = ()
    checks: tuple[CheckConstraint, ...] = ()

    def __post_init__(self) -> None:
        if not self.key_prefix:
            object.__setattr__(self, "key_prefix", (0,) * len(self.primary_key))
        if len(self.key_prefix) != len(self.primary_key):
            raise ValueError("key_prefix must have one length per key column")

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)

    def index_of(self, name: str) -> int | None:
        """The position of column ``name`` (compared case-insensitively, as MySQL does)."""
        folded = name.casefold()
        for index, column in enumerate(self.columns):
            if column.name.casefold() == folded:
                return index
        return None


class TableMap(Protocol):
    """What ``apply_rows`` needs of a Table_map event (``TableMapEvent`` has it)."""

    @property
    def schema(self) -> str: ...

    @property
    def table(self) -> str: ...


class EngineSession(Protocol):
    """One worker's connection to the engine: runs one transaction at a time.

    A session is used by one thread at a time; another thread may take over between calls
    (a transaction's commit phase may run on another worker, the conflict manager may roll
    back a prepared transaction) when the hand-over orders the calls.
    """

    @property
    def name(self) -> str: ...

    @property
    def state(self) -> SessionState: ...

    @property
    def transaction(self) -> TransactionRef | None:
        """The transaction begun and not yet committed or rolled back."""
        ...

    def begin(self, trx: TransactionRef) -> None:
        """Start ``trx`` (the session must be IDLE)."""
        ...

    def apply_rows(self, table_map: TableMap, changes: Sequence[RowChange]) -> None:
        """Lock, check and stage one rows event's changes.

        Raises:
            EngineError: 1146 unknown table; STRICT mode: 1062 duplicate key, 1032 missing
                row; 1205 lock wait timeout; 1213 deadlock (or the error an ``abort`` of
                this transaction carried). The transaction must then be rolled back.
        """
        ...

    def apply_ddl(
        self, statement: str, database: str | None, defaults: CharsetDefaults = ...
    ) -> None:
        """Check and stage a DDL statement (``database``: the Query event's default one;
        ``defaults``: the source's where the statement names no character set or collation).

        Raises:
            EngineError: MySQL's error for the statement (1007, 1008, 1049, 1050, 1051,
                1060, 1091, 1146, ...); 1064 when it does not parse; 1235 when the engine
                does not support it.
        """
        ...

    def keep_prepared(self, prepared: PreparedXa) -> None:
        """Stage keeping a prepared XA transaction (``storage.prepared_xa``): kept once this
        transaction commits.

        Raises:
            EngineError: 1440 when its xid is prepared already.
        """
        ...

    def take_prepared(self, xid: str) -> PreparedXa | None:
        """The prepared XA transaction kept under ``xid`` (None: there is none), staged to be
        dropped when this transaction commits."""
        ...

    def prepare(self) -> None:
        """End the apply phase: after it only ``commit`` or ``rollback`` may follow.

        Raises:
            EngineError: the error of an ``abort`` requested for this transaction.
        """
        ...

    def commit(self, *, durable: bool = True) -> None:
        """Make every staged change visible at once, release the locks, end the transaction;
        then, with ``durable``, wait until the commit is durable (``wait_durable``). An engine
        with ``background_durability`` never waits: it reports durability through
        ``StorageEngine.after_durable`` instead.

        Commits become visible in the order of the calls. Under
        ``replica_preserve_commit_order`` the applier calls ``commit(durable=False)`` in
        commit order and ``wait_durable`` afterwards, in parallel: commits waiting together are
        made durable together (group commit, WL#7846 / requirements T82).
        """
        ...

    def wait_durable(self) -> None:
        """Wait until this session's last commit is durable (at once when it is)."""
        ...

    def rollback(self) -> None:
        """Discard the staged changes and release the locks; does nothing when IDLE."""
        ...


class StorageEngine(Protocol):
    """A storage engine: sessions for the workers, committed content for tests and queries."""

    #: ``replica_exec_mode``; a transaction uses the value it finds at ``begin``.
    exec_mode: ExecMode
    #: ``innodb_lock_wait_timeout`` in seconds: how long a row lock wait lasts (→ 1205).
    lock_wait_timeout: float

    @property
    def background_durability(self) -> bool:
        """True when commits become durable later, in groups written in the background (the
        Spark engine): ``commit`` and ``wait_durable`` return at once, and work that must wait
        for durability (releasing relay log files) goes through ``after_durable``."""
        ...

    def after_durable(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once every commit made so far is durable: at once when it is,
        otherwise from the engine's flushing thread. Callbacks must be quick and not raise."""
        ...

    @property
    def locks(self) -> LockManager[TransactionRef]: ...

    def session(self, name: str) -> EngineSession: ...

    def on_failure(self, callback: Callable[[str], None]) -> None:
        """Have ``callback`` called once, with the reason, when the engine can make nothing
        durable in this process any more (the Spark driver JVM exited; another process
        took over the commit point); at once if it already failed. The server exits then:
        what was not made durable is applied again from the relay log after a restart."""
        ...

    def stats(self) -> EngineStats:
        """Commits, flushes and commits waiting for a flush."""
        ...

    def flush(self) -> None:
        """Return once every commit made so far is durable."""
        ...

    def close(self) -> None:
        """Make what is committed durable and stop the engine's threads. Idempotent."""
        ...

    def queries(self, max_queries: int) -> Any:
        """The engine's query runner for the server's SELECTs on replicated tables, running at
        most ``max_queries`` at once (a ``sql_handlers.query.interfaces.QueryEngine``); None
        when the engine runs no queries (the in-memory engine: the server answers from
        ``rows``)."""
        ...

    def databases(self) -> list[str]:
        """The databases, sorted."""
        ...

    def database_collation(self, name: str) -> str:
        """The default collation of database ``name`` ("" when not known)."""
        ...

    def tables(self) -> list[TableRef]:
        """The tables, sorted."""
        ...

    def definition(self, table: TableRef) -> TableDef:
        """The definition of ``table``. Raises ``EngineError`` 1146 for an unknown table."""
        ...

    def objects(self) -> list[StoredObject]:
        """The views, triggers, routines and events kept, sorted by kind, database, name."""
        ...

    def accounts(self) -> Accounts:
        """The replicated accounts as of the last commit (``storage.accounts``)."""
        ...

    def prepared_xa(self) -> list[PreparedXa]:
        """The prepared XA transactions as of the last commit, sorted by xid."""
        ...

    def rows(self, table: TableRef) -> list[Row]:
        """The committed rows of ``table``, in no particular order (a keyless table repeats
        a row as many times as it holds it). Raises ``EngineError`` 1146 for an unknown
        table."""
        ...
