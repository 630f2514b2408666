"""Skipping a transaction the applier cannot apply, MySQL's way, over a real client: the
channel stops on a duplicate key (1062); the DBA commits an empty transaction with its GTID
(SET GTID_NEXT, BEGIN, COMMIT, SET GTID_NEXT='AUTOMATIC'); START REPLICA goes on past it and
applies the rest; the GTID stays executed after a restart. Both appliers (APPLIER_VERSION=2
and 1) skip GTIDs already in @@gtid_executed, as MySQL's do (LIM.13)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.storage import InMemoryEngine
from spark_replica.server.components import default_components
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.helpers.server import connect, executed_gtids, running_server
from tests.unit.csa_apply.harness import copy_into_relay_log, generate, insert_locally

CSA = (
    "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h1', SOURCE_AUTO_POSITION=1, "
    "REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2, APPLIER_WORKER_COUNT=3 "
    "FOR CHANNEL 'c1'"
)
MTA = "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h1', SOURCE_AUTO_POSITION=1 FOR CHANNEL 'c1'"
SPEC = WorkloadSpec(tables=2, rows_per_table=10, transactions=80, seed=11)
WAIT = 60.0


def _status(cursor: Any) -> dict[str, Any]:
    cursor.execute("SHOW REPLICA STATUS FOR CHANNEL 'c1'")
    names = [d[0] for d in cursor.description]
    return dict(zip(names, cursor.fetchone(), strict=True))


def _stopped(cursor: Any) -> dict[str, Any]:
    """Poll SHOW REPLICA STATUS, as a DBA does, until the SQL thread has stopped."""
    deadline = time.monotonic() + WAIT
    while (status := _status(cursor))["Replica_SQL_Running"] == "Yes":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return status


@pytest.mark.parametrize("channel", [CSA, MTA], ids=["csa", "mta"])
def test_an_empty_transaction_skips_the_failing_one(tmp_path: Path, channel: str) -> None:
    """SV.sql-replica-skip-counter, LIM.3 (GTID_MODE=ON: skip with GTIDs), LIM.13."""
    transactions, _, files = generate(SPEC, tmp_path / "source")
    failing = next(t for t in transactions[20:] if any(c.kind == "insert" for c in t.changes))
    insert = next(c for c in failing.changes if c.kind == "insert")
    assert insert.after is not None
    gtid = f"{SPEC.server_uuid}:{failing.gno}"
    everything = GtidSet.parse(f"{SPEC.server_uuid}:1-{len(transactions)}")
    data = tmp_path / "data"
    engine = InMemoryEngine()
    with running_server(data, default_components(engine)) as server:
        with connect(server.port) as conn, conn.cursor() as cursor:
            cursor.execute(channel)
            copy_into_relay_log(files, data, "c1")
            cursor.execute(
                f"START REPLICA SQL_THREAD UNTIL SQL_AFTER_GTIDS='{SPEC.server_uuid}:1-6' "
                "FOR CHANNEL 'c1'"
            )
            assert _stopped(cursor)["Last_SQL_Errno"] == 0
            # A row written behind the applier's back: the failing transaction inserts it too.
            insert_locally(engine, insert.table.schema, insert.table.name, insert.after)
            cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c1'")
            status = _stopped(cursor)
            assert status["Last_SQL_Errno"] == 1062
            assert not executed_gtids(cursor).contains(SPEC.server_uuid, "", failing.gno)

            cursor.execute(f"SET GTID_NEXT='{gtid}'")
            cursor.execute("SELECT @@session.gtid_next")
            assert cursor.fetchone()[0] == gtid
            cursor.execute("BEGIN")
            cursor.execute("COMMIT")
            cursor.execute("SET GTID_NEXT='AUTOMATIC'")
            cursor.execute("SELECT @@session.gtid_next")
            assert cursor.fetchone()[0] == "AUTOMATIC"
            assert executed_gtids(cursor).contains(SPEC.server_uuid, "", failing.gno)

            cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c1'")
            deadline = time.monotonic() + WAIT
            while not everything.is_subset(executed_gtids(cursor)):
                assert time.monotonic() < deadline, _status(cursor)["Last_SQL_Error"]
                time.sleep(0.05)
            status = _status(cursor)
            assert (status["Replica_SQL_Running"], status["Last_SQL_Errno"]) == ("Yes", 0)
            cursor.execute("STOP REPLICA SQL_THREAD FOR CHANNEL 'c1'")
    # The local row stands for the skipped transaction's: later transactions found it.
    table = next(t for t in engine.tables() if t.table == insert.table.name)
    assert insert.after[0] in [row[0] for row in engine.rows(table)]
    with running_server(data, default_components(InMemoryEngine())) as server:
        with connect(server.port) as conn, conn.cursor() as cursor:
            assert executed_gtids(cursor).contains(SPEC.server_uuid, "", failing.gno)
            assert everything.is_subset(executed_gtids(cursor))
