"""The replica against the peer a user would pick instead to land MySQL changes in Spark, and
against the floor, on the same binary log.

One binary log of ``--transactions`` generated transactions of sysbench's oltp_write_only
shape (8 tables of 1,000 rows, 4 row changes each, 16 clients, WRITESET dependency data;
after the setup and the load of the tables) is served by the built-in binlog server
(``spark-replica source``, its own process, so it does not share this process's GIL). Then,
on one SparkSession (``local[2]``, created once), three paths land it in Spark:

* **ours**: a replica server in this process, its tables in the Spark storage engine (default
  settings); a channel set up with ``CHANGE REPLICATION SOURCE TO ... APPLIER_VERSION=2,
  APPLIER_WORKER_COUNT=4`` (``replica_preserve_commit_order`` ON) pulls the binary log over
  the wire (receiver into the relay log) and the Change Stream Applier applies it. Timed from
  ``START REPLICA`` until the last GTID is executed and durable in Spark (``engine.flush()``
  returned). Checked afterwards: every table as a fresh engine reads it back from Spark
  equals the generated content, and the GTIDs recorded there are every GTID of the log.
* **the peer**: python-mysql-replication (``pymysqlreplication.BinLogStreamReader``, only
  Write/Update/Delete rows events, non-blocking: it stops at the end of the log) reads the
  same source from its first file, and appends each row change (operation, binlog file and
  position, event time, then the row's values: the after image, the before image for a
  delete) to one append-only parquet change table per source table with
  ``spark.createDataFrame(rows, schema).write.mode("append")``, every 10,000 row changes or
  after 1 s, and once at the end: how a user of that library lands CDC in Spark, without
  ordering or crash guarantees, and without final content (a query must merge the changes).
  Timed from connecting until the last change is written. Checked afterwards: the change
  tables hold exactly the generated row changes, per table and operation.
* **the floor**: our decoder (``BinlogFileReader``) reads the same binary log files from disk
  (every event decoded, rows too), then each table's final rows (taken from the generator:
  the floor applies nothing) are written to Spark in one bulk write per table, the way the
  Spark engine benchmark's "bulk write" does (engine rows → Arrow → ``createDataFrame`` →
  parquet). Checked: the decoded row count is the generated one, and each table written
  holds its row count.

A warm-up first makes the JVM compile both write paths (Python rows and Arrow tables into
parquet) on data of the same shape; then the runs go ours, the peer, the floor: whatever
warm-up the JVM still gains during the runs favours the later ones, so both ratios printed
(ours / peer and ours / floor, in seconds) are on our side's cautious end.

Printed and, with ``--json PATH``, written (the paths under ``paths``, by name): each path's
seconds, transactions/s and row changes/s, the two ratios, the checks. The exit code is 1
when a check fails.

Usage (from the repository root)::

    .venv/bin/python tests/bench/bench_peer.py [--transactions 20000] [--json PATH] [--quick]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[2]
for _path in (_REPO / "src", _REPO):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from pymysqlreplication import BinLogStreamReader  # noqa: E402
from pymysqlreplication.row_event import (  # noqa: E402
    DeleteRowsEvent,
    RowsEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)
from tests.bench.benchkit import load_average, machine_line, positive_int  # noqa: E402
from tests.helpers.builtin_source import REPL_PASSWORD, REPL_USER, SourceProcess  # noqa: E402
from tests.helpers.replica_channel import CHANNEL, change_source_at, status  # noqa: E402
from tests.helpers.server import connect, running_server  # noqa: E402
from tests.unit.csa_apply.harness import engine_content  # noqa: E402

from spark_replica.applier_core.binlog.file import BinlogFileReader  # noqa: E402
from spark_replica.applier_core.binlog.rows import RowsEvent as DecodedRows  # noqa: E402
from spark_replica.applier_core.channels.components import Components  # noqa: E402
from spark_replica.applier_core.gtid import GtidSet  # noqa: E402
from spark_replica.applier_core.storage.interface import Column  # noqa: E402
from spark_replica.applier_core.storage.spark.engine import SparkEngine  # noqa: E402
from spark_replica.applier_core.storage.spark.types import (  # noqa: E402
    spark_schema,
    to_arrow_table,
)
from spark_replica.metadata import MetadataStore  # noqa: E402
from spark_replica.metadata.factory import open_store  # noqa: E402
from spark_replica.server.components import default_components  # noqa: E402
from spark_replica.server.config import ServerConfig  # noqa: E402
from spark_replica.tools.generator.schema import TableDef  # noqa: E402
from spark_replica.tools.generator.simulate import (  # noqa: E402
    Dependency,
    WorkloadSpec,
    simulate_with_tables,
)
from spark_replica.tools.generator.writer import TransactionEncoder  # noqa: E402
from spark_replica.tools.source import SourceBinlog  # noqa: E402

DEFAULT_TRANSACTIONS = 20_000
QUICK_TRANSACTIONS = 300
#: sysbench's oltp_write_only shape, as the applier and Spark engine benchmarks plan it.
TABLES = 8
ROWS_PER_TABLE = 1_000
CHANGES_PER_TRANSACTION = 4
CLIENTS = 16
WORKERS = 4
#: The peer appends its buffered changes every this many row changes, or this many seconds.
PEER_BATCH_ROWS = 10_000
PEER_BATCH_SECONDS = 1.0
PEER_SERVER_ID = 901
#: Seconds between looks at the channel's status while ours runs.
POLL = 0.5
#: The warm-up's rows per write and writes per path (with --quick: a smaller one).
WARMUP = (10_000, 3)
QUICK_WARMUP = (1_000, 1)
PEER_OPERATIONS: dict[type[RowsEvent], str] = {
    WriteRowsEvent: "insert", UpdateRowsEvent: "update", DeleteRowsEvent: "delete",
}  # fmt: skip
#: The change tables' columns before the row's own.
PEER_COLUMNS = (("op", "StringType"), ("binlog_file", "StringType"),
                ("binlog_pos", "LongType"), ("event_time", "LongType"))  # fmt: skip

Content = dict[str, list[tuple[object, ...]]]


# -- the workload ----------------------------------------------------------------------------
def workload_spec(transactions: int) -> WorkloadSpec:
    return WorkloadSpec(
        tables=TABLES,
        rows_per_table=ROWS_PER_TABLE,
        transactions=transactions,
        changes_per_transaction=CHANGES_PER_TRANSACTION,
        clients=CLIENTS,
        conflict_share=0.0,
        dependency=Dependency.WRITESET,
    )


@dataclass(frozen=True, slots=True)
class Workload:
    spec: WorkloadSpec
    directory: Path
    #: Every transaction of the log (the setup and load included), gnos 1..transactions.
    transactions: int
    row_changes: int
    #: Row changes by ``(db.table, operation)``.
    changes: dict[tuple[str, str], int]
    content: Content
    tables: dict[str, TableDef]
    files: tuple[str, ...]
    size: int
    generate_seconds: float

    @property
    def gtids(self) -> GtidSet:
        return GtidSet.parse(f"{self.spec.server_uuid}:1-{self.transactions}")


def generate(directory: Path, transactions: int) -> Workload:
    """The source's binary log in ``directory``, and what it holds."""
    spec = workload_spec(transactions)
    start = time.perf_counter()
    generated, content, tables = simulate_with_tables(spec)
    binlog = SourceBinlog(directory)
    binlog.open()
    try:
        encoder = TransactionEncoder(spec.server_uuid)
        for trx in generated:
            binlog.append(encoder.encode(trx), (spec.server_uuid, trx.gno))
        files = binlog.files()
    finally:
        binlog.close()
    changes = Counter(
        (change.table.qualified, change.kind) for trx in generated for change in trx.changes
    )
    return Workload(
        spec=spec, directory=directory, transactions=len(generated),
        row_changes=sum(changes.values()), changes=dict(changes), content=content,
        tables=tables, files=tuple(name for name, _ in files),
        size=sum(size for _, size in files), generate_seconds=time.perf_counter() - start,
    )  # fmt: skip


