"""Replicated accounts on the Spark engine: the rows each account may read are the rows the
MariaDB source gives the same user, query by query, and after a restart of the replica the
accounts are there again as of its last commit point (they are recorded with the data)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from spark_replica.server.storage import configured_components
from tests.helpers.live_source import caught_up, following, recorded
from tests.helpers.mariadb import MariaDB
from tests.helpers.server import running_server
from tests.receiver.test_replicated_accounts import QUERIES, SOURCE, _login, _outcome, _run

pytestmark = pytest.mark.spark

WAIT = 120.0
USERS = (("acct_a", "a-pw"), ("acct_b", "b-pw2"), ("acct_c", "c-pw"), ("acct_moved", "g-pw"))


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
    with running_server(tmp_path / "data", configured_components) as replica:
        with following(replica.port, mariadb, "csa") as cursor:
            caught_up(cursor, mariadb, WAIT)
            recorded(cursor, mariadb, WAIT)  # the commit point queries read: all of it
        _compare(mariadb, replica.port)
    with running_server(tmp_path / "data", configured_components) as again:
        _compare(mariadb, again.port)
        gone = _outcome(partial(_login, "127.0.0.1", again.port, "acct_gone", "g-pw"))
        assert gone == ("error", 1045)
