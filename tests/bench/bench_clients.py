"""Many clients against a replica that applies at full speed: their latencies, and the
applier's rate with and without them.

The built-in binlog source (``spark-replica source --generate N --rate 0``, its own process)
writes a backlog of ``--transactions`` transactions as fast as it can; the replica server
(``spark-replica serve``, Spark engine, its own process) replicates it over a CSA channel with
``--workers`` workers. Once the replicated tables exist, three windows:

1. ``--duration`` seconds without clients;
2. ``--clients`` connections (threads of this process, pymysql) sending the monitoring mix of
   tests/helpers/client_load.py round and round for ``--duration`` seconds: SELECTs over the
   replicated tables (answered by Spark), SELECT * FROM
   performance_schema.replication_applier_status_by_worker, and SHOW REPLICA STATUS. The
   window lasts until the last client has its answer: Spark runs ``spark.max_queries`` (4)
   user queries at a time, and the others queue;
3. ``--duration`` seconds without clients again.

The clients' figures are also given for the statements sent ``--opening`` seconds or more
after the start: the first statements of all clients arrive at once and queue together.

The applier's transactions/s in each window comes from the replica's executed GTIDs read
over SQL; the ratio is the loaded window's rate over the mean of the two others. The clients'
p50, p99 and max latency and statements/s are given by statement kind and overall. If the
backlog runs out before the last window ends, the rates are not the applier's capacity and
the script says so (raise ``--transactions``).

Usage (from the repository root)::

    .venv/bin/python tests/bench/bench_clients.py [--clients 200] [--duration 15]
        [--transactions 200000] [--workers 4] [--json PATH] [--quick]

The exit code is non-zero if any client statement failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[2]
for _path in (_REPO / "src", _REPO):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from tests.bench.benchkit import load_average, machine_line  # noqa: E402
from tests.helpers.builtin_source import REPL_PASSWORD, REPL_USER, SourceProcess  # noqa: E402
from tests.helpers.client_load import (  # noqa: E402
    LoadReport,
    monitoring_mix,
    run_load,
    wait_until_queryable,
)
from tests.helpers.process import server_process  # noqa: E402
from tests.helpers.replica_channel import CHANNEL, change_source_at, executed  # noqa: E402
from tests.helpers.server import connect  # noqa: E402

from spark_replica.tools.generator.simulate import Source, WorkloadSpec  # noqa: E402

TABLES = 4
ROWS_PER_TABLE = 1000
CONFIG = """
[spark.options]
"spark.ui.enabled" = "false"
"""
#: Seconds after the clients start whose statements are also shown apart: every client sends
#: its first statement at once, and they queue together.
OPENING = 5.0
QUICK = {"clients": 10, "duration": 4.0, "transactions": 60_000}
WAIT = 300.0


class Window:
    """The applier's progress over one window: executed GTIDs at its start and end."""

    def __init__(self, name: str, cursor: Any) -> None:
        self.name = name
        self._cursor = cursor
        self.first = executed(cursor).count()
        self.started = time.monotonic()
        self.last = self.first
        self.seconds = 0.0

    def close(self) -> Window:
        self.last = executed(self._cursor).count()
        self.seconds = time.monotonic() - self.started
        return self

    @property
    def per_second(self) -> float:
        return (self.last - self.first) / self.seconds if self.seconds else 0.0


def loaded_window(
    port: int, cursor: Any, clients: int, duration: float, tables: Sequence[str]
) -> tuple[Window, LoadReport]:
    """From the moment all clients are connected until the last has finished: they send new
    statements for ``duration`` seconds, then finish the one they are waiting for (queued
    Spark queries may take much longer)."""
    stop, started = threading.Event(), threading.Event()
    reports: list[LoadReport] = []
    mix = monitoring_mix(tables, ROWS_PER_TABLE)
    loader = threading.Thread(
        target=lambda: reports.append(run_load(port, clients, mix, stop=stop, started=started)),
        name="client-load",
    )
    loader.start()
    try:
        started.wait()
        window = Window("with clients", cursor)
        time.sleep(duration)
    finally:
        stop.set()
        loader.join()
    return window.close(), reports[0]


def idle_window(name: str, cursor: Any, duration: float) -> Window:
    window = Window(name, cursor)
    time.sleep(duration)
    return window.close()


