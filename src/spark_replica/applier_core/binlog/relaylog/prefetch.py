"""Reading relay log files ahead of their reader (DES.PF.0010, DES.RS.0100, WL10500.PF.1).

A ``Prefetcher`` thread reads the files listed in the index, one after the other, in batches
of ``batch_size`` bytes, and keeps at most ``max_bytes`` of them until the reader takes them:
the reader's next bytes are in memory when it asks, and the disk is read while the applier
works (``os.pread`` releases the GIL). It follows the reader: it starts in the file the reader
first asks for, and jumps ahead when the reader gets ahead of it.

Only bytes that never change are read: complete files (listed before the file the published
end is in) and, with ``active_files``, the active file up to the published end. A file that
is gone (purged, reset) is skipped. Prefetching never fails the reader: on any miss or error
``read`` returns None and the reader reads the file itself.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import deque
from dataclasses import dataclass

from spark_replica.applier_core.binlog.relaylog.index import RelayLogFile
from spark_replica.applier_core.binlog.relaylog.position import LogPosition
from spark_replica.applier_core.binlog.relaylog.relay_log import RelayLog

logger = logging.getLogger(__name__)

BATCH_SIZE = 16 << 20
"""Bytes read at once (MySQL's prefetcher reads about 16 MB)."""
MAX_BYTES = 64 << 20
"""Bytes held at most, read and not yet taken by the reader (one batch more while the
reader waits for bytes the held ones do not have)."""
_END_OF_FILE = 1 << 63  # past any offset: waiting beyond it waits for the next file
WAIT_SLICE = 0.1
"""Seconds the thread waits for the relay log to grow before it looks for a stop."""


@dataclass(frozen=True, slots=True)
class _Batch:
    ordinal: int
    start: int
    data: bytes

    @property
    def end(self) -> int:
        return self.start + len(self.data)


@dataclass(slots=True)
class PrefetchStats:
    batches: int = 0
    bytes_read: int = 0
    hits: int = 0
    """``read`` calls answered from memory."""
    misses: int = 0


class Prefetcher:
    """Reads ahead of one ``RelayLogReader``; ``start`` it, ``stop`` it (idempotent, joins)."""

    def __init__(
        self,
        relay_log: RelayLog,
        *,
        name: str,
        active_files: bool = False,
        batch_size: int = BATCH_SIZE,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        if not 0 < batch_size <= max_bytes:
            raise ValueError("batch_size must be positive and at most max_bytes")
        self._relay_log = relay_log
        self._active_files = active_files
        self._batch_size = batch_size
        self._max_bytes = max_bytes
        # _changed (and its lock) guards everything below; the thread waits on it for room,
        # for the reader's first request and for a stop.
        self._changed = threading.Condition()
        self._batches: deque[_Batch] = deque()
        self._held = 0
        self._wanted: tuple[int, str, int] | None = None  # (ordinal, file, offset) read last
        self._refused: tuple[int, str, int] | None = None  # a position it cannot read
        self._alive = False  # while the thread runs
        self._reader_waits = False
        self._stopping = False
        self.stats = PrefetchStats()
        self._thread = threading.Thread(target=self._run, name=name)
        self._started = False

    def __repr__(self) -> str:
        return f"<Prefetcher {self._thread.name} held={self._held} {self.stats}>"

    def start(self) -> None:
        with self._changed:
            if self._started or self._stopping:
                return
            self._started = self._alive = True
        self._thread.start()

    def stop(self) -> None:
        with self._changed:
            self._stopping = True
            self._batches.clear()
            self._held = 0
            self._changed.notify_all()
            started = self._started
        if started and self._thread is not threading.current_thread():
            self._thread.join()

    # -- the reader's side -----------------------------------------------------------------

    def read(self, entry: RelayLogFile, offset: int, size: int, at_most: int) -> bytes | None:
        """At least ``size`` and at most ``at_most`` bytes of ``entry`` from ``offset``, or
        None when the reader must read them itself (the active file without
        ``active_files``, a file gone, a stopped prefetcher). Bytes not read yet are waited
        for: the prefetcher reads them next. Batches before ``offset`` are let go: the reader
        only moves forward."""
        ordinal = entry.ordinal
        wanted = (ordinal, entry.name, offset)
        with self._changed:
            self._wanted = wanted
            batches = self._batches
            freed = 0
            while batches and (
                batches[0].ordinal < ordinal
                or (batches[0].ordinal == ordinal and batches[0].end <= offset)
            ):
                freed += len(batches.popleft().data)
            self._held -= freed
            found = self._take(ordinal, offset, size, at_most)
            if found is None and self._serves(ordinal):
                while (
                    found is None and self._alive and not self._stopping and self._refused != wanted
                ):
                    self._reader_waits = True  # the thread reads one batch more when full
                    self._changed.notify_all()
                    self._changed.wait()
                    found = self._take(ordinal, offset, size, at_most)
                self._reader_waits = False
            if found is None:
                self.stats.misses += 1
            else:
                self.stats.hits += 1
            if freed or found is None:
                self._changed.notify_all()
            return found

    def _serves(self, ordinal: int) -> bool:
        """(lock held) Whether the thread will read that file (it is running)."""
        if not self._alive or self._stopping:
            return False
        end = self._relay_log.end.get()
        return ordinal < end.ordinal or (ordinal == end.ordinal and self._active_files)

    def _take(self, ordinal: int, offset: int, size: int, at_most: int) -> bytes | None:
        """(lock held) The bytes the batches at the head hold from ``offset``."""
        parts: list[bytes] = []
        position, limit = offset, offset + at_most
        for batch in self._batches:
            if batch.ordinal != ordinal or not batch.start <= position < batch.end:
                break
            parts.append(batch.data[position - batch.start : limit - batch.start])
            position = min(batch.end, limit)
            if position == limit:
                break
        if position - offset < size:
            return None
        return parts[0] if len(parts) == 1 else b"".join(parts)

    # -- the thread ------------------------------------------------------------------------

    def _run(self) -> None:
        fd: int | None = None
        entry: RelayLogFile | None = None
        offset = 0
        try:
            while True:
                with self._changed:
                    while not self._stopping and (
                        self._wanted is None
                        or self._wanted == self._refused
                        or (
                            self._held + self._batch_size > self._max_bytes
                            and not self._reader_waits
                        )
                    ):
                        self._changed.wait()
                    if self._stopping:
                        return
                    wanted = self._wanted
                    assert wanted is not None
                    first = self._batches[0] if self._batches else None
                    held_from = (first.ordinal, first.start) if first else None
                there = (wanted[0], wanted[2])
                if entry is None or not (
                    (held_from or (entry.ordinal, offset)) <= there <= (entry.ordinal, offset)
                ):
                    # Not where the reader reads (the start, or it went elsewhere): go there.
                    _close(fd)
                    fd = None
                    entry, offset = self._relay_log.index.find(wanted[1]), wanted[2]
                    with self._changed:  # what was read for another position is useless
                        self._batches.clear()
                        self._held = 0
                    if entry is None:
                        self._refuse(wanted)
                        continue
                if fd is None:
                    try:
                        fd = os.open(self._relay_log.path(entry.name), os.O_RDONLY)
                    except FileNotFoundError:  # purged or reset: the reader finds out
                        entry = None
                        self._refuse(wanted)
                        continue
                limit, complete = self._readable(entry, fd)
                if offset < limit:
                    data = os.pread(fd, min(self._batch_size, limit - offset), offset)
                    if not data:  # shorter than it was: the reader finds out
                        self._refuse(wanted)
                        continue
                    with self._changed:  # (a stop meanwhile ends the loop at its top)
                        if not self._stopping:
                            self._batches.append(_Batch(entry.ordinal, offset, data))
                            self._held += len(data)
                            self._reader_waits = False
                            self.stats.batches += 1
                            self.stats.bytes_read += len(data)
                            self._changed.notify_all()
                    offset += len(data)
                elif complete:
                    following = next((e for e in self._relay_log.index.entries()
                                      if e.ordinal > entry.ordinal), None)  # fmt: skip
                    if following is None:  # listed in a moment
                        with self._changed:
                            self._changed.wait(WAIT_SLICE)
                        continue
                    _close(fd)
                    fd = None
                    entry, offset = following, 0
                elif self._active_files:
                    self._wait_for_growth(LogPosition(entry.ordinal, offset))
                else:  # the active file: not read until it is complete
                    self._wait_for_growth(LogPosition(entry.ordinal, _END_OF_FILE))
        except OSError as exc:  # the reader reads by itself from now on
            logger.warning("relay log prefetcher %s stopped: %s", self._thread.name, exc)
        finally:
            _close(fd)
            with self._changed:
                self._alive = False
                self._changed.notify_all()

    def _refuse(self, wanted: tuple[int, str, int]) -> None:
        """Nothing can be read where the reader reads: it reads by itself, until it moves."""
        with self._changed:
            self._refused = wanted
            self._changed.notify_all()

    def _readable(self, entry: RelayLogFile, fd: int) -> tuple[int, bool]:
        """How far ``entry`` may be read now, and whether it is complete."""
        end = self._relay_log.end.get()
        if entry.ordinal < end.ordinal:
            return os.fstat(fd).st_size, True
        if entry.ordinal == end.ordinal and self._active_files:
            return end.offset, False
        return 0, False

    def _wait_for_growth(self, position: LogPosition) -> None:
        self._relay_log.end.wait_beyond(position, WAIT_SLICE)


def _close(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)
    return None
