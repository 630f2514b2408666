"""Positions in a relay log and the published end position readers wait on (WL#5721).

Two kinds of position:

* ``RelayCoordinate(file, offset)``: a file name and a byte offset, as MySQL shows and
  persists them (``Relay_Log_File``/``Relay_Log_Pos``, ``mysql.slave_relay_log_info``).
* ``LogPosition(ordinal, offset)``: the same place with the file replaced by its *ordinal*, a
  number the ``RelayLogIndex`` gives every file it lists, increasing in index order and never
  reused while the relay log is open (not even after a purge or ``remove_all``). Ordinals make
  positions totally ordered, which file names are not (a DBA-copied ``mysql-bin.000042`` may sit
  before ``relay-bin.000003``).

``EndPosition`` holds the end of the last completely written event: every byte of a file whose
ordinal is below ``ordinal`` is final, and the file ``ordinal`` is final up to ``offset``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import NamedTuple


class RelayCoordinate(NamedTuple):
    """A file name (no directory) and a byte offset in it."""

    file: str
    offset: int


@dataclass(frozen=True, slots=True, order=True)
class LogPosition:
    """A byte offset in the file with index ordinal ``ordinal``."""

    ordinal: int
    offset: int


class EndPosition:
    """The published end of a relay log: a small lock, a Condition and a monotonic position.

    Only the writer publishes; any number of readers read or wait. Nobody does I/O while holding
    the lock (WL5721.GOAL.1): a reader takes the position, releases the lock, then reads the
    file up to it.
    """

    def __init__(self, initial: LogPosition) -> None:
        # _lock guards _position and _closed; _changed is built on it and is notified (all) on
        # every publish and on close.
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._position = initial
        self._closed = False

    def __repr__(self) -> str:
        with self._lock:
            state = "closed" if self._closed else "open"
            return f"<EndPosition {self._position.ordinal}:{self._position.offset} {state}>"

    def get(self) -> LogPosition:
        with self._lock:
            return self._position

    @property
    def closed(self) -> bool:
        with self._lock:
            return self._closed

    def publish(self, position: LogPosition) -> None:
        """Move the end to ``position`` and wake every waiter (WL5721.WRITE.1).

        Raises:
            ValueError: ``position`` is behind the published one; the end never moves back.
        """
        with self._lock:
            if position < self._position:
                raise ValueError(f"end position moves back: {self._position} -> {position}")
            self._position = position
            self._changed.notify_all()

    def reopen(self) -> None:
        """Let waits block again after ``close()`` (the relay log was opened again)."""
        with self._lock:
            self._closed = False

    def close(self) -> None:
        """Wake every waiter; from now on ``wait_beyond`` returns at once."""
        with self._lock:
            self._closed = True
            self._changed.notify_all()

    def wait_beyond(self, position: LogPosition, timeout: float | None) -> bool:
        """Wait until the published end is past ``position``.

        Args:
            position: where the caller has read up to.
            timeout: seconds to wait at most; ``None`` waits without a limit.

        Returns:
            True when the end is past ``position``; False on timeout or once closed.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while not self._position > position:
                if self._closed:
                    return False
                if deadline is None:
                    self._changed.wait()
                    continue
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._changed.wait(remaining)
            return True
