"""A MariaDB source's binary log, pulled by GTID, converted (docs/decisions/0009) and written
to a channel's relay log as the receiver writes it, is applied by both appliers to exactly
the source's content (issue 7 §3: DDL, updates, deletes, a group commit, MariaDB GTIDs)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.codecs.registry import encode_event_at
from spark_replica.applier_core.binlog.constants import EventFlag, EventType
from spark_replica.applier_core.binlog.events import (
    FormatDescription,
    Gtid,
    Query,
    Rotate,
    Xid,
    make_header,
)
from spark_replica.applier_core.binlog.file import BinlogFileReader
from spark_replica.applier_core.binlog.relaylog import RelayLog, RelayLogWriter
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.receiver.client import SourceClient
from spark_replica.applier_core.receiver.convert import MariadbConverter
from spark_replica.applier_core.receiver.dump import (
    dump_mariadb,
    events,
    prepare_mariadb,
    register_replica,
)
from spark_replica.applier_core.receiver.mariadb import mariadb_uuid
from tests.helpers.mariadb import REPL_PASSWORD, REPL_USER, MariaDB
from tests.unit.csa_apply.harness import CHANNEL, Replica, engine_content, relay_log_directory
from tests.unit.mta.harness import MtaReplica

REPLICA_SERVER_ID = 200
RELAY_FDE = FormatDescription.for_server("8.4.0", server_id=REPLICA_SERVER_ID,
                                         flags=EventFlag.RELAY_LOG)  # fmt: skip
WORKLOAD = (
    "CREATE DATABASE e2e; "
    "CREATE TABLE e2e.items (id INT PRIMARY KEY, name VARCHAR(40), qty INT) "
    "CHARACTER SET utf8mb4; "
    "INSERT INTO e2e.items VALUES (1, 'apple', 3), (2, 'pear', 5), (3, 'fig', 7); "
    "UPDATE e2e.items SET qty = qty + 10 WHERE id = 2; "
    "DELETE FROM e2e.items WHERE id = 3; "
    "INSERT INTO e2e.items VALUES (4, 'Zoë''s plum', 1); "
    "CREATE TABLE e2e.notes (id INT PRIMARY KEY, body VARCHAR(20)); "
    "INSERT INTO e2e.notes VALUES (1, 'a'), (2, 'b')"
)


def _pull_into_relay_log(mariadb: MariaDB, data_dir: Path, position: str) -> None:
    """What the receiver does: dump from ``position`` to the source's current end, convert,
    append to the channel's relay log (its own Format_description heads the file)."""
    relay = RelayLog.for_channel(data_dir, CHANNEL)
    relay.open()
    writer: RelayLogWriter

    def rotate(next_name: str) -> bytes:
        event = Rotate(make_header(EventType.ROTATE, flags=EventFlag.RELAY_LOG), 4, next_name)
        return encode_event_at(event, writer.position.offset, checksum=True)

    writer = RelayLogWriter(
        relay, make_header=lambda: encode_event_at(RELAY_FDE, 4, checksum=True),
        make_rotate=rotate,
    )  # fmt: skip
    writer.open()
    client = SourceClient.connect(mariadb.host, mariadb.port, REPL_USER, REPL_PASSWORD)
    try:
        prepare_mariadb(client, position)
        register_replica(client, REPLICA_SERVER_ID)
        dump_mariadb(client, REPLICA_SERVER_ID, blocking=False)
        converter = MariadbConverter()
        for raw in events(client):
            for event in converter.convert(raw):
                writer.append(event)
    finally:
        client.close()
        writer.close()
        relay.close()


def _source_content(mariadb: MariaDB) -> dict[str, list[tuple[object, ...]]]:
    def rows(query: str) -> list[tuple[object, ...]]:
        lines = mariadb.sql(query).splitlines()
        return [tuple(int(v) if v.lstrip("-").isdigit() else v for v in line.split("\t"))
                for line in lines]  # fmt: skip

    return {
        "e2e.items": rows("SELECT id, name, qty FROM e2e.items ORDER BY id"),
        "e2e.notes": rows("SELECT id, body FROM e2e.notes ORDER BY id"),
    }


