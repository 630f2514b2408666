"""BoundedQueue and LockingQueue."""

from __future__ import annotations

import threading

import pytest

from spark_replica.applier_core.concurrency import BoundedQueue, LockingQueue, QueueClosed

TIMEOUT = 10.0


def _blocked(thread: threading.Thread) -> bool:
    """True when ``thread`` has not finished within a short grace (it blocks)."""
    thread.join(0.05)
    return thread.is_alive()


def test_bounded_queue_is_fifo_and_bounded() -> None:
    queue: BoundedQueue[int] = BoundedQueue(2)
    assert (queue.capacity, len(queue), queue.closed) == (2, 0, False)
    assert queue.put(1)
    assert queue.put(2)
    assert not queue.put(3, timeout=0)
    assert not queue.put(3, timeout=0.01)
    assert len(queue) == 2
    assert queue.get() == 1
    assert queue.get(timeout=0) == 2
    with pytest.raises(TimeoutError):
        queue.get(timeout=0.01)
    assert "0/2" in repr(queue)
    with pytest.raises(ValueError):
        BoundedQueue(0)


def test_a_put_on_a_full_queue_waits_for_a_get() -> None:
    queue: BoundedQueue[int] = BoundedQueue(1)
    queue.put(1)
    producer = threading.Thread(target=queue.put, args=(2,), name="producer")
    producer.start()
    assert _blocked(producer)
    assert queue.get() == 1
    producer.join(TIMEOUT)
    assert not producer.is_alive()
    assert queue.get() == 2


def test_a_get_on_an_empty_queue_waits_for_a_put() -> None:
    queue: BoundedQueue[int] = BoundedQueue(1)
    got: list[int] = []
    consumer = threading.Thread(target=lambda: got.append(queue.get()), name="consumer")
    consumer.start()
    assert _blocked(consumer)
    queue.put(7)
    consumer.join(TIMEOUT)
    assert got == [7]


def test_close_wakes_producers_and_consumers() -> None:
    empty: BoundedQueue[int] = BoundedQueue(1)
    full: BoundedQueue[int] = BoundedQueue(1)
    full.put(0)
    errors: list[str] = []

    def expect_closed(action: str) -> None:
        try:
            empty.get() if action == "get" else full.put(1)
        except QueueClosed:
            errors.append(action)

    threads = [
        threading.Thread(target=expect_closed, args=(action,), name=action)
        for action in ("get", "put")
    ]
    for thread in threads:
        thread.start()
    assert all(_blocked(thread) for thread in threads)
    empty.close()
    full.close()
    for thread in threads:
        thread.join(TIMEOUT)
    assert sorted(errors) == ["get", "put"]
    # A closed queue still hands out what it holds, then refuses.
    assert full.get() == 0
    with pytest.raises(QueueClosed):
        full.get()
    with pytest.raises(QueueClosed):
        full.put(1)
    full.close()  # idempotent
    assert "closed" in repr(full)


def test_many_producers_and_consumers_pass_every_item_once_in_order() -> None:
    queue: BoundedQueue[tuple[int, int]] = BoundedQueue(4)
    producers, consumers, per_producer = 4, 3, 2000
    received: list[list[tuple[int, int]]] = [[] for _ in range(consumers)]
    start = threading.Barrier(producers + consumers)

    def produce(p: int) -> None:
        start.wait(TIMEOUT)
        for i in range(per_producer):
            queue.put((p, i))

    def consume(c: int) -> None:
        start.wait(TIMEOUT)
        while True:
            try:
                received[c].append(queue.get())
            except QueueClosed:
                return

    threads = [threading.Thread(target=produce, args=(p,), name=f"p{p}") for p in range(producers)]
    readers = [threading.Thread(target=consume, args=(c,), name=f"c{c}") for c in range(consumers)]
    for thread in threads + readers:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    queue.close()
    for thread in readers:
        thread.join(TIMEOUT)
    everything = sorted(item for part in received for item in part)
    assert everything == [(p, i) for p in range(producers) for i in range(per_producer)]
    for part in received:  # each consumer sees each producer's items in order
        for p in range(producers):
            mine = [i for q, i in part if q == p]
            assert mine == sorted(mine)


def test_locking_queue_returns_items_then_honours_stop_and_timeout() -> None:
    queue: LockingQueue[str] = LockingQueue()
    queue.put("a")
    queue.put("b")
    assert len(queue) == 2
    assert queue.get(stop=lambda: True) == ("a", True)  # an item beats the stop request
    assert queue.get() == ("b", True)
    assert queue.get(stop=lambda: True) == (None, False)
    assert queue.get(timeout=0.01) == (None, False)


def test_locking_queue_notify_all_makes_waiters_check_stop() -> None:
    queue: LockingQueue[int] = LockingQueue()
    stop = threading.Event()
    results: list[tuple[int | None, bool]] = []
    consumer = threading.Thread(
        target=lambda: results.append(queue.get(stop=stop.is_set)), name="consumer"
    )
    consumer.start()
    assert _blocked(consumer)
    stop.set()
    queue.notify_all()
    consumer.join(TIMEOUT)
    assert results == [(None, False)]


def test_locking_queue_wakes_a_waiting_consumer_on_put() -> None:
    queue: LockingQueue[int] = LockingQueue()
    results: list[tuple[int | None, bool]] = []
    consumer = threading.Thread(target=lambda: results.append(queue.get()), name="consumer")
    consumer.start()
    queue.put(5)
    consumer.join(TIMEOUT)
    assert results == [(5, True)]
