"""The space a relay log takes, and the receiver's wait under ``relay_log_space_limit``.

MySQL keeps ``log_space_total`` per channel: the writer adds what it writes, a purge takes off
what it deletes, and SHOW REPLICA STATUS shows it as Relay_Log_Space. ``LogSpace`` keeps the
size of every listed file as the writer last published it, so the total needs no ``stat``
and a purge removes exactly what the files held.

With a limit, MySQL's receiver waits ("Waiting for the replica SQL thread to free relay log
space") while the total exceeds it, until a purge frees space. The limit is not absolute:
when the applier has read everything written and nothing it already read can still be purged,
waiting would never end (the applier needs more events before any file can go), so the
receiver is let through for one more batch, and rotates when it is between transactions so
the file it leaves can be purged (MySQL's ``ignore_log_space_limit`` and
``sql_force_rotate_relay``). The applier reports that it has read everything with
``caught_up``; the receiver compares the place with the end it published last.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Iterable

from spark_replica.applier_core.binlog.relaylog.position import RelayCoordinate

#: Seconds between two looks at what may free space while the receiver waits for it (the
#: applier's files become purgeable from other threads; stop and purge notify at once).
WAIT_SLICE = 0.25


class Room(enum.Enum):
    """How a wait for relay log space ended."""

    FREED = "freed"
    """The total is within the limit again."""
    CAUGHT_UP = "caught up"
    """The applier has read everything and cannot free space without more events."""
    STOPPED = "stopped"


class LogSpace:
    """File sizes and their total for one relay log. Thread-safe.

    Listeners (``watch``) are called with the new total after every change, outside the lock
    but in order: a later call never reports an older total.
    """

    def __init__(self) -> None:
        # _lock guards _sizes, _total, _end and _caught_up; _changed is built on it.
        # _report_lock serialises listener calls, which read the total under _lock.
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._report_lock = threading.Lock()
        self._sizes: dict[str, int] = {}
        self._total = 0
        self._end: RelayCoordinate | None = None
        self._caught_up: RelayCoordinate | None = None
        self._listeners: list[Callable[[int], None]] = []

    def __repr__(self) -> str:
        with self._lock:
            return f"<LogSpace {self._total} bytes in {len(self._sizes)} files>"

    @property
    def total(self) -> int:
        """Relay_Log_Space: the bytes of every listed file."""
        with self._lock:
            return self._total

    def watch(self, listener: Callable[[int], None]) -> None:
        """Call ``listener(total)`` now and after every change."""
        with self._lock:
            self._listeners.append(listener)
        self._report()

    # -- what the files hold --------------------------------------------------------------------

    def load(self, sizes: Iterable[tuple[str, int]]) -> None:
        """Start over with these files and sizes (the relay log was opened or emptied)."""
        with self._changed:
            self._sizes = dict(sizes)
            self._total = sum(self._sizes.values())
            self._end = self._caught_up = None
            self._changed.notify_all()
        self._report()

    def record(self, file: str, size: int) -> None:
        """The writer published ``file`` up to ``size``: its size, and the published end."""
        with self._changed:
            self._total += size - self._sizes.get(file, 0)
            self._sizes[file] = size
            self._end = RelayCoordinate(file, size)
            self._changed.notify_all()
        self._report()

    def files(self) -> list[str]:
        """The files whose size is known."""
        with self._lock:
            return list(self._sizes)

    def forget(self, files: Iterable[str]) -> None:
        """``files`` were purged."""
        with self._changed:
            for file in files:
                self._total -= self._sizes.pop(file, 0)
            self._changed.notify_all()
        self._report()

    # -- the wait -------------------------------------------------------------------------------

    def caught_up(self, position: RelayCoordinate | None) -> None:
        """The applier has read up to ``position`` and waits for more (None: it stopped)."""
        with self._changed:
            if position != self._caught_up:
                self._caught_up = position
                self._changed.notify_all()

    def wake(self) -> None:
        """Make a waiting ``wait_for_room`` look at its stop condition now."""
        with self._changed:
            self._changed.notify_all()

    def wait_for_room(
        self, limit: int, *, purge_pending: Callable[[], bool], stopped: Callable[[], bool]
    ) -> Room:
        """Wait while the total exceeds ``limit`` (0: no limit).

        Args:
            purge_pending: whether files the applier has read will be purged without more
                events (their transactions are being applied or made durable); while they
                are, a caught-up applier does not end the wait. Called without the lock.
            stopped: checked at every wake-up; ``wake`` wakes the wait.
        """
        while True:
            with self._changed:
                if stopped():
                    return Room.STOPPED
                if not limit or self._total <= limit:
                    return Room.FREED
                caught_up = self._end is not None and self._caught_up == self._end
                if not caught_up:
                    self._changed.wait(WAIT_SLICE)
                    continue
            if not purge_pending():
                return Room.CAUGHT_UP
            with self._changed:
                if not stopped() and self._total > limit:
                    self._changed.wait(WAIT_SLICE)

    def _report(self) -> None:
        with self._report_lock:
            with self._lock:
                listeners, total = list(self._listeners), self._total
            for listener in listeners:
                listener(total)
