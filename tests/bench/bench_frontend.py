"""Front-end latency and concurrency benchmark for the replica's MySQL protocol layer.

Measures, over loopback with pymysql, the statements a DBA or a monitoring agent sends most
often, and compares each with a bare mysql-mimic server (a session that answers every query
with one fixed row) started in the same process and measured in the same run. Then runs many
concurrent connections mixing SHOW REPLICA STATUS and a performance_schema SELECT.

Usage (from the repository root)::

    .venv/bin/python tests/bench/bench_frontend.py [--iterations 1000]
    .venv/bin/python tests/bench/bench_frontend.py --host 127.0.0.1 --port 3307 --password ...

Without --port the replica is started in-process in a temporary data directory. The exit code
is non-zero if any statement of the concurrency run failed.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pymysql
from mysql_mimic import MysqlServer, Session
from mysql_mimic.results import AllowedResult

_REPO = Path(__file__).resolve().parents[2]
if str(_REPO) not in sys.path:
    sys.path.insert(0, str(_REPO))

from tests.bench.benchkit import machine_line  # noqa: E402
from tests.helpers.server import ROOT_PASSWORD  # noqa: E402

from spark_replica.server.app import BackgroundServer, ReplicaServer  # noqa: E402
from spark_replica.server.config import ServerConfig  # noqa: E402

CHANNELS = ("c1", "c2", "c3", "c4")
P_S_SELECT = "SELECT * FROM performance_schema.replication_applier_configuration"
STATEMENTS: tuple[tuple[str, str], ...] = (
    ("SHOW REPLICA STATUS", "SHOW REPLICA STATUS"),
    ("P_S SELECT *", P_S_SELECT),
    (
        "P_S SELECT cols WHERE",
        "SELECT CHANNEL_NAME, APPLIER_VERSION FROM "
        "performance_schema.replication_applier_configuration WHERE CHANNEL_NAME='c1'",
    ),
    ("SELECT 1", "SELECT 1"),
    (
        "CHANGE REPLICATION SOURCE",
        "CHANGE REPLICATION SOURCE TO SOURCE_CONNECT_RETRY=30 FOR CHANNEL 'c1'",
    ),
)
CONCURRENT_MIX = ("SHOW REPLICA STATUS", P_S_SELECT)
JOIN_TIMEOUT = 600.0


# -- servers ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Endpoint:
    host: str
    port: int
    user: str
    password: str
    autocommit: bool = True

    def connect(self) -> Any:
        return pymysql.connect(
            host=self.host,
            port=self.port,
            user=self.user,
            password=self.password,
            autocommit=self.autocommit,
        )


class FixedSession(Session):
    """Answers any statement with one small fixed row: the cost of mysql-mimic's protocol
    handling alone, with no parsing. SET (what clients send while connecting) gets an OK."""

    async def handle_query(self, sql: str, attrs: dict[str, str]) -> AllowedResult:
        if sql.lstrip()[:4].upper() == "SET ":
            return None
        return FIXED_RESULT


FIXED_RESULT: AllowedResult = ([(1, "c1")], ["value", "name"])


class BaselineServer:
    """A bare mysql-mimic server on loopback (run it with ``BackgroundServer``)."""

    def __init__(self) -> None:
        self._server = MysqlServer(session_factory=FixedSession)

    async def start(self) -> None:
        await self._server.start_server(host="127.0.0.1", port=0)

    async def close(self) -> None:
        self._server.close()
        await self._server.wait_closed()

    @property
    def port(self) -> int:
        return int(self._server.sockets()[0].getsockname()[1])


@contextmanager
def in_process_replica() -> Iterator[int]:
    """A replica in a temporary data directory; yields its port."""
    with tempfile.TemporaryDirectory(prefix="bench-frontend-") as tmp:
        config = ServerConfig(
            bind="127.0.0.1", port=0, data_dir=Path(tmp) / "data", root_password=ROOT_PASSWORD
        )
        with BackgroundServer(ReplicaServer(config, announce=lambda _: None)) as background:
            yield background.port


def configure_channels(endpoint: Endpoint) -> None:
    conn = endpoint.connect()
    try:
        with conn.cursor() as cur:
            for number, channel in enumerate(CHANNELS, start=1):
                cur.execute(
                    f"CHANGE REPLICATION SOURCE TO SOURCE_HOST='source-{number}.example', "
                    "SOURCE_PORT=3306, SOURCE_USER='repl', SOURCE_AUTO_POSITION=1, "
                    f"REQUIRE_ROW_FORMAT=1 FOR CHANNEL '{channel}'"
                )
            cur.execute("SHOW REPLICA STATUS")
            rows = cur.fetchall()
            index = [d[0] for d in cur.description].index("Channel_Name")
            missing = set(CHANNELS) - {row[index] for row in rows}
            if missing:
                raise RuntimeError(f"channels not configured: {sorted(missing)}")
    finally:
        conn.close()


# -- measurement -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Figures:
    median: float
    p99: float
    mean: float

    @classmethod
    def of(cls, samples_ms: Sequence[float]) -> Figures:
        ordered = sorted(samples_ms)
        rank = max(1, math.ceil(0.99 * len(ordered)))
        return cls(statistics.median(ordered), ordered[rank - 1], statistics.fmean(ordered))


def time_statement(cur: Any, sql: str, iterations: int) -> list[float]:
    """Latency in milliseconds of ``iterations`` round trips (result fully read)."""
    for _ in range(min(iterations, 20)):
        cur.execute(sql)
        cur.fetchall()
    samples: list[float] = []
    clock = time.perf_counter_ns
    for _ in range(iterations):
        start = clock()
        cur.execute(sql)
        cur.fetchall()
        samples.append((clock() - start) / 1e6)
    return samples


def measure(endpoint: Endpoint, iterations: int) -> dict[str, Figures]:
    conn = endpoint.connect()
    try:
        with conn.cursor() as cur:
            return {
                label: Figures.of(time_statement(cur, sql, iterations)) for label, sql in STATEMENTS
            }
    finally:
        conn.close()


@dataclass(frozen=True, slots=True)
class ConcurrencyResult:
    connections: int
    statements: int
    wall_seconds: float
    errors: int
    latencies_ms: list[float]
    first_error: str | None


def run_concurrency(endpoint: Endpoint, connections: int, statements: int) -> ConcurrencyResult:
    start_line = threading.Barrier(connections + 1, timeout=JOIN_TIMEOUT)
    lock = threading.Lock()
    latencies: list[float] = []
    errors: list[str] = []

    def client(number: int) -> None:
        local: list[float] = []
        failures: list[str] = []
        conn = None
        try:
            conn = endpoint.connect()
        except Exception as e:
            failures.extend([f"connect: {e!r}"] * statements)
        try:
            start_line.wait()
        except threading.BrokenBarrierError as e:
            failures.append(f"start: {e!r}")
        if conn is not None:
            try:
                with conn.cursor() as cur:
                    clock = time.perf_counter_ns
                    for i in range(statements):
                        sql = CONCURRENT_MIX[(number + i) % len(CONCURRENT_MIX)]
                        start = clock()
                        try:
                            cur.execute(sql)
                            cur.fetchall()
                        except pymysql.MySQLError as e:
                            failures.append(f"{sql}: {e!r}")
                            continue
                        local.append((clock() - start) / 1e6)
            finally:
                conn.close()
        with lock:
            latencies.extend(local)
            errors.extend(failures)

    threads = [
        threading.Thread(target=client, args=(n,), name=f"bench-client-{n}")
        for n in range(connections)
    ]
    for thread in threads:
        thread.start()
    began = time.perf_counter()
    try:
        start_line.wait()
        began = time.perf_counter()
    except threading.BrokenBarrierError:
        errors.append("start line broken")
    for thread in threads:
        thread.join(JOIN_TIMEOUT)
    wall = time.perf_counter() - began
    alive = [t.name for t in threads if t.is_alive()]
    if alive:
        errors.append(f"clients still running: {alive}")
    return ConcurrencyResult(
        connections, statements, wall, len(errors), latencies, errors[0] if errors else None
    )


# -- report ----------------------------------------------------------------------------------
def cpu_count() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def latency_table(ours: dict[str, Figures], baseline: dict[str, Figures]) -> str:
    header = (
        f"{'statement':<27}{'median':>9}{'p99':>9}{'mean':>9}"
        f" |{'base med':>9}{'base p99':>9}{'base mean':>10} |{'ratio':>7}"
    )
    lines = [header, "-" * len(header)]
    for label, mine in ours.items():
        base = baseline[label]
        ratio = mine.median / base.median if base.median else float("nan")
        lines.append(
            f"{label:<27}{mine.median:>9.3f}{mine.p99:>9.3f}{mine.mean:>9.3f}"
            f" |{base.median:>9.3f}{base.p99:>9.3f}{base.mean:>10.3f} |{ratio:>6.1f}x"
        )
    return "\n".join(lines)


def concurrency_report(result: ConcurrencyResult) -> str:
    total = result.connections * result.statements
    rate = total / result.wall_seconds if result.wall_seconds > 0 else float("inf")
    figures = Figures.of(result.latencies_ms) if result.latencies_ms else None
    lines = [
        f"concurrency: {result.connections} connections x {result.statements} statements "
        f"(SHOW REPLICA STATUS / P_S SELECT)",
        f"  wall time     {result.wall_seconds:.3f} s",
        f"  throughput    {rate:.0f} statements/s",
        f"  errors        {result.errors}",
    ]
    if figures is not None:
        lines.append(
            f"  latency ms    median {figures.median:.3f}  p99 {figures.p99:.3f}  "
            f"mean {figures.mean:.3f}"
        )
    if result.first_error is not None:
        lines.append(f"  first error   {result.first_error}")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="server address (with --port)")
    parser.add_argument("--port", type=int, default=None, help="benchmark a running server instead")
    parser.add_argument("--user", default="root")
    parser.add_argument("--password", default=ROOT_PASSWORD)
    parser.add_argument("--iterations", type=int, default=1000, help="round trips per statement")
    parser.add_argument("--connections", type=int, default=100, help="concurrent connections")
    parser.add_argument("--statements", type=int, default=100, help="statements per connection")
    parser.add_argument(
        "--no-setup", action="store_true", help="do not run CHANGE REPLICATION SOURCE first"
    )
    args = parser.parse_args(argv)
    for name in ("iterations", "connections", "statements"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    mimic = logging.getLogger("mysql_mimic")
    level = mimic.level
    mimic.setLevel(logging.CRITICAL)  # the clients it drops on purpose are not news
    print(machine_line())
    with ExitStack() as stack:
        stack.callback(mimic.setLevel, level)
        if args.port is None:
            port = stack.enter_context(in_process_replica())
            where = f"in-process replica on 127.0.0.1:{port}"
            ours = Endpoint("127.0.0.1", port, "root", ROOT_PASSWORD)
        else:
            where = f"replica at {args.host}:{args.port}"
            ours = Endpoint(args.host, args.port, args.user, args.password)
        baseline_server = stack.enter_context(
            BackgroundServer(BaselineServer(), name="baseline-server")
        )
        baseline = Endpoint("127.0.0.1", baseline_server.port, "root", "")
        print(f"target: {where}; baseline: bare mysql-mimic on 127.0.0.1:{baseline_server.port}")
        if not args.no_setup:
            configure_channels(ours)
            print(f"configured channels: {', '.join(CHANNELS)}")

        print(f"\nlatency over loopback, {args.iterations} iterations each (milliseconds)")
        our_figures = measure(ours, args.iterations)
        base_figures = measure(baseline, args.iterations)
        print(latency_table(our_figures, base_figures))

        print()
        result = run_concurrency(ours, args.connections, args.statements)
        print(concurrency_report(result))
    if result.errors:
        print(f"FAILED: {result.errors} errors", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
