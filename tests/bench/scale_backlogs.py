"""Where ``bench_scale.py``'s rows come from, and what the replica must end with: a binary log
the workload generator writes for the built-in binlog source, or a real MariaDB that
sysbench loads and drives.

Both give the bench the same steps: ``serve`` (the source answering, the load in its binary
log), ``add_workload`` (the write workload added as a backlog while the replica does not
apply it, then released to the channel), and the truth the replica is compared with:
``count`` of each table, ``rows`` by id, ``transactions`` (GTIDs logged)."""

from __future__ import annotations

import random
import re
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol

import pymysql
from tests.helpers.builtin_source import SourceProcess
from tests.helpers.live_source import source_gtids
from tests.helpers.mariadb import ROOT_PASSWORD, MariaDB, existing_mariadb, running_mariadb
from tests.helpers.replica_channel import CHANNEL

from spark_replica.tools.generator.simulate import (
    Dependency,
    GeneratedTransaction,
    Source,
    WorkloadSpec,
)
from spark_replica.tools.generator.writer import TransactionEncoder
from spark_replica.tools.source import SourceBinlog

Row = tuple[object, ...]
#: A transaction's events as the source's binary log appends them, and its GTID.
Encoded = tuple[list[bytes], tuple[str, int]]
CLIENTS = 16
CHANGES_PER_TRANSACTION = 4
#: MariaDB's settings for a load of tens of millions of rows on this machine: a buffer pool
#: that holds the table's hot part, and no flush to disk at each commit (the source's
#: durability is not what is measured).
MARIADB_SETTINGS = """innodb_buffer_pool_size=2G
innodb_log_file_size=1G
innodb_flush_log_at_trx_commit=0
sync_binlog=0
max_binlog_size=1G
"""
SYSBENCH_DATABASE = "sbtest"


class Backlog(Protocol):
    """What ``bench_scale.py`` replicates (see the module docstring)."""

    #: The big table, qualified (``db.table``), and every table loaded.
    big: str
    tables: list[str]
    #: Rows loaded, GTIDs of the setup and the load, binary log bytes, seconds per part.
    loaded_rows: int
    setup: int
    bytes: int
    seconds: dict[str, float]

    def serve(self) -> AbstractContextManager[Backlog]: ...

    @property
    def port(self) -> int: ...

    @property
    def transactions(self) -> int: ...

    def add_workload(self, cursor: Any) -> None: ...

    def count(self, table: str) -> int: ...

    def ids(self, n: int, rng: random.Random) -> list[int]: ...

    def rows(self, ids: Sequence[int]) -> dict[int, Row]: ...


# -- the generator and the built-in binlog source -------------------------------------------
def workload_spec(rows: int, tables: int, transactions: int, load_batch: int) -> WorkloadSpec:
    """``rows`` sysbench rows over ``tables`` tables, then the oltp_write_only workload."""
    return WorkloadSpec(
        tables=tables,
        rows_per_table=rows // tables,
        transactions=transactions,
        changes_per_transaction=CHANGES_PER_TRANSACTION,
        clients=CLIENTS,
        conflict_share=0.0,
        dependency=Dependency.WRITESET,
        load_batch=load_batch,
    )


