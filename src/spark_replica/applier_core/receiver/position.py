"""Where a receiver has read its source's binary log up to: Source_Log_File and
Read_Source_Log_Pos (``mysql.slave_master_info``), followed from the events themselves.

A Rotate event (the source's own at a file's end, or the fake one a dump starts each file
with) names the file and the position of its next event; every other event's header holds,
in ``log_pos``, where it ends in the source's file (0 in events a source makes up, which do
not move the position). A Rotate's body may end with a CRC32 (the source's checksum), told
apart by checking it: the fake Rotate comes before the Format_description that would say.
"""

from __future__ import annotations

import struct
import zlib

from spark_replica.applier_core.binlog.constants import CHECKSUM_LEN, HEADER_LEN, EventType

_LOG_POS = struct.Struct("<I")
_LOG_POS_OFFSET = 13
_ROTATE_POSITION = struct.Struct("<Q")


class ReadPosition:
    """The source file and position read up to. One owner (the receiver thread)."""

    __slots__ = ("file", "position")

    def __init__(self, file: str = "", position: int = 4) -> None:
        self.file = file
        self.position = position

    def __repr__(self) -> str:
        return f"<ReadPosition {self.file}:{self.position}>"

    def follow(self, raw: bytes) -> bool:
        """Move past the source's event ``raw``. Returns True when it named a new file."""
        if raw[4] == EventType.ROTATE and len(raw) >= HEADER_LEN + 8:
            body_end = len(raw)
            if body_end - CHECKSUM_LEN > HEADER_LEN + 8 and _LOG_POS.unpack_from(
                raw, body_end - CHECKSUM_LEN
            )[0] == zlib.crc32(memoryview(raw)[: body_end - CHECKSUM_LEN]):
                body_end -= CHECKSUM_LEN
            name = raw[HEADER_LEN + 8 : body_end].decode(errors="replace")
            (position,) = _ROTATE_POSITION.unpack_from(raw, HEADER_LEN)
            changed = name != self.file
            self.file, self.position = name, position
            return changed
        (end,) = _LOG_POS.unpack_from(raw, _LOG_POS_OFFSET)
        if end:
            self.position = end
        return False
