"""SHOW [FULL] PROCESSLIST: the client connections and the replication threads, as MySQL lists
them. An admin sees every thread; any other user only its own connections (MySQL's rule for
an account without the PROCESS privilege). The server hands in its client connections
(``ClientThread``); the replication threads come from the channels' status.

https://dev.mysql.com/doc/refman/8.4/en/show-processlist.html

A client connection is ``Query`` while a statement runs (``Info`` is its text, cut to 100
characters unless FULL) and ``Sleep`` between statements; ``Time`` counts the seconds since
the statement began or the last one ended. Replication threads are ``system user`` threads:
the receiver (``Connect``, host ``connecting host``), the applier's coordinator and each
worker (``Query``), with the states SHOW REPLICA STATUS and performance_schema show, and
``Time`` since that state began.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

from spark_replica.applier_core.channels.manager import ChannelManager

COLUMNS = ("Id", "User", "Host", "db", "Command", "Time", "State", "Info")
#: SHOW PROCESSLIST (without FULL) shows this many characters of a statement.
INFO_WIDTH = 100
SYSTEM_USER = "system user"
WORKER_IDLE = "Waiting for an event from Coordinator"
WORKER_APPLYING = "Applying batch of row changes"

Row = tuple[object, ...]


@dataclass(frozen=True, slots=True)
class ClientThread:
    """What a client connection is doing now."""

    connection_id: int
    user: str
    host: str
    database: str | None
    statement: str | None  # None between statements
    since: float  # time.monotonic() when the statement began, or the last one ended


def client_rows(threads: Iterable[ClientThread], *, full: bool, now: float) -> list[Row]:
    rows: list[Row] = []
    for thread in threads:
        running = thread.statement is not None
        info = thread.statement
        if info is not None and not full:
            info = info[:INFO_WIDTH]
        rows.append((
            thread.connection_id, thread.user, thread.host, thread.database,
            "Query" if running else "Sleep", int(now - thread.since),
            "executing" if running else "", info,
        ))  # fmt: skip
    return rows


def replication_rows(manager: ChannelManager, *, now: float) -> list[Row]:
    """The running replication threads of every channel, in thread id order."""
    rows: list[Row] = []
    for channel in manager:
        status = channel.status.snapshot()
        io_time = _seconds(now, status.io_state_since)
        sql_time = _seconds(now, status.sql_state_since)
        if status.io_thread_id is not None:
            rows.append((status.io_thread_id, SYSTEM_USER, "connecting host", None, "Connect",
                         io_time, status.io_state_text, None))  # fmt: skip
        if status.sql_thread_id is not None:
            rows.append((status.sql_thread_id, SYSTEM_USER, "", None, "Query", sql_time,
                         status.sql_state_text, None))  # fmt: skip
        for worker in status.workers:
            if worker.thread_id is None:
                continue
            state = WORKER_APPLYING if worker.applying.gtid else WORKER_IDLE
            rows.append((worker.thread_id, SYSTEM_USER, "", None, "Query", sql_time, state,
                         None))  # fmt: skip
    return sorted(rows, key=lambda row: cast(int, row[0]))


def _seconds(now: float, since: float) -> int:
    return int(now - since) if since else 0


def processlist(
    clients: Iterable[ClientThread],
    manager: ChannelManager,
    *,
    user: str,
    admin: bool,
    full: bool,
) -> tuple[tuple[str, ...], list[Row]]:
    """The columns and rows of SHOW [FULL] PROCESSLIST for ``user``."""
    now = time.monotonic()
    if not admin:
        clients = [thread for thread in clients if thread.user == user]
    rows = client_rows(clients, full=full, now=now)
    if admin:
        rows += replication_rows(manager, now=now)
    return COLUMNS, rows
