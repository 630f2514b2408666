"""The thread pool: named workers running callables from a bounded queue (DES.TH.0010-0050,
WL10500.THP.1).

Workers are ``<name>-worker-<n>`` (n from 0), non-daemon, started by the constructor and joined
by ``stop()``. A callable that raises is logged and recorded in ``error``; the worker goes on.
The scheduler catches its tasks' errors itself, so for it nothing reaches this point.

The pool counts the time its workers spend in callables (OBS.STAT.SCHED's
``thp_task_exec_time``) and the callables run, each worker in its own shard.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from time import perf_counter_ns
from types import TracebackType

from spark_replica.applier_core.concurrency import BoundedQueue, QueueClosed, ShardedCounter

_log = logging.getLogger(__name__)


SPARE_IDLE = 0.5
"""Seconds a spare worker waits for work before it leaves."""


class PoolStopped(RuntimeError):
    """Raised by ``submit`` after ``stop()``."""


class ThreadPool:
    """``workers`` threads taking callables from a ``BoundedQueue`` of ``capacity`` (default 4
    x workers, the scheduler's default limit of tasks in flight)."""

    def __init__(self, name: str, workers: int, capacity: int | None = None) -> None:
        if workers < 1:
            raise ValueError(f"a pool needs at least one worker, not {workers}")
        capacity = 4 * workers if capacity is None else capacity
        self._name = name
        self._workers = workers
        self._queue: BoundedQueue[Callable[[], object]] = BoundedQueue(capacity)
        self._error: BaseException | None = None
        self._busy_ns = ShardedCounter()
        self._ran = ShardedCounter()
        # _stop_lock guards _threads (spares are added) and _spares.
        self._stop_lock = threading.Lock()
        self._spares = 0
        self._threads = [
            threading.Thread(target=self._worker, name=f"{name}-worker-{n}") for n in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    @property
    def name(self) -> str:
        return self._name

    @property
    def workers(self) -> int:
        """The pool's size (spares not counted)."""
        return self._workers

    @property
    def capacity(self) -> int:
        return self._queue.capacity

    @property
    def error(self) -> BaseException | None:
        """The first exception a callable raised, or None."""
        return self._error

    def is_worker(self, thread: threading.Thread) -> bool:
        """Whether ``thread`` is one of the pool's workers."""
        return thread in self._threads

    @property
    def busy_ns(self) -> int:
        """Nanoseconds the workers have spent running callables (a snapshot)."""
        return self._busy_ns.get()

    @property
    def ran(self) -> int:
        """Callables run to their end, raising or not (a snapshot)."""
        return self._ran.get()

    def queue_size(self) -> int:
        """Callables waiting for a worker (a snapshot)."""
        return len(self._queue)

    def submit(self, fn: Callable[[], object]) -> None:
        """Queue ``fn`` for a worker, waiting while the queue is full.

        Raises ``PoolStopped`` after ``stop()``.
        """
        try:
            self._queue.put(fn)
        except QueueClosed:
            raise PoolStopped(f"thread pool {self._name} is stopped") from None

    def add_spare(self, limit: int) -> bool:
        """Start a spare worker, which leaves after ``SPARE_IDLE`` seconds without work, unless
        ``limit`` spares run already or the pool is stopped; True when one was started.

        For a worker about to block for long on something only another task can end (the
        task that would end it may sit in the queue with every worker blocked): the spare
        keeps the queue moving. Spares are named on from ``<name>-worker-<workers>``.
        """
        with self._stop_lock:
            if self._queue.closed or self._spares >= limit:
                return False
            self._spares += 1
            number = len(self._threads)
            thread = threading.Thread(target=self._spare, name=f"{self._name}-worker-{number}")
            self._threads.append(thread)
        thread.start()
        return True

    def stop(self) -> None:
        """Run what is queued, then end and join the workers (idempotent).

        Raises ``RuntimeError`` when called from one of the pool's workers.
        """
        current = threading.current_thread()
        if self.is_worker(current):
            raise RuntimeError(f"{current.name} cannot stop its own pool")
        with self._stop_lock:
            self._queue.close()
            threads = list(self._threads)
        for thread in threads:
            thread.join()

    def __enter__(self) -> ThreadPool:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def _worker(self, idle: float | None = None) -> None:
        get, busy, ran = self._queue.get, self._busy_ns.add, self._ran.add
        while True:
            try:
                fn = get(idle)
            except (QueueClosed, TimeoutError):
                return
            started = perf_counter_ns()
            try:
                fn()
            except BaseException as exc:  # noqa: BLE001 - recorded; the worker goes on
                if self._error is None:
                    self._error = exc
                _log.critical(
                    "%s: a callable raised", threading.current_thread().name, exc_info=exc
                )
            busy(perf_counter_ns() - started)
            ran()

    def _spare(self) -> None:
        try:
            self._worker(SPARE_IDLE)
        finally:
            with self._stop_lock:
                self._spares -= 1

    def __repr__(self) -> str:
        state = "stopped" if self._queue.closed else "running"
        return (
            f"<ThreadPool {self._name} {state} workers={len(self._threads)} "
            f"queued={len(self._queue)}/{self._queue.capacity}>"
        )
