"""Spark storage engine throughput: the flush path, queries over many batches, a whole drain.

Three measurements in one run (the machine is small and noisy, so every ratio compares two
figures measured moments apart in the same process, on the same SparkSession):

1. **Flush path vs one bulk write.** ``--rows`` rows of a sysbench-shaped table
   (``id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60)``) are committed through an engine
   session (inserts in transactions of 4 rows, then updates of one row in 4, also in
   transactions of 4) while a long flush interval keeps them queued; then ``engine.flush()``
   is timed: collect the commits' net changes, build the Arrow table, write it with Spark,
   record the batch in the metadata transaction. The baseline writes the same final rows
   once: ``to_arrow_table`` → ``spark.createDataFrame(table, schema=spark_schema(...))`` →
   ``.write.parquet(path)``, timed right before and right after the flush (the mean is the
   baseline). The engine-rows → Arrow conversion is included in both. Both write the same
   number of rows, so the ratio of rows/s is the ratio of times. Both paths first run once,
   untimed, on a table of the same size: the JVM compiles its write path during the first
   large writes, and whichever path ran first would pay for it.
2. **Queries on many batches vs compacted.** A table of ``--query-rows`` rows loaded in one
   flush, then ``--batches`` − 1 more flushes of a few row changes each (``compact_after`` set
   high so no compaction runs), then ``engine.compact(table)``: the median time of each query
   (a bare COUNT as the server answers it, a point lookup by id, a GROUP BY k) on the
   snapshot before the compaction and on the compacted one (``VERSION AS OF``, what the
   server's snapshot views read), read alternately ``--repeat`` times after one warm-up
   round. The results must be equal.
3. **End-to-end drain.** A generated relay log of ``--transactions`` sysbench
   oltp_write_only-shaped transactions (8 tables of 1,000 rows, 4 row changes each, 16
   clients, WRITESET dependency data; plus the setup and the load) applied by the Change
   Stream Applier (4 workers, replica_preserve_commit_order ON) into a ``SparkEngine`` with
   its default settings, timed from START until the last GTID is executed AND durable
   (``engine.flush()`` returned); then the content (in memory, and row counts as recorded
   in Spark) and the recorded GTIDs are checked. Peak memory: this process's maximum RSS
   (``getrusage``) and the Spark driver JVM's (``VmHWM`` in ``/proc/<pid>/status``), both
   reset just before the drain when the kernel allows it (``/proc/<pid>/clear_refs``), else
   peaks over the whole run; the output says which.

The exit code is 1 when a check fails (content, query results, GTIDs, a channel error), not
when a target is missed. Targets: flush path ≥ 0.5× the bulk write; drain ≥ 3,000
transactions/s.

Usage (from the repository root)::

    .venv/bin/python tests/bench/bench_spark_engine.py [--rows 100000] [--batches 200]
        [--transactions 100000] [--query-rows 20000] [--repeat 5] [--json PATH]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[2]
for _path in (_REPO / "src", _REPO):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from tests.bench.benchkit import load_average, machine_line, positive_int  # noqa: E402
from tests.unit.csa_apply.harness import Replica, copy_into_relay_log, generate  # noqa: E402

from spark_replica.applier_core.gtid import GtidSet  # noqa: E402
from spark_replica.applier_core.storage import RowChange, TableRef, TransactionRef  # noqa: E402
from spark_replica.applier_core.storage.spark.engine import (  # noqa: E402
    DEFAULT_COMPACT_AFTER,
    DEFAULT_FLUSH_INTERVAL,
    DEFAULT_FLUSH_ROWS,
    SparkEngine,
)
from spark_replica.applier_core.storage.spark.types import (  # noqa: E402
    spark_schema,
    to_arrow_table,
)
from spark_replica.metadata.factory import open_store  # noqa: E402
from spark_replica.tools.generator.simulate import (  # noqa: E402
    Dependency,
    WorkloadSpec,
)

DEFAULT_ROWS = 100_000
DEFAULT_BATCHES = 200
DEFAULT_QUERY_ROWS = 20_000
DEFAULT_TRANSACTIONS = 100_000
DEFAULT_REPEAT = 5
#: Row changes per transaction of parts 1 and 2 (sysbench's oltp_write_only makes 4).
ROWS_PER_TRANSACTION = 4
#: Part 1 updates one row in this many after inserting them all.
UPDATE_EVERY = 4
#: Rows per transaction of part 2's load (one flush: only the batch count matters there).
LOAD_TRANSACTION_ROWS = 1_000
#: Row changes of each small batch of part 2 (updates, a few inserts and deletes).
CHANGES_PER_BATCH = 40
#: Distinct values of ``k`` (the GROUP BY of part 2 returns this many groups at most).
K_VALUES = 1_000
#: Part 3: the sysbench oltp_write_only shape of ``tests/bench/bench_applier.py``.
DRAIN_TABLES = 8
DRAIN_ROWS_PER_TABLE = 1_000
DRAIN_CLIENTS = 16
DRAIN_WORKERS = 4
CHANNEL = "bench"
#: Seconds between looks at whether the channel stopped while the drain waits.
POLL = 0.5
#: Long enough that nothing is flushed until the benchmark asks.
NEVER = 24 * 3600.0
UNLIMITED = 1 << 62
TARGET_FLUSH_RATIO = 0.5
TARGET_TRANSACTIONS_PER_SECOND = 3_000.0
UUID = "b3c1a5e0-5a4c-4e11-9b3d-00000000be4c"
DATABASE = "bench"
TABLE_DDL = "CREATE TABLE {name} (id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60))"
#: The queries of part 2 (``{view}`` is the snapshot's view; ``{id}`` a key updated late).
QUERIES: tuple[tuple[str, str], ...] = (
    ("full count", ""),
    ("point lookup by id", "SELECT * FROM {view} WHERE id = {id}"),
    ("group by k", "SELECT k, COUNT(*) FROM {view} GROUP BY k"),
)
MB = 1024 * 1024
#: Part 2's target: a query on a table between compactions at most this many times slower
#: than on the same table compacted.
TARGET_READ_RATIO = 1.5

Row = tuple[int, int, str, str]


# -- helpers ---------------------------------------------------------------------------------
class Committer:
    """Commits transactions one at a time through one engine session, numbering GTIDs."""

    def __init__(self, engine: SparkEngine, name: str = "bench") -> None:
        self.session = engine.session(name)
        self.gno = 0

    def ddl(self, statement: str, database: str | None = DATABASE) -> None:
        self._begin()
        self.session.apply_ddl(statement, database)
        self.session.commit()

    def rows(self, table: TableRef, changes: Sequence[RowChange]) -> None:
        self._begin()
        self.session.apply_rows(table, changes)
        self.session.commit()

    def _begin(self) -> None:
        self.gno += 1
        self.session.begin(TransactionRef(f"{UUID}:{self.gno}", self.gno))


class SbtestRows:
    """sysbench-like rows: ``c`` of ten 11-digit groups, ``pad`` of five (picked from a pool,
    so making 100,000 rows costs little)."""

    def __init__(self, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        self._c = [self._digits(10) for _ in range(997)]
        self._pad = [self._digits(5) for _ in range(499)]

    def _digits(self, groups: int) -> str:
        return "-".join(f"{self.rng.randrange(10**11):011d}" for _ in range(groups))

    def row(self, key: int) -> Row:
        rng = self.rng
        return (key, rng.randint(1, K_VALUES), rng.choice(self._c), rng.choice(self._pad))

    def updated(self, row: Row) -> Row:
        """``row`` after sysbench's index and non-index updates (new ``k`` and ``c``)."""
        return (row[0], self.rng.randint(1, K_VALUES), self.rng.choice(self._c), row[3])


