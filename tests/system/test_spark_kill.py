"""Crash safety of the Spark engine: the server process killed with SIGKILL at random points
during apply, flush and compaction (20 times with the CSA, 8 with the legacy applier; 50 each
under ``make soak``), restarted and let finish; every table is then compared with the
generator's expected content.

A real ``spark-replica serve`` child applies a generated relay log through a CSA channel, or
a legacy multi-threaded one with commit order off (whose commits are out of relay-log order,
so a kill can leave transactions committed after one that was not), into Spark, flushing
every 50 ms and compacting every 2 batches so that apply, flush and compaction are all under
way most of the time; once the restarted channel is applying again,
it is killed with SIGKILL after a random delay (seeded), restarted and told to START REPLICA
again, until the channel has applied everything. Then every table, read from Spark by a fresh
engine, must equal the content the generator computed: no lost and no duplicated
transaction.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.tools.generator.simulate import Dependency, WorkloadSpec
from tests.helpers.crash_suite import assert_tables, finish_relay_log_channel
from tests.helpers.process import durable_count, server_process
from tests.helpers.server import connect, executed_gtids
from tests.helpers.soak import soak_size
from tests.unit.csa_apply.harness import copy_into_relay_log, generate

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.soak, pytest.mark.timeout(7200)]

SEED = 20261121
CSA_CHANNEL = (
    "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h1', SOURCE_AUTO_POSITION=1, "
    "REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2, APPLIER_WORKER_COUNT=4 "
    "FOR CHANNEL 'c1'"
)
MTA_CHANNEL = (
    "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h1', SOURCE_AUTO_POSITION=1 FOR CHANNEL 'c1'"
)
#: Run after each start of the server, before START REPLICA (global variables do not persist).
MTA_SETTINGS = ("SET GLOBAL replica_parallel_workers = 4",
                "SET GLOBAL replica_preserve_commit_order = 0")  # fmt: skip
CONFIG = """
[spark]
flush_interval = 0.05
compact_after = 2
[spark.options]
"spark.ui.enabled" = "false"
"""
SPEC = WorkloadSpec(tables=3, keyless_tables=1, rows_per_table=50, transactions=12000,
                    conflict_share=0.2, ddl_every=1500, rotate_every=400,
                    dependency=Dependency.WRITESET, seed=9)  # fmt: skip
WAIT = 300.0


@pytest.mark.parametrize(
    ("channel", "settings", "kills"),
    [
        (CSA_CHANNEL, (), soak_size(short=20, long=50)),
        (MTA_CHANNEL, MTA_SETTINGS, soak_size(short=8, long=50)),
    ],  # fmt: skip
    ids=["csa", "mta"],
)
def test_sigkill_at_random_points_loses_and_duplicates_nothing(
    spark: Any, tmp_path: Path, channel: str, settings: tuple[str, ...], kills: int
) -> None:
    transactions, content, files = generate(SPEC, tmp_path / "source")
    data = tmp_path / "data"
    config = tmp_path / "replica.toml"
    config.write_text(CONFIG)
    everything = GtidSet.parse(f"{SPEC.server_uuid}:1-{len(transactions)}")
    rng = random.Random(SEED)
    progress: list[int] = []

    with server_process(data, config) as server:
        with connect(server.port) as conn, conn.cursor() as cursor:
            cursor.execute(channel)
        assert server.stop() == 0
    copy_into_relay_log(files, data, "c1")

    for _ in range(kills):
        with server_process(data, config) as server:
            with connect(server.port) as conn, conn.cursor() as cursor:
                durable = executed_gtids(cursor).count()  # at start: what the engine recorded
                progress.append(durable)
                for statement in settings:
                    cursor.execute(statement)
                cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c1'")
                # Kill while applying: once this run has recorded a batch of its own (or
                # has nothing left), at a random moment within the next flushes and
                # compactions.
                deadline = time.monotonic() + WAIT
                while durable_count(data) <= durable < len(transactions):
                    assert time.monotonic() < deadline, "the channel makes nothing durable"
                    time.sleep(0.05)
                time.sleep(rng.uniform(0.0, 1.5))  # the random kill point, not an ordering
            server.kill()

    finish_relay_log_channel(data, config, everything, settings)

    # The kills landed at different points of the work: the first ones before the channel
    # finished, at three stages at least (how many runs it takes depends on the apply rate).
    assert progress[1] < len(transactions) and len(set(progress)) >= 3, progress
    assert_tables(spark, data, content, everything)
