"""Binary log and relay log files: the magic number, then back-to-back events (§7.1).

``BinlogFileReader`` decodes a file's events, following its Format_description events and
Table_map events; ``read_raw_events`` only frames them; ``BinlogFileWriter`` writes a new file.
Every error is a ``BinlogError`` located with the file and the event's position.
"""

from __future__ import annotations

import dataclasses
import os
import struct
import zlib
from collections.abc import Iterator, Mapping
from itertools import islice
from typing import BinaryIO, NamedTuple

from spark_replica.applier_core.binlog.codecs.registry import (
    encode_event,
    encode_event_at,
    remember_table_map,
)
from spark_replica.applier_core.binlog.constants import (
    CHECKSUM_LEN,
    HEADER_LEN,
    MAGIC,
    ChecksumAlg,
    EventFlag,
)
from spark_replica.applier_core.binlog.constants import EventType as T
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import (
    Event,
    FormatDescription,
    PreviousGtids,
    make_header,
)
from spark_replica.applier_core.binlog.stream import StreamDecoder
from spark_replica.applier_core.gtid import GtidSet

_LENGTH = struct.Struct("<I")
_LENGTH_OFFSET = 9
_LOG_POS_OFFSET = 13
_TYPE_OFFSET = 4
_ENCRYPTED_MAGIC = b"\xfdbin"
_READ_BUFFER = 1 << 20
#: Events that may precede the first transaction; scanned to find the FDE when starting late.
_PREAMBLE_TYPES = frozenset(
    {
        T.FORMAT_DESCRIPTION,
        T.PREVIOUS_GTIDS,
        T.ROTATE,
        T.IGNORABLE,
        T.MARIADB_GTID_LIST,
        T.MARIADB_BINLOG_CHECKPOINT,
    }
)
RawEvent = tuple[int, int, bytes]
PositionedEvent = tuple[int, int, Event]


def _open_checked(path: str) -> BinaryIO:
    try:
        handle = open(path, "rb", buffering=_READ_BUFFER)
    except OSError as exc:
        raise BinlogError(f"cannot open binary log: {exc.strerror}", file=path) from exc
    magic = handle.read(len(MAGIC))
    if magic != MAGIC:
        handle.close()
        if magic == _ENCRYPTED_MAGIC:
            raise BinlogError("encrypted binary logs are not supported", file=path, position=0)
        raise BinlogError(
            f"not a binary log: bad magic number 0x{magic.hex() or '(empty)'}",
            file=path,
            position=0,
        )
    return handle


class _Chunk(NamedTuple):
    """Whole events read at once: event i spans ``data[bounds[i]:bounds[i + 1]]``, at file
    position ``position + bounds[i]``."""

    data: bytes
    position: int
    bounds: list[int]


def _chunks(handle: BinaryIO, path: str, start: int) -> Iterator[_Chunk]:
    """The file's events from ``start`` in large chunks; a partial event at the end of the file
    is an error."""
    handle.seek(start)
    rest = b""  # the start of an event the last chunk cut
    position = start  # of rest
    unpack_length = _LENGTH.unpack_from
    while True:
        want = _needed(rest) - len(rest)
        if want > _READ_BUFFER:  # a large event: read it whole, but never past the file's end
            want = min(want, os.fstat(handle.fileno()).st_size - handle.tell())
        buf = rest + handle.read(max(_READ_BUFFER, want))
        if len(buf) == len(rest):
            if rest:
                raise _truncated(rest, path, position)
            return
        size = len(buf)
        bounds = [0]
        offset = 0
        while size - offset >= HEADER_LEN:
            length = unpack_length(buf, offset + _LENGTH_OFFSET)[0]
            if length < HEADER_LEN:
                raise BinlogError(
                    f"invalid event length {length}", file=path, position=position + offset
                )
            if offset + length > size:
                break
            offset += length
            bounds.append(offset)
        if offset:
            yield _Chunk(buf, position, bounds)
        rest = buf[offset:]
        position += offset


def _needed(partial: bytes) -> int:
    """The bytes an event starting with ``partial`` has in all (its header, at least)."""
    if len(partial) < HEADER_LEN:
        return HEADER_LEN
    return max(HEADER_LEN, _LENGTH.unpack_from(partial, _LENGTH_OFFSET)[0])


def _truncated(partial: bytes, path: str, position: int) -> BinlogError:
    if len(partial) < HEADER_LEN:
        cause = (
            f"truncated event: the file ends {len(partial)} bytes into the {HEADER_LEN}-byte header"
        )
    else:
        length = _LENGTH.unpack_from(partial, _LENGTH_OFFSET)[0]
        cause = f"truncated event: the header says {length} bytes, the file has {len(partial)}"
    return BinlogError(cause, file=path, position=position)


def _frames(handle: BinaryIO, path: str, start: int) -> Iterator[RawEvent]:
    """Frame events from ``start`` to the end of the file; a partial event is an error."""
    for data, position, bounds in _chunks(handle, path, start):
        begin = 0
        for end in islice(bounds, 1, None):
            yield position + begin, position + end, data[begin:end]
            begin = end


def read_raw_events(path: str | os.PathLike[str], start: int = len(MAGIC)) -> Iterator[RawEvent]:
    """``(position, end_position, event bytes)`` of each event from ``start``, undecoded.

    Raises:
        BinlogError: bad magic number, or an event cut short by the end of the file.
    """
    name = os.fspath(path)
    with _open_checked(name) as handle:
        yield from _frames(handle, name, start)