@contextmanager
def engine_at(
    spark: Any, directory: Path, **options: Any
) -> Iterator[tuple[SparkEngine, Committer]]:
    """A fresh engine (warehouse and SQLite metadata store in ``directory``) with the bench
    database created and flushed; closed (flusher joined) afterwards."""
    directory.mkdir(parents=True, exist_ok=True)
    store = open_store(f"sqlite:///{directory / 'metadata.db'}")
    try:
        engine = SparkEngine(spark, str(directory / "warehouse"), store, **options)
        try:
            committer = Committer(engine)
            committer.ddl(f"CREATE DATABASE {DATABASE}", None)
            yield engine, committer
        finally:
            engine.close()
    finally:
        store.close()


def create_table(committer: Committer, name: str) -> TableRef:
    committer.ddl(TABLE_DDL.format(name=name))
    return TableRef(DATABASE, name)


def commit_in_chunks(
    committer: Committer, table: TableRef, changes: Sequence[RowChange], size: int
) -> int:
    """Commit ``changes`` in transactions of ``size``; the number of transactions."""
    count = 0
    for start in range(0, len(changes), size):
        committer.rows(table, changes[start : start + size])
        count += 1
    return count


def count_rows(spark: Any, engine: SparkEngine, table: TableRef) -> int:
    """The table's row count as recorded (through a snapshot view)."""
    with engine.snapshot() as snapshot:
        view = snapshot.view(table)
        return int(engine.spark.sql(f"SELECT COUNT(*) FROM `{view}`").collect()[0][0])


