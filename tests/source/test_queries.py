"""The statements the built-in source answers: what a replica asks before a dump (system
variables, its own user variables), and a DBA's binary log statements (SHOW BINARY LOGS,
SHOW BINARY LOG STATUS, SHOW REPLICAS, FLUSH BINARY LOGS, PURGE BINARY LOGS TO); anything
else is MySQL's 1235. Values are checked against the files on disk."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.events import Rotate
from spark_replica.applier_core.binlog.stream import StreamDecoder
from spark_replica.applier_core.receiver.client import SourceClient, SourceError
from spark_replica.applier_core.receiver.dump import register_replica
from spark_replica.applier_core.receiver.protocol import COM_PING
from spark_replica.tools.source import SourceBinlog, SourceServer
from tests.source.conftest import (
    SERVER_ID,
    UUID,
    Connect,
    MakeBinlog,
    append_workload,
    disk_files,
    file_events,
    gtids,
)

FILLED = 30
REPLICA_UUID = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"


@pytest.fixture
def binlog(make_binlog: MakeBinlog) -> SourceBinlog:
    return make_binlog(FILLED)


@pytest.fixture
def client(server: SourceServer, connect: Connect) -> SourceClient:
    return connect(server)


def _one(client: SourceClient, sql: str) -> str | None:
    result = client.query(sql)
    assert len(result.rows) == 1 and len(result.rows[0]) == 1, result
    return result.rows[0][0]


def _refused(client: SourceClient, sql: str) -> tuple[int, str, str]:
    with pytest.raises(SourceError) as caught:
        client.query(sql)
    return (caught.value.code, caught.value.sqlstate, caught.value.message)


def _on_disk(directory: Path) -> list[tuple[str | None, ...]]:
    return [(name, str(os.stat(directory / name).st_size), "No") for name in disk_files(directory)]


# -- SELECT and SET --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "value"),
    [
        ("SELECT @@GLOBAL.SERVER_ID", str(SERVER_ID)),
        ("SELECT @@GLOBAL.SERVER_UUID", UUID),
        ("SELECT @@GLOBAL.GTID_MODE", "ON"),
        ("SELECT @@global.binlog_checksum", "CRC32"),
        ("SELECT @@binlog_format", "ROW"),
        ("SELECT @@SESSION.server_id", str(SERVER_ID)),
        ("SELECT @@GLOBAL.gtid_executed", f"{UUID}:1-{FILLED}"),
        ("SELECT @@GLOBAL.gtid_purged", ""),
        ("SELECT @@version", "8.4.0-spark-replica"),
        ("SELECT VERSION()", "8.4.0-spark-replica"),
        ("SELECT 42", "42"),
        ("SELECT 'it''s'", "it's"),
        ("SELECT NULL", None),
    ],
)
def test_select_values(client: SourceClient, sql: str, value: str | None) -> None:
    assert _one(client, sql) == value


def test_the_column_names_are_the_expressions_or_aliases(client: SourceClient) -> None:
    result = client.query("SELECT @@GLOBAL.SERVER_ID, @@GLOBAL.SERVER_UUID AS uuid")
    assert result.columns == ["@@GLOBAL.SERVER_ID", "uuid"]
    assert result.rows == [(str(SERVER_ID), UUID)]


def test_gtid_executed_follows_the_binary_log(client: SourceClient, binlog: SourceBinlog) -> None:
    append_workload(binlog, FILLED + 1, FILLED + 2)
    assert _one(client, "SELECT @@GLOBAL.gtid_executed") == f"{UUID}:1-{FILLED + 2}"


def test_unix_timestamp_is_the_source_clock(client: SourceClient) -> None:
    before = int(time.time())
    value = _one(client, "SELECT UNIX_TIMESTAMP()")
    assert value is not None and before <= int(value) <= int(time.time())


def test_set_a_user_variable_from_a_system_variable(client: SourceClient) -> None:
    """What a MySQL replica runs before a dump, and reads back."""
    assert _one(client, "SELECT @source_binlog_checksum") is None
    assert client.query("SET @source_binlog_checksum = @@global.binlog_checksum").rows == []
    assert _one(client, "SELECT @source_binlog_checksum") == "CRC32"
    client.query("SET @master_heartbeat_period = 1000000000, @replica_uuid = 'r-1'")
    result = client.query("SELECT @master_heartbeat_period, @replica_uuid")
    assert result.rows == [("1000000000", "r-1")]


def test_user_variables_belong_to_their_session(
    server: SourceServer, connect: Connect, client: SourceClient
) -> None:
    client.query("SET @source_binlog_checksum = 'CRC32'")
    other = connect(server)
    assert _one(other, "SELECT @source_binlog_checksum") is None


def test_session_settings_are_accepted(client: SourceClient) -> None:
    for sql in ("SET NAMES utf8mb4", "SET SESSION wait_timeout = 3600", "SET autocommit = 1"):
        assert client.query(sql).rows == []


def test_an_unknown_system_variable_is_1193(client: SourceClient) -> None:
    assert _refused(client, "SELECT @@GLOBAL.no_such_thing") == (
        1193, "HY000", "Unknown system variable 'no_such_thing'")  # fmt: skip


# -- binary log statements -------------------------------------------------------------------------


def test_show_binary_logs_lists_the_files_on_disk(client: SourceClient, tmp_path: Path) -> None:
    result = client.query("SHOW BINARY LOGS")
    assert result.columns == ["Log_name", "File_size", "Encrypted"]
    assert len(result.rows) > 3
    assert result.rows == _on_disk(tmp_path / "binlog")
    assert client.query("SHOW MASTER LOGS").rows == result.rows


def test_show_binary_log_status_is_the_published_end(
    client: SourceClient, binlog: SourceBinlog, tmp_path: Path
) -> None:
    result = client.query("SHOW BINARY LOG STATUS")
    assert result.columns == [
        "File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB", "Executed_Gtid_Set"]  # fmt: skip
    last = disk_files(tmp_path / "binlog")[-1]
    size = os.stat(tmp_path / "binlog" / last).st_size
    assert result.rows == [(last, str(size), "", "", f"{UUID}:1-{FILLED}")]
    assert binlog.end() == (last, size)
    append_workload(binlog, FILLED + 1, FILLED + 1)
    file, position = binlog.end()
    assert client.query("SHOW MASTER STATUS").rows == [
        (file, str(position), "", "", f"{UUID}:1-{FILLED + 1}")]  # fmt: skip


def test_show_replicas_lists_registered_replicas(
    server: SourceServer, connect: Connect, client: SourceClient
) -> None:
    """COM_REGISTER_SLAVE: the replica's server id, reported host and port, the source's
    server id (MySQL puts its own when the replica sends 0) and the replica's UUID (from
    @replica_uuid); it goes from the list when its connection ends."""
    assert client.query("SHOW REPLICAS").rows == []
    replica = connect(server)
    replica.query(f"SET @replica_uuid = '{REPLICA_UUID}'")
    register_replica(replica, 42, host="replica.example", port=3310)
    result = client.query("SHOW REPLICAS")
    assert result.columns == ["Server_Id", "Host", "Port", "Source_Id", "Replica_UUID"]
    assert result.rows == [("42", "replica.example", "3310", str(SERVER_ID), REPLICA_UUID)]
    assert client.query("SHOW SLAVE HOSTS").rows == result.rows
    replica.close()
    deadline = time.monotonic() + 10
    while client.query("SHOW REPLICAS").rows and time.monotonic() < deadline:
        pass
    assert client.query("SHOW REPLICAS").rows == []


def test_a_replica_without_a_reported_host_is_listed_with_its_address(
    server: SourceServer, connect: Connect, client: SourceClient
) -> None:
    replica = connect(server)
    register_replica(replica, 43)
    assert client.query("SHOW REPLICAS").rows == [("43", "127.0.0.1", "0", str(SERVER_ID), "")]


def test_flush_binary_logs_rotates(
    client: SourceClient, binlog: SourceBinlog, tmp_path: Path
) -> None:
    directory = tmp_path / "binlog"
    before = disk_files(directory)
    assert client.query("FLUSH BINARY LOGS").rows == []
    after = disk_files(directory)
    assert after[:-1] == before
    new = after[-1]
    assert new == f"binlog.{len(before) + 1:06d}"
    decoder = StreamDecoder()
    last_of_old = [decoder.decode(raw) for _, _, raw in file_events(directory / before[-1])][-1]
    assert isinstance(last_of_old, Rotate)
    assert (last_of_old.next_file, last_of_old.position) == (new, 4)
    header_end = file_events(directory / new)[-1][1]
    assert client.query("SHOW BINARY LOG STATUS").rows[0][:2] == (new, str(header_end))
    assert client.query("SHOW BINARY LOGS").rows == _on_disk(directory)
    assert binlog.previous_gtids(new) == gtids(1, FILLED)


def test_purge_binary_logs_to(client: SourceClient, binlog: SourceBinlog, tmp_path: Path) -> None:
    directory = tmp_path / "binlog"
    names = disk_files(directory)
    assert client.query(f"PURGE BINARY LOGS TO '{names[2]}'").rows == []
    assert disk_files(directory) == names[2:]
    assert client.query("SHOW BINARY LOGS").rows == _on_disk(directory)
    purged = _one(client, "SELECT @@GLOBAL.gtid_purged")
    assert purged == binlog.previous_gtids(names[2]).format(",\n")  # type: ignore[union-attr]
    assert purged and purged.startswith(f"{UUID}:1-")
    assert client.query(f"purge master logs to '{names[3]}'").rows == []
    assert disk_files(directory) == names[3:]


def test_purge_binary_logs_to_an_unknown_file_is_1373(client: SourceClient, tmp_path: Path) -> None:
    before = disk_files(tmp_path / "binlog")
    assert _refused(client, "PURGE BINARY LOGS TO 'binlog.999999'") == (
        1373, "HY000", "Target log not found in binlog index")  # fmt: skip
    assert disk_files(tmp_path / "binlog") == before


@pytest.mark.parametrize(
    ("sql", "shown"),
    [
        ("SHOW DATABASES", "SHOW DATABASES"),
        ("DROP   TABLE t", "DROP TABLE t"),
        ("SELECT * FROM mysql.user", "SELECT * FROM mysql.user"),
        ("RESET BINARY LOGS AND GTIDS", "RESET BINARY LOGS AND GTIDS"),
    ],
)
def test_anything_else_is_1235(client: SourceClient, sql: str, shown: str) -> None:
    assert _refused(client, sql) == (
        1235, "42000", f"This version of MySQL doesn't yet support '{shown}'")  # fmt: skip
    assert _one(client, "SELECT 1") == "1"  # the connection goes on


def test_ping_and_an_unknown_command(client: SourceClient) -> None:
    client.command(COM_PING)
    client.expect_ok()
    client.command(0x04, b"t\0")  # COM_FIELD_LIST
    with pytest.raises(SourceError) as caught:
        client.expect_ok()
    assert (caught.value.code, caught.value.sqlstate, caught.value.message) == (
        1047, "08S01", "Unknown command")  # fmt: skip
