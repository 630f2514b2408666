"""START REPLICA on a channel whose source is a live MariaDB: the receiver thread pulls by
GTID into the relay log and the applier applies it, with the source's content on both sides;
STOP joins every thread; bad credentials and a refused connection show MySQL's IO errors
(issue 7 §1, §3, §4)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.events import Gtid
from spark_replica.applier_core.binlog.file import BinlogFileReader
from spark_replica.applier_core.binlog.relaylog import relay_log_directory
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.receiver.mariadb import mariadb_uuid
from spark_replica.applier_core.storage import InMemoryEngine, TableRef
from tests.helpers.mariadb import REPL_PASSWORD, REPL_USER, MariaDB, running_mariadb
from tests.helpers.replica_channel import WAIT
from tests.helpers.replica_channel import change_source_at as _change_source_at
from tests.helpers.replica_channel import channel_threads as _threads
from tests.helpers.replica_channel import io_stops as _io_stops
from tests.helpers.replica_channel import poll as _poll
from tests.helpers.replica_channel import wait_applied as _wait_applied
from tests.helpers.server import ROOT_PASSWORD, connect, running_server
from tests.helpers.tcp_proxy import CuttingProxy


def _change_source(mariadb: MariaDB, password: str = REPL_PASSWORD, **extra: Any) -> str:
    return _change_source_at(mariadb.host, mariadb.port, REPL_USER, password, **extra)


def _source_gtids(source: MariaDB, *, whole: bool) -> GtidSet:
    """The source's newest GTID (or all of them, ``whole``) as the replica holds them."""
    domain, server, last = (int(p) for p in source.sql(
        "SELECT @@gtid_binlog_pos").strip().split("-"))  # fmt: skip
    return GtidSet.parse(f"{mariadb_uuid(domain, server)}:{1 if whole else last}-{last}")


def _rows(engine: InMemoryEngine, table: str) -> list[tuple[object, ...]]:
    return sorted(engine.rows(TableRef("live", table)), key=lambda r: r[0])  # type: ignore[arg-type,return-value]


def test_start_replica_replicates_a_live_mariadb(
    mariadb: MariaDB, port: int, engine: InMemoryEngine
) -> None:
    mariadb.sql("DROP DATABASE IF EXISTS live; CREATE DATABASE live; "
                "CREATE TABLE live.t (id INT PRIMARY KEY, v VARCHAR(20))")  # fmt: skip
    with connect(port) as conn, conn.cursor() as cursor:
        cursor.execute(_change_source(mariadb))
        cursor.execute("START REPLICA FOR CHANNEL 'm1'")
        assert "receiver-m1" in _threads()
        mariadb.sql("INSERT INTO live.t VALUES (1, 'a'), (2, 'b'); UPDATE live.t SET v = 'B' "
                    "WHERE id = 2; INSERT INTO live.t VALUES (3, 'c'); DELETE FROM live.t "
                    "WHERE id = 1")  # fmt: skip
        newest = _source_gtids(mariadb, whole=False)
        status = _wait_applied(cursor, newest)
        assert (status["Replica_IO_Running"], status["Replica_SQL_Running"]) == ("Yes", "Yes")
        assert (status["Last_IO_Errno"], status["Last_SQL_Errno"]) == (0, 0)
        assert status["Replica_IO_State"] == "Waiting for source to send event"
        received = GtidSet.parse(status["Retrieved_Gtid_Set"])
        assert newest.is_subset(received)
        assert _rows(engine, "t") == [(2, "B"), (3, "c")]

        cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
        assert _threads() == []
        mariadb.sql("INSERT INTO live.t VALUES (4, 'd')")
        cursor.execute("START REPLICA FOR CHANNEL 'm1'")  # resumes after what it has
        _poll(cursor, lambda _: (4, "d") in _rows(engine, "t"))
        cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
    assert _rows(engine, "t") == [(2, "B"), (3, "c"), (4, "d")]


@pytest.mark.parametrize("attempts", [1, 2])
def test_bad_credentials_stop_the_io_thread_with_1045(
    mariadb: MariaDB, port: int, attempts: int
) -> None:
    """A refused login is tried again every SOURCE_CONNECT_RETRY seconds, SOURCE_RETRY_COUNT
    times, then the IO thread stops with the source's 1045 and MySQL's text."""
    with connect(port) as conn, conn.cursor() as cursor:
        status = _io_stops(cursor, _change_source(mariadb, password="wrong",
                                                  SOURCE_CONNECT_RETRY=1,
                                                  SOURCE_RETRY_COUNT=attempts))  # fmt: skip
        assert status["Last_IO_Errno"] == 1045
        assert status["Last_IO_Error"] == (
            f"Error connecting to source '{REPL_USER}@{mariadb.host}:{mariadb.port}'. This was "
            f"attempt {attempts}/{attempts}, with a delay of 1 seconds between attempts. "
            f"Message: Access denied for user '{REPL_USER}'@'127.0.0.1' (using password: YES)"
        )
        assert _threads() == []