class PhaseTimer:
    """Seconds spent in wrapped callables (the flush path's Spark write and metadata
    transaction), summed per phase. Wrapping an instance attribute leaves the class alone."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self._lock = threading.Lock()

    def wrap(self, owner: object, attribute: str, phase: str) -> bool:
        """Time ``owner.attribute`` (a method) as ``phase``; False when there is none."""
        inner = getattr(owner, attribute, None)
        if not callable(inner):
            return False

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                with self._lock:
                    elapsed = time.perf_counter() - start
                    self.seconds[phase] = self.seconds.get(phase, 0.0) + elapsed
                    self.calls[phase] = self.calls.get(phase, 0) + 1

        try:
            setattr(owner, attribute, timed)
        except AttributeError:  # slots, or a read-only attribute
            return False
        return True

    def reset(self) -> None:
        with self._lock:
            self.seconds.clear()
            self.calls.clear()


# -- part 1: the flush path against one bulk write -------------------------------------------
@dataclass(slots=True)
class FlushResult:
    rows: int
    row_changes: int
    transactions: int
    commit_seconds: float
    flush_seconds: float
    #: Seconds of the flush in the Spark write and in the metadata transaction (None: not
    #: measured, the engine had no such method to wrap).
    flush_write_seconds: float | None
    flush_record_seconds: float | None
    #: The mean of the bulk writes before and after the flush (and of their conversions).
    bulk_seconds: float
    bulk_convert_seconds: float
    bulk_before_seconds: float
    bulk_after_seconds: float
    error: str | None = None

    @property
    def flush_rows_per_second(self) -> float:
        return self.rows / self.flush_seconds

    @property
    def bulk_rows_per_second(self) -> float:
        return self.rows / self.bulk_seconds

    @property
    def ratio(self) -> float:
        return self.flush_rows_per_second / self.bulk_rows_per_second


def bulk_write(spark: Any, engine: SparkEngine, table: TableRef, path: Path) -> tuple[float, float]:
    """Write ``table``'s rows (as the engine holds them) with one Spark bulk write; the
    seconds it took in all and the seconds of the engine rows → Arrow conversion."""
    rows = engine.rows(table)
    columns = engine.definition(table).columns
    gc.collect()
    start = time.perf_counter()
    data = to_arrow_table(columns, rows)
    converted = time.perf_counter()
    frame = spark.createDataFrame(data, schema=spark_schema(columns))
    frame.write.mode("overwrite").parquet(str(path))
    return time.perf_counter() - start, converted - start


def sbtest_changes(maker: SbtestRows, rows: int) -> tuple[list[RowChange], list[Row]]:
    """Part 1's row changes (``rows`` inserts, then an update of one row in
    ``UPDATE_EVERY``) and the final rows they leave, by id."""
    current = [maker.row(i) for i in range(1, rows + 1)]
    changes = [RowChange.insert(row) for row in current]
    for index in range(0, rows, UPDATE_EVERY):
        after = maker.updated(current[index])
        changes.append(RowChange.update(current[index], after))
        current[index] = after
    return changes, current


def measure_flush(spark: Any, directory: Path, rows: int) -> FlushResult:
    """Part 1 (see the module docstring) in ``directory``.

    Both paths first run once untimed on a table of the same size: the JVM compiles its
    write path during the first large writes, and whichever ran first would pay for it.
    The bulk write is then timed right before and right after the flush (the machine's
    speed drifts), and the baseline is the mean of the two."""
    timer = PhaseTimer()
    options = {"flush_interval": NEVER, "flush_rows": UNLIMITED, "compact_after": UNLIMITED}
    with engine_at(spark, directory / "engine", **options) as (engine, committer):
        # The Spark write: the DataFrame made from Arrow, then written.
        timed_write = timer.wrap(engine, "_write_changes", "write")
        timed_record = timer.wrap(engine._metadata, "commit_spark_state", "record")
        maker = SbtestRows(seed=1)
        warmup = create_table(committer, "warmup")
        table = create_table(committer, "sbtest1")
        changes, _ = sbtest_changes(maker, rows)
        commit_in_chunks(committer, warmup, changes, ROWS_PER_TRANSACTION)
        engine.flush()
        bulk_write(spark, engine, warmup, directory / "bulk-warmup")

        changes, final = sbtest_changes(maker, rows)
        gc.collect()
        start = time.perf_counter()
        transactions = commit_in_chunks(committer, table, changes, ROWS_PER_TRANSACTION)
        commit_seconds = time.perf_counter() - start
        del changes
        queued = engine.stats().queued

        before = bulk_write(spark, engine, table, directory / "bulk-before")
        gc.collect()
        timer.reset()
        start = time.perf_counter()
        engine.flush()
        flush_seconds = time.perf_counter() - start
        phases = dict(timer.seconds)
        after = bulk_write(spark, engine, table, directory / "bulk-after")

        error = None
        recorded = count_rows(spark, engine, table)
        written = spark.read.parquet(str(directory / "bulk-after")).count()
        if queued != transactions:
            error = f"{transactions - queued:,} commits were flushed before the timed flush"
        elif recorded != rows or written != rows:
            error = f"expected {rows:,} rows: the flush recorded {recorded:,}, bulk {written:,}"
        elif sorted(engine.rows(table)) != final:
            error = "the engine's rows are not the rows committed"
        return FlushResult(
            rows=rows, row_changes=rows + len(range(0, rows, UPDATE_EVERY)),
            transactions=transactions, commit_seconds=commit_seconds,
            flush_seconds=flush_seconds,
            flush_write_seconds=phases.get("write", 0.0) if timed_write else None,
            flush_record_seconds=phases.get("record", 0.0) if timed_record else None,
            bulk_seconds=(before[0] + after[0]) / 2,
            bulk_convert_seconds=(before[1] + after[1]) / 2,
            bulk_before_seconds=before[0], bulk_after_seconds=after[0], error=error,
        )  # fmt: skip


def show_flush(result: FlushResult) -> None:
    r = result
    updates = r.row_changes - r.rows
    print(
        f"  committed first: {r.row_changes:,} row changes ({r.rows:,} inserts, then {updates:,} "
        f"updates) in {r.transactions:,} transactions of {ROWS_PER_TRANSACTION}, in "
        f"{r.commit_seconds:.2f} s ({r.transactions / r.commit_seconds:,.0f} trx/s, in memory, "
        "queued); both paths ran once untimed on a table of the same size first"
    )
    print(
        f"  both write the same {r.rows:,} final rows; the engine rows -> Arrow conversion is "
        "included in both"
    )
    parts = []
    if r.flush_write_seconds is not None:
        parts.append(f"Spark write {r.flush_write_seconds:.2f} s")
    if r.flush_record_seconds is not None:
        parts.append(f"metadata transaction {r.flush_record_seconds:.3f} s")
    if r.flush_write_seconds is not None and r.flush_record_seconds is not None:
        rest = r.flush_seconds - r.flush_write_seconds - r.flush_record_seconds
        parts.append(f"collect + Arrow + the rest {rest:.2f} s")
    detail = f" ({', '.join(parts)})" if parts else ""
    rate = f"{r.flush_rows_per_second:>10,.0f} rows/s"
    print(f"  flush path: {r.flush_seconds:8.2f} s {rate}{detail}")
    rate = f"{r.bulk_rows_per_second:>10,.0f} rows/s"
    spark_part = r.bulk_seconds - r.bulk_convert_seconds
    print(
        f"  bulk write: {r.bulk_seconds:8.2f} s {rate} (mean of {r.bulk_before_seconds:.2f} s "
        f"before the flush and {r.bulk_after_seconds:.2f} s after; Arrow conversion "
        f"{r.bulk_convert_seconds:.2f} s, createDataFrame + write.parquet {spark_part:.2f} s)"
    )
    verdict = "met" if r.ratio >= TARGET_FLUSH_RATIO else "NOT met"
    print(
        f"  flush path / bulk write: {r.ratio:.2f}x rows/s; target >= {TARGET_FLUSH_RATIO}x: "
        f"{verdict}"
    )
    if r.error is not None:
        print(f"  ERROR: {r.error}")


# -- part 2: queries over many batches, then compacted ---------------------------------------
@dataclass(slots=True)
class QueryTimes:
    label: str
    #: Median seconds of the query over many batches and compacted.
    batched: float
    compacted: float

    @property
    def ratio(self) -> float:
        """How many times slower the query is over many batches."""
        return self.batched / self.compacted


@dataclass(slots=True)
class QueryResult:
    rows: int
    batches: int
    batch_changes: int
    repeat: int
    #: Mean seconds of one small flush, and of the compaction.
    flush_seconds: float
    compact_seconds: float
    queries: list[QueryTimes] = field(default_factory=list)
    error: str | None = None


def _batch_changes(
    maker: SbtestRows, current: dict[int, Row], next_id: int, size: int = CHANGES_PER_BATCH
) -> tuple[list[RowChange], int]:
    """A small batch's changes against ``current`` (updated in place): mostly updates, an
    insert and a delete per 10 changes; the next unused id."""
    rng = maker.rng
    changes: list[RowChange] = []
    keys = rng.sample(sorted(current), size)
    for position, key in enumerate(keys):
        row = current[key]
        if position % 10 == 8:
            changes.append(RowChange.delete(row))
            del current[key]
        elif position % 10 == 9:
            new = maker.row(next_id)
            next_id += 1
            changes.append(RowChange.insert(new))
            current[new[0]] = new
        else:
            after = maker.updated(row)
            changes.append(RowChange.update(row, after))
            current[key] = after
    return changes, next_id


def _time_alternated(
    engine: SparkEngine, table: TableRef, snapshots: tuple[int, int], point: int, repeat: int
) -> tuple[list[tuple[float, float]], list[tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]]]:
    """Each query's median seconds on both ``snapshots`` of ``table`` (``VERSION AS OF``),
    and its sorted results there. The two are read alternately, which goes first changing
    from one round to the next, after one warm-up round: the JVM still compiles the scan's
    code during the first queries, and whichever snapshot were read first would pay for it.
    ``full count`` is answered as the server answers a bare ``COUNT(*)``: from the
    snapshot's metadata (``IcebergCatalog.live_rows``)."""
    name = engine.iceberg.sql_name(table)
    medians, results = [], []
    for label, template in QUERIES:
        sql = [template.format(view=f"{name} VERSION AS OF {snapshot}", id=point)
               for snapshot in snapshots]  # fmt: skip

        def run(side: int, label: str = label, sql: list[str] = sql) -> list[tuple[Any, ...]]:
            if label == "full count":
                return [(engine.iceberg.live_rows(table, snapshots[side]),)]
            return sorted(tuple(row) for row in engine.spark.sql(sql[side]).collect())

        times: tuple[list[float], list[float]] = ([], [])
        found = (run(0), run(1))  # the warm-up round
        for round_number in range(repeat):
            for side in (0, 1) if round_number % 2 else (1, 0):
                start = time.perf_counter()
                run(side)
                times[side].append(time.perf_counter() - start)
        medians.append((statistics.median(times[0]), statistics.median(times[1])))
        results.append(found)
    return medians, results