class BinlogFileReader:
    """Iterate ``(position, end_position, event)`` over a binary log or relay log file.

    ``start`` > 4 resumes inside the file: the Format_description events of the file's
    preamble are read first. ``fde`` and ``table_maps`` show the state after the last event.
    """

    def __init__(self, path: str | os.PathLike[str], *, start: int = len(MAGIC)) -> None:
        self.path = os.fspath(path)
        self.start = start
        self.position = start
        self._stream = StreamDecoder()

    @property
    def fde(self) -> FormatDescription | None:
        return self._stream.fde

    @property
    def table_maps(self) -> Mapping[int, object]:
        return self._stream.table_maps

    def __iter__(self) -> Iterator[PositionedEvent]:
        with _open_checked(self.path) as handle:
            if self.start > len(MAGIC):
                self._read_preamble(handle)
            decode = self._stream.decode
            for data, position, bounds in _chunks(handle, self.path, self.start):
                begin = 0
                for end in islice(bounds, 1, None):
                    try:
                        event = decode(data[begin:end])
                    except BinlogError as exc:
                        raise exc.at(self.path, position + begin) from exc
                    self.position = position + end
                    yield position + begin, self.position, event
                    begin = end

    def _read_preamble(self, handle: BinaryIO) -> None:
        for pos, _end, data in _frames(handle, self.path, len(MAGIC)):
            if pos >= self.start or data[_TYPE_OFFSET] not in _PREAMBLE_TYPES:
                return
            if data[_TYPE_OFFSET] == T.FORMAT_DESCRIPTION:
                try:
                    self._stream.decode(data)
                except BinlogError as exc:
                    raise exc.at(self.path, pos) from exc


def moved_event(data: bytes, end: int, checksum: bool) -> bytes:
    """``data``, a whole event, with ``end`` as its ``log_pos`` and, when it has a checksum,
    its CRC32 computed again.

    Raises:
        BinlogError: ``data`` is not a whole event, or is a Format_description (whose
            checksum algorithm byte is part of what the CRC covers).
    """
    if len(data) < HEADER_LEN or data[_TYPE_OFFSET] == T.FORMAT_DESCRIPTION:
        raise BinlogError("write_moved takes a whole event other than a Format_description")
    moved = data[:_LOG_POS_OFFSET] + _LENGTH.pack(end) + data[_LOG_POS_OFFSET + 4 :]
    if checksum:
        body_end = len(moved) - CHECKSUM_LEN
        moved = moved[:body_end] + _LENGTH.pack(zlib.crc32(memoryview(moved)[:body_end]))
    return moved


class BinlogFileWriter:
    """Write a new binary log or relay log file: magic, Format_description, optionally
    Previous_gtids, then events with their end position as ``log_pos`` and, when ``checksum``,
    a CRC32. The FDE's algorithm byte is set from ``checksum``. Refuses to overwrite a file.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        fde: FormatDescription,
        *,
        checksum: bool = True,
        previous_gtids: GtidSet | PreviousGtids | None = None,
    ) -> None:
        self.path = os.fspath(path)
        self.checksum = checksum
        self._table_maps: dict[int, object] = {}
        try:
            self._file: BinaryIO = open(self.path, "xb")
        except OSError as exc:
            raise BinlogError(f"cannot create binary log: {exc.strerror}", file=self.path) from exc
        self._file.write(MAGIC)
        self.position = len(MAGIC)
        alg = ChecksumAlg.CRC32 if checksum else ChecksumAlg.OFF
        self.fde = dataclasses.replace(fde, checksum_alg=alg)
        self.write(self.fde)
        if isinstance(previous_gtids, GtidSet):
            header = make_header(
                T.PREVIOUS_GTIDS,
                timestamp=fde.header.timestamp,
                server_id=fde.header.server_id,
                flags=EventFlag.IGNORABLE,
            )
            previous_gtids = PreviousGtids(header, previous_gtids)
        if previous_gtids is not None:
            self.write(previous_gtids)

    def write(self, event: Event, *, log_pos: int | None = None) -> tuple[int, int]:
        """Append ``event``; ``log_pos`` defaults to its end position. Returns (start, end).

        Rows events find their Table_map among the Table_map events written before.
        """
        if log_pos is None:
            data = encode_event_at(
                event, self.position, checksum=self.checksum, table_maps=self._table_maps
            )
        else:
            data = encode_event(
                event, checksum=self.checksum, log_pos=log_pos, table_maps=self._table_maps
            )
        remember_table_map(event, self._table_maps)
        return self.write_raw(data)

    def write_moved(self, data: bytes) -> tuple[int, int]:
        """Append an event encoded for another position (``log_pos`` 0, say): its ``log_pos``
        becomes its end position here and its CRC32, when the file has checksums, is
        recomputed. Cheaper than encoding the event again."""
        return self.write_raw(moved_event(data, self.position + len(data), self.checksum))

    def write_raw(self, data: bytes | memoryview) -> tuple[int, int]:
        """Append an already encoded event as is (a relay log keeps the source's bytes)."""
        start = self.position
        self._file.write(data)
        self.position = start + len(data)
        return start, self.position

    def flush(self) -> None:
        self._file.flush()

    def fsync(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()

    def __enter__(self) -> BinlogFileWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
