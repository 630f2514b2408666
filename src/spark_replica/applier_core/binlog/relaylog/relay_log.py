"""One channel's relay log: its files, published end position and purge bookkeeping.

``RelayLog`` is shared by the channel's writer (``RelayLogWriter``, owned by the receiver
thread), any number of readers (``RelayLogReader``) and the applier, which subscribes files,
marks them applied and purges. Opening it recovers the relay log after a crash: the index is
reconciled with the directory (``index.py``) and a partial or corrupt event at the end of the
last file is cut away (``framing.scan_tail``), so readers never meet it, unless the
receiver sealed the relay log when it stopped and nothing changed it since (``seal.py``).
"""

from __future__ import annotations

import enum
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.relaylog.framing import TailRepair, scan_tail
from spark_replica.applier_core.binlog.relaylog.index import (
    Reconciliation,
    RelayLogIndex,
    relay_log_base_name,
    relay_log_directory,
)
from spark_replica.applier_core.binlog.relaylog.log_space import LogSpace
from spark_replica.applier_core.binlog.relaylog.position import (
    EndPosition,
    LogPosition,
    RelayCoordinate,
)
from spark_replica.applier_core.binlog.relaylog.purge import PurgeTracker, Subscription
from spark_replica.applier_core.binlog.relaylog.seal import (
    Seal,
    read_seal,
    remove_seal,
    seal_path,
    write_seal,
)

logger = logging.getLogger(__name__)


class RelayLogState(enum.Enum):
    CLOSED = "closed"
    OPEN = "open"


@dataclass(frozen=True, slots=True)
class Recovery:
    """What ``RelayLog.open`` repaired."""

    reconciliation: Reconciliation
    tail: TailRepair | None
    """Bytes cut from the end of the last file. The receiver must fetch again from the
    source position of the last event kept; an applier position past ``tail.position`` in
    that file points at events that no longer exist."""


@dataclass(frozen=True, slots=True)
class ActiveTail:
    """The end of the last listed file as the last writer (or recovery) left it."""

    ordinal: int
    end: int
    last_type: int | None


