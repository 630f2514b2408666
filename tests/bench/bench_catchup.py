"""Catching up with a backlog: this replica against a MariaDB replica, on the same source.

A real MariaDB source (Debian's, started here) holds each shape's backlog in its binary log;
then each replica, one after the other, replicates it from the source's first GTID:

* **mariadb**: a second MariaDB, the anchor: ``slave_parallel_threads=4``,
  ``slave_parallel_mode=optimistic``, InnoDB with ``innodb_flush_log_at_trx_commit=1``;
  ``CHANGE MASTER TO ... MASTER_USE_GTID=slave_pos``, ``START SLAVE``. Its rows are queryable
  once executed.
* **csa**: ``spark-replica serve`` (its own process, the Spark engine with default settings),
  ``CHANGE REPLICATION SOURCE TO ... APPLIER_VERSION=2, APPLIER_WORKER_COUNT=4``.
* **mta**: the same server with ``APPLIER_VERSION=1`` (the multi-threaded applier, its
  default workers).

Two shapes:

* **bulk**: an employees-shaped database (test_db's six tables, keys and foreign keys:
  ``--employees`` employees with about 9.5 salaries, 1.5 titles and 1.1 departments each;
  300,024 give the original's 3.9 M rows) loaded by multi-row INSERTs of 10,000 rows, one
  transaction each.
* **oltp**: ``sysbench oltp_write_only`` (8 tables of ``--oltp-rows`` rows, secondary index on
  k) prepared, then run with 4 threads for ``--oltp-events`` transactions.

Timed for each replica, from ``START``: until its executed GTIDs cover the setup (the bulk's
schema; the oltp's prepared tables), and until they cover the whole backlog (*executed*);
for ours also until the whole backlog is durable in Spark (*queryable*: recorded at a commit
point, what every query reads). The drain rate is the backlog's transactions after the setup
over the seconds between the two. The waits for *executed* are exact on both: MariaDB's
``MASTER_GTID_WAIT``, ours ``WAIT_FOR_EXECUTED_GTID_SET`` (in slices of ``WAIT_SLICE``
seconds, the channel's status looked at between them); *queryable* is read from the
metadata database every ``POLL`` seconds, without a query to the server.

Also for ours: the CPU seconds of the server's Python process and of Spark's JVM until
queryable; with ``--profile``, the Python process's CPU split by stage (receive, decode,
schedule, apply, key index, flush to storage, serving SQL; ``profile_split.py``) from
py-spy's samples.

Printed and, with ``--json PATH``, written: the seconds, the rates and the ratios ours /
MariaDB (seconds: above 1 is slower). Checked (exit code 1 when one fails): every replica ends
without an error, each table's row count equal to the source's, and the ``CHECKSUM TABLE`` of
the MariaDB replica equal to the source's.

Usage (from the repository root)::

    .venv/bin/python tests/bench/bench_catchup.py [--shapes bulk,oltp] [--replicas
        mariadb,csa,mta] [--employees 300024] [--oltp-rows 10000] [--oltp-events 20000]
        [--profile] [--keep DIR] [--config TOML] [--server-log-level LEVELS] [--json PATH]
        [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[2]
for _path in (_REPO / "src", _REPO):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import pymysql  # noqa: E402
from tests.bench.benchkit import load_average, machine_line, positive_int  # noqa: E402
from tests.bench.profile_split import cpu_seconds, sampling, shares, split  # noqa: E402
from tests.bench.scale_backlogs import sysbench  # noqa: E402
from tests.helpers.live_source import source_gtids  # noqa: E402
from tests.helpers.mariadb import (  # noqa: E402
    REPL_PASSWORD,
    REPL_USER,
    ROOT_PASSWORD,
    MariaDB,
    running_mariadb,
)
from tests.helpers.process import ServerProcess, durable_count, java_child  # noqa: E402
from tests.helpers.replica_channel import APPLIERS, CHANNEL, change_source_at, status  # noqa: E402
from tests.helpers.server import connect  # noqa: E402

DEFAULT_EMPLOYEES = 300_024
DEFAULT_OLTP_ROWS = 10_000
DEFAULT_OLTP_EVENTS = 20_000
QUICK = {"employees": 3_000, "oltp_rows": 1_000, "oltp_events": 500}
OLTP_TABLES = 8
OLTP_THREADS = 4
ROWS_PER_INSERT = 10_000
POLL = 0.1
#: Seconds of one WAIT_FOR_EXECUTED_GTID_SET: the channel's status is looked at between two.
WAIT_SLICE = 2
#: Looks at the metadata database between two looks at the channel's status.
STATUS_EVERY = 20
TIME_LIMIT = 3_600.0
#: The source: a buffer pool for the load, no flush at each commit (the source's durability
#: is not measured); the anchor replica: durable commits, 4 optimistic parallel workers.
SOURCE_SETTINGS = """innodb_buffer_pool_size=1G
innodb_log_file_size=512M
innodb_flush_log_at_trx_commit=0
sync_binlog=0
"""
MARIADB_REPLICA_SETTINGS = """innodb_buffer_pool_size=1G
innodb_log_file_size=512M
innodb_flush_log_at_trx_commit=1
slave_parallel_threads=4
slave_parallel_mode=optimistic
server_id=2
"""
SCHEMA = "employees"
EMPLOYEES_DDL = """
CREATE DATABASE employees;
USE employees;
CREATE TABLE employees (emp_no INT NOT NULL, birth_date DATE NOT NULL,
  first_name VARCHAR(14) NOT NULL, last_name VARCHAR(16) NOT NULL,
  gender ENUM('M','F') NOT NULL, hire_date DATE NOT NULL, PRIMARY KEY (emp_no));
