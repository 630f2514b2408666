"""The metadata database refuses a write while the server runs: CHANGE REPLICATION SOURCE
fails with ER_REPLICA_FATAL_ERROR (13117) in the database's words, without the statement or
the password it carried; the channel is not half changed, and the server goes on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pymysql
import pytest

from tests.helpers.server import connect, running_server

CHANGE = (
    "CHANGE REPLICATION SOURCE TO SOURCE_HOST='src', SOURCE_USER='repl', "
    "SOURCE_PASSWORD='s3cret-pw' FOR CHANNEL 'c1'"
)


def test_a_metadata_write_that_fails_is_13117(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with running_server(data) as server, connect(server.port) as conn, conn.cursor() as cur:
        with sqlite3.connect(data / "metadata.db") as metadata:  # as a damaged database
            metadata.execute("ALTER TABLE slave_master_info RENAME TO moved_away")
        with pytest.raises(pymysql.err.OperationalError) as raised:
            cur.execute(CHANGE)
        code, message = raised.value.args
        assert code == 13117
        assert message == (
            "Fatal error: the replication metadata store failed: no such table: slave_master_info"
        )
        assert "s3cret" not in message
        with pytest.raises(pymysql.err.OperationalError) as missing:
            cur.execute("SHOW REPLICA STATUS FOR CHANNEL 'c1'")
        assert missing.value.args[0] == 3074  # no channel was half created
        with sqlite3.connect(data / "metadata.db") as metadata:
            metadata.execute("ALTER TABLE moved_away RENAME TO slave_master_info")
        cur.execute(CHANGE)  # the database works again, and so does the statement
        cur.execute("SELECT Host FROM mysql.slave_master_info WHERE Channel_name = 'c1'")
        assert cur.fetchall() == (("src",),)
