"""Change Stream Applier throughput: drain a generated backlog, next to the serial applier.

Generates once (or reuses, with ``--dir``) a sysbench-shaped backlog: ``--transactions``
transactions of 4 row changes (about 70% UPDATE, 15% INSERT, 15% DELETE, rows picked
uniformly) over 8 ``sbtest`` tables of 1,000 rows from 16 clients, with WRITESET dependency
data by default (``--dependency commit_order`` for MySQL's commit-order intervals), after the
setup (CREATE DATABASEs, CREATE TABLEs, the load of the tables in batches of 100 rows). The
tables are spread over ``--databases`` databases (default 4: ``shop1`` ... ``shop4``, two
tables each) and each transaction changes the tables of one of them, picked at random, so
that DATABASE parallelism has work to spread; ``--databases 1`` keeps them in ``shop``.

Then, on the in-memory engine, in one run:

* the serial applier (``SerialApplier``: one thread, whole transactions in file order) over
  the binlog files;
* the Change Stream Applier (a channel with ``APPLIER_VERSION=2``, started as START REPLICA
  starts it) over the same files copied into its relay log, for each worker count, with
  ``replica_preserve_commit_order`` ON and OFF: the time from START until the last GTID is
  executed (``ExecutedGtids.wait_for``).

* the legacy multi-threaded applier (``MtaApplier``) the same way, for each worker count:
  with ``replica_parallel_type=LOGICAL_CLOCK``, commit order ON and OFF (``mta``), and with
  ``replica_parallel_type=DATABASE``, commit order OFF only (``mta-database``: the replica
  refuses DATABASE with ``replica_preserve_commit_order=ON``, error 3031).

All of this on two workloads (``--workloads``): ``uniform`` (the backlog above) and ``skewed``
(the same, with one transaction in 50 a long one of 100 row inserts: ``WorkloadSpec``'s
``large_share`` and ``large_size``). ``--appliers`` chooses which appliers run (the serial one
always does: the ratios need it).

Each of these runs twice: with no commit latency (pure CPU work: under CPython's GIL this
shows the CSA's own cost), and with ``--commit-latency`` seconds per flush (a durable engine
whose group commit lets concurrent committers share a flush; the sleep releases the GIL).
Every run must end in the generated final content; the exit code is 1 when one does not (or
fails, or does not finish within its time limit).

Printed per run: transactions/s, the ratio to the serial applier at the same latency, the
process CPU time per transaction, the scheduler's mean number of tasks ready or running at
once, commits per flush, and for CSA runs the scheduler's overhead per transaction
(``CsaChannel.scheduling_ns``: dispatch, enqueue and the work around each job, waits apart;
decision 0012). Then the targets (decision 0013): the scheduler's overhead stays under 50 µs
per transaction in every CSA run, and with the commit latency the CSA with 4 workers is never
slower than the serial applier. Beside them, for information: the CSA's whole cost over the
serial applier, (CSA with 1 worker − serial) / transactions with no commit latency, split
into the CSA's own work and the hand-over between its threads (decision 0011).

Usage (from the repository root)::

    .venv/bin/python tests/bench/bench_applier.py [--transactions 100000] [--workers 1,2,4,8]
        [--dependency writeset|commit_order] [--commit-latency 0.0005] [--dir CACHE_DIR]
        [--appliers serial,mta,mta-database,csa] [--workloads uniform,skewed]
        [--databases 4] [--json PATH] [--quick]

``--json PATH`` writes every run (and the machine it ran on) for ``make bench``'s charts.
"""

from __future__ import annotations

import argparse
import gc
import json
import pickle
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any
from unittest.mock import patch

_REPO = Path(__file__).resolve().parents[2]
for _path in (_REPO / "src", _REPO):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from tests.bench.benchkit import cache_root, load_average, machine_line, worker_counts  # noqa: E402
from tests.unit.csa_apply.harness import copy_into_relay_log, engine_content  # noqa: E402

