"""Retrieved_Gtid_Set after a restart of the replica server, as MySQL shows it: read back from
the channel's relay log (each file's Previous_gtids and the transactions after it). The
receiver then asks the source only for what it has not received: nothing comes twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.file import read_raw_events
from spark_replica.applier_core.binlog.relaylog.index import relay_log_directory
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.storage import InMemoryEngine
from spark_replica.server.components import default_components
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.helpers.builtin_source import REPL_PASSWORD, REPL_USER, running_source
from tests.helpers.replica_channel import CHANNEL, change_source_at, poll, status, wait_applied
from tests.helpers.server import connect, running_server
from tests.unit.csa_apply.harness import engine_content

SPEC = WorkloadSpec(tables=2, rows_per_table=20, transactions=300, seed=11)


def _gtid_events(data_dir: Path) -> int:
    """GTID events in the channel's relay log files."""
    directory = relay_log_directory(data_dir, CHANNEL)
    return sum(
        1
        for path in sorted(directory.glob("*.[0-9]*"))
        for _start, _end, data in read_raw_events(path)
        if data[4] == EventType.GTID
    )


@pytest.mark.parametrize("sealed", [True, False], ids=["sealed", "read-back"])
def test_retrieved_gtid_set_survives_a_restart_and_nothing_is_received_twice(
    tmp_path: Path, sealed: bool
) -> None:
    """Sealed: the receiver stopped cleanly and sealed its relay log (relaylog/seal.py),
    the set comes from the seal. Read back: without the seal (as after a crash), from
    the files."""
    data = tmp_path / "data"
    engine = InMemoryEngine()
    with running_source(tmp_path / "source", SPEC) as source:
        source.live.start()
        every = source.all_gtids()
        with (
            running_server(data, default_components(engine)) as first,
            connect(first.port) as conn,
            conn.cursor() as cursor,
        ):
            cursor.execute("SET GLOBAL max_relay_log_size = 4096")  # many files
            cursor.execute(change_source_at("127.0.0.1", source.port, REPL_USER, REPL_PASSWORD,
                                            GET_SOURCE_PUBLIC_KEY=1))  # fmt: skip
            cursor.execute(f"START REPLICA IO_THREAD FOR CHANNEL '{CHANNEL}'")
            poll(cursor, lambda s: GtidSet.parse(s["Retrieved_Gtid_Set"]) == every)
            cursor.execute(f"STOP REPLICA IO_THREAD FOR CHANNEL '{CHANNEL}'")
        received = _gtid_events(data)
        assert received == len(source.transactions)
        seal = relay_log_directory(data, CHANNEL) / f"relay-bin-{CHANNEL}.seal"
        assert GtidSet.parse(json.loads(seal.read_text())["retrieved"]) == every
        if not sealed:
            seal.unlink()
        assert len(list(relay_log_directory(data, CHANNEL).glob("*.[0-9]*"))) > 10

        with (
            running_server(data, default_components(engine)) as second,
            connect(second.port) as conn,
            conn.cursor() as cursor,
        ):
            found = status(cursor)  # before any START: read back at server start
            assert found["Retrieved_Gtid_Set"] == every.format(",\n")
            assert found["Executed_Gtid_Set"] == ""
            cursor.execute(f"START REPLICA FOR CHANNEL '{CHANNEL}'")
            wait_applied(cursor, every)
            found = poll(cursor, lambda s: s["Replica_IO_State"] == "Waiting for source to "
                         "send event")  # fmt: skip
            assert found["Retrieved_Gtid_Set"] == every.format(",\n")
            cursor.execute(f"STOP REPLICA FOR CHANNEL '{CHANNEL}'")
        # The second run received nothing again (its relay log files are purged as applied,
        # so count what is left plus what the first run wrote: no new GTID event came).
        assert _gtid_events(data) <= received
    assert engine_content(engine) == source.content
