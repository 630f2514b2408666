"""A simulated source: concurrent clients, row locks, commit order, and the binlog they yield.

Clients run transactions through three steps, interleaved at random (seeded):
execute (take row locks and compute the row changes against the current data), prepare
(read the commit clock: ``last_committed``) and commit (step the clock: ``sequence_number``,
release the locks). A client that needs a row another transaction holds waits, as on InnoDB,
so two transactions that touch the same row never prepare together; DDL and file rotation
wait until no transaction is in flight. The result is the source's binlog order with
MySQL's dependency data, and the final content of every table.

``keyless_tables`` of the tables have no primary key: their CREATE TABLE and Table_map carry
none, so a replica finds their rows by the whole before image. The simulation still keeps
their first column unique and locks and tracks rows by it (InnoDB locks them by its hidden
row id); with WRITESET a transaction writing such a table gets the commit-order
``last_committed``, as MySQL computes no write set for rows without a key.

With ``databases`` above 1 the tables are dealt round-robin over the databases
``<database>1`` ... ``<database>D`` (table names stay unique across them), and each
transaction changes the tables of one database, picked at random: the shape
``replica_parallel_type=DATABASE`` spreads over its workers. With one database its name is
``<database>`` itself.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

from spark_replica.applier_core.binlog.constants import ColumnType
from spark_replica.tools.generator.clock import CommitOrderClock, WritesetClock
from spark_replica.tools.generator.schema import (
    TABLE_FACTORIES,
    ColumnDef,
    Row,
    TableDef,
    random_value,
)

SERVER_UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
BASE_TIME_US = 1_700_000_000_000_000
#: How many rows (the smallest keys of a table) the conflicting share of changes picks from.
HOT_ROWS = 10


class Dependency(enum.Enum):
    COMMIT_ORDER = "commit_order"
    WRITESET = "writeset"
    #: Every transaction claims to depend on nothing: wrong data an applier must survive.
    BROKEN = "broken"


@dataclass(frozen=True, slots=True)
class WorkloadSpec:
    tables: int = 2
    rows_per_table: int = 100
    transactions: int = 1000
    changes_per_transaction: int = 4
    clients: int = 8
    conflict_share: float = 0.1
    large_share: float = 0.0
    large_size: int = 1000
    ddl_every: int = 0
    rotate_every: int = 0
    schema: str = "sbtest"
    database: str = "shop"
    dependency: Dependency = Dependency.COMMIT_ORDER
    seed: int = 1
    load_batch: int = 100
    server_uuid: str = SERVER_UUID
    #: How many of the tables (the first ones: ``<schema>1`` ...) have no primary key.
    keyless_tables: int = 0
    #: How many databases the tables are spread over (each transaction stays in one).
    databases: int = 1

    def __post_init__(self) -> None:
        if not 0 <= self.keyless_tables <= self.tables:
            raise ValueError(f"keyless_tables must be between 0 and tables ({self.tables})")
        if not 1 <= self.databases <= self.tables:
            raise ValueError(
                f"databases must be between 1 and tables ({self.tables}), not {self.databases}"
            )

    @property
    def database_names(self) -> tuple[str, ...]:
        """The databases' names: ``<database>`` alone, or ``<database>1`` ... ``<database>D``."""
        if self.databases == 1:
            return (self.database,)
        return tuple(f"{self.database}{i}" for i in range(1, self.databases + 1))

    def database_of(self, index: int) -> str:
        """The database of the table numbered ``index`` (from 1): dealt round-robin."""
        names = self.database_names
        return names[(index - 1) % len(names)]


@dataclass(frozen=True, slots=True)
class RowChange:
    table: TableDef
    kind: str  # "insert", "update" or "delete"
    before: Row | None
    after: Row | None


@dataclass(frozen=True, slots=True)
class GeneratedTransaction:
    gno: int
    last_committed: int
    sequence_number: int
    commit_time_us: int
    file_index: int
    changes: tuple[RowChange, ...] = ()
    #: A DDL statement (and the database it runs in) instead of row changes.
    ddl: str | None = None
    ddl_database: str = ""


@dataclass(slots=True)
class _Client:
    changes: list[RowChange] = field(default_factory=list)
    keys: set[tuple[str, object]] = field(default_factory=set)
    step: str = "idle"  # idle -> executed -> prepared
    last_committed: int = 0


