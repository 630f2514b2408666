"""The resource monitor: limits, waiting without spinning, oversized grants, guards (RM.1-3)."""

from __future__ import annotations

import threading

import pytest

from spark_replica.applier_core.provider import (
    EVENT_MEMORY,
    ResourceMonitor,
    effective_event_memory_limit,
)

WAIT = 10.0
MEM = EVENT_MEMORY


def _monitor(limit: int = 100) -> ResourceMonitor:
    monitor = ResourceMonitor("c1")
    monitor.register(MEM, limit)
    return monitor


class _Waiter:
    """Runs ``acquire`` in a thread; ``waiting`` is set once it is about to block (its abort
    predicate is asked before every wait)."""

    def __init__(self, monitor: ResourceMonitor, amount: int, **kw: float) -> None:
        self.waiting = threading.Event()
        self.stop = threading.Event()
        self.result: bool | None = None
        self.thread = threading.Thread(target=self._run, args=(monitor, amount, kw))
        self.thread.start()

    def _run(self, monitor: ResourceMonitor, amount: int, kw: dict[str, float]) -> None:
        def abort() -> bool:
            self.waiting.set()
            return self.stop.is_set()

        self.result = monitor.acquire(MEM, amount, abort=abort, **kw)

    def join(self) -> bool | None:
        self.thread.join(WAIT)
        assert not self.thread.is_alive()
        return self.result


def test_acquire_and_release_within_the_limit() -> None:
    monitor = _monitor()
    assert monitor.acquire(MEM, 60)
    assert monitor.try_acquire(MEM, 40)
    assert not monitor.try_acquire(MEM, 1)
    assert monitor.held(MEM) == 100
    monitor.release(MEM, 100)
    stats = monitor.stats(MEM)
    assert (stats.held, stats.peak, stats.acquisitions, stats.waits) == (0, 100, 2, 0)


def test_acquire_waits_until_enough_is_released() -> None:
    monitor = _monitor()
    assert monitor.acquire(MEM, 80)
    waiter = _Waiter(monitor, 50)
    assert waiter.waiting.wait(WAIT)
    assert monitor.held(MEM) == 80  # the waiter holds nothing yet
    monitor.release(MEM, 80)
    assert waiter.join() is True
    stats = monitor.stats(MEM)
    assert (stats.held, stats.waits, stats.peak) == (50, 1, 80)


def test_waiters_are_served_in_order_so_a_large_one_is_not_starved() -> None:
    monitor = _monitor()
    assert monitor.acquire(MEM, 60)
    large = _Waiter(monitor, 90)
    assert large.waiting.wait(WAIT)
    assert not monitor.try_acquire(MEM, 10)  # it would fit, but the large one waits first
    monitor.release(MEM, 60)
    assert large.join() is True
    assert monitor.held(MEM) == 90


def test_an_amount_above_the_limit_goes_through_alone() -> None:
    monitor = _monitor()
    assert monitor.acquire(MEM, 1)
    huge = _Waiter(monitor, 500)
    assert huge.waiting.wait(WAIT)
    monitor.release(MEM, 1)
    assert huge.join() is True
    assert monitor.held(MEM) == 500
    assert not monitor.try_acquire(MEM, 1)
    monitor.release(MEM, 500)
    assert monitor.try_acquire(MEM, 500)  # nothing held: granted at once
    assert monitor.stats(MEM).oversized == 2


def test_a_zero_limit_still_lets_one_amount_through_at_a_time() -> None:
    monitor = _monitor(0)
    assert monitor.acquire(MEM, 10)
    assert not monitor.try_acquire(MEM, 1)
    assert monitor.acquire(MEM, 0)


def test_timeout_gives_up_and_holds_nothing() -> None:
    monitor = _monitor()
    assert monitor.acquire(MEM, 100)
    assert monitor.acquire(MEM, 1, timeout=0.01) is False
    assert monitor.stats(MEM).waits == 1
    monitor.release(MEM, 100)
    assert monitor.held(MEM) == 0


def test_wake_makes_a_waiter_check_its_abort_predicate() -> None:
    monitor = _monitor()
    assert monitor.acquire(MEM, 100)
    waiter = _Waiter(monitor, 10)
    assert waiter.waiting.wait(WAIT)
    waiter.stop.set()
    monitor.wake()
    assert waiter.join() is False
    assert monitor.held(MEM) == 100


def test_raising_the_limit_wakes_waiters() -> None:
    monitor = _monitor()
    assert monitor.acquire(MEM, 100)
    waiter = _Waiter(monitor, 50)
    assert waiter.waiting.wait(WAIT)
    monitor.register(MEM, 150)
    assert waiter.join() is True


def test_guard_releases_when_its_block_ends() -> None:
    monitor = _monitor()
    with monitor.guard(MEM, 70) as guard:
        assert guard.locked
        assert monitor.held(MEM) == 70
        with monitor.guard(MEM, 70, timeout=0.01) as refused:
            assert not refused.locked
        assert monitor.held(MEM) == 70
    assert monitor.held(MEM) == 0
    guard.release()  # idempotent
    assert monitor.held(MEM) == 0


def test_force_acquire_counts_above_the_limit_without_waiting() -> None:
    monitor = _monitor()
    assert monitor.acquire(MEM, 100)
    monitor.force_acquire(MEM, 30)
    stats = monitor.stats(MEM)
    assert (stats.held, stats.forced, stats.waits) == (130, 1, 0)


def test_misuse_is_refused() -> None:
    monitor = _monitor()
    with pytest.raises(KeyError, match="not registered"):
        monitor.acquire("other", 1)
    with pytest.raises(ValueError):
        monitor.acquire(MEM, -1)
    with pytest.raises(ValueError):
        monitor.register("other", -1)
    assert monitor.acquire(MEM, 5)
    with pytest.raises(RuntimeError, match="only 5 is held"):
        monitor.release(MEM, 6)
    assert monitor.held(MEM) == 5


def test_effective_limit_is_at_least_the_packet_size() -> None:
    packet = 1 << 20
    assert effective_event_memory_limit(0, packet) == packet  # INT.0033, T77
    assert effective_event_memory_limit(packet // 2, packet) == packet
    assert effective_event_memory_limit(3 * packet, packet) == 3 * packet
