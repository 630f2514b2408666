"""A quiet, useful server log: a bare TCP connect-and-close (a health probe) and a failed
query give one line each, without a stack (Python's or the JVM's); the stacks come back only
at the DEBUG log level. A real server process with Spark, its log read as an operator would."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pymysql
import pytest

from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.helpers.process import ServerProcess, server_process
from tests.helpers.server import connect
from tests.unit.csa_apply.harness import copy_into_relay_log, generate

pytestmark = pytest.mark.spark

SPEC = WorkloadSpec(tables=1, rows_per_table=20, transactions=20, seed=7)
CHANNEL = (
    "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h1', SOURCE_AUTO_POSITION=1, "
    "REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2 FOR CHANNEL 'c1'"
)
WAIT = 120.0


def _log_after(server: ServerProcess, offset: int) -> list[str]:
    server.log.flush()
    text = server.log_path.read_bytes()[offset:].decode("utf-8", "replace")
    return [line for line in text.splitlines() if line.strip()]


def _wait_for_lines(server: ServerProcess, offset: int, needle: str) -> list[str]:
    deadline = time.monotonic() + 10
    while True:
        lines = _log_after(server, offset)
        if any(needle in line for line in lines):
            return lines
        assert time.monotonic() < deadline, f"no {needle!r} in {lines}"
        time.sleep(0.05)


def _replicate(server: ServerProcess, data_dir: Path, source: Path) -> None:
    _, _, files = generate(SPEC, source)
    with connect(server.port) as conn, conn.cursor() as cursor:
        cursor.execute(CHANNEL)
        copy_into_relay_log(files, data_dir, "c1")
        cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c1'")
        deadline = time.monotonic() + WAIT
        while True:  # polled as a DBA would: the rows are there once a query sees them
            try:
                cursor.execute("SELECT COUNT(*) FROM shop.sbtest1")
                if cursor.fetchone()[0] > 0:
                    return
            except pymysql.err.ProgrammingError:  # 1146 until the table is there
                pass
            assert time.monotonic() < deadline
            time.sleep(0.2)


def test_a_probe_and_a_failed_query_give_one_line_each(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with server_process(data_dir, log_level="INFO") as server:
        _replicate(server, data_dir, tmp_path / "source")

        offset = server.log_path.stat().st_size
        probe = socket.create_connection(("127.0.0.1", server.port))
        probe.close()
        lines = _wait_for_lines(server, offset, " ended: ")
        assert len(lines) == 1, lines
        assert "Traceback" not in lines[0]

        offset = server.log_path.stat().st_size
        with connect(server.port) as conn, conn.cursor() as cursor:
            with pytest.raises(pymysql.err.MySQLError) as failed:  # Spark fails in its tasks
                cursor.execute("SELECT CAST(CONCAT('x', c) AS SIGNED) FROM shop.sbtest1")
                cursor.fetchall()
        number = failed.value.args[0]
        lines = _wait_for_lines(server, offset, f"statement failed: {number}: ")
        failures = [line for line in lines if "statement failed" in line]
        assert len(failures) == 1, lines
        assert not [line for line in lines if line.lstrip().startswith(("at ", "\tat "))]
        assert not [line for line in lines if "Traceback" in line or "Exception in task" in line]
        assert sum(len(line) for line in lines) < 2000, lines
        assert server.stop() == 0