class Source:
    """The simulated source database and its binlog order."""

    def __init__(self, spec: WorkloadSpec) -> None:
        self.spec = spec
        self.rng = random.Random(spec.seed)
        factory = TABLE_FACTORIES[spec.schema]
        made = (factory(spec.database_of(i), i) for i in range(1, spec.tables + 1))
        #: Every table by name (names are unique across the databases).
        self.tables = {
            t.name: t.without_primary_key() if i < spec.keyless_tables else t
            for i, t in enumerate(made)
        }
        self.databases = spec.database_names
        #: The names of each database's tables, sorted: what a transaction picks from.
        self.names_by_database = {
            db: sorted(n for n, t in self.tables.items() if t.schema == db) for db in self.databases
        }
        self.rows: dict[str, dict[object, Row]] = {name: {} for name in self.tables}
        self.next_id = dict.fromkeys(self.tables, 1)
        #: No key below this one exists (see ``_hot_keys``).
        self.low_key = dict.fromkeys(self.tables, 1)
        self.locks: set[tuple[str, object]] = set()
        self.clock = CommitOrderClock()
        self.writeset = WritesetClock()
        self.gno = 0
        self.file_index = 1
        self.in_file = 0
        self.extra_columns = 0

    # -- output ----------------------------------------------------------------------------
    def _emit(
        self, last_committed: int, keys: set[tuple[str, object]], *, ddl: bool
    ) -> tuple[int, int]:
        sequence_number = self.clock.commit()
        if ddl:
            last_committed = sequence_number - 1
        if self.spec.dependency is Dependency.WRITESET:
            hashed = {k for k in keys if not self.tables[k[0]].keyless}
            last_committed = self.writeset.last_committed(
                hashed,
                sequence_number,
                commit_parent=last_committed,
                ddl=ddl,
                missing_keys=len(hashed) < len(keys),
            )
        elif self.spec.dependency is Dependency.BROKEN and not ddl:
            last_committed = 0
        self.gno += 1
        self.in_file += 1
        return last_committed, sequence_number

    def _transaction(
        self, last_committed: int, sequence_number: int, **kw: object
    ) -> GeneratedTransaction:
        return GeneratedTransaction(
            gno=self.gno,
            last_committed=last_committed,
            sequence_number=sequence_number,
            commit_time_us=BASE_TIME_US + self.gno * 1000,
            file_index=self.file_index,
            **kw,  # type: ignore[arg-type]
        )

    def _serial(self, **kw: object) -> GeneratedTransaction:
        """A transaction that runs alone (DDL, bulk load)."""
        changes = kw.get("changes", ())
        keys = {(c.table.name, _key(c)) for c in changes}  # type: ignore[attr-defined]
        parent = self.clock.prepare()
        last_committed, seq = self._emit(parent, keys, ddl="ddl" in kw)
        return self._transaction(last_committed, seq, **kw)

    def _maybe_rotate(self) -> None:
        if self.spec.rotate_every and self.in_file >= self.spec.rotate_every:
            self.file_index += 1
            self.in_file = 0
            self.clock.rotate()
            self.writeset.rotate()

    # -- phases ----------------------------------------------------------------------------
    def setup(self) -> Iterator[GeneratedTransaction]:
        for db in self.databases:
            yield self._serial(ddl=f"CREATE DATABASE `{db}`", ddl_database=db)
        for table in self.tables.values():
            yield self._serial(ddl=table.create_statement(), ddl_database=table.schema)
        for name, table in self.tables.items():
            remaining = self.spec.rows_per_table
            while remaining > 0:
                batch = [
                    self._insert(name, table) for _ in range(min(remaining, self.spec.load_batch))
                ]
                remaining -= len(batch)
                yield self._serial(changes=tuple(batch))

    def workload(self) -> Iterator[GeneratedTransaction]:
        clients = [_Client() for _ in range(self.spec.clients)]
        started = 0
        done = 0
        total = self.spec.transactions
        while done < total:
            barrier = self._barrier_due(done)
            idle = all(c.step == "idle" for c in clients)
            if barrier and idle:
                yield from self._run_barrier(done)
                barrier = False
            client = self.rng.choice(clients)
            if client.step == "idle":
                if barrier or started >= total:
                    continue
                if self._execute(client):
                    started += 1
            elif client.step == "executed":
                client.last_committed = self.clock.prepare()
                client.step = "prepared"
            else:
                last_committed, seq = self._emit(client.last_committed, client.keys, ddl=False)
                yield self._transaction(last_committed, seq, changes=tuple(client.changes))
                self.locks -= client.keys
                clients[clients.index(client)] = _Client()
                done += 1

    def _ddl_due(self, done: int) -> bool:
        every = self.spec.ddl_every
        return bool(every) and done > 0 and self.extra_columns < done // every

    def _barrier_due(self, done: int) -> bool:
        rotate_due = bool(self.spec.rotate_every) and self.in_file >= self.spec.rotate_every
        return self._ddl_due(done) or rotate_due

    def _run_barrier(self, done: int) -> Iterator[GeneratedTransaction]:
        self._maybe_rotate()
        if self._ddl_due(done):
            self.extra_columns += 1
            name = self.rng.choice(sorted(self.tables))
            column = ColumnDef(f"extra{self.extra_columns}", "INT", ColumnType.LONG)
            table = self.tables[name] = self.tables[name].with_column(column)
            self.rows[name] = {k: (*row, None) for k, row in self.rows[name].items()}
            statement = f"ALTER TABLE `{table.schema}`.`{name}` ADD COLUMN `{column.name}` INT"
            yield self._serial(ddl=statement, ddl_database=table.schema)

    def _execute(self, client: _Client) -> bool:
        """Compute the client's next transaction; False when a row it needs is locked."""
        rng = self.rng
        large = self.spec.large_share and rng.random() < self.spec.large_share
        count = self.spec.large_size if large else self.spec.changes_per_transaction
        changes: list[RowChange] = []
        keys: set[tuple[str, object]] = set()
        names = self._pick_database()
        for _ in range(count):
            name = rng.choice(names)
            table = self.tables[name]
            kind = (
                "insert" if large else rng.choices(("update", "insert", "delete"), (70, 15, 15))[0]
            )
            if kind == "insert":
                change = self._insert(name, table)
            else:
                key = self._pick_key(name)
                if key is None or (name, key) in keys:
                    continue
                if (name, key) in self.locks:
                    self._undo(changes)
                    return False
                change = (
                    self._update(name, table, key)
                    if kind == "update"
                    else self._delete(name, table, key)
                )
            keys.add((name, _key(change)))
            changes.append(change)
        if not changes:  # every row it picked was taken: insert one instead
            name = rng.choice(names)
            change = self._insert(name, self.tables[name])
            keys.add((name, _key(change)))
            changes.append(change)
        client.changes, client.keys, client.step = changes, keys, "executed"
        self.locks |= keys
        return True

    def _pick_database(self) -> list[str]:
        """The sorted table names of the database a new transaction changes, picked
        uniformly when there are several (with one, nothing is drawn from the seeded rng)."""
        databases = self.databases
        if len(databases) == 1:
            return self.names_by_database[databases[0]]
        return self.names_by_database[self.rng.choice(databases)]

    # -- data --------------------------------------------------------------------------------
    def _pick_key(self, name: str) -> object | None:
        rows = self.rows[name]
        if not rows:
            return None
        if self.rng.random() < self.spec.conflict_share:
            return self.rng.choice(self._hot_keys(name))
        for _ in range(8):
            key = self.rng.randint(1, self.next_id[name] - 1)
            if key in rows:
                return key
        return next(iter(rows))

    def _hot_keys(self, name: str) -> list[int]:
        """The table's ``HOT_ROWS`` smallest keys: the rows conflicting transactions share.

        Keys only grow (a deleted key comes back only when a transaction is undone), so the
        scan starts at the smallest key that may still exist.
        """
        rows, end = self.rows[name], self.next_id[name]
        key = self.low_key[name]
        while key not in rows and key < end:
            key += 1
        self.low_key[name] = key
        found: list[int] = []
        while len(found) < HOT_ROWS and key < end:
            if key in rows:
                found.append(key)
            key += 1
        return found

    def _new_row(self, table: TableDef, key: int) -> Row:
        values = [random_value(self.rng, c) for c in table.columns]
        values[0] = key
        if table.columns[1].name == "k":
            values[1] = self.rng.randint(1, max(1, self.spec.rows_per_table))
        return tuple(values)

    def _insert(self, name: str, table: TableDef) -> RowChange:
        key = self.next_id[name]
        self.next_id[name] += 1
        row = self._new_row(table, key)
        self.rows[name][key] = row
        return RowChange(table, "insert", None, row)

    def _update(self, name: str, table: TableDef, key: object) -> RowChange:
        before = self.rows[name][key]
        fresh = self._new_row(table, 0)
        column = self.rng.randrange(1, len(table.columns))
        after = tuple(fresh[i] if i == column else v for i, v in enumerate(before))
        self.rows[name][key] = after
        return RowChange(table, "update", before, after)

    def _delete(self, name: str, table: TableDef, key: object) -> RowChange:
        before = self.rows[name].pop(key)
        return RowChange(table, "delete", before, None)

    def _undo(self, changes: list[RowChange]) -> None:
        for change in reversed(changes):
            rows = self.rows[change.table.name]
            if change.kind == "insert":
                assert change.after is not None
                del rows[change.after[0]]
            else:
                assert change.before is not None
                rows[change.before[0]] = change.before
                key = change.before[0]
                assert isinstance(key, int)
                self.low_key[change.table.name] = min(self.low_key[change.table.name], key)


def _key(change: RowChange) -> object:
    row = change.before if change.before is not None else change.after
    assert row is not None
    return row[0]


def simulate(spec: WorkloadSpec) -> tuple[list[GeneratedTransaction], dict[str, list[Row]]]:
    """Every transaction in binlog order, and the final content of every table (by key)."""
    transactions, content, _ = simulate_with_tables(spec)
    return transactions, content


def simulate_with_tables(
    spec: WorkloadSpec,
) -> tuple[list[GeneratedTransaction], dict[str, list[Row]], dict[str, TableDef]]:
    """``simulate``, plus the final definition of every table by qualified name."""
    source = Source(spec)
    transactions = list(source.setup())
    transactions.extend(source.workload())
    content = {
        source.tables[name].qualified: [rows[k] for k in sorted(rows)]  # type: ignore[type-var]
        for name, rows in source.rows.items()
    }
    tables = {t.qualified: t for t in source.tables.values()}
    return transactions, content, tables
