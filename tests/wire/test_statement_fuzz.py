"""Malformed and random statements over a real connection (tests/helpers/statement_fuzz.py):
the server answers each one with a result or a MySQL error of its catalogue (number and
SQLSTATE), keeps the connection, logs no traceback, and afterwards still answers and
replicates. The generator is seeded; the seed is printed, and ``SPARK_REPLICA_FUZZ_SEED``
replays a run. The short form sends 2000 statements with a fixed seed, ``make soak`` 10000 with
a fresh one.

Below the fuzz run: deterministic malformed statements with their exact MySQL errors, and one
regression test for each server bug the fuzzing found."""

from __future__ import annotations

import logging
import os
import random
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest
from pymysql.constants import COMMAND

from spark_replica.applier_core.errors import CATALOGUE, ErrorCode
from spark_replica.applier_core.settings import DEFINITIONS, GTID_MODES
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.helpers.builtin_source import REPL_PASSWORD, REPL_USER, running_source
from tests.helpers.replica_channel import CHANNEL, change_source_at, wait_applied
from tests.helpers.server import connect
from tests.helpers.soak import soak_size, soaking
from tests.helpers.statement_fuzz import StatementFuzzer

SEED_VARIABLE = "SPARK_REPLICA_FUZZ_SEED"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
SHORT_SEED = 20261122
SYNTAX = (
    "You have an error in your SQL syntax; check the manual that corresponds to your "
    "MySQL server version for the right syntax to use near"
)
#: The loggers of the statement path: mysql-mimic, the server and the SQL layer.
STATEMENT_LOGGERS = ("mysql_mimic", "spark_replica.server", "spark_replica.sql_handlers", "asyncio")
SPEC = WorkloadSpec(tables=1, rows_per_table=10, transactions=10, clients=1)


def near(text: str, line: int = 1) -> str:
    return f"{SYNTAX} '{text}' at line {line}"


@pytest.fixture
def server_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Every record the server logs while the test runs; none may carry a traceback."""
    caplog.set_level(logging.INFO)
    yield caplog
    assert logged_failures(caplog) == []


def logged_failures(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Records of the statement path with a traceback or an internal error."""
    return [
        f"{r.name}: {r.getMessage()}"
        for r in caplog.records
        if r.name.startswith(STATEMENT_LOGGERS)
        and (r.exc_info is not None or r.getMessage() == "internal error")
    ]


def fuzz_seed() -> int:
    chosen = os.environ.get(SEED_VARIABLE)
    if chosen:
        return int(chosen)
    return random.SystemRandom().randrange(1 << 32) if soaking() else SHORT_SEED


def mysql_error(error: pymysql.MySQLError) -> tuple[int, str | None, str]:
    args: tuple[Any, ...] = error.args
    return int(args[0]), getattr(error, "sqlstate", None), str(args[1])


def execute(conn: Any, sql: str) -> tuple[int, str | None, str] | None:
    """None when ``sql`` succeeds (its rows read), else the error the server sent."""
    try:
        with conn.cursor() as cursor:
            cursor.execute(sql)
            cursor.fetchall()
    except pymysql.MySQLError as error:
        return mysql_error(error)
    return None


def failing(conn: Any, sql: str) -> tuple[int, str | None, str]:
    outcome = execute(conn, sql)
    assert outcome is not None, f"{sql!r} succeeded"
    return outcome


