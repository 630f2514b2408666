"""A Spark standalone cluster on loopback: one master and one worker, started from pyspark's
own launcher (``bin/spark-class``) as child processes, each in its own process group, and
stopped with everything they started (executors, Python workers) when done."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
#: Seconds a daemon gets to start, the worker to register, a process group to end.
START_TIMEOUT = 120.0
STOP_TIMEOUT = 30.0
#: The master's REST submission server listens on a fixed port (6066) by default: off, so that
#: clusters of parallel test runs do not collide.
PROPERTIES = "spark.master.rest.enabled false\n"

_MASTER_URL = re.compile(r"Starting Spark master at (spark://127\.0\.0\.1:\d+)")
_MASTER_UI = re.compile(r"Bound MasterWebUI to 127\.0\.0\.1, and started at http://[^:]+:(\d+)")

T = TypeVar("T")


class ClusterError(RuntimeError):
    """The cluster did not start, or left processes behind when stopped."""


def wait_for(condition: Callable[[], T | None], timeout: float, what: str) -> T:
    """Poll ``condition`` until it returns something true (not None, False or empty), and
    return that; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise ClusterError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.1)


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, process group) of ``pid`` from /proc, or None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text[text.rindex(")") + 2 :].split()  # the name in parentheses may hold spaces
    return fields[0], int(fields[1]), int(fields[2])