def measure_queries(
    spark: Any,
    directory: Path,
    rows: int,
    batches: int,
    repeat: int,
    batch_changes: int = CHANGES_PER_BATCH,
) -> QueryResult:
    """Part 2 (see the module docstring) in ``directory``."""
    options = {"flush_interval": NEVER, "flush_rows": UNLIMITED, "compact_after": UNLIMITED}
    with engine_at(spark, directory / "engine", **options) as (engine, committer):
        maker = SbtestRows(seed=2)
        table = create_table(committer, "sbtest1")
        current = {key: maker.row(key) for key in range(1, rows + 1)}
        load = [RowChange.insert(row) for row in current.values()]
        commit_in_chunks(committer, table, load, LOAD_TRANSACTION_ROWS)
        engine.flush()
        engine.compact(table)  # the engine's maintenance compacts a load's files
        next_id = rows + 1
        flush_seconds = 0.0
        point = 1
        for _ in range(batches - 1):
            changes, next_id = _batch_changes(maker, current, next_id, batch_changes)
            commit_in_chunks(committer, table, changes, ROWS_PER_TRANSACTION)
            point = next(int(c.after[0]) for c in changes if c.after is not None)  # type: ignore[call-overload]
            start = time.perf_counter()
            engine.flush()
            flush_seconds += time.perf_counter() - start
        stored = engine.durable_state().tables[table]
        start = time.perf_counter()
        engine.compact(table)
        compact_seconds = time.perf_counter() - start
        compacted_snapshot = engine.durable_state().tables[table].snapshot
        medians, found = _time_alternated(
            engine, table, (stored.snapshot, compacted_snapshot), point, repeat
        )

        error = None
        expected_groups: dict[int, int] = {}
        for row in current.values():
            expected_groups[row[1]] = expected_groups.get(row[1], 0) + 1
        expected = [
            [(len(current),)],
            [current[point]],
            sorted(expected_groups.items()),
        ]
        if stored.changes != batches - 1:
            error = f"the table had {stored.changes} batches, not {batches}"
        if compacted_snapshot == stored.snapshot:
            error = "the compaction recorded no new snapshot"
        for (label, _), (got, after), want in zip(QUERIES, found, expected, strict=True):
            if got != want or after != want:
                error = f"{label}: wrong result (batched {got[:3]}, compacted {after[:3]})"
        return QueryResult(
            rows=rows, batches=batches, batch_changes=batch_changes, repeat=repeat,
            flush_seconds=flush_seconds / max(1, batches - 1), compact_seconds=compact_seconds,
            queries=[QueryTimes(label, b, c)
                     for (label, _), (b, c) in zip(QUERIES, medians, strict=True)],
            error=error,
        )  # fmt: skip