CREATE TABLE departments (dept_no CHAR(4) NOT NULL, dept_name VARCHAR(40) NOT NULL,
  PRIMARY KEY (dept_no), UNIQUE KEY (dept_name));
CREATE TABLE dept_manager (emp_no INT NOT NULL, dept_no CHAR(4) NOT NULL,
  from_date DATE NOT NULL, to_date DATE NOT NULL,
  FOREIGN KEY (emp_no) REFERENCES employees (emp_no) ON DELETE CASCADE,
  FOREIGN KEY (dept_no) REFERENCES departments (dept_no) ON DELETE CASCADE,
  PRIMARY KEY (emp_no, dept_no));
CREATE TABLE dept_emp (emp_no INT NOT NULL, dept_no CHAR(4) NOT NULL,
  from_date DATE NOT NULL, to_date DATE NOT NULL,
  FOREIGN KEY (emp_no) REFERENCES employees (emp_no) ON DELETE CASCADE,
  FOREIGN KEY (dept_no) REFERENCES departments (dept_no) ON DELETE CASCADE,
  PRIMARY KEY (emp_no, dept_no));
CREATE TABLE titles (emp_no INT NOT NULL, title VARCHAR(50) NOT NULL,
  from_date DATE NOT NULL, to_date DATE,
  FOREIGN KEY (emp_no) REFERENCES employees (emp_no) ON DELETE CASCADE,
  PRIMARY KEY (emp_no, title, from_date));
CREATE TABLE salaries (emp_no INT NOT NULL, salary INT NOT NULL,
  from_date DATE NOT NULL, to_date DATE NOT NULL,
  FOREIGN KEY (emp_no) REFERENCES employees (emp_no) ON DELETE CASCADE,
  PRIMARY KEY (emp_no, from_date));
