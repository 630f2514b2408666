"""Blocking FIFO queues that hand work from thread to thread (WL10500.SBQ.1, WL10500.LQ.1).

``BoundedQueue`` is the communication queue between a scheduler and its thread pool
(DES.SQ.0010-0030): any number of producers and consumers; producers block while it is full,
consumers while it is empty, and ``close()`` ends it for everyone. ``LockingQueue`` is
unbounded and meant for one producer and one consumer, where the consumer must also notice a
stop request while it waits.

Both guard their state with one mutex whose conditions share it (as ``queue.Queue`` does), and
notify only when somebody waits, so a put or get that does not block costs one lock round trip.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from time import monotonic
from typing import Generic, Literal, TypeVar

T = TypeVar("T")


class QueueClosed(Exception):
    """Raised by ``put`` on a closed queue, and by ``get`` once a closed queue is empty."""


class BoundedQueue(Generic[T]):
    """A FIFO of at most ``capacity`` items for any number of producers and consumers.

    ``put`` blocks while the queue is full, ``get`` while it is empty. ``close()`` wakes every
    waiter: later ``put`` calls raise ``QueueClosed``; ``get`` returns the items still queued
    and then raises ``QueueClosed``.
    """

    __slots__ = (
        "_capacity",
        "_closed",
        "_getters",
        "_items",
        "_mutex",
        "_not_empty",
        "_not_full",
        "_putters",
    )

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, not {capacity}")
        self._capacity = capacity
        # _mutex guards _items, _closed, _getters and _putters; both conditions share it.
        self._mutex = threading.Lock()
        self._not_empty = threading.Condition(self._mutex)
        self._not_full = threading.Condition(self._mutex)
        self._items: deque[T] = deque()
        self._closed = False
        #: Threads waiting in get() and in put(): notify only when there is somebody to wake.
        self._getters = 0
        self._putters = 0

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def closed(self) -> bool:
        return self._closed

    def __len__(self) -> int:
        """The number of queued items (a snapshot: other threads may change it at once)."""
        return len(self._items)

    def put(self, item: T, timeout: float | None = None) -> bool:
        """Append ``item``, waiting while the queue is full.

        Returns False when ``timeout`` seconds passed and the queue is still full (a timeout of
        0 or less never waits). Raises ``QueueClosed`` if the queue is, or gets, closed.
        """
        with self._mutex:
            if self._closed:
                raise QueueClosed("put on a closed queue")
            if len(self._items) >= self._capacity:
                if not self._wait_for_room(timeout):
                    return False
            self._items.append(item)
            if self._getters:
                self._not_empty.notify()
            return True

    def get(self, timeout: float | None = None) -> T:
        """Remove and return the oldest item, waiting while the queue is empty.

        Raises ``TimeoutError`` when ``timeout`` seconds passed with the queue still empty, and
        ``QueueClosed`` when the queue is closed and empty.
        """
        with self._mutex:
            if not self._items:
                self._wait_for_item(timeout)
            item = self._items.popleft()
            if self._putters:
                self._not_full.notify()
            return item

    def close(self) -> None:
        """Refuse further items and wake every waiting producer and consumer (idempotent)."""
        with self._mutex:
            self._closed = True
            self._not_empty.notify_all()
            self._not_full.notify_all()

    def _wait_for_room(self, timeout: float | None) -> bool:
        """Wait (``_mutex`` held) until there is room; False on timeout."""
        deadline = None if timeout is None else monotonic() + timeout
        self._putters += 1
        try:
            while len(self._items) >= self._capacity:
                if deadline is None:
                    self._not_full.wait()
                else:
                    remaining = deadline - monotonic()
                    if remaining <= 0:
                        return False
                    self._not_full.wait(remaining)
                if self._closed:
                    raise QueueClosed("put on a closed queue")
            return True
        finally:
            self._putters -= 1

    def _wait_for_item(self, timeout: float | None) -> None:
        """Wait (``_mutex`` held) until an item is queued; raises on close or timeout."""
        deadline = None if timeout is None else monotonic() + timeout
        self._getters += 1
        try:
            while not self._items:
                if self._closed:
                    raise QueueClosed("get on a closed, empty queue")
                if deadline is None:
                    self._not_empty.wait()
                else:
                    remaining = deadline - monotonic()
                    if remaining <= 0:
                        raise TimeoutError(f"no item within {timeout} s")
                    self._not_empty.wait(remaining)
        finally:
            self._getters -= 1

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<BoundedQueue {state} {len(self._items)}/{self._capacity}>"


class LockingQueue(Generic[T]):
    """An unbounded FIFO guarded by one mutex and condition, for one producer and one consumer.

    ``put`` never blocks. ``get`` waits for an item, or until its ``stop`` predicate turns
    true, which it checks before waiting and on every wake-up; ``notify_all()`` wakes waiters
    so they check it again. Several consumers are safe, but each item goes to one of them.
    """

    __slots__ = ("_cond", "_items")

    def __init__(self) -> None:
        # _cond's lock guards _items.
        self._cond = threading.Condition(threading.Lock())
        self._items: deque[T] = deque()

    def __len__(self) -> int:
        """The number of queued items (a snapshot)."""
        return len(self._items)

    def put(self, item: T) -> None:
        """Append ``item`` and wake a waiting consumer."""
        with self._cond:
            self._items.append(item)
            self._cond.notify()

    def get(
        self, stop: Callable[[], bool] | None = None, timeout: float | None = None
    ) -> tuple[T, Literal[True]] | tuple[None, Literal[False]]:
        """The oldest item as ``(item, True)``, waiting while the queue is empty.

        Returns ``(None, False)`` when the queue is empty and ``stop()`` is true (checked before
        waiting and after every wake-up), or after ``timeout`` seconds. A queued item is
        returned even if ``stop()`` is true.
        """
        deadline = None if timeout is None else monotonic() + timeout
        with self._cond:
            while not self._items:
                if stop is not None and stop():
                    return None, False
                if deadline is None:
                    self._cond.wait()
                else:
                    remaining = deadline - monotonic()
                    if remaining <= 0:
                        return None, False
                    self._cond.wait(remaining)
            return self._items.popleft(), True

    def notify_all(self) -> None:
        """Wake every waiting consumer so it checks its ``stop`` predicate again."""
        with self._cond:
            self._cond.notify_all()
