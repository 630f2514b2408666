"""Concurrent relay log purge: who still uses a file, and deleting the applied ones.

DES.RS.0050-0090 and WL10500.PURGE.1-5. Every reader and every in-flight transaction holds a
``Subscription`` on the files it uses (a transaction spanning two files holds both). The
applier calls ``mark_applied(file)`` once it has read ``file`` to its end and dispatched every
transaction in it. A file is *fully applied*, and so a purge candidate, when it is marked
applied, no subscription holds it, and no subscription on it was released as failed
(WL10500.PURGE.2: references 0 and successful subscribers = subscribers). A failed file counts
as unread again after ``reset_failures``: the applier's next run marks it once it has read it.

``purge`` deletes only consecutive candidates from the oldest listed file, stops at the first
file that is not one, and never deletes the last listed file (the active one) (WL10500.PURGE.3,
T74, T75). It unlists the files durably before deleting them. A file that a purge claimed can
no longer be subscribed to. A failed subscription keeps its files until ``reset_failures``
(the applier restarts and applies them again).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from types import TracebackType

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.relaylog.index import RelayLogFile, RelayLogIndex


@dataclass(frozen=True, slots=True)
class FileUsage:
    """A snapshot of one file's counters."""

    references: int = 0
    subscribers: int = 0
    successful: int = 0
    failed: bool = False
    applied: bool = False

    @property
    def purgeable(self) -> bool:
        return self.applied and not self.failed and self.references == 0

    @property
    def releasing(self) -> bool:
        """Read to its end with no failure: a purge candidate once its holders let go."""
        return self.applied and not self.failed


@dataclass(slots=True)
class _Counters:
    subscribers: int = 0
    released: int = 0
    successful: int = 0
    failed: bool = False
    applied: bool = False
    purging: bool = False

    def snapshot(self) -> FileUsage:
        references = self.subscribers - self.released
        return FileUsage(references, self.subscribers, self.successful, self.failed, self.applied)


class Subscription:
    """References held by one reader or one transaction on the relay log files it uses.

    Not thread-safe by itself: one owner extends and releases it. ``release`` is idempotent.
    Used as a context manager, it releases as applied unless the block raised.
    """

    def __init__(self, tracker: PurgeTracker, files: tuple[str, ...]) -> None:
        self._tracker = tracker
        self._files = files
        self._released = False

    def __repr__(self) -> str:
        state = "released" if self._released else "held"
        return f"<Subscription {list(self._files)} {state}>"

    @property
    def files(self) -> tuple[str, ...]:
        return self._files

    def extend(self, file: str) -> None:
        """Also hold ``file`` (a streamed transaction went on into the next file)."""
        if self._released:
            raise RuntimeError("subscription already released")
        if file not in self._files:
            self._tracker._acquire((file,))
            self._files = (*self._files, file)

    def release(self, *, applied: bool = True) -> bool:
        """Drop the references; ``applied=False`` marks every file as failed (DES.RS.0060).

        Returns:
            True when a file became a purge candidate (the caller may call ``purge``).
        """
        if self._released:
            return False
        self._released = True
        return self._tracker._release(self._files, applied)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release(applied=exc_type is None)


class PurgeTracker:
    """Per-file subscriber counts of one relay log. Thread-safe."""

    def __init__(self) -> None:
        # _lock guards _files and _gone. Lock order: RelayLogIndex._update_lock, then _lock.
        self._lock = threading.Lock()
        self._files: dict[str, _Counters] = {}
        self._gone: set[str] = set()

    def __repr__(self) -> str:
        with self._lock:
            return f"<PurgeTracker files={len(self._files)} purged={len(self._gone)}>"

    def subscribe(self, *files: str) -> Subscription:
        """Reference ``files``.

        Raises:
            BinlogError: a file was purged, or is being purged.
        """
        self._acquire(files)
        return Subscription(self, tuple(dict.fromkeys(files)))

    def mark_applied(self, file: str) -> bool:
        """Declare ``file`` read to its end with every transaction in it dispatched.

        Returns:
            True when the file is now a purge candidate.
        """
        with self._lock:
            counters = self._files.setdefault(file, _Counters())
            counters.applied = True
            return counters.snapshot().purgeable and not counters.purging

    def usage(self, file: str) -> FileUsage:
        with self._lock:
            counters = self._files.get(file)
            return counters.snapshot() if counters else FileUsage()

    def reset_failures(self) -> None:
        """Forget failed subscriptions: the applier starts over and applies their files again.

        A file that failed is no longer marked applied either: its transactions are not, and
        only the new run's reader, once it has read the file to its end again, may mark it
        (a run stopped before that would otherwise release the file as a purge candidate).
        """
        with self._lock:
            for counters in self._files.values():
                if counters.failed:
                    counters.failed = counters.applied = False

    def reset(self) -> None:
        """Forget everything (every file was removed).

        Raises:
            BinlogError: a subscription is still held.
        """
        with self._lock:
            held = [name for name, c in self._files.items() if c.subscribers > c.released]
            if held:
                raise BinlogError(f"relay log files are in use: {held}")
            self._files.clear()
            self._gone.clear()

    def purge(self, index: RelayLogIndex) -> tuple[RelayLogFile, ...]:
        """Unlist and delete the longest run of purge candidates from the oldest file.

        Raises:
            OSError: the index could not be rewritten (nothing was unlisted or deleted), or the
                directory could not be fsynced after unlisting (the files are unlisted but
                left behind; the next ``RelayLogIndex.load`` removes them).
        """
        claimed: list[str] = []

        def choose(entries: tuple[RelayLogFile, ...]) -> int:
            claimed.extend(self._claim(entry.name for entry in entries[:-1]))
            return len(claimed)

        try:
            removed = index.remove_prefix(choose)
        except BaseException:
            listed = set(index.names())
            self._settle([name for name in claimed if name in listed], purged=False)
            self._settle([name for name in claimed if name not in listed], purged=True)
            raise
        self._settle(claimed, purged=True)
        return removed

    # -- used by Subscription and purge --------------------------------------------------------

    def _acquire(self, files: Iterable[str]) -> None:
        with self._lock:
            unique = list(dict.fromkeys(files))
            for name in unique:
                counters = self._files.get(name)
                if name in self._gone or (counters is not None and counters.purging):
                    raise BinlogError("relay log file was purged", file=name)
            for name in unique:
                self._files.setdefault(name, _Counters()).subscribers += 1

    def _release(self, files: Iterable[str], applied: bool) -> bool:
        became = False
        with self._lock:
            for name in files:
                counters = self._files[name]
                counters.released += 1
                if applied:
                    counters.successful += 1
                else:
                    counters.failed = True
                became |= counters.snapshot().purgeable
        return became

    def _claim(self, names: Iterable[str]) -> list[str]:
        claimed: list[str] = []
        with self._lock:
            for name in names:
                counters = self._files.get(name)
                if counters is None or counters.purging or not counters.snapshot().purgeable:
                    break
                counters.purging = True
                claimed.append(name)
        return claimed

    def _settle(self, names: Iterable[str], *, purged: bool) -> None:
        with self._lock:
            for name in names:
                if purged:
                    self._files.pop(name, None)
                    self._gone.add(name)
                elif name in self._files:
                    self._files[name].purging = False
