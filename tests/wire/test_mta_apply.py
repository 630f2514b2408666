"""START REPLICA on a channel with the default APPLIER_VERSION=1 applies the relay logs in its
directory with the legacy multi-threaded applier (issue 6, first slice): the workers of
``replica_parallel_workers``, the content, STOP, and UNTIL."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.storage import InMemoryEngine
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.helpers.server import connect, executed_gtids
from tests.unit.csa_apply.harness import copy_into_relay_log, engine_content, generate

CHANNEL = "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h2', SOURCE_AUTO_POSITION=1 FOR CHANNEL 'c2'"
SPEC = WorkloadSpec(tables=2, rows_per_table=10, transactions=150, seed=8)
WAIT = 60.0


def _threads(prefix: str) -> list[str]:
    import threading

    return sorted(t.name for t in threading.enumerate() if t.name.startswith(prefix))


def test_start_replica_applies_with_the_legacy_applier(
    tmp_path: Path, port: int, engine: InMemoryEngine
) -> None:
    transactions, content, files = generate(SPEC, tmp_path / "source")
    everything = GtidSet.parse(f"{SPEC.server_uuid}:1-{len(transactions)}")
    with connect(port) as conn, conn.cursor() as cursor:
        cursor.execute(CHANNEL)
        copy_into_relay_log(files, tmp_path / "data", "c2")
        cursor.execute("SET GLOBAL replica_parallel_workers = 3")
        cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c2'")
        assert _threads("mta-c2-worker") == [f"mta-c2-worker-{n}" for n in (1, 2, 3)]
        deadline = time.monotonic() + WAIT
        while not everything.is_subset(executed_gtids(cursor)):  # polled as a DBA would
            assert time.monotonic() < deadline
            time.sleep(0.05)
        cursor.execute("SHOW REPLICA STATUS FOR CHANNEL 'c2'")
        names = [d[0] for d in cursor.description]
        status = dict(zip(names, cursor.fetchone(), strict=True))
        assert (status["Replica_SQL_Running"], status["Last_SQL_Errno"]) == ("Yes", 0)
        cursor.execute("STOP REPLICA SQL_THREAD FOR CHANNEL 'c2'")
        assert _threads("mta-c2") == []
    assert engine_content(engine) == content


def _status(cursor: Any) -> dict[str, Any]:
    cursor.execute("SHOW REPLICA STATUS FOR CHANNEL 'c2'")
    names = [d[0] for d in cursor.description]
    return dict(zip(names, cursor.fetchone(), strict=True))


def test_until_gtids_stops_the_applier_there(tmp_path: Path, port: int) -> None:
    """START REPLICA UNTIL SQL_AFTER_GTIDS with the legacy applier: the SQL thread applies the
    set and stops by itself, with no error; SHOW REPLICA STATUS shows the condition."""
    _, _, files = generate(SPEC, tmp_path / "source")
    with connect(port) as conn, conn.cursor() as cursor:
        cursor.execute(CHANNEL)
        copy_into_relay_log(files, tmp_path / "data", "c2")
        cursor.execute(
            f"START REPLICA SQL_THREAD UNTIL SQL_AFTER_GTIDS = '{SPEC.server_uuid}:1-40' "
            "FOR CHANNEL 'c2'"
        )
        deadline = time.monotonic() + WAIT
        while (status := _status(cursor))["Replica_SQL_Running"] == "Yes":  # as a DBA polls
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert executed_gtids(cursor) == GtidSet.parse(f"{SPEC.server_uuid}:1-40")
        assert (status["Until_Condition"], status["Last_SQL_Errno"]) == ("SQL_AFTER_GTIDS", 0)
        assert _threads("mta-c2") == []


def test_until_source_position_shows_in_status(tmp_path: Path, port: int) -> None:
    """Until_Condition, Until_Log_File and Until_Log_Pos while the applier waits for a
    position it has not reached (the relay log ends before it)."""
    _, _, files = generate(SPEC, tmp_path / "source")
    with connect(port) as conn, conn.cursor() as cursor:
        cursor.execute(CHANNEL)
        copy_into_relay_log(files, tmp_path / "data", "c2")
        cursor.execute(
            f"START REPLICA SQL_THREAD UNTIL SOURCE_LOG_FILE = '{files[-1].name}', "
            "SOURCE_LOG_POS = 999999999 FOR CHANNEL 'c2'"
        )
        status = _status(cursor)
        assert (status["Until_Condition"], status["Until_Log_File"], status["Until_Log_Pos"]) == (
            "Source",
            files[-1].name,
            999999999,
        )
        assert status["Replica_SQL_Running"] == "Yes"
        cursor.execute("STOP REPLICA SQL_THREAD FOR CHANNEL 'c2'")