def engine_columns(table: TableDef) -> list[Column]:
    """A generated table's columns as the storage engines describe them."""
    return [Column(c.name, c.sql_type, c.nullable) for c in table.columns]


# -- results ---------------------------------------------------------------------------------
@dataclass(slots=True)
class PathResult:
    """One path's run: its time, what it moved, and what its check found."""

    name: str
    seconds: float
    transactions: int
    row_changes: int
    #: Seconds of the path's phases (for ours: until executed; the floor: decode and write).
    phases: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def transactions_per_second(self) -> float:
        return self.transactions / self.seconds

    @property
    def row_changes_per_second(self) -> float:
        return self.row_changes / self.seconds

    def figures(self) -> dict[str, Any]:
        return asdict(self) | {
            "transactions_per_second": self.transactions_per_second,
            "row_changes_per_second": self.row_changes_per_second,
        }


# -- warm-up ---------------------------------------------------------------------------------
def warm_up(spark: Any, directory: Path, workload: Workload, size: int, writes: int) -> float:
    """Both write paths ``writes`` times, untimed: ``size`` Python rows appended (the
    peer's) and as an Arrow table written whole (the floor's, and the engine's flushes), on
    rows of the workload's shape; the seconds it took."""
    start = time.perf_counter()
    name, table = next(iter(workload.tables.items()))
    rows = workload.content[name]
    rows = (rows * (size // max(1, len(rows)) + 1))[:size]
    columns = engine_columns(table)
    peer_schema = change_schema(rows[0], [c.name for c in columns])
    for number in range(writes):
        changes = [("insert", "warm-up", number, 0, *row) for row in rows]
        frame = spark.createDataFrame(changes, schema=peer_schema)
        frame.write.mode("append").parquet(str(directory / "rows"))
        data = to_arrow_table(columns, rows)
        frame = spark.createDataFrame(data, schema=spark_schema(columns))
        frame.coalesce(1).write.mode("overwrite").parquet(str(directory / "arrow"))
    spark.read.parquet(str(directory / "rows")).count()
    return time.perf_counter() - start


# -- ours: the replica, over the wire, into the Spark engine ---------------------------------
def run_ours(spark: Any, directory: Path, port: int, workload: Workload) -> PathResult:
    """See the module docstring."""
    data = directory / "data"
    warehouse = str(data / "warehouse")
    engines: list[SparkEngine] = []

    def components(_config: ServerConfig, store: MetadataStore) -> Components:
        engine = SparkEngine(spark, warehouse, store)
        engines.append(engine)
        return default_components(engine)

    target = workload.gtids
    time_limit = max(300.0, workload.transactions / 50)
    result = PathResult("ours", 0.0, workload.transactions, workload.row_changes)
    with running_server(data, components) as server, connect(server.port) as conn:
        cursor = conn.cursor()
        cursor.execute("SET GLOBAL replica_preserve_commit_order = ON")
        cursor.execute(change_source_at(
            "127.0.0.1", port, REPL_USER, REPL_PASSWORD, GET_SOURCE_PUBLIC_KEY=1,
            REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2, APPLIER_WORKER_COUNT=WORKERS,
        ))  # fmt: skip
        executed = server.server.context.manager.executed
        (engine,) = engines
        gc.collect()
        start = time.perf_counter()
        cursor.execute(f"START REPLICA FOR CHANNEL '{CHANNEL}'")
        while not executed.wait_for(target, POLL):
            found = status(cursor)
            if found["Last_IO_Errno"] or found["Last_SQL_Errno"]:
                result.error = (f"the channel failed: IO {found['Last_IO_Errno']} "
                                f"{found['Last_IO_Error']!r}, SQL {found['Last_SQL_Errno']} "
                                f"{found['Last_SQL_Error']!r}")  # fmt: skip
                break
            if time.perf_counter() - start > time_limit:
                result.error = f"the last GTID was not executed within {time_limit:.0f} s"
                break
        result.phases["executed"] = time.perf_counter() - start
        if result.error is None:
            engine.flush()
        result.seconds = time.perf_counter() - start
        result.details["flushes"] = engine.stats().flushes
        cursor.execute(f"STOP REPLICA FOR CHANNEL '{CHANNEL}'")
        cursor.close()
    if result.error is None:
        result.error = _check_ours(spark, data, warehouse, workload)
    return result


def _check_ours(spark: Any, data: Path, warehouse: str, workload: Workload) -> str | None:
    """Whether Spark holds the generated content and every GTID, as a fresh engine (the
    server is closed) reads them back."""
    store = open_store(f"sqlite:///{data / 'metadata.db'}")
    try:
        engine = SparkEngine(spark, warehouse, store)
        try:
            content = engine_content(engine)
            recorded = GtidSet.from_intervals(engine.durable_state().gtids)
        finally:
            engine.close()
    finally:
        store.close()
    if content != workload.content:
        wrong = sorted(name for name in content.keys() | workload.content.keys()
                       if content.get(name) != workload.content.get(name))  # fmt: skip
        return f"the content read back from Spark differs from the generated one in {wrong}"
    if recorded != workload.gtids:
        return f"GTIDs recorded in Spark {recorded.format()}, expected {workload.gtids.format()}"
    return None


# -- the peer: python-mysql-replication appending change rows to Spark ----------------------
#: The change tables' Spark types of the row's Python values (sbtest's: INT and CHAR).
_SPARK_TYPES = {int: "LongType", str: "StringType"}


def change_schema(row: Sequence[object], names: Sequence[str]) -> Any:
    """The change table's schema: ``PEER_COLUMNS``, then the row's columns typed from its
    first row's Python values, as a user of the library declares it."""
    from pyspark.sql import types

    schema = types.StructType()
    for name, kind in PEER_COLUMNS:
        schema.add(name, getattr(types, kind)(), nullable=False)
    for name, value in zip(names, row, strict=True):
        spark_type = _SPARK_TYPES.get(type(value))
        if spark_type is None:
            raise TypeError(f"column {name!r}: no Spark type for {type(value).__name__}")
        schema.add(name, getattr(types, spark_type)(), nullable=True)
    return schema


class ChangeLander:
    """Buffers row changes per source table and appends them to that table's parquet change
    table every ``PEER_BATCH_ROWS`` row changes or ``PEER_BATCH_SECONDS``."""

    def __init__(self, spark: Any, root: Path) -> None:
        self.spark = spark
        self.root = root
        self.pending: dict[str, list[tuple[object, ...]]] = {}
        self.schemas: dict[str, Any] = {}
        self.buffered = 0
        self.writes = 0
        #: Seconds spent in the appends (createDataFrame and write).
        self.write_seconds = 0.0
        self.last_write = time.monotonic()

    def add(self, event: RowsEvent, log_file: str) -> None:
        name = f"{event.schema}.{event.table}"
        operation = PEER_OPERATIONS[type(event)]
        image = "after_values" if operation == "update" else "values"
        rows = self.pending.setdefault(name, [])
        head = (operation, log_file, event.packet.log_pos, event.timestamp)
        for row in event.rows:
            values = row[image]
            if name not in self.schemas:
                self.schemas[name] = change_schema(list(values.values()), list(values))
            rows.append((*head, *values.values()))
        self.buffered += len(event.rows)
        if (self.buffered >= PEER_BATCH_ROWS
                or time.monotonic() - self.last_write >= PEER_BATCH_SECONDS):  # fmt: skip
            self.write()

    def write(self) -> None:
        start = time.perf_counter()
        for name, rows in self.pending.items():
            if rows:
                frame = self.spark.createDataFrame(rows, schema=self.schemas[name])
                frame.write.mode("append").parquet(str(self.root / name))
                self.writes += 1
        self.write_seconds += time.perf_counter() - start
        self.pending.clear()
        self.buffered = 0
        self.last_write = time.monotonic()


def run_peer(spark: Any, directory: Path, port: int, workload: Workload) -> PathResult:
    """See the module docstring."""
    result = PathResult("peer", 0.0, workload.transactions, workload.row_changes)
    lander = ChangeLander(spark, directory)
    settings = {"host": "127.0.0.1", "port": port, "user": REPL_USER, "password": REPL_PASSWORD}
    gc.collect()
    start = time.perf_counter()
    stream = BinLogStreamReader(
        settings, server_id=PEER_SERVER_ID, blocking=False,
        only_events=list(PEER_OPERATIONS), log_file=workload.files[0], log_pos=4,
        resume_stream=True,
    )  # fmt: skip
    try:
        for event in stream:
            lander.add(event, stream.log_file)
        lander.write()
    finally:
        stream.close()
    result.seconds = time.perf_counter() - start
    result.phases["spark appends"] = lander.write_seconds
    result.details["spark_writes"] = lander.writes
    found: Counter[tuple[str, str]] = Counter()
    for name in lander.schemas:
        counts = spark.read.parquet(str(directory / name)).groupBy("op").count().collect()
        found.update({(name, row["op"]): row["count"] for row in counts})
    result.details["change_rows"] = sum(found.values())
    result.error = check_change_rows(dict(found), workload.changes)
    return result


def check_change_rows(
    found: dict[tuple[str, str], int], expected: dict[tuple[str, str], int]
) -> str | None:
    """Whether the change tables hold as many rows per ``(table, operation)`` as the
    workload made row changes."""
    if found == expected:
        return None
    wrong = {f"{table} {op}": (found.get((table, op), 0), expected.get((table, op), 0))
             for table, op in sorted(found.keys() | expected.keys())
             if found.get((table, op)) != expected.get((table, op))}  # fmt: skip
    return (f"change rows ({sum(found.values()):,}) are not the row changes "
            f"({sum(expected.values()):,}): (found, expected) by table and operation: "
            f"{wrong}")  # fmt: skip


# -- the floor: decode alone, then one bulk write per table of the final rows --------------
def run_floor(spark: Any, directory: Path, workload: Workload) -> PathResult:
    """See the module docstring."""
    result = PathResult("floor", 0.0, workload.transactions, workload.row_changes)
    gc.collect()
    start = time.perf_counter()
    decoded = 0
    for name in workload.files:
        for _start, _end, event in BinlogFileReader(workload.directory / name):
            if isinstance(event, DecodedRows):
                decoded += len(event.rows)
    result.phases["decode"] = time.perf_counter() - start
    for name, table in workload.tables.items():
        columns = engine_columns(table)
        data = to_arrow_table(columns, workload.content[name])
        frame = spark.createDataFrame(data, schema=spark_schema(columns))
        frame.write.mode("overwrite").parquet(str(directory / name))
    result.seconds = time.perf_counter() - start
    result.phases["write"] = result.seconds - result.phases["decode"]
    result.details["decoded_rows"] = decoded
    written = {name: spark.read.parquet(str(directory / name)).count() for name in workload.tables}
    expected = {name: len(rows) for name, rows in workload.content.items()}
    if decoded != workload.row_changes:
        result.error = f"decoded {decoded:,} rows, generated {workload.row_changes:,}"
    elif written != expected:
        result.error = f"rows written {written}, final rows {expected}"
    return result


# -- output ----------------------------------------------------------------------------------
def show(result: PathResult, label: str) -> None:
    phases = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in result.phases.items())
    print(f"  {label:<36} {result.seconds:>8.2f} s {result.transactions_per_second:>10,.0f} "
          f"trx/s {result.row_changes_per_second:>10,.0f} row changes/s"
          f"{f'  ({phases})' if phases else ''}")  # fmt: skip
    if result.error is not None:
        print(f"    ERROR: {result.error}")


def _spark_line(spark: Any) -> str:
    conf = spark.sparkContext.getConf()
    return f"spark: {spark.version}, master {conf.get('spark.master', '?')}"


@contextmanager
def source_process(directory: Path) -> Iterator[SourceProcess]:
    """``spark-replica source`` serving ``directory``, stopped at the end."""
    source = SourceProcess(directory).start()
    try:
        yield source
    finally:
        source.stop()


def run(
    spark: Any, work: Path, transactions: int, warmup: tuple[int, int] = WARMUP
) -> dict[str, Any]:
    """Every path on one generated binary log in ``work``, after a warm-up of ``warmup``
    (rows, writes); the figures (as in the JSON)."""
    figures: dict[str, Any] = {"load_average_start": load_average()}
    workload = generate(work / "source", transactions)
    print(f"source: {workload.transactions:,} transactions ({transactions:,} of the workload, "
          f"the rest setup and load), {workload.row_changes:,} row changes, "
          f"{len(workload.files)} file(s), {workload.size / 1e6:.1f} MB; generated in "
          f"{workload.generate_seconds:.1f} s")  # fmt: skip
    figures["workload"] = {
        "spec": {k: v.value if isinstance(v, Dependency) else v
                 for k, v in asdict(workload.spec).items()},
        "transactions": workload.transactions, "row_changes": workload.row_changes,
        "files": len(workload.files), "bytes": workload.size,
        "generate_seconds": workload.generate_seconds,
    }  # fmt: skip
    size, writes = warmup
    figures["warm_up_seconds"] = warm_up(spark, work / "warm-up", workload, size, writes)
    print(f"warm-up: both write paths {writes} time(s) on {size:,} rows "
          f"({figures['warm_up_seconds']:.1f} s)")  # fmt: skip
    print(f"\nruns (load average {load_average()}):", flush=True)
    with source_process(workload.directory) as source:
        ours = run_ours(spark, work / "ours", source.port, workload)
        show(ours, f"ours (receiver + CSA x{WORKERS} -> Spark)")
        peer = run_peer(spark, work / "peer", source.port, workload)
        show(peer, "peer (python-mysql-replication)")
    floor = run_floor(spark, work / "floor", workload)
    show(floor, "floor (decode + bulk write)")
    print(f"  ours: {ours.details.get('flushes', 0):,} engine flushes; peer: "
          f"{peer.details['spark_writes']:,} Spark appends of {peer.details['change_rows']:,} "
          f"change rows")  # fmt: skip
    ratios = {"ours_over_peer": ours.seconds / peer.seconds,
              "ours_over_floor": ours.seconds / floor.seconds}  # fmt: skip
    print(f"\nours / peer: {ratios['ours_over_peer']:.2f}x the time (ours "
          f"{peer.seconds / ours.seconds:.2f}x as fast, with final content, commit order and "
          f"crash safety); ours / floor: {ratios['ours_over_floor']:.2f}x the time")  # fmt: skip
    figures["title"] = f"Source to Spark, {workload.transactions:,} transactions"
    figures["paths"] = {p.name: p.figures() for p in (ours, peer, floor)}
    figures["ratios"] = ratios
    figures["errors"] = [f"{p.name}: {p.error}" for p in (ours, peer, floor) if p.error]
    figures["load_average_end"] = load_average()
    return figures


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--transactions", type=positive_int, default=None,
        help=f"workload transactions (default {DEFAULT_TRANSACTIONS:,}; "
             f"{QUICK_TRANSACTIONS} with --quick)",
    )  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a smoke run)")
    parser.add_argument("--json", metavar="PATH", help="also write every figure to PATH")
    args = parser.parse_args(argv)
    if args.transactions is None:
        args.transactions = QUICK_TRANSACTIONS if args.quick else DEFAULT_TRANSACTIONS
    return args


