"""START REPLICA on a CSA channel applies the binary logs in its relay log directory, through
the wire: status tables, executed GTIDs, errors (issue: CSA wiring; T35, T41 via SQL)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.storage import InMemoryEngine
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.helpers.server import connect, executed_gtids
from tests.unit.csa_apply.harness import (
    copy_into_relay_log,
    engine_content,
    generate,
    insert_locally,
)

CSA_CHANNEL = (
    "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h1', SOURCE_AUTO_POSITION=1, "
    "REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2, APPLIER_WORKER_COUNT=3 "
    "FOR CHANNEL 'c1'"
)
SPEC = WorkloadSpec(tables=2, rows_per_table=10, transactions=120, seed=5)
WAIT = 60.0


def _wait_until(predicate: Any) -> bool:
    """Poll a status query until ``predicate()`` holds (what a DBA does in the CLI)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def _status(cursor: Any) -> dict[str, Any]:
    cursor.execute("SHOW REPLICA STATUS FOR CHANNEL 'c1'")
    names = [d[0] for d in cursor.description]
    return dict(zip(names, cursor.fetchone(), strict=True))


def test_start_replica_applies_the_relay_log(
    tmp_path: Path, port: int, engine: InMemoryEngine
) -> None:
    transactions, content, files = generate(SPEC, tmp_path / "source")
    copy_into_relay_log(files, tmp_path / "data")
    everything = GtidSet.parse(f"{SPEC.server_uuid}:1-{len(transactions)}")
    with connect(port) as conn, conn.cursor() as cursor:
        cursor.execute(CSA_CHANNEL)
        cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c1'")
        assert _wait_until(lambda: everything.is_subset(executed_gtids(cursor)))
        status = _status(cursor)
        assert status["Replica_SQL_Running"] == "Yes"
        assert GtidSet.parse(status["Executed_Gtid_Set"]) == everything
        cursor.execute(
            "SELECT WORKER_ID, THREAD_ID IS NOT NULL FROM "
            "performance_schema.replication_applier_status_by_worker "
            "WHERE CHANNEL_NAME = 'c1' ORDER BY WORKER_ID"
        )
        assert list(cursor.fetchall()) == [(1, 1), (2, 1), (3, 1)]
        assert _wait_until(lambda: _committed(cursor) == len(transactions))
        cursor.execute("STOP REPLICA SQL_THREAD FOR CHANNEL 'c1'")
        assert _status(cursor)["Replica_SQL_Running"] == "No"
    assert engine_content(engine) == content


def _committed(cursor: Any) -> int:
    cursor.execute(
        "SELECT TRANSACTIONS_COMMITTED FROM performance_schema.replication_applier_metrics "
        "WHERE CHANNEL_NAME = 'c1'"
    )
    return int(cursor.fetchone()[0])


def test_an_apply_error_stops_the_sql_thread_with_mysqls_texts(
    tmp_path: Path, port: int, engine: InMemoryEngine
) -> None:
    transactions, _, files = generate(SPEC, tmp_path / "source")
    copy_into_relay_log(files, tmp_path / "data")
    insert = next(c for t in transactions[20:] for c in t.changes if c.kind == "insert")
    with connect(port) as conn, conn.cursor() as cursor:
        cursor.execute(CSA_CHANNEL)
        cursor.execute(
            f"START REPLICA SQL_THREAD UNTIL SQL_AFTER_GTIDS='{SPEC.server_uuid}:1-6' "
            "FOR CHANNEL 'c1'"
        )
        assert _wait_until(lambda: _status(cursor)["Replica_SQL_Running"] == "No")
        assert _status(cursor)["Last_SQL_Errno"] == 0
        assert insert.after is not None
        insert_locally(engine, insert.table.schema, insert.table.name, insert.after)
        cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c1'")
        assert _wait_until(lambda: _status(cursor)["Replica_SQL_Running"] == "No")
        status = _status(cursor)
        assert status["Last_SQL_Errno"] == 1062
        assert status["Last_SQL_Error"].startswith("Replica SQL for channel 'c1': Worker ")
        assert "Error_code: 1062; handler error HA_ERR_FOUND_DUPP_KEY" in status["Last_SQL_Error"]
        cursor.execute(
            "SELECT LAST_ERROR_NUMBER, LAST_ERROR_MESSAGE FROM "
            "performance_schema.replication_applier_status_by_worker "
            "WHERE CHANNEL_NAME = 'c1' AND LAST_ERROR_NUMBER <> 0"
        )
        failed = cursor.fetchall()
        assert len(failed) == 1 and failed[0][0] == 1062
        assert failed[0][1].startswith("Worker ")


def test_reset_replica_deletes_the_relay_log_files(
    tmp_path: Path, port: int, engine: InMemoryEngine
) -> None:
    """RESET REPLICA (stopped channel) deletes every relay log file and empties the index;
    what was applied stays applied (gtid_executed is the server's, not the channel's)."""
    transactions, content, files = generate(SPEC, tmp_path / "source")
    copy_into_relay_log(files, tmp_path / "data")
    relay_dir = tmp_path / "data" / "relay" / "c1"
    assert sorted(p.name for p in relay_dir.glob("binlog.*")) == [p.name for p in files]
    everything = GtidSet.parse(f"{SPEC.server_uuid}:1-{len(transactions)}")
    with connect(port) as conn, conn.cursor() as cursor:
        cursor.execute(CSA_CHANNEL)
        cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c1'")
        assert _wait_until(lambda: everything.is_subset(executed_gtids(cursor)))
        cursor.execute("STOP REPLICA SQL_THREAD FOR CHANNEL 'c1'")
        cursor.execute("RESET REPLICA FOR CHANNEL 'c1'")
        assert list(relay_dir.glob("binlog.*")) == []
        assert (relay_dir / "relay-bin-c1.index").read_text() == ""
        cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c1'")  # nothing left to apply
        assert _status(cursor)["Replica_SQL_Running"] == "Yes"
        cursor.execute("STOP REPLICA SQL_THREAD FOR CHANNEL 'c1'")
        assert executed_gtids(cursor) == everything
        cursor.execute("RESET REPLICA ALL FOR CHANNEL 'c1'")  # the channel goes too
        cursor.execute("SELECT COUNT(*) FROM performance_schema.replication_applier_configuration "
                       "WHERE CHANNEL_NAME = 'c1'")  # fmt: skip
        assert cursor.fetchone()[0] == 0
    assert engine_content(engine) == content
