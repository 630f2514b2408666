"""mysqltest's result-file format: result sets, warnings and errors as text lines."""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spark_replica.applier_core.errors import ErrorCode, sqlstate_of


def format_value(value: object) -> str:
    """A field as mysqltest prints it: ``NULL``, text verbatim, bytes decoded as UTF-8.

    Values normally arrive as the text the server sent; the typed cases keep the format
    MySQL uses should a caller pass decoded values.
    """
    if value is None:
        return "NULL"
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return data.decode("latin-1")
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.timedelta):
        return _format_time(value)
    return str(value)


def _format_time(value: dt.timedelta) -> str:
    micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    sign = "-" if micros < 0 else ""
    seconds, fraction = divmod(abs(micros), 1_000_000)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    text = f"{sign}{hours:02d}:{minutes:02d}:{seconds:02d}"
    return f"{text}.{fraction:06d}" if fraction else text


def format_row(values: Sequence[object], replace: Mapping[int, str] | None = None) -> str:
    """One row, TAB-separated; ``replace`` maps 1-based column numbers to fixed text."""
    replace = replace or {}
    return "\t".join(
        replace[number] if number in replace else format_value(value)
        for number, value in enumerate(values, start=1)
    )


def format_result(
    columns: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    sort: bool = False,
    replace: Mapping[int, str] | None = None,
) -> list[str]:
    """A result set: the header of column names, then the rows (sorted as text if asked)."""
    body = [format_row(row, replace) for row in rows]
    if sort:
        body.sort()
    return ["\t".join(columns), *body]


def format_warnings(rows: Sequence[Sequence[object]]) -> list[str]:
    """``Warnings:`` followed by the ``SHOW WARNINGS`` rows (``Level<TAB>Code<TAB>Message``)."""
    return ["Warnings:", *(format_row(row) for row in rows)]


def format_error(sqlstate: str, message: str) -> str:
    """An expected error, as mysqltest logs it."""
    return f"ERROR {sqlstate}: {message}"


def error_symbol(errno: int) -> str | None:
    """``ER_NO_SUCH_TABLE`` for 1146; ``None`` for numbers outside the catalogue."""
    try:
        return f"ER_{ErrorCode(errno).name}"
    except ValueError:
        return None


@dataclass(frozen=True)
class ServerError:
    """An error reported for a statement: number, SQLSTATE and message."""

    errno: int
    sqlstate: str
    message: str

    def describe(self) -> str:
        symbol = error_symbol(self.errno)
        return f"{symbol} ({self.errno})" if symbol else str(self.errno)

    @classmethod
    def from_exception(cls, exc: BaseException) -> ServerError:
        """Read a client library error (pymysql's: ``args == (errno, message)``).

        pymysql parses the SQLSTATE from the error packet (``#`` + 5 characters after the
        error number) into ``exc.sqlstate``; when the packet had none, or the client library
        does not keep it, the catalogue's SQLSTATE for the number is used (``HY000`` if
        unknown), which is what the MySQL client library reports in that case.
        """
        args: tuple[Any, ...] = exc.args
        errno = args[0] if args and isinstance(args[0], int) else 0
        if len(args) > 1:
            message = str(args[1])
        elif args and not isinstance(args[0], int):
            message = str(args[0])
        else:
            message = type(exc).__name__
        sqlstate = getattr(exc, "sqlstate", None)
        if not isinstance(sqlstate, str) or len(sqlstate) != 5:
            sqlstate = sqlstate_of(errno)
        return cls(errno, sqlstate, message)


def result_path(test: Path) -> Path:
    """The ``.result`` file of a test: beside it, or in ``r/`` when the test is in ``t/``."""
    beside = test.with_suffix(".result")
    if not beside.exists() and test.parent.name == "t":
        in_r = test.parent.parent / "r" / beside.name
        if in_r.parent.is_dir():
            return in_r
    return beside


def diff_outputs(expected: str, actual: str, path: Path) -> str:
    lines = difflib.unified_diff(
        expected.splitlines(),
        actual.splitlines(),
        fromfile=str(path),
        tofile=f"{path} (actual)",
        lineterm="",
    )
    text = "\n".join(lines)
    if not text:
        return f"--- {path}\n+++ {path} (actual)\n(the outputs differ in line endings only)\n"
    return text + "\n"
