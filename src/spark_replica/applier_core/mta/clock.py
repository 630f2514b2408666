"""LOGICAL_CLOCK admission (WL#6314): may a transaction start now?

The source stamps every transaction with ``last_committed`` (its commit parent: the last
transaction that had committed when it prepared) and ``sequence_number`` (its place in the
source's commit order). A transaction may start once every transaction of the relay log with
a sequence number up to its ``last_committed`` has committed (WL6314.GEN.2, SLAVE.1/2); as
the relay log is read in order, those are exactly the ones admitted before it that have not
ended yet. Transactions with the same commit parent are therefore admitted together, and the
first one of the next group waits for the current group.

A new group that waits for *everything* admitted before it (a barrier) starts when:

- a Format_description event of the source came before the transaction (WL6314.SLAVE.4: the
  source restarted or rotated, and its sequence numbers start again);
- the sequence number does not grow (a restart the Format_description did not announce);
- the stamps are unusable (no sequence number, or ``last_committed >= sequence_number``):
  the transaction runs alone rather than stop the channel.

``LogicalClock`` is the rule alone: no threads, no locks (``admission.py`` waits on it).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Stamp:
    """A transaction's logical timestamps, and whether the clock restarted before it."""

    last_committed: int
    sequence_number: int
    clock_reset: bool = False


class LogicalClock:
    """Which transactions may start, given those admitted and not yet ended. Not thread-safe.

    >>> clock = LogicalClock()
    >>> clock.admit(Stamp(0, 1)); clock.admit(Stamp(0, 2))  # one group: both run
    >>> clock.runnable(Stamp(2, 3))  # the next group waits for 1 and 2
    False
    >>> clock.ended(1); clock.runnable(Stamp(2, 3))
    False
    >>> clock.ended(2); clock.runnable(Stamp(2, 3))
    True
    """

    def __init__(self) -> None:
        self._running: list[int] = []  # heap of admitted sequence numbers, ended ones lazily
        self._ended: set[int] = set()  # ended sequence numbers still in _running
        self._count = 0  # admitted and not ended
        self._last_seen = 0  # the last sequence number of the current epoch
        self._barrier = False  # a skipped transaction restarted the clock

    def __repr__(self) -> str:
        return f"<LogicalClock running={self._count} last_seen={self._last_seen}>"

    @property
    def running(self) -> int:
        """How many admitted transactions have not ended."""
        return self._count

    def starts_group(self, stamp: Stamp) -> bool:
        """Whether ``stamp`` must wait for every transaction admitted before it."""
        return (
            self._barrier
            or stamp.clock_reset
            or stamp.sequence_number <= 0
            or stamp.last_committed >= stamp.sequence_number
            or stamp.sequence_number <= self._last_seen
        )

    def runnable(self, stamp: Stamp) -> bool:
        """Whether the transaction stamped ``stamp`` may start now."""
        if self.starts_group(stamp):
            return self._count == 0
        lowest = self._lowest_running()
        return lowest is None or lowest > stamp.last_committed

    def admit(self, stamp: Stamp) -> None:
        """The transaction starts (``runnable`` said so)."""
        if not self.runnable(stamp):
            raise RuntimeError(f"{stamp} is not runnable in {self!r}")
        if self.starts_group(stamp):  # a new epoch: its sequence numbers start again
            self._running.clear()
            self._ended.clear()
            self._barrier = False
        heapq.heappush(self._running, stamp.sequence_number)
        self._count += 1
        self._last_seen = stamp.sequence_number

    def skip(self, stamp: Stamp) -> None:
        """A transaction that is not applied (its GTID is executed) passed by: it runs nothing,
        but a restart it carries still starts a new group (Format_description events are
        never skipped, WL6314.SLAVE.4)."""
        if self.starts_group(stamp):
            self._barrier = True
        self._last_seen = stamp.sequence_number

    def ended(self, sequence_number: int) -> None:
        """An admitted transaction committed, or ended without committing."""
        self._ended.add(sequence_number)
        self._count -= 1
        running, ended = self._running, self._ended
        while running and running[0] in ended:
            ended.discard(heapq.heappop(running))

    def _lowest_running(self) -> int | None:
        return self._running[0] if self._running else None
