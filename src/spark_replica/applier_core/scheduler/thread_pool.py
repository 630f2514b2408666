"""The thread pool: named workers running callables from a bounded queue (DES.TH.0010-0050,
WL10500.THP.1).

Workers are ``<name>-worker-<n>`` (n from 0), non-daemon, started by the constructor and joined
by ``stop()``. A callable that raises is logged and recorded in ``error``; the worker goes on.
The scheduler catches its tasks' errors itself, so for it nothing reaches this point.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from types import TracebackType

from spark_replica.applier_core.concurrency import BoundedQueue, QueueClosed

_log = logging.getLogger(__name__)


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
        self._queue: BoundedQueue[Callable[[], object]] = BoundedQueue(capacity)
        self._error: BaseException | None = None
        self._stop_lock = threading.Lock()
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
        return len(self._threads)

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

    def stop(self) -> None:
        """Run what is queued, then end and join the workers (idempotent).

        Raises ``RuntimeError`` when called from one of the pool's workers.
        """
        current = threading.current_thread()
        if self.is_worker(current):
            raise RuntimeError(f"{current.name} cannot stop its own pool")
        with self._stop_lock:
            self._queue.close()
            for thread in self._threads:
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

    def _worker(self) -> None:
        get = self._queue.get
        while True:
            try:
                fn = get()
            except QueueClosed:
                return
            try:
                fn()
            except BaseException as exc:  # noqa: BLE001 - recorded; the worker goes on
                if self._error is None:
                    self._error = exc
                _log.critical(
                    "%s: a callable raised", threading.current_thread().name, exc_info=exc
                )

    def __repr__(self) -> str:
        state = "stopped" if self._queue.closed else "running"
        return (
            f"<ThreadPool {self._name} {state} workers={len(self._threads)} "
            f"queued={len(self._queue)}/{self._queue.capacity}>"
        )
