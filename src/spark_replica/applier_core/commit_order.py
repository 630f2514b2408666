"""Commit order without a binary log (WL#7846): transactions commit in their relay-log order.

Each transaction has a consecutive ticket (its position among the transactions that go
through the gate). ``wait_turn(t)`` returns once every ticket before ``t`` is ``finished``;
the caller then commits and calls ``finished(t)``, which lets ``t + 1`` go. A ticket whose
transaction commits nothing (cut off, skipped, rolled back) must still be finished, or its
followers wait forever. ``fail(error)`` ends the gate: every waiter, now and later, gets
``error`` (the followers of a transaction that failed roll back, WL#7846 W8);
``fail(error, from_ticket=t)`` ends it for ``t`` and its followers only (a transaction given
up at a stop: those before it still commit, none after it does).
"""

from __future__ import annotations

import threading


class CommitOrderFailed(Exception):
    """Raised by ``wait_turn`` once the gate has failed; ``cause`` is why."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


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
        """
        with self._turn:
            if not self._failed(ticket) and ticket > self._next:
                self.waits += 1
            ready = self._turn.wait_for(
                lambda: self._failed(ticket) or ticket <= self._next, timeout
            )
            if self._failed(ticket):
                assert self._failure is not None
                raise CommitOrderFailed(self._failure)
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
