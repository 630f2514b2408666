"""What the crash suites share: a CSA channel from a built-in source set up in a server's
data directory, the restart that finishes a channel, and the check of a data directory's
tables against the generator's content."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.storage.spark.engine import SparkEngine
from spark_replica.metadata.factory import open_store
from spark_replica.tools.generator.simulate import WorkloadSpec, simulate
from tests.helpers.builtin_source import REPL_PASSWORD, REPL_USER
from tests.helpers.process import server_process
from tests.helpers.replica_channel import change_source_at, executed, status
from tests.helpers.server import connect, executed_gtids
from tests.unit.csa_apply.harness import Content, engine_content

#: Seconds a channel gets to make progress, or to finish.
WAIT = 300.0


def expected(spec: WorkloadSpec) -> tuple[int, Content, GtidSet]:
    """What the built-in source generates for ``spec``: its transaction count, the tables'
    content after them, and their GTIDs."""
    transactions, content = simulate(spec)
    return len(transactions), content, GtidSet.parse(f"{spec.server_uuid}:1-{len(transactions)}")


def data_dir(tmp_path: Path, config_text: str) -> tuple[Path, Path]:
    """A server's data directory under ``tmp_path`` and its configuration file."""
    config = tmp_path / "replica.toml"
    config.write_text(config_text)
    return tmp_path / "data", config


def set_up_source_channel(data: Path, config: Path, source_port: int) -> None:
    """Configure channel ``m1`` (CSA, 4 workers, GTID_ONLY) from the built-in source at
    ``source_port`` in the data directory, and stop the server."""
    with server_process(data, config) as server:
        with connect(server.port) as conn, conn.cursor() as cursor:
            cursor.execute(change_source_at(
                "127.0.0.1", source_port, REPL_USER, REPL_PASSWORD, GET_SOURCE_PUBLIC_KEY=1,
                SOURCE_CONNECT_RETRY=1, REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2,
                APPLIER_WORKER_COUNT=4,
            ))  # fmt: skip
        assert server.stop() == 0


def finish_source_channel(data: Path, config: Path, everything: GtidSet) -> None:
    """Start the server (the channel starts with it), wait until ``everything`` is
    executed without error, and stop it cleanly."""
    with server_process(data, config, skip_replica_start=False) as server:
        with connect(server.port) as conn, conn.cursor() as cursor:
            deadline = time.monotonic() + WAIT
            while not everything.is_subset(executed(cursor)):
                assert time.monotonic() < deadline, status(cursor)
                time.sleep(0.2)
            found = status(cursor)
            assert (found["Last_SQL_Errno"], found["Last_IO_Errno"]) == (0, 0), found
            cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
        assert server.stop() == 0


def finish_relay_log_channel(
    data: Path, config: Path, everything: GtidSet, settings: Sequence[str] = ()
) -> None:
    """Start the server, run ``settings``, start channel ``c1``'s applier on the relay log
    it holds, wait until ``everything`` is executed without error, and stop cleanly."""
    with server_process(data, config) as server:
        with connect(server.port) as conn, conn.cursor() as cursor:
            for statement in settings:
                cursor.execute(statement)
            cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c1'")
            deadline = time.monotonic() + WAIT
            while not everything.is_subset(executed_gtids(cursor)):
                assert time.monotonic() < deadline, "the channel did not finish"
                time.sleep(0.2)
            cursor.execute("SHOW REPLICA STATUS FOR CHANNEL 'c1'")
            found = dict(zip([d[0] for d in cursor.description], cursor.fetchone(), strict=True))
            assert found["Last_SQL_Errno"] == 0, found["Last_SQL_Error"]
        assert server.stop() == 0


def assert_tables(spark: Any, data: Path, content: Content, everything: GtidSet) -> None:
    """The data directory's tables, read from Spark by a fresh engine, hold ``content``,
    every GTID of ``everything`` and no other is recorded, and the key index agrees."""
    store = open_store(f"sqlite:///{data / 'metadata.db'}")
    engine = SparkEngine(spark, str(data / "warehouse"), store, key_index=str(data / "key-index"))
    try:
        assert engine_content(engine) == content
        assert GtidSet.from_intervals(engine.durable_state().gtids) == everything
        assert engine.check_index() == {}
    finally:
        engine.close()
        store.close()
