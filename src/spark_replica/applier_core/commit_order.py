"""Commit order without a binary log (WL#7846): transactions commit in their relay-log order.

Each transaction has a consecutive ticket (its position among the transactions that go
through the gate). ``wait_turn(t)`` returns once every ticket before ``t`` is ``finished``;
the caller then commits and calls ``finished(t)``, which lets ``t + 1`` go. A ticket whose
transaction commits nothing (cut off, skipped, rolled back) must still be finished, or its
followers wait forever. ``fail(error)`` ends the gate: every waiter, now and later, gets
``error`` (the followers of a transaction that failed roll back, WL#7846 W8);
``fail(error, from_ticket=t)`` ends it for ``t`` and its followers only (a transaction given
up at a stop: those before it still commit, none after it does).

A later transaction waiting for its turn may hold a row lock an earlier one needs: neither can
go on (WL#7846 DL.1). ``report_deadlock(t)`` makes ``t``'s wait (now, or its next one) raise
``CommitOrderDeadlock``, so that it rolls back, releasing its locks, and applies again.
"""

from __future__ import annotations

import threading


class CommitOrderFailed(Exception):
    """Raised by ``wait_turn`` once the gate has failed; ``cause`` is why."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


class CommitOrderDeadlock(Exception):
    """Raised by ``wait_turn`` for a ticket whose transaction holds a lock an earlier one
    needs: roll back and apply again (WL#7846 DL.1, ER_LOCK_DEADLOCK)."""


class CommitOrderGate:
    """Lets transactions commit in ticket order. Thread-safe."""

    def __init__(self, first: int = 0) -> None:
        # _turn guards _next, _done_ahead and _failure; waiters sleep on it.
        self._turn = threading.Condition()
        self._first = first
        self._next = first
        self._done_ahead: set[int] = set()
        self._failure: BaseException | None = None
        self._failed_from: int | None = None  # tickets from here on get _failure
        self._deadlocked: set[int] = set()  # tickets told to give their locks up
        self.waits = 0
        """How many ``wait_turn`` calls had to wait for a predecessor."""

    @property
    def next_ticket(self) -> int:
        """The lowest ticket not finished yet."""
        with self._turn:
            return self._next

    def wait_turn(self, ticket: int, timeout: float | None = None) -> bool:
        """Wait until every ticket before ``ticket`` is finished; False on timeout.

        Raises:
            CommitOrderFailed: the gate failed (before or while waiting).
            CommitOrderDeadlock: an earlier ticket needs a lock this one holds (it is not
                raised once the turn has come: the earlier ones have ended).
        """
        deadlocked = self._deadlocked
        with self._turn:
            if not self._failed(ticket) and ticket > self._next:
                self.waits += 1
            ready = self._turn.wait_for(
                lambda: self._failed(ticket) or ticket <= self._next or ticket in deadlocked,
                timeout,
            )
            if self._failed(ticket):
                assert self._failure is not None
                raise CommitOrderFailed(self._failure)
            if ticket in deadlocked:
                deadlocked.discard(ticket)
                if ticket > self._next:
                    raise CommitOrderDeadlock(f"ticket {ticket} holds a lock an earlier one needs")
                ready = True
            return ready

    def _failed(self, ticket: int) -> bool:
        return self._failed_from is not None and ticket >= self._failed_from

    def finished(self, ticket: int) -> None:
        """``ticket``'s transaction committed (or will commit nothing): its successors go."""
        with self._turn:
            if ticket < self._next or ticket in self._done_ahead:
                return
            self._done_ahead.add(ticket)
            advanced = False
            while self._next in self._done_ahead:
                self._done_ahead.remove(self._next)
                self._next += 1
                advanced = True
            if advanced:
                self._turn.notify_all()

    def report_deadlock(self, ticket: int) -> None:
        """An earlier ticket waits for a lock ``ticket``'s transaction holds: its wait for the
        turn, now or next, raises ``CommitOrderDeadlock``."""
        with self._turn:
            if ticket > self._next and not self._failed(ticket):
                self._deadlocked.add(ticket)
                self._turn.notify_all()

    def clear_deadlock(self, ticket: int) -> None:
        """``ticket``'s transaction rolled back: it holds no lock any more."""
        with self._turn:
            self._deadlocked.discard(ticket)

    def fail(self, error: BaseException, *, from_ticket: int | None = None) -> None:
        """End the gate for ``from_ticket`` and every later ticket (None: for all): their
        waiters, now and later, get ``error``. The first error is kept, and the lowest
        ticket."""
        with self._turn:
            if self._failure is None:
                self._failure = error
            start = self._first if from_ticket is None else from_ticket
            if self._failed_from is None or start < self._failed_from:
                self._failed_from = start
            self._turn.notify_all()
