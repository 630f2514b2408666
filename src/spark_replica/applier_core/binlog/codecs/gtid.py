"""Body codecs of the GTID events (33, 34, 42) and Previous_gtids (35), mysql-reference §7.3-7.4.

GTID_TAGGED_LOG_EVENT and the tagged Previous_gtids use the MySQL serialization library's
variable-length integers: the count of trailing one bits of the first byte is the number of
extra bytes (0xFF: 8), and the value's low bits follow those flag bits.
"""

from __future__ import annotations

import functools
import struct
import zlib

from spark_replica.applier_core.binlog.constants import HEADER_LEN, EventType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import (
    EventHeader,
    Gtid,
    GtidFormat,
    PreviousGtids,
    make_header,
)
from spark_replica.applier_core.binlog.packing import Reader, pack_int
from spark_replica.applier_core.gtid import MAX_GNO, GtidSet

_HEAD = struct.Struct("<B16sq")  # flags, sid, gno
_CLOCK = struct.Struct("<Bqq")  # lt_type, last_committed, sequence_number
_HEAD_CLOCK = struct.Struct("<B16sqBqq")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_LOGICAL_TIMESTAMP_TYPECODE = 2
_TS_FLAG = 1 << 55
#: Where an untagged GTID event's immediate commit timestamp starts.
_COMMIT_TIMESTAMP_AT = HEADER_LEN + _HEAD_CLOCK.size
_CHECKSUM = struct.Struct("<I")
_TS_FLAG_BYTE = 0x80  # _TS_FLAG within the 7th byte
_TAGGED = int(EventType.GTID_TAGGED)
_PACKED_SIZES = {0xFC: 2, 0xFD: 3, 0xFE: 8}
_VERSION_FLAG = 1 << 31
_SERIALIZATION_VERSION = 2
_TAG_FORMAT = 1
_U64_MAX = (1 << 64) - 1


@functools.lru_cache(maxsize=1024)
def uuid_text(raw: bytes) -> str:
    """``raw`` (16 bytes) as a UUID's text; a stream names few servers, so texts are cached."""
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def uuid_bytes(text: str) -> bytes:
    try:
        raw = bytes.fromhex(text.replace("-", ""))
    except ValueError:
        raw = b""
    if len(raw) != 16:
        raise BinlogError(f"invalid UUID '{text}'")
    return raw


# --- variable-length integers (MySQL serialization library) -------------------------------


def read_varlen(reader: Reader) -> int:
    first = reader.u8()
    if first == 0xFF:
        return reader.u64()
    extra = ((first ^ 0xFF) & -(first ^ 0xFF)).bit_length() - 1  # trailing ones
    value = first >> (extra + 1)
    if extra:
        value |= reader.uint(extra) << (7 - extra)
    return value