def _all_processes() -> dict[int, tuple[str, int, int]]:
    found: dict[int, tuple[str, int, int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None:
                found[int(entry)] = stat
    return found


def running(pids: set[int]) -> set[int]:
    """Those of ``pids`` still running (zombies waiting to be reaped count as ended)."""
    return {p for p in pids if (stat := _stat(p)) is not None and stat[0] != "Z"}


def group_members(pgid: int) -> set[int]:
    """The live processes of process group ``pgid``."""
    table = _all_processes()
    return {p for p, (state, _, group) in table.items() if group == pgid and state != "Z"}


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (children, their children, ...)."""
    table = _all_processes()
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, (state, parent, _) in table.items()
                    if parent in frontier and state != "Z"} - found  # fmt: skip
        found |= frontier
    return found


class Daemon:
    """One ``spark-class`` daemon in its own process group, its output in ``log``."""

    def __init__(self, name: str, args: list[str], root: Path, env: dict[str, str]) -> None:
        self.name = name
        self.log = root / "logs" / f"{name}.log"
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                [str(SPARK_HOME / "bin" / "spark-class"), *args],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # its own group: executors it forks stay in it
            )
        self.pgid = self.process.pid

    def search(self, pattern: re.Pattern[str]) -> str | None:
        """The first group of ``pattern`` in the log so far; raises if the daemon ended."""
        found = pattern.search(self.log.read_text(errors="replace"))
        if found:
            return found.group(1)
        self.check_running()
        return None

    def check_running(self) -> None:
        """Raise, with the end of its log, if the daemon has exited."""
        if self.process.poll() is not None:
            raise ClusterError(f"the {self.name} exited with {self.process.returncode}:\n"
                               f"{self.log.read_text(errors='replace')[-4000:]}")  # fmt: skip

    def stop(self) -> set[int]:
        """SIGTERM to the group (SIGKILL if it does not end); returns what had to be killed."""
        self._signal(signal.SIGTERM)
        try:
            self.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            pass
        left: set[int] = set()
        try:
            wait_for(lambda: not group_members(self.pgid), STOP_TIMEOUT,
                     f"the {self.name}'s processes to end")  # fmt: skip
        except ClusterError:
            left = group_members(self.pgid)
            self._signal(signal.SIGKILL)
        self.process.wait(STOP_TIMEOUT)
        return left

    def _signal(self, signum: int) -> None:
        try:
            os.killpg(self.pgid, signum)
        except ProcessLookupError:
            pass


class SparkCluster:
    """A master and one worker bound to 127.0.0.1. ``master_url`` is ``spark://...``,
    ``ui`` the master's web UI (its ``/json/`` endpoint tells workers and applications)."""

    def __init__(self, root: Path, cores: int = 1, memory: str = "1g") -> None:
        self.root = root
        self.cores = cores
        self.memory = memory
        self.master_url = ""
        self.ui = ""
        self.work_dir = root / "work"
        self.daemons: list[Daemon] = []
        conf = root / "conf"  # empty: no spark-defaults.conf or spark-env.sh from elsewhere
        for directory in (conf, root / "logs", self.work_dir, root / "local"):
            directory.mkdir(parents=True, exist_ok=True)
        (root / "cluster.properties").write_text(PROPERTIES)
        self.env = {
            **os.environ,
            "SPARK_HOME": str(SPARK_HOME),
            "SPARK_CONF_DIR": str(conf),
            "SPARK_LOG_DIR": str(root / "logs"),
            "SPARK_WORKER_DIR": str(self.work_dir),
            "SPARK_LOCAL_DIRS": str(root / "local"),
            "SPARK_LOCAL_IP": "127.0.0.1",
        }

    def start(self) -> None:
        """Start the master, then the worker; return once the worker has registered."""
        properties = self.root / "cluster.properties"
        common = ["--host", "127.0.0.1", "--webui-port", "0", "--properties-file", str(properties)]
        master = self._start("master", ["org.apache.spark.deploy.master.Master", "--port", "0",
                                        *common])  # fmt: skip
        self.master_url = wait_for(lambda: master.search(_MASTER_URL), START_TIMEOUT,
                                   "the master's address")  # fmt: skip
        port = wait_for(lambda: master.search(_MASTER_UI), START_TIMEOUT, "the master's web UI")
        self.ui = f"http://127.0.0.1:{port}"
        wait_for(lambda: self._state_if_up().get("status") == "ALIVE", START_TIMEOUT,
                 "the master to be ALIVE")  # fmt: skip
        self._start("worker", ["org.apache.spark.deploy.worker.Worker", self.master_url,
                               "--cores", str(self.cores), "--memory", self.memory,
                               "--work-dir", str(self.work_dir), *common])  # fmt: skip
        wait_for(self._registered_worker, START_TIMEOUT, "the worker to register")

    @property
    def worker(self) -> Daemon:
        """The worker daemon."""
        return next(d for d in self.daemons if d.name == "worker")

    def _start(self, name: str, args: list[str]) -> Daemon:
        daemon = Daemon(name, args, self.root, self.env)
        self.daemons.append(daemon)
        return daemon

    def state(self) -> dict[str, Any]:
        """The master's ``/json/`` document: workers, active and completed applications."""
        with urllib.request.urlopen(f"{self.ui}/json/", timeout=10) as response:
            state: dict[str, Any] = json.load(response)
        return state

    def _state_if_up(self) -> dict[str, Any]:
        for daemon in self.daemons:
            daemon.check_running()
        try:
            return self.state()
        except OSError:  # the UI is not answering yet
            return {}

    def _registered_worker(self) -> dict[str, Any] | None:
        workers = self._state_if_up().get("workers", [])
        return next((w for w in workers if w["state"] == "ALIVE"), None)

    def applications(self, name: str) -> list[dict[str, Any]]:
        """Applications called ``name`` the master knows, running or completed."""
        state = self.state()
        return [a for a in state["activeapps"] + state["completedapps"] if a["name"] == name]

    def stop(self) -> None:
        """Stop the worker (it kills its executors) and then the master; raise if any of
        their processes had to be killed."""
        left: dict[str, set[int]] = {}
        for daemon in reversed(self.daemons):
            killed = daemon.stop()
            if killed:
                left[daemon.name] = killed
        self.daemons.clear()
        if left:
            raise ClusterError(f"processes left running after SIGTERM (now killed): {left}")


@contextmanager
def spark_cluster(root: Path, cores: int = 1, memory: str = "1g") -> Iterator[SparkCluster]:
    """A running cluster under ``root`` (logs, work and local directories), stopped on exit;
    nothing it started is left running."""
    cluster = SparkCluster(root, cores, memory)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