class GeneratedBacklog:
    """The source's binary log in ``directory``, written in two parts by the workload
    generator: the setup (CREATE DATABASE and TABLE, the load), then the write workload,
    appended while the built-in source is stopped. The generator makes one transaction at a
    time but keeps every row (to know the final content): about 0.5 KB per row."""

    def __init__(self, directory: Path, spec: WorkloadSpec) -> None:
        self.spec = spec
        self.directory = directory
        self._source = Source(spec)
        self._encoder = TransactionEncoder(spec.server_uuid)
        self._server: SourceProcess | None = None
        self.transactions = 0
        self.setup = 0
        self.bytes = 0
        self.seconds: dict[str, float] = {}
        self.loaded_rows = spec.rows_per_table * spec.tables
        self.tables = [table.qualified for table in self._source.tables.values()]
        self.big = self.tables[0]

    @contextmanager
    def serve(self) -> Iterator[GeneratedBacklog]:
        """Write the setup, then serve the binary log (``spark-replica source``)."""
        start = time.perf_counter()
        self._append(self._encode(self._source.setup()))
        self.setup = self.transactions
        self.seconds["setup"] = time.perf_counter() - start
        self._server = SourceProcess(self.directory).start()
        try:
            yield self
        finally:
            self._server.stop()

    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.port

    def add_workload(self, cursor: Any) -> None:
        """Generate the write workload, stop the source, append it, start the source again
        on the same port (the receiver reconnects)."""
        assert self._server is not None
        start = time.perf_counter()
        encoded = list(self._encode(self._source.workload()))
        self.seconds["workload"] = time.perf_counter() - start
        self._server.stop()
        self._append(iter(encoded))
        self._server.start()

    def _final(self, table: str) -> dict[object, Row]:
        for name, rows in self._source.rows.items():
            if self._source.tables[name].qualified == table:
                return rows
        raise KeyError(table)

    def count(self, table: str) -> int:
        return len(self._final(table))

    def ids(self, n: int, rng: random.Random) -> list[int]:
        keys = sorted(key for key in self._final(self.big) if isinstance(key, int))
        return rng.sample(keys, min(n, len(keys)))

    def rows(self, ids: Sequence[int]) -> dict[int, Row]:
        rows = self._final(self.big)
        return {key: rows[key] for key in ids if key in rows}

    def _encode(self, transactions: Iterator[GeneratedTransaction]) -> Iterator[Encoded]:
        for trx in transactions:
            yield self._encoder.encode(trx), (self.spec.server_uuid, trx.gno)

    def _append(self, encoded: Iterator[Encoded]) -> None:
        binlog = SourceBinlog(self.directory)
        binlog.open()
        try:
            for data, gtid in encoded:
                binlog.append(data, gtid)
                self.transactions += 1
            self.bytes = sum(size for _, size in binlog.files())
        finally:
            binlog.close()


