"""End to end: scripts run over pymysql against a real MySQL-protocol server (mysql_mimic)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Protocol

from spark_replica.tools.sqltest.cli import main
from spark_replica.tools.sqltest.runner import Outcome, run_file, run_files


class ServerThread(Protocol):
    """The ``mimic_server`` fixture (see conftest.py)."""

    port: int


SCRIPT = """\
# Rows come back in table order: 3, 1, 2.
SELECT id, name, note
  FROM t1;
--sorted_result
SELECT id, name FROM t1;
--replace_column 2 <name> 3 #
SELECT id, name, score FROM t1 ORDER BY id;
SELECT 1 AS one, NULL AS nothing, 'héllo' AS word;
--echo # an expected error
--error ER_NO_SUCH_TABLE
SELECT * FROM missing;
--error 1064
SELEC 1;
"""

EXPECTED = """\
SELECT id, name, note
  FROM t1;
id\tname\tnote
3\tthree\tNULL
1\tone\tfirst
2\ttwo\tNULL
SELECT id, name FROM t1;
id\tname
1\tone
2\ttwo
3\tthree
SELECT id, name, score FROM t1 ORDER BY id;
id\tname\tscore
1\t<name>\t#
2\t<name>\t#
3\t<name>\t#
SELECT 1 AS one, NULL AS nothing, 'héllo' AS word;
one\tnothing\tword
1\tNULL\théllo
# an expected error
SELECT * FROM missing;
ERROR 42S02: Table 'test.missing' doesn't exist
SELEC 1;
ERROR 42000: You have an error in your SQL syntax near 'SELEC 1'
"""


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def run(server: ServerThread, path: Path, *, record: bool = False) -> Outcome:
    return run_file(
        path,
        host="127.0.0.1",
        port=server.port,
        user="root",
        password="",
        database="test",
        record=record,
    )


def test_record_then_pass(mimic_server: ServerThread, tmp_path: Path) -> None:
    test = write(tmp_path, "basic.test", SCRIPT)
    recorded = run(mimic_server, test, record=True)
    assert recorded.passed, recorded.error
    assert (tmp_path / "basic.result").read_text(encoding="utf-8") == EXPECTED
    again = run(mimic_server, test)
    assert again.passed
    assert again.output == EXPECTED
    assert again.diff == ""
    assert again.error is None


def test_changed_result_fails_with_a_diff(mimic_server: ServerThread, tmp_path: Path) -> None:
    test = write(tmp_path, "basic.test", SCRIPT)
    write(tmp_path, "basic.result", EXPECTED.replace("1\tone\tfirst", "1\tone\tsecond"))
    outcome = run(mimic_server, test)
    assert not outcome.passed
    assert outcome.error is None
    assert "-1\tone\tsecond\n+1\tone\tfirst\n" in outcome.diff
    assert outcome.diff.startswith(f"--- {tmp_path / 'basic.result'}\n")


def test_expected_error_by_number(mimic_server: ServerThread, tmp_path: Path) -> None:
    test = write(tmp_path, "err.test", "--error 1146\nSELECT * FROM nope;\n")
    outcome = run(mimic_server, test, record=True)
    assert outcome.passed
    assert outcome.output == "SELECT * FROM nope;\nERROR 42S02: Table 'test.nope' doesn't exist\n"


def test_wrong_error_number_fails(mimic_server: ServerThread, tmp_path: Path) -> None:
    test = write(
        tmp_path, "err.test", "SELECT 1 AS x;\n--error ER_PARSE_ERROR\nSELECT * FROM nope;\n"
    )
    outcome = run(mimic_server, test, record=True)
    assert not outcome.passed
    assert outcome.error == (
        "mysqltest: At line 3: query 'SELECT * FROM nope' failed with wrong errno "
        "ER_NO_SUCH_TABLE (1146): 'Table 'test.nope' doesn't exist', "
        "instead of ER_PARSE_ERROR (1064)..."
    )
    assert not (tmp_path / "err.result").exists()


def test_unexpected_error_and_unexpected_success(
    mimic_server: ServerThread, tmp_path: Path
) -> None:
    failing = write(tmp_path, "a.test", "SELECT * FROM nope;\n")
    assert run(mimic_server, failing).error == (
        "mysqltest: At line 1: query 'SELECT * FROM nope' failed: "
        "ER_NO_SUCH_TABLE (1146): Table 'test.nope' doesn't exist"
    )
    succeeding = write(tmp_path, "b.test", "--error ER_NO_SUCH_TABLE\nSELECT 1 AS x;\n")
    assert run(mimic_server, succeeding).error == (
        "mysqltest: At line 2: query 'SELECT 1 AS x' succeeded - should have failed with "
        "error ER_NO_SUCH_TABLE (1146)..."
    )


def test_query_get_value(mimic_server: ServerThread, tmp_path: Path) -> None:
    script = (
        "--let $name= query_get_value(SELECT id, name FROM t1 ORDER BY id, name, 2)\n"
        "--let $none= query_get_value(SELECT id FROM t1 WHERE id > 5, id, 1)\n"
        "--let $count= `SELECT COUNT(*) AS c FROM t1`\n"
        "--echo $name / $none / $count\n"
        "SELECT id FROM t1 WHERE name = '$name';\n"
    )
    outcome = run(mimic_server, write(tmp_path, "qgv.test", script), record=True)
    assert outcome.passed, outcome.error
    assert outcome.output == (
        "two / No such row / 3\nSELECT id FROM t1 WHERE name = 'two';\nid\n2\n"
    )


def test_connect_opens_a_second_connection(mimic_server: ServerThread, tmp_path: Path) -> None:
    script = (
        "SET SESSION sql_mode = 'ANSI_QUOTES';\n"
        "--connect (con2,,,,)\n"
        "SELECT @@sql_mode = 'ANSI_QUOTES' AS same;\n"
        "SET SESSION sql_mode = 'TRADITIONAL';\n"
        "--connection default\n"
        "SELECT @@sql_mode AS mode;\n"
        "--connection con2\n"
        "SELECT @@sql_mode AS mode;\n"
        "--connection default\n"
        "--disconnect con2\n"
        "--connect (con2,127.0.0.1,root,,*NO-ONE*,$port)\n"
        "SELECT DATABASE() AS db;\n"
    )
    test = write(tmp_path, "conn.test", script.replace("$port", str(mimic_server.port)))
    outcome = run(mimic_server, test, record=True)
    assert outcome.passed, outcome.error
    assert outcome.output.splitlines()[1:] == [
        "SELECT @@sql_mode = 'ANSI_QUOTES' AS same;",
        "same",
        "0",
        "SET SESSION sql_mode = 'TRADITIONAL';",
        "SELECT @@sql_mode AS mode;",
        "mode",
        "ANSI_QUOTES",
        "SELECT @@sql_mode AS mode;",
        "mode",
        "TRADITIONAL",
        "SELECT DATABASE() AS db;",
        "db",
        "NULL",
    ]


def test_run_files(mimic_server: ServerThread, tmp_path: Path) -> None:
    good = write(tmp_path, "good.test", "SELECT 1 AS x;\n")
    write(tmp_path, "good.result", "SELECT 1 AS x;\nx\n1\n")
    bad = write(tmp_path, "bad.test", "SELECT * FROM nope;\n")
    outcomes = run_files(
        [good, bad], host="127.0.0.1", port=mimic_server.port, user="root", password=""
    )
    assert [(o.path, o.passed) for o in outcomes] == [(good, True), (bad, False)]


def test_cli(mimic_server: ServerThread, tmp_path: Path) -> None:
    good = write(tmp_path, "good.test", "SELECT 1 AS x;\n")
    bad = write(tmp_path, "bad.test", "SELECT 2 AS x;\n")
    args = ["--host", "127.0.0.1", "--port", str(mimic_server.port), "--user", "u"]
    out = io.StringIO()
    assert main([*args, "--record", str(good)], out=out) == 0
    assert out.getvalue().splitlines() == [f"{str(good):<60} [ pass ]", "1 passed, 0 failed"]

    write(tmp_path, "bad.result", "SELECT 2 AS x;\nx\n3\n")
    out = io.StringIO()
    assert main([*args, "--database", "test", str(good), str(bad)], out=out) == 1
    lines = out.getvalue().splitlines()
    assert lines[0] == f"{str(good):<60} [ pass ]"
    assert lines[1] == f"{str(bad):<60} [ fail ]"
    assert "-3" in lines and "+2" in lines
    assert lines[-1] == "1 passed, 1 failed"


def test_cli_reports_errors(mimic_server: ServerThread, tmp_path: Path) -> None:
    bad = write(tmp_path, "bad.test", "SELECT * FROM nope;\n")
    out = io.StringIO()
    assert main(["--port", str(mimic_server.port), str(bad)], out=out) == 1
    assert out.getvalue().splitlines() == [
        f"{str(bad):<60} [ fail ]",
        "mysqltest: At line 1: query 'SELECT * FROM nope' failed: "
        "ER_NO_SUCH_TABLE (1146): Table 'test.nope' doesn't exist",
        "0 passed, 1 failed",
    ]
