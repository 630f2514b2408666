"""SHOW [FULL] PROCESSLIST as a DBA reads it on a replica: every client connection with its
user, host, database, command, time and statement (cut to 100 characters without FULL), the
replication threads as ``system user`` threads with their states, and only their own
connections for users without the admin role (MySQL's rule without the PROCESS privilege)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pymysql

from spark_replica.applier_core.storage import InMemoryEngine
from spark_replica.server.components import default_components
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.helpers.builtin_source import REPL_PASSWORD, REPL_USER, running_source
from tests.helpers.replica_channel import CHANNEL, change_source_at, wait_applied
from tests.helpers.server import READER, connect, running_server

COLUMNS = ["Id", "User", "Host", "db", "Command", "Time", "State", "Info"]
NEVER = "4e11fa47-71ca-11e1-9e33-c80aa9429562:1"


def _processlist(cursor: Any, full: bool = False) -> list[dict[str, Any]]:
    cursor.execute("SHOW FULL PROCESSLIST" if full else "SHOW PROCESSLIST")
    assert [column[0] for column in cursor.description] == COLUMNS
    return [dict(zip(COLUMNS, row, strict=True)) for row in cursor.fetchall()]


def test_client_connections_with_what_they_run(tmp_path: Path) -> None:
    with running_server(tmp_path / "data") as server:
        executed = server.server.context.manager.executed  # type: ignore[attr-defined]
        admin, idle = connect(server.port), connect(server.port, database="mysql")
        waiting = connect(server.port)
        # A statement longer than 100 characters that runs until its 20 s timeout.
        statement = (f"SELECT WAIT_FOR_EXECUTED_GTID_SET('{NEVER}', 20) AS waited_for_"
                     f"{'x' * 60}")  # fmt: skip
        ended: list[BaseException] = []

        def wait() -> None:
            try:
                waiting.cursor().execute(statement)
            except pymysql.MySQLError as error:  # the KILL QUERY below
                ended.append(error)

        waiter = threading.Thread(target=wait, name="processlist-waiter")
        try:
            waiter.start()
            deadline = time.monotonic() + 30
            while not executed.waiting():  # the statement runs now
                assert time.monotonic() < deadline
                time.sleep(0.01)
            with admin.cursor() as cursor:
                rows = {row["Id"]: row for row in _processlist(cursor)}
                full = {row["Id"]: row for row in _processlist(cursor, full=True)}
                cursor.execute(f"KILL QUERY {waiting.thread_id()}")
            own = rows[admin.thread_id()]
            assert (own["User"], own["Command"], own["State"], own["Info"]) == (
                "root",
                "Query",
                "executing",
                "SHOW PROCESSLIST",
            )
            assert own["Host"].startswith("127.0.0.1:") and own["db"] is None
            sleeping = rows[idle.thread_id()]
            assert (sleeping["Command"], sleeping["Info"], sleeping["db"]) == (
                "Sleep",
                None,
                "mysql",
            )
            assert sleeping["Time"] >= 0
            running = rows[waiting.thread_id()]
            assert running["Command"] == "Query" and running["Info"] == statement[:100]
            assert full[waiting.thread_id()]["Info"] == statement
            assert set(rows) == {admin.thread_id(), idle.thread_id(), waiting.thread_id()}
        finally:
            waiter.join(30)
            for connection in (admin, idle, waiting):
                connection.close()
        assert [error.args[0] for error in ended] == [1317]


def test_a_user_without_the_admin_role_sees_only_its_own_connections(tmp_path: Path) -> None:
    with (
        running_server(tmp_path / "data") as server,
        connect(server.port) as root,
        connect(server.port, user=READER.name, password=READER.password) as reader,
        reader.cursor() as cursor,
    ):
        rows = _processlist(cursor)
        assert [(row["Id"], row["User"]) for row in rows] == [(reader.thread_id(), "reader")]
        assert root.thread_id() != reader.thread_id()


def test_replication_threads_are_listed_with_their_states(tmp_path: Path) -> None:
    spec = WorkloadSpec(tables=2, rows_per_table=20, transactions=50, seed=7)
    with (
        running_source(tmp_path / "source", spec) as source,
        running_server(tmp_path / "data", default_components(InMemoryEngine())) as server,
        connect(server.port) as conn,
        conn.cursor() as cursor,
    ):
        source.live.start()
        cursor.execute(change_source_at(
            "127.0.0.1", source.port, REPL_USER, REPL_PASSWORD, GET_SOURCE_PUBLIC_KEY=1,
            REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2, APPLIER_WORKER_COUNT=2,
        ))  # fmt: skip
        cursor.execute(f"START REPLICA FOR CHANNEL '{CHANNEL}'")
        wait_applied(cursor, source.all_gtids())
        system = [row for row in _processlist(cursor) if row["User"] == "system user"]
        cursor.execute("SELECT THREAD_ID, SERVICE_STATE FROM "
                       "performance_schema.replication_connection_status")  # fmt: skip
        ((receiver_id, _),) = cursor.fetchall()
        cursor.execute("SELECT THREAD_ID FROM "
                       "performance_schema.replication_applier_status_by_worker")  # fmt: skip
        worker_ids = {row[0] for row in cursor.fetchall()}
        by_id = {row["Id"]: row for row in system}
        receiver = by_id[receiver_id]
        assert (receiver["Host"], receiver["Command"]) == ("connecting host", "Connect")
        assert receiver["State"] == "Waiting for source to send event"
        assert worker_ids <= set(by_id) and len(worker_ids) == 2
        assert all(by_id[i]["State"] == "Waiting for an event from Coordinator"
                   for i in worker_ids)  # fmt: skip
        assert len(system) == 4  # receiver, coordinator, two workers
        assert [row["Id"] for row in system] == sorted(row["Id"] for row in system)
        cursor.execute(f"STOP REPLICA FOR CHANNEL '{CHANNEL}'")
        assert not [row for row in _processlist(cursor) if row["User"] == "system user"]
