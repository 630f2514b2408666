"""DATABASE scheduling (WL#5569): which worker runs a transaction, and when it may start.

With ``replica_parallel_type=DATABASE`` a transaction's partitions are the databases it
changes. The Assigned Partition Hash (APH, WL5569.APH.1) maps every database with ongoing
transactions to its worker and the number of those transactions:

- a database with no ongoing transaction goes to the least-loaded worker: the one with the
  fewest ongoing transactions, the lowest-numbered among equals (WL5569.CGAP.1, architecture
  decision 4.11);
- a database with ongoing transactions stays with its worker, so the transactions of one
  database run in source order on that worker (each worker applies its queue in order);
- a transaction whose databases live on different workers waits until all but one of those
  workers are done with them, then runs on the remaining one (or on the least-loaded worker,
  when none is left): WL5569.FALLBACK.1;
- a transaction whose databases cannot be told (``None``: none found, more than
  ``MAX_DBS_IN_EVENT_MTS``, a DDL without the list of updated databases) runs alone: it waits
  for every ongoing transaction, and every later one waits for it (WL5569.FALLBACK.2, DDL.1).

When a transaction ends (committed or not) its worker's claim is given back: every count it
raised drops, and a database whose count reaches 0 leaves the APH (WL5569.CGEP.1).

``PartitionHash`` is the rule alone: no threads, no locks. ``PartitionAdmission`` is its
thread-safe side: the coordinator waits there, workers report ends there.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

MAX_DBS_IN_EVENT_MTS = 16
"""Databases a transaction may name and still run in parallel (MySQL's constant)."""


def partitions_of(databases: Iterable[str] | None) -> frozenset[str] | None:
    """The partitions of a transaction that changes ``databases``: None (run alone) when
    they are unknown, none, or more than ``MAX_DBS_IN_EVENT_MTS``."""
    if databases is None:
        return None
    found = frozenset(databases)
    if not found or len(found) > MAX_DBS_IN_EVENT_MTS:
        return None
    return found


@dataclass(frozen=True, slots=True)
class Claim:
    """An admitted transaction's hold on the APH: its worker (0-based index) and databases
    (None: it runs alone)."""

    worker: int
    databases: frozenset[str] | None


class PartitionHash:
    """The APH and the rule over it (see the module text). Not thread-safe.

    >>> aph = PartitionHash(2)
    >>> aph.admit(frozenset({"a"}))  # a new database: the least-loaded worker
    Claim(worker=0, databases=frozenset({'a'}))
    >>> aph.admit(frozenset({"b"})).worker  # worker 0 has one ongoing transaction
    1
    >>> aph.runnable(frozenset({"a", "b"}))  # a and b live on different workers
    False
    """

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError(f"DATABASE scheduling needs at least one worker, not {workers}")
        self._owners: dict[str, tuple[int, int]] = {}  # database -> (worker, ongoing count)
        self._load = [0] * workers  # ongoing transactions per worker
        self._alone = False  # a transaction that runs alone is ongoing

    def __repr__(self) -> str:
        return f"<PartitionHash load={self._load} databases={len(self._owners)}>"

    @property
    def running(self) -> int:
        """How many admitted transactions have not ended."""
        return sum(self._load)

    def owner(self, database: str) -> tuple[int, int] | None:
        """``(worker, ongoing transactions)`` of ``database``, or None: none is ongoing."""
        return self._owners.get(database)

    def load(self, worker: int) -> int:
        """How many admitted transactions of ``worker`` have not ended."""
        return self._load[worker]

    def runnable(self, databases: frozenset[str] | None) -> bool:
        """Whether a transaction changing ``databases`` (None: run alone) may start now."""
        if self._alone:
            return False
        if databases is None:
            return self.running == 0
        return len(self._workers_of(databases)) <= 1

    def admit(self, databases: frozenset[str] | None) -> Claim:
        """Start the transaction (``runnable`` said so) on the worker the rule picks."""
        if not self.runnable(databases):
            raise RuntimeError(f"{sorted(databases or ())} is not runnable in {self!r}")
        owners = self._workers_of(databases) if databases is not None else set()
        worker = owners.pop() if owners else self._least_loaded()
        self._load[worker] += 1
        if databases is None:
            self._alone = True
        else:
            for database in databases:
                _, count = self._owners.get(database, (worker, 0))
                self._owners[database] = (worker, count + 1)
        return Claim(worker, databases)

    def ended(self, claim: Claim) -> None:
        """The claimed transaction committed, or ended without committing (CGEP.1)."""
        self._load[claim.worker] -= 1
        if claim.databases is None:
            self._alone = False
            return
        for database in claim.databases:
            worker, count = self._owners[database]
            if count <= 1:
                del self._owners[database]
            else:
                self._owners[database] = (worker, count - 1)

    def _workers_of(self, databases: frozenset[str]) -> set[int]:
        owners = self._owners
        return {owners[d][0] for d in databases if d in owners}

    def _least_loaded(self) -> int:
        load = self._load
        return min(range(len(load)), key=load.__getitem__)


class PartitionAdmission:
    """The thread-safe side of a ``PartitionHash``: the coordinator waits in ``admit``,
    workers call ``ended``; ``interrupt`` (STOP REPLICA, a failure) wakes the coordinator for
    good."""

    def __init__(self, workers: int) -> None:
        # _changed's lock guards _hash and _interrupted.
        self._changed = threading.Condition(threading.Lock())
        self._hash = PartitionHash(workers)
        self._interrupted = False
        self.waits = 0
        """How many admissions had to wait (a database on another worker, or running alone)."""

    def __repr__(self) -> str:
        state = "interrupted" if self._interrupted else "open"
        return f"<PartitionAdmission {state} {self._hash!r}>"

    def admit(self, databases: frozenset[str] | None) -> Claim | None:
        """Wait until the transaction may start and admit it; None once interrupted."""
        with self._changed:
            rule = self._hash
            if not self._interrupted and not rule.runnable(databases):
                self.waits += 1
            while not self._interrupted and not rule.runnable(databases):
                self._changed.wait()
            if self._interrupted:
                return None
            return rule.admit(databases)

    def ended(self, claim: Claim) -> None:
        with self._changed:
            self._hash.ended(claim)
            self._changed.notify_all()

    def interrupt(self) -> None:
        """Make every current and later ``admit`` return None. Idempotent."""
        with self._changed:
            self._interrupted = True
            self._changed.notify_all()
