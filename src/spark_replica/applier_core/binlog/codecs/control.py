"""Body codecs of the control events (mysql-reference §7.2, §7.6, §7.7, §7.11).

A decoder takes the header, the body (after the 19-byte header, without checksum) and the
post-header length the FDE gives for its type; an encoder returns the body.
"""

from __future__ import annotations

import re
import struct

from spark_replica.applier_core.binlog.constants import ChecksumAlg, EventType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import (
    Event,
    EventHeader,
    FormatDescription,
    Heartbeat,
    Incident,
    Rotate,
    RowsQuery,
    StatementOnlyEvent,
    Stop,
    UnknownEvent,
    XaPrepare,
    Xid,
)
from spark_replica.applier_core.binlog.packing import Reader, pack_int
from spark_replica.applier_core.binlog.text import decode_text

_FDE_FIXED = struct.Struct("<H50sIB")  # binlog_version, server_version, create_timestamp, hlen
_SERVER_VERSION_LEN = 50
_VERSION = re.compile(rb"^(\d+)\.(\d+)\.(\d+)")
_XA = struct.Struct("<BiII")
_U64 = struct.Struct("<Q")
_XA_PART_MAX = 64
_HB_END, _HB_LOG_FILENAME, _HB_LOG_POSITION = 0, 1, 2


def _text(raw: bytes | memoryview) -> str:
    return decode_text(bytes(raw), "utf-8")[0]


# --- Format_description -------------------------------------------------------------------


def fde_has_checksum_alg(server_version: bytes) -> bool:
    """Whether an FDE written by ``server_version`` ends with the algorithm byte and a CRC:
    MySQL from 5.6.1, MariaDB from 5.3.0."""
    match = _VERSION.match(server_version)
    if match is None:
        return False
    version = tuple(int(part) for part in match.groups())
    split = (5, 3, 0) if b"MariaDB" in server_version else (5, 6, 1)
    return version >= split


def decode_format_description(
    header: EventHeader, body: memoryview, checksum_alg: int | None
) -> FormatDescription:
    """``body`` is the FDE after the common header, without the algorithm byte and CRC."""
    if len(body) < _FDE_FIXED.size:
        raise BinlogError(f"event is too short: {len(body)} bytes of body")
    binlog_version, version, created, header_length = _FDE_FIXED.unpack_from(body)
    if binlog_version != 4:
        raise BinlogError(f"unsupported binary log version {binlog_version}")
    if header_length != 19:
        raise BinlogError(f"unsupported common header length {header_length}")
    if checksum_alg is not None and checksum_alg not in tuple(ChecksumAlg):
        raise BinlogError(f"unknown checksum algorithm {checksum_alg}")
    server_version = version.split(b"\x00", 1)[0].decode("utf-8", errors="replace")
    lengths = tuple(body[_FDE_FIXED.size :])
    return FormatDescription(
        header, binlog_version, server_version, created, header_length, lengths, checksum_alg
    )


def encode_format_description(event: FormatDescription) -> bytes:
    version = event.server_version.encode("utf-8")
    if len(version) >= _SERVER_VERSION_LEN:
        raise BinlogError("server version longer than 49 bytes")
    try:
        fixed = _FDE_FIXED.pack(
            event.binlog_version, version, event.create_timestamp, event.header_length
        )
        alg = b"" if event.checksum_alg is None else bytes((event.checksum_alg,))
        return fixed + bytes(event.post_header_lengths) + alg
    except (struct.error, ValueError) as exc:
        raise BinlogError(f"Format_description field out of range: {exc}") from exc


# --- small control events -----------------------------------------------------------------


def decode_rotate(header: EventHeader, body: memoryview, phl: int) -> Event:
    reader = Reader(body)
    position = reader.u64() if phl >= 8 else 4
    reader.skip(max(0, phl - 8))
    return Rotate(header, position, _text(reader.rest()))


def encode_rotate(event: Rotate) -> bytes:
    return event.position.to_bytes(8, "little") + event.next_file.encode("utf-8")


def decode_xid(header: EventHeader, body: memoryview, _phl: int) -> Event:
    if len(body) != 8:
        if len(body) < 8:
            raise BinlogError(f"event is too short: {len(body)} bytes of body")
        raise BinlogError(f"Xid event: {len(body) - 8} unexpected trailing bytes")
    return Xid(header, _U64.unpack_from(body)[0])


