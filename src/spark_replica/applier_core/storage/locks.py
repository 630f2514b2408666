"""Exclusive row locks with bounded waits, deadlock detection and external aborts.

A lock is keyed by ``(TableRef, key)``; its owner is any hashable value (the engines use the
``TransactionRef``). An owner keeps every lock it takes until ``release_all``. A request for a
lock someone else holds waits in that lock's FIFO queue; ``release_all`` hands each lock
straight to the first waiter, so a newcomer never overtakes a waiter.

* A wait lasts at most ``lock_wait_timeout`` seconds, then fails with 1205.
* The wait-for graph has one edge per waiter (to the holder of the lock it waits for), so a
  deadlock is a chain of edges that comes back to the requester; the request that would
  close the cycle fails at once with 1213 (its owner is the victim and must roll back).
  Handing a lock to a waiter cannot close a cycle: the new holder waits for nothing.
* ``on_wait(waiter, holder)`` is called when a wait starts, and again whenever the lock
  passes to another holder while the waiter still waits: the applier's conflict manager uses
  it to find a later transaction holding a lock an earlier one needs (WL#7846 DL.1, WL#10500
  TCM.3), and asks for that transaction's rollback with ``abort``. Both appliers of an engine
  listen: ``add_wait_hook`` adds a listener, and ``on_wait`` calls them all.
* ``abort(owner, error)`` fails the owner's current wait with ``error``; an owner that holds
  locks but is not waiting gets ``error`` from its next ``acquire`` (or ``check_abort``, which
  the engines call in ``prepare``). ``release_all`` forgets an abort not yet delivered.

Every waiter sleeps on its own ``Condition`` over the manager's one mutex, so a hand-over wakes
exactly the thread concerned; nobody polls.
"""

from __future__ import annotations

import enum
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, NamedTuple, TypeVar

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.interface import EngineError, HandlerError, Key, TableRef

OwnerT = TypeVar("OwnerT", bound=Hashable)
LockKey = tuple[TableRef, Key]

#: InnoDB's default ``innodb_lock_wait_timeout``.
DEFAULT_LOCK_WAIT_TIMEOUT = 50.0


class LockStats(NamedTuple):
    """Counters since the manager was created."""

    held: int
    waiting: int
    waits: int
    timeouts: int
    deadlocks: int
    aborts: int


class _WaitState(enum.Enum):
    WAITING = "waiting"
    GRANTED = "granted"
    FAILED = "failed"


class _Waiter(Generic[OwnerT]):
    """One blocked ``acquire``. Every field is guarded by the manager's mutex."""

    __slots__ = ("owner", "lock_key", "holder", "cond", "state", "error")

    def __init__(self, owner: OwnerT, lock_key: LockKey, holder: OwnerT, mutex: threading.Lock):
        self.owner = owner
        self.lock_key = lock_key
        #: Who holds the lock now (changes when the lock passes to a waiter ahead).
        self.holder = holder
        self.cond = threading.Condition(mutex)
        self.state = _WaitState.WAITING
        self.error: EngineError | None = None

    def __repr__(self) -> str:
        return f"_Waiter({self.owner!r} for {self.lock_key!r}, {self.state.value})"


def lock_wait_timeout_error() -> EngineError:
    """ER_LOCK_WAIT_TIMEOUT (1205) with its handler error."""
    return EngineError.of(ErrorCode.LOCK_WAIT_TIMEOUT, handler_error=HandlerError.LOCK_WAIT_TIMEOUT)


def deadlock_error() -> EngineError:
    """ER_LOCK_DEADLOCK (1213) with its handler error (also what ``abort`` should carry)."""
    return EngineError.of(ErrorCode.LOCK_DEADLOCK, handler_error=HandlerError.LOCK_DEADLOCK)


