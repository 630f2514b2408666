"""START REPLICA against the built-in binlog server (issue 7 §2, §4: "the same end-to-end
suite against the built-in binlog server"): a generated workload appended live replicates
through the receiver into both appliers and ends in the generated content; the source cut
off and served again resumes by GTID with no gap and no duplicate."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.storage import InMemoryEngine
from spark_replica.tools.generator.simulate import Dependency, WorkloadSpec, simulate
from tests.helpers.builtin_source import (
    REPL_PASSWORD,
    REPL_USER,
    SourceProcess,
    running_source,
)
from tests.helpers.replica_channel import (
    APPLIERS,
    change_source_at,
    channel_threads,
    poll,
    wait_applied,
)
from tests.helpers.server import connect
from tests.unit.csa_apply.harness import engine_content

SPEC = WorkloadSpec(tables=3, rows_per_table=40, transactions=400, clients=6,
                    dependency=Dependency.WRITESET, ddl_every=150)  # fmt: skip


@pytest.mark.parametrize("applier", sorted(APPLIERS))
def test_a_live_builtin_source_replicates_into_both_appliers(
    tmp_path: Path, port: int, engine: InMemoryEngine, applier: str
) -> None:
    with running_source(tmp_path / "source", SPEC, rate=2000) as source, connect(port) as conn:
        with conn.cursor() as cursor:
            cursor.execute(change_source_at("127.0.0.1", source.port, REPL_USER, REPL_PASSWORD,
                                            GET_SOURCE_PUBLIC_KEY=1))  # fmt: skip
            cursor.execute(f"CHANGE REPLICATION SOURCE TO {APPLIERS[applier]} FOR CHANNEL 'm1'")
            cursor.execute("START REPLICA FOR CHANNEL 'm1'")
            source.live.start()
            status = wait_applied(cursor, source.all_gtids())
            assert (status["Last_IO_Errno"], status["Last_SQL_Errno"]) == (0, 0)
            assert (status["Source_UUID"], status["Source_Server_Id"]) == (SPEC.server_uuid, 1)
            assert status["Retrieved_Gtid_Set"] == source.all_gtids().format(",\n")
            end = source.server.binlog.end()  # where the source has written up to
            assert (status["Source_Log_File"], status["Read_Source_Log_Pos"]) == end
            cursor.execute("SELECT SOURCE_UUID, SERVICE_STATE, LAST_QUEUED_TRANSACTION, "
                           "LAST_QUEUED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP FROM "
                           "performance_schema.replication_connection_status")  # fmt: skip
            [(uuid, state, last, committed)] = cursor.fetchall()
            final = source.transactions[-1]
            assert (uuid, state, last) == (SPEC.server_uuid, "ON", f"{uuid}:{final.gno}")
            # The source stamps each commit with the time it appends it.
            micros = source.live.last_commit_time_us % 1_000_000
            assert str(committed).endswith(f".{micros:06d}")
            cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
            assert channel_threads() == []
            cursor.execute("SELECT Master_log_name, Master_log_pos, Uuid FROM "
                           "mysql.slave_master_info WHERE Channel_name = 'm1'")  # fmt: skip
            assert cursor.fetchall() == ((end[0], end[1], SPEC.server_uuid),)
    assert engine_content(engine) == source.content


def test_source_killed_three_times_replication_resumes_by_gtid(
    tmp_path: Path, port: int, engine: InMemoryEngine
) -> None:
    """SIGKILL of ``spark-replica source`` mid-stream, three times: each restart recovers its
    binary log (cutting a transaction the kill cut), and the replica reconnects and goes on
    from the GTIDs it has, with no gap and no duplicate (issue 7 §4)."""
    spec = WorkloadSpec(tables=3, rows_per_table=50, transactions=900, seed=7)
    source = SourceProcess(tmp_path / "source", "--generate", "900", "--rate", "400",
                           "--tables", "3", "--rows-per-table", "50", "--seed", "7",
                           "--max-binlog-size", "65536").start()  # fmt: skip
    try:
        with connect(port) as conn, conn.cursor() as cursor:
            cursor.execute(change_source_at("127.0.0.1", source.port, REPL_USER, REPL_PASSWORD,
                                            GET_SOURCE_PUBLIC_KEY=1, SOURCE_CONNECT_RETRY=1,
                                            SOURCE_RETRY_COUNT=60))  # fmt: skip
            cursor.execute(f"CHANGE REPLICATION SOURCE TO {APPLIERS['csa']} FOR CHANNEL 'm1'")
            cursor.execute("START REPLICA FOR CHANNEL 'm1'")
            transactions, content = simulate(spec)
            gtids = [f"{spec.server_uuid}:{t.gno}" for t in transactions]
            for kill in range(3):
                wait_applied(cursor, GtidSet.parse(gtids[(kill + 1) * len(gtids) // 5]))
                source.kill()
                source.start()
            wait_applied(cursor, GtidSet.parse(",".join(gtids)), wait=120)
            status = poll(cursor, lambda s: s["Replica_IO_Running"] == "Yes")  # reconnected
            every = f"{spec.server_uuid}:1-{len(gtids)}"  # no gap, no duplicate
            assert (status["Last_SQL_Errno"], status["Retrieved_Gtid_Set"]) == (0, every)
            cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
    finally:
        source.stop()
    assert engine_content(engine) == content