@pytest.mark.parametrize("applier", ["csa", "mta"])
def test_a_mariadb_stream_applies_to_the_source_content(
    mariadb: MariaDB, tmp_path: Path, applier: str
) -> None:
    mariadb.sql("DROP DATABASE IF EXISTS e2e")
    start = mariadb.sql("SELECT @@gtid_binlog_pos").strip()
    mariadb.sql(WORKLOAD)
    mariadb.sql("SET GLOBAL binlog_commit_wait_count = 3, binlog_commit_wait_usec = 5000000")
    try:  # a group commit of three: one logical-clock group for the appliers
        clients = [subprocess.Popen(mariadb.command(f"INSERT INTO e2e.notes VALUES ({n}, 'g')"))
                   for n in (10, 11, 12)]  # fmt: skip
        assert [c.wait(60) for c in clients] == [0, 0, 0]
    finally:
        mariadb.sql("SET GLOBAL binlog_commit_wait_count = 0, binlog_commit_wait_usec = 100000")
    end = mariadb.sql("SELECT @@gtid_binlog_pos").strip()
    domain, server, last = (int(part) for part in end.split("-"))
    first = int(start.split("-")[2]) + 1 if start else 1
    data_dir = tmp_path / "data"
    _pull_into_relay_log(mariadb, data_dir, start)

    replica: Replica | MtaReplica
    if applier == "csa":
        replica = Replica(data_dir, workers=4)
    else:
        replica = MtaReplica(data_dir, workers=4, server_id=REPLICA_SERVER_ID)
    try:
        replica.run_until_applied(f"{mariadb_uuid(domain, server)}:{first}-{last}")
        expected = GtidSet.parse(f"{mariadb_uuid(domain, server)}:{first}-{last}")
        assert expected.is_subset(replica.executed.snapshot())
        content = engine_content(replica.engine)
    finally:
        replica.close()
    assert {k: content[k] for k in ("e2e.items", "e2e.notes")} == _source_content(mariadb)


def test_the_relay_log_holds_a_mysql_sources_events(mariadb: MariaDB, tmp_path: Path) -> None:
    """Each MariaDB transaction arrives as a MySQL one: GTID event (33) with the encoded UUID
    and the MariaDB sequence number, BEGIN, the row events, Xid; a DDL as GTID and its Query.
    No MariaDB-only event (160, 161, 162, 163) is left."""
    mariadb.sql("DROP DATABASE IF EXISTS shape")
    start = mariadb.sql("SELECT @@gtid_binlog_pos").strip()
    mariadb.sql(
        "CREATE DATABASE shape; CREATE TABLE shape.t (id INT PRIMARY KEY); "
        "INSERT INTO shape.t VALUES (1)"
    )
    end = mariadb.sql("SELECT @@gtid_binlog_pos").strip()
    data_dir = tmp_path / "data"
    _pull_into_relay_log(mariadb, data_dir, start)
    [relay_file] = sorted(relay_log_directory(data_dir, CHANNEL).glob("*.0*"))
    kinds = [event.header.type_code for _, _, event in BinlogFileReader(relay_file)]
    assert not set(kinds) & {160, 161, 162, 163}
    decoded = [event for _, _, event in BinlogFileReader(relay_file)]
    gtids = [e for e in decoded if isinstance(e, Gtid)]
    domain, server, last = (int(part) for part in end.split("-"))
    assert [(g.uuid, g.gno) for g in gtids][-1] == (mariadb_uuid(domain, server), last)
    after_gtid = [decoded[decoded.index(g) + 1] for g in gtids]
    statements = [e.query for e in after_gtid if isinstance(e, Query)]
    assert statements == ["CREATE DATABASE shape",
                          "CREATE TABLE shape.t (id INT PRIMARY KEY)", "BEGIN"]  # fmt: skip
    assert isinstance(decoded[-1], Xid)