def show_queries(result: QueryResult) -> None:
    r = result
    print(
        f"  table: {r.rows:,} rows loaded in one flush and compacted, then {r.batches - 1:,} "
        f"flushes of {r.batch_changes:,} row changes; a flush took "
        f"{r.flush_seconds * 1000:.0f} ms on average; compaction {r.compact_seconds:.2f} s"
    )
    print(f"  median of {r.repeat} runs after a warm-up, the two snapshots read alternately:")
    print(f"  {'query':<20} {'flushed':>10} {'compacted':>10} {'ratio':>7}")
    for q in r.queries:
        verdict = "met" if q.ratio <= TARGET_READ_RATIO else "NOT met"
        print(
            f"  {q.label:<20} {q.batched * 1000:>7.1f} ms {q.compacted * 1000:>7.1f} ms "
            f"{q.ratio:>6.2f}x (target <= {TARGET_READ_RATIO}x: {verdict})"
        )
    if r.error is not None:
        print(f"  ERROR: {r.error}")
    else:
        print("  results: equal over many batches and compacted, and as committed")


# -- part 3: a whole drain through the CSA ---------------------------------------------------
@dataclass(slots=True)
class DrainResult:
    transactions: int
    row_changes: int
    workers: int
    generate_seconds: float
    executed_seconds: float
    durable_seconds: float
    cpu_seconds: float
    flushes: int
    compactions: int
    compact_seconds: float
    #: Peak RSS in bytes, and what the peak covers ("the drain" or "the whole run").
    python_peak: int
    python_peak_scope: str
    jvm_peak: int | None
    jvm_peak_scope: str
    error: str | None = None

    @property
    def per_second(self) -> float:
        return self.transactions / self.durable_seconds

    @property
    def rows_per_second(self) -> float:
        return self.row_changes / self.durable_seconds


