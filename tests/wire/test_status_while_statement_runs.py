"""performance_schema and mysql.* replication tables, and SHOW REPLICA STATUS, are read in
the event loop without the statement lock: while a replication statement holds it (STOP
REPLICA joining a channel's threads, which may take seconds behind a Spark flush), they are
still answered, and so is every other client (reading them under the lock stalled the whole
event loop)."""

from __future__ import annotations

import threading
from pathlib import Path

from spark_replica.server.app import BackgroundServer, ReplicaServer
from spark_replica.server.config import ServerConfig
from tests.helpers.server import ROOT_PASSWORD, connect

WAIT = 30.0


def test_status_tables_answer_while_a_statement_holds_the_lock(tmp_path: Path) -> None:
    config = ServerConfig(bind="127.0.0.1", port=0, data_dir=tmp_path / "data",
                          root_password=ROOT_PASSWORD)  # fmt: skip
    replica = ReplicaServer(config, announce=lambda _: None)
    context = replica.open()
    with BackgroundServer(replica) as server:
        with connect(server.port) as conn, conn.cursor() as cur:
            cur.execute("CHANGE REPLICATION SOURCE TO SOURCE_HOST='src' FOR CHANNEL 'c1'")
        holding, release = threading.Event(), threading.Event()

        def long_statement() -> None:  # as STOP REPLICA holds it while threads end
            with context.manager.lock:
                holding.set()
                release.wait(WAIT)

        statement = threading.Thread(target=long_statement, name="long-statement")
        statement.start()
        try:
            assert holding.wait(WAIT)
            with connect(server.port, read_timeout=WAIT) as conn, conn.cursor() as cur:
                cur.execute(
                    "SELECT CHANNEL_NAME, HOST FROM "
                    "performance_schema.replication_connection_configuration"
                )
                assert cur.fetchall() == (("c1", "src"),)
                cur.execute("SELECT Channel_name, Host FROM mysql.slave_master_info")
                assert cur.fetchall() == (("c1", "src"),)
                cur.execute(
                    "SELECT SERVICE_STATE FROM performance_schema.replication_applier_status"
                )
                assert cur.fetchall() == (("OFF",),)
                cur.execute("SHOW REPLICA STATUS FOR CHANNEL 'c1'")
                names = [d[0] for d in cur.description]
                row = dict(zip(names, cur.fetchone(), strict=True))
                assert (row["Channel_Name"], row["Source_Host"]) == ("c1", "src")
                cur.execute("SHOW SLAVE STATUS")
                assert [r[1] for r in cur.fetchall()] == ["src"]  # Master_Host
            assert statement.is_alive()  # all of it answered while the lock was held
        finally:
            release.set()
            statement.join(WAIT)