"""
DEPARTMENTS = ["Marketing", "Finance", "Human Resources", "Production", "Development",
               "Quality Management", "Sales", "Research", "Customer Service"]  # fmt: skip
TITLES = ["Engineer", "Senior Engineer", "Staff", "Senior Staff", "Assistant Engineer",
          "Technique Leader", "Manager"]  # fmt: skip
NAMES = ["Georgi", "Bezalel", "Parto", "Chirstian", "Kyoichi", "Anneke", "Tzvetan", "Saniya",
         "Sumant", "Duangkaew", "Mary", "Patricio", "Eberhardt", "Berni", "Guoxiang"]  # fmt: skip
SURNAMES = ["Facello", "Simmel", "Bamford", "Koblick", "Maliniak", "Preusig", "Zielinski",
            "Kalloufi", "Peac", "Piveteau", "Sluis", "Bridgland", "Terkki", "Genin"]  # fmt: skip
FOREVER = date(9999, 1, 1)


# -- the backlogs ----------------------------------------------------------------------------
def _quoted(value: object) -> str:
    return f"'{value}'" if isinstance(value, str | date) else str(value)


def _inserts(table: str, rows: Iterator[tuple[object, ...]]) -> Iterator[str]:
    """Multi-row INSERTs of ``ROWS_PER_INSERT`` rows, each its own transaction."""
    chunk: list[str] = []
    for row in rows:
        chunk.append("(" + ",".join(map(_quoted, row)) + ")")
        if len(chunk) == ROWS_PER_INSERT:
            yield f"INSERT INTO {table} VALUES {','.join(chunk)};\n"
            chunk = []
    if chunk:
        yield f"INSERT INTO {table} VALUES {','.join(chunk)};\n"


def employees_script(path: Path, employees: int, seed: int = 7) -> int:
    """Write the bulk shape's data (``employees`` employees and their rows) as a script of
    multi-row INSERTs into ``path``; the rows written."""
    rng = random.Random(seed)
    start = date(1985, 1, 1)
    people = []
    for emp_no in range(10_001, 10_001 + employees):
        hired = start + timedelta(days=rng.randrange(5_000))
        born = date(1952, 1, 1) + timedelta(days=rng.randrange(4_700))
        people.append((emp_no, born, rng.choice(NAMES), rng.choice(SURNAMES),
                       rng.choice("MF"), hired))  # fmt: skip
    departments = [(f"d{n:03d}", name) for n, name in enumerate(DEPARTMENTS, 1)]
    rows = {"departments": departments, "employees": people, "dept_emp": [], "titles": [],
            "salaries": []}  # fmt: skip
    for emp_no, _born, _first, _last, _gender, hired in people:
        moves = 1 + (rng.random() < 0.1)
        for dept_no, _ in rng.sample(departments, moves):
            rows["dept_emp"].append((emp_no, dept_no, hired, FOREVER))
        when = hired
        for title in rng.sample(TITLES, 1 + (rng.random() < 0.5)):
            rows["titles"].append((emp_no, title, when, FOREVER))
            when += timedelta(days=1 + rng.randrange(2_000))
        salary = rng.randrange(40_000, 70_000)
        for year in range(rng.randrange(1, 19)):
            since = hired + timedelta(days=365 * year)
            rows["salaries"].append((emp_no, salary, since, since + timedelta(days=365)))
            salary += rng.randrange(0, 3_000)
    written = 0
    with path.open("w", encoding="ascii") as out:
        out.write(f"USE {SCHEMA};\n")
        for table in ("departments", "employees", "dept_emp", "titles", "salaries"):
            written += len(rows[table])
            out.writelines(_inserts(table, iter(rows[table])))
    return written


@dataclass(slots=True)
class Backlog:
    """One shape's backlog in the source's binary log."""

    shape: str
    #: GTIDs of the setup, and of the whole backlog; the source's GTID position at both,
    #: and both GTID sets as this replica names them.
    setup: int
    total: int
    setup_position: str
    position: str
    setup_gtids: str
    gtids: str
    rows: int
    binlog_bytes: int
    source_seconds: float
    tables: list[str] = field(default_factory=list)


def _position(source: MariaDB) -> str:
    return source.sql("SELECT @@GLOBAL.gtid_binlog_pos").strip()


def _binlog_bytes(source: MariaDB) -> int:
    return sum(int(line.split("\t")[1]) for line in
               source.sql("SHOW BINARY LOGS").splitlines() if "\t" in line)  # fmt: skip


def write_backlog(source: MariaDB, shape: str, work: Path, args: argparse.Namespace) -> Backlog:
    """Write ``shape``'s backlog into ``source`` (fresh, its binary log reset)."""
    source.sql("SET sql_log_bin = 0; RESET MASTER")
    if shape == "bulk":
        ddl = work / "employees-ddl.sql"
        ddl.write_text(EMPLOYEES_DDL)
        source.run_script(ddl)
        setup_gtids, setup_position = source_gtids(source), _position(source)
        script = work / "employees-data.sql"
        rows = employees_script(script, args.employees)
        started = time.perf_counter()
        source.run_script(script, timeout=TIME_LIMIT)
        tables = [f"{SCHEMA}.{t}" for t in ("departments", "employees", "dept_emp", "titles",
                                              "salaries")]  # fmt: skip
    else:
        source.sql("CREATE DATABASE sbtest")
        sysbench(source, "prepare", tables=OLTP_TABLES, rows=args.oltp_rows, threads=1, events=0)
        setup_gtids, setup_position = source_gtids(source), _position(source)
        rows = OLTP_TABLES * args.oltp_rows
        started = time.perf_counter()
        sysbench(
            source,
            "run",
            tables=OLTP_TABLES,
            rows=args.oltp_rows,
            threads=OLTP_THREADS,
            events=args.oltp_events,
        )
        tables = [f"sbtest.sbtest{n}" for n in range(1, OLTP_TABLES + 1)]
    gtids = source_gtids(source)
    return Backlog(
        shape=shape, setup=setup_gtids.count(), total=gtids.count(),
        setup_position=setup_position, position=_position(source),
        setup_gtids=str(setup_gtids), gtids=str(gtids), rows=rows,
        binlog_bytes=_binlog_bytes(source), source_seconds=time.perf_counter() - started,
        tables=tables,
    )  # fmt: skip


