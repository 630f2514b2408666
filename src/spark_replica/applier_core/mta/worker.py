"""A worker of the legacy multi-threaded applier (WL5569.PSEUDO.W, WL5569.WQ.1).

Each worker owns a bounded queue the coordinator fills with whole transactions and a thread,
``mta-<channel>-worker-<n>``, that applies them in queue order through its own engine session;
taking one from the queue uncounts its bytes (``taken``, replica_pending_jobs_size_max).
Closing the queue is the one way to end the thread: it applies what is queued, then exits (STOP
REPLICA lets assigned transactions finish, for a while: once its time limit has passed,
``expired``, the rest are given up). Once the channel has failed, the transactions still queued
are given up too (the coordinator marks the workers to stop, WL5569.ERR.1). A failure is handed
to the channel as a value, never only logged.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from spark_replica.applier_core.apply.errors import channel_error
from spark_replica.applier_core.concurrency import BoundedQueue, QueueClosed
from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.mta.execute import Assignment, TransactionRunner
from spark_replica.applier_core.mta.failure import WorkerFailed

logger = logging.getLogger(__name__)

QUEUE_CAPACITY = 16384
"""Transactions a worker's queue holds before the coordinator waits (MySQL bounds it by
16384 events; a transaction here is one queue slot)."""


class Worker:
    """One worker thread and its queue. ``start`` once; ``close`` then ``join`` to end it."""

    def __init__(
        self,
        label: str,
        number: int,
        runner: TransactionRunner,
        *,
        failed: Callable[[], bool],
        expired: Callable[[], bool],
        report: Callable[[WorkerFailed], None],
        taken: Callable[[int], None] = lambda size: None,
        capacity: int = QUEUE_CAPACITY,
    ) -> None:
        self.number = number
        self.runner = runner
        self.queue: BoundedQueue[Assignment] = BoundedQueue(capacity)
        self._failed = failed
        self._expired = expired
        self._report = report
        self._taken = taken
        self._channel = runner.execution.channel
        self._busy = False  # written by the worker thread only; read as a hint
        self.thread = threading.Thread(target=self._run, name=f"{label}-worker-{number}")

    def __repr__(self) -> str:
        state = "busy" if self._busy else "idle"
        return f"<Worker {self.thread.name} {state} queued={len(self.queue)}>"

    @property
    def load(self) -> int:
        """Transactions queued or being applied (a snapshot, for choosing a worker)."""
        return len(self.queue) + int(self._busy)

    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        """Take no more transactions: the thread ends once the queue is empty. Idempotent."""
        self.queue.close()

    def join(self) -> None:
        if self.thread.ident is not None:
            self.thread.join()

    def _run(self) -> None:
        while True:
            try:
                work = self.queue.get()
            except QueueClosed:
                return
            self._taken(work.size)
            self._busy = True
            try:
                if self._failed() or self._expired():
                    self.runner.give_up(work)
                else:
                    self.runner.run(work)
            except WorkerFailed as failure:
                self._report(failure)
            except ReplicaError as exc:  # the metadata store failed: the channel stops with it
                self._report(WorkerFailed(exc.code, exc.message, exc.message))
            except BaseException as exc:  # a bug: stop the channel with it rather than hang
                logger.critical("worker %s failed", self.thread.name, exc_info=True)
                message = f"Worker {self.number} failed: {exc!r}"
                self._report(WorkerFailed(ErrorCode.UNKNOWN_ERROR, message,
                                          channel_error(self._channel, message)))  # fmt: skip
            finally:
                self._busy = False
