"""The resource monitor: named, limited resources that a channel's threads acquire and release
(DES.RM.0010/0011, WL10500.RM.1-3, INT.0033).

One ``ResourceMonitor`` per channel. The only resource the Change Stream Applier enforces is
``EVENT_MEMORY``: the bytes of relay-log events read but not yet used, with the limit
``effective_event_memory_limit(APPLIER_EVENT_MEMORY_LIMIT, replica_max_allowed_packet)``.

Grant rule: an amount is granted when it fits under the limit, or when nothing of the resource
is held at all, so that one event (or transaction) larger than the whole limit still goes
through, alone (T77). Waiters are served first come, first served: a small request never
overtakes a waiting large one, which would otherwise starve. Waiting is on a ``Condition``
(no spinning, unlike the seed's sleep loop); ``wake()`` makes waiters check their ``abort``
predicate again (a stop request).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

EVENT_MEMORY = "event_memory"
"""The channel's event memory (APPLIER_EVENT_MEMORY_LIMIT)."""


def effective_event_memory_limit(configured: int, max_allowed_packet: int) -> int:
    """The limit the applier enforces: ``max(replica_max_allowed_packet, configured)``
    (INT.0033; a configured 0, the default, means the packet size)."""
    return max(configured, max_allowed_packet)


@dataclass(frozen=True, slots=True)
class ResourceStats:
    """A snapshot of one resource's counters."""

    name: str
    limit: int
    held: int
    peak: int
    """The most ever held at once."""
    acquisitions: int
    waits: int
    """Acquisitions that had to wait."""
    wait_seconds: float
    oversized: int
    """Grants of more than the whole limit (each went through alone)."""
    forced: int
    """Amounts counted without waiting (``force_acquire``)."""


@dataclass(slots=True)
class _Entry:
    limit: int
    held: int = 0
    peak: int = 0
    acquisitions: int = 0
    waits: int = 0
    wait_seconds: float = 0.0
    oversized: int = 0
    forced: int = 0
    queue: deque[object] | None = None  # tickets of waiting acquirers, oldest first

    def fits(self, amount: int) -> bool:
        return self.held + amount <= self.limit or self.held == 0 or amount == 0

    def grant(self, amount: int) -> None:
        if amount > self.limit:
            self.oversized += 1
        self.held += amount
        self.acquisitions += 1
        if self.held > self.peak:
            self.peak = self.held


class ResourceGuard:
    """An acquired amount, released on ``release()`` or when the ``with`` block ends.

    ``locked`` is False when the acquisition timed out or was aborted (then nothing is held).
    """

    __slots__ = ("amount", "locked", "name", "_monitor")

    def __init__(self, monitor: ResourceMonitor, name: str, amount: int, locked: bool) -> None:
        self._monitor = monitor
        self.name = name
        self.amount = amount
        self.locked = locked

    def __repr__(self) -> str:
        state = "locked" if self.locked else "unlocked"
        return f"<ResourceGuard {self.name} {self.amount} {state}>"

    def release(self) -> None:
        """Give the amount back (idempotent)."""
        if self.locked:
            self.locked = False
            self._monitor.release(self.name, self.amount)

    def __enter__(self) -> ResourceGuard:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


