"""Settings survive a restart of the server (T34, WL10500.PERSIST.1, CPT.0030)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.server import connect, running_server


def test_applier_settings_survive_restart_t34(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with running_server(data) as first, connect(first.port) as conn, conn.cursor() as cur:
        cur.execute(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='src', SOURCE_PORT=3310, SOURCE_USER='repl', "
            "SOURCE_PASSWORD='pw', SOURCE_AUTO_POSITION=1, REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, "
            "APPLIER_VERSION=2, APPLIER_WORKER_COUNT=12, APPLIER_EVENT_MEMORY_LIMIT=2147483648 "
            "FOR CHANNEL 'c1'"
        )
        cur.execute("CHANGE REPLICATION SOURCE TO SOURCE_HOST='other' FOR CHANNEL 'c2'")
        cur.execute("SET GLOBAL replica_parallel_workers=7, replica_transaction_retries=3")
        cur.execute("SELECT @@server_uuid")
        server_uuid = cur.fetchone()[0]

    with running_server(data) as second, connect(second.port) as conn, conn.cursor() as cur:
        cur.execute(
            "SELECT CHANNEL_NAME, APPLIER_VERSION, APPLIER_WORKER_COUNT, "
            "APPLIER_EVENT_MEMORY_LIMIT FROM performance_schema.replication_applier_configuration "
            "ORDER BY CHANNEL_NAME"
        )
        assert cur.fetchall() == (("c1", 2, 12, 2147483648), ("c2", 1, 4, 0))
        cur.execute(
            "SELECT Channel_name, Applier_version, Applier_worker_count, "
            "Applier_event_memory_limit FROM mysql.slave_relay_log_info WHERE Channel_name='c1'"
        )
        assert cur.fetchall() == (("c1", 2, 12, 2147483648),)
        cur.execute(
            "SELECT CHANNEL_NAME, HOST, PORT, USER, AUTO_POSITION, GTID_ONLY "
            "FROM performance_schema.replication_connection_configuration ORDER BY CHANNEL_NAME"
        )
        assert cur.fetchall() == (
            ("c1", "src", 3310, "repl", "1", "1"),
            ("c2", "other", 3306, "", "0", "0"),
        )
        cur.execute(
            "SELECT @@replica_parallel_workers, @@replica_transaction_retries, @@server_uuid"
        )
        assert cur.fetchone() == (7, 3, server_uuid)


def test_thread_state_in_status_tables(server: int) -> None:
    """THREAD_ID is set while a thread runs and NULL after STOP (mysql-reference §1)."""
    with connect(server) as conn, conn.cursor() as cur:
        cur.execute("CHANGE REPLICATION SOURCE TO SOURCE_HOST='src' FOR CHANNEL 'c1'")
        cur.execute("START REPLICA FOR CHANNEL 'c1'")
        cur.execute(
            "SELECT THREAD_ID IS NOT NULL, SERVICE_STATE FROM "
            "performance_schema.replication_connection_status"
        )
        assert cur.fetchall() == ((1, "CONNECTING"),)
        cur.execute("SHOW REPLICA STATUS FOR CHANNEL 'c1'")
        row = dict(zip([d[0] for d in cur.description], cur.fetchone(), strict=True))
        assert (row["Replica_IO_Running"], row["Replica_SQL_Running"]) == ("Connecting", "Yes")
        assert row["Channel_Name"] == "c1"
        cur.execute("STOP REPLICA FOR CHANNEL 'c1'")
        cur.execute(
            "SELECT THREAD_ID, SERVICE_STATE FROM performance_schema.replication_connection_status"
        )
        assert cur.fetchall() == ((None, "OFF"),)
        cur.execute("SHOW REPLICA STATUS")
        row = dict(zip([d[0] for d in cur.description], cur.fetchone(), strict=True))
        assert (row["Replica_IO_Running"], row["Replica_SQL_Running"]) == ("No", "No")
        assert row["Seconds_Behind_Source"] is None


def test_applier_error_shows_in_replica_status(tmp_path: Path) -> None:
    """An applier that stops with an error shows it in SHOW REPLICA STATUS (ERR.12)."""
    from tests.helpers.idle_applier import IdleComponents

    idle = IdleComponents()
    with running_server(tmp_path / "d", idle.components()) as srv, connect(srv.port) as conn:
        with conn.cursor() as cur:
            cur.execute("CHANGE REPLICATION SOURCE TO SOURCE_HOST='src' FOR CHANNEL 'c1'")
            cur.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c1'")
            idle.started[-1].fail(1062, "Duplicate entry '1' for key 't.PRIMARY'")
            cur.execute("SHOW REPLICA STATUS FOR CHANNEL 'c1'")
            row = dict(zip([d[0] for d in cur.description], cur.fetchone(), strict=True))
            assert row["Replica_SQL_Running"] == "No"
            assert row["Last_SQL_Errno"] == 1062
            assert row["Last_SQL_Error"] == "Duplicate entry '1' for key 't.PRIMARY'"
            assert row["Last_Errno"] == 1062
            cur.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c1'")
            cur.execute("SHOW REPLICA STATUS FOR CHANNEL 'c1'")
            row = dict(zip([d[0] for d in cur.description], cur.fetchone(), strict=True))
            assert (row["Replica_SQL_Running"], row["Last_SQL_Errno"]) == ("Yes", 0)
            cur.execute("STOP REPLICA")
