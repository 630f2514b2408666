"""CommitOrderGate: commits in ticket order (WL#7846), whatever order transactions end in."""

from __future__ import annotations

import threading

import pytest

from spark_replica.applier_core.commit_order import CommitOrderFailed, CommitOrderGate


def test_turns_come_in_ticket_order_whatever_order_tickets_finish_in() -> None:
    gate = CommitOrderGate()
    assert gate.wait_turn(0, 0)
    assert not gate.wait_turn(2, 0)
    gate.finished(1)  # ends early (cut off, skipped): ticket 2 still waits for 0
    assert not gate.wait_turn(2, 0) and gate.next_ticket == 0
    gate.finished(0)
    assert gate.next_ticket == 2 and gate.wait_turn(2, 0)
    gate.finished(0)  # twice: nothing happens
    assert gate.next_ticket == 2


def test_a_waiter_goes_when_its_predecessors_finish() -> None:
    gate = CommitOrderGate()
    order: list[int] = []
    started = threading.Barrier(4)

    def commit(ticket: int) -> None:
        started.wait()
        assert gate.wait_turn(ticket, 30)
        order.append(ticket)
        gate.finished(ticket)

    threads = [threading.Thread(target=commit, args=(t,), name=f"t{t}") for t in (3, 1, 2)]
    for thread in threads:
        thread.start()
    started.wait()
    gate.finished(0)
    for thread in threads:
        thread.join()
    assert order == [1, 2, 3]


def test_waits_counts_the_calls_that_had_to_wait() -> None:
    gate = CommitOrderGate()
    assert gate.wait_turn(0, 0) and gate.waits == 0  # its turn: no wait
    assert not gate.wait_turn(1, 0) and gate.waits == 1
    gate.finished(0)
    assert gate.wait_turn(1, 0) and gate.waits == 1


def test_a_gate_failed_from_a_ticket_lets_the_earlier_ones_through() -> None:
    gate = CommitOrderGate()
    gate.fail(RuntimeError("stopping"), from_ticket=2)
    assert gate.wait_turn(0, 0)
    gate.finished(0)
    assert gate.wait_turn(1, 0)
    gate.finished(1)
    for ticket in (2, 3):
        with pytest.raises(CommitOrderFailed, match="stopping"):
            gate.wait_turn(ticket, 0)
    gate.fail(RuntimeError("failed"))  # for all now; the first cause is kept
    with pytest.raises(CommitOrderFailed, match="stopping"):
        gate.wait_turn(1, 0)


def test_a_failure_releases_every_waiter_with_its_error() -> None:
    gate = CommitOrderGate()
    caught: list[BaseException] = []
    waiting = threading.Event()

    def follower() -> None:
        waiting.set()
        try:
            gate.wait_turn(5, 30)
        except CommitOrderFailed as exc:
            caught.append(exc.cause)

    thread = threading.Thread(target=follower, name="follower")
    thread.start()
    waiting.wait()
    cause = RuntimeError("transaction 0 failed")
    gate.fail(cause)
    gate.fail(RuntimeError("later"))  # the first failure is kept
    thread.join()
    assert caught == [cause]
    with pytest.raises(CommitOrderFailed):
        gate.wait_turn(0, 0)
