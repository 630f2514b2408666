"""Driving channel 'm1' of a replica server over the wire, as a DBA does: CHANGE
REPLICATION SOURCE (with either applier: ``APPLIERS``), START REPLICA, polling SHOW REPLICA
STATUS and @@global.gtid_executed until a condition holds (with a deadline), and the
channel's threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from spark_replica.applier_core.gtid import GtidSet

CHANNEL = "m1"
WAIT = 60.0
#: CHANGE REPLICATION SOURCE options selecting each applier of 'm1', by short name.
APPLIERS = {
    "csa": "REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2, APPLIER_WORKER_COUNT=4",
    "mta": "APPLIER_VERSION=1",
}


def change_source_at(host: str, port: int, user: str, password: str, **extra: Any) -> str:
    """CHANGE REPLICATION SOURCE TO ... SOURCE_AUTO_POSITION=1 for 'm1', with ``extra``
    options (``NAME=value`` as SQL)."""
    options = "".join(f", {k}={v}" for k, v in extra.items())
    return (
        f"CHANGE REPLICATION SOURCE TO SOURCE_HOST='{host}', SOURCE_PORT={port}, "
        f"SOURCE_USER='{user}', SOURCE_PASSWORD='{password}', SOURCE_AUTO_POSITION=1"
        f"{options} FOR CHANNEL '{CHANNEL}'"
    )


def status(cursor: Any) -> dict[str, Any]:
    cursor.execute(f"SHOW REPLICA STATUS FOR CHANNEL '{CHANNEL}'")
    names = [d[0] for d in cursor.description]
    return dict(zip(names, cursor.fetchone(), strict=True))


def poll(cursor: Any, done: Callable[[dict[str, Any]], bool], wait: float = WAIT) -> dict[str, Any]:
    """SHOW REPLICA STATUS until ``done(status)``, as a DBA polls; fails after ``wait`` s."""
    deadline = time.monotonic() + wait
    while not done(found := status(cursor)):
        assert time.monotonic() < deadline, {k: v for k, v in found.items() if v not in ("", 0)}
        time.sleep(0.05)
    return found


def executed(cursor: Any) -> GtidSet:
    cursor.execute("SELECT @@global.gtid_executed")
    return GtidSet.parse(cursor.fetchone()[0] or "")


def wait_applied(cursor: Any, gtids: GtidSet, wait: float = WAIT) -> dict[str, Any]:
    """Poll until ``gtids`` are in @@global.gtid_executed; the last SHOW REPLICA STATUS."""
    return poll(cursor, lambda _: gtids.is_subset(executed(cursor)), wait)


def io_stops(cursor: Any, change_source: str) -> dict[str, Any]:
    """Configure the channel, START REPLICA IO_THREAD, and wait until the IO thread stops by
    itself; the status then, with no receiver thread left."""
    cursor.execute(change_source)
    cursor.execute(f"START REPLICA IO_THREAD FOR CHANNEL '{CHANNEL}'")
    found = poll(cursor, lambda s: s["Replica_IO_Running"] == "No")
    assert channel_threads() == []
    return found


def channel_threads() -> list[str]:
    """The receiver and applier threads of 'm1' still alive."""
    prefixes = (f"receiver-{CHANNEL}", f"mta-{CHANNEL}", f"csa-{CHANNEL}")
    return sorted(t.name for t in threading.enumerate() if t.name.startswith(prefixes))