# -- the replicas ----------------------------------------------------------------------------
@dataclass(slots=True)
class Run:
    """One replica's catch-up on one backlog (seconds from START)."""

    replica: str
    setup_seconds: float = 0.0
    executed_seconds: float = 0.0
    queryable_seconds: float = 0.0
    drain_per_second: float = 0.0
    #: Each stage's share of the server's CPU samples until queryable (``--profile``).
    profile: dict[str, float] = field(default_factory=dict)
    #: CPU seconds until queryable: the server's Python process, and Spark's JVM.
    python_cpu_seconds: float = 0.0
    jvm_cpu_seconds: float = 0.0
    error: str | None = None


def _counts(cursor: Any, tables: Sequence[str]) -> dict[str, int]:
    found = {}
    for table in tables:
        cursor.execute(f"SELECT COUNT(*) FROM {table}")
        found[table] = int(cursor.fetchone()[0])
    return found


def _checksums(server: MariaDB, tables: Sequence[str]) -> dict[str, str]:
    out = server.sql(f"CHECKSUM TABLE {', '.join(tables)}")
    return dict(line.split("\t") for line in out.splitlines() if "\t" in line)


def run_mariadb(source: MariaDB, backlog: Backlog, work: Path, truth: dict[str, int]) -> Run:
    """The anchor: a MariaDB replica from the source's first GTID."""
    run = Run("mariadb")
    with running_mariadb(work / "mariadb-replica", binlog=False,
                         settings=MARIADB_REPLICA_SETTINGS) as replica:  # fmt: skip
        conn = pymysql.connect(host=replica.host, port=replica.port, user="root",
                               password=ROOT_PASSWORD, autocommit=True)  # fmt: skip
        try:
            with conn.cursor() as cursor:
                cursor.execute(
                    f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={source.port}, "
                    f"MASTER_USER='{REPL_USER}', MASTER_PASSWORD='{REPL_PASSWORD}', "
                    "MASTER_USE_GTID=slave_pos"
                )
                started = time.perf_counter()
                cursor.execute("START SLAVE")
                for position, attribute in ((backlog.setup_position, "setup_seconds"),
                                            (backlog.position, "executed_seconds")):  # fmt: skip
                    cursor.execute("SELECT MASTER_GTID_WAIT(%s, %s)", (position, TIME_LIMIT))
                    if cursor.fetchone()[0] != 0:
                        run.error = f"MariaDB did not reach {position} in time"
                        return run
                    setattr(run, attribute, time.perf_counter() - started)
                run.queryable_seconds = run.executed_seconds
                if _counts(cursor, backlog.tables) != truth:
                    run.error = "MariaDB's row counts differ from the source's"
                elif _checksums(replica, backlog.tables) != _checksums(source, backlog.tables):
                    run.error = "MariaDB's CHECKSUM TABLE differs from the source's"
        finally:
            conn.close()
    return run


