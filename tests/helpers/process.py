"""``spark-replica serve`` in a child process: started, waited for, killed; and what it has
made durable, read from its metadata database as an operator could."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from spark_replica.applier_core.gtid import GtidSet
from tests.helpers.server import ROOT_PASSWORD

_LISTENING = re.compile(r"listening on [\d.]+:(\d+)")
#: Seconds a child gets to start (a JVM and a SparkSession among it).
START_TIMEOUT = 120.0


class ServerProcess:
    """A running ``spark-replica serve``; ``port`` is where it listens."""

    def __init__(
        self,
        data_dir: Path,
        config_file: Path | None = None,
        *,
        skip_replica_start: bool = True,
        log_level: str = "WARNING",
        env: dict[str, str] | None = None,
    ) -> None:
        command = [sys.executable, "-m", "spark_replica.server.cli", "--log-level", log_level,
                   "serve",
                   "--data-dir", str(data_dir), "--port", "0", "--bind", "127.0.0.1"]  # fmt: skip
        if skip_replica_start:  # as MySQL's own replication tests run their servers
            command.append("--skip-replica-start")
        if config_file is not None:
            command += ["--config", str(config_file)]
        env = {**os.environ, "SPARK_REPLICA_ROOT_PASSWORD": ROOT_PASSWORD, **(env or {})}
        self.log_path = data_dir.parent / f"{data_dir.name}.log"
        self.log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=self.log, env=env, text=True
        )
        self.port = self._wait_listening()

    def _wait_listening(self) -> int:
        assert self.process.stdout is not None
        for line in self.process.stdout:  # ends when the child exits
            found = _LISTENING.search(line)
            if found:
                return int(found.group(1))
        raise RuntimeError(f"the server exited with {self.process.wait()} before listening")

    def kill(self) -> None:
        """SIGKILL: no flush, no cleanup, as when the machine dies."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.log.close()

    def wait(self, timeout: float) -> int:
        """Wait for the child to end by itself (a failpoint killed it); its exit status."""
        status = self.process.wait(timeout)
        self.log.close()
        return status

    def stop(self) -> int:
        """SIGTERM, the clean shutdown; returns the exit status."""
        self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(START_TIMEOUT)
        self.log.close()
        return status


@contextmanager
def server_process(
    data_dir: Path,
    config_file: Path | None = None,
    *,
    skip_replica_start: bool = True,
    log_level: str = "WARNING",
    env: dict[str, str] | None = None,
) -> Iterator[ServerProcess]:
    server = ServerProcess(
        data_dir,
        config_file,
        skip_replica_start=skip_replica_start,
        log_level=log_level,
        env=env,
    )
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.kill()


def durable_count(data_dir: Path) -> int:
    """How many GTIDs the server's engine has recorded as durable (its metadata database)."""
    uri = f"file:{data_dir / 'metadata.db'}?mode=ro"
    with sqlite3.connect(uri, uri=True, timeout=10) as db:
        rows = db.execute(
            "SELECT source_uuid, gtid_tag, interval_start, interval_end FROM gtid_executed"
        ).fetchall()
    return GtidSet.from_intervals(rows).count()


def _children() -> dict[int, list[int]]:
    """Every process's children, by parent pid (from ``/proc/<pid>/stat``)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as handle:
                stat = handle.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(parent, []).append(int(entry))
    return children


def process_tree(pid: int) -> list[int]:
    """``pid`` and every process under it."""
    children, found, pending = _children(), [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        pending.extend(children.get(current, ()))
    return found


def java_child(pid: int) -> int:
    """The ``java`` process directly under ``pid`` (a server's Spark driver JVM)."""
    for child in _children().get(pid, ()):
        try:
            with open(f"/proc/{child}/comm", encoding="utf-8") as handle:
                if handle.read().strip() == "java":
                    return child
        except OSError:
            continue
    raise LookupError(f"no java process under {pid}")
