"""A dump thread's work: sending a binary log to one replica (WL5721.LOOP.1-WAIT.1).

``BinlogSender.run`` checks the request, then reads the binary log from where the replica
starts up to the published end, without locks, and waits on the end for more, sending a
heartbeat when the replica's heartbeat period passes in silence. Each file is introduced the
way a MySQL source does it: a fake Rotate event naming it (timestamp 0, log_pos 0, the
artificial flag), then its Format_description (in-use flag cleared; log_pos zeroed when the
dump starts past it), then its events, its own Rotate last.

With COM_BINLOG_DUMP_GTID the replica sends the GTIDs it has. The dump starts in the newest
file whose Previous_gtids the replica has, and skips every transaction the replica has; a
heartbeat tells it the position reached after skipped events. It is refused with 1236 when the
source has purged GTIDs the replica lacks, or when the replica has GTIDs of this source that
the source never wrote.

Errors are ``SourceError``; the connection sends them as its ERR packet.
"""

from __future__ import annotations

import struct
import threading
import time
import zlib
from dataclasses import dataclass

from spark_replica.applier_core.binlog.codecs.gtid import decode_gtid_set
from spark_replica.applier_core.binlog.codecs.registry import decode_bytes, encode_event
from spark_replica.applier_core.binlog.constants import CHECKSUM_LEN, HEADER_LEN, EventType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import DEFAULT_FDE, Heartbeat, Rotate, make_header
from spark_replica.applier_core.binlog.relaylog import (
    RelayEvent,
    RelayLogReader,
    RelayLogState,
)
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.receiver.protocol import PacketStream, SourceError, eof_packet
from spark_replica.applier_core.receiver.protocol import lost as connection_lost
from spark_replica.tools.source.binlog import SourceBinlog

ER_SOURCE_FATAL_ERROR_READING_BINLOG = 1236

BINLOG_DUMP_NON_BLOCK = 1
USE_HEARTBEAT_EVENT_V2 = 2

LOG_EVENT_BINLOG_IN_USE_F = 0x1
LOG_EVENT_ARTIFICIAL_F = 0x20
_FLAGS_OFFSET = 17
_LOG_POS_OFFSET = 13
_TIMESTAMP_OFFSET = 0
_CREATED_OFFSET = HEADER_LEN + 2 + 50  # FDE: binlog version u16, server version char[50]
_POLL = 0.5  # how often a waiting dump thread looks at its stop flag (seconds)
_SEND_BYTES = 1 << 16  # events that are ready go out together, this much at a time
#: Events that belong to no transaction: always sent, even while skipping.
_CONTROL = frozenset(
    {
        EventType.FORMAT_DESCRIPTION,
        EventType.PREVIOUS_GTIDS,
        EventType.ROTATE,
        EventType.STOP,
        EventType.HEARTBEAT,
        EventType.HEARTBEAT_V2,
    }
)
_POST_HEADER = DEFAULT_FDE.post_header_by_type
_GTID_TYPES = frozenset({EventType.GTID, EventType.ANONYMOUS_GTID, EventType.GTID_TAGGED})


@dataclass(frozen=True, slots=True)
class DumpRequest:
    """What a replica asked for: COM_BINLOG_DUMP (``gtids`` None) or COM_BINLOG_DUMP_GTID,
    with the session settings of the connection."""

    server_id: int
    flags: int
    file: str = ""
    position: int = 4
    gtids: GtidSet | None = None
    heartbeat_period: float = 0.0
    checksum_aware: bool = True

    @classmethod
    def binlog_dump(cls, body: bytes, **session: object) -> DumpRequest:
        """COM_BINLOG_DUMP's body: position u32, flags u16, server id u32, file name."""
        if len(body) < 10:
            raise _malformed()
        position, flags, server_id = struct.unpack_from("<IHI", body)
        name = body[10:].decode(errors="replace")
        return cls(server_id, flags, name, position, None, **session)  # type: ignore[arg-type]

    @classmethod
    def binlog_dump_gtid(cls, body: bytes, **session: object) -> DumpRequest:
        """COM_BINLOG_DUMP_GTID's body: flags u16, server id u32, name length u32, name,
        position u64, GTID data size u32, the encoded GTID set."""
        try:
            flags, server_id, name_length = struct.unpack_from("<HII", body)
            pos = 10
            name = body[pos : pos + name_length].decode(errors="replace")
            pos += name_length
            position, size = struct.unpack_from("<QI", body, pos)
            pos += 12
            gtids = decode_gtid_set(body[pos : pos + size])
        except (struct.error, BinlogError) as exc:
            raise _malformed() from exc
        return cls(server_id, flags, name, position, gtids, **session)  # type: ignore[arg-type]


