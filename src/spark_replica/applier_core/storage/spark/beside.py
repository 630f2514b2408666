"""Work on threads of their own beside the caller's, joined before the caller goes on: the
flusher applies a batch to the key index while Spark writes the same batch into Iceberg, and
writes the tables of a batch a few at a time (the flusher's thread mostly waits on the JVM
meanwhile; so does a table's write, on its Spark jobs and commits)."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Beside:
    """Runs ``work`` on a thread named ``name`` from construction; ``join`` waits for it and
    gives what it raised (None when it returned). Join it on every path: the caller owns
    the thread."""

    def __init__(self, name: str, work: Callable[[], object]) -> None:
        self._work = work
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._work()
        except BaseException as error:  # handed to the caller by join
            self._error = error

    def join(self) -> BaseException | None:
        self._thread.join()
        return self._error


def each_beside(
    name: str,
    items: Sequence[T],
    work: Callable[[T], R],
    *,
    threads: int,
    setup: Callable[[], object] = lambda: None,
) -> list[R]:
    """``work(item)`` for each of ``items``, on up to ``threads`` threads named ``name-1``,
    ``name-2``… (each first runs ``setup``), or on the caller's thread when there is one
    item; the results in the order of ``items``. Once an item fails no other one is started;
    every thread is joined before the first error is raised."""
    if len(items) <= 1 or threads <= 1:
        return [work(item) for item in items]
    todo = deque(enumerate(items))
    results: dict[int, R] = {}
    failed = threading.Event()

    def run() -> None:
        setup()
        while not failed.is_set():
            try:
                index, item = todo.popleft()
            except IndexError:
                return
            try:
                results[index] = work(item)
            except BaseException:
                failed.set()
                raise

    workers = [Beside(f"{name}-{n}", run) for n in range(1, min(threads, len(items)) + 1)]
    errors = [error for error in (worker.join() for worker in workers) if error is not None]
    if errors:
        raise errors[0]
    return [results[index] for index in range(len(items))]
