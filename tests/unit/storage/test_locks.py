"""The row-lock manager: waits, timeouts, deadlocks, the on_wait hook, aborts, hand-over.

Threads are ordered with the ``on_wait`` hook (a waiter is queued once its hook call is seen)
and events, never with sleeps; only the timeout tests let a short ``lock_wait_timeout`` pass.
"""

from __future__ import annotations

import functools
import random
import threading
import time
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_replica.applier_core.storage import EngineError, HandlerError, LockManager, TableRef
from tests.unit.storage.conftest import JOIN_TIMEOUT, Spawn

T = TableRef("d", "t")
U = TableRef("d", "u")


class WaitLog:
    """An ``on_wait`` hook that records its calls and lets the test wait for one."""

    def __init__(self, then: Callable[[str, str], None] | None = None) -> None:
        self.calls: list[tuple[str, str]] = []
        self._then = then
        self._cond = threading.Condition()

    def __call__(self, waiter: str, holder: str) -> None:
        with self._cond:
            self.calls.append((waiter, holder))
            self._cond.notify_all()
        if self._then is not None:
            self._then(waiter, holder)

    def wait(self, waiter: str, holder: str | None = None) -> None:
        """Block until ``waiter`` was reported waiting (for ``holder``, when given)."""

        def seen() -> bool:
            return any(w == waiter and holder in (None, h) for w, h in self.calls)

        with self._cond:
            assert self._cond.wait_for(seen, JOIN_TIMEOUT), f"{waiter} never waited"


@pytest.fixture
def log() -> WaitLog:
    return WaitLog()


@pytest.fixture
def locks(log: WaitLog) -> LockManager[str]:
    return LockManager[str](JOIN_TIMEOUT, on_wait=log)


# -- taking and releasing ----------------------------------------------------------------------


def test_a_free_lock_is_taken_at_once_and_again_by_its_holder(locks: LockManager[str]) -> None:
    locks.acquire("A", T, (1,))
    locks.acquire("A", T, (1,))
    locks.acquire("A", U, (1,))
    assert locks.holder_of(T, (1,)) == "A"
    assert locks.holder_of(T, (2,)) is None
    assert locks.held_by("A") == [(T, (1,)), (U, (1,))]
    assert locks.stats().held == 2


def test_acquire_free_takes_the_free_locks_up_to_the_first_held_by_another(
    locks: LockManager[str], log: WaitLog
) -> None:
    locks.acquire("A", T, (2,))
    locks.acquire("B", T, (4,))
    assert locks.acquire_free("A", T, [(1,), (2,), (3,), (4,), (5,)]) == 3
    assert locks.held_by("A") == [(T, (2,)), (T, (1,)), (T, (3,))]
    assert locks.holder_of(T, (5,)) is None  # not taken: it comes after the one B holds
    assert locks.acquire_free("B", T, [(6,), (4,)]) == 2
    assert locks.acquire_free("C", T, []) == 0
    assert locks.acquire_free("D", T, [(4,), (7,)]) == 0
    # Neither took a lock: an abort finds them in nobody's way.
    assert not locks.abort("C", EngineError(1213, "aborted"))
    assert not locks.abort("D", EngineError(1213, "aborted"))
    assert log.calls == []  # nobody waited
    locks.abort("A", EngineError(1213, "aborted"))
    with pytest.raises(EngineError, match="aborted"):
        locks.acquire_free("A", T, [(9,)])
    assert locks.holder_of(T, (9,)) is None


def test_release_all_frees_every_lock(locks: LockManager[str]) -> None:
    locks.acquire("A", T, (1,))
    locks.acquire("A", T, (2,))
    locks.release_all("A")
    assert locks.holder_of(T, (1,)) is None
    assert locks.held_by("A") == []
    locks.acquire("B", T, (1,))
    assert locks.holder_of(T, (1,)) == "B"
    locks.release_all("nobody")
    assert locks.stats().held == 1


def test_keys_of_different_tables_do_not_conflict(locks: LockManager[str]) -> None:
    locks.acquire("A", T, (1,))
    locks.acquire("B", U, (1,))
    assert (locks.holder_of(T, (1,)), locks.holder_of(U, (1,))) == ("A", "B")


def test_release_hands_the_lock_to_the_waiter(
    locks: LockManager[str], log: WaitLog, spawn: Spawn
) -> None:
    locks.acquire("A", T, (1,))
    waiter = spawn(lambda: locks.acquire("B", T, (1,)))
    log.wait("B", "A")
    assert not waiter.done
    assert locks.waiting_for("B") == "A"
    locks.release_all("A")
    waiter.result()
    assert locks.holder_of(T, (1,)) == "B"
    assert locks.waiting_for("B") is None
    assert locks.stats() == (1, 0, 1, 0, 0, 0)