from spark_replica.applier_core.apply.serial import SerialApplier  # noqa: E402
from spark_replica.applier_core.channels.components import ThreadContext  # noqa: E402
from spark_replica.applier_core.channels.config import (  # noqa: E402
    ApplierSettings,
    ApplierVersion,
    ChannelConfig,
)
from spark_replica.applier_core.channels.relay_logs import RelayLogs  # noqa: E402
from spark_replica.applier_core.channels.status import ErrorInfo, StatusBoard  # noqa: E402
from spark_replica.applier_core.csa.applier import CsaApplier  # noqa: E402
from spark_replica.applier_core.csa.service import CsaChannel  # noqa: E402
from spark_replica.applier_core.csa.workers import WorkerBoard  # noqa: E402
from spark_replica.applier_core.gtid import GtidSet  # noqa: E402
from spark_replica.applier_core.mta import MtaApplier  # noqa: E402
from spark_replica.applier_core.progress import ExecutedGtids  # noqa: E402
from spark_replica.applier_core.scheduler.adapters import LwmDependencyAdapter  # noqa: E402
from spark_replica.applier_core.scheduler.thread_pool import ThreadPool  # noqa: E402
from spark_replica.applier_core.settings import SystemVariables  # noqa: E402
from spark_replica.applier_core.storage import InMemoryEngine  # noqa: E402
from spark_replica.tools.generator.schema import TABLE_FACTORIES  # noqa: E402
from spark_replica.tools.generator.simulate import (  # noqa: E402
    Dependency,
    GeneratedTransaction,
    WorkloadSpec,
    simulate,
)
from spark_replica.tools.generator.writer import write_binlogs  # noqa: E402

DEFAULT_TRANSACTIONS = 100_000
QUICK_TRANSACTIONS = 2_000
DEFAULT_WORKERS = (1, 2, 4, 8)
QUICK_WORKERS = (1, 4)
DEFAULT_COMMIT_LATENCY = 0.0005
TABLES = 8
ROWS_PER_TABLE = 1_000
CHANGES_PER_TRANSACTION = 4
CLIENTS = 16
#: The workers of the throughput target, and the overhead budget per transaction.
TARGET_WORKERS = 4
TARGET_US_PER_TRANSACTION = 50.0
CHANNEL = "bench"
MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1
CONTENT = "content.pickle"
BINLOG_BASE = "binlog"
#: The skewed workload: one transaction in 50 is a long one of this many row inserts.
SKEWED_LARGE_SHARE = 0.02
SKEWED_LARGE_SIZE = 100
WORKLOADS = ("uniform", "skewed")
APPLIERS = ("serial", "mta", "mta-database", "csa")
#: The ``Run.applier`` of the CSA run whose tasks the service thread runs itself.
IN_ONE_THREAD = "csa-in-one-thread"
#: The parallel appliers and their ``replica_parallel_type`` (None: the CSA has none).
PARALLEL_TYPES: dict[str, str | None] = {
    "mta": "LOGICAL_CLOCK",
    "mta-database": "DATABASE",
    "csa": None,
}
#: The ``replica_preserve_commit_order`` values each parallel applier runs with: the replica
#: refuses DATABASE with ON (error 3031).
COMMIT_ORDERS: dict[str, tuple[bool, ...]] = {
    "mta": (True, False),
    "mta-database": (False,),
    "csa": (True, False),
}
#: The databases the tables are spread over, unless ``--databases`` says otherwise.
DEFAULT_DATABASES = 4
#: The replica's server id for the MTA: not the generator's (1), so the source's
#: Format_description events restart the logical clock as a real source's do.
MTA_SERVER_ID = 2
#: How often a CSA run looks whether its channel stopped while it waits for the last GTID.
POLL = 0.5
MB = 1_000_000

Content = dict[str, list[tuple[object, ...]]]


# -- the backlog -----------------------------------------------------------------------------
def plan_spec(
    transactions: int,
    dependency: Dependency,
    conflict_share: float,
    workload: str = "uniform",
    databases: int = 1,
) -> WorkloadSpec:
    """sysbench's oltp_write_only shape: 8 tables of 1,000 rows, 4 changes, 16 clients, the
    tables spread over ``databases`` databases; for the ``skewed`` workload, one transaction
    in 50 inserts ``SKEWED_LARGE_SIZE`` rows."""
    skew: dict[str, Any] = (
        {"large_share": SKEWED_LARGE_SHARE, "large_size": SKEWED_LARGE_SIZE}
        if workload == "skewed"
        else {}
    )
    return WorkloadSpec(
        tables=TABLES,
        rows_per_table=ROWS_PER_TABLE,
        transactions=transactions,
        changes_per_transaction=CHANGES_PER_TRANSACTION,
        clients=CLIENTS,
        conflict_share=conflict_share,
        dependency=dependency,
        databases=databases,
        **skew,
    )


def _spec_fields(spec: WorkloadSpec) -> dict[str, Any]:
    """The spec, and the tables its schema makes (a changed schema means a new backlog)."""
    values = {f.name: getattr(spec, f.name) for f in fields(spec)}
    values["tables_ddl"] = TABLE_FACTORIES[spec.schema](spec.database_of(1), 1).create_statement()
    return {k: v.value if isinstance(v, Enum) else v for k, v in values.items()}


