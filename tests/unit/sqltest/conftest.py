"""Fixtures for the sqltest runner: a real MySQL-protocol server (mysql_mimic) on a thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from mysql_mimic import MysqlServer, Session, errors
from sqlglot import expressions as exp
from sqlglot.errors import ParseError
from sqlglot.executor import execute

NO_SUCH_TABLE = 1146

#: The fixture server's only database and its tables: ``{table: rows}``.
TABLES: dict[str, list[dict[str, object]]] = {
    "t1": [
        {"id": 3, "name": "three", "score": 0.5, "note": None},
        {"id": 1, "name": "one", "score": 1.5, "note": "first"},
        {"id": 2, "name": "two", "score": 2.25, "note": None},
    ],
}

SCHEMA = {"test": {"t1": {"id": "INT", "name": "TEXT", "score": "DOUBLE", "note": "TEXT"}}}


class FixtureSession(Session):
    """Answers ``SELECT`` over ``TABLES``; unknown tables raise ER_NO_SUCH_TABLE (1146)."""

    async def handle_query(self, sql: str, attrs: dict[str, str]) -> Any:
        try:
            return await super().handle_query(sql, attrs)
        except ParseError as exc:
            message = f"You have an error in your SQL syntax near '{sql[:80]}'"
            raise errors.MysqlError(message, code=errors.ErrorCode.PARSE_ERROR) from exc

    async def query(self, expression: exp.Expression, sql: str, attrs: dict[str, str]) -> Any:
        names = {table.name.lower() for table in expression.find_all(exp.Table)}
        missing = sorted(names - TABLES.keys())
        if missing:
            raise errors.MysqlError(f"Table 'test.{missing[0]}' doesn't exist", code=NO_SUCH_TABLE)
        if isinstance(expression, exp.Select):
            result = execute(expression, tables=TABLES)
            return result.rows, list(result.columns)
        return [], []

    async def schema(self) -> Any:
        return SCHEMA


class ServerThread:
    """A ``mysql_mimic.MysqlServer`` on 127.0.0.1 (any free port), on its own event loop."""

    def __init__(self) -> None:
        errors.SQLSTATES.setdefault(NO_SUCH_TABLE, b"42S02")
        self.server = MysqlServer(session_factory=FixtureSession)
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self.ready = threading.Event()
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._serve, name="sqltest-mimic", daemon=True)

    def start(self) -> None:
        self.thread.start()
        if not self.ready.wait(timeout=30):
            raise RuntimeError("the fixture server did not start")
        if self.failure is not None:
            raise RuntimeError("the fixture server failed to start") from self.failure

    def stop(self) -> None:
        if self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=30)
        if self.thread.is_alive():
            raise RuntimeError("the fixture server thread did not stop")

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self.server.start_server(host="127.0.0.1", port=0))
            self.port = self.server.sockets()[0].getsockname()[1]
        except BaseException as exc:  # reported to start()
            self.failure = exc
            self.ready.set()
            self.loop.close()
            return
        self.ready.set()
        try:
            self.loop.run_forever()
        finally:
            self.server.close()
            tasks = asyncio.all_tasks(self.loop)
            for task in tasks:
                task.cancel()
            self.loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            self.loop.run_until_complete(self.server.wait_closed())
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()


@pytest.fixture(scope="session")
def mimic_server() -> Iterator[ServerThread]:
    server = ServerThread()
    server.start()
    try:
        yield server
    finally:
        server.stop()