# -- a real MariaDB that sysbench loads and drives ------------------------------------------
class MariaDBBacklog:
    """A MariaDB (Debian's, started in ``directory``) that ``sysbench oltp_write_only
    prepare`` loads with ``rows`` rows in ``tables`` tables (bulk INSERTs, then the secondary
    index on k); the write workload is ``sysbench oltp_write_only run`` for ``transactions``
    events from 16 threads (an index update, a non-index update, a delete and an insert of
    the same id), run while the replica's channel is stopped, so it is a backlog when the
    channel starts again. The truth is MariaDB's own tables, read over the wire."""

    def __init__(
        self, directory: Path, rows: int, tables: int, transactions: int, reuse: bool = False
    ) -> None:
        self.directory = directory
        #: ``directory`` holds a MariaDB an earlier run loaded with these rows: started as
        #: it is, not installed and loaded again.
        self.reuse = reuse
        self.rows_per_table = rows // tables
        self.loaded_rows = self.rows_per_table * tables
        self.workload_events = transactions
        self.tables = [f"{SYSBENCH_DATABASE}.sbtest{n}" for n in range(1, tables + 1)]
        self.big = self.tables[0]
        self.setup = 0
        self.bytes = 0
        self.seconds: dict[str, float] = {}
        self._server: MariaDB | None = None
        self._conn: Any = None

    @contextmanager
    def serve(self) -> Iterator[MariaDBBacklog]:
        """Start MariaDB, load it with sysbench (timed: MariaDB's own load rate)."""
        if self.reuse:
            started = existing_mariadb(self.directory)
        else:
            started = running_mariadb(self.directory, settings=MARIADB_SETTINGS)
        with started as server:
            self._server = server
            if self.reuse:
                self.seconds["setup"] = 0.0  # loaded by an earlier run
            else:
                server.sql("SET sql_log_bin = 0; RESET MASTER")
                server.sql(f"CREATE DATABASE {SYSBENCH_DATABASE}")  # the replica's first GTID
                start = time.perf_counter()
                self._sysbench("prepare")
                self.seconds["setup"] = time.perf_counter() - start
            self.setup = self.transactions
            self.bytes = self._binlog_bytes()
            self._conn = pymysql.connect(
                host=server.host, port=server.port, user="root", password=ROOT_PASSWORD,
                database=SYSBENCH_DATABASE, autocommit=True,
            )  # fmt: skip
            try:
                yield self
            finally:
                self._conn.close()

    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.port

    @property
    def transactions(self) -> int:
        assert self._server is not None
        return source_gtids(self._server).count()

    def add_workload(self, cursor: Any) -> None:
        """STOP REPLICA, run the sysbench workload on MariaDB (timed: MariaDB's own commit
        rate), START REPLICA."""
        cursor.execute(f"STOP REPLICA FOR CHANNEL '{CHANNEL}'")
        start = time.perf_counter()
        self._sysbench("run")
        self.seconds["workload"] = time.perf_counter() - start
        self.bytes = self._binlog_bytes()
        cursor.execute(f"START REPLICA FOR CHANNEL '{CHANNEL}'")

    def count(self, table: str) -> int:
        with self._conn.cursor() as cursor:
            cursor.execute(f"SELECT COUNT(*) FROM {table}")
            return int(cursor.fetchone()[0])

    def ids(self, n: int, rng: random.Random) -> list[int]:
        return rng.sample(range(1, self.rows_per_table + 1), min(n, self.rows_per_table))

    def rows(self, ids: Sequence[int]) -> dict[int, Row]:
        if not ids:
            return {}
        with self._conn.cursor() as cursor:
            marks = ", ".join(["%s"] * len(ids))
            cursor.execute(f"SELECT id, k, c, pad FROM {self.big} WHERE id IN ({marks})", ids)
            return {row[0]: tuple(row) for row in cursor.fetchall()}

    def _binlog_bytes(self) -> int:
        assert self._server is not None
        return sum(int(line.split("\t")[1]) for line in
                   self._server.sql("SHOW BINARY LOGS").splitlines() if "\t" in line)  # fmt: skip

    def _sysbench(self, command: str) -> str:
        assert self._server is not None
        return sysbench(
            self._server, command, tables=len(self.tables), rows=self.rows_per_table,
            threads=1 if command == "prepare" else CLIENTS, events=self.workload_events,
        )  # fmt: skip


def sysbench(server: MariaDB, command: str, *, tables: int, rows: int, threads: int,
             events: int) -> str:  # fmt: skip
    """Run ``sysbench oltp_write_only COMMAND`` against ``server``'s ``sbtest`` database
    (``tables`` tables of ``rows`` rows; ``events`` transactions from ``threads`` threads,
    deadlocks and lock waits retried); its output."""
    done = subprocess.run(
        ["sysbench", "oltp_write_only", "--db-driver=mysql",
         f"--mysql-host={server.host}", f"--mysql-port={server.port}",
         "--mysql-user=root", f"--mysql-password={ROOT_PASSWORD}",
         f"--mysql-db={SYSBENCH_DATABASE}", f"--tables={tables}",
         f"--table-size={rows}", f"--threads={threads}",
         f"--events={events}", "--time=0", "--rand-seed=1",
         "--report-interval=0", "--mysql-ignore-errors=1213,1205", command],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"sysbench {command} failed: {done.stdout}{done.stderr}")
    if command == "run" and not re.search(r"^\s*transactions:\s+\d+", done.stdout, re.M):
        raise RuntimeError(f"sysbench run reported no transactions: {done.stdout}")
    return done.stdout
