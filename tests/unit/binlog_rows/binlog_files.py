"""A minimal binary log file walker for the row codec tests.

It splits a file into events (magic, then 19-byte headers whose ``event_length`` is at offset
9), learns the post-header lengths and the checksum algorithm from the Format_description
event, strips CRC32 trailers, and opens Transaction_payload events (zstd) so the row events
inside them are seen too. It is deliberately independent of the codec under test.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spark_replica.applier_core.binlog.events import EventHeader as Header

#: ``shared/fixtures/binlogs`` beside the repository.
FIXTURES = Path(__file__).resolve().parents[4] / "shared" / "fixtures" / "binlogs"

MAGIC = b"\xfebin"
HEADER = struct.Struct("<IBIIIH")
FORMAT_DESCRIPTION = 15
TABLE_MAP = 19
TRANSACTION_PAYLOAD = 40
ROWS_TYPES = frozenset({23, 24, 25, 30, 31, 32, 39})


@dataclass(frozen=True)
class RawEvent:
    offset: int
    header: Header
    body: bytes
    post_header_len: int
    #: True for events found inside a Transaction_payload event.
    inner: bool = False


def _fde_checksum(event: bytes) -> tuple[int, bool]:
    """(checksum algorithm, whether the FDE carries the algorithm byte)."""
    body = bytearray(event)
    crc = struct.unpack_from("<I", body, len(body) - 4)[0]
    flags = struct.unpack_from("<H", body, 17)[0]
    struct.pack_into("<H", body, 17, flags & ~1)
    if zlib.crc32(bytes(body[:-4])) == crc:
        return event[-5], True
    if len(event) >= 5 and event[-5] == 0 and event[-4:] == b"\x00\x00\x00\x00":
        return 0, True
    return 0, False


def _split(
    data: bytes, start: int, post_header: list[int], checksum: bool, inner: bool
) -> Iterator[RawEvent]:
    pos = start
    while pos + HEADER.size <= len(data):
        header = Header(*HEADER.unpack_from(data, pos))
        length = header.event_length
        if length < HEADER.size or pos + length > len(data):
            return
        event = data[pos : pos + length]
        end = length - 4 if checksum else length
        body = event[HEADER.size : end]
        type_code = header.type_code
        post = post_header[type_code - 1] if 0 < type_code <= len(post_header) else 0
        yield RawEvent(pos, header, body, post, inner)
        pos += length


def read_events(path: Path | str) -> Iterator[RawEvent]:
    """Every event of a file, plus the events inside Transaction_payload events."""
    import zstandard

    data = Path(path).read_bytes()
    if data[:4] != MAGIC:
        raise ValueError(f"{path}: not a binary log")
    pos = 4
    header = Header(*HEADER.unpack_from(data, pos))
    if header.type_code != FORMAT_DESCRIPTION:
        raise ValueError(f"{path}: no Format_description event")
    fde = data[pos : pos + header.event_length]
    alg, has_alg = _fde_checksum(fde)
    body = fde[HEADER.size :]
    table_end = len(body) - (5 if has_alg else 0)
    post_header = list(body[57:table_end])
    checksum = alg == 1
    for event in _split(data, 4, post_header, checksum, inner=False):
        yield event
        if event.header.type_code == TRANSACTION_PAYLOAD:
            payload = _payload(event.body)
            if payload is not None:
                raw = zstandard.ZstdDecompressor().decompressobj().decompress(payload)
                yield from _split(raw, 0, post_header, False, inner=True)


def _packed(data: bytes, pos: int) -> tuple[int, int]:
    first = data[pos]
    if first < 251:
        return first, pos + 1
    size = {0xFC: 2, 0xFD: 3, 0xFE: 8}[first]
    return int.from_bytes(data[pos + 1 : pos + 1 + size], "little"), pos + 1 + size


def _payload(body: bytes) -> bytes | None:
    pos = 0
    compression = 0
    while pos < len(body):
        field, pos = _packed(body, pos)
        if field == 0:
            break
        length, pos = _packed(body, pos)
        value, _ = _packed(body, pos)
        if field == 2:
            compression = value
        pos += length
    return body[pos:] if compression == 0 else None


def row_fixtures() -> list[str]:
    """Names of the fixtures that hold Table_map and rows events."""
    names = []
    for path in sorted(FIXTURES.iterdir()):
        if path.name == "README.md":
            continue
        try:
            types = {event.header.type_code for event in read_events(path)}
        except (ValueError, KeyError, IndexError, struct.error):
            continue
        if TABLE_MAP in types and types & ROWS_TYPES:
            names.append(path.name)
    return names


@dataclass
class Decoded:
    """Every Table_map and rows event of a file, decoded, with the raw events."""

    table_maps: list[tuple[RawEvent, Any]]
    rows: list[tuple[RawEvent, Any]]


def decode_file(path: Path | str) -> Decoded:
    from spark_replica.applier_core.binlog.rows import decode_rows_event, decode_table_map

    maps: dict[int, Any] = {}
    out = Decoded([], [])
    for event in read_events(path):
        type_code = event.header.type_code
        if type_code == TABLE_MAP:
            table_map = decode_table_map(
                event.header, memoryview(event.body), event.post_header_len
            )
            maps[table_map.table_id] = table_map
            out.table_maps.append((event, table_map))
        elif type_code in ROWS_TYPES:
            rows = decode_rows_event(
                event.header, memoryview(event.body), event.post_header_len, maps
            )
            out.rows.append((event, rows))
    return out


def write_binlog(path: Path, events: list[tuple[int, int, bytes]]) -> None:
    """A binary log file: the Format_description event of a 5.7.20 server (checksums off),
    then ``(type code, flags, body)`` events with correct lengths and positions."""
    fde_source = FIXTURES / "mysql-bin.checksum-none"
    data = fde_source.read_bytes()
    length = HEADER.unpack_from(data, 4)[3]
    out = bytearray(data[: 4 + length])
    for type_code, flags, body in events:
        size = HEADER.size + len(body)
        out += HEADER.pack(1700000000, type_code, 1, size, len(out) + size, flags) + body
    path.write_bytes(bytes(out))
