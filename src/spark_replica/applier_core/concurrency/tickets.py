"""Tickets: a 63-bit value and an "in use" bit packed in one 64-bit integer (WL10500.TICKET.1).

A ``Ticket`` is an immutable value. An ``AtomicTicket`` is a shared cell holding one: a thread
claims it by setting the in-use bit (a compare-and-set), works, and releases it by storing the
next value with the bit clear, which wakes the threads waiting to claim it. ``guard()`` does
claim and release around a ``with`` block (``Atomic_ticket_guard``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from time import monotonic
from types import TracebackType
from typing import ClassVar

SYNC_BIT = 1 << 63
"""The most significant bit of the packed integer: set while the ticket is in use."""
VALUE_MASK = SYNC_BIT - 1


@dataclass(frozen=True, slots=True)
class Ticket:
    """A ticket as its packed 64-bit integer: bit 63 is "in use", bits 0-62 the value."""

    packed: int = 0

    UNSET: ClassVar[int] = 0
    """The value of a ticket never set (``kTicketUnset``)."""
    MIN_VALUE: ClassVar[int] = 1
    MAX_VALUE: ClassVar[int] = VALUE_MASK

    def __post_init__(self) -> None:
        if not 0 <= self.packed <= SYNC_BIT | VALUE_MASK:
            raise ValueError(f"not a 64-bit ticket: {self.packed}")

    @classmethod
    def of(cls, value: int, in_use: bool = False) -> Ticket:
        if not 0 <= value <= VALUE_MASK:
            raise ValueError(f"ticket value out of range: {value}")
        return cls(value | SYNC_BIT if in_use else value)

    @property
    def value(self) -> int:
        """The value with the in-use bit cleared (``get_value``)."""
        return self.packed & VALUE_MASK

    @property
    def in_use(self) -> bool:
        return bool(self.packed & SYNC_BIT)

    @property
    def is_set(self) -> bool:
        return self.value != Ticket.UNSET

    def set_in_use(self) -> Ticket:
        """This ticket with the in-use bit set."""
        return Ticket(self.packed | SYNC_BIT)

    def set_used(self, next_value: int | None = None) -> Ticket:
        """The ticket that releases this one: ``next_value`` (default: the next value), not in
        use."""
        return Ticket.of(self.next_value() if next_value is None else next_value)

    def next_value(self) -> int:
        """The value after this one; after ``MAX_VALUE`` it wraps to ``MIN_VALUE``."""
        value = self.value
        return Ticket.MIN_VALUE if value >= Ticket.MAX_VALUE else value + 1

    def __repr__(self) -> str:
        return f"Ticket({self.value}{', in use' if self.in_use else ''})"


class AtomicTicket:
    """A shared ticket that one thread at a time claims (sets in use) and releases."""

    __slots__ = ("_cond", "_ticket")

    def __init__(self, ticket: Ticket | None = None) -> None:
        # _cond's lock guards _ticket; waiters for a release wait on _cond.
        self._cond = threading.Condition(threading.Lock())
        self._ticket = Ticket() if ticket is None else ticket

    def load(self) -> Ticket:
        return self._ticket

    def store(self, ticket: Ticket) -> None:
        """Replace the ticket (in use or not) and wake waiters to look at it."""
        with self._cond:
            self._ticket = ticket
            self._cond.notify_all()

    def set_in_use(self, expected: Ticket | None = None) -> Ticket | None:
        """Claim the ticket if it is not in use (and equals ``expected``, when given).

        Returns the claimed ticket (in use), or None when another thread holds it or its value
        differs from ``expected``. Never waits.
        """
        with self._cond:
            current = self._ticket
            if current.in_use or (expected is not None and current.value != expected.value):
                return None
            self._ticket = current.set_in_use()
            return self._ticket

    def acquire(self, timeout: float | None = None) -> Ticket:
        """Claim the ticket, waiting while another thread holds it; returns it (in use).

        Raises ``TimeoutError`` when it is still held after ``timeout`` seconds.
        """
        deadline = None if timeout is None else monotonic() + timeout
        with self._cond:
            while self._ticket.in_use:
                if deadline is None:
                    self._cond.wait()
                else:
                    remaining = deadline - monotonic()
                    if remaining <= 0:
                        raise TimeoutError(f"ticket still in use after {timeout} s")
                    self._cond.wait(remaining)
            self._ticket = self._ticket.set_in_use()
            return self._ticket

    def set_used(self, next_value: int | None = None) -> Ticket:
        """Release a claimed ticket, storing ``next_value`` (default: the next value).

        Returns the stored ticket. Raises ``RuntimeError`` if the ticket is not in use.
        """
        with self._cond:
            if not self._ticket.in_use:
                raise RuntimeError(f"release of a ticket not in use: {self._ticket!r}")
            self._ticket = self._ticket.set_used(next_value)
            self._cond.notify_all()
            return self._ticket

    def guard(self, timeout: float | None = None) -> TicketGuard:
        """Claim the ticket now; the guard releases it, with ``guard.next`` as the new value."""
        return TicketGuard(self, self.acquire(timeout))

    def __repr__(self) -> str:
        return f"<AtomicTicket {self._ticket!r}>"


class TicketGuard:
    """A claimed ticket, released with ``next`` as its new value when the ``with`` block ends."""

    __slots__ = ("_owner", "_released", "next", "ticket")

    def __init__(self, owner: AtomicTicket, ticket: Ticket) -> None:
        self._owner = owner
        self._released = False
        self.ticket = ticket
        """The claimed ticket (in use)."""
        self.next = ticket.next_value()
        """The value stored on release; set it to store another one."""

    def release(self) -> Ticket:
        """Store ``next`` and release the ticket (once; later calls change nothing)."""
        if not self._released:
            self._released = True
            return self._owner.set_used(self.next)
        return self._owner.load()

    def __enter__(self) -> TicketGuard:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()
