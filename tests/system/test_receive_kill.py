"""Crash safety across receive and apply: a real
``spark-replica serve`` replicates from a live ``spark-replica source`` through a CSA channel
into Spark, and is killed with SIGKILL at random points (seeded) while its receiver writes
the relay log and its applier applies, flushes and compacts. Each time it is restarted, and
the channel starts with it (skip_replica_start=OFF, MySQL's default). At the end every
table, read from Spark by a fresh engine, must equal the content the generator computed: no
transaction lost, none applied twice, although the relay log may hold a transaction
received twice (once cut off by a kill, and fetched whole again after the restart, which
reads the received set back from the relay log). 5 kills; 50 under ``make soak``."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest

from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.helpers.builtin_source import SourceProcess
from tests.helpers.crash_suite import (
    WAIT,
    assert_tables,
    data_dir,
    expected,
    finish_source_channel,
    set_up_source_channel,
)
from tests.helpers.process import durable_count, server_process
from tests.helpers.replica_channel import executed
from tests.helpers.server import connect
from tests.helpers.soak import soak_size

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.soak, pytest.mark.timeout(7200)]

SEED = 20261122
KILLS = soak_size(short=5, long=50)
TRANSACTIONS = soak_size(short=3000, long=20000)
#: What ``spark-replica source --generate`` builds from these arguments.
SPEC = WorkloadSpec(tables=3, rows_per_table=50, transactions=TRANSACTIONS, seed=11)
#: The source writes its transactions over about as long as the kills take (a restart is
#: 10 to 20 s here), so that each run starts with a different part of them still to come.
RATE = TRANSACTIONS // (KILLS * 15)
SOURCE_ARGS = ("--generate", str(TRANSACTIONS), "--rate", str(RATE), "--tables", "3",
               "--rows-per-table", "50", "--seed", "11", "--max-binlog-size", "262144")  # fmt: skip
CONFIG = """
[spark]
flush_interval = 0.05
compact_after = 2
[spark.options]
"spark.ui.enabled" = "false"
"""


def test_sigkill_while_receiving_and_applying_loses_and_duplicates_nothing(
    spark: Any, tmp_path: Path
) -> None:
    total, content, everything = expected(SPEC)
    data, config = data_dir(tmp_path, CONFIG)
    rng = random.Random(SEED)
    progress: list[int] = []
    source = SourceProcess(tmp_path / "source", *SOURCE_ARGS).start()
    try:
        set_up_source_channel(data, config, source.port)
        for _ in range(KILLS):
            # The channel starts with the server: no START REPLICA after a crash.
            with server_process(data, config, skip_replica_start=False) as server:
                with connect(server.port) as conn, conn.cursor() as cursor:
                    before = executed(cursor).count()  # recorded, and applied since the start
                    progress.append(before)
                    # Kill once this run has made a batch of its own durable, at a random
                    # moment within the next receives, flushes and compactions.
                    deadline = time.monotonic() + WAIT
                    while durable_count(data) <= before < total:
                        assert time.monotonic() < deadline, "the channel makes nothing durable"
                        time.sleep(0.05)
                    time.sleep(rng.uniform(0.0, 1.5))  # the random kill point, not an ordering
                server.kill()
        finish_source_channel(data, config, everything)
    finally:
        source.stop()
    assert len(set(progress)) > KILLS // 2, progress  # the kills landed at different points
    assert_tables(spark, data, content, everything)