def _channel_error(cursor: Any) -> str | None:
    found = status(cursor)
    if found["Last_SQL_Errno"] or found["Last_IO_Errno"]:
        return (f"IO {found['Last_IO_Errno']} {found['Last_IO_Error']!r}, "
                f"SQL {found['Last_SQL_Errno']} {found['Last_SQL_Error']!r}")  # fmt: skip
    return None


def run_ours(applier: str, source: MariaDB, backlog: Backlog, work: Path,
             truth: dict[str, int], profile: bool, keep: Path | None = None,
             log_level: str = "WARNING", config: Path | None = None) -> Run:  # fmt: skip
    """This replica, with ``applier`` (``APPLIERS``' names), from the source's first GTID;
    its CPU split by stage when ``profile``. ``keep``: where py-spy's samples and the
    server's log (at ``log_level``) are copied."""
    run = Run(applier)
    data = work / f"replica-{applier}"
    data.mkdir(parents=True)
    server = ServerProcess(data, config, log_level=log_level)
    try:
        with connect(server.port) as conn, conn.cursor() as cursor:
            options = dict(item.split("=") for item in APPLIERS[applier].split(", "))
            cursor.execute(change_source_at("127.0.0.1", source.port, REPL_USER, REPL_PASSWORD,
                                            **options))  # fmt: skip
            recording = work / f"profile-{applier}.txt"
            sampler = sampling(server.process.pid, recording) if profile else nullcontext()
            pids = (server.process.pid, java_child(server.process.pid))
            before = [cpu_seconds(pid) for pid in pids]
            with sampler:
                _follow(cursor, data, backlog, run)
            after = [cpu_seconds(pid) for pid in pids]
            run.python_cpu_seconds = after[0] - before[0]
            run.jvm_cpu_seconds = after[1] - before[1]
            if profile:
                run.profile = shares(split(recording.read_text()))
            if run.error is None and _counts(cursor, backlog.tables) != truth:
                run.error = "the replica's row counts differ from the source's"
    finally:
        server.stop()
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            for kept, name in ((work / f"profile-{applier}.txt", "profile"),
                               (server.log_path, "server")):  # fmt: skip
                if kept.exists():
                    shutil.copy(kept, keep / f"{backlog.shape}-{applier}-{name}.txt")
    return run


def _follow(cursor: Any, data: Path, backlog: Backlog, run: Run) -> None:
    """START REPLICA, then note in ``run`` when the setup and the backlog are executed and
    when the backlog is durable (or the channel's error)."""
    started = time.perf_counter()
    cursor.execute(f"START REPLICA FOR CHANNEL '{CHANNEL}'")
    for gtids, attribute in ((backlog.setup_gtids, "setup_seconds"),
                             (backlog.gtids, "executed_seconds")):  # fmt: skip
        while True:
            cursor.execute("SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, %s)", (gtids, WAIT_SLICE))
            if cursor.fetchone()[0] == 0:
                setattr(run, attribute, time.perf_counter() - started)
                break
            if not _still_going(cursor, run, time.perf_counter() - started):
                return
    looks = 0
    while durable_count(data) < backlog.total:
        looks += 1
        now = time.perf_counter() - started
        if looks % STATUS_EVERY == 0 and not _still_going(cursor, run, now):
            return
        time.sleep(POLL)
    run.queryable_seconds = time.perf_counter() - started
    run.error = _channel_error(cursor)


