"""The relay log file set of one channel and its index file.

Layout, after MySQL's (https://dev.mysql.com/doc/refman/8.4/en/replica-logs-relaylog.html)
without the host name prefix:

* directory ``<datadir>/relay/<channel>/`` (the default channel, whose name is empty, uses
  ``<datadir>/relay/`` itself; channel names cannot contain ``.`` or ``/``, so the default
  channel's files never clash with another channel's directory);
* files ``<base>.000001``, ``<base>.000002``, ... with ``<base>`` = ``relay-bin`` for the default
  channel and ``relay-bin-<channel>`` otherwise;
* index ``<base>.index``: one file name per line, in log order, relative to the directory.

The index may also list files a DBA copied into the directory (any name ending in
``.NNNNNN``, e.g. ``mysql-bin.000042``); they keep their own name.

Crash safety: every index update writes ``<base>.index.tmp``, fsyncs it, renames it over the
index and fsyncs the directory. ``load`` reconciles the directory with the index:

* a leftover ``<base>.index.tmp`` is an update whose rename never happened: the index is
  authoritative and the temp file is removed;
* a listed file that is missing is an error naming it;
* an unlisted ``<base>.NNNNNN`` numbered after the last listed one is **removed**: a new file is
  listed before any event is appended to it, so such a file holds at most a header (rotation
  interrupted between creating the file and listing it). An unlisted one numbered before the
  first listed one is removed too: a purge lists the remaining files first, then deletes, so
  it is a purge interrupted before deleting. Unlisted ones in between are kept and logged;
* no index but ``<base>.NNNNNN`` files present is an error (the index was lost, not a crash:
  the index is always written, empty, before the first file is created).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from spark_replica.applier_core.binlog.errors import BinlogError

logger = logging.getLogger(__name__)

BASE_NAME = "relay-bin"
RELAY_DIRECTORY = "relay"
INDEX_SUFFIX = ".index"
TEMP_SUFFIX = ".tmp"
FIRST_NUMBER = 1
_NUMBERED = re.compile(r"^(?P<stem>.+)\.(?P<number>[0-9]{6,})$")


def relay_log_base_name(channel: str) -> str:
    """``relay-bin`` for the default channel (``""``), ``relay-bin-<channel>`` otherwise.

    >>> relay_log_base_name(""), relay_log_base_name("c1")
    ('relay-bin', 'relay-bin-c1')
    """
    _check_channel(channel)
    return f"{BASE_NAME}-{channel}" if channel else BASE_NAME


def relay_log_directory(datadir: str | os.PathLike[str], channel: str) -> Path:
    """``<datadir>/relay/<channel>``; the default channel uses ``<datadir>/relay``."""
    _check_channel(channel)
    return Path(datadir, RELAY_DIRECTORY, channel) if channel else Path(datadir, RELAY_DIRECTORY)


def _check_channel(channel: str) -> None:
    if any(ch in channel for ch in "/\\.\x00\n"):
        raise ValueError(f"channel name {channel!r} cannot name a relay log")


def split_numbered(name: str) -> tuple[str, int] | None:
    """``(stem, number)`` of a ``<stem>.NNNNNN`` name, else None.

    >>> split_numbered("relay-bin.000012"), split_numbered("relay-bin.index")
    (('relay-bin', 12), None)
    """
    match = _NUMBERED.match(name)
    return (match["stem"], int(match["number"])) if match else None


def numbered_name(base: str, number: int) -> str:
    return f"{base}.{number:06d}"


@dataclass(frozen=True, slots=True)
class RelayLogFile:
    """A file listed in the index, with the ordinal that orders positions (``LogPosition``)."""

    ordinal: int
    name: str


@dataclass(frozen=True, slots=True)
class Reconciliation:
    """What ``RelayLogIndex.load`` found and did."""

    created_index: bool = False
    removed_temp: bool = False
    removed_unlisted: tuple[str, ...] = ()
    kept_unlisted: tuple[str, ...] = ()


class RelayLogIndex:
    """The ordered list of a channel's relay log files, persisted in ``<base>.index``.

    Thread-safe. Lookups take ``_lock`` briefly; updates are serialised by ``_update_lock``,
    held while the index file is rewritten (and, for a purge, while files are deleted).
    """

    def __init__(self, directory: Path, base_name: str) -> None:
        self.directory = directory
        self.base_name = base_name
        self.index_path = directory / f"{base_name}{INDEX_SUFFIX}"
        self.temp_path = directory / f"{base_name}{INDEX_SUFFIX}{TEMP_SUFFIX}"
        # Lock order: _update_lock, then (briefly) _lock. _update_lock serialises the index
        # file and directory changes and is held across their I/O and logging, like MySQL's
        # LOCK_index; readers never take it. _lock guards _entries and _next_ordinal, which are
        # only replaced (never mutated in place) while _update_lock is held; nothing does I/O
        # while holding _lock.
        self._update_lock = threading.Lock()
        self._lock = threading.Lock()
        self._entries: tuple[RelayLogFile, ...] = ()
        self._next_ordinal = 1

    def __repr__(self) -> str:
        return f"<RelayLogIndex {self.index_path} files={len(self.entries())}>"

    # -- lookups -----------------------------------------------------------------------------

    def entries(self) -> tuple[RelayLogFile, ...]:
        with self._lock:
            return self._entries

    def names(self) -> list[str]:
        return [entry.name for entry in self.entries()]

    def find(self, name: str) -> RelayLogFile | None:
        return next((entry for entry in self.entries() if entry.name == name), None)

    def get(self, ordinal: int) -> RelayLogFile | None:
        return next((entry for entry in self.entries() if entry.ordinal == ordinal), None)

    @property
    def next_ordinal(self) -> int:
        with self._lock:
            return self._next_ordinal

    def path(self, name: str) -> Path:
        return self.directory / name

    def next_name(self) -> str:
        """The name the next relay log file gets: one past the highest ``<base>`` number listed."""
        numbers = self._own_numbers(self.names()).values()
        return numbered_name(self.base_name, max(numbers, default=FIRST_NUMBER - 1) + 1)

    # -- loading -----------------------------------------------------------------------------

    def load(self) -> Reconciliation:
        """Read the index (creating the directory and an empty index if there is none) and
        reconcile it with the directory (see the module docstring).

        Raises:
            BinlogError: the index is malformed, lists a missing file, or is missing while
                relay log files exist.
            OSError: the directory or index cannot be read or written.
        """
        with self._update_lock:
            self.directory.mkdir(parents=True, exist_ok=True)
            removed_temp = self.temp_path.exists()
            if removed_temp:
                self.temp_path.unlink()
                logger.warning("removed '%s', left by an interrupted index update", self.temp_path)
            on_disk = self._own_files()
            created = not self.index_path.exists()
            if created:
                if on_disk:
                    raise BinlogError(f"relay log index is missing but {len(on_disk)} relay log "
                                      f"files exist: {sorted(on_disk)}",
                                      file=self.index_path.name)  # fmt: skip
                self._write([])
                names: list[str] = []
            else:
                names = self._read()
            for name in names:
                if not self.path(name).is_file():
                    raise BinlogError("relay log file listed in the index is missing", file=name)
            removed, kept = self._reconcile(names, on_disk)
            with self._lock:
                first = self._next_ordinal
                self._entries = tuple(RelayLogFile(first + i, n) for i, n in enumerate(names))
                self._next_ordinal = first + len(names)
        return Reconciliation(created, removed_temp, removed, kept)

    def listed_names(self) -> list[str]:
        """The names the index file lists, read without reconciling or changing anything."""
        if not self.index_path.exists():
            return []
        return self._read()

    def _read(self) -> list[str]:
        text = self.index_path.read_bytes().decode("utf-8", errors="surrogateescape")
        names: list[str] = []
        for line in text.splitlines():
            name = self._normalise(line.rstrip("\r"))
            if not name:
                continue
            if split_numbered(name) is None or "/" in name:
                raise BinlogError(f"relay log index lists {line!r}: not a '<name>.NNNNNN' "
                                  f"file of this directory", file=self.index_path.name)  # fmt: skip
            if name in names:
                raise BinlogError(f"relay log index lists '{name}' twice",
                                  file=self.index_path.name)  # fmt: skip
            names.append(name)
        return names

    def _normalise(self, line: str) -> str:
        if line.startswith("./"):
            return line[2:]
        if os.path.isabs(line) and Path(line).parent == self.directory:
            return Path(line).name
        return line

    def _reconcile(
        self, names: Sequence[str], on_disk: dict[str, int]
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        listed = self._own_numbers(names).values()
        low, high = min(listed, default=None), max(listed, default=None)
        removed: list[str] = []
        kept: list[str] = []
        for name, number in sorted(on_disk.items(), key=lambda item: item[1]):
            if name in names:
                continue
            if low is None or high is None or number > high or number < low:
                self.path(name).unlink()
                removed.append(name)
            else:
                kept.append(name)
        if removed:
            logger.warning("removed relay log files not listed in '%s': %s",
                           self.index_path.name, removed)  # fmt: skip
        if kept:
            logger.warning("kept relay log files not listed in '%s' (between listed files): %s",
                           self.index_path.name, kept)  # fmt: skip
        return tuple(removed), tuple(kept)

    def _own_numbers(self, names: Iterable[str]) -> dict[str, int]:
        """The ``<base>.NNNNNN`` names among ``names``, with their numbers."""
        return {
            name: parts[1]
            for name in names
            if (parts := split_numbered(name)) is not None and parts[0] == self.base_name
        }

    def _own_files(self) -> dict[str, int]:
        """The ``<base>.NNNNNN`` files in the directory."""
        return {
            name: number
            for name, number in self._own_numbers(os.listdir(self.directory)).items()
            if self.path(name).is_file()
        }

    # -- updates -----------------------------------------------------------------------------

    def append(self, name: str) -> RelayLogFile:
        """List ``name`` (an existing file of the directory) last; durable when this returns."""
        if split_numbered(name) is None or "/" in name:
            raise ValueError(f"not a relay log file name: {name!r}")
        with self._update_lock:
            current = self.entries()
            if any(entry.name == name for entry in current):
                raise ValueError(f"relay log file '{name}' is already listed")
            self._replace([*(entry.name for entry in current), name])
            with self._lock:
                entry = RelayLogFile(self._next_ordinal, name)
                self._entries = (*self._entries, entry)
                self._next_ordinal += 1
            fsync_directory(self.directory)
        return entry

    def remove_prefix(
        self, choose: Callable[[tuple[RelayLogFile, ...]], int]
    ) -> tuple[RelayLogFile, ...]:
        """Unlist the first ``choose(entries)`` files, durably, then delete them.

        ``choose`` runs with the update lock held, so the list it sees is the one changed.
        A file that cannot be deleted is logged and left behind (unlisted); the next ``load``
        removes it.
        """
        with self._update_lock:
            return self._remove_prefix_locked(choose)

    def _remove_prefix_locked(
        self, choose: Callable[[tuple[RelayLogFile, ...]], int]
    ) -> tuple[RelayLogFile, ...]:
        current = self.entries()
        count = choose(current)
        if count <= 0:
            return ()
        removed, rest = current[:count], current[count:]
        self._replace([entry.name for entry in rest])
        with self._lock:
            self._entries = rest
        fsync_directory(self.directory)
        self._delete([entry.name for entry in removed])
        return removed

    def clear(self) -> tuple[RelayLogFile, ...]:
        """Unlist every file (the index is rewritten empty first), then delete them and any
        unlisted ``<base>.NNNNNN`` file."""
        with self._update_lock:
            removed = self._remove_prefix_locked(len)
            self._delete(list(self._own_files()))
        return removed

    def discard(self) -> list[str]:
        """Rewrite the index empty, then delete every file it listed and every
        ``<base>.NNNNNN`` file, without loading it first: RESET REPLICA of a relay log that
        cannot be opened (a listed file is missing, the index is malformed). Returns the
        names deleted.

        Raises:
            OSError: the index cannot be rewritten (nothing is deleted).
        """
        with self._update_lock:
            try:
                listed = self._read() if self.index_path.exists() else []
            except BinlogError:
                listed = []
            present = [name for name in dict.fromkeys([*listed, *self._own_files()])
                       if self.path(name).is_file()]  # fmt: skip
            self._write([])
            with self._lock:
                self._entries = ()
            self._delete(present)
        return present

    def _delete(self, names: Sequence[str]) -> None:
        for name in names:
            try:
                self.path(name).unlink()
            except FileNotFoundError:
                logger.warning("relay log file '%s' was already gone", name)
            except OSError:
                logger.error("could not delete relay log file '%s'", name, exc_info=True)

    def _write(self, names: Sequence[str]) -> None:
        self._replace(names)
        fsync_directory(self.directory)

    def _replace(self, names: Sequence[str]) -> None:
        """Write the temp file, fsync it and rename it over the index (the commit point).

        The caller updates the in-memory list right after, then fsyncs the directory: if that
        fsync fails, memory still matches the index file."""
        data = "".join(f"{name}\n" for name in names).encode("utf-8", errors="surrogateescape")
        replace_file(self.temp_path, self.index_path, data)


def replace_file(temp: Path, target: Path, data: bytes) -> None:
    """Write ``data`` to ``temp``, fsync it and rename it over ``target`` (fsync the
    directory after, to make the rename durable)."""
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temp, target)


def fsync_directory(directory: Path) -> None:
    """Make a rename or a new file in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