# -- the fuzz run ------------------------------------------------------------------------------
@pytest.mark.soak
def test_random_and_malformed_statements(
    tmp_path: Path, port: int, server_log: pytest.LogCaptureFixture
) -> None:
    """Each statement succeeds or gets a catalogue error with its SQLSTATE, on one connection
    that stays up; then the server answers SELECT 1 and SHOW REPLICA STATUS, and a real
    CHANGE REPLICATION SOURCE TO replicates."""
    seed = fuzz_seed()
    print(f"statement fuzz seed: {seed} ({SEED_VARIABLE}={seed} replays it)")
    outcomes: Counter[int | str] = Counter()
    with connect(port) as conn:
        connection_id = connection_of(conn)
        statements = StatementFuzzer(seed).statements(soak_size(short=2000, long=10000))
        for index, sql in enumerate(statements):
            where = f"seed {seed}, statement {index}: {sql[:300]!r}"
            outcome = execute(conn, sql)
            if outcome is None:
                outcomes["ok"] += 1
                continue
            code, sqlstate, message = outcome
            assert code in CATALOGUE, f"{where}: not a server error: {outcome}"
            assert sqlstate == CATALOGUE[ErrorCode(code)][0], f"{where}: {outcome}"
            colours = set(ANSI.findall(message)) - set(ANSI.findall(sql))
            assert "Traceback" not in message and not colours, f"{where}: {outcome}"
            outcomes[code] += 1
        print(f"outcomes: {dict(outcomes.most_common())}")
        assert connection_of(conn) == connection_id  # never dropped, never reconnected
        assert outcomes[1064] > 0 and outcomes["ok"] > 0  # the mix reached both ends
    assert logged_failures(server_log) == [], f"seed {seed}"
    with connect(port) as conn:
        assert execute(conn, "SELECT 1") is None
        assert execute(conn, "SHOW REPLICA STATUS") is None
        forget_what_the_run_changed(conn)
        replicates_afterwards(tmp_path, conn)


def connection_of(conn: Any) -> int:
    with conn.cursor() as cursor:
        cursor.execute("SELECT CONNECTION_ID()")
        return int(cursor.fetchone()[0])


def forget_what_the_run_changed(conn: Any) -> None:
    """Put the global variables back to their defaults (GTID_MODE one step at a time), and
    stop and remove every channel the statements created."""
    with conn.cursor() as cursor:
        for name, definition in DEFINITIONS.items():
            if not definition.read_only and name != "gtid_mode":
                cursor.execute(f"SET GLOBAL {name} = DEFAULT")
        cursor.execute("SELECT @@global.gtid_mode")
        mode = str(cursor.fetchone()[0])
        for step in GTID_MODES[GTID_MODES.index(mode) + 1 :]:
            cursor.execute(f"SET GLOBAL gtid_mode = {step}")
        cursor.execute("STOP REPLICA")
        cursor.execute("RESET REPLICA ALL")


def replicates_afterwards(tmp_path: Path, conn: Any) -> None:
    with running_source(tmp_path / "source", SPEC) as source, conn.cursor() as cursor:
        cursor.execute(change_source_at("127.0.0.1", source.port, REPL_USER, REPL_PASSWORD,
                                        GET_SOURCE_PUBLIC_KEY=1))  # fmt: skip
        cursor.execute(f"START REPLICA FOR CHANNEL '{CHANNEL}'")
        source.live.start()
        found = wait_applied(cursor, source.all_gtids())
        assert (found["Last_IO_Errno"], found["Last_SQL_Errno"]) == (0, 0), found
        cursor.execute(f"STOP REPLICA FOR CHANNEL '{CHANNEL}'")


