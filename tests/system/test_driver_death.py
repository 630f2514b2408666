"""The Spark driver JVM dies under a running server (killed, as the kernel's out-of-memory
killer does): the server notices, stops with exit status 1 and an error that names what
happened (never applying on into memory it can no longer write), and a restart finishes
the channel with exact content: nothing lost, nothing applied twice (CPT.0030)."""

from __future__ import annotations

import os
import signal
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
from tests.helpers.process import durable_count, java_child, server_process

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(900)]

TRANSACTIONS = 1500
SPEC = WorkloadSpec(tables=3, rows_per_table=50, transactions=TRANSACTIONS, seed=11)
SOURCE_ARGS = ("--generate", str(TRANSACTIONS), "--rate", "100", "--tables", "3",
               "--rows-per-table", "50", "--seed", "11")  # fmt: skip
CONFIG = """
[spark]
flush_interval = 0.05
[spark.options]
"spark.ui.enabled" = "false"
"""


def test_a_dead_driver_jvm_stops_the_server_with_its_error_and_loses_nothing(
    spark: Any, tmp_path: Path
) -> None:
    total, content, everything = expected(SPEC)
    data, config = data_dir(tmp_path, CONFIG)
    source = SourceProcess(tmp_path / "source", *SOURCE_ARGS).start()
    try:
        set_up_source_channel(data, config, source.port)
        with server_process(data, config, skip_replica_start=False) as server:
            deadline = time.monotonic() + WAIT
            while durable_count(data) == 0:  # replicating, and flushing
                assert time.monotonic() < deadline, "the channel makes nothing durable"
                time.sleep(0.05)
            jvm = java_child(server.process.pid)
            os.kill(jvm, signal.SIGKILL)
            assert server.wait(WAIT) == 1
            log = server.log_path.read_text(errors="replace")
            assert (
                f"spark-replica: stopping: the Spark driver JVM (process {jvm}) was killed "
                "by SIGKILL: nothing more can be made durable in this process"
            ) in log
            assert durable_count(data) < total  # it stopped during the channel's work
        finish_source_channel(data, config, everything)
    finally:
        source.stop()
    assert_tables(spark, data, content, everything)
