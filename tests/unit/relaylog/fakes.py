"""Synthetic raw events: a 19-byte common header and a payload, no checksum."""

from __future__ import annotations

import struct

from spark_replica.applier_core.binlog.constants import HEADER_LEN, EventType

_HEADER = struct.Struct("<IBIIIH")


def make_event(
    type_code: int = EventType.QUERY, payload: bytes = b"", *, log_pos: int = 0
) -> bytes:
    """timestamp, type, server_id, event_length, log_pos, flags, then ``payload``."""
    return _HEADER.pack(0, type_code, 1, HEADER_LEN + len(payload), log_pos, 0) + payload


def make_header() -> bytes:
    """A stand-in for Format_description + Previous_gtids."""
    return make_event(EventType.FORMAT_DESCRIPTION, b"F" * 40) + make_event(
        EventType.PREVIOUS_GTIDS, b"\x00" * 8
    )


def make_rotate(next_name: str) -> bytes:
    return make_event(EventType.ROTATE, struct.pack("<Q", 4) + next_name.encode())


def rotate_target(event: bytes) -> str:
    """The file name a ``make_rotate`` event points to."""
    return event[HEADER_LEN + 8 :].decode()


def numbered(index: int, size: int) -> bytes:
    """A QUERY event of exactly ``size`` bytes whose payload starts with ``index``."""
    assert size >= HEADER_LEN + 4
    body = struct.pack("<I", index) + bytes([index % 251]) * (size - HEADER_LEN - 4)
    return make_event(EventType.QUERY, body)


def payload_index(event: bytes) -> int:
    return int(struct.unpack_from("<I", event, HEADER_LEN)[0])


HEADER = make_header()