class ResourceMonitor:
    """The limited resources of one channel. Thread-safe."""

    def __init__(self, channel: str = "") -> None:
        self.channel = channel
        # _lock guards _entries and every _Entry; _changed is built on it and notified (all)
        # when an amount is released, a limit changes, a waiter leaves a queue, or on wake().
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._entries: dict[str, _Entry] = {}

    def __repr__(self) -> str:
        with self._lock:
            held = ", ".join(f"{n}={e.held}/{e.limit}" for n, e in self._entries.items())
        return f"<ResourceMonitor '{self.channel}' {held}>"

    def register(self, name: str, limit: int) -> None:
        """Add ``name`` with ``limit``, or change the limit of a registered resource."""
        if limit < 0:
            raise ValueError(f"limit must be >= 0, not {limit}")
        with self._lock:
            entry = self._entries.get(name)
            if entry is None:
                self._entries[name] = _Entry(limit)
            else:
                entry.limit = limit
                self._changed.notify_all()

    def available(self, name: str) -> int:
        """How much of ``name`` can be taken now without waiting (never negative)."""
        with self._lock:
            entry = self._entry(name)
            return max(0, entry.limit - entry.held)

    def held(self, name: str) -> int:
        with self._lock:
            return self._entry(name).held

    def stats(self, name: str) -> ResourceStats:
        with self._lock:
            e = self._entry(name)
            return ResourceStats(name, e.limit, e.held, e.peak, e.acquisitions, e.waits,
                                 e.wait_seconds, e.oversized, e.forced)  # fmt: skip

    def acquire(
        self,
        name: str,
        amount: int,
        *,
        timeout: float | None = None,
        abort: Callable[[], bool] | None = None,
    ) -> bool:
        """Take ``amount`` of ``name``, waiting until it is available.

        Args:
            timeout: seconds to wait at most; None waits without a limit.
            abort: checked before waiting and on every wake-up (see ``wake``); True gives up.

        Returns:
            True when granted; False on timeout or abort (nothing is held then).

        Raises:
            KeyError: ``name`` is not registered.
        """
        _check(amount)
        with self._lock:
            entry = self._entry(name)
            if not entry.queue and entry.fits(amount):
                entry.grant(amount)
                return True
            return self._wait(entry, amount, timeout, abort)

    def try_acquire(self, name: str, amount: int) -> bool:
        """Take ``amount`` only if that needs no wait (and nobody is waiting)."""
        _check(amount)
        with self._lock:
            entry = self._entry(name)
            if entry.queue or not entry.fits(amount):
                return False
            entry.grant(amount)
            return True

    def force_acquire(self, name: str, amount: int) -> None:
        """Count ``amount`` at once, even above the limit: for what must never wait because
        waiting could deadlock (a retried transaction's re-read events)."""
        _check(amount)
        with self._lock:
            entry = self._entry(name)
            entry.grant(amount)
            entry.forced += 1

    def release(self, name: str, amount: int) -> None:
        """Give back ``amount`` of ``name``.

        Raises:
            RuntimeError: more than is held would be released.
        """
        _check(amount)
        if amount == 0:
            return
        with self._lock:
            entry = self._entry(name)
            if amount > entry.held:
                raise RuntimeError(f"{name}: releasing {amount} but only {entry.held} is held")
            entry.held -= amount
            if entry.queue:
                self._changed.notify_all()

    def guard(
        self,
        name: str,
        amount: int,
        *,
        timeout: float | None = None,
        abort: Callable[[], bool] | None = None,
    ) -> ResourceGuard:
        """``acquire`` as a guard that releases when its ``with`` block ends."""
        return ResourceGuard(self, name, amount, self.acquire(name, amount, timeout=timeout,
                                                              abort=abort))  # fmt: skip

    def wake(self) -> None:
        """Wake every waiter so it checks its ``abort`` predicate again."""
        with self._lock:
            self._changed.notify_all()

    # -- internals ---------------------------------------------------------------------------

    def _entry(self, name: str) -> _Entry:
        entry = self._entries.get(name)
        if entry is None:
            raise KeyError(f"resource '{name}' is not registered")
        return entry

    def _wait(
        self,
        entry: _Entry,
        amount: int,
        timeout: float | None,
        abort: Callable[[], bool] | None,
    ) -> bool:
        """Queue for ``amount`` (``_lock`` held) until it is first in line and fits."""
        ticket = object()
        if entry.queue is None:
            entry.queue = deque()
        queue = entry.queue
        queue.append(ticket)
        entry.waits += 1
        started = time.monotonic()
        deadline = None if timeout is None else started + timeout
        granted = False
        try:
            while True:
                if queue[0] is ticket and entry.fits(amount):
                    entry.grant(amount)
                    granted = True
                    return True
                if abort is not None and abort():
                    return False
                if deadline is None:
                    self._changed.wait()
                    continue
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._changed.wait(remaining)
        finally:
            queue.remove(ticket)
            entry.wait_seconds += time.monotonic() - started
            if queue or not granted:
                self._changed.notify_all()  # the next in line may fit now


def _check(amount: int) -> None:
    if amount < 0:
        raise ValueError(f"amount must be >= 0, not {amount}")
