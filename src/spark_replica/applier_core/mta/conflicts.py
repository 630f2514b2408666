"""Commit-order deadlocks of the legacy applier (WL#7846 DL.1, T65).

Under ``replica_preserve_commit_order=ON`` a later transaction that has applied its rows waits
for its commit turn while holding their locks. When an earlier transaction of the same channel
then waits for one of those locks, neither can go on. The engine's lock manager reports every
lock wait (``on_wait``); ``OrderConflicts`` finds the two transactions by their engine
transaction refs and, when the holder comes later in commit order, tells it to give its locks
up: its wait for the turn raises ``CommitOrderDeadlock`` (``CommitOrderGate.report_deadlock``),
and if it is still applying, its next lock request or its prepare fails with ER_LOCK_DEADLOCK.
Either way its worker rolls it back, which frees the lock, and applies it again (a retry).
"""

from __future__ import annotations

import threading

from spark_replica.applier_core.commit_order import CommitOrderGate
from spark_replica.applier_core.storage import StorageEngine, TransactionRef
from spark_replica.applier_core.storage.locks import deadlock_error


class OrderConflicts:
    """The tickets of a channel's transactions being applied, by engine transaction ref."""

    def __init__(self, gate: CommitOrderGate, engine: StorageEngine) -> None:
        self._gate = gate
        self._engine = engine
        # _lock guards _tickets.
        self._lock = threading.Lock()
        self._tickets: dict[TransactionRef, int] = {}
        self.resolved = 0
        """How many times a later transaction was told to give its locks up."""

    def register(self, ref: TransactionRef, ticket: int) -> None:
        with self._lock:
            self._tickets[ref] = ticket

    def unregister(self, ref: TransactionRef) -> None:
        with self._lock:
            self._tickets.pop(ref, None)

    def on_wait(self, waiter: TransactionRef, holder: TransactionRef) -> None:
        """The lock manager's hook: ``waiter`` waits for a lock ``holder`` has."""
        with self._lock:
            waiting = self._tickets.get(waiter)
            holding = self._tickets.get(holder)
            if waiting is None or holding is None or holding < waiting:
                return
            self.resolved += 1
        self._gate.report_deadlock(holding)
        self._engine.locks.abort(holder, deadlock_error())
