"""Crash safety at exact points of the Spark engine's flush: the server kills itself with
SIGKILL at a failpoint (``applier_core.failpoints``) between the Iceberg commits of one
flush, before a commit point, between a DDL's catalog steps and its new tables, and after a
compaction's commit; restarted, it finishes the channel and every table equals the
generator's content (nothing lost, nothing applied twice), with every GTID recorded."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.failpoints import ENVIRONMENT
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.tools.generator.simulate import Dependency, WorkloadSpec
from tests.helpers.crash_suite import assert_tables, finish_relay_log_channel
from tests.helpers.process import server_process
from tests.helpers.server import connect
from tests.system.test_spark_kill import CSA_CHANNEL as CHANNEL
from tests.unit.csa_apply.harness import copy_into_relay_log, generate

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(900)]

CONFIG = """
[spark]
flush_interval = 0.05
compact_after = 2
"""
SPEC = WorkloadSpec(tables=3, keyless_tables=1, rows_per_table=30, transactions=1200,
                    conflict_share=0.2, ddl_every=300, rotate_every=400,
                    dependency=Dependency.WRITESET, seed=11)  # fmt: skip
WAIT = 300.0


@pytest.mark.parametrize(
    "failpoint",
    [
        "spark.table_committed=kill@3",
        "spark.before_commit_point=kill@2",
        "spark.ddl_steps=kill@1",
        "spark.compacted=kill@1",
    ],
)
def test_a_kill_at_a_failpoint_loses_and_duplicates_nothing(
    spark: Any, tmp_path: Path, failpoint: str
) -> None:
    transactions, content, files = generate(SPEC, tmp_path / "source")
    data = tmp_path / "data"
    config = tmp_path / "replica.toml"
    config.write_text(CONFIG)
    everything = GtidSet.parse(f"{SPEC.server_uuid}:1-{len(transactions)}")
    with server_process(data, config) as server:
        with connect(server.port) as conn, conn.cursor() as cursor:
            cursor.execute(CHANNEL)
        assert server.stop() == 0
    copy_into_relay_log(files, data, "c1")

    with server_process(data, config, env={ENVIRONMENT: failpoint}) as server:
        with connect(server.port) as conn, conn.cursor() as cursor:
            cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c1'")
        assert server.wait(WAIT) == -signal.SIGKILL  # the failpoint was reached

    finish_relay_log_channel(data, config, everything)

    assert_tables(spark, data, content, everything)
