"""The runner over a scripted in-memory client: output format, failures, includes, options."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymysql
import pytest

from spark_replica.tools.sqltest.connection import ConnectParams, DbConnection, DbCursor
from spark_replica.tools.sqltest.runner import Outcome, run_file

#: ``sql -> response``: a list of ``(columns or None, rows, warning_count)`` or an exception.
Response = list[tuple[list[str] | None, list[tuple[Any, ...]], int]] | Exception

WARNINGS: Response = [(["Level", "Code", "Message"], [("Note", "1051", "Unknown table 't9'")], 0)]


@dataclass
class FakeServer:
    responses: dict[str, Response] = field(default_factory=dict)
    log: list[tuple[int, str]] = field(default_factory=list)
    opened: list[ConnectParams] = field(default_factory=list)
    closed: list[int] = field(default_factory=list)
    refuse: set[str] = field(default_factory=set)

    def connect(self, params: ConnectParams) -> DbConnection:
        if params.user in self.refuse:
            raise pymysql.err.OperationalError(1045, f"Access denied for user '{params.user}'")
        self.opened.append(params)
        return FakeConnection(self, len(self.opened))


class FakeCursor:
    def __init__(self, connection: FakeConnection) -> None:
        self.connection = connection
        self.results: list[tuple[list[str] | None, list[tuple[Any, ...]], int]] = []
        self.description: Sequence[Sequence[Any]] | None = None
        self.warning_count = 0

    def execute(self, query: str) -> int:
        server = self.connection.server
        server.log.append((self.connection.number, query))
        response = server.responses.get(query, [(None, [], 0)])
        if isinstance(response, Exception):
            raise response
        self.results = list(response)
        self.nextset()
        return 0

    def fetchall(self) -> Sequence[Sequence[Any]]:
        return self.rows

    def nextset(self) -> bool | None:
        if not self.results:
            return None
        columns, self.rows, self.warning_count = self.results.pop(0)
        self.description = None if columns is None else [(name,) for name in columns]
        return True

    def close(self) -> None:
        pass


class FakeConnection:
    def __init__(self, server: FakeServer, number: int) -> None:
        self.server = server
        self.number = number

    def cursor(self) -> DbCursor:
        return FakeCursor(self)

    def close(self) -> None:
        self.server.closed.append(self.number)


def run(
    tmp_path: Path,
    script: str,
    server: FakeServer,
    *,
    result: str | None = None,
    record: bool = False,
    database: str | None = "test",
) -> Outcome:
    test = tmp_path / "case.test"
    test.write_text(script, encoding="utf-8")
    if result is not None:
        (tmp_path / "case.result").write_text(result, encoding="utf-8")
    return run_file(
        test,
        host="db.example",
        port=3310,
        user="root",
        password="pw",
        database=database,
        record=record,
        connector=server.connect,
    )


def output_of(tmp_path: Path, script: str, server: FakeServer) -> str:
    outcome = run(tmp_path, script, server, record=True)
    assert outcome.error is None
    return outcome.output


def test_statement_echo_result_set_and_no_result_set(tmp_path: Path) -> None:
    server = FakeServer({"SELECT a,\n  b FROM t": [(["a", "b"], [("1", None)], 0)]})
    script = "SELECT a,\n  b FROM t;\nDO 1;\n--echo # done\n"
    assert (
        output_of(tmp_path, script, server)
        == "SELECT a,\n  b FROM t;\na\tb\n1\tNULL\nDO 1;\n# done\n"
    )


def test_several_result_sets(tmp_path: Path) -> None:
    server = FakeServer({"CALL p()": [(["a"], [("1",)], 0), (["b"], [("2",)], 0), (None, [], 0)]})
    assert output_of(tmp_path, "CALL p();\n", server) == "CALL p();\na\n1\nb\n2\n"


def test_warnings_are_shown_after_the_statement(tmp_path: Path) -> None:
    server = FakeServer({"DROP TABLE IF EXISTS t9": [(None, [], 1)], "SHOW WARNINGS": WARNINGS})
    assert output_of(tmp_path, "DROP TABLE IF EXISTS t9;\n", server) == (
        "DROP TABLE IF EXISTS t9;\nWarnings:\nNote\t1051\tUnknown table 't9'\n"
    )


def test_disable_warnings(tmp_path: Path) -> None:
    server = FakeServer({"DROP TABLE IF EXISTS t9": [(None, [], 1)], "SHOW WARNINGS": WARNINGS})
    script = "--disable_warnings\nDROP TABLE IF EXISTS t9;\n--enable_warnings\n"
    assert output_of(tmp_path, script, server) == "DROP TABLE IF EXISTS t9;\n"
    assert [sql for _, sql in server.log] == ["DROP TABLE IF EXISTS t9"]


def test_disable_query_log_and_result_log(tmp_path: Path) -> None:
    server = FakeServer(
        {"SELECT 1": [(["1"], [("1",)], 0)], "SELECT x": pymysql.err.ProgrammingError(1146, "no")}
    )
    script = (
        "--disable_query_log\nSELECT 1;\n--enable_query_log\n"
        "--disable_result_log\nSELECT 1;\n--error 1146\nSELECT x;\n--enable_result_log\n"
    )
    assert output_of(tmp_path, script, server) == "1\n1\nSELECT 1;\nSELECT x;\n"


def test_expected_error_is_logged(tmp_path: Path) -> None:
    error = pymysql.err.ProgrammingError(1146, "Table 'test.x' doesn't exist", sqlstate="42S02")
    server = FakeServer({"SELECT x": error})
    script = "--error ER_NO_SUCH_TABLE\nSELECT x;\n--error S42S02\nSELECT x;\n"
    assert output_of(tmp_path, script, server) == (
        "SELECT x;\nERROR 42S02: Table 'test.x' doesn't exist\n" * 2
    )


def test_one_of_several_expected_errors(tmp_path: Path) -> None:
    server = FakeServer(
        {"SELECT x": pymysql.err.ProgrammingError(1146, "no"), "SELECT 1": [(["1"], [("1",)], 0)]}
    )
    script = "--error 1064,1146\nSELECT x;\n--error 0,1146\nSELECT x;\n--error 0,1146\nSELECT 1;\n"
    assert output_of(tmp_path, script, server) == (
        "SELECT x;\nGot one of the listed errors\nSELECT x;\nSELECT 1;\n1\n1\n"
    )


def test_unexpected_error_fails_naming_the_line(tmp_path: Path) -> None:
    error = pymysql.err.ProgrammingError(1146, "Table 'test.x' doesn't exist", sqlstate="42S02")
    server = FakeServer({"SELECT x": error})
    outcome = run(tmp_path, "--echo before\n\nSELECT x;\n--echo after\n", server)
    assert not outcome.passed
    assert outcome.error == (
        "mysqltest: At line 3: query 'SELECT x' failed: "
        "ER_NO_SUCH_TABLE (1146): Table 'test.x' doesn't exist"
    )
    assert outcome.output == "before\nSELECT x;\n"
    assert server.closed == [1]


def test_expected_error_that_does_not_happen(tmp_path: Path) -> None:
    outcome = run(tmp_path, "--error ER_NO_SUCH_TABLE,1064\nDO 1;\n", FakeServer())
    assert outcome.error == (
        "mysqltest: At line 2: query 'DO 1' succeeded - should have failed with error "
        "ER_NO_SUCH_TABLE (1146) or 1064..."
    )


def test_wrong_error_number(tmp_path: Path) -> None:
    server = FakeServer({"SELEC 1": pymysql.err.ProgrammingError(1064, "syntax")})
    outcome = run(tmp_path, "--error 1146\nSELEC 1;\n", server)
    assert outcome.error == (
        "mysqltest: At line 2: query 'SELEC 1' failed with wrong errno "
        "ER_PARSE_ERROR (1064): 'syntax', instead of 1146..."
    )


def test_error_list_from_a_variable(tmp_path: Path) -> None:
    server = FakeServer({"SELEC 1": pymysql.err.ProgrammingError(1064, "syntax")})
    script = "--let $e= ER_PARSE_ERROR\n--error $e\nSELEC 1;\n"
    assert output_of(tmp_path, script, server) == "SELEC 1;\nERROR 42000: syntax\n"
    outcome = run(tmp_path, "--let $e= ER_NOPE\n--error $e\nSELEC 1;\n", server)
    assert outcome.error == "mysqltest: At line 2: Unknown SQL error name 'ER_NOPE'"


def test_modifiers_must_precede_a_statement(tmp_path: Path) -> None:
    outcome = run(
        tmp_path, "--error 1146\n--disable_query_log\n--echo x\nSELECT x;\n", FakeServer()
    )
    assert outcome.error is not None
    assert outcome.error.startswith("mysqltest: At line 3: --error, --sorted_result")


def test_modifiers_apply_to_one_statement_only(tmp_path: Path) -> None:
    rows: Response = [(["a", "b"], [("2", "y"), ("1", "x")], 0)]
    server = FakeServer({"SELECT a, b FROM t": rows})
    script = "--sorted_result\n--replace_column 2 #\nSELECT a, b FROM t;\nSELECT a, b FROM t;\n"
    assert output_of(tmp_path, script, server) == (
        "SELECT a, b FROM t;\na\tb\n1\t#\n2\t#\nSELECT a, b FROM t;\na\tb\n2\ty\n1\tx\n"
    )


def test_variables_in_statements_echo_and_replace_column(tmp_path: Path) -> None:
    server = FakeServer(
        {
            "SELECT 7 AS v": [(["v"], [("7",)], 0)],
            "SELECT a FROM t WHERE b = 7": [(["a"], [("1",)], 0)],
        }
    )
    script = (
        "--let $n= `SELECT 7 AS v`\n--echo n is $n, \\$n is literal\n"
        "--replace_column 1 <$n>\nSELECT a FROM t WHERE b = $n;\n"
    )
    assert output_of(tmp_path, script, server) == (
        "n is 7, $n is literal\nSELECT a FROM t WHERE b = 7;\na\n<7>\n"
    )


def test_let_query_without_rows_is_empty_and_joins_fields(tmp_path: Path) -> None:
    server = FakeServer(
        {"SELECT none": [(["a"], [], 0)], "SELECT two": [(["a", "b"], [("1", None)], 0)]}
    )
    script = "let $a= `SELECT none`;\nlet $b= `SELECT two`;\n--echo [$a] [$b]\n"
    assert output_of(tmp_path, script, server) == "[] [1\tNULL]\n"


@pytest.mark.parametrize(
    ("let", "message"),
    [
        ("query_get_value(SELECT v, w, 0)", "Invalid row number: '0'"),
        (
            "query_get_value(SELECT v, w, 1)",
            "Could not find column 'w' in the result of 'SELECT v'",
        ),
        ("query_get_value(DO 1, v, 1)", "query 'DO 1' returned no result set"),
        ("`SELECT bad`", "Error running query 'SELECT bad': ER_PARSE_ERROR (1064): syntax"),
    ],
)
def test_let_query_failures(tmp_path: Path, let: str, message: str) -> None:
    server = FakeServer(
        {
            "SELECT v": [(["v"], [("1",)], 0)],
            "SELECT bad": pymysql.err.ProgrammingError(1064, "syntax"),
        }
    )
    outcome = run(tmp_path, f"--let $x= {let}\n", server)
    assert outcome.error is not None
    assert outcome.error.endswith(message)


def test_connect_defaults_and_switching(tmp_path: Path) -> None:
    server = FakeServer()
    script = (
        "--connect (con1,,,,)\nDO 1;\n--connect (con2,h2,u2,p2,*NO-ONE*,3399)\n"
        "--connection default\nDO 2;\n--connection con2\nDO 3;\n--disconnect con2\n"
        "--connect (con2,,,,other)\n--disconnect con1\n"
    )
    assert output_of(tmp_path, script, server) == "DO 1;\nDO 2;\nDO 3;\n"
    assert server.opened == [
        ConnectParams("db.example", 3310, "root", "pw", "test"),
        ConnectParams("db.example", 3310, "root", "pw", "test"),
        ConnectParams("h2", 3399, "u2", "p2", None),
        ConnectParams("db.example", 3310, "root", "pw", "other"),
    ]
    assert server.log == [(2, "DO 1"), (1, "DO 2"), (3, "DO 3")]
    assert sorted(server.closed) == [1, 2, 3, 4]


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("--connect (con1,,bob,,)\n", "Could not open connection 'con1': ER_ACCESS_DENIED_ERROR"),
        ("--connect (default,,,,)\n", "Connection default already exists"),
        ("--connect (c,,,,,port)\n", "Illegal argument for port: 'port'"),
        ("--connection nope\n", "connection 'nope' not found in connection pool"),
        ("--disconnect nope\n", "connection 'nope' not found in connection pool"),
        ("--disconnect default\nDO 1;\n", "At line 2: no current connection"),
    ],
)
def test_connection_failures(tmp_path: Path, script: str, message: str) -> None:
    outcome = run(tmp_path, script, FakeServer(refuse={"bob"}))
    assert outcome.error is not None
    assert message in outcome.error


def test_default_connection_failure(tmp_path: Path) -> None:
    outcome = run(tmp_path, "DO 1;\n", FakeServer(refuse={"root"}))
    assert outcome.error == (
        "mysqltest: Could not open connection 'default': "
        "ER_ACCESS_DENIED_ERROR (1045): Access denied for user 'root'"
    )


def test_source_relative_to_the_test_and_to_the_including_file(tmp_path: Path) -> None:
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "outer.inc").write_text(
        "--echo outer $who\n--source inner.inc\n", encoding="utf-8"
    )
    (tmp_path / "include" / "inner.inc").write_text("--echo inner\nDO 1;\n", encoding="utf-8")
    script = "--let $who= me\n--source include/outer.inc\n--echo back\n"
    assert output_of(tmp_path, script, FakeServer()) == "outer me\ninner\nDO 1;\nback\n"


def test_failure_in_an_included_file_names_the_include_chain(tmp_path: Path) -> None:
    (tmp_path / "a.inc").write_text("--source b.inc\n", encoding="utf-8")
    (tmp_path / "b.inc").write_text("\nSELECT x;\n", encoding="utf-8")
    server = FakeServer({"SELECT x": pymysql.err.ProgrammingError(1146, "no")})
    outcome = run(tmp_path, "DO 1;\n--source a.inc\n", server)
    assert outcome.error == (
        f'mysqltest: In included file "{tmp_path / "b.inc"}":\n'
        f"included from {tmp_path / 'a.inc'} at line 1:\n"
        f"included from {tmp_path / 'case.test'} at line 2:\n"
        "At line 2: query 'SELECT x' failed: ER_NO_SUCH_TABLE (1146): no"
    )


def test_source_errors(tmp_path: Path) -> None:
    outcome = run(tmp_path, "--source missing.inc\n", FakeServer())
    assert outcome.error == "mysqltest: At line 1: Could not open 'missing.inc' for reading"
    (tmp_path / "bad.inc").write_text("--echo ok\n--bogus\n", encoding="utf-8")
    outcome = run(tmp_path, "--source bad.inc\n", FakeServer())
    assert outcome.error is not None
    assert outcome.error.endswith(
        "At line 2: Found line beginning with -- that didn't contain "
        "a valid mysqltest command: '--bogus'"
    )
    (tmp_path / "self.inc").write_text("--source self.inc\n", encoding="utf-8")
    outcome = run(tmp_path, "--source self.inc\n", FakeServer())
    assert outcome.error is not None
    assert outcome.error.endswith("Source directives are nesting too deep")


def test_exit_stops_and_compares(tmp_path: Path) -> None:
    (tmp_path / "stop.inc").write_text("--echo in\n--exit\n--echo never\n", encoding="utf-8")
    outcome = run(tmp_path, "--source stop.inc\n--echo never\n", FakeServer(), result="in\n")
    assert outcome.passed, outcome


def test_script_error_in_the_test_file(tmp_path: Path) -> None:
    server = FakeServer()
    outcome = run(tmp_path, "DO 1;\n--error ER_BOGUS\nDO 2;\n", server)
    assert outcome.error == "mysqltest: At line 2: Unknown SQL error name 'ER_BOGUS'"
    assert server.opened == []


def test_missing_result_file(tmp_path: Path) -> None:
    outcome = run(tmp_path, "--echo hi\n", FakeServer())
    assert not outcome.passed
    assert outcome.output == "hi\n"
    assert outcome.error is not None
    assert "--record" in outcome.error


def test_record_into_r_directory_then_compare(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "r").mkdir()
    outcome = run(tmp_path / "t", "--echo hi\n", FakeServer(), record=True)
    assert outcome.passed
    assert (tmp_path / "r" / "case.result").read_text(encoding="utf-8") == "hi\n"
    assert run(tmp_path / "t", "--echo hi\n", FakeServer()).passed
    changed = run(tmp_path / "t", "--echo ho\n", FakeServer())
    assert not changed.passed
    assert "-hi\n+ho\n" in changed.diff


def test_failed_test_is_not_recorded(tmp_path: Path) -> None:
    outcome = run(tmp_path, "--connection nope\n", FakeServer(), record=True)
    assert not outcome.passed
    assert not (tmp_path / "case.result").exists()


def test_client_crash_fails_the_test(tmp_path: Path) -> None:
    server = FakeServer({"DO 1": RuntimeError("protocol broken")})
    outcome = run(tmp_path, "DO 1;\n", server)
    assert outcome.error == "mysqltest: At line 1: RuntimeError: protocol broken"
    assert server.closed == [1]
