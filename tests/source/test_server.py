"""Stopping the built-in source (``SourceServer.close``: one idempotent path that ends every
thread, dump threads waiting for events included) and its live workload (``LiveWorkload``:
transactions appended at a rate, ``stop`` joins its thread)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

import pytest

from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.events import Gtid, Xid
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.receiver.client import SourceClient, SourceError
from spark_replica.applier_core.receiver.dump import dump_gtid, events, prepare_mysql
from spark_replica.tools.generator.simulate import GeneratedTransaction, simulate
from spark_replica.tools.source import SourceOptions, SourceServer
from spark_replica.tools.source.live import LiveWorkload
from tests.source.conftest import (
    REPLICA_SERVER_ID,
    SPEC,
    TOTAL,
    UUID,
    Connect,
    MakeBinlog,
    StartServer,
    decode,
    file_events,
    gnos,
    gtids,
)


def _source_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("source-") and t.is_alive()]


def _wait_for(condition: Callable[[], bool], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.005)  # polling a condition, not ordering threads


# -- SourceServer.close --------------------------------------------------------------------------


def test_close_ends_a_waiting_dump_at_once(
    make_binlog: MakeBinlog, start_server: StartServer, connect: Connect
) -> None:
    """A blocking dump that has sent everything waits on the binary log's end; close()
    returns promptly all the same, no ``source-*`` thread is left, the replica sees the
    connection lost (2013), and a second close() does nothing."""
    binlog = make_binlog(10)
    server = start_server(binlog)
    client = connect(server)
    prepare_mysql(client)
    dump_gtid(client, REPLICA_SERVER_ID, GtidSet(), blocking=True)
    stream = events(client)
    raws: list[bytes] = []
    for raw in stream:  # up to the Xid of the last transaction: then the dump waits
        raws.append(raw)
        if raw[4] == EventType.XID and gnos(decode(raws))[-1] == 10:
            break
    assert gnos(decode(raws)) == list(range(1, 11))
    assert isinstance(decode(raws)[-1], Xid)
    assert any(name.startswith("source-dump-") for name in _source_threads())
    started = time.monotonic()
    server.close()
    assert time.monotonic() - started < 2
    assert _source_threads() == []
    with pytest.raises(SourceError) as caught:
        next(stream)
    assert caught.value.code == 2013
    server.close()
    assert _source_threads() == []


def test_close_ends_idle_and_half_logged_in_connections(
    make_binlog: MakeBinlog, start_server: StartServer, connect: Connect
) -> None:
    server = start_server(make_binlog(3))
    idle = connect(server)  # logged in, waiting for a command
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as half:
        assert half.recv(1)  # the greeting came; no answer is sent
        _wait_for(lambda: server.connection_count() == 2)
        started = time.monotonic()
        server.close()
        assert time.monotonic() - started < 2
        assert _source_threads() == []
        while half.recv(4096):  # the rest of the greeting, then the end (not a timeout)
            pass
    with pytest.raises(SourceError) as caught:
        idle.query("SELECT 1")
    assert caught.value.code == 2013


def test_a_closed_server_refuses_connections(
    make_binlog: MakeBinlog, start_server: StartServer, connect: Connect
) -> None:
    server = start_server(make_binlog())
    port = server.port
    server.close()
    with pytest.raises(SourceError) as caught:
        SourceClient.connect("127.0.0.1", port, "repl", "x", timeout=5)
    assert caught.value.code == 2003


def test_close_without_start(make_binlog: MakeBinlog) -> None:
    binlog = make_binlog()
    server = SourceServer(binlog, SourceOptions(server_uuid=UUID))
    server.close()
    server.close()
    assert _source_threads() == []
    with pytest.raises(RuntimeError):
        binlog.append([], None)  # it closed the binary log


def test_a_connection_that_ends_leaves_the_others_served(
    make_binlog: MakeBinlog, start_server: StartServer, connect: Connect
) -> None:
    server = start_server(make_binlog(3))
    first, second = connect(server), connect(server)
    _wait_for(lambda: server.connection_count() == 2)
    first.close()
    _wait_for(lambda: server.connection_count() == 1)
    assert second.query("SELECT @@GLOBAL.SERVER_UUID").rows == [(UUID,)]


# -- LiveWorkload ----------------------------------------------------------------------------------


def _rest(after: int) -> list[GeneratedTransaction]:
    return [trx for trx in simulate(SPEC)[0] if trx.gno > after]


def test_a_live_workload_appends_all_its_transactions_at_its_rate(
    make_binlog: MakeBinlog,
) -> None:
    binlog = make_binlog(7)
    transactions = _rest(7)
    rate = 400.0
    live = LiveWorkload(binlog, transactions, server_uuid=UUID, rate=rate)
    started = time.monotonic()
    live.start()
    assert live.finished.wait(20)
    elapsed = time.monotonic() - started
    live.stop()
    assert _source_threads() == []
    assert live.appended == len(transactions) == TOTAL - 7
    assert binlog.executed() == gtids(1, TOTAL)
    assert elapsed >= (len(transactions) - 1) / rate  # transaction n is due at n / rate
    live.stop()  # idempotent


@pytest.mark.parametrize("prepare", [False, True], ids=["encoded-live", "prepared"])
def test_a_live_workload_stamps_each_commit_with_the_time_it_is_appended(
    make_binlog: MakeBinlog, prepare: bool
) -> None:
    """Like a real source's commits, the GTID events carry the wall-clock time of the append
    (to the µs), so a replica's lag can be read from them (WL7374 timestamps); a workload
    encoded beforehand (``prepare``) is restamped as it is appended."""
    binlog = make_binlog(7)
    before = time.time_ns() // 1000
    live = LiveWorkload(binlog, _rest(7), server_uuid=UUID, prepare=prepare).start()
    assert live.finished.wait(20)
    live.stop()
    after = time.time_ns() // 1000
    raws = [raw for name, _ in binlog.files() for _, _, raw in file_events(binlog.directory / name)]
    stamped = [event for event in decode(raws) if isinstance(event, Gtid) and event.gno > 7]
    assert [event.gno for event in stamped] == list(range(8, TOTAL + 1))
    times = [event.original_commit_timestamp for event in stamped]
    assert before <= times[0] and times[-1] <= after
    assert times == sorted(times)
    assert all(event.immediate_commit_timestamp == event.original_commit_timestamp
               for event in stamped)  # fmt: skip
    assert all(event.header.timestamp == event.original_commit_timestamp // 1_000_000
               for event in stamped)  # fmt: skip
    assert live.last_commit_time_us == times[-1]


def test_stopping_a_live_workload_joins_its_thread_at_once(make_binlog: MakeBinlog) -> None:
    binlog = make_binlog(7)
    live = LiveWorkload(binlog, _rest(7), server_uuid=UUID, rate=2.0).start()
    _wait_for(lambda: live.appended >= 1)
    started = time.monotonic()
    live.stop()
    assert time.monotonic() - started < 1
    assert _source_threads() == []
    assert live.finished.is_set()
    assert 1 <= live.appended < TOTAL - 7
    assert binlog.executed() == gtids(1, 7 + live.appended)


def test_a_live_workload_ends_when_the_binary_log_closes(make_binlog: MakeBinlog) -> None:
    binlog = make_binlog(7)
    binlog.close()
    live = LiveWorkload(binlog, _rest(7), server_uuid=UUID).start()
    assert live.finished.wait(10)
    live.stop()
    assert live.appended == 0
    assert _source_threads() == []


def test_a_live_workload_refuses_a_negative_rate(make_binlog: MakeBinlog) -> None:
    with pytest.raises(ValueError, match="rate must be >= 0"):
        LiveWorkload(make_binlog(), [], server_uuid=UUID, rate=-1)


def test_stop_before_start(make_binlog: MakeBinlog) -> None:
    live = LiveWorkload(make_binlog(), _rest(7), server_uuid=UUID)
    live.stop()
    assert live.appended == 0