class BinlogSender:
    """Sends the binary log to one replica until it goes away or the server stops."""

    def __init__(
        self,
        binlog: SourceBinlog,
        stream: PacketStream,
        request: DumpRequest,
        *,
        server_uuid: str,
        stopping: threading.Event,
    ) -> None:
        self._binlog = binlog
        self._stream = stream
        self._request = request
        self._server_uuid = server_uuid
        self._stopping = stopping
        self._checksum = True
        self._file = ""
        self._position = 0
        self._skipping = False
        self._skipped = False
        self._last_sent = time.monotonic()
        self._out = bytearray()  # packets framed, not yet sent
        self.events_sent = 0
        self.bytes_sent = 0

    def run(self) -> None:
        """Send until the replica disconnects or the server stops; EOF first in non-blocking
        mode once everything published is sent.

        Raises:
            SourceError: the request is refused (1236), the binary log cannot be read, or the
                connection broke (2013).
        """
        request = self._request
        if not request.checksum_aware:
            raise _fatal(
                "Replica can not handle replication events with the checksum that source is "
                f"configured to log; the first event '{self._first_file()}' at 4"
            )
        file, position = self._start()
        try:
            reader = RelayLogReader(self._binlog.relay_log, (file, position))
        except BinlogError as exc:
            raise _fatal(str(exc)) from exc
        with reader:
            try:
                self._send_from(reader, file, position)
            except BinlogError as exc:  # a corrupt event, or a position inside an event
                self._flush()  # what was read before it, then the error
                raise _fatal(str(exc)) from exc

    # -- where to start --------------------------------------------------------------------------

    def _start(self) -> tuple[str, int]:
        request = self._request
        names = self._binlog.relay_log.files()
        if request.gtids is None:
            name = request.file or (names[0] if names else "")
            if name not in names:
                raise _fatal("Could not find first log file name in binary log index file")
            size = self._binlog.relay_log.path(name).stat().st_size
            if request.position < 4:
                raise _fatal("Client requested source to start replication from position < 4.")
            if request.position > size:
                raise _fatal("Client requested source to start replication from position > "
                             "file size")  # fmt: skip
            return name, request.position
        wanted = request.gtids
        executed = self._binlog.executed()
        mine = GtidSet.from_intervals(
            row for row in wanted.intervals() if row[0] == self._server_uuid
        )
        if not mine.is_subset(executed):
            raise _fatal(_MORE_GTIDS)
        purged = self._binlog.purged()
        if not purged.is_subset(wanted):
            raise _fatal(
                "Cannot replicate because the source purged required binary logs. Replicate "
                "the missing transactions from elsewhere, or provision a new replica from "
                "backup. Consider increasing the source's binary log expiration period. The "
                f"GTID set sent by the replica is '{wanted.format(',')}', and the missing "
                f"transactions are '{purged.subtract(wanted).format(',')}'."
            )
        for name in reversed(names):
            try:
                previous = self._binlog.previous_gtids(name)
            except (OSError, BinlogError):  # purged meanwhile: the files after it will do
                continue
            if previous is not None and previous.is_subset(wanted):
                return name, 4
        if not names:
            raise _fatal("Could not find first log file name in binary log index file")
        return names[0], 4

    # -- sending ---------------------------------------------------------------------------------

    def _send_from(self, reader: RelayLogReader, file: str, position: int) -> None:
        request = self._request
        if position > 4:
            self._enter(file, position)
            self._send_fde(file, zero_log_pos=True)
        wait = min(request.heartbeat_period or _POLL, _POLL)
        while not self._stopping.is_set():
            event = reader.poll()
            if event is None:
                if self._skipped:
                    self._heartbeat()
                    self._skipped = False
                if request.flags & BINLOG_DUMP_NON_BLOCK:
                    self._out += self._stream.frame(eof_packet())
                    self._flush()
                    return
                self._flush()  # everything published is sent before waiting for more
                event = reader.next_event(wait)
                if event is None:
                    if self._binlog.relay_log.state is RelayLogState.CLOSED:
                        return
                    self._heartbeat_if_due()
                    self._flush()
                    continue
            self._send(event)
            if len(self._out) >= _SEND_BYTES:
                self._flush()

    def _send(self, event: RelayEvent) -> None:
        if event.file != self._file:
            self._flush()  # the previous file's last events before the next file's first
            self._enter(event.file, event.start)
        data = event.data
        kind = data[4]
        self._position = event.end
        if kind == EventType.FORMAT_DESCRIPTION:
            data = _patched_fde(data, zero_log_pos=False)
        elif kind in _GTID_TYPES:
            self._skipping = self._has(data)
        if self._skipping and kind not in _CONTROL:
            self._skipped = True
            return
        self._write(data)

    def _enter(self, file: str, position: int) -> None:
        """A new file: the fake Rotate that names it."""
        self._file, self._position = file, position
        header = make_header(EventType.ROTATE, timestamp=0, server_id=self._binlog.server_id,
                             flags=LOG_EVENT_ARTIFICIAL_F)  # fmt: skip
        self._write(encode_event(Rotate(header, position, file), checksum=True, log_pos=0))

    def _send_fde(self, file: str, *, zero_log_pos: bool) -> None:
        """The file's Format_description, read from its start (the dump starts past it)."""
        path = self._binlog.relay_log.path(file)
        with open(path, "rb") as handle:
            head = handle.read(4 + HEADER_LEN)
            length = int.from_bytes(head[4 + 9 : 4 + 13], "little")
            data = head[4:] + handle.read(length - HEADER_LEN)
        self._write(_patched_fde(data, zero_log_pos=zero_log_pos))

    def _has(self, gtid_event: bytes) -> bool:
        """Whether the replica has the transaction this GTID event starts."""
        wanted = self._request.gtids
        if wanted is None or gtid_event[4] == EventType.ANONYMOUS_GTID:
            return False
        event = decode_bytes(gtid_event, True, _POST_HEADER, {})
        return wanted.contains(event.uuid, event.tag, event.gno)  # type: ignore[attr-defined]

    def _heartbeat_if_due(self) -> None:
        period = self._request.heartbeat_period
        if period > 0 and time.monotonic() - self._last_sent >= period:
            self._heartbeat()

    def _heartbeat(self) -> None:
        """A heartbeat: the file and position reached (v2 when the replica asked for it)."""
        v2 = self._request.flags & USE_HEARTBEAT_EVENT_V2
        kind = EventType.HEARTBEAT_V2 if v2 else EventType.HEARTBEAT
        header = make_header(kind, timestamp=0, server_id=self._binlog.server_id,
                             flags=LOG_EVENT_ARTIFICIAL_F)  # fmt: skip
        event = Heartbeat(header, self._file, self._position)
        self._write(encode_event(event, checksum=True, log_pos=self._position & 0xFFFFFFFF))

    def _write(self, data: bytes) -> None:
        """Queue one event packet; ``_flush`` sends what is queued in one write."""
        self._out += self._stream.frame(b"\x00" + data)
        self.events_sent += 1
        self.bytes_sent += len(data)

    def _flush(self) -> None:
        if not self._out:
            return
        try:
            self._stream.sock_send(self._out)
        except SourceError:
            raise connection_lost() from None
        self._out = bytearray()
        self._last_sent = time.monotonic()

    def _first_file(self) -> str:
        names = self._binlog.relay_log.files()
        return names[0] if names else ""


