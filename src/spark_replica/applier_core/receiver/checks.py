"""What the receiver checks in each event from its source before the relay log gets it.

An event must be whole: at least a header, and exactly as long as its header says. Once a
Format_description has said the source writes CRC32 checksums (its algorithm byte, just
before its own checksum), every event's checksum must match, as MySQL's receiver checks it
on the network (ER_NETWORK_READ_EVENT_CHECKSUM_FAILURE). Events before the first
Format_description (the dump's fake Rotate) are not checked for a checksum: whether they
carry one is not known yet.

A broken event is never written: the relay log only ever holds whole, checked events.
"""

from __future__ import annotations

import struct
import zlib

from spark_replica.applier_core.binlog.constants import (
    CHECKSUM_LEN,
    CRC32_RESIDUE,
    HEADER_LEN,
    EventType,
)
from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.receiver.protocol import SourceError

#: MySQL 8's code (13122) for an event the receiver cannot queue; 5.7 used 1595.
ER_REPLICA_RELAY_LOG_WRITE_FAILURE = int(ErrorCode.REPLICA_RELAY_LOG_WRITE_FAILURE)
ER_NETWORK_READ_EVENT_CHECKSUM_FAILURE = 1743
_U32 = struct.Struct("<I")
_LENGTH_OFFSET = 9
_CRC32 = 1


class EventCheck:
    """Checks a source's events in order. One owner (the receiver thread)."""

    __slots__ = ("checksum",)

    def __init__(self) -> None:
        #: Whether the source writes checksums; None before its first Format_description.
        self.checksum: bool | None = None

    def check(self, raw: bytes) -> None:
        """Raises ``SourceError``: 13122 for an event that is not whole, 1743 for a checksum
        that does not match."""
        if len(raw) < HEADER_LEN or _U32.unpack_from(raw, _LENGTH_OFFSET)[0] != len(raw):
            raise SourceError(
                ER_REPLICA_RELAY_LOG_WRITE_FAILURE,
                "Relay log write failure: could not queue event from source",
            )
        if raw[4] == EventType.FORMAT_DESCRIPTION:
            self.checksum = len(raw) > HEADER_LEN + CHECKSUM_LEN and raw[-5] == _CRC32
        if self.checksum and zlib.crc32(raw) != CRC32_RESIDUE:
            raise SourceError(
                ER_NETWORK_READ_EVENT_CHECKSUM_FAILURE,
                "Replication event checksum verification failed while reading from network.",
            )
