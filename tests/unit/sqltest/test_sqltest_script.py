"""Parsing mysqltest scripts: statements, comments, every command form, error names."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.tools.sqltest.errors import (
    ExpectedError,
    ScriptError,
    parse_error_list,
    resolve_error,
    resolve_error_name,
)
from spark_replica.tools.sqltest.script import (
    Connect,
    Disconnect,
    Echo,
    Exit,
    ExpectError,
    Let,
    LetQuery,
    LetQueryGetValue,
    ReplaceColumn,
    SetOption,
    SortedResult,
    Source,
    Statement,
    SwitchConnection,
    parse_file,
    parse_script,
    split_arguments,
    substitute,
)

# -- statements and comments ----------------------------------------------------------------


def test_single_statement() -> None:
    assert parse_script("SELECT 1;\n") == [Statement(1, "SELECT 1")]


def test_multi_line_statement_keeps_its_lines_and_starts_at_its_first_line() -> None:
    text = "\n\nSELECT a,\n       b\n  FROM t1\n;\nSELECT 2;\n"
    assert parse_script(text) == [
        Statement(3, "SELECT a,\n       b\n  FROM t1"),
        Statement(7, "SELECT 2"),
    ]


def test_several_statements_on_one_line() -> None:
    assert parse_script("SELECT 1; SELECT 2;  # done\nSELECT 3;") == [
        Statement(1, "SELECT 1"),
        Statement(1, "SELECT 2"),
        Statement(2, "SELECT 3"),
    ]


def test_semicolons_inside_quotes_and_block_comments_do_not_end_a_statement() -> None:
    text = "SELECT 'a;b', \"c;\", `d;e`, 'it''s;', 'x\\';' /* ; */ FROM t1;"
    assert parse_script(text) == [Statement(1, text[:-1])]


def test_hash_and_dash_dash_space_lines_are_comments() -> None:
    text = "# a comment; with a semicolon\n-- another comment\n--\nSELECT 1;\n"
    assert parse_script(text) == [Statement(4, "SELECT 1")]


def test_crlf_line_endings() -> None:
    assert parse_script("SELECT 1\r\n  FROM t1;\r\n--echo hi\r\n") == [
        Statement(1, "SELECT 1\n  FROM t1"),
        Echo(3, "hi"),
    ]


def test_empty_statement_is_skipped() -> None:
    assert parse_script("; ;\nSELECT 1;") == [Statement(2, "SELECT 1")]


def test_missing_delimiter_is_a_script_error_at_the_statement_line() -> None:
    with pytest.raises(ScriptError, match="Missing delimiter") as info:
        parse_script("SELECT 1;\n\nSELECT 2\n")
    assert info.value.line == 3


# -- commands ---------------------------------------------------------------------------------


def test_echo() -> None:
    assert parse_script("--echo   hello $v  \n--echo\n") == [Echo(1, "hello $v"), Echo(2, "")]


def test_error_by_name_number_list_and_sqlstate() -> None:
    commands = parse_script(
        "--error ER_PARSE_ERROR\n--error 1064,ER_NO_SUCH_TABLE\n--error 3074\n--error S42S02\n"
    )
    assert commands == [
        ExpectError(1, (ExpectedError("ER_PARSE_ERROR", 1064),)),
        ExpectError(2, (ExpectedError("1064", 1064), ExpectedError("ER_NO_SUCH_TABLE", 1146))),
        ExpectError(3, (ExpectedError("3074", 3074),)),
        ExpectError(4, (ExpectedError("S42S02", None, "42S02"),)),
    ]


def test_error_with_a_variable_is_resolved_later() -> None:
    assert parse_script("--error $err\n") == [ExpectError(1, (), raw="$err")]


def test_error_with_unknown_name_is_a_script_error() -> None:
    with pytest.raises(ScriptError, match="Unknown SQL error name 'ER_NO_SUCH_THING'") as info:
        parse_script("SELECT 1;\n--error ER_NO_SUCH_THING\nSELECT 2;\n")
    assert info.value.line == 2


def test_error_without_argument_is_a_script_error() -> None:
    with pytest.raises(ScriptError, match="Missing argument"):
        parse_script("--error\n")


def test_sorted_result_exit_and_options() -> None:
    text = (
        "--sorted_result\n--exit\n--disable_warnings\n--enable_warnings\n"
        "--disable_query_log\n--enable_query_log\n--disable_result_log\n--enable_result_log\n"
    )
    assert parse_script(text) == [
        SortedResult(1),
        Exit(2),
        SetOption(3, "warnings", False),
        SetOption(4, "warnings", True),
        SetOption(5, "query_log", False),
        SetOption(6, "query_log", True),
        SetOption(7, "result_log", False),
        SetOption(8, "result_log", True),
    ]


def test_argument_to_a_command_without_arguments_is_a_script_error() -> None:
    with pytest.raises(ScriptError, match="takes no arguments"):
        parse_script("--sorted_result now\n")


def test_unknown_command_is_a_script_error() -> None:
    with pytest.raises(ScriptError, match="'--replace_regex'") as info:
        parse_script("\n--replace_regex /a/b/\n")
    assert info.value.line == 2


def test_replace_column_pairs_with_quotes_and_escapes() -> None:
    commands = parse_script("--replace_column 1 # 3 \"two words\" 12 'a\\tb' 2 $v\n")
    assert commands == [
        ReplaceColumn(1, ((1, "#"), (3, "two words"), (12, "a\tb"), (2, "$v"))),
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [("1", "Wrong number"), ("", "Wrong number"), ("x #", "Wrong column"), ("0 #", "Wrong col")],
)
def test_replace_column_bad_arguments(args: str, message: str) -> None:
    with pytest.raises(ScriptError, match=message):
        parse_script(f"--replace_column {args}\n")


def test_split_arguments_doubled_quote() -> None:
    assert split_arguments("'it''s' \"a\\\"b\" plain") == ["it's", 'a"b', "plain"]


def test_let_forms() -> None:
    text = (
        "--let $a= hello world\n"
        "--let $b = `SELECT 1`\n"
        "--let $c= query_get_value(SELECT id, name FROM t1, name, 2)\n"
        "let $d= multi\n  line;\n"
        "LET $e=$a;\n"
    )
    assert parse_script(text) == [
        Let(1, "a", "hello world"),
        LetQuery(2, "b", "SELECT 1"),
        LetQueryGetValue(3, "c", "SELECT id, name FROM t1", "name", "2"),
        Let(4, "d", "multi\n  line"),
        Let(6, "e", "$a"),
    ]


@pytest.mark.parametrize(
    "text",
    ["--let a= 1\n", "--let $a 1\n", "--let $a= query_get_value(SELECT 1, x)\n"],
)
def test_bad_let_is_a_script_error(text: str) -> None:
    with pytest.raises(ScriptError):
        parse_script(text)


def test_connect_fields() -> None:
    assert parse_script(
        "--connect (con1,127.0.0.1,root,secret,test,3307)\n"
        "--connect (con2, , , , )\n"
        "--connect (con3,localhost,u,p,db,,/tmp/sock)\n"
        "--connect (con4)\n"
    ) == [
        Connect(1, "con1", "127.0.0.1", "root", "secret", "test", "3307"),
        Connect(2, "con2"),
        Connect(3, "con3", "localhost", "u", "p", "db"),
        Connect(4, "con4"),
    ]


@pytest.mark.parametrize("args", ["con1,host", "(,host)", "(a,b,c,d,e,f,g,h)"])
def test_bad_connect_is_a_script_error(args: str) -> None:
    with pytest.raises(ScriptError, match="'connect' expects"):
        parse_script(f"--connect {args}\n")


def test_connection_disconnect_source() -> None:
    assert parse_script("--connection con1\n--disconnect con1\n--source inc/a b.inc\n") == [
        SwitchConnection(1, "con1"),
        Disconnect(2, "con1"),
        Source(3, "inc/a b.inc"),
    ]


@pytest.mark.parametrize("text", ["--connection\n", "--disconnect a b\n", "--source\n"])
def test_connection_commands_need_one_argument(text: str) -> None:
    with pytest.raises(ScriptError, match="exactly one argument"):
        parse_script(text)


def test_command_in_the_middle_of_a_line_after_a_statement() -> None:
    assert parse_script("SELECT 1; --echo x\n") == [Statement(1, "SELECT 1"), Echo(1, "x")]


def test_parse_file_names_the_file_in_errors(tmp_path: Path) -> None:
    script = tmp_path / "bad.test"
    script.write_text("SELECT 1;\n--frobnicate\n", encoding="utf-8")
    with pytest.raises(ScriptError) as info:
        parse_file(script)
    assert info.value.source == str(script)
    assert info.value.line == 2
    assert str(info.value).startswith(f'In "{script}": At line 2: ')


def test_parse_missing_file() -> None:
    with pytest.raises(ScriptError, match="Could not open"):
        parse_file(Path("/nonexistent/x.test"))


# -- variables --------------------------------------------------------------------------------


def test_substitute_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SQLTEST_FROM_ENV", "env")
    monkeypatch.delenv("SQLTEST_UNDEFINED", raising=False)
    variables = {"a": "1", "name": "x"}
    assert substitute("$a-$name-$SQLTEST_FROM_ENV-[$SQLTEST_UNDEFINED]", variables) == (
        "1-x-env-[]"
    )
    assert substitute("cost \\$a and $ alone, $a$a", variables) == "cost $a and $ alone, 11"
    assert substitute("no variables", {}) == "no variables"


# -- error names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("ER_PARSE_ERROR", ErrorCode.PARSE_ERROR),
        ("ER_NO_SUCH_TABLE", ErrorCode.NO_SUCH_TABLE),
        ("ER_REPLICA_CHANNEL_DOES_NOT_EXIST", ErrorCode.REPLICA_CHANNEL_DOES_NOT_EXIST),
        ("ER_SLAVE_CHANNEL_DOES_NOT_EXIST", ErrorCode.REPLICA_CHANNEL_DOES_NOT_EXIST),
        ("ER_BAD_SLAVE", ErrorCode.BAD_REPLICA),
        ("ER_BAD_REPLICA", ErrorCode.BAD_REPLICA),
        ("ER_SLAVE_NOT_RUNNING", ErrorCode.REPLICA_NOT_RUNNING),
        ("ER_MASTER_INFO", ErrorCode.CONNECTION_METADATA),
        ("ER_MASTER_FATAL_ERROR_READING_BINLOG", ErrorCode.SOURCE_FATAL_ERROR_READING_BINLOG),
        ("ER_SLAVE_MASTER_COM_FAILURE", ErrorCode.REPLICA_SOURCE_COM_FAILURE),
        ("ER_MTS_CHANGE_MASTER_CANT_RUN_WITH_GAPS", ErrorCode.MTA_CHANGE_SOURCE_CANT_RUN_WITH_GAPS),
        ("er_parse_error", ErrorCode.PARSE_ERROR),
    ],
)
def test_resolve_error_name(name: str, code: ErrorCode) -> None:
    assert resolve_error_name(name) == int(code)
    assert resolve_error(name) == ExpectedError(name, int(code))


@pytest.mark.parametrize("name", ["ER_NOT_AN_ERROR", "PARSE_ERROR", "CR_SERVER_LOST", "ER_"])
def test_unknown_error_names(name: str) -> None:
    assert resolve_error_name(name) is None
    with pytest.raises(ScriptError, match="Unknown SQL error name"):
        resolve_error(name)


def test_parse_error_list_separators() -> None:
    assert parse_error_list(" 0 , ER_PARSE_ERROR 1146") == (
        ExpectedError("0", 0),
        ExpectedError("ER_PARSE_ERROR", 1064),
        ExpectedError("1146", 1146),
    )


def test_expected_error_matching_and_description() -> None:
    by_name = ExpectedError("ER_NO_SUCH_TABLE", 1146)
    by_state = ExpectedError("S42S02", None, "42S02")
    assert by_name.matches(1146, "HY000")
    assert not by_name.matches(1064, "42S02")
    assert by_state.matches(1, "42S02")
    assert not by_state.matches(1146, "HY000")
    assert by_name.describe() == "ER_NO_SUCH_TABLE (1146)"
    assert ExpectedError("1146", 1146).describe() == "1146"
    assert by_state.describe() == "sqlstate 42S02"