def graph_parallelism(transactions: Sequence[GeneratedTransaction]) -> float:
    """Transactions / critical path the dependency data allows, for unit-time transactions
    and unlimited workers (delays from the CSA's own ``LwmDependencyAdapter``)."""
    adapter = LwmDependencyAdapter()
    latest_before = [0]  # latest_before[d]: latest finish among transactions 0..d-1
    for task_id, trx in enumerate(transactions):
        delay = adapter.solve(task_id, trx.sequence_number, trx.last_committed).delay
        finish = latest_before[delay] + 1
        latest_before.append(max(latest_before[-1], finish))
    return len(transactions) / latest_before[-1] if transactions else 0.0


@dataclass(frozen=True, slots=True)
class Backlog:
    spec: WorkloadSpec
    directory: Path
    files: tuple[Path, ...]
    #: Every transaction of the files (the setup's included), gnos 1..transactions.
    transactions: int
    changes: int
    parallelism: float
    content: Content
    #: Seconds to simulate and to write, or None when reused from the cache.
    simulate_seconds: float | None
    write_seconds: float | None

    @property
    def size(self) -> int:
        return sum(path.stat().st_size for path in self.files)

    @property
    def gtids(self) -> GtidSet:
        return GtidSet.parse(f"{self.spec.server_uuid}:1-{self.transactions}")


def _read_cached(directory: Path, spec: WorkloadSpec) -> Backlog | None:
    """The complete backlog planned as ``spec`` in ``directory``, or None."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text())
        if manifest.get("format") != MANIFEST_FORMAT or manifest["planned"] != _spec_fields(spec):
            return None
        for entry in manifest["files"]:
            if (directory / entry["name"]).stat().st_size != entry["size"]:
                return None
        content_path = directory / CONTENT
        if content_path.stat().st_size != manifest["content_size"]:
            return None
        with content_path.open("rb") as handle:
            content = pickle.load(handle)  # our own cache file, written below
        return Backlog(
            spec=spec, directory=directory,
            files=tuple(directory / e["name"] for e in manifest["files"]),
            transactions=int(manifest["transactions"]), changes=int(manifest["changes"]),
            parallelism=float(manifest["parallelism"]), content=content,
            simulate_seconds=None, write_seconds=None,
        )  # fmt: skip
    except (OSError, ValueError, KeyError, TypeError, pickle.UnpicklingError, EOFError):
        return None


def _clear(directory: Path) -> None:
    """Remove a previous backlog's files (only the names this script writes)."""
    for path in directory.glob(f"{BINLOG_BASE}.*"):
        if path.is_file():
            path.unlink()
    (directory / MANIFEST).unlink(missing_ok=True)
    (directory / CONTENT).unlink(missing_ok=True)


def backlog_name(spec: WorkloadSpec) -> str:
    """The cache directory of ``spec``'s backlog: ``applier-<dependency>-<transactions>``,
    then ``-db<databases>`` when there are several and ``-skewed<size>`` for a skewed one,
    so backlogs of different shapes never share a directory."""
    databases = f"-db{spec.databases}" if spec.databases > 1 else ""
    skew = f"-skewed{spec.large_size}" if spec.large_share else ""
    return f"applier-{spec.dependency.value}-{spec.transactions}{databases}{skew}"


def prepare(spec: WorkloadSpec, root: Path) -> Backlog:
    """Reuse the backlog in ``root/<backlog_name(spec)>`` when its manifest matches ``spec``,
    else generate it there."""
    directory = root / backlog_name(spec)
    directory.mkdir(parents=True, exist_ok=True)
    cached = _read_cached(directory, spec)
    if cached is not None:
        return cached
    _clear(directory)
    start = time.perf_counter()
    transactions, content = simulate(spec)
    simulated = time.perf_counter()
    files = write_binlogs(transactions, directory, server_uuid=spec.server_uuid, base=BINLOG_BASE)
    written = time.perf_counter()
    changes = sum(len(trx.changes) for trx in transactions)
    parallelism = graph_parallelism(transactions)
    count = len(transactions)
    assert [trx.gno for trx in transactions] == list(range(1, count + 1))
    del transactions
    with (directory / CONTENT).open("wb") as handle:
        pickle.dump(content, handle, protocol=pickle.HIGHEST_PROTOCOL)
    manifest = {
        "format": MANIFEST_FORMAT,
        "planned": _spec_fields(spec),
        "transactions": count,
        "changes": changes,
        "parallelism": parallelism,
        "content_size": (directory / CONTENT).stat().st_size,
        "files": [{"name": p.name, "size": p.stat().st_size} for p in files],
    }
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return Backlog(
        spec=spec, directory=directory, files=tuple(files), transactions=count, changes=changes,
        parallelism=parallelism, content=content, simulate_seconds=simulated - start,
        write_seconds=written - simulated,
    )  # fmt: skip


