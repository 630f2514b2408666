"""SHOW RELAYLOG EVENTS over a channel's relay log (binlog files copied in count too)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pymysql.err import OperationalError

from spark_replica.applier_core.binlog.relaylog import relay_log_base_name, relay_log_directory
from spark_replica.tools.generator.simulate import SERVER_UUID, WorkloadSpec, simulate
from spark_replica.tools.generator.writer import write_binlogs
from tests.helpers.server import connect, running_server

FAILED = "Error when executing command SHOW RELAYLOG EVENTS: "


def test_show_relaylog_events(tmp_path: Path) -> None:
    data = tmp_path / "data"
    transactions, _ = simulate(WorkloadSpec(transactions=20, rows_per_table=5, rotate_every=15))
    directory = relay_log_directory(data, "c1")
    files = write_binlogs(
        transactions, directory, server_uuid=SERVER_UUID, base=relay_log_base_name("c1")
    )
    assert len(files) == 2
    with running_server(data) as srv, connect(srv.port) as conn, conn.cursor() as cur:
        cur.execute("CHANGE REPLICATION SOURCE TO SOURCE_HOST='h' FOR CHANNEL 'c1'")
        cur.execute("SHOW RELAYLOG EVENTS LIMIT 4 FOR CHANNEL 'c1'")
        assert [d[0] for d in cur.description] == [
            "Log_name", "Pos", "Event_type", "Server_id", "End_log_pos", "Info",
        ]  # fmt: skip
        rows = cur.fetchall()
        assert [r[:3] for r in rows] == [
            (files[0].name, 4, "Format_desc"),
            (files[0].name, 127, "Previous_gtids"),
            (files[0].name, 158, "Gtid"),
            (files[0].name, 235, "Query"),
        ]
        assert rows[2][5] == f"SET @@SESSION.GTID_NEXT= '{SERVER_UUID}:1'"
        second = files[1].name
        cur.execute(f"SHOW RELAYLOG EVENTS IN '{second}' FROM 4 LIMIT 1, 2 FOR CHANNEL 'c1'")
        rows = cur.fetchall()
        assert [(r[0], r[2]) for r in rows] == [(second, "Previous_gtids"), (second, "Gtid")]
        assert rows[0][5].startswith(f"{SERVER_UUID}:1-")
        cur.execute(f"SHOW RELAYLOG EVENTS IN '{files[0].name}' FOR CHANNEL 'c1'")
        assert cur.fetchall()[-1][2:] == ("Rotate", 1, files[0].stat().st_size, f"{second};pos=4")
        for sql, expected in [
            ("SHOW RELAYLOG EVENTS IN 'nope.000001' FOR CHANNEL 'c1'",
             (1220, FAILED + "Could not find target log")),
            (f"SHOW RELAYLOG EVENTS IN '{second}' FROM 5 FOR CHANNEL 'c1'",
             (1220, FAILED + "Wrong offset or I/O error")),
            ("SHOW RELAYLOG EVENTS FOR CHANNEL 'nope'",
             (3074, "Replica channel 'nope' does not exist.")),
            ("SHOW RELAYLOG EVENTS", (3079, "Multiple channels exist on the replica. "
                                             "Please provide channel name as an argument.")),
        ]:  # fmt: skip
            with pytest.raises(OperationalError) as caught:
                cur.execute(sql)
            assert caught.value.args == expected
        cur.execute("SHOW RELAYLOG EVENTS FOR CHANNEL ''")
        assert cur.fetchall() == ()