def _still_going(cursor: Any, run: Run, seconds: float) -> bool:
    """False, with the error noted in ``run``, once the channel failed or time is up."""
    run.error = _channel_error(cursor)
    if run.error is None and seconds > TIME_LIMIT:
        run.error = f"not durable within {TIME_LIMIT:.0f} s"
    return run.error is None


# -- the run ---------------------------------------------------------------------------------
@dataclass(slots=True)
class ShapeResult:
    backlog: Backlog
    runs: list[Run] = field(default_factory=list)

    def ratios(self) -> dict[str, dict[str, float]]:
        """Ours / MariaDB's seconds (executed, queryable against MariaDB's executed) and
        MariaDB's drain rate / ours, per applier."""
        anchor = next((r for r in self.runs if r.replica == "mariadb" and not r.error), None)
        if anchor is None:
            return {}
        return {
            r.replica: {
                "executed": r.executed_seconds / anchor.executed_seconds,
                "queryable": r.queryable_seconds / anchor.executed_seconds,
                "drain": anchor.drain_per_second / r.drain_per_second,
            }
            for r in self.runs
            if r.replica != "mariadb" and not r.error and r.drain_per_second
        }


def _drain(run: Run, backlog: Backlog) -> None:
    seconds = run.executed_seconds - run.setup_seconds
    if not run.error and seconds > 0:
        run.drain_per_second = (backlog.total - backlog.setup) / seconds


def run_shape(shape: str, work: Path, args: argparse.Namespace) -> ShapeResult:
    with running_mariadb(work / "source", settings=SOURCE_SETTINGS) as source:
        backlog = write_backlog(source, shape, work, args)
        print(f"  backlog: {backlog.total - backlog.setup:,} transactions after a setup of "
              f"{backlog.setup:,}, {backlog.rows:,} rows, "
              f"{backlog.binlog_bytes / 1e6:,.0f} MB of binary log "
              f"(the source wrote it in {backlog.source_seconds:.1f} s)", flush=True)  # fmt: skip
        conn = pymysql.connect(host=source.host, port=source.port, user="root",
                               password=ROOT_PASSWORD, autocommit=True)  # fmt: skip
        with conn, conn.cursor() as cursor:
            truth = _counts(cursor, backlog.tables)
        result = ShapeResult(backlog)
        for replica in args.replicas:
            if replica == "mariadb":
                run = run_mariadb(source, backlog, work, truth)
            else:
                run = run_ours(replica, source, backlog, work, truth, args.profile, args.keep,
                               args.server_log_level, args.config)  # fmt: skip
            _drain(run, backlog)
            result.runs.append(run)
            show_run(run)
    return result


def show_run(run: Run) -> None:
    if run.error:
        print(f"  {run.replica:<8} ERROR: {run.error}", flush=True)
        return
    if run.replica == "mariadb":
        print(f"  {run.replica:<8} setup {run.setup_seconds:7.1f} s, executed "
              f"{run.executed_seconds:7.1f} s; drain {run.drain_per_second:,.0f} "
              "transactions/s", flush=True)  # fmt: skip
        return
    print(f"  {run.replica:<8} setup {run.setup_seconds:7.1f} s, executed "
          f"{run.executed_seconds:7.1f} s, queryable {run.queryable_seconds:7.1f} s; drain "
          f"{run.drain_per_second:,.0f} transactions/s", flush=True)  # fmt: skip
    print(f"  {'':<8} CPU until queryable: Python {run.python_cpu_seconds:.1f} s, JVM "
          f"{run.jvm_cpu_seconds:.1f} s", flush=True)  # fmt: skip
    if run.profile:
        listed = ", ".join(f"{name} {share:.0%}" for name, share in run.profile.items())
        print(f"  {'':<8} CPU samples of the server: {listed}", flush=True)