def test_waiters_get_a_lock_in_arrival_order(
    locks: LockManager[str], log: WaitLog, spawn: Spawn
) -> None:
    locks.acquire("A", T, (1,))
    got: list[str] = []

    def take(name: str) -> None:
        locks.acquire(name, T, (1,))
        got.append(name)

    tasks = []
    for name in ("B", "C", "D"):
        tasks.append(spawn(functools.partial(take, name)))
        log.wait(name, "A")
    # A newcomer may not overtake the queue when the lock is handed over either.
    locks.release_all("A")
    tasks[0].result()
    assert got == ["B"]
    log.wait("C", "B")  # the others are told the lock has a new holder
    log.wait("D", "B")
    locks.release_all("B")
    tasks[1].result()
    locks.release_all("C")
    tasks[2].result()
    assert got == ["B", "C", "D"]
    assert locks.holder_of(T, (1,)) == "D"


# -- timeouts ---------------------------------------------------------------------------------


def test_a_wait_ends_with_1205_after_lock_wait_timeout(locks: LockManager[str]) -> None:
    locks.lock_wait_timeout = 0.05
    locks.acquire("A", T, (1,))
    started = time.monotonic()
    with pytest.raises(EngineError) as caught:
        locks.acquire("B", T, (1,))
    assert time.monotonic() - started >= 0.05
    error = caught.value
    assert error.code == 1205
    assert error.message == "Lock wait timeout exceeded; try restarting transaction"
    assert error.sqlstate == "HY000"
    assert error.handler_error is HandlerError.LOCK_WAIT_TIMEOUT
    assert error.transient
    assert locks.holder_of(T, (1,)) == "A"
    assert locks.waiting_for("B") is None
    assert locks.stats().timeouts == 1
    assert locks.stats().waiting == 0


def test_a_timed_out_waiter_leaves_the_queue(
    locks: LockManager[str], log: WaitLog, spawn: Spawn
) -> None:
    locks.acquire("A", T, (1,))
    later = spawn(lambda: locks.acquire("C", T, (1,)))
    log.wait("C", "A")
    with pytest.raises(EngineError, match="Lock wait timeout"):
        locks.acquire("B", T, (1,), timeout=0.01)
    locks.release_all("A")
    later.result()
    assert locks.holder_of(T, (1,)) == "C"


def test_the_timeout_argument_overrides_the_setting(locks: LockManager[str]) -> None:
    locks.acquire("A", T, (1,))
    with pytest.raises(EngineError) as caught:
        locks.acquire("B", T, (1,), timeout=0)
    assert caught.value.code == 1205


# -- deadlocks --------------------------------------------------------------------------------


def _deadlock(error: BaseException | None) -> bool:
    return (
        isinstance(error, EngineError)
        and error.code == 1213
        and error.sqlstate == "40001"
        and error.message == "Deadlock found when trying to get lock; try restarting transaction"
        and error.handler_error is HandlerError.LOCK_DEADLOCK
        and error.transient
    )


def test_the_request_closing_a_two_cycle_fails_with_1213(
    locks: LockManager[str], log: WaitLog, spawn: Spawn
) -> None:
    locks.acquire("A", T, (1,))
    locks.acquire("B", T, (2,))
    b = spawn(lambda: locks.acquire("B", T, (1,)))
    log.wait("B", "A")
    with pytest.raises(EngineError) as caught:
        locks.acquire("A", T, (2,))
    assert _deadlock(caught.value)
    assert locks.stats().deadlocks == 1
    assert not b.done  # the other side still waits, for the victim's rollback
    locks.release_all("A")
    b.result()
    assert locks.holder_of(T, (1,)) == "B"


def test_the_request_closing_a_three_cycle_fails_with_1213(
    locks: LockManager[str], log: WaitLog, spawn: Spawn
) -> None:
    for owner, key in (("A", 1), ("B", 2), ("C", 3)):
        locks.acquire(owner, T, (key,))
    a = spawn(lambda: locks.acquire("A", T, (2,)))
    log.wait("A", "B")
    b = spawn(lambda: locks.acquire("B", T, (3,)))
    log.wait("B", "C")
    with pytest.raises(EngineError) as caught:
        locks.acquire("C", T, (1,))
    assert _deadlock(caught.value)
    locks.release_all("C")
    b.result()
    locks.release_all("B")
    a.result()
    assert locks.holder_of(T, (2,)) == "A"


