"""A replica's channel 'm1' following a MariaDB source live while the source is loaded, as a
DBA sets it up: the source's binary log starts empty, CHANGE REPLICATION SOURCE TO and
START REPLICA come first, then whatever the test runs on the source; ``caught_up`` waits
until the replica has executed everything the source logged and checks the channel runs."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.receiver.mariadb import mariadb_uuid
from tests.helpers.mariadb import REPL_PASSWORD, REPL_USER, MariaDB
from tests.helpers.replica_channel import APPLIERS, CHANNEL, change_source_at, poll, wait_applied
from tests.helpers.server import connect, executed_gtids

#: What a failed wait shows of SHOW REPLICA STATUS.
WATCHED = ("Replica_SQL_Running", "Last_SQL_Errno", "Last_SQL_Error",
           "Replica_IO_Running", "Last_IO_Errno", "Last_IO_Error")  # fmt: skip


def fresh_source(mariadb: MariaDB, *databases: str) -> None:
    """Drop ``databases`` unlogged and empty the source's binary log (RESET MASTER), so that a
    new replica replays only what comes after."""
    drops = "".join(f"DROP DATABASE IF EXISTS `{d}`;" for d in databases)
    mariadb.sql(f"SET sql_log_bin = 0; {drops} RESET MASTER")


def source_gtids(mariadb: MariaDB) -> GtidSet:
    """Everything the source has logged since RESET MASTER, as the replica names it."""
    position = mariadb.sql("SELECT @@gtid_binlog_pos").strip()
    if not position:
        return GtidSet.parse("")
    domain, server, last = (int(p) for p in position.split("-"))
    return GtidSet.parse(f"{mariadb_uuid(domain, server)}:1-{last}")


@contextmanager
def following(port: int, mariadb: MariaDB, applier: str) -> Iterator[Any]:
    """Channel 'm1' of the replica on ``port`` replicating from ``mariadb`` with ``applier``
    (a key of ``APPLIERS``), its IO thread connected; a cursor on the replica. STOP REPLICA
    on exit."""
    with connect(port) as conn, conn.cursor() as cursor:
        cursor.execute(change_source_at(mariadb.host, mariadb.port, REPL_USER, REPL_PASSWORD))
        cursor.execute(f"CHANGE REPLICATION SOURCE TO {APPLIERS[applier]} "
                       f"FOR CHANNEL '{CHANNEL}'")  # fmt: skip
        cursor.execute(f"START REPLICA FOR CHANNEL '{CHANNEL}'")
        poll(cursor, lambda s: s["Replica_IO_Running"] == "Yes" or s["Last_IO_Errno"] != 0)
        try:
            yield cursor
        finally:
            cursor.execute(f"STOP REPLICA FOR CHANNEL '{CHANNEL}'")


def caught_up(cursor: Any, mariadb: MariaDB, wait: float) -> dict[str, Any]:
    """Wait (at most ``wait`` s) until the replica has executed all the source logged; the
    channel must still be running with no error. The last SHOW REPLICA STATUS."""
    gtids = source_gtids(mariadb)

    def done(status: dict[str, Any]) -> bool:
        return status["Replica_SQL_Running"] != "Yes" or gtids.is_subset(executed_gtids(cursor))

    status = poll(cursor, done, wait)
    failure = {k: status[k] for k in WATCHED}
    assert (status["Replica_SQL_Running"], status["Last_SQL_Errno"]) == ("Yes", 0), failure
    assert status["Replica_IO_Running"] == "Yes", failure
    return wait_applied(cursor, gtids, 1.0)


def recorded(cursor: Any, mariadb: MariaDB, wait: float) -> None:
    """Wait (at most ``wait`` s) until ``mysql.gtid_executed`` holds all the source logged: on
    the Spark engine, the commit point from which queries read."""

    def holds(_: dict[str, Any]) -> bool:
        cursor.execute("SELECT source_uuid, interval_start, interval_end FROM mysql.gtid_executed")
        found = ",".join(f"{uuid}:{start}-{end}" for uuid, start, end in cursor.fetchall())
        return gtids.is_subset(GtidSet.parse(found))

    gtids = source_gtids(mariadb)
    poll(cursor, holds, wait)