def drain_spec(transactions: int) -> WorkloadSpec:
    """sysbench's oltp_write_only shape, as ``tests/bench/bench_applier.py`` plans it."""
    return WorkloadSpec(
        tables=DRAIN_TABLES,
        rows_per_table=DRAIN_ROWS_PER_TABLE,
        transactions=transactions,
        changes_per_transaction=4,
        clients=DRAIN_CLIENTS,
        conflict_share=0.0,
        dependency=Dependency.WRITESET,
    )


def jvm_pid(spark: Any) -> int | None:
    """The Spark driver JVM's process id: the py4j gateway's process, else a ``java`` child of
    this process; None when neither is found (a remote driver)."""
    try:
        pid = int(spark.sparkContext._gateway.proc.pid)
        if _status(pid).get("Name") == "java":
            return pid
    except (AttributeError, TypeError, ValueError):
        pass
    me = str(os.getpid())
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if name.isdigit():
            status = _status(int(name))
            if status.get("PPid") == me and status.get("Name") == "java":
                return int(name)
    return None


def _status(pid: int) -> dict[str, str]:
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return {}
    return {k: v.strip() for k, _, v in (line.partition(":") for line in lines)}


def _reset_peak(pid: int | str) -> bool:
    """Reset the process's peak RSS (``VmHWM``; ``getrusage`` follows for this process)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def _vm_hwm(pid: int) -> int | None:
    value = _status(pid).get("VmHWM", "")
    number, _, unit = value.partition(" ")
    return int(number) * 1024 if number.isdigit() and unit == "kB" else None


def python_peak_rss() -> int:
    """This process's maximum RSS in bytes (``ru_maxrss`` is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _durable_counts_error(spark: Any, engine: SparkEngine, content: dict[str, Any]) -> str | None:
    """Whether every table as recorded in Spark holds as many rows as generated (one query)."""
    with engine.snapshot() as snapshot:
        refs = sorted(snapshot.state.tables)
        parts = [f"SELECT '{ref.schema}.{ref.table}', COUNT(*) FROM `{snapshot.view(ref)}`"
                 for ref in refs]  # fmt: skip
        found = dict(tuple(row) for row in engine.spark.sql(" UNION ALL ".join(parts)).collect())
    expected = {name: len(rows) for name, rows in content.items()}
    if found != expected:
        return f"rows recorded in Spark {found}, generated {expected}"
    return None