def show_ratios(result: ShapeResult) -> None:
    for replica, ratio in result.ratios().items():
        print(f"  {replica} / mariadb: executed {ratio['executed']:.2f}x the seconds, "
              f"queryable {ratio['queryable']:.2f}x MariaDB's executed; MariaDB drains "
              f"{ratio['drain']:.2f}x as fast", flush=True)  # fmt: skip


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--shapes", default="bulk,oltp", help="bulk, oltp (default both)")
    parser.add_argument(
        "--replicas",
        default="mariadb,csa,mta",
        help="mariadb, csa, mta, in this order (default all three)",
    )
    parser.add_argument(
        "--employees",
        type=positive_int,
        default=DEFAULT_EMPLOYEES,
        help=f"employees of the bulk shape (default {DEFAULT_EMPLOYEES:,})",
    )
    parser.add_argument(
        "--oltp-rows",
        type=positive_int,
        default=DEFAULT_OLTP_ROWS,
        help=f"rows of each oltp table (default {DEFAULT_OLTP_ROWS:,})",
    )
    parser.add_argument(
        "--oltp-events",
        type=positive_int,
        default=DEFAULT_OLTP_EVENTS,
        help=f"oltp transactions (default {DEFAULT_OLTP_EVENTS:,})",
    )
    parser.add_argument(
        "--profile", action="store_true", help="split the server's CPU by stage (py-spy samples)"
    )
    parser.add_argument(
        "--keep",
        metavar="DIR",
        type=Path,
        default=None,
        help="keep each of our servers' log (and py-spy's raw samples) in DIR",
    )
    parser.add_argument(
        "--config",
        metavar="TOML",
        type=Path,
        default=None,
        help="our servers' configuration file (default: the defaults)",
    )
    parser.add_argument(
        "--server-log-level",
        default="WARNING",
        help="our servers' --log-level (e.g. WARNING,spark_replica.applier_core.storage."
        "spark.engine=DEBUG: each flush's timings)",
    )
    parser.add_argument("--json", metavar="PATH", default=None, help="also write the figures")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a smoke run)")
    args = parser.parse_args(argv)
    args.shapes = [s.strip() for s in args.shapes.split(",")]
    args.replicas = [r.strip() for r in args.replicas.split(",")]
    if not set(args.shapes) <= {"bulk", "oltp"}:
        parser.error("--shapes takes bulk and oltp")
    if not set(args.replicas) <= {"mariadb", *APPLIERS}:
        parser.error("--replicas takes mariadb, csa and mta")
    if args.quick:
        for name, value in QUICK.items():
            setattr(args, name, value)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    print(f"{machine_line()}; load average {load_average()}", flush=True)
    figures: dict[str, Any] = {"machine": machine_line(), "load_average_start": load_average(),
                               "shapes": {}}  # fmt: skip
    errors = []
    with tempfile.TemporaryDirectory(prefix="bench-catchup-") as tmp:
        for shape in args.shapes:
            print(f"\n{shape} (load average {load_average()})", flush=True)
            result = run_shape(shape, Path(tmp) / shape, args)
            show_ratios(result)
            errors += [f"{shape}/{r.replica}: {r.error}" for r in result.runs if r.error]
            figures["shapes"][shape] = asdict(result) | {"ratios": result.ratios()}
    figures["load_average_end"] = load_average()
    figures["errors"] = errors
    print(f"\nload average at the end: {load_average()}")
    if args.json is not None:
        Path(args.json).write_text(json.dumps(figures, indent=1, default=str) + "\n")
        print(f"figures written to {args.json}")
    if errors:
        print("checks FAILED: " + "; ".join(errors))
        return 1
    print("checks: every replica ends with the source's row counts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