def test_a_chain_of_waits_without_a_cycle_is_no_deadlock(
    locks: LockManager[str], log: WaitLog, spawn: Spawn
) -> None:
    for owner, key in (("A", 1), ("B", 2), ("C", 3)):
        locks.acquire(owner, T, (key,))
    a = spawn(lambda: locks.acquire("A", T, (2,)))
    log.wait("A", "B")
    b = spawn(lambda: locks.acquire("B", T, (3,)))
    log.wait("B", "C")
    locks.acquire("C", T, (4,))  # C waits for nobody: no cycle, no wait
    d = spawn(lambda: locks.acquire("D", T, (1,)))  # D → A → B → C: a chain
    log.wait("D", "A")
    for owner, task in (("C", b), ("B", a), ("A", d)):
        locks.release_all(owner)
        task.result()
    assert locks.stats().deadlocks == 0


def test_a_cycle_through_a_lock_handed_over_is_detected(
    locks: LockManager[str], log: WaitLog, spawn: Spawn
) -> None:
    """C queued behind B for k1; once k1 passes from A to B, C waits for B, so B asking
    for C's lock closes a cycle."""
    locks.acquire("A", T, (1,))
    locks.acquire("C", T, (2,))
    b_has_k1 = threading.Event()
    b_may_go_on = threading.Event()

    def b_work() -> None:
        locks.acquire("B", T, (1,))
        b_has_k1.set()
        assert b_may_go_on.wait(JOIN_TIMEOUT)
        locks.acquire("B", T, (2,))

    b = spawn(b_work)
    log.wait("B", "A")
    c = spawn(lambda: locks.acquire("C", T, (1,)))
    log.wait("C", "A")
    locks.release_all("A")
    assert b_has_k1.wait(JOIN_TIMEOUT)
    log.wait("C", "B")
    assert locks.waiting_for("C") == "B"
    b_may_go_on.set()
    assert _deadlock(b.error())
    locks.release_all("B")
    c.result()
    assert locks.holder_of(T, (1,)) == "C"


# -- the on_wait hook and aborts --------------------------------------------------------------


def test_on_wait_names_the_waiter_and_the_holder(
    locks: LockManager[str], log: WaitLog, spawn: Spawn
) -> None:
    locks.acquire("A", T, (1,))
    b = spawn(lambda: locks.acquire("B", T, (1,)))
    log.wait("B", "A")
    locks.release_all("A")
    b.result()
    assert log.calls == [("B", "A")]


def test_no_hook_call_without_a_wait(locks: LockManager[str], log: WaitLog) -> None:
    locks.acquire("A", T, (1,))
    locks.acquire("A", T, (1,))
    assert log.calls == []


def test_an_exception_of_the_hook_ends_the_wait() -> None:
    def refuse(waiter: str, holder: str) -> None:
        raise RuntimeError(f"{waiter} may not wait for {holder}")

    locks = LockManager[str](JOIN_TIMEOUT, on_wait=refuse)
    locks.acquire("A", T, (1,))
    with pytest.raises(RuntimeError, match="B may not wait for A"):
        locks.acquire("B", T, (1,))
    assert locks.stats().waiting == 0
    locks.release_all("A")
    assert locks.holder_of(T, (1,)) is None


def test_abort_fails_the_current_wait_with_its_error(
    locks: LockManager[str], log: WaitLog, spawn: Spawn
) -> None:
    locks.acquire("A", T, (1,))
    b = spawn(lambda: locks.acquire("B", T, (1,)))
    log.wait("B", "A")
    error = EngineError(1213, "rolled back for commit order")
    assert locks.abort("B", error)
    assert b.error() is error
    assert locks.holder_of(T, (1,)) == "A"
    assert locks.stats().aborts == 1
    locks.release_all("A")
    assert locks.holder_of(T, (1,)) is None  # B did not get it


def test_abort_of_a_holder_fails_its_next_acquire_once(locks: LockManager[str]) -> None:
    locks.acquire("B", T, (1,))
    error = EngineError(1213, "rolled back for commit order")
    assert locks.abort("B", error)
    with pytest.raises(EngineError) as caught:
        locks.acquire("B", T, (2,))
    assert caught.value is error
    locks.acquire("B", T, (2,))  # delivered once
    assert locks.holder_of(T, (2,)) == "B"


def test_check_abort_delivers_a_pending_abort(locks: LockManager[str]) -> None:
    locks.acquire("B", T, (1,))
    locks.check_abort("B")
    error = EngineError(1213, "x")
    locks.abort("B", error)
    with pytest.raises(EngineError) as caught:
        locks.check_abort("B")
    assert caught.value is error
    locks.check_abort("B")


def test_release_all_forgets_a_pending_abort(locks: LockManager[str]) -> None:
    locks.acquire("B", T, (1,))
    locks.abort("B", EngineError(1213, "x"))
    locks.release_all("B")
    locks.acquire("B", T, (1,))  # the retry of B is not hit by the old abort
    locks.check_abort("B")