def measure(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    source = SourceProcess(
        root / "source", "--generate", str(args.transactions), "--rate", "0",
        "--tables", str(TABLES), "--rows-per-table", str(ROWS_PER_TABLE), "--seed", "1",
    ).start()  # fmt: skip
    config = root / "replica.toml"
    config.write_text(CONFIG)
    tables = [f"shop.sbtest{n}" for n in range(1, TABLES + 1)]
    try:
        with server_process(root / "replica", config) as server, connect(server.port) as conn:
            with conn.cursor() as cursor:
                cursor.execute(change_source_at(
                    "127.0.0.1", source.port, REPL_USER, REPL_PASSWORD, GET_SOURCE_PUBLIC_KEY=1,
                    SOURCE_CONNECT_RETRY=1, REQUIRE_ROW_FORMAT=1, GTID_ONLY=1,
                    APPLIER_VERSION=2, APPLIER_WORKER_COUNT=args.workers,
                ))  # fmt: skip
                cursor.execute(f"START REPLICA FOR CHANNEL '{CHANNEL}'")
                wait_until_queryable(cursor, tables, WAIT)
                before = idle_window("without clients, before", cursor, args.duration)
                loaded, report = loaded_window(
                    server.port, cursor, args.clients, args.duration, tables
                )
                after = idle_window("without clients, after", cursor, args.duration)
                left = written_in_all(args.transactions) - executed(cursor).count()
                cursor.execute(f"STOP REPLICA FOR CHANNEL '{CHANNEL}'")
            server.stop()
    finally:
        source.stop()
    windows = [before, loaded, after]
    unloaded = (before.per_second + after.per_second) / 2
    return {
        "benchmark": "clients",
        "machine": machine_line(),
        "load_average": load_average(),
        "clients": args.clients,
        "duration_seconds": args.duration,
        "transactions": args.transactions,
        "workers": args.workers,
        "applier": {
            "windows": [
                {
                    "name": w.name,
                    "seconds": w.seconds,
                    "applied": w.last - w.first,
                    "per_second": w.per_second,
                }
                for w in windows
            ],  # fmt: skip
            "with_over_without": loaded.per_second / unloaded if unloaded else 0.0,
            "backlog_left": left,
        },
        "load": report.summary(),
        "opening_seconds": args.opening,
        "load_after_opening": report.summary(after=args.opening),
        "errors": report.errors[:20],
        "_lines": report.lines(),
        "_lines_after_opening": report.lines(after=args.opening),
    }


def written_in_all(transactions: int) -> int:
    """How many transactions the source writes: its setup (CREATE statements and the initial
    load) and the ``transactions`` generated ones."""
    spec = WorkloadSpec(tables=TABLES, rows_per_table=ROWS_PER_TABLE, transactions=transactions)
    return sum(1 for _ in Source(spec).setup()) + transactions


def report_text(figures: dict[str, Any]) -> list[str]:
    applier = figures["applier"]
    lines = [
        figures["machine"],
        f"load average: {figures['load_average']}",
        f"{figures['clients']} clients sending for {figures['duration_seconds']:.0f} s, "
        f"CSA with {figures['workers']} workers into Spark",
        "",
        "client statements (latency from sending to the last row read):",
        *figures["_lines"],
        f"errors: {figures['load']['errors']}",
        "",
        f"of them, sent {figures['opening_seconds']:g} s or more after the start (every "
        "client starts at once: their first statements queue together):",
        *figures["_lines_after_opening"],
        "",
        "applier transactions/s:",
    ]
    for window in applier["windows"]:
        lines.append(f"  {window['name']:<26} {window['per_second']:>8.0f}  "
                     f"({window['applied']} in {window['seconds']:.1f} s)")  # fmt: skip
    lines.append(f"  with clients / without: {applier['with_over_without']:.2f}")
    if applier["backlog_left"] <= 0:
        lines.append("  the backlog ran out during the windows: raise --transactions")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--duration", type=float, default=15.0, help="seconds per window")
    parser.add_argument("--transactions", type=int, default=200_000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--opening", type=float, default=OPENING,
                        help="seconds of the opening burst, also shown apart (default "
                             f"{OPENING:g})")  # fmt: skip
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--quick", action="store_true",
                        help=f"a smoke run: {QUICK} unless given")  # fmt: skip
    args = parser.parse_args(argv)
    if args.quick:
        given = set(argv if argv is not None else sys.argv[1:])
        for name, value in QUICK.items():
            if f"--{name}" not in given:
                setattr(args, name, value)
    if args.clients < 1 or args.duration <= 0 or args.transactions < 1 or args.workers < 1:
        parser.error("--clients, --duration, --transactions and --workers must be positive")
    with tempfile.TemporaryDirectory(prefix="bench-clients-") as tmp:
        figures = measure(Path(tmp), args)
    print("\n".join(report_text(figures)))
    if args.json is not None:
        kept = {k: v for k, v in figures.items() if not k.startswith("_")}
        args.json.write_text(json.dumps(kept, indent=2) + "\n")
    return 1 if figures["load"]["errors"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
