"""The result-file format: values, result sets, warnings, errors, diffs."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pymysql
import pytest

from spark_replica.tools.sqltest.output import (
    ServerError,
    diff_outputs,
    error_symbol,
    format_error,
    format_result,
    format_row,
    format_value,
    format_warnings,
    result_path,
)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "NULL"),
        ("", ""),
        ("2024-01-02 03:04:05.120000", "2024-01-02 03:04:05.120000"),
        ("héllo", "héllo"),
        ("héllo".encode(), "héllo"),
        (b"\xe9t\xe9", "été"),
        (bytearray(b"ab"), "ab"),
        (7, "7"),
        (-1.5, "-1.5"),
        (Decimal("10.50"), "10.50"),
        (True, "1"),
        (dt.datetime(2024, 1, 2, 3, 4, 5), "2024-01-02 03:04:05"),
        (dt.datetime(2024, 1, 2, 3, 4, 5, 120), "2024-01-02 03:04:05.000120"),
        (dt.date(2024, 1, 2), "2024-01-02"),
        (dt.timedelta(hours=26, minutes=3, seconds=4), "26:03:04"),
        (-dt.timedelta(seconds=1, microseconds=500), "-00:00:01.000500"),
    ],
)
def test_format_value(value: object, text: str) -> None:
    assert format_value(value) == text


def test_format_result_header_rows_and_nulls() -> None:
    assert format_result(["a", "b"], [("1", None), ("2", "x y")]) == ["a\tb", "1\tNULL", "2\tx y"]


def test_format_result_empty_result_still_has_a_header() -> None:
    assert format_result(["a"], []) == ["a"]


def test_format_result_sorted_keeps_the_header_first() -> None:
    rows = [("3", "c"), ("10", "a"), ("2", None)]
    assert format_result(["z", "a"], rows, sort=True) == ["z\ta", "10\ta", "2\tNULL", "3\tc"]


def test_format_result_replace_column_is_1_based_and_replaces_nulls() -> None:
    rows = [("1", None, "x"), ("2", "b", "y")]
    assert format_result(["a", "b", "c"], rows, replace={2: "#", 9: "?"}) == [
        "a\tb\tc",
        "1\t#\tx",
        "2\t#\ty",
    ]


def test_replace_happens_before_sorting() -> None:
    rows = [("b", "1"), ("a", "2")]
    assert format_result(["x", "y"], rows, sort=True, replace={1: "z"}) == [
        "x\ty",
        "z\t1",
        "z\t2",
    ]


def test_format_row() -> None:
    assert format_row(["a", None, 3]) == "a\tNULL\t3"


def test_format_warnings() -> None:
    rows = [("Note", "1051", "Unknown table 'test.t9'"), ("Warning", "1287", "deprecated")]
    assert format_warnings(rows) == [
        "Warnings:",
        "Note\t1051\tUnknown table 'test.t9'",
        "Warning\t1287\tdeprecated",
    ]


def test_format_error() -> None:
    assert format_error("42S02", "Table 'test.x' doesn't exist") == (
        "ERROR 42S02: Table 'test.x' doesn't exist"
    )


def test_error_symbol() -> None:
    assert error_symbol(1146) == "ER_NO_SUCH_TABLE"
    assert error_symbol(2013) is None


def test_server_error_uses_the_sqlstate_from_the_packet() -> None:
    exc = pymysql.err.ProgrammingError(1146, "Table 'test.x' doesn't exist", sqlstate="42S02")
    error = ServerError.from_exception(exc)
    assert error == ServerError(1146, "42S02", "Table 'test.x' doesn't exist")
    assert error.describe() == "ER_NO_SUCH_TABLE (1146)"


def test_server_error_without_sqlstate_falls_back_to_the_catalogue() -> None:
    assert ServerError.from_exception(pymysql.err.ProgrammingError(1064, "bad")).sqlstate == (
        "42000"
    )
    unknown = ServerError.from_exception(pymysql.err.OperationalError(2013, "Lost connection"))
    assert unknown == ServerError(2013, "HY000", "Lost connection")
    assert unknown.describe() == "2013"


def test_server_error_from_an_exception_without_errno() -> None:
    assert ServerError.from_exception(pymysql.err.InterfaceError("closed")) == ServerError(
        0, "HY000", "closed"
    )
    assert ServerError.from_exception(pymysql.err.InterfaceError()).message == "InterfaceError"


def test_result_path_beside_the_test(tmp_path: Path) -> None:
    assert result_path(tmp_path / "a.test") == tmp_path / "a.result"


def test_result_path_in_r_directory_for_t_layout(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    assert result_path(tmp_path / "t" / "a.test") == tmp_path / "t" / "a.result"
    (tmp_path / "r").mkdir()
    assert result_path(tmp_path / "t" / "a.test") == tmp_path / "r" / "a.result"
    (tmp_path / "t" / "a.result").write_text("", encoding="utf-8")
    assert result_path(tmp_path / "t" / "a.test") == tmp_path / "t" / "a.result"


def test_diff_outputs_is_a_unified_diff() -> None:
    diff = diff_outputs("a\nb\n", "a\nc\n", Path("x.result"))
    assert diff.splitlines() == [
        "--- x.result",
        "+++ x.result (actual)",
        "@@ -1,2 +1,2 @@",
        " a",
        "-b",
        "+c",
    ]


def test_diff_outputs_line_endings_only() -> None:
    assert "line endings only" in diff_outputs("a\n", "a", Path("x.result"))