def describe(backlog: Backlog) -> None:
    b = backlog
    setup = b.transactions - b.spec.transactions
    print(f"backlog: {b.spec!r}")
    print(f"  {b.transactions:,} transactions ({b.spec.transactions:,} of the workload, "
          f"{setup:,} of setup and load), {b.changes:,} row changes; {len(b.files)} file(s), "
          f"{b.size / MB:,.1f} MB in {b.directory}")  # fmt: skip
    print(
        f"  the dependency data allows a parallelism of {b.parallelism:.2f} "
        "(transactions / critical path, unit-time transactions, unlimited workers)"
    )
    if b.simulate_seconds is None or b.write_seconds is None:
        print("  generation: reused from the cache directory")
    else:
        print(f"  generation: {b.simulate_seconds + b.write_seconds:.1f} s (simulate "
              f"{b.simulate_seconds:.1f} s, write {b.write_seconds:.1f} s)")  # fmt: skip


# -- the appliers ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Run:
    latency: float
    #: 0 for the serial applier.
    workers: int
    #: None for the serial applier.
    commit_order: bool | None
    transactions: int
    seconds: float
    cpu_seconds: float
    commits: int
    flushes: int
    #: The scheduler's mean number of tasks ready or running at once (CSA runs).
    mean_ready: float | None = None
    #: What went wrong (wrong content, an error, a time-out), or None.
    error: str | None = None
    #: ``serial``, ``csa``, ``mta`` (LOGICAL_CLOCK) or ``mta-database``.
    applier: str = "csa"
    #: ``uniform`` or ``skewed``.
    workload: str = "uniform"
    #: The scheduling cost per transaction in µs (CSA runs): ``CsaChannel.scheduling_ns``.
    scheduling_us: float | None = None

    @property
    def label(self) -> str:
        if self.commit_order is None:
            return "serial"
        if self.applier == IN_ONE_THREAD:
            return "csa workers 1 commit order off, in one thread"
        parallel_type = PARALLEL_TYPES.get(self.applier)
        kind = "csa" if parallel_type is None else f"mta {parallel_type.lower()}"
        order = "on" if self.commit_order else "off"
        return f"{kind} workers {self.workers} commit order {order}"

    @property
    def per_second(self) -> float:
        return self.transactions / self.seconds

    @property
    def cpu_us(self) -> float:
        return self.cpu_seconds / self.transactions * 1e6

    @property
    def commits_per_flush(self) -> float:
        return self.commits / self.flushes if self.flushes else 0.0


def _content_error(engine: InMemoryEngine, expected: Content) -> str | None:
    found = engine_content(engine)
    if found == expected:
        return None
    differing = sorted(
        name for name in found.keys() | expected.keys() if found.get(name) != expected.get(name)
    )
    details = ", ".join(
        f"{name}: {len(found.get(name, [])):,} rows, expected {len(expected.get(name, [])):,}"
        for name in differing[:4]
    )
    return f"content differs from the generated one in {len(differing)} table(s) ({details})"


def run_serial(backlog: Backlog, latency: float, workload: str = "uniform") -> Run:
    """The serial applier over the backlog's files, on a fresh engine."""
    engine = InMemoryEngine(commit_latency=latency)
    applier = SerialApplier(engine)
    gc.collect()
    start, cpu_start = time.perf_counter(), time.process_time()
    error: str | None = None
    try:
        result = applier.apply_files(backlog.files)
    except Exception as exc:  # reported, and the exit code says so
        error = f"serial applier failed: {exc!r}"
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu_start
    if error is None and result.committed != backlog.transactions:
        error = f"committed {result.committed:,} of {backlog.transactions:,} transactions"
    error = error or _content_error(engine, backlog.content)
    stats = engine.stats()
    return Run(latency, 0, None, backlog.transactions, seconds, cpu_seconds, stats.commits,
               stats.flushes, error=error, applier="serial", workload=workload)  # fmt: skip


