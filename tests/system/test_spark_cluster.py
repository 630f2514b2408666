"""The replica on a real Spark cluster (issue: "a test that starts a Spark standalone master and
worker on loopback from pyspark's own scripts and runs the engine against
``spark://127.0.0.1:...``").

A standalone master and one worker (1 core) are started from pyspark's ``bin/spark-class`` on
127.0.0.1; a ``spark-replica serve`` child is configured with the master's ``spark://`` address
and does what a user does over the MySQL protocol: it creates a CSA channel, applies a generated
relay log and answers ``SELECT`` with the generator's content. The master must know the
application ``spark-replica`` and the worker must have run its tasks in an executor. The server
stops cleanly with SIGTERM, its driver JVM with it, and the cluster's processes all end. Another
Spark session, configured only with ``iceberg.catalog_options``, then reads the same tables by
name with the same rows.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.storage.spark import iceberg
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.helpers.process import server_process
from tests.helpers.server import connect, executed_gtids
from tests.helpers.spark_cluster import (
    SparkCluster,
    descendants,
    group_members,
    running,
    spark_cluster,
    wait_for,
)
from tests.unit.csa_apply.harness import copy_into_relay_log, generate

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(600)]

CHANNEL = (
    "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h1', SOURCE_AUTO_POSITION=1, "
    "REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2, APPLIER_WORKER_COUNT=2 "
    "FOR CHANNEL 'c1'"
)
#: The executor fits the worker's 1 GiB with room to spare; one core is all the cluster has.
CONFIG = """
[spark]
master = "{master}"
flush_interval = 0.1
[spark.options]
"spark.executor.memory" = "512m"
"spark.cores.max" = "1"
"""
SPEC = WorkloadSpec(tables=2, rows_per_table=20, transactions=100, seed=3)
APP_NAME = "spark-replica"
WAIT = 180.0
STOP_WAIT = 30.0


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[SparkCluster]:
    """A standalone master and worker on loopback; after the test every process of theirs
    (executors included) must have ended."""
    with spark_cluster(tmp_path / "cluster") as running_cluster:
        groups = [daemon.pgid for daemon in running_cluster.daemons]
        yield running_cluster
    assert not {g: group_members(g) for g in groups if group_members(g)}


def _rows(cursor: Any, table: str) -> list[tuple[object, ...]] | None:
    """``SELECT *`` from ``table``; None while the table is not there yet (1146)."""
    try:
        cursor.execute(f"SELECT * FROM {table} ORDER BY id")
    except pymysql.err.ProgrammingError as error:
        if error.args[0] != 1146:
            raise
        return None
    return list(cursor.fetchall())


def _wait_for_rows(cursor: Any, table: str, expected: list[tuple[object, ...]]) -> None:
    """Poll ``SELECT *`` from ``table`` until it returns ``expected`` (queries read what the
    engine has flushed, a moment after the channel applied it: the table itself may not be
    there at first, under load), then assert it."""
    deadline = time.monotonic() + WAIT
    while _rows(cursor, table) != expected and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _rows(cursor, table) == expected


def test_replica_applies_and_answers_on_a_standalone_cluster(
    cluster: SparkCluster, tmp_path: Path, spark: Any
) -> None:
    transactions, content, files = generate(SPEC, tmp_path / "source")
    everything = GtidSet.parse(f"{SPEC.server_uuid}:1-{len(transactions)}")
    data = tmp_path / "data"
    config = tmp_path / "replica.toml"
    config.write_text(CONFIG.format(master=cluster.master_url))

    with server_process(data, config) as server:
        driver = descendants(server.process.pid)  # the driver JVM pyspark started
        assert driver
        with connect(server.port) as conn, conn.cursor() as cursor:
            cursor.execute(CHANNEL)
            copy_into_relay_log(files, data, "c1")
            cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c1'")
            wait_for(lambda: everything.is_subset(executed_gtids(cursor)), WAIT,
                     "the channel to apply every transaction")  # fmt: skip
            cursor.execute("SHOW REPLICA STATUS FOR CHANNEL 'c1'")
            status = dict(zip([d[0] for d in cursor.description], cursor.fetchone(), strict=True))
            assert status["Last_SQL_Errno"] == 0, status["Last_SQL_Error"]
            for name, rows in content.items():
                _wait_for_rows(cursor, name, [tuple(r) for r in rows])
        [app] = cluster.applications(APP_NAME)
        assert app["state"] == "RUNNING" and app["cores"] == 1, app
        assert server.stop() == 0
    # pyspark's JVM ends by itself once its Python parent is gone.
    wait_for(lambda: not running(driver), STOP_WAIT, "the driver JVM to end")

    # The work ran on the cluster: the worker launched the application's executor, which ran
    # tasks (the driver's own log level does not reach the executor's log).
    executor_logs = list((cluster.work_dir / app["id"]).glob("*/stderr"))
    assert executor_logs, f"no executor of {app['id']} on the worker"
    assert any("Finished task" in log.read_text(errors="replace") for log in executor_logs)
    finished = wait_for(
        lambda: next((a for a in cluster.state()["completedapps"] if a["id"] == app["id"]), None),
        WAIT,
        "the master to list the application as completed",
    )
    assert finished["name"] == APP_NAME and finished["state"] == "FINISHED", finished
    # The worker ended the application's executor with it.
    wait_for(lambda: not descendants(cluster.worker.process.pid), STOP_WAIT,
             "the worker to end the executor")  # fmt: skip

    # Any Spark job reads the replicated tables by name from the replica's catalog.
    reader = spark.newSession()
    metadata_url = f"sqlite:///{data.resolve() / 'metadata.db'}"
    for key, value in iceberg.catalog_options("replica", metadata_url, data / "warehouse").items():
        reader.conf.set(key, value)
    for name, rows in content.items():
        found = reader.sql(f"SELECT * FROM replica.{name} ORDER BY id").collect()
        assert [tuple(r) for r in found] == [tuple(r) for r in rows]
