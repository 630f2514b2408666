"""A replica whose metadata store is on PostgreSQL keeps its channels, their status and the
persisted variables across a restart (T34, WL10500.PERSIST.1, CPT.0030)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spark_replica.metadata import open_store
from tests.helpers.server import connect, running_server

CHANNELS = ("c1", "c2")


def _replica_status(cur: Any, channel: str) -> dict[str, object]:
    cur.execute(f"SHOW REPLICA STATUS FOR CHANNEL '{channel}'")
    return dict(zip([d[0] for d in cur.description], cur.fetchone(), strict=True))


def _metadata_rows(cur: Any) -> tuple[tuple[object, ...], ...]:
    cur.execute("SELECT * FROM mysql.slave_master_info ORDER BY Channel_name")
    masters = cur.fetchall()
    cur.execute("SELECT * FROM mysql.slave_relay_log_info ORDER BY Channel_name")
    return masters + cur.fetchall()


def test_channels_survive_a_restart_with_metadata_on_postgresql(
    tmp_path: Path, postgres_url: str
) -> None:
    data = tmp_path / "data"
    with (
        running_server(data, metadata_url=postgres_url) as first,
        connect(first.port) as conn,
        conn.cursor() as cur,
    ):
        cur.execute(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='src', SOURCE_PORT=3310, "
            "SOURCE_USER='repl', SOURCE_PASSWORD='pw', SOURCE_AUTO_POSITION=1, GTID_ONLY=1, "
            "REQUIRE_ROW_FORMAT=1, APPLIER_VERSION=2, "
            "APPLIER_WORKER_COUNT=12, APPLIER_EVENT_MEMORY_LIMIT=2147483648 FOR CHANNEL 'c1'"
        )
        cur.execute(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='other', SOURCE_CONNECT_RETRY=4294967295, "
            "SOURCE_LOG_FILE='binlog.000007', SOURCE_LOG_POS=8589934592, IGNORE_SERVER_IDS=(3, 4) "
            "FOR CHANNEL 'c2'"
        )
        cur.execute("SET GLOBAL replica_parallel_workers=7")
        cur.execute("SELECT @@server_uuid")
        server_uuid = cur.fetchone()[0]
        before = [_replica_status(cur, c) for c in CHANNELS]
        rows_before = _metadata_rows(cur)
    assert not (data / "metadata.db").exists()
    stored = open_store(postgres_url)  # the metadata is in PostgreSQL, as an operator sees it
    try:
        channels = stored.load_channels()
    finally:
        stored.close()
    assert [(c.name, c.connection.user, c.connection.password) for c in channels] == [
        ("c1", "repl", "pw"),
        ("c2", "", ""),
    ]

    with (
        running_server(data, metadata_url=postgres_url) as second,
        connect(second.port) as conn,
        conn.cursor() as cur,
    ):
        c1, c2 = after = [_replica_status(cur, c) for c in CHANNELS]
        assert after == before
        assert (c1["Source_Host"], c1["Source_Port"], c1["Source_User"]) == ("src", 3310, "repl")
        assert (c1["Auto_Position"], c2["Replicate_Ignore_Server_Ids"]) == (1, "3, 4")
        assert (c2["Source_Host"], c2["Connect_Retry"]) == ("other", 4294967295)
        assert (c2["Source_Log_File"], c2["Read_Source_Log_Pos"]) == ("binlog.000007", 8589934592)
        assert (c1["Replica_IO_Running"], c2["Replica_SQL_Running"]) == ("No", "No")

        assert _metadata_rows(cur) == rows_before
        cur.execute(
            "SELECT Channel_name, Host, Port, Connect_retry, Master_log_pos, User_name "
            "FROM mysql.slave_master_info ORDER BY Channel_name"
        )
        assert cur.fetchall() == (
            ("c1", "src", 3310, 60, 4, "repl"),
            ("c2", "other", 3306, 4294967295, 8589934592, ""),
        )
        cur.execute(
            "SELECT Channel_name, Require_row_format, Applier_version, Applier_worker_count, "
            "Applier_event_memory_limit FROM mysql.slave_relay_log_info ORDER BY Channel_name"
        )
        assert cur.fetchall() == (("c1", 1, 2, 12, 2147483648), ("c2", 0, 1, 4, 0))
        cur.execute("SELECT @@replica_parallel_workers, @@server_uuid")
        assert cur.fetchone() == (7, server_uuid)