def write_varlen(value: int) -> bytes:
    if value < 0 or value > _U64_MAX:
        raise BinlogError(f"integer {value} out of range for a variable-length field")
    size = max(1, -(-value.bit_length() // 7))
    if size > 8:
        return b"\xff" + value.to_bytes(8, "little")
    first = ((1 << (size - 1)) - 1) | ((value << size) & 0xFF)
    return bytes((first,)) + (value >> (8 - size)).to_bytes(size - 1, "little")


def _read_signed(reader: Reader) -> int:
    value = read_varlen(reader)
    return -(value >> 1) - 1 if value & 1 else value >> 1


def _write_signed(value: int) -> bytes:
    return write_varlen(((-value - 1) << 1) | 1 if value < 0 else value << 1)


# --- GTID events --------------------------------------------------------------------------


def _check_gno(header: EventHeader, gno: int) -> None:
    if header.type_code != EventType.ANONYMOUS_GTID and not 1 <= gno < MAX_GNO:
        raise BinlogError(f"invalid GTID: transaction number {gno} out of range")


#: The GTID events of MySQL 8.0.14+ in their usual shape: both commit timestamps equal, both
#: server versions equal, no commit group ticket, and a transaction length under 251 bytes
#: (body of 54 bytes) or under 64 KiB (56 bytes, after the 0xFC prefix). The 7-byte
#: timestamp is read as 4 + 2 + 1 bytes.
_USUAL = {
    54: struct.Struct("<B16sqBqqIHBBI"),
    56: struct.Struct("<B16sqBqqIHBxHI"),
}
_PACKED_U16 = 0xFC


def decode_gtid_at(header: EventHeader, data: bytes, end: int, _phl: int) -> Gtid:
    """Decode the GTID event whose body is ``data[HEADER_LEN:end]``."""
    if header[1] == _TAGGED:
        return _decode_tagged(header, memoryview(data)[HEADER_LEN:end])
    size = end - HEADER_LEN
    usual = _USUAL.get(size)
    if usual is not None and (size == 54 or data[HEADER_LEN + 49] == _PACKED_U16):
        flags, sid, gno, lt_type, last, seq, ts_low, ts_mid, ts_high, length, version = (
            usual.unpack_from(data, HEADER_LEN)
        )
        if (
            lt_type == _LOGICAL_TIMESTAMP_TYPECODE
            and not ts_high & _TS_FLAG_BYTE
            and not version & _VERSION_FLAG
            and 1 <= gno < MAX_GNO
            and (size == 54 or length >= 251)
        ):
            ts = ts_low | ts_mid << 32 | ts_high << 48
            return Gtid(
                header, flags, uuid_text(sid), gno, "", last, seq, ts, ts, length, version,
                version, 0, GtidFormat.SERVER_VERSION,
            )  # fmt: skip
    if size >= _HEAD_CLOCK.size:
        flags, sid, gno, lt_type, last_committed, sequence_number = _HEAD_CLOCK.unpack_from(
            data, HEADER_LEN
        )
        if lt_type != _LOGICAL_TIMESTAMP_TYPECODE:
            raise BinlogError(f"GTID event: unknown logical timestamp type {lt_type}")
        if size == _HEAD_CLOCK.size:
            tail: _Tail = _NO_TAIL
            fmt = GtidFormat.LOGICAL_CLOCK
        else:
            tail, fmt = _decode_gtid_tail(data, HEADER_LEN + _HEAD_CLOCK.size, end)
    elif size == _HEAD.size:
        flags, sid, gno = _HEAD.unpack_from(data, HEADER_LEN)
        last_committed = sequence_number = 0
        tail, fmt = _NO_TAIL, GtidFormat.MYSQL_56
    else:
        raise BinlogError(f"event is too short: {size} bytes of body, needs {_HEAD.size}")
    if not 1 <= gno < MAX_GNO:
        _check_gno(header, gno)
    return Gtid(header, flags, uuid_text(sid), gno, "", last_committed, sequence_number, *tail, fmt)


#: Commit timestamps, transaction length, server versions, commit group ticket.
_Tail = tuple[int, int, int, int, int, int]
_NO_TAIL: _Tail = (0, 0, 0, 0, 0, 0)


def _decode_gtid_tail(data: bytes, pos: int, end: int) -> tuple[_Tail, GtidFormat]:
    """The optional fields after the logical clock: commit timestamps, transaction length,
    server versions and commit group ticket (0 when absent), and the format they make."""
    if end < pos + 7:
        raise _too_short(end)
    immediate_ts = int.from_bytes(data[pos : pos + 7], "little")
    pos += 7
    original_ts = immediate_ts = immediate_ts & ~_TS_FLAG
    if data[pos - 1] & _TS_FLAG_BYTE:
        if end < pos + 7:
            raise _too_short(end)
        original_ts = int.from_bytes(data[pos : pos + 7], "little")
        pos += 7
    if pos == end:
        return (immediate_ts, original_ts, 0, 0, 0, 0), GtidFormat.COMMIT_TIMESTAMPS
    length, pos = _packed(data, pos, end)
    if pos == end:
        return (immediate_ts, original_ts, length, 0, 0, 0), GtidFormat.TRANSACTION_LENGTH
    if end - pos < 4:
        raise _too_short(end)
    version = _U32.unpack_from(data, pos)[0]
    pos += 4
    original_version = immediate_version = version & ~_VERSION_FLAG
    if version & _VERSION_FLAG:
        if end - pos < 4:
            raise _too_short(end)
        original_version = _U32.unpack_from(data, pos)[0]
        pos += 4
    ticket = 0
    if end - pos >= 8:
        ticket = _U64.unpack_from(data, pos)[0]
        pos += 8
    if pos != end:
        raise BinlogError(f"GTID event: {end - pos} unexpected trailing bytes")
    tail: _Tail = (immediate_ts, original_ts, length, immediate_version, original_version, ticket)
    return tail, GtidFormat.SERVER_VERSION


def _too_short(end: int) -> BinlogError:
    return BinlogError(f"event is too short: {end - HEADER_LEN} bytes of body")


def _packed(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """A packed integer at ``pos`` and the position after it; the event ends at ``end``."""
    first = data[pos]
    if first < 251:
        return first, pos + 1
    size = _PACKED_SIZES.get(first)
    if size is None:
        raise BinlogError(f"invalid packed integer prefix 0x{first:02x}")
    if pos + 1 + size > end:
        raise _too_short(end)
    return int.from_bytes(data[pos + 1 : pos + 1 + size], "little"), pos + 1 + size


def restamped_gtid(data: bytes, commit_time_us: int) -> bytes:
    """``data``, a whole untagged GTID event with commit timestamps (equal immediate and
    original ones) and a CRC32, with both timestamps set to ``commit_time_us``, its header's
    timestamp to that second, and its CRC32 computed again: what a source's commit does to a
    transaction encoded beforehand.

    Raises:
        BinlogError: ``data`` is not such an event.
    """
    end = _COMMIT_TIMESTAMP_AT + 7
    if (
        len(data) < end + _CHECKSUM.size
        or data[4] != EventType.GTID
        or data[end - 1] & _TS_FLAG_BYTE
        or not 0 <= commit_time_us < _TS_FLAG
    ):
        raise BinlogError("not a GTID event with one commit timestamp and a checksum")
    stamped = bytearray(data)
    stamped[0:4] = (commit_time_us // 1_000_000).to_bytes(4, "little")
    stamped[_COMMIT_TIMESTAMP_AT:end] = commit_time_us.to_bytes(7, "little")
    body = len(stamped) - _CHECKSUM.size
    _CHECKSUM.pack_into(stamped, body, zlib.crc32(memoryview(stamped)[:body]))
    return bytes(stamped)


def encode_gtid(event: Gtid) -> bytes:
    if event.header.type_code == EventType.GTID_TAGGED:
        return _encode_tagged(event)
    if not 0 <= event.gno <= MAX_GNO:
        raise BinlogError(f"invalid GTID: transaction number {event.gno} out of range")
    parts = [_HEAD.pack(event.flags, uuid_bytes(event.uuid), event.gno)]
    fmt = event.format
    if fmt >= GtidFormat.LOGICAL_CLOCK:
        parts.append(
            _CLOCK.pack(_LOGICAL_TIMESTAMP_TYPECODE, event.last_committed, event.sequence_number)
        )
    if fmt >= GtidFormat.COMMIT_TIMESTAMPS:
        immediate, original = event.immediate_commit_timestamp, event.original_commit_timestamp
        parts.append((immediate | (_TS_FLAG if original != immediate else 0)).to_bytes(7, "little"))
        if original != immediate:
            parts.append(original.to_bytes(7, "little"))
    if fmt >= GtidFormat.TRANSACTION_LENGTH:
        parts.append(pack_int(event.transaction_length))
    if fmt >= GtidFormat.SERVER_VERSION:
        immediate, original = event.immediate_server_version, event.original_server_version
        parts.append(
            (immediate | (_VERSION_FLAG if original != immediate else 0)).to_bytes(4, "little")
        )
        if original != immediate:
            parts.append(original.to_bytes(4, "little"))
        if event.commit_group_ticket:
            parts.append(event.commit_group_ticket.to_bytes(8, "little"))
    try:
        return b"".join(parts)
    except (OverflowError, struct.error) as exc:
        raise BinlogError(f"GTID event field out of range: {exc}") from exc


_TAGGED_FIELDS = (
    "flags",
    "uuid",
    "gno",
    "tag",
    "last_committed",
    "sequence_number",
    "immediate_commit_timestamp",
    "original_commit_timestamp",
    "transaction_length",
    "immediate_server_version",
    "original_server_version",
    "commit_group_ticket",
)
_SIGNED_FIELDS = frozenset({2, 4, 5})


def _decode_tagged(header: EventHeader, body: memoryview) -> Gtid:
    reader = Reader(body)
    version = reader.u8()
    if version != _SERIALIZATION_VERSION:
        raise BinlogError(f"tagged GTID event: unsupported serialization version {version}")
    size = read_varlen(reader)
    last_non_ignorable = read_varlen(reader)
    if size < reader.pos or size > len(body):
        raise BinlogError(f"tagged GTID event: payload size {size} does not fit the event")
    fields = Reader(body, reader.pos, size)
    values: dict[str, object] = {}
    while fields.remaining:
        field_id = read_varlen(fields)
        if field_id >= len(_TAGGED_FIELDS):
            if field_id <= last_non_ignorable:
                raise BinlogError(f"tagged GTID event: unknown mandatory field {field_id}")
            break
        name = _TAGGED_FIELDS[field_id]
        if field_id == 1:
            sid = [read_varlen(fields) for _ in range(16)]
            if max(sid) > 0xFF:
                raise BinlogError("tagged GTID event: invalid UUID byte")
            values[name] = uuid_text(bytes(sid))
        elif field_id == 3:
            values[name] = _tag(fields.bytes(read_varlen(fields)))
        elif field_id in _SIGNED_FIELDS:
            values[name] = _read_signed(fields)
        else:
            values[name] = read_varlen(fields)
    values.setdefault("original_commit_timestamp", values.get("immediate_commit_timestamp", 0))
    values.setdefault("original_server_version", values.get("immediate_server_version", 0))
    if "uuid" not in values or not values.get("tag"):
        raise BinlogError("tagged GTID event without a UUID or a tag")
    event = Gtid(header, **values)  # type: ignore[arg-type]
    if not 0 <= event.flags <= 0xFF:
        raise BinlogError("tagged GTID event: invalid flags")
    _check_gno(header, event.gno)
    return event


def _tag(raw: bytes) -> str:
    tag = raw.decode("ascii", errors="replace")
    if not _is_tag(tag):
        raise BinlogError(f"invalid GTID tag {tag!r}")
    return tag


def _is_tag(tag: str) -> bool:
    return (
        0 < len(tag) <= 32
        and tag.isascii()
        and (tag[0].isalpha() or tag[0] == "_")
        and all(char.isalnum() or char == "_" for char in tag)
        and tag == tag.lower()
    )


def _encode_tagged(event: Gtid) -> bytes:
    if not _is_tag(event.tag):
        raise BinlogError(f"a tagged GTID event needs a valid tag, not {event.tag!r}")
    if min(event.gno, event.last_committed, event.sequence_number) < 0:
        raise BinlogError("tagged GTID event: negative number")
    tag = event.tag.encode("ascii")
    fields: list[tuple[int, bytes]] = [
        (0, write_varlen(event.flags)),
        (1, b"".join(write_varlen(byte) for byte in uuid_bytes(event.uuid))),
        (2, _write_signed(event.gno)),
        (3, write_varlen(len(tag)) + tag),
        (4, _write_signed(event.last_committed)),
        (5, _write_signed(event.sequence_number)),
        (6, write_varlen(event.immediate_commit_timestamp)),
    ]
    if event.original_commit_timestamp != event.immediate_commit_timestamp:
        fields.append((7, write_varlen(event.original_commit_timestamp)))
    fields.append((8, write_varlen(event.transaction_length)))
    fields.append((9, write_varlen(event.immediate_server_version)))
    if event.original_server_version != event.immediate_server_version:
        fields.append((10, write_varlen(event.original_server_version)))
    if event.commit_group_ticket:
        fields.append((11, write_varlen(event.commit_group_ticket)))
    data = b"".join(write_varlen(field_id) + value for field_id, value in fields)
    fixed = 2 + len(data)  # version byte, last_non_ignorable_field_id (0), fields
    size = fixed + 1
    while fixed + len(write_varlen(size)) != size:
        size = fixed + len(write_varlen(size))
    return bytes((_SERIALIZATION_VERSION,)) + write_varlen(size) + b"\x00" + data


# --- Previous_gtids -----------------------------------------------------------------------


def decode_previous_gtids(header: EventHeader, body: memoryview, _phl: int) -> PreviousGtids:
    reader = Reader(body)
    word = reader.u64()
    tagged = (word >> 56) == _TAG_FORMAT
    if tagged:
        count = (word >> 8) & ((1 << 48) - 1)
    elif word >> 56:
        raise BinlogError(f"Previous_gtids event: unknown format {word >> 56}")
    else:
        count = word
    if count * 24 > reader.remaining:
        raise BinlogError(f"event is too short for {count} UUIDs")
    gtids = GtidSet()
    for _ in range(count):
        uuid = uuid_text(reader.bytes(16))
        tag = ""
        if tagged:
            length = read_varlen(reader)
            tag = _tag(reader.bytes(length)) if length else ""
        intervals = reader.u64()
        if intervals * 16 > reader.remaining:
            raise BinlogError(f"event is too short for {intervals} intervals")
        for _ in range(intervals):
            start, end = reader.u64(), reader.u64()
            if not 1 <= start < end <= MAX_GNO + 1:
                raise BinlogError(f"Previous_gtids event: invalid interval {start}-{end}")
            gtids.add_interval(uuid, tag, start, end - 1)
    if reader.remaining:
        raise BinlogError(f"Previous_gtids event: {reader.remaining} unexpected trailing bytes")
    return PreviousGtids(header, gtids, tagged)


def encode_previous_gtids(event: PreviousGtids) -> bytes:
    by_sid: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for uuid, tag, first, last in event.gtids.intervals():
        by_sid.setdefault((uuid, tag), []).append((first, last + 1))
    tagged = event.tagged or any(tag for _, tag in by_sid)
    count = len(by_sid)
    word = (_TAG_FORMAT << 56) | (count << 8) | _TAG_FORMAT if tagged else count
    parts = [word.to_bytes(8, "little")]
    for (uuid, tag), intervals in by_sid.items():
        parts.append(uuid_bytes(uuid))
        if tagged:
            raw = tag.encode("ascii")
            parts.append(write_varlen(len(raw)) + raw)
        parts.append(len(intervals).to_bytes(8, "little"))
        parts.extend(
            first.to_bytes(8, "little") + end.to_bytes(8, "little") for first, end in intervals
        )
    return b"".join(parts)


def encode_gtid_set(gtids: GtidSet) -> bytes:
    """A GTID set in the binary form of a Previous_gtids body (COM_BINLOG_DUMP_GTID's too)."""
    return encode_previous_gtids(PreviousGtids(make_header(EventType.PREVIOUS_GTIDS), gtids))


def decode_gtid_set(data: bytes) -> GtidSet:
    """The GTID set ``encode_gtid_set`` wrote. Raises ``BinlogError``."""
    return decode_previous_gtids(make_header(EventType.PREVIOUS_GTIDS), memoryview(data), 0).gtids
