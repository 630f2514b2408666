"""Steady-state replication lag below and above the replica's capacity.

The whole product, each part its own process as in ``make demo``: the built-in binlog source
(``spark-replica source --generate N --rate TPS``) and the replica server (``spark-replica
serve``, the Spark engine by default), replicating over a CSA channel configured over SQL.

The source encodes its whole workload before it writes (``--prepare``): each write then
only stamps the commit time, so the source keeps its rate while it shares the machine with
the replica.

1. **Capacity.** The source first writes a backlog of ``--transactions`` transactions (the
   sysbench oltp_write_only shape of the other benchmarks), then the replica drains it. The
   capacity is its steady rate: transactions applied per second from the moment the setup
   and the first tenth of the workload are applied until the last GTID is executed (the
   whole drain, from START REPLICA, is printed too: it includes Spark's slow first writes and
   the setup's DDL, and understates what the replica keeps up with).
2. **Lag.** For each share of that capacity (``--loads``, default 50 %, 90 % and 110 %), a
   fresh source writes at that fixed rate for ``--duration`` seconds while a fresh replica
   follows it. Every ``--interval`` seconds the script samples, over SQL:
   - the backlog: transactions the source has written (its ``gtid_executed``) and the replica
     has not executed;
   - the lag in seconds: the time since the original commit of the oldest transaction the
     replica has not executed, which is the last one it executed
     (``MAX(LAST_APPLIED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP)`` of
     ``performance_schema.replication_applier_status_by_worker``) plus one source interval;
     0 when nothing is waiting. The source stamps each commit with the time it writes it.

Below capacity the lag should stay flat (the pipeline's fixed part); above it, the backlog
grows by about (rate − capacity) transactions per second.

Usage (from the repository root)::

    .venv/bin/python tests/bench/bench_lag.py [--transactions 20000] [--duration 60]
        [--loads 0.5,0.9,1.1] [--workers 4] [--engine spark|memory] [--json PATH] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[2]
for _path in (_REPO / "src", _REPO):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import pymysql  # noqa: E402
from tests.bench.benchkit import load_average, machine_line  # noqa: E402

from spark_replica.tools.demo import Child, executed_count, start_replication  # noqa: E402
from spark_replica.tools.generator.simulate import (  # noqa: E402
    WorkloadSpec,
    simulate,
)

CHANNEL = "lag"
REPL_USER = "repl"
LAST_APPLIED = (
    "SELECT MAX(LAST_APPLIED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP) FROM "
    f"performance_schema.replication_applier_status_by_worker WHERE CHANNEL_NAME = '{CHANNEL}'"
)


@dataclass
class Sample:
    seconds: float  #: since START REPLICA
    written: int
    applied: int
    lag_seconds: float

    @property
    def backlog(self) -> int:
        return self.written - self.applied


@dataclass
class LagRun:
    load: float  #: share of the capacity
    rate: float  #: source transactions/s
    samples: list[Sample] = field(default_factory=list)

    def steady(self) -> list[Sample]:
        """The samples of the run's second half, once the start-up has passed."""
        return self.samples[len(self.samples) // 2 :]

    def summary(self) -> dict[str, float]:
        steady = self.steady() or self.samples
        first, last = steady[0], steady[-1]
        span = max(last.seconds - first.seconds, 1e-9)
        lags = sorted(s.lag_seconds for s in steady)
        return {
            "load": self.load,
            "rate": self.rate,
            "written_per_second": (last.written - first.written) / span,
            "applied_per_second": (last.applied - first.applied) / span,
            "backlog_growth_per_second": (last.backlog - first.backlog) / span,
            "lag_median_seconds": lags[len(lags) // 2],
            "lag_max_seconds": lags[-1],
            "final_backlog": float(self.samples[-1].backlog),
            "final_lag_seconds": self.samples[-1].lag_seconds,
        }


class Pair:
    """A replica server process and a source process writing ``transactions`` at ``rate``
    (once started), in ``root``; ``source_db``/``replica_db`` are connections to them.
    ``close`` stops whatever was started."""

    def __init__(self, root: Path, engine: str) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self._root, self._engine = root, engine
        self.password = secrets.token_hex(8)
        self._repl_password = secrets.token_hex(8)
        self._children: list[Child] = []
        self._connections: list[Any] = []

    def start(self, transactions: int, rate: float) -> None:
        root, engine = self._root, self._engine
        env = {**os.environ, "SPARK_REPLICA_ROOT_PASSWORD": self.password}
        # The replica first: the source writes from the moment it starts.
        self.replica = self._start(Child("the replica server", [
            "serve", "--data-dir", str(root / "replica"), "--port", "0", "--bind", "127.0.0.1",
            "--engine", engine,
        ], root / "replica.log", env))  # fmt: skip
        self.source = self._start(Child("the binlog source", [
            "source", "--data-dir", str(root / "source"), "--port", "0", "--user", REPL_USER,
            "--password", self._repl_password, "--auth", "mysql_native_password",
            "--generate", str(transactions), "--rate", str(rate), "--prepare",
        ], root / "source.log", env))  # fmt: skip
        self.source_db = pymysql.connect(host="127.0.0.1", port=self.source.port,
                                         user=REPL_USER, password=self._repl_password)  # fmt: skip
        self._connections.append(self.source_db)
        self.replica_db = pymysql.connect(host="127.0.0.1", port=self.replica.port, user="root",
                                          password=self.password, autocommit=True)  # fmt: skip
        self._connections.append(self.replica_db)

    def _start(self, child: Child) -> Child:
        self._children.append(child)
        return child

    def start_replication(self, workers: int) -> None:
        start_replication(self.replica_db, self.source.port, self._repl_password, workers,
                          CHANNEL)  # fmt: skip

    def written(self) -> int:
        with self.source_db.cursor() as cursor:
            return executed_count(cursor)

    def applied(self) -> tuple[int, float | None]:
        """Transactions executed, and the original commit time (epoch seconds) of the last."""
        with self.replica_db.cursor() as cursor:
            count = executed_count(cursor)
            cursor.execute(LAST_APPLIED)
            (last,) = cursor.fetchone()
        return count, _epoch(last)

    def sql_error(self) -> str:
        with self.replica_db.cursor(pymysql.cursors.DictCursor) as cursor:
            cursor.execute(f"SHOW REPLICA STATUS FOR CHANNEL '{CHANNEL}'")
            status: dict[str, Any] = cursor.fetchone()
        return "; ".join(str(status[k]) for k in ("Last_IO_Error", "Last_SQL_Error") if status[k])

    def close(self) -> None:
        for connection in self._connections:
            connection.close()
        for child in reversed(self._children):
            child.stop()


def _epoch(value: object) -> float | None:
    if isinstance(value, datetime):
        return value.timestamp() if value.year > 1970 else None
    if isinstance(value, str) and value and not value.startswith("0000"):
        return datetime.fromisoformat(value).timestamp()
    return None


@contextmanager
def pair(root: Path, transactions: int, rate: float, engine: str) -> Iterator[Pair]:
    started = Pair(root, engine)
    try:
        started.start(transactions, rate)
        yield started
    finally:
        started.close()


def _wait(condition: Any, seconds: float, what: str, on: Pair) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} not reached in {seconds:.0f} s: {on.sql_error()}")
        time.sleep(0.05)


@dataclass(frozen=True)
class Capacity:
    """The drain of the backlog: over all of it, and at its steady rate."""

    transactions: int
    seconds: float
    #: Transactions/s past the setup and the first ``WARM_UP`` of the workload: the rate
    #: the replica keeps once Spark's first writes and the setup's DDL are behind it.
    steady_per_second: float

    @property
    def per_second(self) -> float:
        return self.transactions / self.seconds


#: The share of the workload a drain applies before its steady rate is measured.
WARM_UP = 0.1


def measure_capacity(root: Path, transactions: int, workers: int, engine: str) -> Capacity:
    """Transactions/s the replica applies when draining a backlog written beforehand."""
    # The source writes the setup (CREATE TABLEs, the load) and then the workload.
    spec = WorkloadSpec(tables=8, rows_per_table=1000, transactions=transactions)  # the CLI's
    total = len(simulate(spec)[0])
    warm = total - transactions + int(transactions * WARM_UP)
    with pair(root, transactions, 0.0, engine) as p:
        _wait(lambda: p.written() >= total, 600, "the source's backlog", p)
        started = time.monotonic()
        p.start_replication(workers)
        mark: list[tuple[float, int]] = []  # (when, applied) once past the warm-up

        def drained() -> bool:
            applied = p.applied()[0]
            if not mark and applied >= warm:
                mark.append((time.monotonic(), applied))
            return applied >= total

        _wait(drained, 3600, "the drain", p)
        ended = time.monotonic()
    (warm_at, warm_applied), seconds = mark[0], ended - started
    steady = (total - warm_applied) / max(ended - warm_at, 1e-9)
    capacity = Capacity(total, seconds, steady)
    print(f"capacity: {total:,} transactions drained in {seconds:.1f} s: "
          f"{capacity.per_second:,.0f} transactions/s; past the first {WARM_UP:.0%} of the "
          f"workload {steady:,.0f} transactions/s (the capacity the loads are shares of)",
          flush=True)  # fmt: skip
    return capacity


def measure_lag(root: Path, load: float, capacity: float, args: argparse.Namespace) -> LagRun:
    rate = load * capacity
    # Enough transactions that the source never runs dry within the duration (it encodes
    # them all before it writes the first: --prepare).
    transactions = int(rate * (args.duration + 30)) + 1000
    run = LagRun(load, rate)
    with pair(root, transactions, rate, args.engine) as p:
        p.start_replication(args.workers)
        _wait(lambda: p.written() > 0, 600, "the source's first transaction", p)
        started = time.monotonic()
        next_sample = started
        while (now := time.monotonic()) - started < args.duration:
            if now < next_sample:
                time.sleep(next_sample - now)
            next_sample += args.interval
            written = p.written()
            applied, last_commit = p.applied()
            waiting = written > applied
            lag = max(0.0, time.time() - last_commit - 1 / rate) if waiting and last_commit else 0.0
            run.samples.append(Sample(time.monotonic() - started, written, applied, lag))
        error = p.sql_error()
    if error:
        raise RuntimeError(f"replication failed at {load:.0%}: {error}")
    s = run.summary()
    print(f"load {load:.0%} ({rate:,.0f}/s): written {s['written_per_second']:,.0f}/s, applied "
          f"{s['applied_per_second']:,.0f}/s, backlog growth {s['backlog_growth_per_second']:+,.1f}"
          f"/s, lag median {s['lag_median_seconds']:.2f} s, max {s['lag_max_seconds']:.2f} s, "
          f"final backlog {s['final_backlog']:,.0f}", flush=True)  # fmt: skip
    return run


def _loads(text: str) -> tuple[float, ...]:
    try:
        loads = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of loads: {text!r}") from None
    if not loads or min(loads) <= 0:
        raise argparse.ArgumentTypeError("loads must be above 0")
    return loads


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transactions", type=int, help="capacity backlog (default 20000)")
    parser.add_argument("--duration", type=float, help="seconds per load (default 60)")
    parser.add_argument("--interval", type=float, help="seconds between samples (default 0.5)")
    parser.add_argument("--loads", type=_loads, default=(0.5, 0.9, 1.1))
    parser.add_argument("--workers", type=int, default=4, help="APPLIER_WORKER_COUNT")
    parser.add_argument("--engine", choices=("spark", "memory"), default="spark")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for smoke tests")
    args = parser.parse_args(argv)
    sizes = (3000, 4.0, 0.25) if args.quick else (20_000, 60.0, 0.5)
    for name, default in zip(("transactions", "duration", "interval"), sizes, strict=True):
        if getattr(args, name) is None:
            setattr(args, name, default)
    print(f"{machine_line()}; load average {load_average()}", flush=True)
    print(f"engine {args.engine}, {args.workers} workers, {args.duration:g} s per load",
          flush=True)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-lag-") as tmp:
        root = Path(tmp)
        capacity = measure_capacity(root / "capacity", args.transactions, args.workers,
                                    args.engine)  # fmt: skip
        runs = [measure_lag(root / f"load-{load:g}", load, capacity.steady_per_second, args)
                for load in args.loads]  # fmt: skip
    if args.json:
        figures = {
            "benchmark": "lag",
            "machine": machine_line(),
            "when": datetime.now().isoformat(timespec="seconds"),
            "engine": args.engine,
            "workers": args.workers,
            "capacity_transactions": args.transactions,
            "capacity_per_second": capacity.steady_per_second,
            "drain_per_second": capacity.per_second,
            "drain_seconds": capacity.seconds,
            "runs": [
                {**run.summary(), "samples": [asdict(s) for s in run.samples]} for run in runs
            ],  # fmt: skip
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
