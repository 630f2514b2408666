"""Reading a relay log while it is being written (WL#5721 READ.1/END.1; DES.RS.0040).

A reader takes the published end position under its lock, releases the lock, and then reads
the file up to that position with its own file descriptor: no lock is held during I/O, and
any number of readers work at once, at different positions. A file whose ordinal is below the
published end's is complete and is read to its size; then the reader moves to the next listed
file. Bytes past the published end are never read, so a reader never returns a partially
written event, and data it has buffered never changes.

Each reader holds a ``Subscription`` on the file it is in, so a purge cannot delete it.
"""

from __future__ import annotations

import enum
import os
import time
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import NamedTuple

from spark_replica.applier_core.binlog.constants import HEADER_LEN, MAGIC
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.relaylog.framing import (
    LENGTH_OFFSET,
    U32,
    check_length,
    check_magic,
    event_length,
    pread_exact,
)
from spark_replica.applier_core.binlog.relaylog.index import RelayLogFile
from spark_replica.applier_core.binlog.relaylog.position import LogPosition, RelayCoordinate
from spark_replica.applier_core.binlog.relaylog.prefetch import Prefetcher
from spark_replica.applier_core.binlog.relaylog.purge import Subscription
from spark_replica.applier_core.binlog.relaylog.relay_log import RelayLog

_CHUNK = 1 << 18
_new_event = tuple.__new__  # RelayEvent's own __new__ is a Python function: too slow per event


class RelayEvent(NamedTuple):
    """One whole event and where it is: ``data`` spans ``[start, end)`` of ``file``."""

    file: str
    start: int
    end: int
    data: bytes


class ReaderState(enum.Enum):
    OPEN = "open"
    FAILED = "failed"
    """A read raised ``BinlogError``; every later read raises it again."""
    CLOSED = "closed"


