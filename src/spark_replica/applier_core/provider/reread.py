"""Reading a transaction's events again from the relay log (DES.RS.0020-0022, FT.2, STREAM.2).

A transaction larger than the cache threshold keeps only *segments*: runs of its consecutive
events within one relay log file, with the Format_description they are decoded under. A new
segment starts at every file change and after every event the provider leaves out (Rotate,
Format_description, ignorable events: WL10500.RD.2). ``SegmentReader`` walks them with its own
file descriptors and a small read-ahead buffer, so any number of transactions re-read the same
files at once, without locks (DES.RS.0040). The transaction holds a purge subscription on every
file of its segments, so none of them disappears meanwhile.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from spark_replica.applier_core.binlog.constants import HEADER_LEN
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import FormatDescription
from spark_replica.applier_core.binlog.relaylog import RelayEvent, RelayLog
from spark_replica.applier_core.binlog.relaylog.framing import (
    check_length,
    event_length,
    pread_exact,
)

_CHUNK = 1 << 16


@dataclass(slots=True)
class Segment:
    """Events of one transaction at ``[start, end)`` of ``file``, one after the other."""

    file: str
    fde: FormatDescription | None
    start: int
    end: int


class SegmentReader:
    """The events of ``segments`` in order, read from the relay log. Owned by one thread.

    ``segments`` must not change while it is read (pass a copy of a growing list).
    """

    def __init__(self, relay_log: RelayLog, segments: list[Segment]) -> None:
        self._relay_log = relay_log
        self._segments = segments
        self._index = 0
        self._offset = segments[0].start if segments else 0
        self._fds: dict[str, int] = {}
        self._buffer = b""
        self._buffer_file = ""
        self._buffer_start = 0

    def __repr__(self) -> str:
        return f"<SegmentReader segment {self._index}/{len(self._segments)} at {self._offset}>"

    def next(self) -> tuple[RelayEvent, FormatDescription | None] | None:
        """The next event and its Format_description; None after the last segment.

        Raises:
            BinlogError: a file is missing or unreadable, or does not hold whole events where
                the segments say (located by file and position).
        """
        while self._index < len(self._segments):
            segment = self._segments[self._index]
            start = self._offset
            if start >= segment.end:
                self._index += 1
                if self._index < len(self._segments):
                    self._offset = self._segments[self._index].start
                continue
            name = segment.file
            if segment.end - start < HEADER_LEN:
                raise BinlogError("relay log segment ends inside an event header",
                                  file=name, position=start)  # fmt: skip
            length = event_length(self._read(name, start, HEADER_LEN, segment.end))
            check_length(length, file=name, position=start)
            if start + length > segment.end:
                raise BinlogError(f"event length {length} runs past the transaction's events "
                                  f"at {segment.end}", file=name, position=start)  # fmt: skip
            data = self._read(name, start, length, segment.end)
            self._offset = start + length
            return RelayEvent(name, start, start + length, data), segment.fde
        return None

    def close(self) -> None:
        """Close the files (idempotent)."""
        fds, self._fds = self._fds, {}
        for fd in fds.values():
            os.close(fd)
        self._buffer = b""

    def _read(self, name: str, offset: int, size: int, limit: int) -> bytes:
        relative = offset - self._buffer_start
        if name == self._buffer_file and 0 <= relative and relative + size <= len(self._buffer):
            return self._buffer[relative : relative + size]
        try:
            data = pread_exact(self._fd(name), min(max(size, _CHUNK), limit - offset), offset)
        except OSError as exc:
            raise BinlogError(f"cannot read the relay log file: {exc}", file=name,
                              position=offset) from exc  # fmt: skip
        if len(data) < size:
            raise BinlogError(f"relay log file ends at {offset + len(data)}, before the "
                              f"transaction's events end", file=name, position=offset)  # fmt: skip
        self._buffer, self._buffer_file, self._buffer_start = data, name, offset
        return data[:size]

    def _fd(self, name: str) -> int:
        fd = self._fds.get(name)
        if fd is None:
            try:
                fd = os.open(self._relay_log.path(name), os.O_RDONLY)
            except OSError as exc:
                raise BinlogError(f"cannot open the relay log file: {exc}", file=name) from exc
            self._fds[name] = fd
        return fd
