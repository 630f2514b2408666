"""Raw event framing: the few common-header fields a relay log needs (mysql-reference §7.1).

A relay log never decodes events. It needs only the 19-byte common header: the type code at
offset 4 and ``event_length`` (u32 little-endian, header and checksum included) at offset 9.
"""

from __future__ import annotations

import logging
import os
import struct
from dataclasses import dataclass

from spark_replica.applier_core.binlog.constants import HEADER_LEN, MAGIC
from spark_replica.applier_core.binlog.errors import BinlogError

logger = logging.getLogger(__name__)

TYPE_OFFSET = 4
LENGTH_OFFSET = 9
U32 = struct.Struct("<I")
"""The little-endian u32 of ``event_length``."""
#: Bytes ``scan_tail`` reads at once (one read per event header was its cost at start).
_SCAN_WINDOW = 1 << 20


def event_length(data: bytes | memoryview, at: int = 0) -> int:
    """The ``event_length`` field of the common header starting at ``data[at]``."""
    return int(U32.unpack_from(data, at + LENGTH_OFFSET)[0])


def event_type(header: bytes | memoryview) -> int:
    return header[TYPE_OFFSET]


def check_length(length: int, *, file: str, position: int) -> None:
    """Raise when a declared event length cannot hold the common header."""
    if length < HEADER_LEN:
        raise BinlogError(
            f"corrupt event: declared length {length} is below the {HEADER_LEN}-byte header",
            file=file,
            position=position,
        )


def check_whole_events(data: bytes, what: str) -> int | None:
    """Check that ``data`` is a sequence of whole events; return the last one's type.

    Raises:
        BinlogError: an ``event_length`` field disagrees with the bytes given.
    """
    offset = 0
    last: int | None = None
    while offset < len(data):
        if len(data) - offset < HEADER_LEN:
            raise BinlogError(f"{what}: {len(data) - offset} bytes left at offset {offset}, "
                              f"less than an event header")  # fmt: skip
        length = event_length(data, offset)
        if length < HEADER_LEN or offset + length > len(data):
            raise BinlogError(f"{what}: event at offset {offset} declares length {length}, "
                              f"{len(data) - offset} bytes given")  # fmt: skip
        last = data[offset + TYPE_OFFSET]
        offset += length
    return last


def check_magic(head: bytes, *, file: str) -> None:
    if head != MAGIC:
        raise BinlogError(
            f"not a binary log file: bad magic number {head.hex()!r}, expected {MAGIC.hex()!r}",
            file=file,
            position=0,
        )


def pread_exact(fd: int, size: int, offset: int) -> bytes:
    """``size`` bytes at ``offset``, or fewer only at the end of the file."""
    chunks: list[bytes] = []
    while size > 0:
        chunk = os.pread(fd, size, offset)
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
        offset += len(chunk)
    return b"".join(chunks)


@dataclass(frozen=True, slots=True)
class TailRepair:
    """What opening a relay log cut from the end of its last file."""

    file: str
    position: int
    """Where the file now ends (the end of its last whole event)."""
    removed_bytes: int
    cause: str


@dataclass(frozen=True, slots=True)
class TailScan:
    """The last file of a relay log, checked event by event."""

    end: int
    """The end of the last whole event (4 for a file holding only the magic number)."""
    last_type: int | None
    """Type code of the last whole event; None when the file holds no event."""
    repair: TailRepair | None


def scan_tail(fd: int, file: str) -> TailScan:
    """Walk every event header of an open file; trim a partial or corrupt tail.

    The file must start with the magic number (a shorter file that is a prefix of it, e.g.
    after a crash during creation, is completed). Events are followed by their declared
    lengths; the first one that runs past the end of the file, or declares a length below the
    header size, and everything after it, is truncated away and reported.

    Raises:
        BinlogError: the file does not start with the magic number.
        OSError: reading or truncating failed.
    """
    size = os.fstat(fd).st_size
    if size < len(MAGIC):
        head = pread_exact(fd, size, 0)
        if not MAGIC.startswith(head):
            check_magic(head, file=file)
        os.pwrite(fd, MAGIC, 0)
        os.fsync(fd)
        logger.warning("relay log file '%s' held %d bytes of its magic number; completed it",
                       file, size)  # fmt: skip
        return TailScan(len(MAGIC), None, None)
    check_magic(pread_exact(fd, len(MAGIC), 0), file=file)
    offset = len(MAGIC)
    last_offset = -1  # where the last whole event starts
    cause = ""
    unpack = U32.unpack_from
    window, window_start = b"", offset  # file bytes read ahead, from ``window_start``
    window_end = offset
    # The loop runs once per event of the file: kept to the fewest operations.
    while offset < size:
        if offset + HEADER_LEN > window_end:
            window, window_start = pread_exact(fd, _SCAN_WINDOW, offset), offset
            window_end = offset + len(window)
            if window_end - offset < HEADER_LEN:
                cause = f"partial event header ({window_end - offset} bytes)"
                break
        length = unpack(window, offset - window_start + LENGTH_OFFSET)[0]
        if length < HEADER_LEN:
            cause = f"corrupt event length {length}"
            break
        if offset + length > size:
            cause = f"partial event: length {length}, {size - offset} bytes written"
            break
        last_offset = offset
        offset += length
    last = None if last_offset < 0 else pread_exact(fd, 1, last_offset + TYPE_OFFSET)[0]
    if offset == size:
        return TailScan(offset, last, None)
    os.ftruncate(fd, offset)
    os.fsync(fd)
    repair = TailRepair(file, offset, size - offset, cause)
    logger.warning("relay log file '%s': cut %d bytes at position %d (%s)",
                   file, repair.removed_bytes, offset, cause)  # fmt: skip
    return TailScan(offset, last, repair)