def measure_drain(
    spark: Any, directory: Path, transactions: int, workers: int = DRAIN_WORKERS
) -> DrainResult:
    """Part 3 (see the module docstring) in ``directory``."""
    spec = drain_spec(transactions)
    start = time.perf_counter()
    generated, content, files = generate(spec, directory / "source")
    generate_seconds = time.perf_counter() - start
    count = len(generated)
    row_changes = sum(len(trx.changes) for trx in generated)
    del generated
    data_dir = directory / "data"
    copy_into_relay_log(files, data_dir, CHANNEL)
    target = GtidSet.parse(f"{spec.server_uuid}:1-{count}")
    time_limit = max(300.0, count / 100)
    store = open_store(f"sqlite:///{directory / 'metadata.db'}")
    engine = SparkEngine(spark, str(directory / "warehouse"), store)
    timer = PhaseTimer()
    timer.wrap(engine, "compact", "compact")
    replica = Replica(data_dir, workers=workers, commit_order=True, channel=CHANNEL, engine=engine)
    jvm = jvm_pid(spark)
    gc.collect()
    python_reset = _reset_peak("self")
    jvm_reset = jvm is not None and _reset_peak(jvm)
    error: str | None = None
    try:
        start, cpu_start = time.perf_counter(), time.process_time()
        replica.start()
        deadline = start + time_limit
        done = False
        while not done and not replica.exited.is_set() and time.perf_counter() < deadline:
            done = replica.executed.wait_for(target, POLL)
        executed_seconds = time.perf_counter() - start
        if done:
            engine.flush()
        durable_seconds = time.perf_counter() - start
        cpu_seconds = time.process_time() - cpu_start
        replica.stop()
        if not done:
            error = (
                f"channel stopped before the last GTID: {replica.exits[-1]}"
                if replica.exits
                else f"the last GTID was not executed within {time_limit:.0f} s"
            )
        elif replica.exits:
            error = f"channel stopped: {replica.exits[-1]}"
        elif replica.content() != content:
            error = "the engine's content differs from the generated one"
        elif GtidSet.from_intervals(engine.durable_state().gtids) != target:
            error = "the recorded GTIDs are not every transaction of the relay log"
        else:
            error = _durable_counts_error(spark, engine, content)
        python_peak = python_peak_rss()
        jvm_peak = _vm_hwm(jvm) if jvm is not None else None
        stats = engine.stats()
    finally:
        replica.close()
        engine.close()
        store.close()
    return DrainResult(
        transactions=count, row_changes=row_changes, workers=workers,
        generate_seconds=generate_seconds, executed_seconds=executed_seconds,
        durable_seconds=durable_seconds, cpu_seconds=cpu_seconds, flushes=stats.flushes,
        compactions=timer.calls.get("compact", 0),
        compact_seconds=timer.seconds.get("compact", 0.0), python_peak=python_peak,
        python_peak_scope="the drain" if python_reset else "the whole run",
        jvm_peak=jvm_peak, jvm_peak_scope="the drain" if jvm_reset else "the whole run",
        error=error,
    )  # fmt: skip


def show_drain(result: DrainResult) -> None:
    r = result
    print(
        f"  workload: {r.transactions:,} transactions (setup and load included), "
        f"{r.row_changes:,} row changes; generated in {r.generate_seconds:.1f} s"
    )
    print(
        f"  SparkEngine defaults: flush every {DEFAULT_FLUSH_INTERVAL} s or "
        f"{DEFAULT_FLUSH_ROWS:,} rows, compaction after {DEFAULT_COMPACT_AFTER} batches; "
        f"CSA {r.workers} workers, commit order on"
    )
    print(
        f"  executed (last GTID) after {r.executed_seconds:.2f} s, durable (flush returned) "
        f"after {r.durable_seconds:.2f} s; {r.flushes:,} flushes, {r.compactions:,} "
        f"compactions ({r.compact_seconds:.1f} s); Python CPU {r.cpu_seconds:.1f} s "
        f"({r.cpu_seconds / r.transactions * 1e6:.0f} µs/trx)"
    )
    verdict = "met" if r.per_second >= TARGET_TRANSACTIONS_PER_SECOND else "NOT met"
    print(
        f"  drain: {r.per_second:,.0f} transactions/s, {r.rows_per_second:,.0f} rows/s "
        f"(until durable); target >= {TARGET_TRANSACTIONS_PER_SECOND:,.0f} "
        f"transactions/s: {verdict}"
    )
    jvm = (
        "unknown (no driver JVM found)"
        if r.jvm_peak is None
        else f"{r.jvm_peak / MB:,.0f} MiB (VmHWM, peak over {r.jvm_peak_scope})"
    )
    print(
        f"  peak memory: Python process {r.python_peak / MB:,.0f} MiB (getrusage max "
        f"RSS, peak over {r.python_peak_scope}); Spark driver JVM {jvm}"
    )
    if r.error is not None:
        print(f"  ERROR: {r.error}")