# -- deterministic malformed statements ----------------------------------------------------------
@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        pytest.param(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h1' SOURCE_PORT=1",
            (1064, "42000", near("SOURCE_PORT=1")),
            id="missing-comma",
        ),
        pytest.param(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='it''s', FOR CHANNEL 'c1'",
            (1064, "42000", near("FOR CHANNEL 'c1'")),
            id="trailing-comma-after-nested-quote",
        ),
        pytest.param(
            "CHANGE REPLICATION SOURCE TO SOURCE_PORT=" + "(" * 5000 + "1" + ")" * 5000,
            (1064, "42000", near("(" * 80)),
            id="deep-parentheses",
        ),
        pytest.param(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h1'\x00",
            (1064, "42000", near("\x00")),
            id="nul-byte",
        ),
        pytest.param(
            "CHANGE REPLICATION SOURCE TO SOURCE_PORT=18446744073709551616",
            (1210, "HY000", "Incorrect arguments to SOURCE_PORT"),
            id="huge-number",
        ),
        pytest.param(
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h1', APPLIER_VERSION=3 FOR CHANNEL 'c1'",
            (
                7500,
                "HY000",
                "Invalid applier version specified in CHANGE REPLICATION SOURCE "
                "TO command. Refer to documentation for supported versions.",
            ),
            id="applier-version",
        ),  # fmt: skip
        pytest.param(
            "STOP REPLICA FOR CHANNEL 'nosuch'",
            (3074, "HY000", "Replica channel 'nosuch' does not exist."),
            id="unknown-channel",
        ),
        pytest.param(
            "SELECT CHANNEL_NAME FROM performance_schema.replication_applier_status WHERE",
            (1064, "42000", near("WHERE")),
            id="select-cut-short",
        ),
        pytest.param(
            "SELECT nosuch FROM performance_schema.replication_applier_status_by_worker",
            (1054, "42S22", "Unknown column 'nosuch' in 'field list'"),
            id="select-unknown-column",
        ),
        pytest.param(
            "SELECT * FROM performance_schema.nosuch",
            (1146, "42S02", "Table 'performance_schema.nosuch' doesn't exist"),
            id="select-unknown-table",
        ),
        pytest.param(
            "SET GLOBAL replica_parallel_workers = 'many'",
            (1232, "42000", "Incorrect argument type to variable 'replica_parallel_workers'"),
            id="set-wrong-type",
        ),
    ],
)
def test_malformed_statement_gets_mysqls_error(
    port: int, server_log: pytest.LogCaptureFixture, sql: str, expected: tuple[int, str, str]
) -> None:
    with connect(port) as conn:
        assert failing(conn, sql) == expected
        assert execute(conn, "SELECT 1") is None


# -- regressions: one per bug the fuzzing found ------------------------------------------------
@pytest.mark.parametrize(
    ("setting", "variable", "value"),
    [
        ("SET character_set_client = 'nosuch'", "character_set_client", "nosuch"),
        ("SET character_set_results = 'binary'", "character_set_results", "binary"),
        ("SET character_set_client = 2", "character_set_client", "2"),
        ("SET NAMES nosuch", "character_set_client", "nosuch"),
        ("SET CHARACTER SET nosuch", "character_set_client", "nosuch"),
        ("SET time_zone = 'garbage'", "time_zone", "garbage"),
        ("SET time_zone = '+99:00'", "time_zone", "+99:00"),
    ],
)
def test_a_session_setting_the_connection_cannot_use_is_refused(
    port: int, server_log: pytest.LogCaptureFixture, setting: str, variable: str, value: str
) -> None:
    """Was: accepted, after which every statement of the session failed with 1105 (or, for
    character_set_results, the connection dropped)."""
    with connect(port) as conn:
        assert failing(conn, setting) == (
            1231, "42000", f"Variable '{variable}' can't be set to the value of '{value}'"
        )  # fmt: skip
        assert execute(conn, "SELECT NOW() IS NOT NULL") is None


def test_character_sets_are_named_in_any_case_or_by_number(
    port: int, server_log: pytest.LogCaptureFixture
) -> None:
    with connect(port) as conn, conn.cursor() as cursor:
        cursor.execute("SET NAMES 'UTF8MB4'")
        cursor.execute("SET character_set_connection = 33")
        cursor.execute("SELECT @@character_set_results, @@character_set_connection, 'ü'")
        assert cursor.fetchall() == (("utf8mb4", "utf8", "ü"),)


def test_default_resets_a_session_variable(port: int, server_log: pytest.LogCaptureFixture) -> None:
    """Was: SET sql_mode = DEFAULT stored the text 'DEFAULT'; SET wait_timeout = DEFAULT
    failed with 1232."""
    with connect(port) as conn, conn.cursor() as cursor:
        cursor.execute("SET sql_mode = 'ANSI', wait_timeout = 5, character_set_results = DEFAULT")
        cursor.execute("SET sql_mode = DEFAULT, wait_timeout = DEFAULT")
        cursor.execute("SELECT @@sql_mode, @@wait_timeout, @@character_set_results")
        assert cursor.fetchall() == (
            ("ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE", 28800, "utf8mb4"),
        )