def test_abort_of_an_owner_in_nobodys_way_does_nothing(locks: LockManager[str]) -> None:
    assert not locks.abort("Z", EngineError(1213, "x"))
    locks.acquire("Z", T, (1,))
    locks.check_abort("Z")
    assert locks.stats().aborts == 0


def test_release_all_of_a_waiting_owner_fails_its_wait(
    locks: LockManager[str], log: WaitLog, spawn: Spawn
) -> None:
    locks.acquire("A", T, (1,))
    b = spawn(lambda: locks.acquire("B", T, (1,)))
    log.wait("B", "A")
    locks.release_all("B")
    assert _deadlock(b.error())
    assert locks.holder_of(T, (1,)) == "A"


def test_the_hook_can_resolve_a_commit_order_conflict(spawn: Spawn) -> None:
    """WL#7846 DL.1 / T65: T1 (earlier) needs a lock of T2 (later, waiting for its commit
    turn); the hook aborts T2, whose rollback hands the lock to T1."""
    order = {"T1": 1, "T2": 2}
    rolled_back = threading.Event()

    def conflict_manager(waiter: str, holder: str) -> None:
        if order[holder] > order[waiter]:
            manager.abort(holder, EngineError(1213, "commit order deadlock"))
            rolled_back.set()

    manager = LockManager[str](JOIN_TIMEOUT, on_wait=conflict_manager)
    manager.acquire("T2", T, (1,))
    t1 = spawn(lambda: manager.acquire("T1", T, (1,)))
    assert rolled_back.wait(JOIN_TIMEOUT)
    with pytest.raises(EngineError, match="commit order deadlock"):
        manager.check_abort("T2")  # T2's worker finds out at its commit turn
    manager.release_all("T2")
    t1.result()
    assert manager.holder_of(T, (1,)) == "T1"


# -- contention -------------------------------------------------------------------------------


def _run_transactions(
    locks: LockManager[int], plans: list[list[int]], spawn: Spawn
) -> tuple[dict[int, int], int]:
    """Each plan is a transaction on its own thread: lock its keys in the given order, add one
    to each key's counter, release; a deadlock victim releases and retries."""
    counters: dict[int, int] = {}
    start = threading.Barrier(len(plans))
    retries = [0]
    guard = threading.Lock()

    def work(owner: int, keys: list[int]) -> None:
        start.wait(JOIN_TIMEOUT)
        while True:
            try:
                for key in keys:
                    locks.acquire(owner, T, (key,))
            except EngineError as error:
                assert error.code == 1213, error  # a 1205 would be a lost wake-up
                locks.release_all(owner)
                with guard:
                    retries[0] += 1
                continue
            for key in set(keys):
                counters[key] = counters.get(key, 0) + 1  # safe: we hold the key's lock
            locks.release_all(owner)
            return

    tasks = [spawn(functools.partial(work, o, k)) for o, k in enumerate(plans)]
    for task in tasks:
        task.result(JOIN_TIMEOUT * 3)
    return counters, retries[0]


def _expected(plans: list[list[int]]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for keys in plans:
        for key in set(keys):
            counts[key] = counts.get(key, 0) + 1
    return counts


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plans=st.lists(st.lists(st.integers(0, 5), min_size=1, max_size=6), min_size=2, max_size=6))
def test_no_lost_wakeups_with_keys_in_one_order(plans: list[list[int]], spawn: Spawn) -> None:
    locks = LockManager[int](JOIN_TIMEOUT)
    ordered = [sorted(keys) for keys in plans]
    counters, retries = _run_transactions(locks, ordered, spawn)
    assert counters == _expected(ordered)
    assert retries == 0
    assert locks.stats()[:2] == (0, 0)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plans=st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=5), min_size=2, max_size=6))
def test_every_deadlock_is_detected_with_keys_in_any_order(
    plans: list[list[int]], spawn: Spawn
) -> None:
    locks = LockManager[int](JOIN_TIMEOUT)
    counters, _ = _run_transactions(locks, plans, spawn)
    assert counters == _expected(plans)
    stats = locks.stats()
    assert (stats.held, stats.waiting, stats.timeouts) == (0, 0, 0)


def test_many_threads_on_few_keys(spawn: Spawn) -> None:
    rng = random.Random(7)
    plans = [[rng.randrange(8) for _ in range(20)] for _ in range(16)]
    locks = LockManager[int](JOIN_TIMEOUT)
    counters, _ = _run_transactions(locks, plans, spawn)
    assert counters == _expected(plans)
    assert locks.stats().timeouts == 0
