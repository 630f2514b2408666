"""The thread pool: named workers, parallel runs, errors, shutdown."""

from __future__ import annotations

import logging
import threading

import pytest

from spark_replica.applier_core.scheduler import PoolStopped, ThreadPool
from tests.unit.scheduler.helpers import TIMEOUT


def test_workers_are_named_and_run_in_parallel() -> None:
    pool = ThreadPool("ch", 3)
    try:
        assert (pool.name, pool.workers, pool.capacity) == ("ch", 3, 12)
        barrier = threading.Barrier(3)  # breaks unless three callables run at once
        names: list[str] = []
        done = threading.Event()

        def meet() -> None:
            barrier.wait(TIMEOUT)
            names.append(threading.current_thread().name)
            if len(names) == 3:
                done.set()

        for _ in range(3):
            pool.submit(meet)
        assert done.wait(TIMEOUT)
        assert sorted(names) == ["ch-worker-0", "ch-worker-1", "ch-worker-2"]
        assert pool.error is None
        assert "running" in repr(pool)
    finally:
        pool.stop()
    assert "stopped" in repr(pool)


def test_stop_runs_what_is_queued_and_is_idempotent() -> None:
    pool = ThreadPool("q", 1, capacity=5)
    gate = threading.Event()
    ran: list[int] = []
    pool.submit(lambda: gate.wait(TIMEOUT))
    for i in range(4):
        pool.submit(lambda i=i: ran.append(i))  # type: ignore[misc]
    assert pool.queue_size() >= 4
    gate.set()
    pool.stop()
    pool.stop()
    assert ran == [0, 1, 2, 3]
    with pytest.raises(PoolStopped):
        pool.submit(lambda: None)


def test_a_raising_callable_is_recorded_and_the_worker_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pool = ThreadPool("e", 1)
    done = threading.Event()
    try:
        with caplog.at_level(logging.CRITICAL):
            pool.submit(lambda: 1 / 0)
            pool.submit(done.set)
            assert done.wait(TIMEOUT)
    finally:
        pool.stop()
    assert isinstance(pool.error, ZeroDivisionError)
    assert "e-worker-0" in caplog.text


def test_a_worker_cannot_stop_its_own_pool() -> None:
    pool = ThreadPool("self", 1)
    outcome: list[BaseException] = []
    done = threading.Event()

    def stop_from_inside() -> None:
        try:
            pool.stop()
        except RuntimeError as exc:
            outcome.append(exc)
        done.set()

    try:
        pool.submit(stop_from_inside)
        assert done.wait(TIMEOUT)
    finally:
        pool.stop()
    assert len(outcome) == 1


def test_a_pool_needs_a_worker() -> None:
    with pytest.raises(ValueError):
        ThreadPool("none", 0)


def test_a_spare_worker_runs_the_queue_while_the_workers_are_blocked() -> None:
    release, ran = threading.Event(), threading.Event()
    pool = ThreadPool("spare", 1, capacity=4)
    try:
        pool.submit(release.wait)  # the only worker blocks
        pool.submit(ran.set)
        assert pool.add_spare(limit=1)
        assert not pool.add_spare(limit=1)  # the limit holds
        assert ran.wait(10)
        assert pool.workers == 1  # spares are not counted
    finally:
        release.set()
        pool.stop()
    assert not pool.add_spare(limit=5)  # stopped
