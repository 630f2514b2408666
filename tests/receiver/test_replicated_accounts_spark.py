"""Replicated accounts on the Spark engine: the rows each account may read are the rows the
MariaDB source gives the same user, query by query, and after a restart of the replica the
accounts are there again as of its last commit point (they are recorded with the data)."""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.receiver.mariadb import mariadb_uuid
from spark_replica.server.storage import configured_components
from tests.helpers.mariadb import REPL_PASSWORD, REPL_USER, MariaDB
from tests.helpers.replica_channel import APPLIERS, CHANNEL, change_source_at, wait_applied
from tests.helpers.server import connect, running_server
from tests.receiver.test_replicated_accounts import QUERIES, SOURCE, _login, _outcome, _run

pytestmark = pytest.mark.spark

WAIT = 120.0
USERS = (("acct_a", "a-pw"), ("acct_b", "b-pw2"), ("acct_c", "c-pw"), ("acct_moved", "g-pw"))


def _wait_visible(cursor: Any) -> None:
    """As a DBA would: until a query sees the last table's rows (queries read the last
    commit point)."""
    deadline = time.monotonic() + WAIT
    while _run(cursor.connection, "SELECT * FROM acct_other.t") != [(9,)]:
        assert time.monotonic() < deadline, "acct_other.t never reached the queries"
        time.sleep(0.2)


def _compare(mariadb: MariaDB, port: int) -> None:
    for user, password in USERS:
        with _login(mariadb.host, mariadb.port, user, password) as theirs:
            with _login("127.0.0.1", port, user, password) as ours:
                for query in QUERIES:
                    assert _run(ours, query) == _run(theirs, query), (user, query)


def test_accounts_read_the_rows_the_source_gives_them_and_survive_a_restart(
    mariadb: MariaDB, tmp_path: Path
) -> None:
    for statement in SOURCE:
        mariadb.sql(statement)
    domain, server, last = (int(p) for p in mariadb.sql(
        "SELECT @@gtid_binlog_pos").strip().split("-"))  # fmt: skip
    everything = GtidSet.parse(f"{mariadb_uuid(domain, server)}:1-{last}")
    with running_server(tmp_path / "data", configured_components) as replica:
        with connect(replica.port) as conn, conn.cursor() as cursor:
            cursor.execute(change_source_at(mariadb.host, mariadb.port, REPL_USER, REPL_PASSWORD))
            cursor.execute(
                f"CHANGE REPLICATION SOURCE TO {APPLIERS['csa']} FOR CHANNEL '{CHANNEL}'"
            )
            cursor.execute(f"START REPLICA FOR CHANNEL '{CHANNEL}'")
            status = wait_applied(cursor, everything, WAIT)
            assert (status["Last_SQL_Errno"], status["Last_SQL_Error"]) == (0, "")
            cursor.execute(f"STOP REPLICA FOR CHANNEL '{CHANNEL}'")
            _wait_visible(cursor)
        _compare(mariadb, replica.port)
    with running_server(tmp_path / "data", configured_components) as again:
        _compare(mariadb, again.port)
        gone = _outcome(partial(_login, "127.0.0.1", again.port, "acct_gone", "g-pw"))
        assert gone == ("error", 1045)
