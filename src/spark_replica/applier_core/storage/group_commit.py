"""Group commit of flushes (WL#7846 GC, requirements T82), leader/follower style.

A committed transaction is *queued* (``enqueue``, in commit order) and then waits until its
group is *flushed* (``wait_flushed``). The first waiter that finds no flush running leads one:
it takes every commit queued so far (its group), calls ``on_flush`` with them, sleeps
``latency`` seconds (a simulated durable write; ``time.sleep`` releases the GIL) and wakes its
group. Commits queued during a flush form the next group, so with concurrent committers
there are fewer flushes than commits. Groups are flushed one at a time, in order.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import NamedTuple

from spark_replica.applier_core.storage.interface import TransactionRef


class EngineStats(NamedTuple):
    """``commits``: transactions committed; ``flushes``: groups flushed; ``queued``: commits
    waiting for a flush that has not started."""

    commits: int
    flushes: int
    queued: int


class GroupCommit:
    """Leader/follower group commit of the flushes. Thread-safe."""

    def __init__(
        self, latency: float, on_flush: Callable[[tuple[TransactionRef, ...]], None] | None
    ) -> None:
        self.latency = latency
        self.on_flush = on_flush
        # _cond's lock guards everything below.
        self._cond = threading.Condition()
        self._queue: list[TransactionRef] = []
        self._flushing = False
        #: The group that commits queued now will be flushed in (groups count from 1).
        self._next_group = 1
        #: The last group flushed.
        self._flushed = 0
        self._commits = 0
        self._flushes = 0

    def stats(self) -> EngineStats:
        with self._cond:
            return EngineStats(self._commits, self._flushes, len(self._queue))

    def wait_for(self, predicate: Callable[[EngineStats], bool], timeout: float) -> bool:
        def check() -> bool:
            return predicate(EngineStats(self._commits, self._flushes, len(self._queue)))

        with self._cond:
            return self._cond.wait_for(check, timeout)

    def enqueue(self, trx: TransactionRef) -> int:
        with self._cond:
            self._queue.append(trx)
            self._commits += 1
            self._cond.notify_all()
            return self._next_group

    def last_group(self) -> int:
        """The group of the latest commit queued (0 before the first)."""
        with self._cond:
            return self._next_group if self._queue else self._next_group - 1

    def wait_flushed(self, group: int) -> None:
        """Return once ``group`` is flushed, flushing it when no flush runs."""
        with self._cond:
            while self._flushed < group:
                if not self._flushing:
                    batch, self._queue = tuple(self._queue), []
                    self._flushing = True
                    leading = self._next_group
                    self._next_group += 1
                    self._cond.notify_all()
                    break
                self._cond.wait()
            else:
                return
        try:
            if self.on_flush is not None:
                self.on_flush(batch)
            if self.latency > 0:
                time.sleep(self.latency)
        finally:
            with self._cond:
                self._flushing = False
                self._flushed = leading
                self._flushes += 1
                self._cond.notify_all()
