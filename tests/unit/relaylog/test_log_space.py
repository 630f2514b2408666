"""Relay_Log_Space as the writer and purges change it, and the receiver's wait under
relay_log_space_limit (``LogSpace``)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.relaylog import (
    LogSpace,
    RelayCoordinate,
    RelayLog,
    RelayLogWriter,
    Room,
)
from spark_replica.applier_core.binlog.relaylog import log_space as log_space_module
from tests.unit.relaylog.conftest import CHANNEL, new_writer
from tests.unit.relaylog.fakes import make_event

BASE = f"relay-bin-{CHANNEL}"
WAIT = 10.0


def _on_disk(relay_log: RelayLog) -> int:
    return sum(relay_log.path(name).stat().st_size for name in relay_log.files())


def test_the_total_follows_writes_rotations_purges_and_reset(
    relay_log: RelayLog, writer: RelayLogWriter
) -> None:
    seen: list[int] = []
    relay_log.space.watch(seen.append)
    writer.append(make_event(payload=b"x" * 100))
    writer.rotate()
    writer.append(make_event(payload=b"y" * 10))
    assert relay_log.space.total == _on_disk(relay_log) == seen[-1]
    relay_log.mark_applied(f"{BASE}.000001")
    assert relay_log.purge() == [f"{BASE}.000001"]
    assert relay_log.space.total == _on_disk(relay_log) == seen[-1]
    writer.close()
    relay_log.remove_all()
    assert relay_log.space.total == seen[-1] == 0


def test_the_total_is_read_back_when_the_relay_log_is_opened(datadir: Path) -> None:
    with RelayLog.for_channel(datadir, CHANNEL) as relay_log:
        with new_writer(relay_log, max_size=200) as writer:
            for _ in range(6):
                writer.append(make_event(payload=b"z" * 80))
        written = relay_log.space.total
    assert written > 400
    with RelayLog.for_channel(datadir, CHANNEL) as reopened:
        assert reopened.space.total == written == _on_disk(reopened)


def test_relay_log_purge_is_asked_at_every_purge(
    relay_log: RelayLog, writer: RelayLogWriter
) -> None:
    """SET GLOBAL relay_log_purge takes effect at once: the relay log asks each time."""
    enabled = [False]
    relay_log.purge_enabled = lambda: enabled[0]
    writer.append(make_event())
    writer.rotate()
    relay_log.mark_applied(f"{BASE}.000001")
    assert relay_log.purge() == []
    assert not relay_log.purge_pending()  # nothing will be purged: nobody waits for it
    enabled[0] = True
    assert relay_log.purge_pending()
    assert relay_log.purge() == [f"{BASE}.000001"]


# -- the wait ------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def quick_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(log_space_module, "WAIT_SLICE", 0.01)


def _waiting(
    space: LogSpace, limit: int, pending: Callable[[], bool], stop: threading.Event
) -> tuple[threading.Thread, list[Room]]:
    result: list[Room] = []

    def wait() -> None:
        result.append(space.wait_for_room(limit, purge_pending=pending, stopped=stop.is_set))

    thread = threading.Thread(target=wait, name="space-waiter")
    thread.start()
    return thread, result


def _full_space() -> LogSpace:
    space = LogSpace()
    space.load([("f.000001", 600)])
    space.record("f.000002", 500)  # the active file, published up to 500
    return space


def test_no_limit_or_room_left_means_no_wait() -> None:
    space = _full_space()
    never = threading.Event()
    assert space.wait_for_room(0, purge_pending=lambda: True, stopped=never.is_set) is Room.FREED
    assert space.wait_for_room(1100, purge_pending=lambda: True,
                               stopped=never.is_set) is Room.FREED  # fmt: skip


def test_a_purge_ends_the_wait() -> None:
    space, stop = _full_space(), threading.Event()
    thread, result = _waiting(space, 1000, lambda: True, stop)
    space.forget(["f.000001"])
    thread.join(WAIT)
    assert result == [Room.FREED]


def test_a_stop_ends_the_wait() -> None:
    space, stop = _full_space(), threading.Event()
    thread, result = _waiting(space, 1000, lambda: True, stop)
    stop.set()
    space.wake()
    thread.join(WAIT)
    assert result == [Room.STOPPED]


def test_an_applier_that_read_everything_ends_the_wait_only_when_nothing_can_be_purged() -> None:
    """MySQL's ignore_log_space_limit: the applier has read every event written and no file
    it read is on its way out (applied and durable): only more events can help."""
    space, stop = _full_space(), threading.Event()
    space.caught_up(RelayCoordinate("f.000002", 400))  # behind the end: no effect
    looks: list[int] = []

    def pending() -> bool:  # f.000001 is being made durable for the first three looks
        looks.append(1)
        return len(looks) <= 3

    thread, result = _waiting(space, 1000, pending, stop)
    space.caught_up(RelayCoordinate("f.000002", 500))
    thread.join(WAIT)
    assert result == [Room.CAUGHT_UP]
    assert len(looks) == 4


def test_a_stopped_applier_does_not_count_as_caught_up() -> None:
    space, stop = _full_space(), threading.Event()
    space.caught_up(RelayCoordinate("f.000002", 500))
    space.caught_up(None)  # the applier's reader closed
    looks: list[int] = []
    thread, result = _waiting(space, 1000, lambda: bool(looks.append(1)), stop)
    space.forget(["f.000001"])
    thread.join(WAIT)
    assert result == [Room.FREED] and looks == []
