"""WAIT_FOR_EXECUTED_GTID_SET on a replicating server, as scripts wait for a replica to catch
up: a client waits for the source's whole set while the channel applies it and gets 0 once
every GTID is executed; other clients are answered meanwhile; a server shutdown ends a wait
with no timeout instead of hanging on it."""

from __future__ import annotations

import gc
import threading
import time
from pathlib import Path
from typing import Any

import pymysql
import pytest

from spark_replica.applier_core.storage import InMemoryEngine
from spark_replica.server.components import default_components
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.helpers.builtin_source import REPL_PASSWORD, REPL_USER, running_source
from tests.helpers.replica_channel import CHANNEL, change_source_at, executed
from tests.helpers.server import connect, running_server

SPEC = WorkloadSpec(tables=2, rows_per_table=20, transactions=200, seed=3)
NEVER = "4e11fa47-71ca-11e1-9e33-c80aa9429562:1"


def _waiting(port: int, sql: str, answers: list[Any]) -> threading.Thread:
    def run() -> None:
        try:
            with connect(port) as conn, conn.cursor() as cursor:
                cursor.execute(sql)
                answers.append(cursor.fetchall())
        except pymysql.MySQLError as error:
            answers.append(error)

    thread = threading.Thread(target=run, name="gtid-waiter")
    thread.start()
    return thread


def test_a_client_waits_until_the_replica_has_executed_the_set(tmp_path: Path) -> None:
    with running_source(tmp_path / "source", SPEC) as source:
        source.live.start()
        every = source.all_gtids().format(",")
        with (
            running_server(tmp_path / "data", default_components(InMemoryEngine())) as server,
            connect(server.port) as conn,
            conn.cursor() as cursor,
        ):
            answers: list[Any] = []
            waiter = _waiting(server.port, f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{every}', 120)",
                              answers)  # fmt: skip
            cursor.execute(change_source_at("127.0.0.1", source.port, REPL_USER, REPL_PASSWORD,
                                            GET_SOURCE_PUBLIC_KEY=1))  # fmt: skip
            cursor.execute(f"START REPLICA FOR CHANNEL '{CHANNEL}'")
            waiter.join(150)
            assert answers == [((0,),)]
            assert source.all_gtids().is_subset(executed(cursor))
            cursor.execute(f"STOP REPLICA FOR CHANNEL '{CHANNEL}'")


def test_a_shutdown_ends_a_wait_without_timeout(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The waiting client's task is cancelled and ends with the server, not left pending to
    be destroyed with the event loop (asyncio logs that when the task is collected)."""
    answers: list[Any] = []
    with running_server(tmp_path / "data") as server:
        waiter = _waiting(server.port, f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{NEVER}')", answers)
        with connect(server.port) as conn, conn.cursor() as cursor:
            cursor.execute("SELECT 1")  # answered while the other client waits (or is about to)
            assert cursor.fetchall() == ((1,),)
    waiter.join(30)
    assert not waiter.is_alive()
    assert len(answers) == 1 and isinstance(answers[0], pymysql.MySQLError)
    gc.collect()
    assert "Task was destroyed but it is pending" not in caplog.text


def test_kill_query_ends_a_wait(tmp_path: Path) -> None:
    """KILL QUERY from another connection ends a wait without timeout with 1317, as in MySQL
    (mysql-mimic alone sends 3169); the waiting client's connection goes on."""
    with running_server(tmp_path / "data") as server:
        executed_gtids = server.server.context.manager.executed  # type: ignore[attr-defined]
        waiting = connect(server.port)
        answers: list[Any] = []

        def run() -> None:
            try:
                with waiting.cursor() as cursor:
                    cursor.execute(f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{NEVER}')")
                    answers.append(cursor.fetchall())
            except pymysql.MySQLError as error:
                answers.append(error)

        waiter = threading.Thread(target=run, name="gtid-waiter")
        waiter.start()
        try:
            deadline = time.monotonic() + 30
            while not executed_gtids.waiting():  # the server waits for the set now
                assert time.monotonic() < deadline
                time.sleep(0.01)
            with connect(server.port) as conn, conn.cursor() as cursor:
                cursor.execute(f"KILL QUERY {waiting.thread_id()}")
            waiter.join(30)
            assert not waiter.is_alive()
            assert len(answers) == 1 and isinstance(answers[0], pymysql.MySQLError)
            error = answers[0]
            assert (error.args, error.sqlstate) == (
                (1317, "Query execution was interrupted"),
                "70100",
            )
            with waiting.cursor() as cursor:
                cursor.execute("SELECT 1")
                assert cursor.fetchall() == ((1,),)
        finally:
            waiting.close()
