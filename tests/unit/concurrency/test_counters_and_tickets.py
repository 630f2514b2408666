"""ShardedCounter and tickets."""

from __future__ import annotations

import threading

import pytest

from spark_replica.applier_core.concurrency import AtomicTicket, ShardedCounter, Ticket
from spark_replica.applier_core.concurrency.tickets import SYNC_BIT

TIMEOUT = 10.0


def test_counter_adds_stores_and_resets() -> None:
    counter = ShardedCounter(5)
    assert counter.get() == 5
    counter.add()
    counter.add(-3)
    assert counter.get() == 3
    counter.store(10)
    counter.add(2)
    assert counter.get() == 12
    counter.reset()
    assert counter.get() == 0
    assert "over 1 shard" in repr(counter)


def test_counter_sums_every_thread_shard_exactly() -> None:
    counter = ShardedCounter()
    threads_count, adds = 8, 5000
    start = threading.Barrier(threads_count)

    def work() -> None:
        start.wait(TIMEOUT)
        for _ in range(adds):
            counter.add(1)

    threads = [threading.Thread(target=work, name=f"adder-{n}") for n in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    assert counter.get() == threads_count * adds
    counter.store(1)
    assert counter.get() == 1
    # Shards of finished threads keep counting; a store made after them holds.
    done = threading.Thread(target=counter.add, args=(4,), name="late")
    done.start()
    done.join(TIMEOUT)
    assert counter.get() == 5


def test_ticket_packs_value_and_in_use_bit() -> None:
    ticket = Ticket.of(41)
    assert (ticket.value, ticket.in_use, ticket.is_set, ticket.packed) == (41, False, True, 41)
    busy = ticket.set_in_use()
    assert busy.in_use and busy.value == 41 and busy.packed == 41 | SYNC_BIT
    assert busy.set_used() == Ticket.of(42)
    assert busy.set_used(7) == Ticket.of(7)
    assert Ticket.of(Ticket.MAX_VALUE).next_value() == Ticket.MIN_VALUE
    assert not Ticket().is_set
    assert repr(busy) == "Ticket(41, in use)"
    with pytest.raises(ValueError):
        Ticket.of(-1)
    with pytest.raises(ValueError):
        Ticket(1 << 64)


def test_atomic_ticket_is_claimed_by_one_thread_at_a_time() -> None:
    cell = AtomicTicket(Ticket.of(1))
    claimed = cell.set_in_use(expected=Ticket.of(1))
    assert claimed == Ticket.of(1, in_use=True)
    assert cell.set_in_use() is None  # held
    with pytest.raises(TimeoutError):
        cell.acquire(timeout=0.01)
    assert cell.set_used() == Ticket.of(2)
    assert cell.set_in_use(expected=Ticket.of(1)) is None  # value moved on
    with pytest.raises(RuntimeError, match="not in use"):
        cell.set_used()
    cell.store(Ticket.of(9))
    assert cell.load() == Ticket.of(9)
    assert "9" in repr(cell)


def test_ticket_guard_hands_the_ticket_from_thread_to_thread_in_turn() -> None:
    cell = AtomicTicket(Ticket.of(1))
    seen: list[int] = []
    start = threading.Barrier(4)

    def work() -> None:
        start.wait(TIMEOUT)
        for _ in range(200):
            with cell.guard(TIMEOUT) as guard:
                seen.append(guard.ticket.value)
                guard.next = guard.ticket.value + 1

    threads = [threading.Thread(target=work, name=f"t{n}") for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    assert seen == list(range(1, 801))  # each holder saw the value the previous one stored
    assert cell.load() == Ticket.of(801)
    guard = cell.guard()
    assert guard.release() == Ticket.of(802)
    assert guard.release() == Ticket.of(802)  # once
