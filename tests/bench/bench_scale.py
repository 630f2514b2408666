"""The replica at scale: a big sysbench table loaded, then a write workload applied into it;
the memory it takes, its restart, and its queries on that table.

For each size of ``--rows`` (default 1M and 5M rows; the product targets 5M and 50M):

1. **The load.** The workload generator bulk-loads ``N`` rows of sysbench's table shape
   (``id INT`` primary key, ``k INT``, ``c CHAR(120)``, ``pad CHAR(60)``) into ``--tables``
   tables (default 1: the big table), ``--load-batch`` rows per transaction, encoded one
   transaction at a time into a binary log that the built-in binlog server (``spark-replica
   source``, its own process) serves. A replica server (``spark-replica serve``, its own
   process, the Spark engine with default settings, its own data directory) gets a channel
   with ``CHANGE REPLICATION SOURCE TO ... APPLIER_VERSION=2, APPLIER_WORKER_COUNT=4`` and
   ``START REPLICA``. Timed (rows/s): from ``START REPLICA`` until the load's last GTID is
   executed and durable (recorded in the server's metadata database).
2. **The write workload.** Then the source is stopped, ``--transactions`` transactions of
   the oltp_write_only shape (16 clients, 4 row changes each: 70 % updates, 15 % inserts,
   15 % deletes, WRITESET dependency data) are appended to its binary log, and it is started
   again on the same port; the receiver reconnects. Timed (transactions/s): from the
   source's start until the last GTID is executed and durable. So the workload is applied
   into the loaded table, not overlapped with the load's writes.
3. **Memory.** Every 0.5 s during the whole run, the resident set (``VmRSS``) of the server
   process and of every process under it (Spark's JVM, and short-lived forks): the peak of
   the sum of the server and its JVM (the target's figure), the peak of the whole tree's
   sum, and each process's own peak.
4. **Restart.** SIGTERM to the server, then the same command on the same data directory:
   the seconds from its launch until (a) its port answers, (b) ``SELECT COUNT(*)`` on the
   big table returns the replicated count, (c) the channel runs again
   (``Replica_SQL_Running=Yes`` in SHOW REPLICA STATUS). The clean shutdown's seconds too.
5. **Queries**, through the restarted server over the wire (pymysql): a point lookup by
   primary key (median and p95 over ``--lookups`` random ids of the final content) and
   ``SELECT COUNT(*)`` (median over 5).

Checked (exit code 1 when one fails): the channel reports no error; every GTID is executed
and durable; after the restart ``COUNT(*)`` of each table is the source's final row count
(the generator's, or MariaDB's), and every row looked up equals the source's row with that
id.

``--source mariadb`` takes the rows from a real MariaDB instead (``scale_backlogs.py``):
``sysbench oltp_write_only prepare`` loads it (bulk INSERTs of about 2,500 rows per
transaction, then the secondary index on k), the replica's channel replicates the load, then
is stopped while ``sysbench oltp_write_only run`` commits the write workload (16 threads,
``--transactions`` events), and started again: the same steps, timed the same way, with
MariaDB's own seconds for each part beside them. Nothing holds the rows in this process,
so 50M rows fit.

The targets the product's requirements set are printed next to the figures: peak resident
set of the server and its JVM at most 1.5 GB, restart to serving at most 15 s (at each
size), and at least 1,900 transactions/s applied into the big table.

Usage (from the repository root)::

    .venv/bin/python tests/bench/bench_scale.py [--rows 1000000,5000000]
        [--transactions 20000] [--tables 1] [--lookups 200] [--json PATH] [--quick]
        [--keep DIR] [--config FILE] [--source builtin|mariadb] [--mariadb DIR]

50M rows from MariaDB, as ``docs/benchmarks.md`` ran it (about 50 GB of disk)::

    .venv/bin/python tests/bench/bench_scale.py --source mariadb --rows 50000000 \
        --config docs/benchmarks/relay-2g.toml --lookups 100
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[2]
for _path in (_REPO / "src", _REPO):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import pymysql  # noqa: E402
from tests.bench.benchkit import load_average, machine_line, positive_int  # noqa: E402
from tests.bench.scale_backlogs import (  # noqa: E402
    Backlog,
    GeneratedBacklog,
    MariaDBBacklog,
    workload_spec,
)
from tests.helpers.builtin_source import REPL_PASSWORD, REPL_USER  # noqa: E402
from tests.helpers.process import ServerProcess, durable_count, process_tree  # noqa: E402
from tests.helpers.replica_channel import CHANNEL, change_source_at, status  # noqa: E402
from tests.helpers.server import connect  # noqa: E402

from spark_replica.applier_core.gtid import GtidSet  # noqa: E402

DEFAULT_ROWS = (1_000_000, 5_000_000)
QUICK_ROWS = (20_000,)
DEFAULT_TRANSACTIONS = 20_000
QUICK_TRANSACTIONS = 1_000
WORKERS = 4
#: Seconds between samples of the resident sets, and between looks at the replica.
SAMPLE_INTERVAL = 0.5
POLL = 0.2
COUNT_REPEAT = 5
#: Processes of the tree with a smaller peak (short-lived helpers) are left out of the table.
SHOWN_RSS_BYTES = 10e6
#: The product's targets.
TARGET_RSS_BYTES = 1.5e9
TARGET_RESTART_SECONDS = 15.0
TARGET_APPLY_PER_SECOND = 1_900.0


# -- the resident sets -----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Resident:
    """A process's resident set in bytes (``VmRSS``) and its parts: anonymous memory
    (``RssAnon``: heaps, what the process allocated) and mapped files (``RssFile``: code,
    jars, the key index's memory-mapped pages, which the kernel may drop and read again)."""

    name: str
    rss: int
    anon: int
    file: int


def resident(pid: int) -> Resident | None:
    """The process's resident set; None once it is gone."""
    fields = {"Name:": "?", "VmRSS:": None, "RssAnon:": 0, "RssFile:": 0}
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
            for line in handle:
                key, _, rest = line.partition("\t")
                if key in fields:
                    value = rest.split()[0]
                    fields[key] = value if key == "Name:" else int(value) * 1024
    except OSError:
        return None
    rss = fields["VmRSS:"]
    if rss is None:
        return None
    return Resident(str(fields["Name:"]), int(rss), int(fields["RssAnon:"] or 0),
                    int(fields["RssFile:"] or 0))  # fmt: skip


class RssSampler:
    """Samples the resident sets of a process tree every ``SAMPLE_INTERVAL`` in a thread:
    the peak of their sum, each process's peak (by ``name[pid]``), and the peak of the sum
    of the server and its JVM alone. The tree also holds short-lived children: a process
    the server or its JVM forks to run a command (named after the forking thread until it
    runs it) counts the parent's pages it shares, so the whole tree's sum overstates the
    memory."""

    def __init__(self) -> None:
        self.peak_total = 0
        self.peak_server_and_jvm = 0
        self.peaks: dict[str, int] = {}
        #: Each process's peak anonymous and file-backed resident memory (``Resident``).
        self.peaks_anon: dict[str, int] = {}
        self.peaks_file: dict[str, int] = {}
        #: ``(seconds since the start, whole tree, server and JVM)`` per sample.
        self.timeline: list[tuple[float, int, int]] = []
        self._pid: int | None = None
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    @property
    def samples(self) -> int:
        return len(self.timeline)

    def watch(self, pid: int) -> None:
        """Sample the tree under ``pid`` from now on (the server after a restart)."""
        self._pid = pid

    def start(self) -> RssSampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def sample(self) -> None:
        if self._pid is None:
            return
        total = main = 0
        for pid in process_tree(self._pid):
            found = resident(pid)
            if found is None:
                continue
            key = f"{found.name}[{pid}]"
            self.peaks[key] = max(self.peaks.get(key, 0), found.rss)
            self.peaks_anon[key] = max(self.peaks_anon.get(key, 0), found.anon)
            self.peaks_file[key] = max(self.peaks_file.get(key, 0), found.file)
            total += found.rss
            if pid == self._pid or found.name == "java":
                main += found.rss
        self.peak_total = max(self.peak_total, total)
        self.peak_server_and_jvm = max(self.peak_server_and_jvm, main)
        self.timeline.append((round(time.monotonic() - self._started, 1), total, main))

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_INTERVAL):
            self.sample()


