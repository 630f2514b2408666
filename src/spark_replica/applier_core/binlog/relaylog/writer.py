"""The writer of a relay log: appends whole events, rotates files, publishes the end.

One thread owns a ``RelayLogWriter`` (the channel's receiver thread); it is not thread-safe.
It never encodes events: the caller supplies every byte, including each new file's header
events (Format_description, Previous_gtids) through ``make_header()`` and the ROTATE event
that closes a file through ``make_rotate(next_name)``.

Every publication also records the file's size in ``RelayLog.space`` (Relay_Log_Space).

Publication (WL5721.WRITE.1/2): bytes are written and flushed to the file *before* the end
position moves past them, so a reader never sees a partially written event. Rotation
(WL5721.ROT.1): the ROTATE event is appended to the old file and published, the new file is
created with its header and fsynced, the index lists it (durably), and only then is the end
moved into the new file.
"""

from __future__ import annotations

import enum
import logging
import os
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import BinaryIO

from spark_replica.applier_core.binlog.constants import HEADER_LEN, MAGIC, EventType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.relaylog.framing import (
    check_whole_events,
    event_length,
    event_type,
)
from spark_replica.applier_core.binlog.relaylog.index import RelayLogFile, split_numbered
from spark_replica.applier_core.binlog.relaylog.position import LogPosition, RelayCoordinate
from spark_replica.applier_core.binlog.relaylog.relay_log import ActiveTail, RelayLog

logger = logging.getLogger(__name__)

DEFAULT_MAX_SIZE = 1 << 30
"""What ``max_size=0`` means: max_relay_log_size=0 falls back to max_binlog_size (1 GiB)."""
_BUFFER_SIZE = 1 << 16


class WriterState(enum.Enum):
    CLOSED = "closed"
    OPEN = "open"
    BROKEN = "broken"
    """A write failed part-way; only ``close`` is allowed. The next ``open`` cuts the file back
    to the published end."""


_TRANSITIONS = {
    WriterState.CLOSED: {WriterState.OPEN},
    WriterState.OPEN: {WriterState.CLOSED, WriterState.BROKEN},
    WriterState.BROKEN: {WriterState.CLOSED},
}