def test_an_error_the_result_character_set_cannot_spell_keeps_the_connection(
    port: int, server_log: pytest.LogCaptureFixture
) -> None:
    """Was: the error message could not be encoded in character_set_results and the server
    dropped the connection (2013). MySQL shows such characters as '?'."""
    with connect(port) as conn:
        assert execute(conn, "SET character_set_results = 'latin1'") is None
        assert failing(conn, "SELECT '€") == (1064, "42000", near("'?"))
        assert execute(conn, "SELECT 1") is None


@pytest.mark.parametrize(
    ("setup", "statement", "shown"),
    [
        pytest.param(None, b"\xff\xfe SELECT 1", "\ufffd\ufffd SELECT 1", id="utf8mb4"),
        pytest.param("SET NAMES big5", b"SELECT '\xc2'", "?'", id="big5"),
    ],
)
def test_bytes_the_client_character_set_cannot_decode_are_a_syntax_error(
    port: int,
    server_log: pytest.LogCaptureFixture,
    setup: str | None,
    statement: bytes,
    shown: str,
) -> None:
    """Was: 1105 with the codec's complaint, and a traceback in the server's log."""
    with connect(port) as conn:
        if setup is not None:
            assert execute(conn, setup) is None
        conn._execute_command(COMMAND.COM_QUERY, statement)
        with pytest.raises(pymysql.MySQLError) as caught:
            conn._read_query_result()
        assert mysql_error(caught.value) == (1064, "42000", near(shown))
        assert execute(conn, "SELECT 1") is None


@pytest.mark.parametrize(
    ("sql", "operand"),
    [
        ("SELECT 1 LIMIT 1.5", "1.5"),
        ("SELECT 1 LIMIT 0x1F", "0x1F"),
        ("SELECT 1 LIMIT 1, 1e3", "1e3"),
        ("SELECT * FROM performance_schema.replication_applier_status LIMIT TRUE", "TRUE"),
        ("SELECT * FROM mysql.slave_master_info LIMIT 2 OFFSET -1", "-1"),
    ],
)
def test_limit_takes_an_unsigned_integer(
    port: int, server_log: pytest.LogCaptureFixture, sql: str, operand: str
) -> None:
    """Was: 1105 "invalid literal for int()" and a traceback in the server's log."""
    with connect(port) as conn:
        assert failing(conn, sql) == (1064, "42000", near(operand))


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT nosuch", (1054, "42S22", "Unknown column 'nosuch' in 'field list'")),
        (
            "SET GLOBAL replica_net_timeout = nosuch + 1",
            (1054, "42S22", "Unknown column 'nosuch' in 'field list'"),
        ),
        ("SELECT a FROM mysql.nosuch", (1146, "42S02", "Table 'mysql.nosuch' doesn't exist")),
        (
            "SELECT 1 FROM information_schema.nosuch",
            (1146, "42S02", "Table 'information_schema.nosuch' doesn't exist"),
        ),
        (
            "SELECT t.* FROM performance_schema.replication_applier_status",
            (1051, "42S02", "Unknown table 't'"),
        ),
        ("SHOW REPLICA", (1064, "42000", near(""))),
        ("SET wait_timeout = 1e309", (1232, "42000", "Incorrect argument type to variable "
                                                     "'wait_timeout'")),
    ],
)  # fmt: skip
def test_statement_that_failed_internally_gets_mysqls_error(
    port: int, server_log: pytest.LogCaptureFixture, sql: str, expected: tuple[int, str, str]
) -> None:
    """Was: 1105 with the text of a Python exception (an optimizer, parser, KeyError or
    OverflowError) and a traceback in the server's log."""
    with connect(port) as conn:
        assert failing(conn, sql) == expected
