"""Client connections for the runner: a small protocol over DB-API, and pymysql behind it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pymysql
import pymysql.converters


class DbCursor(Protocol):
    """The part of a DB-API cursor the runner uses (pymysql's ``Cursor``)."""

    @property
    def description(self) -> Sequence[Sequence[Any]] | None: ...

    @property
    def warning_count(self) -> int: ...

    def execute(self, query: str) -> Any: ...

    def fetchall(self) -> Sequence[Sequence[Any]]: ...

    def nextset(self) -> bool | None: ...

    def close(self) -> None: ...


class DbConnection(Protocol):
    def cursor(self) -> DbCursor: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class ConnectParams:
    host: str
    port: int
    user: str
    password: str
    database: str | None = None


Connector = Callable[[ConnectParams], DbConnection]

#: The client library's base error class: what a failed statement raises.
DbError: type[Exception] = pymysql.err.Error

#: Encoders only: without decoders pymysql returns every field as the text the server sent.
_RAW_CONVERSIONS = {
    key: value for key, value in pymysql.converters.conversions.items() if not isinstance(key, int)
}


def connect_pymysql(params: ConnectParams) -> DbConnection:
    connection: DbConnection = pymysql.connect(
        host=params.host,
        port=params.port,
        user=params.user,
        password=params.password,
        database=params.database,
        autocommit=True,
        charset="utf8mb4",
        conv=dict(_RAW_CONVERSIONS),
    )
    return connection


Result = tuple[list[str], list[Sequence[Any]]]


def query_all(connection: DbConnection, sql: str) -> tuple[list[Result], int]:
    """Run ``sql``; every result set (columns, rows) and the statement's warning count."""
    cursor = connection.cursor()
    try:
        cursor.execute(sql)
        results: list[Result] = []
        warning_count = 0
        while True:
            description = cursor.description
            if description is not None:
                columns = [str(column[0]) for column in description]
                results.append((columns, list(cursor.fetchall())))
            warning_count = max(warning_count, getattr(cursor, "warning_count", 0) or 0)
            if not cursor.nextset():
                return results, warning_count
    finally:
        cursor.close()


def close_quietly(connection: DbConnection) -> None:
    try:
        connection.close()
    except Exception:  # closing a broken connection must not mask the outcome
        pass
