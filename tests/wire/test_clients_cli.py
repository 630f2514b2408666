"""The Debian ``mariadb`` command-line client against the replica, as a DBA runs it."""

from __future__ import annotations

import subprocess

import pytest

from tests.helpers.server import ROOT_PASSWORD

pytestmark = pytest.mark.clients

CSA_CHANNEL = (
    "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h1', SOURCE_AUTO_POSITION=1, "
    "REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2 FOR CHANNEL 'c1'"
)
MTA_CHANNEL = "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h2' FOR CHANNEL 'c2'"

UNKNOWN_CHANNEL = "ERROR 3074 (HY000) at line 1: Replica channel 'nope' does not exist."


def run_client(
    program: str,
    port: int,
    *args: str,
    user: str = "root",
    password: str = ROOT_PASSWORD,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the client with no option files and without TLS (the server offers none)."""
    command = [
        program,
        "--no-defaults",
        "--skip-ssl",
        "--protocol=TCP",
        "--host=127.0.0.1",
        f"--port={port}",
        f"--user={user}",
        f"--password={password}",
        *args,
    ]
    return subprocess.run(
        command, input=stdin, capture_output=True, text=True, timeout=60, check=False
    )


def table(stdout: str) -> list[list[str]]:
    """The rows of ``--batch`` output: one line per row, tab-separated."""
    return [line.split("\t") for line in stdout.splitlines()]


def vertical(stdout: str) -> list[dict[str, str]]:
    """The records of ``\\G`` output."""
    records: list[dict[str, str]] = []
    for line in stdout.splitlines():
        if line.startswith("*" * 27) and line.endswith(" row " + "*" * 27):
            records.append({})
            continue
        name, _, value = line.partition(": ")
        records[-1][name.strip()] = value
    return records


def test_batch_several_statements_skip_column_names(server: int, mariadb: str) -> None:
    """T03/T79 through `-e`: the client splits the statements and prints each result."""
    done = run_client(
        mariadb,
        server,
        "--batch",
        "--skip-column-names",
        "-e",
        f"{CSA_CHANNEL}; {MTA_CHANNEL}; "
        "SELECT CHANNEL_NAME, APPLIER_VERSION, APPLIER_WORKER_COUNT, APPLIER_EVENT_MEMORY_LIMIT "
        "FROM performance_schema.replication_applier_configuration ORDER BY CHANNEL_NAME; "
        "SELECT APPLIER_VERSION, COUNT(*) "
        "FROM performance_schema.replication_applier_configuration "
        "GROUP BY APPLIER_VERSION ORDER BY APPLIER_VERSION; "
        "SELECT @@global.replica_parallel_workers",
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert table(done.stdout) == [
        ["c1", "2", "4", "0"],
        ["c2", "1", "4", "0"],
        ["1", "1"],
        ["2", "1"],
        ["4"],
    ]


def test_batch_with_column_names_and_null(server: int, mariadb: str) -> None:
    done = run_client(
        mariadb,
        server,
        "--batch",
        "-e",
        f"{CSA_CHANNEL}; SELECT Channel_name, Applier_version, Privilege_checks_username "
        "FROM mysql.slave_relay_log_info",
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert table(done.stdout) == [
        ["Channel_name", "Applier_version", "Privilege_checks_username"],
        ["c1", "2", "NULL"],
    ]


def test_default_database_from_the_command_line(server: int, mariadb: str) -> None:
    """A database argument makes unqualified performance_schema tables resolve."""
    done = run_client(
        mariadb,
        server,
        "--batch",
        "--skip-column-names",
        "performance_schema",
        "-e",
        f"{CSA_CHANNEL}; SELECT DATABASE(); "
        "SELECT CHANNEL_NAME, APPLIER_VERSION FROM replication_applier_configuration",
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert table(done.stdout) == [["performance_schema"], ["c1", "2"]]


def test_vertical_show_replica_status(server: int, mariadb: str) -> None:
    done = run_client(mariadb, server, "-e", f"{CSA_CHANNEL}; SHOW REPLICA STATUS\\G")
    assert (done.returncode, done.stderr) == (0, "")
    assert "                  Source_Host: h1" in done.stdout.splitlines()
    [status] = vertical(done.stdout)
    assert len(status) == 60
    assert list(status)[:3] == ["Replica_IO_State", "Source_Host", "Source_User"]
    assert status["Source_Host"] == "h1"
    assert status["Replica_SQL_Running"] == "No"
    assert status["Seconds_Behind_Source"] == "NULL"
    assert status["Auto_Position"] == "1"
    assert status["Channel_Name"] == "c1"


def test_table_output(server: int, mariadb: str) -> None:
    done = run_client(
        mariadb,
        server,
        "--table",
        "-e",
        f"{CSA_CHANNEL}; SELECT CHANNEL_NAME, APPLIER_VERSION "
        "FROM performance_schema.replication_applier_configuration",
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [
        "+--------------+-----------------+",
        "| CHANNEL_NAME | APPLIER_VERSION |",
        "+--------------+-----------------+",
        "| c1           |               2 |",
        "+--------------+-----------------+",
    ]


def test_error_exit_code_and_message(server: int, mariadb: str) -> None:
    done = run_client(mariadb, server, "-e", "STOP REPLICA FOR CHANNEL 'nope'")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.splitlines()[-1] == UNKNOWN_CHANNEL


def test_error_stops_a_script_at_its_line(server: int, mariadb: str) -> None:
    script = "SELECT 1;\nSELECT 2;\nSTOP REPLICA\n  FOR CHANNEL 'nope';\nSELECT 3;\n"
    done = run_client(mariadb, server, "--batch", "--skip-column-names", stdin=script)
    assert done.returncode == 1
    assert table(done.stdout) == [["1"], ["2"]]
    assert done.stderr.splitlines()[-1] == (
        "ERROR 3074 (HY000) at line 3: Replica channel 'nope' does not exist."
    )

    forced = run_client(mariadb, server, "--batch", "--skip-column-names", "--force", stdin=script)
    # With --force the client reports the error, goes on, and exits 0.
    assert forced.returncode == 0
    assert table(forced.stdout) == [["1"], ["2"], ["3"]]
    assert forced.stderr.splitlines()[-1] == done.stderr.splitlines()[-1]


def test_script_on_stdin(server: int, mariadb: str) -> None:
    """T03 as a script file: multi-line statements, comments, then a PFS SELECT."""
    script = (
        "-- configure a CSA channel\n"
        "CHANGE REPLICATION SOURCE TO\n"
        "  SOURCE_HOST='sh',\n"
        "  SOURCE_AUTO_POSITION=1,\n"
        "  REQUIRE_ROW_FORMAT=1,\n"
        "  GTID_ONLY=1,\n"
        "  APPLIER_VERSION=2,\n"
        "  APPLIER_WORKER_COUNT=8\n"
        "  FOR CHANNEL 's1';\n"
        "/* and read it back */\n"
        "SELECT CHANNEL_NAME, APPLIER_VERSION, APPLIER_WORKER_COUNT\n"
        "  FROM performance_schema.replication_applier_configuration\n"
        "  WHERE CHANNEL_NAME = 's1';\n"
        "SELECT Host, Enabled_auto_position, Gtid_only FROM mysql.slave_master_info;\n"
    )
    done = run_client(mariadb, server, stdin=script)
    assert (done.returncode, done.stderr) == (0, "")
    assert table(done.stdout) == [
        ["CHANNEL_NAME", "APPLIER_VERSION", "APPLIER_WORKER_COUNT"],
        ["s1", "2", "8"],
        ["Host", "Enabled_auto_position", "Gtid_only"],
        ["sh", "1", "1"],
    ]


def test_show_warnings_option_prints_deprecations(server: int, mariadb: str) -> None:
    done = run_client(mariadb, server, "--show-warnings", "-e", "CHANGE MASTER TO MASTER_HOST='h'")
    assert done.returncode == 0
    assert done.stdout.splitlines() == [
        "Warning (Code 1287): 'CHANGE MASTER' is deprecated and will be removed in a future "
        "release. Please use CHANGE REPLICATION SOURCE instead",
        "Warning (Code 1287): 'MASTER_HOST' is deprecated and will be removed in a future "
        "release. Please use SOURCE_HOST instead",
    ]


def test_show_slave_status_then_show_warnings(server: int, mariadb: str) -> None:
    done = run_client(
        mariadb,
        server,
        "--batch",
        "-e",
        f"{CSA_CHANNEL}; SHOW SLAVE STATUS\\G SHOW WARNINGS",
    )
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    assert "Master_Host: h1" in [line.strip() for line in lines]
    assert lines[-2:] == [
        "Level\tCode\tMessage",
        "Warning\t1287\t'SHOW SLAVE STATUS' is deprecated and will be removed in a future "
        "release. Please use SHOW REPLICA STATUS instead",
    ]


def test_read_only_user(server: int, mariadb: str) -> None:
    setup = run_client(mariadb, server, "-e", CSA_CHANNEL)
    assert setup.returncode == 0
    reads = run_client(
        mariadb,
        server,
        "--batch",
        "--skip-column-names",
        "-e",
        "SELECT CHANNEL_NAME FROM performance_schema.replication_applier_configuration",
        user="reader",
        password="reader-secret",
    )
    assert (reads.returncode, reads.stdout, reads.stderr) == (0, "c1\n", "")
    refused = run_client(
        mariadb,
        server,
        "-e",
        "SET GLOBAL replica_parallel_workers=6",
        user="reader",
        password="reader-secret",
    )
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[-1] == (
        "ERROR 1227 (42000) at line 1: Access denied; you need (at least one of) the SUPER or "
        "SYSTEM_VARIABLES_ADMIN privilege(s) for this operation"
    )


def test_wrong_password(server: int, mariadb: str) -> None:
    done = run_client(mariadb, server, "-e", "SELECT 1", password="wrong")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.strip() == (
        "ERROR 1045 (28000): Access denied for user 'root'@'127.0.0.1' (using password: YES)"
    )
