"""A Debian MariaDB server as a live binlog source: installed by ``.ci/run``, started per test
session in a scratch directory on a free loopback port, with ROW binlogs, full row images and
full row metadata, and stopped with SIGTERM at the end (notes: ecosystem §9)."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: The replication account every test uses, and its password.
REPL_USER = "repl"
REPL_PASSWORD = "repl-secret"
#: The root account's password (root logs in with mysql_native_password over TCP).
ROOT_PASSWORD = "root-secret"
START_TIMEOUT = 60.0

_CONFIG = """[mariadbd]
user={user}
datadir={root}/data
socket={root}/mariadb.sock
pid-file={root}/mariadb.pid
port={port}
bind-address=127.0.0.1
server_id=1
log_bin={root}/data/mariadb-bin
binlog_format=ROW
binlog_row_image=FULL
binlog_row_metadata=FULL
gtid_strict_mode=1
gtid_domain_id=0
skip-name-resolve
innodb_buffer_pool_size=64M
"""


@dataclass
class MariaDB:
    """A running MariaDB: where it listens and its accounts."""

    host: str
    port: int
    root: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start mariadbd on the data directory and wait until it answers."""
        log = (self.root / "mariadbd.log").open("ab")
        try:
            self.process = subprocess.Popen(
                ["mariadbd", f"--defaults-file={self.root / 'my.cnf'}"],
                stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        finally:
            log.close()  # the child has its own copy
        _wait_ready(self.root / "mariadb.sock", self.process)

    def kill(self) -> None:
        """SIGKILL, as when the source's machine dies."""
        assert self.process is not None
        self.process.kill()
        self.process.wait()

    def stop(self) -> None:
        """SIGTERM, the clean shutdown."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(START_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.kill()

    def command(self, statement: str) -> list[str]:
        """The mariadb CLI command that runs ``statement`` as root."""
        socket_path = self.root / "mariadb.sock"
        return ["mariadb", f"--socket={socket_path}", "-uroot", f"-p{ROOT_PASSWORD}",
                "--batch", "--skip-column-names", "-e", statement]  # fmt: skip

    def run_script(self, script: Path, *, timeout: float = 600.0) -> None:
        """Feed ``script`` to the mariadb CLI as root, as ``mariadb < script`` does (DELIMITER
        and ``source`` work; ``source`` finds files beside the script)."""
        with script.open("rb") as text:
            done = subprocess.run(
                ["mariadb", f"--socket={self.root / 'mariadb.sock'}", "-uroot",
                 f"-p{ROOT_PASSWORD}", "--batch"],
                stdin=text, capture_output=True, cwd=script.parent, timeout=timeout, check=False,
            )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"{script.name} failed: {done.stderr.decode(errors='replace')}")

    def sql(self, statement: str) -> str:
        """Run ``statement`` as root through the mariadb CLI; its tab-separated output."""
        done = subprocess.run(
            self.command(statement), capture_output=True, text=True, timeout=60, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"{statement!r} failed: {done.stderr.strip()}")
        return done.stdout


def available() -> bool:
    """Whether Debian's mariadb-server is installed here."""
    return shutil.which("mariadbd") is not None and shutil.which("mariadb-install-db") is not None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run_as() -> str:
    """The account mariadbd runs as: the one we are (as root it must be told so)."""
    return pwd.getpwuid(os.geteuid()).pw_name


@contextmanager
def running_mariadb(root: Path, *, binlog: bool = True, settings: str = "") -> Iterator[MariaDB]:
    """Install a fresh data directory under ``root``, start mariadbd (without a binary log
    when not ``binlog``; with ``settings``, lines of ``my.cnf``, after the usual ones),
    create the accounts; stop it on exit."""
    root.mkdir(parents=True, exist_ok=True)
    user = _run_as()
    port = free_port()
    config = root / "my.cnf"
    text = _CONFIG.format(user=user, root=root, port=port)
    if not binlog:
        text = "\n".join(line for line in text.splitlines() if not line.startswith("log_bin"))
    config.write_text(text + "\n" + settings)
    subprocess.run(
        ["mariadb-install-db", f"--defaults-file={config}",
         "--auth-root-authentication-method=normal", "--skip-test-db"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    server = MariaDB("127.0.0.1", port, root)
    try:
        server.start()
        server_sql = subprocess.run(
            ["mariadb", f"--socket={root / 'mariadb.sock'}", "-uroot", "-e",
             "SET sql_log_bin = 0;"  # accounts are not part of what replicas replay
             f"ALTER USER root@localhost IDENTIFIED BY '{ROOT_PASSWORD}';"
             f"CREATE OR REPLACE USER root@'127.0.0.1' IDENTIFIED BY '{ROOT_PASSWORD}';"
             "GRANT ALL ON *.* TO root@'127.0.0.1' WITH GRANT OPTION;"
             f"CREATE USER {REPL_USER}@'%' IDENTIFIED BY '{REPL_PASSWORD}';"
             f"GRANT REPLICATION SLAVE, REPLICATION CLIENT, SELECT, BINLOG MONITOR,"
             f" REPLICATION MASTER ADMIN ON *.* TO {REPL_USER}@'%';"],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        if server_sql.returncode != 0:
            raise RuntimeError(f"setting up MariaDB's accounts failed: {server_sql.stderr}")
        yield server
    finally:
        server.stop()


@contextmanager
def existing_mariadb(root: Path) -> Iterator[MariaDB]:
    """Start the MariaDB ``running_mariadb`` installed under ``root`` in an earlier run (its
    data, accounts and binary log as that run left them; moved since, perhaps: the paths of
    ``my.cnf`` and the binary log's index are set to ``root``) on a free port; stop it on
    exit."""
    config = root / "my.cnf"
    text = config.read_text()
    found = re.search(r"^datadir=(.*)/data$", text, re.M)
    if found is None:
        raise RuntimeError(f"{config} names no data directory")
    for path in (config, root / "data" / "mariadb-bin.index"):
        path.write_text(path.read_text().replace(found.group(1), str(root)))
    port = free_port()
    config.write_text(re.sub(r"^port=\d+$", f"port={port}", config.read_text(), flags=re.M))
    server = MariaDB("127.0.0.1", port, root)
    try:
        server.start()
        yield server
    finally:
        server.stop()


def _wait_ready(sock: Path, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"mariadbd exited with {process.returncode}; see its log")
        probe = subprocess.run(
            ["mariadb-admin", f"--socket={sock}", "-uroot", "ping"],
            capture_output=True, timeout=30, check=False,
        )  # fmt: skip
        if probe.returncode == 0:
            return
        if time.monotonic() > deadline:
            raise RuntimeError("mariadbd did not answer in time")
        time.sleep(0.1)
