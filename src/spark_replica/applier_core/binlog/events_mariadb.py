"""MariaDB's own events (types 160-163) and their body codecs."""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import Event, EventHeader, ValueEvent
from spark_replica.applier_core.binlog.events_query import decode_text
from spark_replica.applier_core.binlog.packing import Reader

_GTID = struct.Struct("<QIB")
_GTID_LIST_ENTRY = struct.Struct("<IIQ")
_GTID_POST_HEADER = 19


class MariadbGtidFlag(enum.IntFlag):
    STANDALONE = 1
    GROUP_COMMIT_ID = 2
    TRANSACTIONAL = 4
    ALLOW_PARALLEL = 8
    WAITED = 16
    DDL = 32
    PREPARED_XA = 64
    COMPLETED_XA = 128


@dataclass(slots=True)
class MariadbAnnotateRows(ValueEvent):
    """ANNOTATE_ROWS_EVENT (160): the statement behind the following rows events."""

    query: str


@dataclass(slots=True)
class MariadbBinlogCheckpoint(ValueEvent):
    """BINLOG_CHECKPOINT_EVENT (161)."""

    log_file: str


@dataclass(slots=True)
class MariadbGtid(ValueEvent):
    """GTID_EVENT (162): starts an event group, replacing BEGIN; ``server_id`` is the header's.

    ``commit_id`` is set when ``flags`` has GROUP_COMMIT_ID (2); ``extra`` keeps the bytes
    after the known fields (XA id, extra flags), without the zero padding.
    """

    domain_id: int
    seq_no: int
    flags: int
    commit_id: int | None = None
    extra: bytes = b""

    @property
    def server_id(self) -> int:
        return self.header.server_id

    @property
    def gtid_text(self) -> str:
        return f"{self.domain_id}-{self.header.server_id}-{self.seq_no}"

    @property
    def standalone(self) -> bool:
        return bool(self.flags & MariadbGtidFlag.STANDALONE)


@dataclass(slots=True)
class MariadbGtidList(ValueEvent):
    """GTID_LIST_EVENT (163): the binlog state, one ``(domain, server, seq)`` per domain."""

    gtids: tuple[tuple[int, int, int], ...]
    list_flags: int = 0
    extra: bytes = b""


def decode_annotate_rows(header: EventHeader, body: memoryview, _phl: int) -> Event:
    return MariadbAnnotateRows(header, decode_text(bytes(body), "utf-8")[0])


def encode_annotate_rows(event: MariadbAnnotateRows) -> bytes:
    return event.query.encode("utf-8")


def decode_binlog_checkpoint(header: EventHeader, body: memoryview, _phl: int) -> Event:
    reader = Reader(body)
    name = reader.bytes(reader.u32())
    return MariadbBinlogCheckpoint(header, name.decode("utf-8", errors="replace"))


def encode_binlog_checkpoint(event: MariadbBinlogCheckpoint) -> bytes:
    name = event.log_file.encode("utf-8")
    return len(name).to_bytes(4, "little") + name


def decode_mariadb_gtid(header: EventHeader, body: memoryview, _phl: int) -> Event:
    if len(body) < _GTID.size:
        raise BinlogError(f"event is too short: {len(body)} bytes of body")
    seq_no, domain_id, flags = _GTID.unpack_from(body)
    offset = _GTID.size
    commit_id = None
    if flags & MariadbGtidFlag.GROUP_COMMIT_ID:
        commit_id = Reader(body, offset).u64()
        offset += 8
    extra = bytes(body[offset:])
    if offset + len(extra) == _GTID_POST_HEADER and not any(extra):
        extra = b""
    return MariadbGtid(header, domain_id, seq_no, flags, commit_id, extra)


def encode_mariadb_gtid(event: MariadbGtid) -> bytes:
    flags = event.flags
    if (event.commit_id is not None) != bool(flags & MariadbGtidFlag.GROUP_COMMIT_ID):
        raise BinlogError("MariaDB GTID: commit_id must be set exactly when flag 2 is")
    out = _GTID.pack(event.seq_no, event.domain_id, flags)
    if event.commit_id is not None:
        out += event.commit_id.to_bytes(8, "little")
    out += event.extra
    return out.ljust(_GTID_POST_HEADER, b"\x00")


def decode_gtid_list(header: EventHeader, body: memoryview, _phl: int) -> Event:
    reader = Reader(body)
    word = reader.u32()
    count = word & ((1 << 28) - 1)
    if count * _GTID_LIST_ENTRY.size > reader.remaining:
        raise BinlogError(f"event is too short for {count} GTIDs")
    gtids = tuple(
        _GTID_LIST_ENTRY.unpack(reader.bytes(_GTID_LIST_ENTRY.size)) for _ in range(count)
    )
    return MariadbGtidList(header, gtids, word >> 28, reader.rest())


def encode_gtid_list(event: MariadbGtidList) -> bytes:
    parts = [((event.list_flags << 28) | len(event.gtids)).to_bytes(4, "little")]
    parts.extend(_GTID_LIST_ENTRY.pack(*entry) for entry in event.gtids)
    parts.append(event.extra)
    return b"".join(parts)
