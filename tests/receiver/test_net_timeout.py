"""replica_net_timeout and heartbeats (issue 7 §1): a source that says nothing for
replica_net_timeout seconds is taken for gone and connected to again; its heartbeats, every
SOURCE_HEARTBEAT_PERIOD seconds (half the timeout unless set), keep an idle connection up."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_replica.applier_core.storage import InMemoryEngine
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.helpers.builtin_source import REPL_PASSWORD, REPL_USER, running_source
from tests.helpers.replica_channel import change_source_at, poll, wait_applied
from tests.helpers.server import connect
from tests.unit.csa_apply.harness import engine_content

SPEC = WorkloadSpec(tables=2, rows_per_table=20, transactions=40, clients=2)


@pytest.mark.parametrize("heartbeats", [True, False])
def test_an_idle_source_within_replica_net_timeout(
    tmp_path: Path, port: int, engine: InMemoryEngine, heartbeats: bool
) -> None:
    with running_source(tmp_path / "source", SPEC) as source, connect(port) as conn:
        with conn.cursor() as cursor:
            cursor.execute("SET GLOBAL replica_net_timeout = 1")
            extra = {} if heartbeats else {"SOURCE_HEARTBEAT_PERIOD": 0}
            cursor.execute(change_source_at("127.0.0.1", source.port, REPL_USER, REPL_PASSWORD,
                                            GET_SOURCE_PUBLIC_KEY=1, SOURCE_CONNECT_RETRY=1,
                                            **extra))  # fmt: skip
            cursor.execute("START REPLICA FOR CHANNEL 'm1'")
            if heartbeats:  # 0.5 s apart: three of them span more than the timeout
                status = poll(cursor, lambda _: _heartbeats(cursor) >= 3)
                assert (status["Last_IO_Errno"], status["Replica_IO_Running"]) == (0, "Yes")
            else:  # silence: the read times out, the receiver connects again
                status = poll(cursor, lambda s: s["Last_IO_Errno"] != 0)
                assert status["Last_IO_Errno"] == 2013
                assert status["Last_IO_Error"].startswith(
                    "Lost connection to MySQL server during query"
                )
            source.live.start()  # and replication goes on
            wait_applied(cursor, source.all_gtids())
            cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
    assert engine_content(engine) == source.content


def _heartbeats(cursor: object) -> int:
    cursor.execute("SELECT COUNT_RECEIVED_HEARTBEATS FROM "  # type: ignore[attr-defined]
                   "performance_schema.replication_connection_status")  # fmt: skip
    return int(cursor.fetchone()[0])  # type: ignore[attr-defined]
