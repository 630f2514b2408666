"""Body codecs of MariaDB's own events (types 160-163)."""

from __future__ import annotations

import struct

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events.header import Event, EventHeader
from spark_replica.applier_core.binlog.events.mariadb import (
    MariadbAnnotateRows,
    MariadbBinlogCheckpoint,
    MariadbGtid,
    MariadbGtidFlag,
    MariadbGtidList,
)
from spark_replica.applier_core.binlog.packing import Reader
from spark_replica.applier_core.binlog.text import decode_text

_GTID = struct.Struct("<QIB")
_GTID_LIST_ENTRY = struct.Struct("<IIQ")
_GTID_POST_HEADER = 19


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