# -- the run ---------------------------------------------------------------------------------
@dataclass(slots=True)
class SizeResult:
    """The figures of one size (see the module docstring)."""

    rows: int
    tables: int
    transactions: int
    setup_transactions: int
    binlog_bytes: int
    #: Seconds to generate and encode each part of the binary log (setup, workload).
    generate_seconds: dict[str, float]
    #: From START REPLICA until the load's last GTID is executed and durable.
    load_seconds: float = 0.0
    #: ... until it is executed (the engine still writing it).
    load_executed_seconds: float = 0.0
    #: From the source serving the workload until its last GTID is executed and durable.
    apply_seconds: float = 0.0
    #: ... until it is executed.
    apply_executed_seconds: float = 0.0
    shutdown_seconds: float = 0.0
    restart: dict[str, float] = field(default_factory=dict)
    #: Parts of the restart the server logs: opening its storage engine, its channels.
    restart_opened: dict[str, float] = field(default_factory=dict)
    #: The peak of the sum of the server and its JVM (what the target is about)...
    peak_rss_bytes: int = 0
    #: ... and of the whole process tree (short-lived forks included).
    peak_rss_tree_bytes: int = 0
    peak_rss_by_process: dict[str, int] = field(default_factory=dict)
    #: Each process's peak anonymous and file-backed resident memory.
    peak_anon_by_process: dict[str, int] = field(default_factory=dict)
    peak_file_by_process: dict[str, int] = field(default_factory=dict)
    rss_samples: int = 0
    #: ``(seconds, whole tree, server and JVM)`` every ``SAMPLE_INTERVAL``.
    rss_timeline: list[tuple[float, int, int]] = field(default_factory=list)
    lookup_seconds: list[float] = field(default_factory=list)
    count_seconds: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def load_rows_per_second(self) -> float:
        return self.rows / self.load_seconds if self.load_seconds else 0.0

    @property
    def apply_per_second(self) -> float:
        workload = self.transactions - self.setup_transactions
        return workload / self.apply_seconds if self.apply_seconds else 0.0

    @property
    def restart_to_serving(self) -> float:
        return max(self.restart.values(), default=0.0)

    def lookup_median(self) -> float:
        return statistics.median(self.lookup_seconds) if self.lookup_seconds else 0.0

    def lookup_p95(self) -> float:
        ordered = sorted(self.lookup_seconds)
        return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if ordered else 0.0

    def count_median(self) -> float:
        return statistics.median(self.count_seconds) if self.count_seconds else 0.0

    def targets(self) -> dict[str, bool]:
        return {
            "peak_rss": self.peak_rss_bytes <= TARGET_RSS_BYTES,
            "restart_to_serving": 0 < self.restart_to_serving <= TARGET_RESTART_SECONDS,
            "apply": self.apply_per_second >= TARGET_APPLY_PER_SECOND,
        }

    def figures(self) -> dict[str, Any]:
        return asdict(self) | {
            "load_rows_per_second": self.load_rows_per_second,
            "apply_per_second": self.apply_per_second,
            "restart_to_serving_seconds": self.restart_to_serving,
            "lookup_median_seconds": self.lookup_median(),
            "lookup_p95_seconds": self.lookup_p95(),
            "count_median_seconds": self.count_median(),
            "targets_met": self.targets(),
        }