@pytest.fixture
def own_mariadb(tmp_path: Path) -> Iterator[MariaDB]:
    """A MariaDB of this test's own, to kill and restart."""
    with running_mariadb(tmp_path / "mariadb") as server:
        yield server


def test_a_killed_source_is_reconnected_with_no_gap_and_no_duplicate(
    own_mariadb: MariaDB, port: int, engine: InMemoryEngine
) -> None:
    """issue 7 §4: the source is killed (SIGKILL) and restarted three times while the
    replica runs, with transactions committed before each kill and after each restart. The
    receiver reconnects (SOURCE_CONNECT_RETRY=1) and resumes by GTID: the replica ends with
    exactly the source's rows (a duplicate insert would have stopped the applier with 1062)
    and every GTID of the source, once."""
    source = own_mariadb
    source.sql("CREATE DATABASE live; CREATE TABLE live.t (id INT PRIMARY KEY, v INT)")
    with connect(port) as conn, conn.cursor() as cursor:
        cursor.execute(_change_source(source, SOURCE_CONNECT_RETRY=1, SOURCE_RETRY_COUNT=60))
        cursor.execute("START REPLICA FOR CHANNEL 'm1'")
        next_id = 1
        for _ in range(3):
            batch = "; ".join(f"INSERT INTO live.t VALUES ({n}, {n * 10})"
                              for n in range(next_id, next_id + 20))  # fmt: skip
            source.sql(batch)
            next_id += 20
            source.kill()
            source.start()
        source.sql("INSERT INTO live.t VALUES (1000, 1)")
        status = _wait_applied(cursor, _source_gtids(source, whole=True))
        assert (status["Replica_IO_Running"], status["Replica_SQL_Running"]) == ("Yes", "Yes")
        assert status["Last_SQL_Errno"] == 0
        cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
        assert _threads() == []
    expected = [(n, n * 10) for n in range(1, next_id)] + [(1000, 1)]
    assert _rows(engine, "t") == expected


def test_heartbeats_and_the_last_queued_transaction(
    mariadb: MariaDB, port: int, engine: InMemoryEngine, tmp_path: Path
) -> None:
    """SOURCE_HEARTBEAT_PERIOD: an idle source sends heartbeats, which the receiver counts
    (COUNT_RECEIVED_HEARTBEATS, LAST_HEARTBEAT_TIMESTAMP) and keeps out of the relay log;
    LAST_QUEUED_TRANSACTION names the newest transaction in MariaDB's form."""
    mariadb.sql("CREATE DATABASE IF NOT EXISTS beat; CREATE TABLE IF NOT EXISTS beat.t "
                "(id INT PRIMARY KEY)")  # fmt: skip
    with connect(port) as conn, conn.cursor() as cursor:
        cursor.execute(_change_source(mariadb, SOURCE_HEARTBEAT_PERIOD=0.1))
        cursor.execute("START REPLICA FOR CHANNEL 'm1'")
        query = (
            "SELECT COUNT_RECEIVED_HEARTBEATS, LAST_HEARTBEAT_TIMESTAMP, "
            "LAST_QUEUED_TRANSACTION, SERVICE_STATE "
            "FROM performance_schema.replication_connection_status WHERE CHANNEL_NAME = 'm1'"
        )

        def beats() -> int:
            cursor.execute(query)
            return int(cursor.fetchone()[0])

        deadline = time.monotonic() + WAIT
        while beats() < 3:  # as a DBA polls
            assert time.monotonic() < deadline
            time.sleep(0.05)
        mariadb.sql("INSERT INTO beat.t VALUES (7)")
        newest = mariadb.sql("SELECT @@gtid_binlog_pos").strip()
        deadline = time.monotonic() + WAIT
        while True:
            cursor.execute(query)
            count, last_beat, last_queued, state = cursor.fetchone()
            if last_queued == newest:
                break
            assert time.monotonic() < deadline, last_queued
            time.sleep(0.05)
        assert int(count) >= 3 and str(last_beat) != "0000-00-00 00:00:00.000000"
        assert state == "ON"
        _poll(cursor, lambda _: engine.rows(TableRef("beat", "t")) == [(7,)])
        cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
    relay_files = sorted(relay_log_directory(tmp_path / "data", "m1").glob("*.0*"))
    kinds = {event.header.type_code for f in relay_files for _, _, event in BinlogFileReader(f)}
    assert relay_files and EventType.HEARTBEAT not in kinds


