"""Group a stream of events into transactions.

A transaction starts with a GTID event (MySQL, anonymous or MariaDB), a ``BEGIN`` query, or
the first event of a statement; it ends with an Xid event, a ``COMMIT``/``ROLLBACK`` query, an
XA_prepare event, a Transaction_payload event (which holds the whole transaction), or, when no
``BEGIN`` opened it, with its single statement (DDL). MariaDB's GTID event stands for
``BEGIN`` unless flagged standalone.

A transaction that another one cuts off (a new GTID or ``BEGIN``, or a Format_description
event from a restarted source) is reported with status TRUNCATED; one the stream leaves open
at its end, by ``finish``, with status INCOMPLETE. Neither is an error.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from spark_replica.applier_core.binlog.constants import EventFlag
from spark_replica.applier_core.binlog.constants import EventType as T
from spark_replica.applier_core.binlog.events import (
    Event,
    FormatDescription,
    Gtid,
    MariadbGtid,
    MariadbGtidFlag,
    Query,
)

Position = tuple[str, int]  # (file, offset)

_GTID_TYPES = frozenset({T.GTID, T.ANONYMOUS_GTID, T.GTID_TAGGED, T.MARIADB_GTID})
#: Events outside any transaction; inside one they are kept in place and do not end it.
#: (Incidents and ignorable events are standalone too when no transaction is open.)
_CONTROL_TYPES = frozenset(
    {
        T.FORMAT_DESCRIPTION,
        T.ROTATE,
        T.PREVIOUS_GTIDS,
        T.STOP,
        T.HEARTBEAT,
        T.HEARTBEAT_V2,
        T.MARIADB_GTID_LIST,
        T.MARIADB_BINLOG_CHECKPOINT,
        T.IGNORABLE,
    }
)
#: Events that open a multi-statement body when no transaction is open.
_BODY_TYPES = frozenset(
    {
        T.TABLE_MAP,
        T.ROWS_QUERY,
        T.MARIADB_ANNOTATE_ROWS,
        T.WRITE_ROWS_V1,
        T.UPDATE_ROWS_V1,
        T.DELETE_ROWS_V1,
        T.WRITE_ROWS,
        T.UPDATE_ROWS,
        T.DELETE_ROWS,
        T.PARTIAL_UPDATE_ROWS,
        T.XID,
    }
)
_TERMINATORS = frozenset({T.XID, T.XA_PREPARE, T.TRANSACTION_PAYLOAD})
#: Events that end a transaction no BEGIN opened (a single statement).
_STATEMENT_TYPES = frozenset({T.QUERY, T.EXECUTE_LOAD_QUERY, T.INCIDENT})


class TransactionStatus(enum.Enum):
    COMPLETE = "complete"
    TRUNCATED = "truncated"  # cut off by the start of another transaction
    INCOMPLETE = "incomplete"  # the stream ended before its end


@dataclass(frozen=True, slots=True)
class Transaction:
    """One transaction's events, from its first event to its last (both included).

    ``last_committed``/``sequence_number`` come from the MySQL GTID event (0 when unknown).
    ``clock_reset``: a source's Format_description event came since the previous transaction,
    so the logical clock numbering starts again (treat it as a barrier).
    """

    gtid_event: Gtid | MariadbGtid | None
    events: tuple[Event, ...]
    start: Position
    end: Position
    last_committed: int = 0
    sequence_number: int = 0
    status: TransactionStatus = TransactionStatus.COMPLETE
    clock_reset: bool = False

    @property
    def complete(self) -> bool:
        return self.status is TransactionStatus.COMPLETE

    @property
    def gtid_text(self) -> str:
        """The GTID (``ANONYMOUS`` for anonymous ones), or '' without a GTID event."""
        return self.gtid_event.gtid_text if self.gtid_event is not None else ""


@dataclass(frozen=True, slots=True)
class StandaloneEvent:
    """An event outside any transaction (Format_description, Rotate, Stop, ...)."""

    event: Event
    start: Position
    end: Position


StreamItem = Transaction | StandaloneEvent


def _is_start_query(event: Event) -> bool:
    if not isinstance(event, Query):
        return False
    text = event.query.lstrip()[:9].upper()
    return event.is_begin or text.startswith("XA START")


def _is_end_query(event: Event, gtid: Gtid | MariadbGtid | None) -> bool:
    if not isinstance(event, Query):
        return False
    if event.is_commit:
        return True
    prepared = isinstance(gtid, MariadbGtid) and gtid.flags & MariadbGtidFlag.PREPARED_XA
    return bool(prepared) and event.query.lstrip()[:10].upper().startswith("XA PREPARE")


class TransactionGrouper:
    """Feed ``(file, position, end_position, event)``; get transactions and standalone events.

    ``own_server_id``: Format_description events with this server id are the relay log's own
    (like those flagged RELAY_LOG): they neither cut a transaction nor reset the clock.
    """

    def __init__(self, *, own_server_id: int | None = None) -> None:
        self.own_server_id = own_server_id
        self._events: list[Event] = []
        self._gtid: Gtid | MariadbGtid | None = None
        self._start: Position = ("", 0)
        self._end: Position = ("", 0)
        self._in_body = False  # a BEGIN (or MariaDB's GTID) opened a multi-statement body
        self._reset_pending = False  # a source FDE came since the last transaction opened
        self._clock_reset = False  # of the open transaction

    @property
    def open(self) -> bool:
        return bool(self._events)

    def feed(self, file: str, position: int, end: int, event: Event) -> list[StreamItem]:
        """Process one event; return what it completes, in stream order."""
        out: list[StreamItem] = []
        type_code = event.header.type_code
        if type_code in _CONTROL_TYPES or (
            not self._events
            and (
                type_code == T.INCIDENT
                or (type_code not in _BODY_TYPES and event.header.flags & EventFlag.IGNORABLE)
            )
        ):
            self._control(file, position, end, event, out)
            return out
        if type_code in _GTID_TYPES:
            self._cut(out)
            self._open(file, position, event)
            self._in_body = isinstance(event, MariadbGtid) and not event.standalone
        elif _is_start_query(event):
            if self._in_body and self._events != [self._gtid]:
                self._cut(out)  # (a BEGIN right after MariaDB's GTID continues its group)
            self._append(file, position, event)
            self._in_body = True
        else:
            opened = not self._events
            self._append(file, position, event)
            if opened:
                self._in_body = type_code in _BODY_TYPES
            if (
                type_code in _TERMINATORS
                or _is_end_query(event, self._gtid)
                or (not self._in_body and type_code in _STATEMENT_TYPES)
            ):
                self._end = (file, end)
                self._close(TransactionStatus.COMPLETE, out)
                return out
        self._end = (file, end)
        return out

    def finish(self) -> list[StreamItem]:
        """End of stream: an open transaction is reported INCOMPLETE."""
        out: list[StreamItem] = []
        if self._events:
            self._close(TransactionStatus.INCOMPLETE, out)
        return out

    def _control(self, file: str, pos: int, end: int, event: Event, out: list[StreamItem]) -> None:
        if isinstance(event, FormatDescription) and not self._own(event):
            if self._events and event.create_timestamp:
                self._cut(out)  # the source restarted: its open transaction is lost
            if event.header.log_pos:
                self._reset_pending = True
        if self._events:
            self._events.append(event)
            self._end = (file, end)
        else:
            out.append(StandaloneEvent(event, (file, pos), (file, end)))

    def _own(self, event: FormatDescription) -> bool:
        return bool(event.header.flags & EventFlag.RELAY_LOG) or (
            self.own_server_id is not None and event.header.server_id == self.own_server_id
        )

    def _append(self, file: str, position: int, event: Event) -> None:
        if self._events:
            self._events.append(event)
        else:
            self._open(file, position, event)

    def _open(self, file: str, position: int, event: Event) -> None:
        self._events = [event]
        self._gtid = event if isinstance(event, (Gtid, MariadbGtid)) else None
        self._start = (file, position)
        self._in_body = False
        self._clock_reset, self._reset_pending = self._reset_pending, False

    def _cut(self, out: list[StreamItem]) -> None:
        if self._events:
            self._close(TransactionStatus.TRUNCATED, out)

    def _close(self, status: TransactionStatus, out: list[StreamItem]) -> None:
        gtid = self._gtid
        clock = (gtid.last_committed, gtid.sequence_number) if isinstance(gtid, Gtid) else (0, 0)
        out.append(
            Transaction(
                gtid,
                tuple(self._events),
                self._start,
                self._end,
                *clock,
                status=status,
                clock_reset=self._clock_reset,
            )
        )
        self._events = []
        self._gtid = None
        self._in_body = False


def group_transactions(
    events: Iterable[tuple[str, int, int, Event]], *, own_server_id: int | None = None
) -> Iterator[StreamItem]:
    """Group ``(file, position, end_position, event)`` items; see :class:`TransactionGrouper`."""
    grouper = TransactionGrouper(own_server_id=own_server_id)
    for file, position, end, event in events:
        yield from grouper.feed(file, position, end, event)
    yield from grouper.finish()