def _channel_error(cursor: Any) -> str | None:
    """The applier's error, or a thread of the channel stopped (the receiver may be
    reconnecting: the source stops while the workload is appended)."""
    found = status(cursor)
    stopped = "No" in (found["Replica_IO_Running"], found["Replica_SQL_Running"])
    if found["Last_SQL_Errno"] or stopped:
        return (f"the channel failed: IO {found['Last_IO_Errno']} {found['Last_IO_Error']!r}, "
                f"SQL {found['Last_SQL_Errno']} {found['Last_SQL_Error']!r}")  # fmt: skip
    return None


def _executed(cursor: Any) -> int:
    cursor.execute("SELECT @@GLOBAL.gtid_executed")
    return GtidSet.parse(cursor.fetchone()[0] or "").count()


def start_channel(cursor: Any, port: int) -> None:
    """CHANGE REPLICATION SOURCE TO the source at ``port`` with the CSA; START REPLICA."""
    cursor.execute(change_source_at(
        "127.0.0.1", port, REPL_USER, REPL_PASSWORD, GET_SOURCE_PUBLIC_KEY=1,
        SOURCE_CONNECT_RETRY=1, SOURCE_RETRY_COUNT=86400, REQUIRE_ROW_FORMAT=1, GTID_ONLY=1,
        APPLIER_VERSION=2, APPLIER_WORKER_COUNT=WORKERS,
    ))  # fmt: skip
    cursor.execute(f"START REPLICA FOR CHANNEL '{CHANNEL}'")


