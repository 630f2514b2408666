"""TRANSACTION_PAYLOAD_EVENT (40): body codec, bounded decompression, splitting (§7.10).

The body starts with (type, length, value) fields in MySQL packed integers: 2 compression
type, 3 uncompressed size (compressed payloads only), 1 payload size, 0 end mark. The payload
holds whole events with log_pos 0 and no checksum; ``binlog.payload`` decodes them.
"""

from __future__ import annotations

from collections.abc import Iterator

import zstandard

from spark_replica.applier_core.binlog.constants import HEADER_LEN
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events.header import Event, EventHeader
from spark_replica.applier_core.binlog.events.payload import CompressionType, TransactionPayload
from spark_replica.applier_core.binlog.packing import Reader, pack_int

#: No payload decompresses to more than this (MySQL's max_allowed_packet ceiling).
MAX_UNCOMPRESSED_PAYLOAD = 1 << 30

_END, _PAYLOAD_SIZE, _COMPRESSION_TYPE, _UNCOMPRESSED_SIZE = 0, 1, 2, 3
_LENGTH_OFFSET = 9
_DECOMPRESSOR = zstandard.ZstdDecompressor()


def decode_transaction_payload(header: EventHeader, body: memoryview, _phl: int) -> Event:
    reader = Reader(body)
    compression: int | None = None
    uncompressed_size = 0
    payload_size: int | None = None
    while True:
        field = reader.packed()
        if field == _END:
            break
        value = Reader(reader.bytes(reader.packed()))
        if field == _COMPRESSION_TYPE:
            compression = value.packed()
        elif field == _UNCOMPRESSED_SIZE:
            uncompressed_size = value.packed()
        elif field == _PAYLOAD_SIZE:
            payload_size = value.packed()
    if compression is None:
        raise BinlogError("Transaction_payload event without a compression type")
    if payload_size is not None and payload_size != reader.remaining:
        raise BinlogError(
            f"Transaction_payload event: payload size {payload_size} does not "
            f"match the {reader.remaining} bytes present"
        )
    return TransactionPayload(header, compression, uncompressed_size, reader.rest())


def _field(field: int, value: int) -> bytes:
    encoded = pack_int(value)
    return pack_int(field) + pack_int(len(encoded)) + encoded


def encode_transaction_payload(event: TransactionPayload) -> bytes:
    parts = [_field(_COMPRESSION_TYPE, event.compression_type)]
    if event.compression_type != CompressionType.NONE:
        parts.append(_field(_UNCOMPRESSED_SIZE, event.uncompressed_size))
    parts += [_field(_PAYLOAD_SIZE, len(event.payload)), pack_int(_END), event.payload]
    return b"".join(parts)


def decompress_payload(event: TransactionPayload) -> bytes:
    """The inner events' bytes, never more than the declared size or the hard cap."""
    if event.compression_type == CompressionType.NONE:
        return event.payload
    if event.compression_type != CompressionType.ZSTD:
        raise BinlogError(f"unsupported transaction compression type {event.compression_type}")
    declared = event.uncompressed_size
    if declared > MAX_UNCOMPRESSED_PAYLOAD:
        raise BinlogError(
            f"compressed transaction declares {declared} bytes, more than the "
            f"{MAX_UNCOMPRESSED_PAYLOAD} allowed"
        )
    limit = declared if declared else MAX_UNCOMPRESSED_PAYLOAD
    chunks: list[bytes] = []
    total = 0
    try:
        with _DECOMPRESSOR.stream_reader(event.payload, read_across_frames=True) as stream:
            while total <= limit:
                chunk = stream.read(limit + 1 - total)
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
    except zstandard.ZstdError as exc:
        raise BinlogError(f"compressed transaction does not decompress: {exc}") from exc
    if total > limit or (declared and total != declared):
        raise BinlogError(
            f"compressed transaction decompressed to {total} bytes or more, declared {declared}"
        )
    return b"".join(chunks)


def split_events(data: bytes | memoryview) -> Iterator[tuple[int, memoryview]]:
    """``(offset, event bytes)`` of back-to-back events without checksums."""
    view = memoryview(data)
    pos, end = 0, len(view)
    while pos < end:
        if end - pos < HEADER_LEN:
            raise BinlogError(f"event is too short: {end - pos} bytes left at offset {pos}")
        length = int.from_bytes(view[pos + _LENGTH_OFFSET : pos + _LENGTH_OFFSET + 4], "little")
        if length < HEADER_LEN or pos + length > end:
            raise BinlogError(f"invalid event length {length} at offset {pos}")
        yield pos, view[pos : pos + length]
        pos += length