class LockManager(Generic[OwnerT]):
    """Exclusive locks on rows, owned by transactions. Thread-safe."""

    def __init__(
        self,
        lock_wait_timeout: float = DEFAULT_LOCK_WAIT_TIMEOUT,
        *,
        on_wait: Callable[[OwnerT, OwnerT], None] | None = None,
    ) -> None:
        #: Seconds a wait lasts before it fails with 1205; read when a wait starts.
        self.lock_wait_timeout = lock_wait_timeout
        #: Called as ``on_wait(waiter, holder)`` (outside the mutex) when a wait starts and when
        #: the lock passes to another holder during the wait. An exception it raises ends the
        #: wait and propagates from ``acquire``.
        self.on_wait = on_wait
        self._hooks: tuple[Callable[[OwnerT, OwnerT], None], ...] = ()
        # _mutex guards every attribute below and every _Waiter's fields; each waiter's
        # Condition is built on it.
        self._mutex = threading.Lock()
        self._holders: dict[LockKey, OwnerT] = {}
        self._owned: dict[OwnerT, list[LockKey]] = {}
        self._queues: dict[LockKey, deque[_Waiter[OwnerT]]] = {}
        self._waiting: dict[OwnerT, _Waiter[OwnerT]] = {}
        self._aborts: dict[OwnerT, EngineError] = {}
        self._waits = self._timeouts = self._deadlocks = self._aborted = 0

    def __repr__(self) -> str:
        with self._mutex:
            return (
                f"LockManager(held={len(self._holders)}, waiting={len(self._waiting)}, "
                f"lock_wait_timeout={self.lock_wait_timeout})"
            )

    # -- taking and releasing -----------------------------------------------------------------

    def acquire(
        self, owner: OwnerT, table: TableRef, key: Key, timeout: float | None = None
    ) -> None:
        """Take the lock on ``key`` of ``table`` for ``owner``, waiting while another holds it.

        Args:
            timeout: seconds to wait at most; None: ``lock_wait_timeout``.

        Raises:
            EngineError: 1205 when the wait times out; 1213 when waiting would close a cycle
                of waits; the error of an ``abort`` of ``owner``; whatever ``on_wait`` raises.
        """
        lock_key = (table, key)
        with self._mutex:
            if self._aborts:
                self._raise_abort(owner)
            holder = self._holders.get(lock_key)
            if holder is None:
                self._holders[lock_key] = owner
                owned = self._owned.get(owner)
                if owned is None:
                    self._owned[owner] = [lock_key]
                else:
                    owned.append(lock_key)
                return
            if holder is owner or holder == owner:
                return
            waiter = self._enqueue(owner, lock_key, holder)
            limit = self.lock_wait_timeout if timeout is None else timeout
        self._wait(waiter, time.monotonic() + limit)

    def acquire_free(self, owner: OwnerT, table: TableRef, keys: Sequence[Key]) -> int:
        """Take, in order, the locks on ``keys`` of ``table`` that nobody else holds, up to
        the first one another owner holds; how many were taken (or held by ``owner``
        already). One hold of the mutex for them all: a run of inserts locks its rows at
        once, and ``acquire`` waits for the rest one by one, in the same order.

        Raises:
            EngineError: the error of an ``abort`` of ``owner``.
        """
        holders = self._holders
        with self._mutex:
            if self._aborts:
                self._raise_abort(owner)
            owned = self._owned.get(owner)
            for taken, key in enumerate(keys):
                lock_key = (table, key)
                holder = holders.get(lock_key)
                if holder is None:
                    holders[lock_key] = owner
                    if owned is None:  # an owner of no lock is not listed (``abort``)
                        owned = self._owned[owner] = []
                    owned.append(lock_key)
                elif not (holder is owner or holder == owner):
                    return taken
            return len(keys)

    def release_all(self, owner: OwnerT) -> None:
        """Release every lock of ``owner`` (at commit or rollback), handing each to its first
        waiter; forget an abort of ``owner`` not yet delivered. A wait of ``owner`` still in
        progress (another thread rolled it back) fails with 1213."""
        with self._mutex:
            self._aborts.pop(owner, None)
            waiter = self._waiting.get(owner)
            if waiter is not None:
                self._fail(waiter, deadlock_error())
            for lock_key in self._owned.pop(owner, ()):
                queue = self._queues.get(lock_key)
                if not queue:
                    del self._holders[lock_key]
                    continue
                successor = queue.popleft()
                if not queue:
                    del self._queues[lock_key]
                self._grant(successor, lock_key)
                for behind in queue:
                    behind.holder = successor.owner
                    if self.on_wait is not None:
                        behind.cond.notify()

    # -- conflicts ----------------------------------------------------------------------------

    def add_wait_hook(self, hook: Callable[[OwnerT, OwnerT], None]) -> None:
        """Make ``on_wait`` call ``hook`` too (after the hooks added before it); the hook
        ignores the owners it does not know."""
        with self._mutex:
            self._hooks = (*self._hooks, hook)
            self.on_wait = hook if len(self._hooks) == 1 else self._call_hooks

    def remove_wait_hook(self, hook: Callable[[OwnerT, OwnerT], None]) -> None:
        """Stop calling ``hook`` (added with ``add_wait_hook``)."""
        with self._mutex:
            self._hooks = tuple(h for h in self._hooks if h != hook)
            count = len(self._hooks)
            self.on_wait = (
                None if count == 0 else self._hooks[0] if count == 1 else self._call_hooks
            )

    def _call_hooks(self, waiter: OwnerT, holder: OwnerT) -> None:
        for hook in self._hooks:
            hook(waiter, holder)

    def abort(self, owner: OwnerT, error: EngineError) -> bool:
        """Fail ``owner``'s current wait, or its next ``acquire``/``check_abort``, with
        ``error``. Returns False (and does nothing) when ``owner`` holds no lock and waits
        for none: it stands in nobody's way."""
        with self._mutex:
            waiter = self._waiting.get(owner)
            if waiter is not None:
                self._fail(waiter, error)
            elif owner in self._owned:
                self._aborts[owner] = error
            else:
                return False
            self._aborted += 1
            return True

    def check_abort(self, owner: OwnerT) -> None:
        """Raise (once) the error of an ``abort`` of ``owner`` not yet delivered."""
        if self._aborts:
            with self._mutex:
                self._raise_abort(owner)

    def holder_of(self, table: TableRef, key: Key) -> OwnerT | None:
        """Who holds the lock on ``key`` of ``table``."""
        with self._mutex:
            return self._holders.get((table, key))

    def waiting_for(self, owner: OwnerT) -> OwnerT | None:
        """The holder of the lock ``owner`` waits for; None when it does not wait."""
        with self._mutex:
            waiter = self._waiting.get(owner)
            return None if waiter is None else waiter.holder

    def held_by(self, owner: OwnerT) -> list[LockKey]:
        """The locks ``owner`` holds, in the order it took them."""
        with self._mutex:
            return list(self._owned.get(owner, ()))

    def stats(self) -> LockStats:
        with self._mutex:
            return LockStats(
                len(self._holders),
                len(self._waiting),
                self._waits,
                self._timeouts,
                self._deadlocks,
                self._aborted,
            )

    # -- internals (the caller holds the mutex unless noted) ----------------------------------

    def _raise_abort(self, owner: OwnerT) -> None:
        error = self._aborts.pop(owner, None)
        if error is not None:
            raise error

    def _enqueue(self, owner: OwnerT, lock_key: LockKey, holder: OwnerT) -> _Waiter[OwnerT]:
        # Follow the chain of waits from the holder; coming back to ``owner`` is a deadlock.
        # The graph is acyclic (no request that closes a cycle gets in), so the walk ends.
        current: OwnerT = holder
        while (ahead := self._waiting.get(current)) is not None:
            current = ahead.holder
            if current == owner:
                self._deadlocks += 1
                raise deadlock_error()
        waiter = _Waiter(owner, lock_key, holder, self._mutex)
        self._queues.setdefault(lock_key, deque()).append(waiter)
        self._waiting[owner] = waiter
        self._waits += 1
        return waiter

    def _grant(self, waiter: _Waiter[OwnerT], lock_key: LockKey) -> None:
        self._holders[lock_key] = waiter.owner
        owned = self._owned.get(waiter.owner)
        if owned is None:
            self._owned[waiter.owner] = [lock_key]
        else:
            owned.append(lock_key)
        del self._waiting[waiter.owner]
        waiter.state = _WaitState.GRANTED
        waiter.cond.notify()

    def _fail(self, waiter: _Waiter[OwnerT], error: EngineError) -> None:
        self._dequeue(waiter)
        waiter.state = _WaitState.FAILED
        waiter.error = error
        waiter.cond.notify()

    def _dequeue(self, waiter: _Waiter[OwnerT]) -> None:
        queue = self._queues[waiter.lock_key]
        queue.remove(waiter)
        if not queue:
            del self._queues[waiter.lock_key]
        del self._waiting[waiter.owner]

    def _wait(self, waiter: _Waiter[OwnerT], deadline: float) -> None:
        """Block until ``waiter`` is granted or fails (called without the mutex)."""
        reported: OwnerT | None = None
        while True:
            hook = self.on_wait
            with self._mutex:
                to_report = waiter.holder if waiter.state is _WaitState.WAITING else None
            if hook is not None and to_report is not None and to_report != reported:
                reported = to_report
                self._call_hook(hook, waiter, to_report)
            with self._mutex:
                while waiter.state is _WaitState.WAITING and (
                    self.on_wait is None or waiter.holder == reported
                ):
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        self._dequeue(waiter)
                        self._timeouts += 1
                        raise lock_wait_timeout_error()
                    waiter.cond.wait(remaining)
                if waiter.state is _WaitState.GRANTED:
                    return
                if waiter.error is not None:
                    raise waiter.error

    def _call_hook(
        self, hook: Callable[[OwnerT, OwnerT], None], waiter: _Waiter[OwnerT], holder: OwnerT
    ) -> None:
        try:
            hook(waiter.owner, holder)
        except BaseException:
            # A lock granted meanwhile stays held: the caller's rollback releases it.
            with self._mutex:
                if waiter.state is _WaitState.WAITING:
                    self._dequeue(waiter)
            raise