class RelayLog:
    """The relay log of one channel. Thread-safe unless a method says otherwise."""

    def __init__(
        self,
        directory: Path,
        base_name: str,
        *,
        purge_enabled: bool | Callable[[], bool] = True,
    ) -> None:
        self.index = RelayLogIndex(directory, base_name)
        self.end = EndPosition(LogPosition(0, 0))
        self.tracker = PurgeTracker()
        self.space = LogSpace()
        """The files' sizes (Relay_Log_Space) and the receiver's wait for free space."""
        self._purge_enabled = _policy(purge_enabled)
        # _lock guards _state, _writer_attached and _tail. _tail is handed to the writer on
        # attach and back on detach; while a writer is attached only the writer knows the tail.
        # Lock order: _lock, then PurgeTracker's lock (remove_all); no I/O under _lock.
        self._lock = threading.Lock()
        self._state = RelayLogState.CLOSED
        self._writer_attached = False
        self._tail: ActiveTail | None = None
        self.seal_path = seal_path(directory, base_name)
        #: The received GTID set of the seal the relay log was opened with; None without
        #: one, or once a writer attached (guarded by _lock).
        self._sealed: str | None = None

    @classmethod
    def for_channel(
        cls,
        datadir: str | os.PathLike[str],
        channel: str,
        *,
        purge_enabled: bool | Callable[[], bool] = True,
    ) -> RelayLog:
        """The relay log of ``channel`` under ``datadir`` (not opened yet)."""
        return cls(
            relay_log_directory(datadir, channel),
            relay_log_base_name(channel),
            purge_enabled=purge_enabled,
        )

    def __repr__(self) -> str:
        return f"<RelayLog {self.index.directory / self.index.base_name} {self.state.value}>"

    @property
    def purge_enabled(self) -> bool:
        """``relay_log_purge``: when False, ``purge`` deletes nothing. Given as a callable,
        it is asked at every purge (SET GLOBAL relay_log_purge takes effect at once)."""
        return self._purge_enabled()

    @purge_enabled.setter
    def purge_enabled(self, value: bool | Callable[[], bool]) -> None:
        self._purge_enabled = _policy(value)

    @property
    def state(self) -> RelayLogState:
        with self._lock:
            return self._state

    @property
    def directory(self) -> Path:
        return self.index.directory

    def open(self) -> Recovery:
        """Load and reconcile the index, check the last file, publish its end.

        Raises:
            BinlogError: the index or the last file is unusable (see ``RelayLogIndex.load``).
            OSError: the directory cannot be read or written.
        """
        with self._lock:
            if self._state is not RelayLogState.CLOSED:
                raise RuntimeError(f"relay log already {self._state.value}")
        reconciliation = self.index.load()
        entries = self.index.entries()
        repair = None
        sealed = None
        tail = None
        end = LogPosition(self.index.next_ordinal, 0)
        if entries:
            last = entries[-1]
            seal = self._matching_seal(last.name)
            if seal is not None:
                sealed = seal.retrieved
                tail = ActiveTail(last.ordinal, seal.end, seal.last_type)
            else:
                fd = os.open(self.index.path(last.name), os.O_RDWR)
                try:
                    scan = scan_tail(fd, last.name)
                finally:
                    os.close(fd)
                repair = scan.repair
                tail = ActiveTail(last.ordinal, scan.end, scan.last_type)
            end = LogPosition(last.ordinal, tail.end)
        self.end.publish(end)
        self.end.reopen()
        self.space.load((entry.name, self._size(entry.name)) for entry in entries)
        with self._lock:
            self._tail = tail
            self._sealed = sealed
            self._state = RelayLogState.OPEN
        return Recovery(reconciliation, repair)

    def _matching_seal(self, last: str) -> Seal | None:
        """The seal, if it names ``last`` at its present length (see ``seal.py``)."""
        seal = read_seal(self.seal_path)
        if seal is None or seal.file != last or self._size(last) != seal.end:
            return None
        return seal

    @property
    def sealed_retrieved(self) -> str | None:
        """The received GTID set the receiver sealed the relay log with, while nothing has
        written to it since it was opened; None otherwise (read the files back)."""
        with self._lock:
            return self._sealed

    def seal(self, retrieved: str) -> bool:
        """The receiver stopped cleanly, its writer closed, holding ``retrieved`` whole:
        record it with the last file's end for the next open. Returns whether it did (not
        while a writer is attached, nor when the file is not as the writer published it).

        Raises:
            OSError: the seal cannot be written.
        """
        with self._lock:
            if self._state is not RelayLogState.OPEN or self._writer_attached:
                return False
            tail = self._tail
        entry = self.index.get(tail.ordinal) if tail is not None else None
        if tail is None or entry is None or self._size(entry.name) != tail.end:
            return False
        fd = os.open(self.index.path(entry.name), os.O_RDONLY)
        try:
            os.fsync(fd)  # the seal is durable only after what it describes
        finally:
            os.close(fd)
        write_seal(self.seal_path, Seal(entry.name, tail.end, tail.last_type, retrieved))
        with self._lock:
            self._sealed = retrieved
        return True

    def close(self) -> None:
        """Mark the relay log closed and wake every waiting reader. Idempotent.

        Raises:
            RuntimeError: the writer is still open.
        """
        with self._lock:
            if self._writer_attached:
                raise RuntimeError("close the relay log writer first")
            self._state = RelayLogState.CLOSED
        self.end.close()

    def __enter__(self) -> RelayLog:
        if self.state is RelayLogState.CLOSED:
            self.open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- files and positions -------------------------------------------------------------------

    def files(self) -> list[str]:
        return self.index.names()

    def path(self, name: str) -> Path:
        return self.index.path(name)

    def coordinate(self, position: LogPosition) -> RelayCoordinate | None:
        """``position`` with its file named; None if that file is not listed."""
        entry = self.index.get(position.ordinal)
        return RelayCoordinate(entry.name, position.offset) if entry else None

    def end_coordinate(self) -> RelayCoordinate | None:
        """Where the writer has published up to; None before the first file exists."""
        return self.coordinate(self.end.get())

    # -- purge -----------------------------------------------------------------------------------

    def subscribe(self, *files: str) -> Subscription:
        """Hold ``files`` against purging (see ``PurgeTracker.subscribe``)."""
        return self.tracker.subscribe(*files)

    def mark_applied(self, file: str) -> bool:
        """See ``PurgeTracker.mark_applied``."""
        return self.tracker.mark_applied(file)

    def purge(self) -> list[str]:
        """Delete the consecutive fully applied files from the oldest; never the active one.

        Returns:
            The names deleted (none when ``purge_enabled`` is False: ``relay_log_purge=OFF``).
        """
        if not self.purge_enabled:
            return []
        try:
            removed = [entry.name for entry in self.tracker.purge(self.index)]
        except BaseException:
            known = self.space.files()  # recorded ones were listed first: see the writer
            listed = set(self.files())
            self.space.forget(name for name in known if name not in listed)
            raise
        self.space.forget(removed)
        if removed:
            logger.info("purged relay log files %s", removed)
        return removed

    def purge_pending(self) -> bool:
        """Whether a file before the active one is read to its end with no failed
        transaction: it is purged once its transactions are applied and durable, with no
        more events written (the receiver's wait for space may count on it)."""
        if not self.purge_enabled:
            return False
        return any(self.tracker.usage(name).releasing for name in self.files()[:-1])

    def remove_all(self) -> list[str]:
        """RESET REPLICA: delete every relay log file and start an empty index.

        The writer's next ``open`` creates ``<base>.000001``.

        Raises:
            BinlogError: the writer is open or a reader or transaction still holds a file.
        """
        with self._lock:
            if self._state is not RelayLogState.OPEN:
                raise RuntimeError("relay log is not open")
            if self._writer_attached:
                raise BinlogError("relay log is being written; stop the receiver first")
            self.tracker.reset()
            self._tail = None
            self._sealed = None
        remove_seal(self.seal_path)
        removed = [entry.name for entry in self.index.clear()]
        self.space.load(())
        self.end.publish(LogPosition(self.index.next_ordinal, 0))
        logger.info("removed every relay log file of '%s': %s", self.index.base_name, removed)
        return removed

    # -- writer hand-off ---------------------------------------------------------------------------

    def _attach_writer(self) -> ActiveTail | None:
        with self._lock:
            if self._state is not RelayLogState.OPEN:
                raise RuntimeError("relay log is not open")
            if self._writer_attached:
                raise RuntimeError("relay log already has an open writer")
            self._writer_attached = True
            self._sealed = None
            tail = self._tail
        try:
            remove_seal(self.seal_path)  # before the writer changes anything
        except BaseException:
            self._detach_writer(tail)
            raise
        return tail

    def _detach_writer(self, tail: ActiveTail | None) -> None:
        with self._lock:
            self._writer_attached = False
            self._tail = tail

    def _size(self, name: str) -> int:
        try:
            return self.index.path(name).stat().st_size
        except FileNotFoundError:
            return 0


def _policy(value: bool | Callable[[], bool]) -> Callable[[], bool]:
    if callable(value):
        return value
    return lambda: value