def test_a_refused_connection_is_2003(port: int) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    with connect(port) as conn, conn.cursor() as cursor:
        status = _io_stops(cursor, _change_source_at("127.0.0.1", free, "repl", "x",
                                                     SOURCE_RETRY_COUNT=1))  # fmt: skip
        assert status["Last_IO_Errno"] == 2003
        assert status["Last_IO_Error"] == (
            f"Error connecting to source 'repl@127.0.0.1:{free}'. This was attempt 1/1, with a "
            f"delay of 60 seconds between attempts. Message: Can't connect to MySQL server on "
            f"'127.0.0.1:{free}' (111)"
        )


def test_a_source_without_a_binary_log_is_1236(tmp_path: Path, port: int) -> None:
    """The source refuses the dump: final, no retry; MySQL's text for a source's error."""
    with running_mariadb(tmp_path / "nobinlog", binlog=False) as source:
        with connect(port) as conn, conn.cursor() as cursor:
            status = _io_stops(cursor, _change_source(source))
    assert status["Last_IO_Errno"] == 1236
    assert status["Last_IO_Error"] == (
        "Got fatal error 1236 from source when reading data from binary log: "
        "'Binary log is not open'"
    )


def test_a_transaction_cut_off_by_a_lost_connection_is_applied_once(
    mariadb: MariaDB, tmp_path: Path, port: int, engine: InMemoryEngine
) -> None:
    """issue 7 §1: the connection drops inside a transaction (after its GTID and Table_map,
    inside its rows event). The relay log keeps the partial copy; the receiver reconnects and
    the source sends the transaction again; the applier drops the partial copy and applies
    the whole one, once."""
    mariadb.sql("CREATE DATABASE IF NOT EXISTS cut; CREATE TABLE IF NOT EXISTS cut.t "
                "(id INT PRIMARY KEY, v VARCHAR(40)); DELETE FROM cut.t")  # fmt: skip
    with CuttingProxy(mariadb.host, mariadb.port) as proxy:
        via_proxy = MariaDB(mariadb.host, proxy.port, mariadb.root)
        with connect(port) as conn, conn.cursor() as cursor:
            cursor.execute(_change_source(via_proxy, SOURCE_CONNECT_RETRY=1,
                                          SOURCE_HEARTBEAT_PERIOD=0))  # fmt: skip
            cursor.execute("START REPLICA FOR CHANNEL 'm1'")
            _wait_applied(cursor, _source_gtids(mariadb, whole=False))
            proxy.cut_after(300)  # GTID and Table_map pass; the rows event does not
            values = ", ".join(f"({n}, 'row number {n:05d} of the big one')" for n in range(500))
            mariadb.sql(f"INSERT INTO cut.t VALUES {values}")
            assert proxy.cut.wait(WAIT)
            big = _source_gtids(mariadb, whole=False)
            _wait_applied(cursor, big)
            cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
    assert len(engine.rows(TableRef("cut", "t"))) == 500
    relay_files = sorted(relay_log_directory(tmp_path / "data", "m1").glob("*.0*"))
    gtids = [(e.uuid, e.gno) for f in relay_files for _, _, e in BinlogFileReader(f)
             if isinstance(e, Gtid)]  # fmt: skip
    [(uuid, _tag, _first, gno)] = list(big.intervals())
    assert gtids.count((uuid, gno)) == 2  # the partial copy, then the whole one


def test_a_server_that_cannot_be_a_source_stops_the_io_thread(tmp_path: Path, port: int) -> None:
    """A server that is no source (here this project's own replica server, which refuses to
    set user variables) stops the IO thread at once, without retries, with MySQL's 1593 and
    the step that failed."""
    with running_server(tmp_path / "other") as other, connect(port) as conn:
        with conn.cursor() as cursor:
            status = _io_stops(cursor, _change_source_at("127.0.0.1", other.port, "root",
                                                         ROOT_PASSWORD))  # fmt: skip
    assert status["Last_IO_Errno"] == 1593
    assert status["Last_IO_Error"].startswith(
        "Fatal error: The replica I/O thread stops because a fatal error is encountered when "
        "setting @source_binlog_checksum on source. Error: "
    )
