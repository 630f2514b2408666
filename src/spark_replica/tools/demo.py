"""``spark-replica demo`` (``make demo``): the whole product in one command.

It starts, each as its own process:
- the built-in binlog server with a live generated workload (``spark-replica source
  --generate N --rate TPS``);
- the replica server (``spark-replica serve``, the Spark engine by default).

Then it does what a DBA does, over SQL as root: CHANGE REPLICATION SOURCE with
APPLIER_VERSION=2, and START REPLICA. Every ``--interval`` seconds it prints one line with:
- how far the replica is behind: transactions the source has written and the replica has not
  applied, and Seconds_Behind_Source;
- the applier's metrics (performance_schema.replication_applier_metrics);
- a query on the replicated tables, answered by the storage engine.

It runs until Ctrl-C (or ``--duration`` seconds). It then stops replication and both servers,
and prints a summary. Its data lives in ``--data-dir`` (default: a temporary directory,
removed at the end).
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pymysql

from spark_replica.applier_core.gtid import GtidSet

CHANNEL = "demo"
_LISTENING = re.compile(r"listening on [\d.]+:(\d+)")
_START_TIMEOUT = 180.0
QUERY = "SELECT COUNT(*), SUM(k) FROM shop.sbtest1"
METRICS = (
    "SELECT TRANSACTIONS_COMMITTED, EVENTS_APPLIED, WAITS_FOR_MEMORY, WAITS_FOR_COMMIT_ORDER "
    f"FROM performance_schema.replication_applier_metrics WHERE CHANNEL_NAME = '{CHANNEL}'"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--transactions", type=int, default=1_000_000)
    parser.add_argument("--rate", type=float, default=200.0, help="source transactions/s")
    parser.add_argument("--workers", type=int, default=4, help="APPLIER_WORKER_COUNT")
    parser.add_argument("--engine", choices=("spark", "memory"), default="spark")
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--duration", type=float, default=0.0, help="0: until Ctrl-C")
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--config", type=Path, help="the replica server's TOML configuration")


class Child:
    """A ``spark-replica`` subcommand in its own process; ``port`` is where it listens."""

    def __init__(self, name: str, arguments: Sequence[str], log: Path, env: dict[str, str]):
        self.name = name
        self._log = log.open("ab")
        command = [sys.executable, "-m", "spark_replica.server.cli", *arguments]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self._log,
                                        env=env, text=True)  # fmt: skip
        self.port = self._wait_listening()

    def _wait_listening(self) -> int:
        assert self.process.stdout is not None
        found: list[int] = []
        reading = threading.Thread(target=self._read_port, args=(found,), name="demo-read")
        reading.start()
        reading.join(_START_TIMEOUT)
        if not found:
            self.stop()
            reading.join()
            raise RuntimeError(f"{self.name} did not start (see {self._log.name})")
        return found[0]

    def _read_port(self, found: list[int]) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            match = _LISTENING.search(line)
            if match:
                found.append(int(match.group(1)))
                return

    def stop(self) -> int:
        """SIGTERM, then wait; SIGKILL after a minute. Idempotent."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._log.close()
        return self.process.returncode