def wait_durable(cursor: Any, data: Path, count: int, started: float, time_limit: float,
                 errors: list[str]) -> tuple[float, float]:  # fmt: skip
    """Seconds since ``started`` (``perf_counter``) until ``count`` GTIDs are executed, and
    until they are durable (in the metadata database of the server with data in ``data``);
    an error is added to ``errors`` when the channel fails or time runs out."""
    executed_at: float | None = None
    while True:
        now = time.perf_counter() - started
        if executed_at is None and _executed(cursor) >= count:
            executed_at = now
        if executed_at is not None and durable_count(data) >= count:
            return executed_at, now
        error = _channel_error(cursor)
        if error is None and now > time_limit:
            error = f"{count:,} GTIDs not durable within {time_limit:.0f} s"
        if error is not None:
            errors.append(error)
            return executed_at or now, now
        time.sleep(POLL)


def replicate(server: ServerProcess, data: Path, backlog: Backlog, result: SizeResult,
              time_limit: float) -> None:  # fmt: skip
    """Replicate the setup and time the load; then add the write workload as a backlog and
    time its apply."""
    with connect(server.port) as conn, conn.cursor() as cursor:
        started = time.perf_counter()
        start_channel(cursor, backlog.port)
        executed, durable = wait_durable(cursor, data, backlog.setup, started, time_limit,
                                         result.errors)  # fmt: skip
        result.load_executed_seconds, result.load_seconds = executed, durable
        print(f"  load: executed after {executed:.1f} s, durable after {durable:.1f} s",
              flush=True)  # fmt: skip
        if result.errors:
            return
        backlog.add_workload(cursor)
        result.generate_seconds["workload"] = backlog.seconds["workload"]
        result.transactions, result.binlog_bytes = backlog.transactions, backlog.bytes
        started = time.perf_counter()
        executed, durable = wait_durable(cursor, data, backlog.transactions, started,
                                         time_limit, result.errors)  # fmt: skip
        result.apply_executed_seconds, result.apply_seconds = executed, durable
        print(f"  write workload ({backlog.transactions - backlog.setup:,} transactions, "
              f"{backlog.seconds['workload']:.1f} s at the source): executed after "
              f"{executed:.1f} s, durable after {durable:.1f} s", flush=True)  # fmt: skip


