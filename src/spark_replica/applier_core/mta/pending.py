"""The bytes of transactions waiting in the workers' queues (replica_pending_jobs_size_max).

The coordinator counts a transaction's bytes (its GTID event's transaction length) when it
queues it, and the worker uncounts them when it takes it from its queue. Before queuing one,
the coordinator waits while the count plus its bytes would pass the limit; a transaction larger
than the limit waits until nothing is queued, then goes alone. Since every earlier transaction
is read whole by the time the next one is queued, the queued ones never wait on the
coordinator, so the wait always ends.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

WAIT_STEP = 0.05
"""Seconds between checks for a stop while the coordinator waits."""
STATE = "Waiting for replica workers to free pending events"
"""The coordinator's state (Replica_SQL_Running_State) while it waits."""


class PendingBytes:
    """The count and its limit (thread-safe: the coordinator admits, workers take)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        # _cond guards _total.
        self._cond = threading.Condition()
        self._total = 0

    def __repr__(self) -> str:
        return f"<PendingBytes {self._total}/{self.limit}>"

    @property
    def total(self) -> int:
        with self._cond:
            return self._total

    def must_wait(self, size: int) -> bool:
        """Whether queuing ``size`` more bytes would have to wait now."""
        with self._cond:
            return self._blocked(size)

    def admit(self, size: int, stopping: Callable[[], bool]) -> bool:
        """Wait until ``size`` bytes may be queued and count them; False once ``stopping``."""
        with self._cond:
            while self._blocked(size):
                if stopping():
                    return False
                self._cond.wait(WAIT_STEP)
            self._total += size
            return True

    def taken(self, size: int) -> None:
        """A worker took (or gave up) a queued transaction of ``size`` bytes."""
        with self._cond:
            self._total -= size
            self._cond.notify_all()

    def _blocked(self, size: int) -> bool:
        return self._total > 0 and self._total + size > self.limit
