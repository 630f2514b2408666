"""The built-in source's binary log: ``binlog.NNNNNN`` files and ``binlog.index`` in a
directory, appended to by one writer and read by any number of dump threads.

It is the relay log machinery under another name (a MySQL server's binary log and relay log
are one file format and one class there too): the writer flushes each transaction's events
and only then publishes the new end position (WL5721.WRITE.1/2); dump threads read up to the
published end without a lock and wait on it for more (READ.1/END.1). A dump thread holds a
subscription on the file it reads, so ``purge_to`` stops there (WL5721.PURGE.1, T81).

Files rotate at transaction boundaries once past ``max_size`` (max_binlog_size); each starts
with a Format_description (MySQL 8.4, CRC32) and Previous_gtids (every GTID before it), and
ends with a Rotate event naming the next one. ``executed`` (gtid_executed) is recovered at
open from the last file; ``purged`` (gtid_purged) is the first file's Previous_gtids.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

from spark_replica.applier_core.binlog.codecs.gtid import decode_gtid_set
from spark_replica.applier_core.binlog.codecs.registry import encode_event_at
from spark_replica.applier_core.binlog.constants import (
    CHECKSUM_LEN,
    HEADER_LEN,
    EventFlag,
    EventType,
)
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import (
    FormatDescription,
    PreviousGtids,
    Rotate,
    make_header,
)
from spark_replica.applier_core.binlog.file import BinlogFileReader, moved_event, read_raw_events
from spark_replica.applier_core.binlog.relaylog import RelayLog, RelayLogWriter
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.receiver.convert import MysqlTracker

SERVER_VERSION = "8.4.0-spark-replica"
DEFAULT_MAX_SIZE = 1 << 30
BASE_NAME = "binlog"
_NEVER = 1 << 62  # the writer's own size limit: rotation is ours, at transaction ends


class SourceBinlog:
    """The binary log of a built-in source (see the module text). Thread-safe."""

    def __init__(
        self, directory: Path, *, server_id: int = 1, max_size: int = DEFAULT_MAX_SIZE
    ) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.server_id = server_id
        self.max_size = max_size
        self.relay_log = RelayLog(directory, BASE_NAME)
        # _lock guards the writer, _executed and the file starts (one appender at a time).
        self._lock = threading.Lock()
        self._executed = GtidSet()
        self._writer: RelayLogWriter | None = None

    def __repr__(self) -> str:
        return f"<SourceBinlog {self.directory}>"

    def open(self) -> None:
        """Open the files (creating the first), recover gtid_executed, start the writer.

        Raises:
            BinlogError: an unreadable index or file.
        """
        self.relay_log.open()
        names = self.relay_log.files()
        if names:
            path = self.relay_log.path(names[-1])
            self._executed, complete = self._recover(names[-1])
            if complete < path.stat().st_size:  # a transaction cut off by a crash
                self.relay_log.close()
                with open(path, "r+b") as handle:
                    handle.truncate(complete)
                self.relay_log = RelayLog(self.directory, BASE_NAME)  # its end moves back
                self.relay_log.open()
        writer = RelayLogWriter(
            self.relay_log,
            make_header=self._file_header,
            make_rotate=self._rotate_event,
            max_size=_NEVER,
        )
        writer.open()
        self._writer = writer

    def close(self) -> None:
        """Stop writing and wake every dump thread (they end). Idempotent."""
        with self._lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
        self.relay_log.close()

    # -- state -----------------------------------------------------------------------------------

    def executed(self) -> GtidSet:
        """gtid_executed: every GTID written."""
        with self._lock:
            return self._executed.copy()

    def purged(self) -> GtidSet:
        """gtid_purged: the GTIDs of files no longer kept (the first file's Previous_gtids)."""
        names = self.relay_log.files()
        if not names:
            return GtidSet()
        return self.previous_gtids(names[0]) or GtidSet()

    def files(self) -> list[tuple[str, int]]:
        """SHOW BINARY LOGS: each file and its size in bytes."""
        return [(name, self.relay_log.path(name).stat().st_size) for name in self.relay_log.files()]

    def end(self) -> tuple[str, int]:
        """SHOW BINARY LOG STATUS: the file and position written up to."""
        coordinate = self.relay_log.end_coordinate()
        return (coordinate.file, coordinate.offset) if coordinate else ("", 0)

    def previous_gtids(self, name: str) -> GtidSet | None:
        """The Previous_gtids of file ``name``; None when it has none."""
        for _, _, event in BinlogFileReader(self.relay_log.path(name)):
            if isinstance(event, PreviousGtids):
                return event.gtids
            if event.header.type_code not in (EventType.FORMAT_DESCRIPTION, EventType.IGNORABLE):
                return None
        return None

    # -- writing ---------------------------------------------------------------------------------

    def append(self, events: Sequence[bytes], gtid: tuple[str, int] | None = None) -> None:
        """Append one transaction (whole events, checksummed, any ``log_pos``: each is moved
        to where it lands) and publish it; rotate after it when the file is past
        ``max_size``. ``gtid``: its (uuid, gno), added to gtid_executed.

        Raises:
            RuntimeError: the binary log is closed.
        """
        with self._lock:
            writer = self._writer
            if writer is None:
                raise RuntimeError("the binary log is closed")
            for data in events:
                writer.append(moved_event(data, writer.position.offset + len(data), True),
                              flush=False)  # fmt: skip
            writer.flush()
            if gtid is not None:
                self._executed.add(gtid[0], "", gtid[1])
            if writer.position.offset > self.max_size:
                writer.rotate()

    def rotate(self) -> str:
        """FLUSH BINARY LOGS: close the current file and start the next. Returns its name."""
        with self._lock:
            if self._writer is None:
                raise RuntimeError("the binary log is closed")
            return self._writer.rotate()

    def purge_to(self, name: str) -> list[str]:
        """PURGE BINARY LOGS TO ``name``: delete the files before it, but none a dump thread
        is reading nor any after such a file (WL5721.PURGE.1). Returns the files deleted.

        Raises:
            BinlogError: ``name`` is not a listed file.
        """
        names = self.relay_log.files()
        if name not in names:
            raise BinlogError("Target log not found in binlog index", file=name)
        # Held while purging: ``name`` and every file after it stay, even those an earlier
        # PURGE TO a later file marked but could not delete then.
        subscription = self.relay_log.subscribe(name)
        try:
            for earlier in names[: names.index(name)]:
                self.relay_log.mark_applied(earlier)
            return self.relay_log.purge()
        finally:
            subscription.release()

    # -- file events -----------------------------------------------------------------------------

    def _file_header(self) -> bytes:
        """(writer, under _lock or at open) A new file's Format_description and
        Previous_gtids."""
        now = int(time.time())
        fde = FormatDescription.for_server(SERVER_VERSION, server_id=self.server_id,
                                           timestamp=now)  # fmt: skip
        data = encode_event_at(fde, 4, checksum=True)
        header = make_header(EventType.PREVIOUS_GTIDS, timestamp=now, server_id=self.server_id,
                             flags=EventFlag.IGNORABLE)  # fmt: skip
        previous = PreviousGtids(header, self._executed.copy())
        return data + encode_event_at(previous, 4 + len(data), checksum=True)

    def _rotate_event(self, next_name: str) -> bytes:
        assert self._writer is not None
        header = make_header(EventType.ROTATE, timestamp=int(time.time()),
                             server_id=self.server_id)  # fmt: skip
        rotate = Rotate(header, 4, next_name)
        return encode_event_at(rotate, self._writer.position.offset, checksum=True)

    def _recover(self, last: str) -> tuple[GtidSet, int]:
        """gtid_executed (the last file's Previous_gtids and the transactions written whole
        in it) and where the last whole transaction ends: a crash may have cut the last one,
        which is then cut away, as a MySQL server's binary log recovery does."""
        executed = GtidSet()
        tracker = MysqlTracker()
        complete = opened = 4
        for start, end, data in read_raw_events(self.relay_log.path(last)):
            tracker.convert(data)
            if data[4] == EventType.PREVIOUS_GTIDS:
                executed.update(decode_gtid_set(data[HEADER_LEN:-CHECKSUM_LEN]))
            if tracker.started is not None:
                opened = start
            if tracker.ended is not None:
                executed.add(tracker.ended[0], "", tracker.ended[1])
            if tracker.open is None:
                complete = end
        return executed, opened if tracker.open is not None else complete
