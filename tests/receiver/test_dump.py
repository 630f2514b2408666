"""Pulling a MariaDB source's binary log by GTID (issue 7 §1 and §3: COM_REGISTER_SLAVE,
MariaDB's GTID dump with @slave_connect_state, events 160-163, 1236 for a position the
source does not have). The events come whole and decode with the project's binlog codec."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from spark_replica.applier_core.binlog.events import Event, MariadbGtid, MariadbGtidList, Xid
from spark_replica.applier_core.binlog.rows.rows import RowsEvent
from spark_replica.applier_core.binlog.stream import StreamDecoder
from spark_replica.applier_core.receiver.client import SourceClient, SourceError
from spark_replica.applier_core.receiver.dump import (
    dump_mariadb,
    events,
    prepare_mariadb,
    register_replica,
)
from spark_replica.applier_core.receiver.mariadb import CommitGroups
from tests.helpers.mariadb import REPL_PASSWORD, REPL_USER, MariaDB

REPLICA_SERVER_ID = 100


@pytest.fixture
def client(mariadb: MariaDB) -> Iterator[SourceClient]:
    connection = SourceClient.connect(mariadb.host, mariadb.port, REPL_USER, REPL_PASSWORD)
    try:
        yield connection
    finally:
        connection.close()


def _pull(client: SourceClient, position: str) -> list[Event]:
    """Every event after ``position`` up to the source's current end, decoded."""
    prepare_mariadb(client, position)
    register_replica(client, REPLICA_SERVER_ID)
    dump_mariadb(client, REPLICA_SERVER_ID, blocking=False)
    decoder = StreamDecoder()
    return [decoder.decode(raw) for raw in events(client)]


def _current_position(mariadb: MariaDB) -> str:
    return mariadb.sql("SELECT @@gtid_binlog_pos").strip()


def test_a_gtid_dump_streams_the_new_transactions_whole(
    mariadb: MariaDB, client: SourceClient
) -> None:
    """From the position before two inserts, the dump brings exactly those two transactions:
    a MariaDB GTID event, the Table_map and Write_rows with the row values, and the Xid."""
    mariadb.sql(
        "CREATE DATABASE IF NOT EXISTS dump; CREATE TABLE IF NOT EXISTS dump.t "
        "(id INT PRIMARY KEY, name VARCHAR(20)) CHARACTER SET utf8mb4; DELETE FROM dump.t"
    )
    before = _current_position(mariadb)
    mariadb.sql("INSERT INTO dump.t VALUES (1, 'one'); INSERT INTO dump.t VALUES (2, 'Zoë')")
    after = _current_position(mariadb)

    pulled = _pull(client, before)
    assert any(isinstance(e, MariadbGtidList) for e in pulled)
    gtids = [e for e in pulled if isinstance(e, MariadbGtid)]
    assert [g.gtid_text for g in gtids][-1] == after
    assert len(gtids) == 2
    rows = [row for e in pulled if isinstance(e, RowsEvent) for row in e.rows]
    assert [tuple(r) for r in rows] == [(1, "one"), (2, "Zoë")]
    assert sum(isinstance(e, Xid) for e in pulled) == 2


def test_from_the_current_position_nothing_new_comes(
    mariadb: MariaDB, client: SourceClient
) -> None:
    mariadb.sql("CREATE DATABASE IF NOT EXISTS dump")
    pulled = _pull(client, _current_position(mariadb))
    assert not any(isinstance(e, (MariadbGtid, RowsEvent)) for e in pulled)


def test_a_position_the_source_never_had_is_1236(mariadb: MariaDB, client: SourceClient) -> None:
    mariadb.sql("CREATE DATABASE IF NOT EXISTS dump")
    with pytest.raises(SourceError) as caught:
        _pull(client, "0-1-999999")
    assert caught.value.code == 1236


def test_a_waiting_dump_is_listed_as_a_replica(mariadb: MariaDB, client: SourceClient) -> None:
    """COM_REGISTER_SLAVE: while a blocking dump waits for new events, the source lists the
    replica by its server id (SHOW SLAVE HOSTS)."""
    prepare_mariadb(client, _current_position(mariadb))
    register_replica(client, REPLICA_SERVER_ID, host="replica.example", port=3307)
    dump_mariadb(client, REPLICA_SERVER_ID)
    decoder = StreamDecoder()
    for raw in events(client):  # the header events come at once; then the dump waits
        if isinstance(decoder.decode(raw), MariadbGtidList):
            break
    hosts = [line.split("\t") for line in mariadb.sql("SHOW SLAVE HOSTS").splitlines()]
    assert [h[:3] for h in hosts] == [[str(REPLICA_SERVER_ID), "replica.example", "3307"]]


def test_a_group_commit_becomes_one_logical_clock_group(
    mariadb: MariaDB, client: SourceClient
) -> None:
    """Four clients commit at once while MariaDB waits for four commits per group
    (binlog_commit_wait_count): the dump shows one commit id on the four GTIDs, and the
    adapter gives them one last_committed, so the appliers run them in parallel."""
    mariadb.sql(
        "CREATE DATABASE IF NOT EXISTS dump; CREATE TABLE IF NOT EXISTS dump.g "
        "(id INT PRIMARY KEY); DELETE FROM dump.g"
    )
    before = _current_position(mariadb)
    mariadb.sql("SET GLOBAL binlog_commit_wait_count = 4, binlog_commit_wait_usec = 5000000")
    try:
        clients = [subprocess.Popen(mariadb.command(f"INSERT INTO dump.g VALUES ({n})"))
                   for n in range(1, 5)]  # fmt: skip
        assert [c.wait(60) for c in clients] == [0, 0, 0, 0]
    finally:
        mariadb.sql("SET GLOBAL binlog_commit_wait_count = 0, binlog_commit_wait_usec = 100000")
    gtids = [e for e in _pull(client, before) if isinstance(e, MariadbGtid)]
    assert len(gtids) == 4
    commit_ids = {g.commit_id for g in gtids}
    assert len(commit_ids) == 1 and None not in commit_ids
    groups = CommitGroups()
    assert [groups.next(g) for g in gtids] == [(0, 1), (0, 2), (0, 3), (0, 4)]
