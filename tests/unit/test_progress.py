"""ExecutedGtids: the shared @@global.gtid_executed and its publication to the store."""

from __future__ import annotations

import threading
from collections.abc import Iterable

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.progress import ExecutedGtids, GtidInterval
from spark_replica.applier_core.settings import SystemVariables

UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


class RecordingStore:
    def __init__(self) -> None:
        self.saved: list[list[GtidInterval]] = []

    def save_gtid_intervals(self, rows: Iterable[GtidInterval]) -> None:
        self.saved.append(list(rows))


def test_publish_copies_the_set_to_the_variable_and_the_store() -> None:
    settings = SystemVariables({})
    settings.set_internal("gtid_executed", f"{UUID}:1-3")
    store = RecordingStore()
    executed = ExecutedGtids.from_settings(settings, store)
    assert executed.contains(UUID, "", 2) and not executed.contains(UUID, "", 4)
    assert not executed.publish()  # nothing changed
    executed.add(UUID, "", 4)
    executed.add(UUID, "", 6)
    assert executed.publish()
    assert settings.get_str("gtid_executed") == f"{UUID}:1-4:6"
    assert store.saved == [[(UUID, "", 1, 4), (UUID, "", 6, 6)]]
    assert not executed.publish()
    assert len(store.saved) == 1


def test_publish_at_most_every_interval() -> None:
    executed = ExecutedGtids(GtidSet(), store=RecordingStore())
    executed.add(UUID, "", 1)
    assert executed.publish()
    executed.add(UUID, "", 2)
    assert not executed.publish(at_most_every=3600)
    assert executed.publish()


def test_concurrent_adds_are_all_kept() -> None:
    executed = ExecutedGtids()
    start = threading.Barrier(4)

    def add(first: int) -> None:
        start.wait()
        for gno in range(first, 4000, 4):
            executed.add(UUID, "", gno)

    threads = [threading.Thread(target=add, args=(i,), name=f"add-{i}") for i in (1, 2, 3, 4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert executed.snapshot().format() == f"{UUID}:1-3999"


def test_wait_for_returns_once_every_gtid_is_executed() -> None:
    executed = ExecutedGtids()
    target = GtidSet.parse(f"{UUID}:3-4")
    assert not executed.wait_for(target, 0)
    done = threading.Event()

    def waiter() -> None:
        assert executed.wait_for(target, 30)
        done.set()

    thread = threading.Thread(target=waiter, name="waiter")
    thread.start()
    for gno in (1, 2, 3):
        executed.add(UUID, "", gno)
    assert not done.is_set() or executed.wait_for(target, 0)
    executed.add(UUID, "", 4)
    thread.join()
    assert done.is_set() and executed.wait_for(target, 0)


def test_wait_for_counts_each_missing_gtid_once() -> None:
    """A GTID added twice (a skipped duplicate) does not stand for another one the waiter
    still misses; GTIDs outside its set do not count either."""
    executed = ExecutedGtids(GtidSet.parse(f"{UUID}:1"))
    target = GtidSet.parse(f"{UUID}:1-3")
    results: list[bool] = []
    registered = threading.Event()

    class Watching(GtidSet):
        def subtract(self, other: GtidSet) -> GtidSet:
            try:
                return super().subtract(other)
            finally:
                registered.set()

    watched = Watching()
    watched.update(target)
    thread = threading.Thread(target=lambda: results.append(executed.wait_for(watched, 30)),
                              name="waiter")  # fmt: skip
    thread.start()
    assert registered.wait(30)
    executed.add(UUID, "", 2)
    executed.add(UUID, "", 2)  # again: still missing 3
    executed.add(UUID, "", 1)  # executed before the wait: counts for nothing
    executed.add(UUID, "", 9)  # not in the set
    assert not executed.wait_for(GtidSet.parse(f"{UUID}:3"), 0)
    assert thread.is_alive()
    executed.add(UUID, "", 3)
    thread.join(30)
    assert results == [True]
    assert executed.snapshot().format() == f"{UUID}:1-3:9"


def test_gtid_set_count_and_appending_add() -> None:
    gtids = GtidSet.parse(f"{UUID}:1-3:7")
    gtids.add(UUID, "", 8)  # extends the last interval
    gtids.add(UUID, "", 4)  # joins 1-3
    gtids.add(UUID, "", 6)  # joins 7-8
    assert gtids.format() == f"{UUID}:1-4:6-8"
    assert gtids.count() == 7 and GtidSet().count() == 0
