"""A throwaway PostgreSQL server from Debian's ``postgresql`` package (``.ci/run`` installs it).

:func:`running_postgres` initialises a cluster in a new directory under the system's temporary
directory, starts it on a free port of 127.0.0.1 (its socket directory is inside that
directory too) and, on exit, stops it with ``pg_ctl stop -m fast`` and removes the directory.
PostgreSQL refuses to run as root: under root every PostgreSQL program runs as the
``postgres`` system user, which owns the directory.

The cluster keeps PostgreSQL's durable defaults (``fsync``, ``synchronous_commit``,
``full_page_writes``). Its default collation is ICU's ``en-US``, as on a typical production
cluster and unlike byte order, so results that depend on how the server sorts text show up.

Fixtures (a conftest imports them): ``postgres_server``, one server per test session, and
``postgres_url``, a new, empty database per test, dropped when the test ends. Without the
binaries ``postgres_server`` fails when the ``CI`` environment variable is set and skips
otherwise.
"""

from __future__ import annotations

import glob
import os
import pwd
import shlex
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from tests.helpers.mariadb import free_port

#: Where Debian installs each major version's programs.
BIN_GLOB = "/usr/lib/postgresql/*/bin"
#: The superuser of the test cluster; clients on 127.0.0.1 log in without a password.
SUPERUSER = "postgres"
#: Seconds for initdb, and for pg_ctl to start or stop the server.
TIMEOUT = 60
#: Starts tried when the picked port was taken by someone else in the meantime.
START_ATTEMPTS = 3


@dataclass(frozen=True)
class PostgresServer:
    """A running PostgreSQL server on 127.0.0.1, by its port."""

    port: int

    def url(self, database: str) -> str:
        """The SQLAlchemy URL (psycopg 3 driver) of one database of the server."""
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """Create a new, empty database and return its name."""
        name = f"test_{uuid.uuid4().hex}"
        self._admin(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return name

    def drop_database(self, name: str) -> None:
        """Drop a database, closing the connections still open to it."""
        self._admin(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))

    def _admin(self, statement: sql.Composed) -> None:
        dsn = f"host=127.0.0.1 port={self.port} user={SUPERUSER} dbname=postgres"
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(statement)


def bin_dir() -> Path | None:
    """The programs of the newest PostgreSQL installed here, or None."""
    found = [Path(p) for p in glob.glob(BIN_GLOB) if (Path(p) / "initdb").is_file()]
    if not found:
        return None
    return max(found, key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)


def missing_reason() -> str | None:
    """Why no PostgreSQL server can be started here, or None when one can."""
    if bin_dir() is None:
        return f"no PostgreSQL programs in {BIN_GLOB} (`.ci/run` installs Debian's postgresql)"
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            return "running as root, and runuser (to run PostgreSQL as postgres) is missing"
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root, and there is no postgres user to run PostgreSQL as"
    return None


@contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    """Initialise, start and finally stop and remove a PostgreSQL cluster (see the module)."""
    programs = bin_dir()
    if programs is None:
        raise RuntimeError(missing_reason())
    root = Path(tempfile.mkdtemp(prefix="spark-replica-pg-"))
    try:
        if os.geteuid() == 0:
            account = pwd.getpwnam("postgres")
            os.chown(root, account.pw_uid, account.pw_gid)
        data_dir = root / "data"
        _run(
            programs / "initdb", "-D", str(data_dir), "-U", SUPERUSER, "--auth=trust",
            "--encoding=UTF8", "--locale=C.UTF-8", "--locale-provider=icu", "--icu-locale=en-US",
        )  # fmt: skip
        server = _start(programs, root, data_dir)
        try:
            yield server
        finally:
            _run(programs / "pg_ctl", "-D", str(data_dir), "-m", "fast", "-w", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _start(programs: Path, root: Path, data_dir: Path) -> PostgresServer:
    log = root / "postgres.log"
    for _ in range(START_ATTEMPTS):
        port = free_port()
        options = shlex.join(
            ["-c", "listen_addresses=127.0.0.1", "-c", f"port={port}",
             "-c", f"unix_socket_directories={root}"]
        )  # fmt: skip
        started = _run(
            programs / "pg_ctl", "-D", str(data_dir), "-l", str(log), "-w",
            "-t", str(TIMEOUT), "-o", options, "start", check=False,
        )  # fmt: skip
        if started.returncode == 0:
            return PostgresServer(port)
        # A server still starting when pg_ctl gave up must not outlive its directory.
        _run(programs / "pg_ctl", "-D", str(data_dir), "-m", "immediate", "stop", check=False)
        if "could not bind" not in log.read_text(errors="replace"):
            break
    raise RuntimeError(
        f"PostgreSQL did not start: {started.stdout}{started.stderr}\n"
        f"{log.read_text(errors='replace')}"
    )


def _run(program: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a PostgreSQL program, as postgres when we are root."""
    command = [str(program), *args]
    if os.geteuid() == 0:
        command = ["runuser", "-u", "postgres", "--", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    if check and done.returncode != 0:
        raise RuntimeError(f"{shlex.join(command)} failed: {done.stdout}{done.stderr}")
    return done


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the test session."""
    reason = missing_reason()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL is needed when CI is set: {reason}", pytrace=False)
        pytest.skip(reason)
    with running_postgres() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """The URL of a new, empty database, dropped when the test ends."""
    name = postgres_server.create_database()
    try:
        yield postgres_server.url(name)
    finally:
        postgres_server.drop_database(name)