def run(args: argparse.Namespace) -> int:
    stopping = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopping.set())
    temporary = args.data_dir is None
    root = Path(tempfile.mkdtemp(prefix="spark-replica-demo-")) if temporary else args.data_dir
    root.mkdir(parents=True, exist_ok=True)
    password, repl_password = secrets.token_hex(8), secrets.token_hex(8)
    env = {**os.environ, "SPARK_REPLICA_ROOT_PASSWORD": password}
    children: list[Child] = []
    try:
        print(f"demo: data in {root}", flush=True)
        source = Child("the binlog source", [
            "source", "--data-dir", str(root / "source"), "--port", "0", "--user", "repl",
            "--password", repl_password, "--auth", "mysql_native_password",
            "--generate", str(args.transactions), "--rate", str(args.rate),
        ], root / "source.log", env)  # fmt: skip
        children.append(source)
        print(f"demo: binlog source on 127.0.0.1:{source.port}, {args.rate:g} transactions/s",
              flush=True)  # fmt: skip
        replica = Child("the replica server", [
            "serve", "--data-dir", str(root / "replica"), "--port", "0",
            "--bind", "127.0.0.1", "--engine", args.engine,
            "--skip-replica-start",  # the demo configures and starts the channel itself
            *(["--config", str(args.config)] if args.config else []),
        ], root / "replica.log", env)  # fmt: skip
        children.append(replica)
        print(f"demo: replica server on 127.0.0.1:{replica.port} (root / {password}), "
              f"{args.engine} engine", flush=True)  # fmt: skip
        with pymysql.connect(host="127.0.0.1", port=replica.port, user="root",
                             password=password, autocommit=True) as replica_db, \
                pymysql.connect(host="127.0.0.1", port=source.port, user="repl",
                                password=repl_password) as source_db:  # fmt: skip
            start_replication(replica_db, source.port, repl_password, args.workers)
            _watch(source_db, replica_db, args, stopping)
            with replica_db.cursor() as cursor:
                cursor.execute(f"STOP REPLICA FOR CHANNEL '{CHANNEL}'")
                print(f"demo: stopped; the replica holds {executed_count(cursor):,} "
                      "transactions", flush=True)  # fmt: skip
    finally:
        for child in reversed(children):
            child.stop()
        if temporary:
            shutil.rmtree(root, ignore_errors=True)
    print("demo: both servers stopped", flush=True)
    return 0


def start_replication(
    replica_db: Any, source_port: int, password: str, workers: int, channel: str = CHANNEL
) -> None:
    """CHANGE REPLICATION SOURCE TO the source at ``source_port`` with the CSA, and START
    REPLICA, printing each statement with the password masked."""
    statements = [
        f"CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={source_port}, "
        f"SOURCE_USER='repl', SOURCE_PASSWORD='{password}', SOURCE_AUTO_POSITION=1, "
        f"SOURCE_CONNECT_RETRY=1, GTID_ONLY=1, REQUIRE_ROW_FORMAT=1, APPLIER_VERSION=2, "
        f"APPLIER_WORKER_COUNT={workers} FOR CHANNEL '{channel}'",
        f"START REPLICA FOR CHANNEL '{channel}'",
    ]
    with replica_db.cursor() as cursor:
        for statement in statements:
            shown = statement.replace(f"'{password}'", "'********'")
            print(f"mysql> {shown};", flush=True)
            cursor.execute(statement)


def _watch(source_db: Any, replica_db: Any, args: argparse.Namespace, stopping: Any) -> None:
    started = time.monotonic()
    while not stopping.wait(args.interval):
        with source_db.cursor() as cursor:
            written = executed_count(cursor)
        with replica_db.cursor() as cursor:
            applied = executed_count(cursor)
            cursor.execute(f"SHOW REPLICA STATUS FOR CHANNEL '{CHANNEL}'")
            names = [d[0] for d in cursor.description]
            status = dict(zip(names, cursor.fetchone(), strict=True))
            cursor.execute(METRICS)
            committed, events, memory_waits, order_waits = cursor.fetchone()
            answer = _query(cursor)
        elapsed = time.monotonic() - started
        print(f"[{elapsed:6.1f}s] source {written:,} | applied {applied:,} | lag "
              f"{written - applied:,} trx, {status['Seconds_Behind_Source']} s | applier: "
              f"{committed:,} committed, {events:,} events, waits memory {memory_waits:,} "
              f"commit order {order_waits:,} | {QUERY} -> {answer}", flush=True)  # fmt: skip
        errors = [status[k] for k in ("Last_IO_Error", "Last_SQL_Error") if status[k]]
        if errors:
            print(f"demo: replication error: {'; '.join(errors)}", flush=True)
        if args.duration and elapsed >= args.duration:
            return


def _query(cursor: Any) -> str:
    try:
        cursor.execute(QUERY)
    except pymysql.MySQLError as exc:  # the table does not exist before the setup is applied
        return f"error {exc.args[0]}: {exc.args[1]}"
    count, total = cursor.fetchone()
    return f"{count:,} rows, sum(k) {total}"


def executed_count(cursor: Any) -> int:
    """How many transactions the server at the other end of ``cursor`` has executed."""
    cursor.execute("SELECT @@GLOBAL.gtid_executed")
    return GtidSet.parse(cursor.fetchone()[0] or "").count()