def encode_xid(event: Xid) -> bytes:
    return event.xid.to_bytes(8, "little")


def decode_stop(header: EventHeader, body: memoryview, _phl: int) -> Event:
    return Stop(header)


def encode_stop(event: Stop) -> bytes:
    return b""


def decode_incident(header: EventHeader, body: memoryview, _phl: int) -> Event:
    reader = Reader(body)
    incident_type = reader.u16()
    message = _text(reader.bytes(reader.u8())) if reader.remaining else ""
    return Incident(header, incident_type, message)


def encode_incident(event: Incident) -> bytes:
    message = event.message.encode("utf-8")
    if len(message) > 255:
        raise BinlogError("Incident message longer than 255 bytes")
    return event.incident_type.to_bytes(2, "little") + bytes((len(message),)) + message


def decode_heartbeat(header: EventHeader, body: memoryview, _phl: int) -> Event:
    if header.type_code == EventType.HEARTBEAT:
        return Heartbeat(header, _text(body), header.log_pos)
    reader = Reader(body)
    log_file, position = "", 0
    while reader.remaining:
        field = reader.packed()
        if field == _HB_END:
            break
        value = Reader(reader.bytes(reader.packed()))
        if field == _HB_LOG_FILENAME:
            log_file = _text(value.rest())
        elif field == _HB_LOG_POSITION:
            position = value.packed()
    return Heartbeat(header, log_file, position)


def encode_heartbeat(event: Heartbeat) -> bytes:
    name = event.log_file.encode("utf-8")
    if event.header.type_code == EventType.HEARTBEAT:
        return name
    position = pack_int(event.log_position)
    return b"".join(
        (
            pack_int(_HB_LOG_FILENAME),
            pack_int(len(name)),
            name,
            pack_int(_HB_LOG_POSITION),
            pack_int(len(position)),
            position,
            pack_int(_HB_END),
        )
    )


def decode_rows_query(header: EventHeader, body: memoryview, _phl: int) -> Event:
    reader = Reader(body)
    reader.skip(1)  # a length byte that readers ignore (the text may exceed 255 bytes)
    return RowsQuery(header, _text(reader.rest()))


def encode_rows_query(event: RowsQuery) -> bytes:
    text = event.query.encode("utf-8")
    return bytes((len(text) & 0xFF,)) + text


def decode_xa_prepare(header: EventHeader, body: memoryview, _phl: int) -> Event:
    reader = Reader(body)
    one_phase, format_id, gtrid_len, bqual_len = _XA.unpack(reader.bytes(_XA.size))
    if gtrid_len > _XA_PART_MAX or bqual_len > _XA_PART_MAX:
        raise BinlogError(f"XA_prepare event: invalid XID lengths {gtrid_len}, {bqual_len}")
    gtrid, bqual = reader.bytes(gtrid_len), reader.bytes(bqual_len)
    if reader.remaining:
        raise BinlogError(f"XA_prepare event: {reader.remaining} unexpected trailing bytes")
    return XaPrepare(header, bool(one_phase), format_id, gtrid, bqual)


def encode_xa_prepare(event: XaPrepare) -> bytes:
    if len(event.gtrid) > _XA_PART_MAX or len(event.bqual) > _XA_PART_MAX:
        raise BinlogError("XA_prepare event: gtrid and bqual are at most 64 bytes each")
    try:
        head = _XA.pack(int(event.one_phase), event.format_id, len(event.gtrid), len(event.bqual))
    except struct.error as exc:
        raise BinlogError(f"XA_prepare field out of range: {exc}") from exc
    return head + event.gtrid + event.bqual


def decode_statement_only(header: EventHeader, body: memoryview, _phl: int) -> Event:
    return StatementOnlyEvent(header, header.type_code, bytes(body))


def encode_statement_only(event: StatementOnlyEvent) -> bytes:
    return event.raw


def decode_unknown(header: EventHeader, body: memoryview, _phl: int) -> Event:
    return UnknownEvent(header, header.type_code, bytes(body))


def encode_unknown(event: UnknownEvent) -> bytes:
    return event.raw_body