def _patched_fde(data: bytes, *, zero_log_pos: bool) -> bytes:
    """A Format_description as a dump sends it: not in use, optionally at log_pos 0 with no
    creation time; its CRC32 computed again."""
    patched = bytearray(data)
    flags = int.from_bytes(patched[_FLAGS_OFFSET : _FLAGS_OFFSET + 2], "little")
    patched[_FLAGS_OFFSET : _FLAGS_OFFSET + 2] = (flags & ~LOG_EVENT_BINLOG_IN_USE_F).to_bytes(
        2, "little"
    )
    if zero_log_pos:
        patched[_LOG_POS_OFFSET : _LOG_POS_OFFSET + 4] = bytes(4)
        patched[_CREATED_OFFSET : _CREATED_OFFSET + 4] = bytes(4)
    body_end = len(patched) - CHECKSUM_LEN
    patched[body_end:] = struct.pack("<I", zlib.crc32(patched[:body_end]))
    return bytes(patched)


def _fatal(message: str) -> SourceError:
    return SourceError(ER_SOURCE_FATAL_ERROR_READING_BINLOG, message)


def _malformed() -> SourceError:
    return SourceError(1835, "Malformed communication packet.", "HY000")


_MORE_GTIDS = (
    "Replica has more GTIDs than the source has, using the source's SERVER_UUID. This may "
    "indicate that the end of the binary log was truncated or that the last binary log file "
    "was lost, e.g., after a power or disk failure when sync_binlog != 1. The source may or "
    "may not have rolled back transactions that were already replicated to the replica. "
    "Suggest to replicate any transactions that source has rolled back from replica to "
    "source, and/or commit empty transactions on source to account for transactions that "
    "have been committed on source but are not included in GTID_EXECUTED."
)
