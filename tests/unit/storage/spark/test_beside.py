"""Work beside the flusher's thread: the tables of a flush written a few at a time, on named
threads the caller joins, the first failure raised once all of them have ended."""

from __future__ import annotations

import threading

import pytest

from spark_replica.applier_core.storage.spark.beside import each_beside


def test_results_come_in_the_items_order_from_named_threads() -> None:
    names: list[str] = []
    prepared: list[str] = []

    def work(item: int) -> int:
        names.append(threading.current_thread().name)
        return item * item

    def setup() -> None:
        prepared.append(threading.current_thread().name)

    squares = each_beside("writer", range(7), work, threads=3, setup=setup)
    assert squares == [n * n for n in range(7)]
    assert set(names) <= {"writer-1", "writer-2", "writer-3"}
    assert sorted(prepared) == ["writer-1", "writer-2", "writer-3"]  # each thread, once
    assert not [t for t in threading.enumerate() if t.name.startswith("writer-")]


def test_one_item_is_worked_on_the_callers_thread() -> None:
    seen = each_beside("writer", ["a"], lambda _: threading.current_thread(), threads=4)
    assert seen == [threading.current_thread()]


def test_after_a_failure_no_item_starts_and_every_thread_is_joined() -> None:
    ran: set[int] = set()
    failing: list[threading.Thread] = []
    recorded = threading.Event()

    def work(item: int) -> int:
        ran.add(item)
        if item == 0:
            failing.append(threading.current_thread())
            recorded.set()
            raise ValueError("table 0")
        recorded.wait()
        failing[0].join()  # the failed thread has ended: no other item may start now
        return item

    with pytest.raises(ValueError, match="table 0"):
        each_beside("writer", range(6), work, threads=2)
    assert ran <= {0, 1}
    assert not [t for t in threading.enumerate() if t.name.startswith("writer-")]
