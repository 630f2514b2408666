"""The executed GTID set every applier adds to, and where it is kept across restarts.

``ExecutedGtids`` is the server's ``@@global.gtid_executed``: one set shared by every channel,
which appliers add to as they commit transactions and read to skip transactions already
applied. ``publish()`` copies it into the system variable and the ``ProgressStore`` (the
metadata store implements it); appliers call it every ``interval`` seconds and when they stop,
so a burst of commits formats and stores the set once, not once per commit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.settings import SystemVariables

GtidInterval = tuple[str, str, int, int]

#: How often appliers publish the executed set while they run, in seconds.
PUBLISH_INTERVAL = 0.2


class ProgressStore(Protocol):
    """Where the executed GTID set is kept (``mysql.gtid_executed``)."""

    def save_gtid_intervals(self, rows: Iterable[GtidInterval]) -> None:
        """Replace the whole stored set with ``rows``, in one transaction."""
        ...


@dataclass(slots=True, eq=False)
class _Waiter:
    """A ``wait_for`` call: its set, how many of its GTIDs are not executed yet, and the
    condition (on the set's lock) it waits on."""

    gtids: GtidSet
    missing: int
    done: threading.Condition


class ExecutedGtids:
    """``@@global.gtid_executed``, shared by every channel. Thread-safe."""

    def __init__(
        self,
        initial: GtidSet | None = None,
        *,
        settings: SystemVariables | None = None,
        store: ProgressStore | None = None,
    ) -> None:
        self._settings = settings
        self._store = store
        # _lock guards _set, _version, _published, _published_at and _waiters; _publishing
        # orders publishers, so an older snapshot is never stored after a newer one.
        self._lock = threading.Lock()
        self._waiters: list[_Waiter] = []
        self._publishing = threading.Lock()
        self._set = initial.copy() if initial is not None else GtidSet()
        self._version = 0
        self._published = 0
        self._published_at = time.monotonic()

    @classmethod
    def from_settings(
        cls, settings: SystemVariables, store: ProgressStore | None = None
    ) -> ExecutedGtids:
        """The set ``@@global.gtid_executed`` holds now."""
        initial = GtidSet.parse(settings.get_str("gtid_executed"))
        return cls(initial, settings=settings, store=store)

    def contains(self, uuid: str, tag: str, gno: int) -> bool:
        with self._lock:
            return self._set.contains(uuid, tag, gno)

    def add(self, uuid: str, tag: str, gno: int) -> None:
        with self._lock:
            waiters = self._waiters
            if waiters and not self._set.contains(uuid, tag, gno):
                for waiter in waiters:
                    if waiter.gtids.contains(uuid, tag, gno):
                        waiter.missing -= 1
                        if not waiter.missing:
                            waiter.done.notify()
            self._set.add(uuid, tag, gno)
            self._version += 1

    def update(self, gtids: GtidSet) -> None:
        """Add every GTID of ``gtids`` (a transaction committed for a whole set: SET
        gtid_purged), waking the waiters it completes."""
        with self._lock:
            added = gtids.subtract(self._set)
            if not added:
                return
            for waiter in self._waiters:
                found = waiter.gtids.intersection(added).count()
                if found:
                    waiter.missing -= found
                    if not waiter.missing:
                        waiter.done.notify()
            self._set.update(added)
            self._version += 1

    def wait_for(self, gtids: GtidSet, timeout: float | None = None) -> bool:
        """Wait until every GTID of ``gtids`` is executed (what WAIT_FOR_EXECUTED_GTID_SET
        does); False when ``timeout`` seconds passed first. The waiter counts the GTIDs it
        still misses and is woken once, when the last of them is added."""
        with self._lock:
            missing = gtids.subtract(self._set).count()
            if not missing:
                return True
            waiter = _Waiter(gtids, missing, threading.Condition(self._lock))
            self._waiters.append(waiter)
            try:
                return waiter.done.wait_for(lambda: not waiter.missing, timeout)
            finally:
                self._waiters.remove(waiter)

    def waiting(self) -> int:
        """How many threads wait in ``wait_for`` now (a client's WAIT_FOR_EXECUTED_GTID_SET)."""
        with self._lock:
            return len(self._waiters)

    def snapshot(self) -> GtidSet:
        with self._lock:
            return self._set.copy()

    def publish(self, *, at_most_every: float = 0.0, wait: bool = True) -> bool:
        """Copy the set into ``@@global.gtid_executed`` and the store, if it changed since the
        last time and ``at_most_every`` seconds have passed; True when it did. Without
        ``wait``, leave it to a thread that is publishing already."""
        now = time.monotonic()
        if now - self._published_at < at_most_every:  # a cheap early answer; checked again
            return False
        if not self._publishing.acquire(blocking=wait):
            return False
        try:
            return self._publish(now, at_most_every)
        finally:
            self._publishing.release()

    def _publish(self, now: float, at_most_every: float) -> bool:
        """(Holding ``_publishing``) The copy itself."""
        with self._lock:
            if self._version == self._published or now - self._published_at < at_most_every:
                return False
            snapshot, version = self._set.copy(), self._version
        if self._store is not None:
            self._store.save_gtid_intervals(snapshot.intervals())
        if self._settings is not None:
            self._settings.set_internal("gtid_executed", snapshot.format())
        with self._lock:
            self._published = version
            self._published_at = now
        return True
