"""STOP/START storms: START REPLICA and STOP REPLICA in a tight loop while the built-in
source appends a live workload, with either applier (40 cycles; 500 under ``make soak``).
Every STOP returns with the channel's threads joined and what committed a prefix of the
source's transactions (commit order; WL10500.PURGE.2/3 across restarts); at the end the
replica holds every transaction exactly once, in the generated content."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from spark_replica.applier_core.storage import InMemoryEngine
from spark_replica.tools.generator.simulate import Dependency, WorkloadSpec
from tests.helpers.builtin_source import REPL_PASSWORD, REPL_USER, running_source
from tests.helpers.replica_channel import (
    APPLIERS,
    change_source_at,
    channel_threads,
    executed,
    wait_applied,
)
from tests.helpers.server import connect
from tests.helpers.soak import soak_size
from tests.unit.csa_apply.harness import engine_content

CYCLES = soak_size(short=40, long=500)
SPEC = WorkloadSpec(tables=3, rows_per_table=30, transactions=soak_size(short=1500, long=15000),
                    clients=6,
                    dependency=Dependency.WRITESET, seed=17)  # fmt: skip


@pytest.mark.soak
@pytest.mark.parametrize("applier", sorted(APPLIERS))
def test_start_stop_storm_under_a_live_source(
    tmp_path: Path, port: int, engine: InMemoryEngine, applier: str
) -> None:
    with running_source(tmp_path / "source", SPEC, rate=1500) as source, connect(port) as conn:
        with conn.cursor() as cursor:
            cursor.execute(
                change_source_at(
                    "127.0.0.1",
                    source.port,
                    REPL_USER,
                    REPL_PASSWORD,
                    GET_SOURCE_PUBLIC_KEY=1,
                    SOURCE_CONNECT_RETRY=1,
                )
            )
            cursor.execute(f"CHANGE REPLICATION SOURCE TO {APPLIERS[applier]} FOR CHANNEL 'm1'")
            if applier == "mta":
                cursor.execute("SET GLOBAL replica_parallel_workers = 4")
            source.live.start()
            for _ in range(CYCLES):
                cursor.execute("START REPLICA FOR CHANNEL 'm1'")
                cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
                assert channel_threads() == []  # STOP joined every thread of the channel
                # Commit order (ON by default): what committed is a prefix of the source's
                # transactions after every STOP, never a set with a gap.
                assert len(list(executed(cursor).intervals())) <= 1, executed(cursor).format()
            cursor.execute("START REPLICA FOR CHANNEL 'm1'")
            status = wait_applied(cursor, source.all_gtids())
            assert (status["Last_IO_Errno"], status["Last_SQL_Errno"]) == (0, 0)
            cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
    assert engine_content(engine) == source.content
    assert not [t for t in threading.enumerate() if t.name.startswith("source-")]
