"""SHOW REPLICA STATUS figures and the published end position."""

from __future__ import annotations

import threading

import pytest

from spark_replica.applier_core.binlog.relaylog import (
    EndPosition,
    LogPosition,
    RelayCoordinate,
    RelayLog,
    RelayLogStatus,
    RelayLogWriter,
    relay_log_space,
    relay_log_status,
)
from tests.unit.relaylog.conftest import CHANNEL
from tests.unit.relaylog.fakes import make_event

BASE = f"relay-bin-{CHANNEL}"
WAIT = 10.0


def test_space_is_the_size_of_every_listed_file(
    relay_log: RelayLog, writer: RelayLogWriter
) -> None:
    writer.append(make_event(payload=b"x" * 100))
    writer.rotate()
    writer.append(make_event(payload=b"y" * 10))
    sizes = [relay_log.path(name).stat().st_size for name in relay_log.files()]
    assert relay_log_space(relay_log) == sum(sizes)
    relay_log.mark_applied(f"{BASE}.000001")
    relay_log.purge()
    assert relay_log_space(relay_log) == sizes[1]


def test_status_with_and_without_an_applier_position(relay_log: RelayLog) -> None:
    assert relay_log_status(relay_log, None) == RelayLogStatus(f"{BASE}.000001", 4, 0)
    writer = RelayLogWriter(relay_log, make_header=bytes, make_rotate=lambda n: b"")
    with writer:
        writer.append(make_event())
    applied = RelayCoordinate(f"{BASE}.000001", 4)
    assert relay_log_status(relay_log, applied) == RelayLogStatus(f"{BASE}.000001", 4, 23)
    assert relay_log_status(relay_log, None).relay_log_file == f"{BASE}.000001"


def test_end_position_only_moves_forward() -> None:
    end = EndPosition(LogPosition(1, 4))
    end.publish(LogPosition(1, 50))
    end.publish(LogPosition(2, 4))
    with pytest.raises(ValueError, match="moves back"):
        end.publish(LogPosition(1, 99))
    assert end.get() == LogPosition(2, 4)
    assert "2:4 open" in repr(end)


def test_wait_beyond_returns_at_once_when_already_past() -> None:
    end = EndPosition(LogPosition(1, 100))
    assert end.wait_beyond(LogPosition(1, 50), 0) is True
    assert end.wait_beyond(LogPosition(1, 100), 0) is False
    assert end.wait_beyond(LogPosition(1, 100), 0.01) is False


def test_publish_wakes_every_waiter() -> None:
    end = EndPosition(LogPosition(1, 4))
    ready = threading.Barrier(4, timeout=WAIT)
    woke: list[bool] = []

    def wait() -> None:
        ready.wait()
        woke.append(end.wait_beyond(LogPosition(1, 4), WAIT))

    threads = [threading.Thread(target=wait, name=f"relay-waiter-{n}") for n in range(3)]
    for thread in threads:
        thread.start()
    ready.wait()
    end.publish(LogPosition(1, 23))  # whether a waiter is already waiting or not yet
    for thread in threads:
        thread.join(WAIT)
    assert not any(thread.is_alive() for thread in threads)
    assert woke == [True, True, True]


def test_closed_end_position_stops_waits() -> None:
    end = EndPosition(LogPosition(1, 4))
    end.close()
    assert end.closed
    assert end.wait_beyond(LogPosition(1, 4), None) is False
    end.reopen()
    assert end.wait_beyond(LogPosition(1, 4), 0) is False