class RelayLogReader:
    """Yields the whole events of a relay log from a start position. Owned by one thread.

    Args:
        relay_log: an open ``RelayLog``.
        start: file name and offset to start at; offset 0 means the first event (offset 4).
            None starts at the first listed file, or waits for the first file to be created.
        on_file_end: called with a file's name when the reader has read it to its end and
            moves on to the next file (the applier can then ``mark_applied`` it).
        prefetcher: a started ``Prefetcher`` of the relay log, asked for the bytes before the
            file is read (it reads ahead of this reader in its own thread).

    Raises:
        BinlogError: ``start`` names a file that is not listed, is missing, or has a bad magic
            number, or was purged.
    """

    def __init__(
        self,
        relay_log: RelayLog,
        start: tuple[str, int] | None = None,
        *,
        on_file_end: Callable[[str], None] | None = None,
        prefetcher: Prefetcher | None = None,
    ) -> None:
        self._relay_log = relay_log
        self._on_file_end = on_file_end
        self._prefetcher = prefetcher
        self._state = ReaderState.OPEN
        self._error: BinlogError | None = None
        self._entry: RelayLogFile | None = None
        self._fd: int | None = None
        self._subscription: Subscription | None = None
        self._offset = 0
        self._buffer = b""
        self._buffer_start = 0
        self._limit = 0  # the current file is readable up to here
        self._limit_active = False
        self._wait_from = relay_log.end.get()
        if start is not None:
            name, offset = start
            entry = relay_log.index.find(name)
            if entry is None:
                raise BinlogError("relay log file is not listed in the index", file=name)
            if offset < 0 or 0 < offset < len(MAGIC):
                raise BinlogError(f"invalid start offset {offset}", file=name, position=offset)
            self._enter(entry, offset or len(MAGIC))

    def __repr__(self) -> str:
        where = f" {self._entry.name}:{self._offset}" if self._entry else ""
        return f"<RelayLogReader{where} {self._state.value}>"

    @property
    def state(self) -> ReaderState:
        return self._state

    @property
    def position(self) -> RelayCoordinate | None:
        """Where the next event starts; None before the first file is entered."""
        return RelayCoordinate(self._entry.name, self._offset) if self._entry else None

    # -- reading -------------------------------------------------------------------------------

    def poll(self) -> RelayEvent | None:
        """The next event if it is already published, else None (never waits).

        Raises:
            BinlogError: a corrupt event or file; located by file and position.
        """
        if self._state is ReaderState.OPEN and self._offset < self._limit:
            # The hot path: the next event lies whole in the buffer.
            start = self._offset
            buffer = self._buffer
            at = start - self._buffer_start
            if 0 <= at and at + HEADER_LEN <= len(buffer):
                length = U32.unpack_from(buffer, at + LENGTH_OFFSET)[0]
                if length >= HEADER_LEN and at + length <= len(buffer):
                    self._offset = end = start + length
                    assert self._entry is not None
                    data = buffer[at : at + length]
                    return _new_event(RelayEvent, (self._entry.name, start, end, data))
        if self._state is ReaderState.CLOSED:
            raise RuntimeError("relay log reader is closed")
        if self._error is not None:
            raise self._error
        try:
            return self._step()
        except BinlogError as error:
            self._error = error
            self._state = ReaderState.FAILED
            raise

    def poll_batch(self, most: int) -> list[RelayEvent]:
        """Up to ``most`` next events, as ``poll`` would return them one by one, taken at
        once from what this reader has buffered (all of one file).

        Returns:
            An empty list when the next event is not whole in the buffer: ``poll`` then
            reads it (or the next file, or finds that nothing more is published). Never waits
            and never raises.
        """
        events: list[RelayEvent] = []
        entry = self._entry
        if self._state is not ReaderState.OPEN or entry is None:
            return events
        offset, limit = self._offset, self._limit
        buffer = self._buffer
        size, at = len(buffer), offset - self._buffer_start
        if at < 0:
            return events
        name, unpack, append = entry.name, U32.unpack_from, events.append
        while offset < limit and at + HEADER_LEN <= size and len(events) < most:
            length = unpack(buffer, at + LENGTH_OFFSET)[0]
            if length < HEADER_LEN or at + length > size:
                break  # corrupt, or cut by the buffer's end: poll() reads or reports it
            end = offset + length
            append(_new_event(RelayEvent, (name, offset, end, buffer[at : at + length])))
            offset, at = end, at + length
        self._offset = offset
        return events

    def next_event(self, timeout: float | None) -> RelayEvent | None:
        """The next event, waiting up to ``timeout`` seconds (None: no limit) for one.

        Returns:
            None on timeout, or at once when the relay log is closed.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while (event := self.poll()) is None:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return None
            if not self._relay_log.end.wait_beyond(self._wait_from, remaining):
                return self.poll()
        return event

    def __iter__(self) -> Iterator[RelayEvent]:
        """Every event published so far, from the current position; does not wait."""
        while (event := self.poll()) is not None:
            yield event

    def _step(self) -> RelayEvent | None:
        entry = self._entry
        if entry is not None and self._offset < self._limit:  # known readable: no lock taken
            return self._read_event(entry.name, self._limit, self._limit_active)
        index = self._relay_log.index
        while True:
            end = self._relay_log.end.get()
            if self._entry is None:
                entries = index.entries()
                if not entries:
                    self._wait_from = end
                    return None
                self._enter(entries[0], len(MAGIC))
                continue
            entry = self._entry
            if entry.ordinal > end.ordinal:
                self._wait_from = LogPosition(entry.ordinal, self._offset)
                return None
            active = entry.ordinal == end.ordinal
            assert self._fd is not None
            limit = end.offset if active else os.fstat(self._fd).st_size
            if self._offset < limit:
                # The published end only grows and a complete file does not change: reads
                # up to ``limit`` need not look at them again.
                self._limit, self._limit_active = limit, active
                return self._read_event(entry.name, limit, active)
            if active:
                self._wait_from = LogPosition(entry.ordinal, self._offset)
                return None
            if self._offset > limit:
                raise BinlogError(f"position is past the end of the file ({limit} bytes)",
                                  file=entry.name, position=self._offset)  # fmt: skip
            following = next((e for e in index.entries() if e.ordinal > entry.ordinal), None)
            if following is None:
                raise BinlogError("relay log file was read to its end but no next file is "
                                  "listed", file=entry.name, position=self._offset)  # fmt: skip
            self._enter(following, len(MAGIC))
            if self._on_file_end is not None:
                self._on_file_end(entry.name)

    def _read_event(self, name: str, limit: int, active: bool) -> RelayEvent:
        start = self._offset
        bound = "the written relay log" if active else "the file"
        if limit - start < HEADER_LEN:
            raise BinlogError(f"corrupt event: only {limit - start} bytes before the end of "
                              f"{bound} at {limit}, less than an event header",
                              file=name, position=start)  # fmt: skip
        length = event_length(self._read(start, HEADER_LEN, limit))
        check_length(length, file=name, position=start)
        if start + length > limit:
            raise BinlogError(f"corrupt event: declared length {length} runs past the end of "
                              f"{bound} at {limit}", file=name, position=start)  # fmt: skip
        data = self._read(start, length, limit)
        self._offset = start + length
        return RelayEvent(name, start, start + length, data)

    def _read(self, offset: int, size: int, limit: int) -> bytes:
        """``size`` bytes at ``offset`` through a buffer that never reaches past ``limit``."""
        relative = offset - self._buffer_start
        if 0 <= relative and relative + size <= len(self._buffer):
            return self._buffer[relative : relative + size]
        assert self._fd is not None and self._entry is not None
        wanted = min(max(size, _CHUNK), limit - offset)
        data = None
        if self._prefetcher is not None:
            data = self._prefetcher.read(self._entry, offset, size, wanted)
        if data is None:
            data = pread_exact(self._fd, wanted, offset)
        if len(data) < size:
            raise BinlogError(f"relay log file ends at {offset + len(data)}, before the "
                              f"published end {limit}", file=self._entry.name,
                              position=offset)  # fmt: skip
        self._buffer, self._buffer_start = data, offset
        return data[:size]

    # -- files -----------------------------------------------------------------------------------

    def _enter(self, entry: RelayLogFile, offset: int) -> None:
        """Subscribe to and open ``entry``, then let go of the current file."""
        subscription = self._relay_log.subscribe(entry.name)
        try:
            fd = os.open(self._relay_log.path(entry.name), os.O_RDONLY)
        except FileNotFoundError:
            subscription.release()
            raise BinlogError("relay log file is missing", file=entry.name) from None
        try:
            check_magic(pread_exact(fd, len(MAGIC), 0), file=entry.name)
        except BaseException:
            os.close(fd)
            subscription.release()
            raise
        self._leave()
        self._entry, self._fd, self._subscription = entry, fd, subscription
        self._offset = offset
        self._limit, self._limit_active = 0, False
        self._buffer, self._buffer_start = b"", 0

    def _leave(self) -> None:
        fd, self._fd = self._fd, None
        subscription, self._subscription = self._subscription, None
        if fd is not None:
            os.close(fd)
        if subscription is not None:
            subscription.release()

    def close(self) -> None:
        """Close the file and drop the subscription. Idempotent."""
        self._leave()
        self._state = ReaderState.CLOSED

    def __enter__(self) -> RelayLogReader:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