def _until(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if condition():
                return True
        except pymysql.MySQLError:
            pass
        time.sleep(POLL / 2)
    return False


def restart(server: ServerProcess, data: Path, backlog: Backlog, result: SizeResult,
            sampler: RssSampler, time_limit: float,
            config: Path | None = None) -> ServerProcess:  # fmt: skip
    """SIGTERM ``server``, start it again on ``data``, time it back to serving."""
    start = time.perf_counter()
    code = server.stop()
    result.shutdown_seconds = time.perf_counter() - start
    if code != 0:
        result.errors.append(f"the server exited with {code} on SIGTERM")
    start = time.perf_counter()
    again = ServerProcess(data, config, skip_replica_start=False, log_level="INFO")
    sampler.watch(again.process.pid)
    big = backlog.big
    expected = backlog.count(big)
    conn = None

    def answers() -> bool:
        nonlocal conn
        conn = connect(again.port)
        return True

    if _until(answers, time_limit):
        result.restart["port_answers"] = time.perf_counter() - start
    assert conn is not None
    marks: dict[str, float] = {}
    with conn, conn.cursor() as cursor:

        def serving() -> bool:
            if "count_right" not in marks:
                cursor.execute(f"SELECT COUNT(*) FROM {big}")
                if cursor.fetchone()[0] == expected:
                    marks["count_right"] = time.perf_counter() - start
            if "replication_running" not in marks:
                if status(cursor)["Replica_SQL_Running"] == "Yes":
                    marks["replication_running"] = time.perf_counter() - start
            return len(marks) == 2

        if not _until(serving, time_limit):
            result.errors.append(f"not serving {time_limit:.0f} s after the restart: {marks}")
    result.restart.update(marks)
    result.restart_opened.update(opened_split(again.log_path))
    return again


def opened_split(log: Path) -> dict[str, float]:
    """The seconds the server's INFO log gives for opening its storage engine and channels
    (the last restart's line)."""
    found = re.findall(r"opened: storage engine in ([\d.]+) s, channels \(relay logs read "
                       r"back\) in ([\d.]+) s", log.read_text(errors="replace"))  # fmt: skip
    if not found:
        return {}
    engine, channels = found[-1]
    return {"storage_engine": float(engine), "channels": float(channels)}


def query(port: int, backlog: Backlog, result: SizeResult, lookups: int) -> None:
    """Point lookups and COUNT(*) over the wire; the rows and counts checked."""
    rng = random.Random(7)
    with connect(port) as conn, conn.cursor() as cursor:
        for table in backlog.tables:
            cursor.execute(f"SELECT COUNT(*) FROM {table}")
            (count,) = cursor.fetchone()
            if count != backlog.count(table):
                result.errors.append(f"{table}: COUNT(*) {count:,}, expected "
                                     f"{backlog.count(table):,}")  # fmt: skip
        ids = backlog.ids(lookups, rng)
        truth = backlog.rows(ids)
        wrong = 0
        for key in ids:
            start = time.perf_counter()
            cursor.execute(f"SELECT id, k, c, pad FROM {backlog.big} WHERE id = %s", (key,))
            found = cursor.fetchall()
            result.lookup_seconds.append(time.perf_counter() - start)
            wrong += [tuple(row) for row in found] != ([truth[key]] if key in truth else [])
        if wrong:
            result.errors.append(f"{backlog.big}: {wrong} of {len(ids)} rows looked up differ")
        for _ in range(COUNT_REPEAT):
            start = time.perf_counter()
            cursor.execute(f"SELECT COUNT(*) FROM {backlog.big}")
            cursor.fetchone()
            result.count_seconds.append(time.perf_counter() - start)
        executed = _executed(cursor)
        if executed != backlog.transactions:
            result.errors.append(f"{executed:,} GTIDs executed after the restart, "
                                 f"expected {backlog.transactions:,}")  # fmt: skip


def make_backlog(work: Path, rows: int, args: argparse.Namespace) -> Backlog:
    if args.source == "mariadb":
        if args.mariadb is not None:
            return MariaDBBacklog(args.mariadb, rows, args.tables, args.transactions, reuse=True)
        return MariaDBBacklog(work / "mariadb", rows, args.tables, args.transactions)
    spec = workload_spec(rows, args.tables, args.transactions, args.load_batch)
    return GeneratedBacklog(work / "source", spec)


def run_size(work: Path, rows: int, args: argparse.Namespace) -> SizeResult:
    """Every step at ``rows`` rows, in ``work``."""
    print(f"\n== {rows:,} rows ({args.tables} table(s)), then {args.transactions:,} "
          f"transactions from {args.source}; load average {load_average()}",
          flush=True)  # fmt: skip
    data = work / "replica"
    time_limit = max(600.0, rows / 500 + args.transactions / 100)
    result = SizeResult(rows, args.tables, 0, 0, 0, {})
    sampler = RssSampler().start()
    try:
        with make_backlog(work, rows, args).serve() as backlog:
            print(f"  binary log: {backlog.setup:,} transactions of setup and load, "
                  f"{backlog.bytes / 1e6:,.0f} MB, written in {backlog.seconds['setup']:.0f} s",
                  flush=True)  # fmt: skip
            result = SizeResult(backlog.loaded_rows, args.tables, backlog.setup, backlog.setup,
                                backlog.bytes, dict(backlog.seconds))  # fmt: skip
            server = ServerProcess(data, args.config)
            try:
                sampler.watch(server.process.pid)
                replicate(server, data, backlog, result, time_limit)
                if not result.errors:
                    print("  restarting the server", flush=True)
                    server = restart(server, data, backlog, result, sampler, 300.0,
                                     args.config)  # fmt: skip
                if not result.errors:
                    query(server.port, backlog, result, args.lookups)
            finally:
                if server.process.poll() is None:
                    server.stop()
    finally:
        sampler.stop()
    result.peak_rss_bytes = sampler.peak_server_and_jvm
    result.peak_rss_tree_bytes = sampler.peak_total
    result.rss_timeline = sampler.timeline
    result.peak_rss_by_process = dict(sampler.peaks)
    result.peak_anon_by_process = dict(sampler.peaks_anon)
    result.peak_file_by_process = dict(sampler.peaks_file)
    result.rss_samples = sampler.samples
    show(result)
    return result


# -- output ----------------------------------------------------------------------------------
def _mark(met: bool) -> str:
    return "met" if met else "MISSED"


def show(result: SizeResult) -> None:
    targets = result.targets()
    gb = 1e9
    print(f"  {'load, executed + durable':<34} {result.load_seconds:>9.1f} s  "
          f"{result.load_rows_per_second:>10,.0f} rows/s (executed after "
          f"{result.load_executed_seconds:.1f} s)")  # fmt: skip
    print(f"  {'write workload, executed + durable':<34} {result.apply_seconds:>9.1f} s  "
          f"{result.apply_per_second:>10,.0f} trx/s (executed after "
          f"{result.apply_executed_seconds:.1f} s)   target >= "
          f"{TARGET_APPLY_PER_SECOND:,.0f}: {_mark(targets['apply'])}")  # fmt: skip
    by_process = ", ".join(
        f"{name} {rss / gb:.2f} GB (anonymous {result.peak_anon_by_process.get(name, 0) / gb:.2f}"
        f", files {result.peak_file_by_process.get(name, 0) / gb:.2f})"
        for name, rss in sorted(result.peak_rss_by_process.items())
        if rss >= SHOWN_RSS_BYTES
    )
    print(f"  {'peak RSS, server + JVM':<34} {result.peak_rss_bytes / gb:>9.2f} GB "
          f"({by_process})   target <= {TARGET_RSS_BYTES / gb:.1f} GB: "
          f"{_mark(targets['peak_rss'])}")  # fmt: skip
    print(
        f"  {'peak RSS, the whole process tree':<34} "
        f"{result.peak_rss_tree_bytes / gb:>9.2f} GB (with short-lived forks)"
    )
    print(f"  {'clean shutdown (SIGTERM)':<34} {result.shutdown_seconds:>9.1f} s")
    for name, seconds in result.restart.items():
        print(f"  {'restart: ' + name.replace('_', ' '):<34} {seconds:>9.1f} s")
    for name, seconds in result.restart_opened.items():
        print(f"  {'  of which ' + name.replace('_', ' '):<34} {seconds:>9.1f} s")
    print(f"  {'restart to serving':<34} {result.restart_to_serving:>9.1f} s  target <= "
          f"{TARGET_RESTART_SECONDS:.0f} s: {_mark(targets['restart_to_serving'])}")  # fmt: skip
    print(
        f"  {'point lookup by id':<34} {result.lookup_median() * 1e3:>9.1f} ms median, "
        f"{result.lookup_p95() * 1e3:.1f} ms p95 ({len(result.lookup_seconds)} lookups)"
    )
    print(f"  {'SELECT COUNT(*)':<34} {result.count_median() * 1e3:>9.1f} ms median "
          f"({len(result.count_seconds)} queries)", flush=True)  # fmt: skip
    for error in result.errors:
        print(f"  ERROR: {error}", flush=True)


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(positive_int(part) for part in text.split(","))
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"not a list of row counts: {text!r}") from None
    return sizes


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rows", type=_sizes, default=None,
                        help="comma-separated rows to load (default 1000000,5000000)")  # fmt: skip
    parser.add_argument(
        "--transactions", type=positive_int, default=None,
        help=f"workload transactions (default {DEFAULT_TRANSACTIONS:,})",
    )  # fmt: skip
    parser.add_argument("--tables", type=positive_int, default=1, help="tables the rows fill")
    parser.add_argument("--load-batch", type=positive_int, default=1_000,
                        help="rows per load transaction (default 1000)")  # fmt: skip
    parser.add_argument("--lookups", type=positive_int, default=200,
                        help="point lookups timed and checked (default 200)")  # fmt: skip
    parser.add_argument(
        "--source",
        choices=("builtin", "mariadb"),
        default="builtin",
        help="the generator's binary log served by the built-in source "
        "(default), or a real MariaDB that sysbench loads and drives",
    )
    parser.add_argument("--mariadb", metavar="DIR", type=Path,
                        help="with --source mariadb and one size: the MariaDB an earlier run "
                             "loaded with that many rows (its directory, kept), started as it "
                             "is instead of loaded again")  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a smoke run)")
    parser.add_argument("--json", metavar="PATH", help="also write every figure to PATH")
    parser.add_argument(
        "--config",
        metavar="FILE",
        type=Path,
        help="the replica server's configuration file (settings to compare)",
    )
    parser.add_argument("--keep", metavar="DIR", type=Path,
                        help="work in DIR/<rows> and leave it (the server's data directory "
                             "for a closer look at a restart)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.rows is None:
        args.rows = QUICK_ROWS if args.quick else DEFAULT_ROWS
    if args.transactions is None:
        args.transactions = QUICK_TRANSACTIONS if args.quick else DEFAULT_TRANSACTIONS
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; 1 when a check fails."""
    args = parse_args(argv)
    machine = machine_line()
    print(f"{machine}; load average {load_average()}", flush=True)
    figures: dict[str, Any] = {
        "benchmark": "scale",
        "machine": machine,
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "load_average_start": load_average(),
        "targets": {"peak_rss_bytes": TARGET_RSS_BYTES,
                    "restart_to_serving_seconds": TARGET_RESTART_SECONDS,
                    "apply_per_second": TARGET_APPLY_PER_SECOND},
        "sizes": [],
    }  # fmt: skip
    results: list[SizeResult] = []
    for rows in args.rows:
        if args.keep is not None:
            work = args.keep / str(rows)
            work.mkdir(parents=True)
            results.append(run_size(work, rows, args))
        else:
            with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
                results.append(run_size(Path(tmp), rows, args))
        figures["sizes"].append(results[-1].figures())
        if args.json is not None:  # written after each size: a long run keeps what it did
            figures["load_average_end"] = load_average()
            Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")
    print(f"\nload average at the end: {load_average()} (other processes share the CPUs)")
    if args.json is not None:
        print(f"figures written to {args.json}")
    errors = [error for result in results for error in result.errors]
    if errors:
        print(f"checks: {len(errors)} FAILED")
        return 1
    print("checks: every GTID durable; after each restart COUNT(*) and the rows looked up "
          "equal the source's")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
