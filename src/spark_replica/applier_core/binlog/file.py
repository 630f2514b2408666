"""Binary log and relay log files: the magic number, then back-to-back events (§7.1).

``BinlogFileReader`` decodes a file's events, following its Format_description events and
Table_map events; ``read_raw_events`` only frames them; ``BinlogFileWriter`` writes a new file.
Every error is a ``BinlogError`` located with the file and the event's position.
"""

from __future__ import annotations

import dataclasses
import os
import struct
from collections.abc import Iterator, Mapping
from typing import BinaryIO

from spark_replica.applier_core.binlog.codec import (
    decode_event,
    encode_event,
    encode_event_at,
    remember_table_map,
)
from spark_replica.applier_core.binlog.constants import HEADER_LEN, MAGIC, ChecksumAlg, EventFlag
from spark_replica.applier_core.binlog.constants import EventType as T
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import (
    Event,
    FormatDescription,
    PreviousGtids,
    make_header,
)
from spark_replica.applier_core.binlog.events_query import Query
from spark_replica.applier_core.gtid import GtidSet

_LENGTH = struct.Struct("<I")
_LENGTH_OFFSET = 9
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
#: Events after which no earlier Table_map is referred to again.
_TABLE_MAP_RESET_TYPES = frozenset(
    {T.FORMAT_DESCRIPTION, T.GTID, T.ANONYMOUS_GTID, T.GTID_TAGGED, T.MARIADB_GTID, T.XID}
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


def _frames(handle: BinaryIO, path: str, start: int) -> Iterator[RawEvent]:
    """Frame events from ``start`` to the end of the file; a partial event is an error."""
    size = os.fstat(handle.fileno()).st_size
    pos = start
    handle.seek(pos)
    while True:
        head = handle.read(HEADER_LEN)
        if not head:
            return
        if len(head) < HEADER_LEN:
            raise BinlogError(
                f"truncated event: the file ends {len(head)} bytes into the "
                f"{HEADER_LEN}-byte header",
                file=path,
                position=pos,
            )
        length = _LENGTH.unpack_from(head, _LENGTH_OFFSET)[0]
        if length < HEADER_LEN:
            raise BinlogError(f"invalid event length {length}", file=path, position=pos)
        if pos + length > size:
            size = os.fstat(handle.fileno()).st_size
            if pos + length > size:
                raise BinlogError(
                    f"truncated event: the header says {length} bytes, the file has {size - pos}",
                    file=path,
                    position=pos,
                )
        rest = handle.read(length - HEADER_LEN)
        if len(rest) != length - HEADER_LEN:
            raise BinlogError(
                f"truncated event: the header says {length} bytes, the file "
                f"has {HEADER_LEN + len(rest)}",
                file=path,
                position=pos,
            )
        yield pos, pos + length, head + rest
        pos += length


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
        self.fde: FormatDescription | None = None
        self.position = start
        self._table_maps: dict[int, object] = {}

    @property
    def table_maps(self) -> Mapping[int, object]:
        return self._table_maps

    def __iter__(self) -> Iterator[PositionedEvent]:
        with _open_checked(self.path) as handle:
            if self.start > len(MAGIC):
                self._read_preamble(handle)
            for pos, end, data in _frames(handle, self.path, self.start):
                event = self._decode(pos, data)
                self.position = end
                yield pos, end, event

    def _read_preamble(self, handle: BinaryIO) -> None:
        for pos, _end, data in _frames(handle, self.path, len(MAGIC)):
            if pos >= self.start or data[_TYPE_OFFSET] not in _PREAMBLE_TYPES:
                return
            if data[_TYPE_OFFSET] == T.FORMAT_DESCRIPTION:
                self._decode(pos, data)

    def _decode(self, pos: int, data: bytes) -> Event:
        try:
            event = decode_event(data, self.fde, table_maps=self._table_maps)
        except BinlogError as exc:
            raise exc.at(self.path, pos) from exc
        type_code = event.header.type_code
        if type_code in _TABLE_MAP_RESET_TYPES or (
            type_code == T.QUERY and isinstance(event, Query) and event.is_begin
        ):
            self._table_maps.clear()
        if isinstance(event, FormatDescription):
            self.fde = event
        else:
            remember_table_map(event, self._table_maps)
        return event


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
