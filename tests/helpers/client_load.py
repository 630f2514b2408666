"""Many MySQL clients at once against a replica server, as monitoring agents and reports do
while it applies: the load of tests/system/test_concurrent_clients.py and of
tests/bench/bench_clients.py.

``run_load`` opens ``clients`` pymysql connections, each in a thread of its own (named
``client-load-N``), starts them together and has each send a statement mix round and round:
client ``n`` begins at position ``n`` of the mix, so every kind of statement runs at every
moment. Each statement is timed from sending it to having read its last row. A client stops
after ``statements`` statements, or once ``stop`` is set. Errors are collected, never raised,
and the report holds them with every latency, by statement kind.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pymysql

from tests.helpers.server import connect

USER_TABLE = "user table SELECT"
STATUS_BY_WORKER = "status_by_worker SELECT"
SHOW_STATUS = "SHOW REPLICA STATUS"
#: Seconds to connect every client and to wait for each to finish.
TIMEOUT = 600.0


@dataclass(frozen=True, slots=True)
class Statement:
    kind: str
    sql: str


def monitoring_mix(tables: Sequence[str], rows: int) -> list[Statement]:
    """For each replicated table (``db.table`` with an ``id`` key from 1 to ``rows`` and an
    integer ``k``): an aggregate and a point lookup answered by Spark, each followed by the
    applier's per-worker status and SHOW REPLICA STATUS."""
    mix: list[Statement] = []
    for i, table in enumerate(tables):
        for sql in (
            f"SELECT COUNT(*), SUM(k) FROM {table}",
            f"SELECT id, k, c FROM {table} WHERE id = {1 + (i * 37) % rows}",
        ):
            mix += [
                Statement(USER_TABLE, sql),
                Statement(
                    STATUS_BY_WORKER,
                    "SELECT * FROM performance_schema.replication_applier_status_by_worker",
                ),
                Statement(SHOW_STATUS, SHOW_STATUS),
            ]
    return mix


def percentile(ordered: Sequence[float], share: float) -> float:
    """The nearest-rank percentile of sorted values (0 when there are none)."""
    if not ordered:
        return 0.0
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


@dataclass
class LoadReport:
    """What the clients saw: latencies (seconds) by statement kind, when each statement was
    sent (seconds after the clients started, in the same order), and errors."""

    clients: int
    seconds: float = 0.0
    latencies: dict[str, list[float]] = field(default_factory=dict)
    sent: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def statements(self) -> int:
        return sum(len(v) for v in self.latencies.values())

    def figures(self, kind: str | None = None, *, after: float = 0.0) -> dict[str, float]:
        """Count, p50, p99 and max latency (milliseconds) and statements/s, of one kind of
        statement or of all; with ``after``, of those sent that many seconds or more after
        the start (all clients start at once: their first statements queue together)."""
        kinds = [kind] if kind in self.latencies else [] if kind else list(self.latencies)
        values = [
            latency
            for name in kinds
            for latency, sent in zip(self.latencies[name], self.sent[name], strict=True)
            if sent >= after
        ]
        ordered = sorted(values)
        seconds = self.seconds - after
        return {
            "statements": len(ordered),
            "per_second": len(ordered) / seconds if seconds > 0 else 0.0,
            "p50_ms": 1000 * percentile(ordered, 0.50),
            "p99_ms": 1000 * percentile(ordered, 0.99),
            "max_ms": 1000 * (ordered[-1] if ordered else 0.0),
        }

    def summary(self, *, after: float = 0.0) -> dict[str, Any]:
        return {
            "clients": self.clients,
            "seconds": self.seconds,
            "errors": len(self.errors),
            "all": self.figures(after=after),
            "by_kind": {kind: self.figures(kind, after=after) for kind in sorted(self.latencies)},
        }

    def lines(self, *, after: float = 0.0) -> list[str]:
        """The figures as text, one line per kind of statement and one for all."""
        rows = [(kind, self.figures(kind, after=after)) for kind in sorted(self.latencies)]
        rows.append(("all", self.figures(after=after)))
        return [
            f"{kind:<24} {f['statements']:>7.0f} statements {f['per_second']:>8.1f}/s  "
            f"p50 {f['p50_ms']:>8.1f} ms  p99 {f['p99_ms']:>8.1f} ms  max {f['max_ms']:>8.1f} ms"
            for kind, f in rows
        ]


def run_load(
    port: int,
    clients: int,
    mix: Sequence[Statement],
    *,
    statements: int | None = None,
    stop: threading.Event | None = None,
    started: threading.Event | None = None,
    password: str | None = None,
    timeout: float = TIMEOUT,
) -> LoadReport:
    """Run the load until each client has sent ``statements`` statements or ``stop`` is set
    (at least one of them must be given); returns when every client has finished. ``started``
    is set when every client is connected and the first statements go out. A client still
    busy after ``timeout`` seconds is reported as an error (and left running)."""
    if statements is None and stop is None:
        raise ValueError("give statements, stop, or both")
    report = LoadReport(clients)
    lock = threading.Lock()  # guards report.latencies and report.errors
    began = [0.0]  # when the clients were let go: set by the barrier before it releases them

    def let_go() -> None:
        began[0] = time.perf_counter()

    ready = threading.Barrier(clients + 1, action=let_go, timeout=timeout)
    options = {} if password is None else {"password": password}

    def client(number: int) -> None:
        timings: dict[str, list[float]] = {}
        sent_at: dict[str, list[float]] = {}
        failures: list[str] = []
        try:
            conn = connect(port, connect_timeout=timeout, **options)
        except Exception as error:
            failures.append(f"client {number}: connect: {error!r}")
            conn = None
        try:
            ready.wait()
            sent = 0
            while conn is not None and (statements is None or sent < statements):
                if stop is not None and stop.is_set():
                    break
                statement = mix[(number + sent) % len(mix)]
                sent += 1
                started = time.perf_counter()
                try:
                    with conn.cursor() as cursor:
                        cursor.execute(statement.sql)
                        cursor.fetchall()
                except Exception as error:
                    failures.append(f"client {number}: {statement.sql}: {error!r}")
                    continue
                timings.setdefault(statement.kind, []).append(time.perf_counter() - started)
                sent_at.setdefault(statement.kind, []).append(started - began[0])
        finally:
            if conn is not None:
                conn.close()
            with lock:
                for kind, values in timings.items():
                    report.latencies.setdefault(kind, []).extend(values)
                    report.sent.setdefault(kind, []).extend(sent_at[kind])
                report.errors.extend(failures)

    threads = [
        threading.Thread(target=client, args=(n,), name=f"client-load-{n}") for n in range(clients)
    ]
    for thread in threads:
        thread.start()
    ready.wait()
    if started is not None:
        started.set()
    deadline = began[0] + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.perf_counter()))
    report.seconds = time.perf_counter() - began[0]
    hung = [t.name for t in threads if t.is_alive()]
    if hung:
        report.errors.append(f"clients still waiting after {timeout:.0f} s: {hung}")
    return report


def wait_until_queryable(cursor: Any, tables: Sequence[str], seconds: float) -> None:
    """Poll until the channel has created ``tables`` and Spark reads them (a SELECT finds
    them), as a client waiting for the first replicated data would. Raises what the SELECT
    raised when it is not 1146, or 1146 itself once ``seconds`` have passed."""
    deadline = time.monotonic() + seconds
    for table in tables:
        while True:
            try:
                cursor.execute(f"SELECT COUNT(*) FROM {table}")
                cursor.fetchall()
                break
            except pymysql.MySQLError as error:
                if error.args[0] != 1146 or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