def main(argv: Sequence[str] | None = None, spark: Any | None = None) -> int:
    """Run the benchmark; ``spark``: a SparkSession to use (default: this process's own,
    created here and stopped at the end). 1 when a check fails."""
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-peer-") as tmp:
        work = Path(tmp)
        own: Callable[[], None] | None = None
        if spark is None:
            from spark_replica.applier_core.storage.spark.session import get_spark, stop_spark

            start = time.perf_counter()
            spark = get_spark({"spark.sql.warehouse.dir": str(work / "spark-warehouse")})
            print(f"SparkSession started in {time.perf_counter() - start:.1f} s")
            own = stop_spark
        try:
            machine = machine_line()
            print(f"{machine}; load average {load_average()}")
            print(_spark_line(spark))
            figures = {
                "machine": machine,
                "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
                "spark": _spark_line(spark),
                **run(spark, work, args.transactions, QUICK_WARMUP if args.quick else WARMUP),
            }
        finally:
            if own is not None:
                own()
    print(f"load average at the end: {figures['load_average_end']} (other processes share "
          f"the CPUs)")  # fmt: skip
    if args.json is not None:
        Path(args.json).write_text(json.dumps(figures, indent=1, default=str) + "\n")
        print(f"figures written to {args.json}")
    if figures["errors"]:
        print(f"checks: {len(figures['errors'])} FAILED")
        return 1
    print(
        "checks: ours holds the generated content and GTIDs in Spark; the peer's change "
        "tables hold every row change; the floor decoded every row"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