def run_csa(
    backlog: Backlog,
    latency: float,
    workers: int,
    commit_order: bool,
    work_dir: Path,
    time_limit: float,
    applier_kind: str = "csa",
    workload: str = "uniform",
) -> Run:
    """A CSA channel (or, with ``applier_kind`` ``mta`` or ``mta-database``, the legacy
    multi-threaded applier with LOGICAL_CLOCK or DATABASE) on the backlog copied into its
    relay log, from START until the last GTID is executed, on a fresh engine."""
    data_dir = work_dir / f"{applier_kind}-{workers}-{int(commit_order)}"
    shutil.rmtree(data_dir, ignore_errors=True)
    copy_into_relay_log(backlog.files, data_dir, CHANNEL)
    engine = InMemoryEngine(commit_latency=latency)
    settings = SystemVariables({})
    settings.set_internal("replica_preserve_commit_order", int(commit_order))
    applier: CsaApplier | MtaApplier
    parallel_type = PARALLEL_TYPES[applier_kind]
    if parallel_type is not None:
        settings.set_internal("replica_parallel_workers", workers)
        settings.set_internal("replica_parallel_type", parallel_type)
        settings.set_internal("server_id", MTA_SERVER_ID)
        applier = MtaApplier(engine)
        applier_settings = ApplierSettings(applier_version=ApplierVersion.MTA)
    else:
        applier = CsaApplier(engine)
        applier_settings = ApplierSettings(
            applier_version=ApplierVersion.CSA, applier_worker_count=workers
        )
    executed = ExecutedGtids(settings=settings)
    relay_logs = RelayLogs(data_dir)
    exits: list[ErrorInfo | None] = []
    exited = threading.Event()

    def on_exit(info: ErrorInfo | None) -> None:
        exits.append(info)
        exited.set()

    config = ChannelConfig(name=CHANNEL, applier=applier_settings)
    context = ThreadContext(
        config=config, status=StatusBoard(), settings=settings, data_dir=str(data_dir),
        exited=on_exit, executed=executed, relay_logs=relay_logs,
    )  # fmt: skip
    target = backlog.gtids
    mean_ready: float | None = None
    scheduling_us: float | None = None
    error: str | None = None
    gc.collect()
    start, cpu_start = time.perf_counter(), time.process_time()
    handle = applier.start_applier(context)
    try:
        deadline = start + time_limit
        done = False
        while not done and not exited.is_set() and time.perf_counter() < deadline:
            done = executed.wait_for(target, POLL)
        seconds = time.perf_counter() - start
        cpu_seconds = time.process_time() - cpu_start
        if isinstance(handle, CsaChannel):
            mean_ready = handle.scheduler.statistics().mean_ready
    finally:
        handle.stop()
        relay_logs.close_all()
    if isinstance(handle, CsaChannel):  # final once its threads are joined
        scheduling_us = handle.scheduling_ns() / 1000
    if not done:
        error = (
            f"channel stopped before the last GTID: {exits[-1]}"
            if exits
            else f"the last GTID was not executed within {time_limit:.0f} s "
            f"(executed: {executed.snapshot().format()})"
        )
    elif exits:
        error = f"channel stopped: {exits[-1]}"
    error = error or _content_error(engine, backlog.content)
    stats = engine.stats()
    shutil.rmtree(data_dir, ignore_errors=True)
    return Run(latency, workers, commit_order, backlog.transactions, seconds, cpu_seconds,
               stats.commits, stats.flushes, mean_ready, error, applier_kind,
               workload, scheduling_us)  # fmt: skip


@contextmanager
def tasks_in_the_service_thread() -> Iterator[None]:
    """While active, a task the CSA's service thread hands to its pool runs at once in that
    thread, as worker 1: one thread does everything, with no hand-over between threads.
    Only for one worker with commit order off (no task then waits for another)."""
    submit, current = ThreadPool.submit, WorkerBoard.current

    def run_here(pool: ThreadPool, fn: Callable[[], object]) -> None:
        if threading.current_thread().name.endswith("-csa"):
            fn()
        else:
            submit(pool, fn)

    def worker_one(board: WorkerBoard) -> int:
        return 1 if threading.current_thread().name.endswith("-csa") else current(board)

    with (
        patch.object(ThreadPool, "submit", run_here),
        patch.object(WorkerBoard, "current", worker_one),
    ):
        yield


def run_csa_in_one_thread(backlog: Backlog, work_dir: Path, time_limit: float) -> Run:
    """The CSA with 1 worker, commit order off and no commit latency, its tasks run by the
    service thread (``tasks_in_the_service_thread``): the CSA's own Python work per
    transaction, without the cost of handing transactions between threads."""
    with tasks_in_the_service_thread():
        run = run_csa(backlog, 0.0, 1, False, work_dir, time_limit)
    # Its enqueue ran the jobs too: no scheduling figure.
    return replace(run, applier=IN_ONE_THREAD, scheduling_us=None)


# -- reports ---------------------------------------------------------------------------------
def _ratio(run: Run, serial: Run) -> float:
    return serial.seconds / run.seconds


