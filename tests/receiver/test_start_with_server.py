"""Channels start with the server, as MySQL's do unless skip_replica_start is set: after a
restart every channel with a source configured runs again by itself (whether or not it ran
before), resumes where its recorded state ends, and catches up; with skip_replica_start the
channels wait for START REPLICA. @@skip_replica_start shows the setting and is read-only."""

from __future__ import annotations

from pathlib import Path

import pymysql
import pytest

from spark_replica.applier_core.binlog.relaylog.index import relay_log_directory
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.storage import InMemoryEngine
from spark_replica.server.components import default_components
from spark_replica.server.config import ConfigError, load_config
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.helpers.builtin_source import REPL_PASSWORD, REPL_USER, running_source
from tests.helpers.replica_channel import (
    CHANNEL,
    change_source_at,
    poll,
    status,
    wait_applied,
)
from tests.helpers.server import server_cursor
from tests.unit.csa_apply.harness import engine_content

SPEC = WorkloadSpec(tables=2, rows_per_table=20, transactions=120, seed=5)


def test_a_configured_channel_starts_with_the_server_and_catches_up(tmp_path: Path) -> None:
    data = tmp_path / "data"
    engine = InMemoryEngine()
    with running_source(tmp_path / "source", SPEC) as source:
        source.live.start()
        every = source.all_gtids()
        # Configured, never started (the default channel stays without a source).
        with server_cursor(data, default_components(engine)) as cursor:
            cursor.execute(change_source_at(
                "127.0.0.1", source.port, REPL_USER, REPL_PASSWORD, GET_SOURCE_PUBLIC_KEY=1,
                REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2,
            ))  # fmt: skip
            cursor.execute("SELECT @@global.skip_replica_start")
            assert cursor.fetchone() == (1,)  # the test helper's default, as MySQL's tests
            found = status(cursor)
            assert (found["Replica_IO_Running"], found["Replica_SQL_Running"]) == ("No", "No")

        with server_cursor(data, default_components(engine), skip_replica_start=False) as cursor:
            cursor.execute("SELECT @@skip_replica_start, @@skip_slave_start")
            assert cursor.fetchone() == (0, 0)
            found = wait_applied(cursor, every)  # no START REPLICA was sent
            assert found["Replica_SQL_Running"] == "Yes"
            assert found["Replica_IO_Running"] in ("Yes", "Connecting")
            cursor.execute("SHOW REPLICA STATUS")  # the configured channel only
            names = [column[0] for column in cursor.description]
            rows = cursor.fetchall()
            assert [row[names.index("Channel_Name")] for row in rows] == [CHANNEL]
            with pytest.raises(pymysql.MySQLError) as excinfo:
                cursor.execute("SET GLOBAL skip_replica_start = 1")
            assert excinfo.value.args == (
                1238,
                "Variable 'skip_replica_start' is a read only variable",
            )
            cursor.execute(f"STOP REPLICA FOR CHANNEL '{CHANNEL}'")  # stopped before shutdown

        # Stopped before the shutdown: it still starts with the server, as in MySQL.
        with server_cursor(data, default_components(engine), skip_replica_start=False) as cursor:
            found = wait_applied(cursor, every)
            assert found["Replica_SQL_Running"] == "Yes"
            cursor.execute(f"STOP REPLICA FOR CHANNEL '{CHANNEL}'")
    assert engine_content(engine) == source.content


def test_a_channel_that_cannot_start_leaves_the_server_up(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A channel START REPLICA refuses (a relay log file listed in its index is missing:
    1380): logged, left stopped, and the server serves; START REPLICA then says why."""
    data = tmp_path / "data"
    with running_source(tmp_path / "source", SPEC) as source:
        source.live.start()
        with server_cursor(data, default_components(InMemoryEngine())) as cursor:
            cursor.execute(change_source_at("127.0.0.1", source.port, REPL_USER, REPL_PASSWORD,
                                            GET_SOURCE_PUBLIC_KEY=1))  # fmt: skip
            cursor.execute(f"START REPLICA IO_THREAD FOR CHANNEL '{CHANNEL}'")
            poll(cursor, lambda s: GtidSet.parse(s["Retrieved_Gtid_Set"]) == source.all_gtids())
            cursor.execute(f"STOP REPLICA IO_THREAD FOR CHANNEL '{CHANNEL}'")
    directory = relay_log_directory(data, CHANNEL)
    first_file = min(directory.glob("*.[0-9]*"))
    first_file.unlink()
    with server_cursor(
        data, default_components(InMemoryEngine()), skip_replica_start=False
    ) as cursor:
        found = status(cursor)
        assert (found["Replica_IO_Running"], found["Replica_SQL_Running"]) == ("No", "No")
        with pytest.raises(pymysql.MySQLError) as excinfo:
            cursor.execute(f"START REPLICA FOR CHANNEL '{CHANNEL}'")
        assert excinfo.value.args[0] == 1380
    assert f"Replica channel '{CHANNEL}' did not start with the server" in caplog.text
    assert first_file.name in caplog.text


@pytest.mark.parametrize(
    ("flag", "environ", "toml", "expected"),
    [
        (None, {}, "", False),  # MySQL's default: channels start with the server
        (True, {}, "skip_replica_start = false", True),  # the flag wins
        (None, {"SPARK_REPLICA_SKIP_REPLICA_START": "ON"}, "", True),
        (None, {}, "skip_replica_start = true", True),
        (None, {"SPARK_REPLICA_SKIP_REPLICA_START": "0"}, "skip_replica_start = true", False),
    ],
)
def test_skip_replica_start_from_flag_environment_or_file(
    tmp_path: Path, flag: bool | None, environ: dict[str, str], toml: str, expected: bool
) -> None:
    path = tmp_path / "replica.toml"
    path.write_text(toml + "\n")
    config = load_config(config_file=str(path), skip_replica_start=flag, environ=environ)
    assert config.skip_replica_start is expected


def test_skip_replica_start_must_be_a_boolean(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="skip_replica_start must be true or false: 'maybe'"):
        load_config(environ={"SPARK_REPLICA_SKIP_REPLICA_START": "maybe"})
