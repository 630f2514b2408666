"""Replication passwords never appear in results, logs or errors (issue 8 §4): not in the
status tables, not in a syntax error that quotes the statement, not in the server's log
(mysql-mimic logs every statement it receives), not in the IO thread's errors."""

from __future__ import annotations

import logging
from pathlib import Path

import pymysql
import pytest

from spark_replica.applier_core.errors import redact_secrets
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.helpers.builtin_source import REPL_PASSWORD, REPL_USER, running_source
from tests.helpers.replica_channel import change_source_at, io_stops, wait_applied
from tests.helpers.server import connect

SECRET = "Zq9-not-to-be-seen"
SPEC = WorkloadSpec(tables=1, rows_per_table=10, transactions=10, clients=1)


@pytest.mark.parametrize(("text", "redacted"), [
    (f"CHANGE REPLICATION SOURCE TO SOURCE_PASSWORD='{SECRET}', SOURCE_HOST='h'",
     "CHANGE REPLICATION SOURCE TO SOURCE_PASSWORD='<secret>', SOURCE_HOST='h'"),
    (f"START REPLICA USER='u' PASSWORD = \"{SECRET}\" FOR CHANNEL 'c'",
     "START REPLICA USER='u' PASSWORD = '<secret>' FOR CHANNEL 'c'"),
    ("CHANGE MASTER TO MASTER_PASSWORD='it''s\\'x'", "CHANGE MASTER TO MASTER_PASSWORD='<secret>'"),
    (f"near 'SOURCE_PASSWORD='{SECRET[:5]}", "near 'SOURCE_PASSWORD='<secret>'"),  # cut short
    ("SELECT XPASSWORD='kept'", "SELECT XPASSWORD='kept'"),
])  # fmt: skip
def test_redact_secrets(text: str, redacted: str) -> None:
    assert redact_secrets(text) == redacted


def test_a_password_is_nowhere_a_user_or_the_log_can_see(
    tmp_path: Path, port: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="mysql_mimic")  # whatever level it was left at
    seen: list[str] = []
    with running_source(tmp_path / "source", SPEC) as source, connect(port) as conn:
        with conn.cursor() as cursor:
            for statement in (
                f"CHANGE REPLICATION SOURCE TO BOGUS=1, SOURCE_PASSWORD='{SECRET}'",
                f"START REPLICA USER='u' PASSWORD='{SECRET}' BOGUS",
            ):
                with pytest.raises(pymysql.err.ProgrammingError) as error:
                    cursor.execute(statement)
                assert error.value.args[0] == 1064
                seen.append(str(error.value))
            # A wrong password: the IO thread's error names the user, never the password.
            status = io_stops(cursor, change_source_at(
                "127.0.0.1", source.port, REPL_USER, SECRET, GET_SOURCE_PUBLIC_KEY=1,
                SOURCE_RETRY_COUNT=1,
            ))  # fmt: skip
            assert status["Last_IO_Errno"] == 1045
            seen.append(repr(status))
            cursor.execute(f"START REPLICA USER='{REPL_USER}' PASSWORD='{REPL_PASSWORD}' "
                           "FOR CHANNEL 'm1'")  # fmt: skip
            source.live.start()
            seen.append(repr(wait_applied(cursor, source.all_gtids())))
            for query in (
                "SHOW WARNINGS",
                "SELECT * FROM mysql.slave_master_info",
                "SELECT * FROM performance_schema.replication_connection_configuration",
                "SELECT * FROM performance_schema.replication_connection_status",
            ):
                cursor.execute(query)
                seen.append(repr(cursor.fetchall()))
            cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
    assert any(SECRET[:3] not in text and "<secret>" in text for text in seen[:2])
    leaks = [text for text in seen + [caplog.text] if SECRET in text]
    assert leaks == []
    assert "Received query:" in caplog.text  # the log saw the statements, redacted