# -- main ------------------------------------------------------------------------------------
def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--rows",
        type=positive_int,
        default=DEFAULT_ROWS,
        help=f"rows of part 1 (default {DEFAULT_ROWS:,})",
    )
    parser.add_argument(
        "--batches",
        type=positive_int,
        default=DEFAULT_BATCHES,
        help=f"change-log batches of part 2 (default {DEFAULT_BATCHES})",
    )
    parser.add_argument(
        "--query-rows",
        type=positive_int,
        default=DEFAULT_QUERY_ROWS,
        help=f"rows of part 2's table (default {DEFAULT_QUERY_ROWS:,})",
    )
    parser.add_argument(
        "--batch-changes",
        type=positive_int,
        default=CHANGES_PER_BATCH,
        help=f"row changes of each flush of part 2 (default {CHANGES_PER_BATCH})",
    )
    parser.add_argument(
        "--parts",
        default="1,2,3",
        help="the parts to run, comma-separated (default 1,2,3)",
    )
    parser.add_argument(
        "--repeat",
        type=positive_int,
        default=DEFAULT_REPEAT,
        help=f"runs of each query of part 2 (default {DEFAULT_REPEAT})",
    )
    parser.add_argument(
        "--transactions",
        type=positive_int,
        default=DEFAULT_TRANSACTIONS,
        help=f"workload transactions of part 3 (default {DEFAULT_TRANSACTIONS:,})",
    )
    parser.add_argument(
        "--json", metavar="PATH", default=None, help="also write the figures to PATH as JSON"
    )
    args = parser.parse_args(argv)
    if args.query_rows < args.batch_changes:
        parser.error("--query-rows must be at least --batch-changes")
    args.parts = {part.strip() for part in args.parts.split(",")}
    if not args.parts or not args.parts <= {"1", "2", "3"}:
        parser.error("--parts takes 1, 2 and 3, comma-separated")
    return args


def _section(title: str) -> None:
    print(f"\n{title} (load average {load_average()})", flush=True)


def _spark_line(spark: Any) -> str:
    conf = spark.sparkContext.getConf()
    return (
        f"spark: {spark.version}, master {conf.get('spark.master', '?')}, driver memory "
        f"{conf.get('spark.driver.memory', 'default')}"
    )


def run(spark: Any, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The parts ``args.parts`` names, in ``work``; their figures (as in the JSON file)."""
    figures: dict[str, Any] = {"load_average_start": load_average()}
    results: list[Any] = []
    if "1" in args.parts:
        _section(f"part 1: flush path vs one bulk write ({args.rows:,} rows)")
        flush = measure_flush(spark, work / "flush", args.rows)
        show_flush(flush)
        results.append(flush)
        figures["flush"] = asdict(flush) | {
            "flush_rows_per_second": flush.flush_rows_per_second,
            "bulk_rows_per_second": flush.bulk_rows_per_second,
            "ratio": flush.ratio,
            "target_ratio": TARGET_FLUSH_RATIO,
            "conversion_included": True,
        }
    if "2" in args.parts:
        _section(f"part 2: queries on {args.batches:,} batches vs compacted")
        queries = measure_queries(
            spark, work / "queries", args.query_rows, args.batches, args.repeat,
            args.batch_changes,
        )  # fmt: skip
        show_queries(queries)
        results.append(queries)
        figures["queries"] = asdict(queries) | {
            "ratios": {q.label: q.ratio for q in queries.queries},
            "target_ratio": TARGET_READ_RATIO,
        }
    if "3" in args.parts:
        _section(f"part 3: end-to-end drain of {args.transactions:,} transactions through the CSA")
        drain = measure_drain(spark, work / "drain", args.transactions)
        show_drain(drain)
        results.append(drain)
        figures["drain"] = asdict(drain) | {
            "transactions_per_second": drain.per_second,
            "rows_per_second": drain.rows_per_second,
            "target_transactions_per_second": TARGET_TRANSACTIONS_PER_SECOND,
        }
    figures["load_average_end"] = load_average()
    errors = [r.error for r in results if r.error is not None]
    figures["errors"] = errors
    return figures


def main(argv: Sequence[str] | None = None, spark: Any | None = None) -> int:
    """Run the benchmark; ``spark``: a SparkSession to use (default: this process's own,
    created here and stopped at the end)."""
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-spark-engine-") as tmp:
        work = Path(tmp)
        own: Callable[[], None] | None = None
        if spark is None:
            from spark_replica.applier_core.storage.spark.session import get_spark, stop_spark

            start = time.perf_counter()
            spark = get_spark({"spark.sql.warehouse.dir": str(work / "spark-warehouse")})
            print(f"SparkSession started in {time.perf_counter() - start:.1f} s")
            own = stop_spark
        try:
            machine, spark_line = machine_line(), _spark_line(spark)
            print(f"{machine}; load average {load_average()}")
            print(spark_line)
            figures = {"machine": machine, "spark": spark_line, **run(spark, work, args)}
        finally:
            if own is not None:
                own()
    end = figures["load_average_end"]
    print(f"\nload average at the end: {end} (other processes share the CPUs)")
    if args.json is not None:
        Path(args.json).write_text(json.dumps(figures, indent=1, default=str) + "\n")
        print(f"figures written to {args.json}")
    if figures["errors"]:
        print(f"checks: {len(figures['errors'])} FAILED")
        return 1
    print("checks: every part ends in the content committed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
