"""A source's events in the form both appliers read: a MySQL 8.4 source's.

A MySQL source's events (and the built-in source's) go through as they are
(``MysqlTracker``); the tracker only follows where transactions start and end.


The relay log of a channel on a MariaDB source holds what a MySQL source would have sent
(docs/decisions/0009):
- its Format_description becomes a MySQL 8.4 one (same server id, version text, checksum);
- each MariaDB GTID event (162) becomes a GTID event (33) holding the GTID under its encoded
  UUID, with the logical clock ``CommitGroups`` derives from the commit ids, followed by a
  BEGIN Query event unless the transaction is standalone (MariaDB writes no BEGIN), or by
  ``XA START xid`` when it is flagged PREPARED_XA (the first phase of an XA transaction, which
  ends with an XA_prepare event as MySQL's does; its ``XA COMMIT``/``XA ROLLBACK`` comes as a
  standalone transaction: docs/decisions/0015);
- Annotate_rows (160), Binlog_checkpoint (161) and Gtid_list (163) are left out: they only
  describe, and the replica keeps its own GTID state;
- every other event (Query, Table_map, rows events, Xid, Rotate) goes through unchanged.
Converted events keep the source's log positions in their headers, so Exec_Source_Log_Pos
still names the source's binary log.
"""

from __future__ import annotations

from spark_replica.applier_core.binlog.codecs.registry import encode_event
from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import (
    FormatDescription,
    Gtid,
    MariadbGtid,
    MariadbGtidFlag,
    Query,
    make_header,
)
from spark_replica.applier_core.binlog.stream import StreamDecoder
from spark_replica.applier_core.binlog.versions import SourceVersion
from spark_replica.applier_core.receiver.mariadb import CommitGroups, gtid_in_set

ANNOTATE_ROWS = 160
BINLOG_CHECKPOINT = 161
GTID_LIST = 163
_DROPPED = frozenset({ANNOTATE_ROWS, BINLOG_CHECKPOINT, GTID_LIST})


class MariadbConverter:
    """Converts one MariaDB dump, event by event, in order (one owner)."""

    def __init__(self) -> None:
        self._decoder = StreamDecoder()
        self._groups = CommitGroups()
        self._checksum = True
        self._version = 0  # the source's, from its Format_description event
        self._open: tuple[str, int, bool] | None = None  # uuid, gno, standalone
        #: ``(uuid, gno)`` of the transaction the last converted event ended, else None.
        self.ended: tuple[str, int] | None = None
        #: ``(uuid, gno)`` of the transaction the last converted event started, else None.
        self.started: tuple[str, int] | None = None
        #: MariaDB's GTID event has no commit times (the header's second stands in).
        self.commit_times: tuple[float, float] = (0.0, 0.0)

    def __repr__(self) -> str:
        return f"<MariadbConverter checksum={self._checksum}>"

    def convert(self, raw: bytes) -> list[bytes]:
        """The events to write for the source's event ``raw`` (none, one or two).

        Raises:
            BinlogError: ``raw`` is not a whole, valid event.
        """
        self.ended = self.started = None
        kind = raw[4]
        if kind in _DROPPED:
            self._decoder.decode(raw)  # checked all the same
            return []
        if kind in _ENDS or (kind == EventType.QUERY and self._open is not None):
            self._track_end(raw)
        if kind not in (EventType.FORMAT_DESCRIPTION, 162):
            return [raw]
        event = self._decoder.decode(raw)
        if isinstance(event, FormatDescription):
            return [self._format_description(event)]
        assert isinstance(event, MariadbGtid)
        return self._gtid(event)

    def _track_end(self, raw: bytes) -> None:
        """An Xid, the Query of a standalone transaction (DDL) or a COMMIT ends the open
        transaction."""
        opened = self._open
        if opened is None:
            return
        if raw[4] == EventType.QUERY and not opened[2]:
            event = self._decoder.decode(raw)
            if not (isinstance(event, Query) and event.query.upper() == "COMMIT"):
                return
        self.ended, self._open = (opened[0], opened[1]), None

    def _format_description(self, event: FormatDescription) -> bytes:
        self._groups.reset()  # a new binary log file: the clock starts again
        self._checksum = event.checksums
        self._version = SourceVersion.parse(event.server_version).number
        header = event.header
        mysql = FormatDescription.for_server(
            event.server_version, checksum=event.checksums, server_id=header.server_id,
            timestamp=header.timestamp, create_timestamp=event.create_timestamp,
            flags=header.flags,
        )  # fmt: skip
        return encode_event(mysql, checksum=event.checksums, log_pos=header.log_pos)

    def _gtid(self, event: MariadbGtid) -> list[bytes]:
        header = event.header
        uuid, gno = gtid_in_set(event)
        self._open = (uuid, gno, event.standalone)
        self.started = (uuid, gno)
        last_committed, sequence_number = self._groups.next(event)
        committed_us = header.timestamp * 1_000_000
        gtid = Gtid(
            make_header(EventType.GTID, timestamp=header.timestamp, server_id=header.server_id),
            flags=0,
            uuid=uuid,
            gno=gno,
            last_committed=last_committed,
            sequence_number=sequence_number,
            immediate_commit_timestamp=committed_us,
            original_commit_timestamp=committed_us,
            immediate_server_version=self._version,
            original_server_version=self._version,
        )
        events = [encode_event(gtid, checksum=self._checksum, log_pos=header.log_pos)]
        if not event.standalone:
            opening = "BEGIN"
            if event.flags & MariadbGtidFlag.PREPARED_XA:
                opening = f"XA START {xid_text(event.extra)}"
            begin = Query.build(
                make_header(
                    EventType.QUERY, timestamp=header.timestamp, server_id=header.server_id
                ),
                opening,
            )
            events.append(encode_event(begin, checksum=self._checksum, log_pos=header.log_pos))
        return events


