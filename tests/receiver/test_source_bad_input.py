"""A source that sends damaged data (issue 7, "Bad input"): the relay log never holds a
broken event, the IO thread reconnects after what the network may have damaged (a checksum
that does not match: 1743; a packet that is no event: 2027) and stops with a clear error for
an event that is not whole (13122), and the applier is not disturbed."""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.binlog.file import BinlogFileReader
from spark_replica.applier_core.storage import InMemoryEngine
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.helpers.builtin_source import REPL_PASSWORD, REPL_USER, running_source
from tests.helpers.replica_channel import change_source_at, poll, wait_applied
from tests.helpers.server import connect
from tests.helpers.tcp_proxy import DamagingProxy
from tests.unit.csa_apply.harness import engine_content

SPEC = WorkloadSpec(tables=2, rows_per_table=30, transactions=200, clients=4)
CSA = "REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2, APPLIER_WORKER_COUNT=2"


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"  # the replica server's (the ``port`` fixture's)


def _replicate_through(proxy: DamagingProxy, cursor: Any, damage: str) -> None:
    """Plan the damage of the 151st large packet, then START REPLICA through ``proxy``."""
    proxy.damage(after=150, where=damage)
    cursor.execute(change_source_at("127.0.0.1", proxy.port, REPL_USER, REPL_PASSWORD,
                                    GET_SOURCE_PUBLIC_KEY=1, SOURCE_CONNECT_RETRY=1))  # fmt: skip
    cursor.execute(f"CHANGE REPLICATION SOURCE TO {CSA} FOR CHANNEL 'm1'")
    cursor.execute("START REPLICA FOR CHANNEL 'm1'")


def _relay_events_are_whole(data_dir: Path) -> int:
    """Every relay log event decodes, checksum included; how many there are."""
    count = 0
    for path in sorted(glob.glob(str(data_dir / "relay" / "**" / "*.0*"), recursive=True)):
        count += sum(1 for _ in BinlogFileReader(path))
    return count


@pytest.mark.parametrize(("where", "code", "message"), [
    ("body", 1743, "Replication event checksum verification failed while reading from network."),
    ("marker", 2027, "Malformed packet"),
])  # fmt: skip
def test_damage_the_network_may_cause_is_fetched_again(
    tmp_path: Path,
    data_dir: Path,
    port: int,
    engine: InMemoryEngine,
    where: str,
    code: int,
    message: str,
) -> None:
    with (
        running_source(tmp_path / "source", SPEC) as source,
        DamagingProxy("127.0.0.1", source.port) as proxy,
        connect(port) as conn,
        conn.cursor() as cursor,
    ):
        _replicate_through(proxy, cursor, damage=where)
        source.live.start()
        status = wait_applied(cursor, source.all_gtids())
        assert proxy.damaged.is_set()
        assert (status["Last_IO_Errno"], status["Replica_IO_Running"]) == (code, "Yes")
        assert status["Last_IO_Error"].endswith(f"Message: {message}") or (
            status["Last_IO_Error"] == message
        )
        assert status["Last_SQL_Errno"] == 0
        cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
    assert engine_content(engine) == source.content
    assert _relay_events_are_whole(data_dir) > 0


def test_an_event_that_is_not_whole_stops_the_io_thread_only(
    tmp_path: Path, data_dir: Path, port: int, engine: InMemoryEngine
) -> None:
    """An event whose length field disagrees with what came: 13122, the IO thread stops, the
    SQL thread goes on with everything received before it; nothing broken is in the relay
    log."""
    with (
        running_source(tmp_path / "source", SPEC) as source,
        DamagingProxy("127.0.0.1", source.port) as proxy,
        connect(port) as conn,
        conn.cursor() as cursor,
    ):
        _replicate_through(proxy, cursor, damage="length")
        source.live.start()
        status = poll(cursor, lambda s: s["Replica_IO_Running"] == "No")
        assert proxy.damaged.is_set()
        assert (status["Last_IO_Errno"], status["Last_IO_Error"]) == (
            13122, "Relay log write failure: could not queue event from source"
        )  # fmt: skip
        received = status["Retrieved_Gtid_Set"]
        status = poll(cursor, lambda s: s["Executed_Gtid_Set"] == received)  # applier goes on
        assert (status["Replica_SQL_Running"], status["Last_SQL_Errno"]) == ("Yes", 0)
        cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
    assert _relay_events_are_whole(data_dir) > 0
