"""Many clients query a replica while it applies at full speed: a live built-in source, a
CSA channel into the Spark engine, and ``soak_size(short=50, long=200)`` client connections
(tests/helpers/client_load.py) sending SELECTs over the replicated tables (answered by
Spark), SELECT * FROM performance_schema.replication_applier_status_by_worker and SHOW
REPLICA STATUS. No statement may fail, the channel keeps applying under the load, and the
tables end with the source's content. Latency figures are printed; tests/bench/bench_clients.py
measures them, and the applier's rate with and without the load, at 200 clients.

The second test is the regression test of the hang this load found."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.storage.spark.engine import SparkEngine
from spark_replica.metadata.factory import open_store
from spark_replica.server.config import SparkConfig
from spark_replica.server.storage import configured_components
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.helpers.builtin_source import REPL_PASSWORD, REPL_USER, running_source
from tests.helpers.client_load import (
    USER_TABLE,
    Statement,
    monitoring_mix,
    run_load,
    wait_until_queryable,
)
from tests.helpers.replica_channel import (
    CHANNEL,
    change_source_at,
    executed,
    status,
    wait_applied,
)
from tests.helpers.server import connect, running_server
from tests.helpers.soak import soak_size
from tests.unit.csa_apply.harness import engine_content

pytestmark = pytest.mark.spark

#: Enough transactions that the channel is still applying them when the load has ended.
SPEC = WorkloadSpec(tables=4, rows_per_table=200, transactions=16_000, seed=7)
TABLES = [f"{SPEC.database}.{SPEC.schema}{n}" for n in range(1, SPEC.tables + 1)]
WAIT = 600.0


@pytest.mark.soak
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_clients_query_while_the_replica_applies(spark: Any, tmp_path: Path) -> None:
    """Client statements neither fail nor stop the applier, whose result stays exact."""
    clients = soak_size(short=50, long=200)
    per_client = soak_size(short=3, long=6)  # at least one statement of each kind each
    data = tmp_path / "data"
    with running_source(tmp_path / "source", SPEC) as source:
        with running_server(data, configured_components) as server:
            with connect(server.port) as conn, conn.cursor() as cursor:
                start_csa_channel(cursor, source.port)
                wait_until_queryable(cursor, TABLES, WAIT)
                source.live.start()
                before = executed(cursor).count()
                report = run_load(
                    server.port,
                    clients,
                    monitoring_mix(TABLES, SPEC.rows_per_table),
                    statements=per_client,
                )
                during = executed(cursor).count() - before
                print(f"{clients} clients, {report.seconds:.1f} s, {during} transactions applied")
                print("\n".join(report.lines()))
                assert report.errors == []
                assert report.statements == clients * per_client
                assert during > 0, "the channel applied nothing while the clients ran"
                found = wait_applied(cursor, source.all_gtids(), WAIT)
                assert (found["Last_IO_Errno"], found["Last_SQL_Errno"]) == (0, 0), found
                cursor.execute(f"STOP REPLICA FOR CHANNEL '{CHANNEL}'")
    store = open_store(f"sqlite:///{data / 'metadata.db'}")
    engine = SparkEngine(spark, str(data / "warehouse"), store)
    try:
        assert engine_content(engine) == source.content
        assert GtidSet.from_intervals(engine.durable_state().gtids) == source.all_gtids()
    finally:
        engine.close()
        store.close()


def test_more_queries_than_worker_threads_all_finish(spark: Any, tmp_path: Path) -> None:
    """Was: when more SELECTs waited for a turn (``spark.max_queries``) than the server's
    event loop has worker threads (at most 32), the waiting ones held every thread and the
    running ones could not fetch or close: every query, and every statement run in a thread
    such as SHOW REPLICA STATUS, hung."""
    # One turn, and more queries than asyncio gives the loop worker threads.
    clients = min(32, (os.cpu_count() or 1) + 4) + 2
    mix = [Statement(USER_TABLE, f"SELECT COUNT(*), SUM(k) FROM {TABLES[0]}")]
    small = WorkloadSpec(tables=1, rows_per_table=50, transactions=20, seed=3)
    config = SparkConfig(max_queries=1)
    with running_source(tmp_path / "source", small) as source:
        with running_server(tmp_path / "data", configured_components, spark=config) as server:
            with connect(server.port) as conn, conn.cursor() as cursor:
                start_csa_channel(cursor, source.port)
                source.live.start()
                wait_until_queryable(cursor, TABLES[:1], WAIT)
                report = run_load(server.port, clients, mix, statements=1, timeout=120.0)
                assert report.errors == []
                assert report.statements == clients
                found = status(cursor)
                assert found["Replica_SQL_Running"] == "Yes", found
                cursor.execute(f"STOP REPLICA FOR CHANNEL '{CHANNEL}'")


def start_csa_channel(cursor: Any, source_port: int) -> None:
    cursor.execute(change_source_at(
        "127.0.0.1", source_port, REPL_USER, REPL_PASSWORD, GET_SOURCE_PUBLIC_KEY=1,
        REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2, APPLIER_WORKER_COUNT=4,
    ))  # fmt: skip
    cursor.execute(f"START REPLICA FOR CHANNEL '{CHANNEL}'")
