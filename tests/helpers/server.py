"""Start a real replica server in-process on a free loopback port."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pymysql

from spark_replica.applier_core.channels.components import Components
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.server.app import BackgroundServer, ComponentsFactory, ReplicaServer
from spark_replica.server.config import ServerConfig, UserConfig

ROOT_PASSWORD = "root-secret"
READER = UserConfig("reader", "reader-secret", "read_only")


@contextmanager
def running_server(
    data_dir: Path, components: Components | ComponentsFactory | None = None, **config: Any
) -> Iterator[BackgroundServer]:
    """An in-process server; channels wait for START REPLICA after a restart (as MySQL's own
    replication tests run their servers) unless ``skip_replica_start=False`` is given."""
    config.setdefault("skip_replica_start", True)
    settings = ServerConfig(
        bind="127.0.0.1",
        port=0,
        data_dir=data_dir,
        root_password=ROOT_PASSWORD,
        users=(READER,),
        **config,
    )
    server = BackgroundServer(ReplicaServer(settings, components, announce=lambda _: None))
    with server:
        yield server


@contextmanager
def server_cursor(
    data_dir: Path, components: Components | ComponentsFactory | None = None, **config: Any
) -> Iterator[Any]:
    """``running_server`` and a cursor of a root connection to it."""
    with running_server(data_dir, components, **config) as server, connect(server.port) as conn:
        with conn.cursor() as cursor:
            yield cursor


def executed_gtids(cursor: Any) -> GtidSet:
    """The server's ``@@global.gtid_executed``."""
    cursor.execute("SELECT @@global.gtid_executed")
    return GtidSet.parse(cursor.fetchone()[0] or "")


def connect(port: int, user: str = "root", password: str = ROOT_PASSWORD, **kwargs: Any) -> Any:
    return pymysql.connect(
        host="127.0.0.1", port=port, user=user, password=password, autocommit=True, **kwargs
    )


#: Threads a running server keeps as long as it runs: its Spark query threads
#: (``spark-query_N``) and its event loop's worker threads (``asyncio_N``).
SERVER_THREADS = ("asyncio_", "spark-query")


def no_leaks_but_a_servers() -> Iterator[None]:
    """The body of a ``no_thread_leaks`` fixture for tests that share a module-scoped server:
    any thread a test leaves behind fails it, except those the server keeps while it runs
    (joined when it stops)."""
    before = set(threading.enumerate())
    yield
    leaked = [
        t.name
        for t in threading.enumerate()
        if t not in before
        and t.is_alive()
        and not t.daemon
        and not t.name.startswith(SERVER_THREADS)
    ]
    assert not leaked, f"threads left running: {leaked}"
