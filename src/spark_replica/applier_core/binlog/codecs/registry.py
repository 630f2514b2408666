"""The codec registry: decode and encode single binary log events (mysql-reference §7.1).

``decode_event`` parses the common header, checks the length and the CRC32, and dispatches on
the type code to the body codec of the event's family (``codecs.*``); ``encode_event`` is its
inverse. Table_map and Rows events are handed to the ``rows`` package. Every failure is a
:class:`BinlogError`.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn, Protocol, cast

from spark_replica.applier_core.binlog.codecs import control
from spark_replica.applier_core.binlog.codecs import mariadb as maria
from spark_replica.applier_core.binlog.codecs.gtid import (
    decode_gtid_at,
    decode_previous_gtids,
    encode_gtid,
    encode_previous_gtids,
)
from spark_replica.applier_core.binlog.codecs.payload import (
    decode_transaction_payload,
    encode_transaction_payload,
)
from spark_replica.applier_core.binlog.codecs.query import decode_query_at, encode_query
from spark_replica.applier_core.binlog.constants import (
    CHECKSUM_LEN,
    CRC32_RESIDUE,
    HEADER_LEN,
    ROWS_EVENTS,
    STATEMENT_ONLY_EVENTS,
    ChecksumAlg,
    EventFlag,
    EventType,
)
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import (
    DEFAULT_FDE,
    Event,
    EventHeader,
    FormatDescription,
    Gtid,
    Heartbeat,
    Incident,
    MariadbAnnotateRows,
    MariadbBinlogCheckpoint,
    MariadbGtid,
    MariadbGtidList,
    PreviousGtids,
    Query,
    Rotate,
    RowsQuery,
    StatementOnlyEvent,
    Stop,
    TransactionPayload,
    UnknownEvent,
    XaPrepare,
    Xid,
)
from spark_replica.applier_core.binlog.rows.rows import (
    RowsEvent,
    decode_rows_event_at,
    encode_rows_event,
)
from spark_replica.applier_core.binlog.rows.table_map import (
    TableMapEvent,
    decode_table_map_at,
    encode_table_map,
)

_HEADER = struct.Struct("<IBIIIH")
_CRC = struct.Struct("<I")
_XID = struct.Struct("<Q")
_FLAGS_OFFSET = 17
_SERVER_VERSION = slice(21, 71)
_FDE_MIN_BODY = 57  # binlog_version 2, server_version 50, create_timestamp 4, header_length 1
_FORMAT_DESCRIPTION = int(EventType.FORMAT_DESCRIPTION)
#: CRC32 over an event whose last four bytes are its own CRC32 (little-endian) is this constant.
_new_header = tuple.__new__
_crc32 = zlib.crc32

BodyDecoder = Callable[[EventHeader, memoryview, int], Event]
#: ``(header, data, end, post_header_len)``: the body is ``data[HEADER_LEN:end]``.
Decoder = Callable[[EventHeader, bytes, int, int], Event]
RowsDecoder = Callable[[EventHeader, bytes, int, int, Mapping[int, object]], Event]

#: Statement-only types: the ``EventType`` ones plus the old load events 6, 8, 10, 12.
STATEMENT_ONLY_TYPES = frozenset({*STATEMENT_ONLY_EVENTS, 6, 8, 10, 12})
#: Types a replica skips without decoding (Ignorable, Transaction_context, View_change).
SKIPPED_TYPES = frozenset(
    {EventType.IGNORABLE, EventType.TRANSACTION_CONTEXT, EventType.VIEW_CHANGE}
)
_OLD_NAMES = {20: "PRE_GA_WRITE_ROWS", 21: "PRE_GA_UPDATE_ROWS", 22: "PRE_GA_DELETE_ROWS"}


def _on_body(decode: BodyDecoder) -> Decoder:
    """A decoder of rarely seen events, which parse a view of the body."""

    def decoder(header: EventHeader, data: bytes, end: int, post_header_len: int) -> Event:
        return decode(header, memoryview(data)[HEADER_LEN:end], post_header_len)

    return decoder


def _decode_xid(header: EventHeader, data: bytes, end: int, _phl: int) -> Event:
    if end - HEADER_LEN != _XID.size:
        return control.decode_xid(header, memoryview(data)[HEADER_LEN:end], _phl)
    return Xid(header, _XID.unpack_from(data, HEADER_LEN)[0])


_BODY_DECODERS: dict[int, BodyDecoder] = {
    EventType.STOP: control.decode_stop,
    EventType.ROTATE: control.decode_rotate,
    EventType.INCIDENT: control.decode_incident,
    EventType.HEARTBEAT: control.decode_heartbeat,
    EventType.HEARTBEAT_V2: control.decode_heartbeat,
    EventType.ROWS_QUERY: control.decode_rows_query,
    EventType.PREVIOUS_GTIDS: decode_previous_gtids,
    EventType.XA_PREPARE: control.decode_xa_prepare,
    EventType.TRANSACTION_PAYLOAD: decode_transaction_payload,
    EventType.MARIADB_ANNOTATE_ROWS: maria.decode_annotate_rows,
    EventType.MARIADB_BINLOG_CHECKPOINT: maria.decode_binlog_checkpoint,
    EventType.MARIADB_GTID: maria.decode_mariadb_gtid,
    EventType.MARIADB_GTID_LIST: maria.decode_gtid_list,
    **dict.fromkeys(STATEMENT_ONLY_TYPES, control.decode_statement_only),
    **dict.fromkeys(SKIPPED_TYPES, control.decode_unknown),
}

#: Decoders by type code, as plain ints: the hot ones read the event's bytes in place.
_DECODERS: dict[int, Decoder] = {
    **{int(code): _on_body(decode) for code, decode in _BODY_DECODERS.items()},
    EventType.QUERY.value: decode_query_at,
    EventType.XID.value: _decode_xid,
    EventType.GTID.value: decode_gtid_at,
    EventType.ANONYMOUS_GTID.value: decode_gtid_at,
    EventType.GTID_TAGGED.value: decode_gtid_at,
    EventType.TABLE_MAP.value: decode_table_map_at,
}
_ROWS_DECODER: RowsDecoder = decode_rows_event_at  # type: ignore[assignment]

# class -> (body encoder, the type codes its header may carry; empty = any)
_ENCODERS: dict[type[Event], tuple[Callable[[Any], bytes], frozenset[int]]] = {
    FormatDescription: (
        control.encode_format_description,
        frozenset({EventType.FORMAT_DESCRIPTION}),
    ),
    Query: (encode_query, frozenset({EventType.QUERY})),
    Stop: (control.encode_stop, frozenset({EventType.STOP})),
    Rotate: (control.encode_rotate, frozenset({EventType.ROTATE})),
    Xid: (control.encode_xid, frozenset({EventType.XID})),
    Incident: (control.encode_incident, frozenset({EventType.INCIDENT})),
    Heartbeat: (control.encode_heartbeat, frozenset({EventType.HEARTBEAT, EventType.HEARTBEAT_V2})),
    RowsQuery: (control.encode_rows_query, frozenset({EventType.ROWS_QUERY})),
    Gtid: (
        encode_gtid,
        frozenset({EventType.GTID, EventType.ANONYMOUS_GTID, EventType.GTID_TAGGED}),
    ),
    PreviousGtids: (encode_previous_gtids, frozenset({EventType.PREVIOUS_GTIDS})),
    XaPrepare: (control.encode_xa_prepare, frozenset({EventType.XA_PREPARE})),
    TransactionPayload: (encode_transaction_payload, frozenset({EventType.TRANSACTION_PAYLOAD})),
    StatementOnlyEvent: (control.encode_statement_only, STATEMENT_ONLY_TYPES),
    UnknownEvent: (control.encode_unknown, frozenset()),
    MariadbAnnotateRows: (
        maria.encode_annotate_rows,
        frozenset({EventType.MARIADB_ANNOTATE_ROWS}),
    ),
    MariadbBinlogCheckpoint: (
        maria.encode_binlog_checkpoint,
        frozenset({EventType.MARIADB_BINLOG_CHECKPOINT}),
    ),
    MariadbGtid: (maria.encode_mariadb_gtid, frozenset({EventType.MARIADB_GTID})),
    MariadbGtidList: (maria.encode_gtid_list, frozenset({EventType.MARIADB_GTID_LIST})),
}

_DECODE_ERRORS = (IndexError, KeyError, ValueError, OverflowError, struct.error)


class _HasTableId(Protocol):
    @property
    def table_id(self) -> int: ...


def type_name(type_code: int) -> str:
    try:
        return EventType(type_code).name
    except ValueError:
        return _OLD_NAMES.get(type_code, f"UNKNOWN_{type_code}")


def remember_table_map(event: Event, table_maps: dict[int, object]) -> None:
    """Record ``event`` in ``table_maps`` when it is a Table_map event."""
    if event.header.type_code == EventType.TABLE_MAP:
        table_maps[cast(_HasTableId, event).table_id] = event


def _mismatch(expected: int, found: int) -> BinlogError:
    return BinlogError(f"event checksum mismatch: expected 0x{expected:08x}, found 0x{found:08x}")


def _verify_checksum(view: memoryview, end: int, *, clear_in_use: bool = False) -> None:
    if clear_in_use:
        flags = _HEADER.unpack_from(view)[5] & ~EventFlag.BINLOG_IN_USE
        crc = zlib.crc32(view[:_FLAGS_OFFSET])
        crc = zlib.crc32(flags.to_bytes(2, "little"), crc)
        expected = zlib.crc32(view[HEADER_LEN:end], crc)
    else:
        expected = zlib.crc32(view[:end])
    found = _CRC.unpack_from(view, end)[0]
    if expected != found:
        raise _mismatch(expected, found)


def _checksum_mismatch(data: bytes, end: int) -> NoReturn:
    """The error for ``data``, whose checksum failed the residue check."""
    raise _mismatch(zlib.crc32(memoryview(data)[:end]), _CRC.unpack_from(data, end)[0])


def _decode_fde(header: EventHeader, view: memoryview) -> FormatDescription:
    size = len(view)
    if size < HEADER_LEN + _FDE_MIN_BODY:
        raise BinlogError(f"event is too short: {size} bytes")
    alg: int | None = None
    end = size
    if control.fde_has_checksum_alg(bytes(view[_SERVER_VERSION])):
        end = size - CHECKSUM_LEN - 1
        if end < HEADER_LEN + _FDE_MIN_BODY:
            raise BinlogError(f"event is too short: {size} bytes")
        alg = view[end]
        if alg == ChecksumAlg.CRC32:
            _verify_checksum(view, size - CHECKSUM_LEN, clear_in_use=True)
    return control.decode_format_description(header, view[HEADER_LEN:end], alg)


def decode_header(data: bytes | memoryview) -> EventHeader:
    """The common header of ``data``; raises BinlogError when fewer than 19 bytes."""
    if len(data) < HEADER_LEN:
        raise BinlogError(f"event is too short: {len(data)} bytes, the header needs {HEADER_LEN}")
    return _new_header(EventHeader, _HEADER.unpack_from(data))


def decode_event(
    data: bytes | memoryview,
    fde: FormatDescription | None,
    *,
    checksum: bool | None = None,
    table_maps: Mapping[int, object] | None = None,
) -> Event:
    """Decode one whole event.

    Args:
        data: the event's bytes, header to checksum included.
        fde: the Format_description event describing it; ``None`` = MySQL 8.x layouts.
        checksum: whether the event ends with a CRC32 (verified); ``None`` = as ``fde`` says
            (no checksum without one). A Format_description event decides for itself.
        table_maps: Table_map events by table id, for Rows events.

    Raises:
        BinlogError: truncated or over-long input, checksum mismatch, unknown type without the
            IGNORABLE flag, or a malformed body.
    """
    if fde is None:
        fde = DEFAULT_FDE
        if checksum is None:
            checksum = False
    elif checksum is None:
        checksum = fde.checksums
    return decode_bytes(
        data if type(data) is bytes else bytes(data),
        checksum,
        fde.post_header_by_type,
        table_maps if table_maps is not None else {},
    )


def decode_bytes(
    data: bytes,
    checksum: bool,
    post_header_by_type: Sequence[int],
    table_maps: Mapping[int, object],
) -> Event:
    """``decode_event`` with its arguments resolved: what a stream reader calls per event.

    ``post_header_by_type`` is the Format_description's ``post_header_by_type``.
    """
    size = len(data)
    if size < HEADER_LEN:
        raise BinlogError(f"event is too short: {size} bytes, the header needs {HEADER_LEN}")
    header = _new_header(EventHeader, _HEADER.unpack_from(data))
    if header[3] != size:
        raise BinlogError(f"event length mismatch: the header says {header[3]} bytes, got {size}")
    type_code = header[1]
    try:
        if type_code == _FORMAT_DESCRIPTION:
            return _decode_fde(header, memoryview(data))
        end = size
        if checksum:
            end = size - CHECKSUM_LEN
            if end < HEADER_LEN:
                raise BinlogError(f"event is too short: {size} bytes, with header and checksum")
            if _crc32(data) != CRC32_RESIDUE:
                _checksum_mismatch(data, end)
        decoder = _DECODERS.get(type_code)
        if decoder is not None:
            return decoder(header, data, end, post_header_by_type[type_code])
        if type_code in ROWS_EVENTS:
            return _ROWS_DECODER(header, data, end, post_header_by_type[type_code], table_maps)
        if header.flags & EventFlag.IGNORABLE:
            return UnknownEvent(header, type_code, data[HEADER_LEN:end])
    except BinlogError as exc:
        if exc.cause.startswith("event is too short"):
            raise BinlogError(f"{type_name(type_code)} {exc.cause}") from exc
        raise
    except _DECODE_ERRORS as exc:
        raise BinlogError(f"malformed {type_name(type_code)} event: {exc}") from exc
    name = type_name(type_code)
    kind = "unknown" if name.startswith("UNKNOWN") else f"unsupported ({name})"
    raise BinlogError(f"{kind} event type {type_code} without the IGNORABLE flag")


def encode_event(
    event: Event,
    *,
    checksum: bool,
    log_pos: int,
    table_maps: Mapping[int, object] | None = None,
) -> bytes:
    """The bytes of ``event``: header (length recomputed, ``log_pos`` as given), body, CRC32.

    A Format_description event carries its own algorithm: it ends with a CRC32 whenever it has
    the algorithm byte, whatever ``checksum`` says. A Heartbeat v1 writes its ``log_position``
    in the header. Rows events need their Table_map in ``table_maps``.

    Raises:
        BinlogError: a field is out of range, or the event cannot be encoded.
    """
    return _encode(event, checksum, log_pos, None, table_maps)


def encode_event_at(
    event: Event,
    position: int,
    *,
    checksum: bool,
    table_maps: Mapping[int, object] | None = None,
) -> bytes:
    """``encode_event`` for an event written at ``position``: log_pos = its end position."""
    return _encode(event, checksum, 0, position, table_maps)


def _encode_body(event: Event, table_maps: Mapping[int, object] | None) -> bytes:
    type_code = event.header.type_code
    if type_code == EventType.TABLE_MAP:
        return encode_table_map(cast(TableMapEvent, event))
    if type_code in ROWS_EVENTS and not isinstance(event, UnknownEvent):
        table_id = cast(_HasTableId, event).table_id
        table_map = (table_maps or {}).get(table_id)
        if table_map is None:
            raise BinlogError(f"no Table_map for table id {table_id}")
        return encode_rows_event(cast(RowsEvent, event), cast(TableMapEvent, table_map))
    entry = _ENCODERS.get(type(event))
    if entry is None:
        raise BinlogError(f"cannot encode a {type(event).__name__}")
    encoder, types = entry
    if types and type_code not in types:
        raise BinlogError(f"a {type(event).__name__} cannot have type code {type_code}")
    return encoder(event)


def _encode(
    event: Event,
    checksum: bool,
    log_pos: int,
    position: int | None,
    table_maps: Mapping[int, object] | None,
) -> bytes:
    header = event.header
    type_code = header.type_code
    flags = header.flags
    crc_flags = flags
    try:
        body = _encode_body(event, table_maps)
    except (struct.error, OverflowError, ValueError) as exc:
        raise BinlogError(f"{type(event).__name__} field out of range: {exc}") from exc
    if isinstance(event, FormatDescription):
        checksum = event.checksum_alg is not None
        crc_flags = flags & ~EventFlag.BINLOG_IN_USE
    elif isinstance(event, Heartbeat) and type_code == EventType.HEARTBEAT:
        log_pos = event.log_position
        position = None
    length = HEADER_LEN + len(body) + (CHECKSUM_LEN if checksum else 0)
    if position is not None:
        log_pos = position + length
    try:
        head = _HEADER.pack(header.timestamp, type_code, header.server_id, length, log_pos, flags)
        if not checksum:
            return head + body
        crc_head = head
        if crc_flags != flags:
            crc_head = head[:_FLAGS_OFFSET] + crc_flags.to_bytes(2, "little")
        return head + body + _CRC.pack(zlib.crc32(body, zlib.crc32(crc_head)))
    except (struct.error, OverflowError) as exc:
        raise BinlogError(f"event header field out of range: {exc}") from exc