def _show(run: Run, serial: Run) -> None:
    ready = "" if run.mean_ready is None else f"  ready at once {run.mean_ready:>5.2f}"
    scheduling = "" if run.scheduling_us is None else f"  scheduling {run.scheduling_us:>5.1f} µs"
    print(f"  {run.label:<44} {run.seconds:>8.2f} s {run.per_second:>8,.0f} trx/s  "
          f"{_ratio(run, serial):>5.2f}x serial  cpu {run.cpu_us:>6.1f} µs/trx  "
          f"commits/flush {run.commits_per_flush:>5.2f}{ready}{scheduling}")  # fmt: skip
    if run.error is not None:
        print(f"    ERROR: {run.error}")


def _latency_name(latency: float) -> str:
    return "0 (pure CPU)" if latency == 0 else f"{latency * 1000:g} ms/flush"


def summary(runs: Sequence[Run], workload: str | None = None) -> None:
    """One workload's runs as a markdown table (all of ``runs`` when ``workload`` is None)."""
    title = "summary (markdown)" if workload is None else f"summary (markdown), workload {workload}"
    runs = [run for run in runs if workload is None or run.workload == workload]
    print(f"\n{title}")
    print("| commit latency | applier | seconds | transactions/s | × serial | "
          "CPU µs/trx | ready at once | commits/flush | scheduling µs/trx |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    serial = {run.latency: run for run in runs if run.commit_order is None}
    for run in runs:
        ready = "—" if run.mean_ready is None else f"{run.mean_ready:.2f}"
        scheduling = "—" if run.scheduling_us is None else f"{run.scheduling_us:.1f}"
        print(f"| {_latency_name(run.latency)} | {run.label} | {run.seconds:.2f} | "
              f"{run.per_second:,.0f} | {_ratio(run, serial[run.latency]):.2f} | "
              f"{run.cpu_us:.0f} | {ready} | {run.commits_per_flush:.2f} | "
              f"{scheduling} |")  # fmt: skip


def comparison(runs: Sequence[Run]) -> None:
    """Every applier configuration (rows) on every workload and commit latency (columns):
    transactions/s and, in brackets, the ratio to the serial applier on the same relay logs."""
    columns = list(dict.fromkeys((run.workload, run.latency) for run in runs))
    labels = list(dict.fromkeys(run.label for run in runs))
    serial = {(run.workload, run.latency): run for run in runs if run.commit_order is None}
    by_key = {(run.label, run.workload, run.latency): run for run in runs}
    print("\ncomparison (markdown): transactions/s (× serial), same relay logs per workload")
    heads = [f"{workload}, {_latency_name(latency)}" for workload, latency in columns]
    print("| applier | " + " | ".join(heads) + " |")
    print("|---|" + "---|" * len(columns))
    for label in labels:
        cells = []
        for workload, latency in columns:
            run = by_key.get((label, workload, latency))
            if run is None:
                cells.append("—")
                continue
            failed = " FAILED" if run.error is not None else ""
            cells.append(f"{run.per_second:,.0f} "
                         f"({_ratio(run, serial[workload, latency]):.2f}){failed}")  # fmt: skip
        print(f"| {label} | " + " | ".join(cells) + " |")


def _find(runs: Sequence[Run], latency: float, workers: int, commit_order: bool | None) -> Run:
    """The serial run (``commit_order`` None) or the CSA run of ``runs`` at ``latency``."""
    return next(
        r for r in runs
        if r.latency == latency and r.workers == workers and r.commit_order is commit_order
        and r.applier in ("serial", "csa")
    )  # fmt: skip


def write_json(path: Path, runs: Sequence[Run], dependency: str, databases: int) -> None:
    """Every run as JSON, with its ratio to the serial applier of its workload and latency."""
    serial = {(run.workload, run.latency): run for run in runs if run.commit_order is None}
    figures = {
        "benchmark": "drain",
        "machine": machine_line(),
        "when": datetime.now().isoformat(timespec="seconds"),
        "dependency": dependency,
        "databases": databases,
        "runs": [
            {
                **{f.name: getattr(run, f.name) for f in fields(run)},
                "label": run.label,
                "per_second": run.per_second,
                "cpu_us": run.cpu_us,
                "ratio": _ratio(run, serial[run.workload, run.latency]),
            }
            for run in runs
        ],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(figures, indent=1) + "\n")


def targets(
    runs: Sequence[Run],
    latencies: Sequence[float],
    workers: Sequence[int],
    in_one_thread: Run | None = None,
) -> None:
    """The overhead per transaction, and whether the targets are met (CSA runs of one
    workload); with ``in_one_thread``, the overhead split into the CSA's own work and the
    hand-over between its threads."""
    if not any(run.applier == "csa" for run in runs):
        print("targets: not measured (the CSA did not run)")
        return
    measured = [run for run in runs if run.scheduling_us is not None]
    worst_run = max(measured, key=lambda run: run.scheduling_us or 0.0)
    worst = worst_run.scheduling_us or 0.0
    verdict = "met" if worst < TARGET_US_PER_TRANSACTION else "NOT met"
    print(f"scheduler's overhead per transaction (dispatch, enqueue and the work around each "
          f"job, waits apart): {min(r.scheduling_us or 0.0 for r in measured):.1f}-{worst:.1f} "
          f"µs over {len(measured)} CSA runs, the most with {worst_run.label} at "
          f"{_latency_name(worst_run.latency)}; target < {TARGET_US_PER_TRANSACTION:.0f} µs: "
          f"{verdict}")  # fmt: skip
    if 1 in workers and 0.0 in latencies:
        serial = _find(runs, 0.0, 0, None)
        overheads = []
        for commit_order in (True, False):
            one = _find(runs, 0.0, 1, commit_order)
            overheads.append((one.seconds - serial.seconds) / one.transactions * 1e6)
        print(f"the CSA's cost over the serial applier (CSA with 1 worker - serial, no commit "
              f"latency): commit order on {overheads[0]:.1f} µs, off {overheads[1]:.1f} µs "
              f"per transaction")  # fmt: skip
        if in_one_thread is not None and in_one_thread.error is None:
            off = _find(runs, 0.0, 1, False)
            own = (in_one_thread.seconds - serial.seconds) / off.transactions * 1e6
            handing = (off.seconds - in_one_thread.seconds) / off.transactions * 1e6
            print(f"  of which, commit order off: the CSA's own work {own:.1f} µs (its tasks "
                  f"run by the service thread), handing transactions between its two threads "
                  f"{handing:.1f} µs (see bench_handoff.py for this machine's floor)")  # fmt: skip
    else:
        print("the CSA's cost over the serial applier: not measured (needs 1 worker and no "
              "commit latency)")  # fmt: skip
    if TARGET_WORKERS not in workers:
        print(f"target (CSA with {TARGET_WORKERS} workers never slower than serial): not measured")
        return
    for latency in latencies:
        serial = _find(runs, latency, 0, None)
        ratios = [_ratio(_find(runs, latency, TARGET_WORKERS, co), serial) for co in (True, False)]
        verdict = "met" if min(ratios) >= 1.0 else "NOT met"
        applies = "the target" if latency > 0 else "for information (the target is with latency)"
        print(f"CSA with {TARGET_WORKERS} workers vs serial, commit latency "
              f"{_latency_name(latency)}: commit order on {ratios[0]:.2f}x, off {ratios[1]:.2f}x "
              f"-> never slower: {verdict} ({applies})")  # fmt: skip


# -- main ------------------------------------------------------------------------------------
def _names(allowed: Sequence[str]) -> Any:
    """An argparse type: a comma-separated subset of ``allowed``, in ``allowed``'s order."""

    def parse(text: str) -> tuple[str, ...]:
        names = {part.strip() for part in text.split(",") if part.strip()}
        unknown = names - set(allowed)
        if not names or unknown:
            raise argparse.ArgumentTypeError(
                f"expected a comma-separated subset of {','.join(allowed)}: {text!r}"
            )
        return tuple(name for name in allowed if name in names)

    return parse


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; 1 when a run fails or does not end in the generated content."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--transactions",
        type=int,
        default=None,
        help=f"workload transactions (default {DEFAULT_TRANSACTIONS}, "
        f"{QUICK_TRANSACTIONS} with --quick)",
    )
    parser.add_argument(
        "--workers",
        type=worker_counts,
        default=None,
        help="comma-separated worker counts (default 1,2,4,8; 1,4 with --quick)",
    )
    parser.add_argument(
        "--dependency",
        choices=[Dependency.WRITESET.value, Dependency.COMMIT_ORDER.value],
        default=Dependency.WRITESET.value,
        help="the source's dependency tracking (default writeset)",
    )
    parser.add_argument(
        "--conflict-share",
        type=float,
        default=0.0,
        help="share of row picks among each table's 10 hot rows (default 0: uniform picks)",
    )
    parser.add_argument(
        "--commit-latency",
        type=float,
        default=DEFAULT_COMMIT_LATENCY,
        help=f"seconds per flush of the durable runs (default {DEFAULT_COMMIT_LATENCY})",
    )
    parser.add_argument(
        "--appliers",
        type=_names(APPLIERS),
        default=APPLIERS,
        help="comma-separated appliers to run, of serial,mta,mta-database,csa (default all; "
        "the serial one always runs: the ratios need it; mta is LOGICAL_CLOCK, mta-database "
        "DATABASE with commit order off)",
    )
    parser.add_argument(
        "--workloads",
        type=_names(WORKLOADS),
        default=WORKLOADS,
        help="comma-separated workloads, of uniform,skewed (default both; skewed: one "
        f"transaction in {round(1 / SKEWED_LARGE_SHARE)} inserts {SKEWED_LARGE_SIZE} rows)",
    )
    parser.add_argument(
        "--databases",
        type=int,
        default=DEFAULT_DATABASES,
        help=f"databases the {TABLES} tables are spread over, each transaction in one "
        f"(default {DEFAULT_DATABASES}; 1: all in one database)",
    )
    parser.add_argument(
        "--dir",
        default=None,
        help="cache directory for the generated backlog (default: a temporary one)",
    )
    parser.add_argument("--json", type=Path, help="write every run here")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for smoke tests")
    args = parser.parse_args(argv)
    quick = bool(args.quick)
    transactions = (
        args.transactions
        if args.transactions is not None
        else QUICK_TRANSACTIONS
        if quick
        else DEFAULT_TRANSACTIONS
    )
    workers: tuple[int, ...] = (
        args.workers if args.workers is not None else QUICK_WORKERS if quick else DEFAULT_WORKERS
    )
    if transactions < 1 or args.commit_latency <= 0 or not 0 <= args.conflict_share <= 1:
        parser.error("--transactions must be at least 1, --commit-latency above 0, "
                     "--conflict-share within 0..1")  # fmt: skip
    if not 1 <= args.databases <= TABLES:
        parser.error(f"--databases must be within 1..{TABLES} (the number of tables)")
    databases: int = args.databases
    appliers: tuple[str, ...] = args.appliers
    workloads: tuple[str, ...] = args.workloads
    parallel = [kind for kind in PARALLEL_TYPES if kind in appliers]

    print(f"{machine_line()}; load average {load_average()}")
    print(f"appliers: {', '.join(('serial', *parallel))}; workloads: {', '.join(workloads)}; "
          f"databases: {databases}")  # fmt: skip
    latencies = (0.0, float(args.commit_latency))
    runs: list[Run] = []
    in_one: Run | None = None  # the CSA in one thread, on the first workload
    with cache_root(args.dir, "bench-applier-") as root:
        for workload in workloads:
            spec = plan_spec(transactions, Dependency(args.dependency), args.conflict_share,
                             workload, databases)  # fmt: skip
            if len(workloads) > 1:
                print(f"\nworkload {workload}")
            backlog = prepare(spec, root)
            describe(backlog)
            with tempfile.TemporaryDirectory(prefix="bench-applier-run-") as work:
                for latency in latencies:
                    print(f"commit latency {_latency_name(latency)}")
                    serial = run_serial(backlog, latency, workload)
                    runs.append(serial)
                    _show(serial, serial)
                    # A parallel run that takes 20 times the serial one is taken as hung.
                    time_limit = max(120.0, 20 * serial.seconds)
                    for kind in parallel:
                        for commit_order in COMMIT_ORDERS[kind]:
                            for count in workers:
                                run = run_csa(backlog, latency, count, commit_order, Path(work),
                                              time_limit, kind, workload)  # fmt: skip
                                runs.append(run)
                                _show(run, serial)
                    if latency == 0 and "csa" in parallel and 1 in workers and in_one is None:
                        in_one = run_csa_in_one_thread(backlog, Path(work), time_limit)
                        print(f"  {in_one.label:<44} "
                              f"{in_one.seconds:>8.2f} s {in_one.per_second:>8,.0f} trx/s  "
                              f"(its tasks run by the service thread)")  # fmt: skip
                        if in_one.error is not None:
                            print(f"    ERROR: {in_one.error}")
            del backlog
    for workload in workloads:
        summary(runs, workload if len(workloads) > 1 else None)
    comparison(runs)
    print(f"load average at the end: {load_average()} (other processes share the CPUs)")
    targets([run for run in runs if run.workload == workloads[0]], latencies, workers, in_one)
    if args.json is not None:
        write_json(args.json, runs, args.dependency, databases)
    failed = [run for run in (*runs, *([in_one] if in_one else [])) if run.error is not None]
    if failed:
        print(f"content: {len(failed)} run(s) FAILED: " + ", ".join(
            f"{run.label} at {_latency_name(run.latency)}"
            + (f" ({run.workload})" if len(workloads) > 1 else "")
            for run in failed))  # fmt: skip
    else:
        print("content: every run ends in the generated content")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