def xid_text(extra: bytes) -> str:
    """The xid a MariaDB GTID event flagged PREPARED_XA or COMPLETED_XA carries (format id,
    4 bytes; gtrid and bqual lengths, 1 byte each; gtrid; bqual), in MySQL's logged form.

    >>> xid_text(bytes([7, 0, 0, 0, 1, 1]) + b"bq")
    "X'62',X'71',7"

    Raises:
        BinlogError: ``extra`` is too short for the xid it announces.
    """
    if len(extra) < 6 or len(extra) < 6 + extra[4] + extra[5]:
        raise BinlogError("MariaDB GTID: the XA transaction's xid is cut short")
    format_id = int.from_bytes(extra[:4], "little", signed=True)
    gtrid_end = 6 + extra[4]
    gtrid, bqual = extra[6:gtrid_end], extra[gtrid_end : gtrid_end + extra[5]]
    return f"X'{gtrid.hex()}',X'{bqual.hex()}',{format_id}"


_ENDS = frozenset({EventType.XID, EventType.XA_PREPARE})
_COMMIT_TYPES = frozenset({EventType.XID, EventType.XA_PREPARE, EventType.TRANSACTION_PAYLOAD})
_GTID_TYPES = frozenset({EventType.GTID, EventType.GTID_TAGGED})


class MysqlTracker:
    """Passes a MySQL source's events through unchanged, following its transactions: a GTID
    event starts one; an Xid, a COMMIT query, a compressed transaction's payload, or the
    single Query of a DDL (a GTID event not followed by BEGIN) ends it; ``XA START`` opens a
    body as BEGIN does, and an XA_prepare event ends it. Same interface as
    ``MariadbConverter``."""

    def __init__(self) -> None:
        self._decoder = StreamDecoder()
        self._open: tuple[str, int] | None = None
        self._began = False
        self.ended: tuple[str, int] | None = None
        self.started: tuple[str, int] | None = None
        #: The original and immediate commit times (epoch seconds) of the transaction started
        #: last, from its GTID event.
        self.commit_times: tuple[float, float] = (0.0, 0.0)

    def __repr__(self) -> str:
        return f"<MysqlTracker open={self._open}>"

    @property
    def open(self) -> tuple[str, int] | None:
        """The transaction in progress (begun, not yet ended), if any."""
        return self._open

    def convert(self, raw: bytes) -> list[bytes]:
        """``[raw]``; ``started``/``ended`` tell what it did to the transaction in progress.

        Raises:
            BinlogError: ``raw`` is not a whole, valid event.
        """
        self.ended = self.started = None
        kind = raw[4]
        if kind == EventType.FORMAT_DESCRIPTION or kind in _GTID_TYPES:
            event = self._decoder.decode(raw)
            if isinstance(event, Gtid) and not event.anonymous:
                self._open, self._began = (event.uuid, event.gno), False
                self.started = self._open
                immediate = event.immediate_commit_timestamp / 1e6
                original = event.original_commit_timestamp / 1e6 or immediate
                self.commit_times = (original, immediate)
        elif self._open is not None:
            if kind in _COMMIT_TYPES:
                self.ended, self._open = self._open, None
            elif kind == EventType.QUERY:
                event = self._decoder.decode(raw)
                text = event.query.strip().upper() if isinstance(event, Query) else ""
                if (text == "BEGIN" or text.startswith("XA START")) and not self._began:
                    self._began = True
                elif not self._began or text in ("COMMIT", "ROLLBACK"):
                    self.ended, self._open = self._open, None
        return [raw]
