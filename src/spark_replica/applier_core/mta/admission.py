"""Where the coordinator waits for a transaction's group to be admitted (WL6314.SLAVE.2).

The coordinator blocks here until the logical clock lets the next transaction start; workers
report every transaction that ends. ``interrupt`` (STOP REPLICA, a worker's error) wakes the
coordinator for good, so a waiting coordinator never outlives its channel.
"""

from __future__ import annotations

import threading

from spark_replica.applier_core.mta.clock import LogicalClock, Stamp


class Admission:
    """The thread-safe side of a ``LogicalClock``."""

    def __init__(self) -> None:
        # _changed's lock guards _clock and _interrupted.
        self._changed = threading.Condition(threading.Lock())
        self._clock = LogicalClock()
        self._interrupted = False
        self.waits = 0
        """How many admissions had to wait for a group to end."""

    def __repr__(self) -> str:
        state = "interrupted" if self._interrupted else "open"
        return f"<Admission {state} {self._clock!r}>"

    def admit(self, stamp: Stamp) -> bool:
        """Wait until ``stamp``'s transaction may start and admit it; False once interrupted
        (the transaction is not admitted)."""
        with self._changed:
            clock = self._clock
            if not self._interrupted and not clock.runnable(stamp):
                self.waits += 1
            while not self._interrupted and not clock.runnable(stamp):
                self._changed.wait()
            if self._interrupted:
                return False
            clock.admit(stamp)
            return True

    def skip(self, stamp: Stamp) -> None:
        with self._changed:
            self._clock.skip(stamp)

    def ended(self, sequence_number: int) -> None:
        """An admitted transaction committed or ended without committing."""
        with self._changed:
            self._clock.ended(sequence_number)
            self._changed.notify_all()

    def interrupt(self) -> None:
        """Make every current and later ``admit`` return False. Idempotent."""
        with self._changed:
            self._interrupted = True
            self._changed.notify_all()