class RelayLogWriter:
    """Appends events to a channel's relay log.

    Args:
        relay_log: an open ``RelayLog``; it accepts one writer at a time.
        make_header: returns the events that start every new file, after the magic number
            (they land at offset 4). When ``append_many`` rotates, ``batch_written`` tells
            it how many of the batch's events went into the files before.
        make_rotate: returns the ROTATE event naming the next file. While it runs,
            ``position`` is where that event will be written.
        max_size: max_relay_log_size; a file is rotated once an append takes it past this
            size. 0 means ``DEFAULT_MAX_SIZE``.
    """

    def __init__(
        self,
        relay_log: RelayLog,
        *,
        make_header: Callable[[], bytes],
        make_rotate: Callable[[str], bytes],
        max_size: int = 0,
    ) -> None:
        if max_size < 0:
            raise ValueError(f"max_size must be >= 0, got {max_size}")
        self.relay_log = relay_log
        self.max_size = max_size or DEFAULT_MAX_SIZE
        self._make_header = make_header
        self._make_rotate = make_rotate
        self._state = WriterState.CLOSED
        self._file: BinaryIO | None = None
        self._entry: RelayLogFile | None = None
        self._written = 0
        self._published = 0
        self._header_end = 0  # where the current file's first event after its header starts
        self._written_type: int | None = None
        self._published_type: int | None = None
        self._batch_written = 0

    def __repr__(self) -> str:
        where = f" {self._entry.name}:{self._written}" if self._entry else ""
        return f"<RelayLogWriter{where} {self._state.value}>"

    @property
    def state(self) -> WriterState:
        return self._state

    @property
    def file_name(self) -> str:
        return self._entry.name if self._entry else ""

    @property
    def batch_written(self) -> int:
        """While ``append_many`` rotates: how many of its events are written; else 0."""
        return self._batch_written

    @property
    def holds_events(self) -> bool:
        """Whether the current file holds events after its header (a rotation now would
        leave a file with transactions in it, which a purge can then delete)."""
        return self._written > self._header_end

    @property
    def position(self) -> RelayCoordinate:
        """The current file and the offset the next event goes to."""
        return RelayCoordinate(self.file_name, self._written)

    def _set_state(self, new: WriterState) -> None:
        if new not in _TRANSITIONS[self._state]:
            logger.critical("relay log writer: illegal transition %s -> %s", self._state, new)
            raise RuntimeError(f"relay log writer cannot go from {self._state} to {new}")
        self._state = new

    # -- open / close --------------------------------------------------------------------------

    def open(self) -> None:
        """Start writing: create the first file, or continue the last one.

        The last file is continued (appended to) unless it ends with a ROTATE event (a
        rotation was interrupted) or is not named ``<base>.NNNNNN`` (a DBA-copied file); then a
        new file is started. A file holding only the magic number gets its header. Bytes after
        the published end (a write that failed part-way) are cut, with a warning.
        """
        if self._state is not WriterState.CLOSED:
            raise RuntimeError(f"relay log writer is {self._state.value}")
        tail = self.relay_log._attach_writer()
        try:
            self._open_tail(tail)
        except BaseException:
            self._close_file()
            self._entry = None
            self.relay_log._detach_writer(tail)
            raise
        self._set_state(WriterState.OPEN)
        if self._entry is not None:  # a continued file may have been cut or given a header
            self.relay_log.space.record(self._entry.name, self._written)

    def _open_tail(self, tail: ActiveTail | None) -> None:
        index = self.relay_log.index
        last = index.get(tail.ordinal) if tail else None
        entries = index.entries()
        if tail is None or last is None or not entries or entries[-1] != last:
            self._start_file(index.next_name())
            return
        path = index.path(last.name)
        size = path.stat().st_size
        if size < tail.end:
            raise BinlogError(f"relay log file is {size} bytes, shorter than its published end "
                              f"{tail.end}", file=last.name)  # fmt: skip
        if size > tail.end:
            os.truncate(path, tail.end)
            logger.warning("relay log file '%s': cut %d unpublished bytes at position %d",
                           last.name, size - tail.end, tail.end)  # fmt: skip
        parts = split_numbered(last.name)
        ours = parts is not None and parts[0] == index.base_name
        if not ours or (tail.end > len(MAGIC) and tail.last_type == EventType.ROTATE):
            self._start_file(index.next_name())
            return
        self._file = open(path, "ab", buffering=_BUFFER_SIZE)
        self._entry = last
        self._written = self._published = tail.end
        self._header_end = len(MAGIC)  # its header's length is not known: any event counts
        self._written_type = self._published_type = tail.last_type
        if tail.end <= len(MAGIC):
            header, header_type = self._header()
            self._write(header)
            self._written_type = header_type
            self._header_end = self._written
            self._sync()
            logger.warning("relay log file '%s' had no events; wrote its header", last.name)

    def close(self) -> None:
        """Flush, fsync and close the file (if the writer is not broken). Idempotent."""
        if self._state is WriterState.CLOSED:
            return
        try:
            if self._state is WriterState.OPEN:
                self.fsync()
        finally:
            self._close_file()
            tail = None
            if self._entry is not None:
                tail = ActiveTail(self._entry.ordinal, self._published, self._published_type)
            self.relay_log._detach_writer(tail)
            self._entry = None
            self._set_state(WriterState.CLOSED)

    def __enter__(self) -> RelayLogWriter:
        self.open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- writing -----------------------------------------------------------------------------

    def append(self, event: bytes, *, flush: bool = True) -> RelayCoordinate:
        """Write one whole event; with ``flush`` (the default) publish it at once.

        Rotates the file afterwards if it is now past ``max_size``.

        Returns:
            The file and offset where the event ends.

        Raises:
            BinlogError: ``event`` is not one whole event (its ``event_length`` field and its
                size disagree); nothing is written.
            OSError: the write failed; the writer is then BROKEN.
        """
        self._require_open()
        if len(event) < HEADER_LEN or event_length(event) != len(event):
            declared = event_length(event) if len(event) >= HEADER_LEN else None
            raise BinlogError(f"cannot append {len(event)} bytes as an event: event_length "
                              f"field is {declared}", file=self.file_name,
                              position=self._written)  # fmt: skip
        self._write(event)
        self._written_type = event_type(event)
        end = RelayCoordinate(self.file_name, self._written)
        if flush:
            self.flush()
        if self._written > self.max_size:
            self.rotate()
        return end

    def append_many(self, events: Sequence[bytes], *, flush: bool = True) -> RelayCoordinate:
        """``append`` for several whole events at once (one write per file): the file is
        rotated right after the event that takes it past ``max_size``, as ``append`` does.

        Raises:
            BinlogError: one of them is not a whole event; none is written.
            OSError: the write failed; the writer is then BROKEN.
        """
        self._require_open()
        for event in events:
            if len(event) < HEADER_LEN or event_length(event) != len(event):
                raise BinlogError(f"cannot append {len(event)} bytes as an event",
                                  file=self.file_name, position=self._written)  # fmt: skip
        first, size = 0, self._written
        try:
            for number, event in enumerate(events, 1):
                size += len(event)
                if size > self.max_size and number < len(events):
                    self._write_events(events[first:number])
                    self._batch_written = number
                    self.rotate()
                    first, size = number, self._written
            self._write_events(events[first:])
            end = RelayCoordinate(self.file_name, self._written)
            if flush:
                self.flush()
            if self._written > self.max_size:
                self._batch_written = len(events)
                self.rotate()
        finally:
            self._batch_written = 0
        return end

    def flush(self) -> None:
        """Hand buffered events to the OS and publish them to readers."""
        self._require_open()
        self._guarded(self._flush_and_publish)

    def fsync(self) -> None:
        """``flush``, then make the file durable."""
        self._require_open()
        self._guarded(self._sync)

    def rotate(self) -> str:
        """Close the current file with a ROTATE event and continue in a new one.

        Returns:
            The new file's name.
        """
        self._require_open()
        name = self.relay_log.index.next_name()
        header = self._header()
        rotate = self._make_rotate(name)
        rotate_type = check_whole_events(rotate, "rotate event")
        self._guarded(self._flush_and_publish)
        self._write(rotate)
        self._written_type = rotate_type
        self._guarded(self._sync)
        self._start_file(name, header)
        return name

    # -- internals -----------------------------------------------------------------------------

    def _require_open(self) -> None:
        if self._state is not WriterState.OPEN:
            raise RuntimeError(f"relay log writer is {self._state.value}")

    def _header(self) -> tuple[bytes, int | None]:
        """The caller's header events for a new file, checked, and the last one's type."""
        header = self._make_header()
        return header, check_whole_events(header, "file header")

    def _start_file(self, name: str, header: tuple[bytes, int | None] | None = None) -> None:
        """Create ``name`` with the magic number and header, list it, publish into it.

        Any failure leaves the writer BROKEN (when it was OPEN): the old file may already end
        with the ROTATE event naming ``name``.
        """
        index = self.relay_log.index
        path = index.path(name)
        new: BinaryIO | None = None
        listing = False
        try:
            header_bytes, header_type = header or self._header()
            new = open(path, "xb", buffering=_BUFFER_SIZE)
            new.write(MAGIC + header_bytes)
            new.flush()
            os.fsync(new.fileno())
            listing = True
            entry = index.append(name)
        except BaseException:
            if new is not None:
                try:
                    new.close()  # flushes what is buffered: fails again on a full disk
                except OSError:
                    pass
                finally:
                    if not listing:  # so that trying again can create it
                        path.unlink(missing_ok=True)
            # Once listing started the index may name the file: it stays, complete with its
            # header; if it ended up unlisted, the next RelayLogIndex.load removes it.
            if self._state is WriterState.OPEN:
                self._set_state(WriterState.BROKEN)
            raise
        self._close_file()
        self._file, self._entry = new, entry
        self._written = self._header_end = len(MAGIC) + len(header_bytes)
        self._written_type = header_type
        self._publish()

    def _write_events(self, events: Sequence[bytes]) -> None:
        if events:
            self._write(b"".join(events))
            self._written_type = event_type(events[-1])

    def _write(self, data: bytes) -> None:
        file = self._file
        assert file is not None
        self._guarded(lambda: file.write(data))
        self._written += len(data)

    def _flush_and_publish(self) -> None:
        assert self._file is not None
        self._file.flush()
        self._publish()

    def _sync(self) -> None:
        assert self._file is not None
        self._flush_and_publish()
        os.fsync(self._file.fileno())

    def _publish(self) -> None:
        assert self._entry is not None
        self.relay_log.end.publish(LogPosition(self._entry.ordinal, self._written))
        self._published = self._written
        self._published_type = self._written_type
        self.relay_log.space.record(self._entry.name, self._written)

    def _guarded(self, action: Callable[[], object]) -> None:
        try:
            action()
        except OSError:
            if self._state is WriterState.OPEN:
                self._set_state(WriterState.BROKEN)
            logger.error("relay log writer broke on '%s'", self.file_name, exc_info=True)
            raise

    def _close_file(self) -> None:
        file, self._file = self._file, None
        if file is None:
            return
        try:
            file.close()
        except OSError:
            logger.error("closing relay log file '%s' failed", self.file_name, exc_info=True)
