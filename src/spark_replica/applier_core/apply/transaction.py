"""Applying the events of one transaction to a storage-engine session.

Every applier (the Change Stream Applier's jobs, the legacy applier's workers, the serial
applier) hands the decoded events of a transaction, in order, to a ``TransactionApplier``:
rows events become row changes, a DDL Query event runs as DDL (with its executable comments
as the source ran them: ``statements``), an account statement changes the engine's replicated
accounts the same way (``storage.accounts``), a statement that stores nothing (ANALYZE TABLE,
SAVEPOINT, a trigger's definition, ...) is taken as applied, and the transaction's end (Xid,
or a COMMIT Query) tells the caller to prepare and commit. An XA transaction's rows are kept
by the engine at its XA_prepare event and applied by its ``XA COMMIT`` (``apply.xa``,
docs/decisions/0015). A failure is an
``ApplyError`` carrying MySQL's error number and the texts of SHOW REPLICA STATUS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from spark_replica.applier_core.apply.errors import SourcePosition, worker_error
from spark_replica.applier_core.apply.statements import Effect, as_executed, effect
from spark_replica.applier_core.apply.xa import (
    XaStatement,
    XaVerb,
    Xid,
    decode_events,
    encode_events,
    parse_xa,
)
from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import Event, Gtid, Query, XaPrepare
from spark_replica.applier_core.binlog.events import Xid as XidEvent
from spark_replica.applier_core.binlog.rows import RowsEvent
from spark_replica.applier_core.binlog.versions import UNKNOWN_VERSION, SourceVersion
from spark_replica.applier_core.errors import ErrorCode, format_message
from spark_replica.applier_core.storage import (
    EngineError,
    EngineSession,
    PreparedXa,
    RowChange,
    TableRef,
)
from spark_replica.applier_core.storage.accounts import redacted
from spark_replica.applier_core.storage.collations import CharsetDefaults

#: Events a row-based transaction may carry that change nothing (Table_map events are used
#: by the decoder; Rows_query and ignorable events only inform).
_PASSIVE_TYPES = frozenset(
    {
        EventType.TABLE_MAP,
        EventType.ROWS_QUERY,
        EventType.IGNORABLE,
        EventType.MARIADB_ANNOTATE_ROWS,
        EventType.GTID,
        EventType.ANONYMOUS_GTID,
        EventType.GTID_TAGGED,
    }
)


#: How MySQL 8.0.21+ logs CREATE TABLE ... SELECT: the table's definition, then "START
#: TRANSACTION", then the rows and the Xid, all in one transaction.
_OPENS_TRANSACTION = re.compile(r"\s+START\s+TRANSACTION\s*$", re.IGNORECASE)


class ApplyError(Exception):
    """A transaction could not be applied.

    ``code`` is the MySQL error number (1062, 1032, 1205, ...); ``detail`` the text of the
    failure itself; ``transient`` says whether applying the transaction again may succeed.
    """

    def __init__(self, code: int, detail: str, *, transient: bool = False) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.transient = transient

    def for_worker(self, worker_id: int, gtid: str, where: SourcePosition) -> str:
        """The worker's LAST_ERROR_MESSAGE."""
        return worker_error(worker_id, gtid, where, self.detail)


class EventSource(Protocol):
    """A transaction's events as they are read (``FetchableTransaction`` is one)."""

    def next_event(self, timeout: float | None = None) -> Event | None:
        """The next event; None when there are no more; TimeoutError when none came in
        ``timeout`` seconds (the transaction is still being read)."""
        ...


@dataclass(slots=True)
class TransactionApplier:
    """Applies one transaction's events to ``session``, which the caller has begun.

    ``source_log`` names the source's binary log the events come from (for error texts).
    ``apply`` returns True once the event that ends the transaction has been applied.
    """

    session: EngineSession
    gtid: str
    source_log: str
    #: The version of the source that wrote the transaction (its Gtid event says it).
    version: SourceVersion = UNKNOWN_VERSION
    ended: bool = False
    #: BEGIN was applied: statements that store nothing do not end the transaction.
    explicit: bool = False
    #: ``XA START`` was applied: its xid, and the row events kept for the prepare.
    xa: Xid | None = None
    xa_rows: list[RowsEvent] | None = None

    def apply_all(self, events: EventSource, wait: float) -> int | None:
        """Apply ``events`` up to the transaction's end, then prepare the session; the number
        of events applied, or None when the events ran out first (the transaction was cut off
        or cannot be read: the caller rolls back). ``wait``: seconds between checks while
        the events are still being read.

        Raises:
            ApplyError: an event or the prepare failed.
        """
        count = 0
        while True:
            try:
                event = events.next_event(wait)
            except TimeoutError:
                continue
            if event is None:
                return None
            count += 1
            if self.apply(event):
                break
        try:
            self.session.prepare()
        except EngineError as exc:
            raise ApplyError(exc.code, str(exc), transient=exc.transient) from exc
        return count

    def apply(self, event: Event) -> bool:
        type_code = event.header.type_code
        if type_code in _PASSIVE_TYPES:
            if isinstance(event, Gtid):
                self.version = SourceVersion.of_gtid_event(event.original_server_version)
            return False
        if isinstance(event, RowsEvent):
            if self.xa_rows is not None:
                self.xa_rows.append(event)
            else:
                self._apply_rows(event)
            return False
        if isinstance(event, XidEvent):
            self.ended = True
            return True
        if isinstance(event, XaPrepare) and self.xa is not None:
            return self._xa_prepare(Xid.of_prepare(event), one_phase=event.one_phase)
        if isinstance(event, Query):
            return self._apply_query(event)
        raise ApplyError(
            ErrorCode.REPLICA_RELAY_LOG_READ_FAILURE,
            f"Relay log read failure: Unexpected event in the Change stream applier reader: "
            f"{event.header.type_name} inside transaction '{self.gtid}'",
        )

    def _apply_query(self, event: Query) -> bool:
        if event.is_begin:
            self.explicit = True
            return False
        if event.query.lstrip()[:3].upper() == "XA ":
            return self._apply_xa(event)
        if event.is_commit:
            if event.query.strip().upper() == "ROLLBACK":
                raise ApplyError(
                    ErrorCode.REPLICA_RELAY_LOG_READ_FAILURE,
                    f"Relay log read failure: transaction '{self.gtid}' ends with ROLLBACK",
                )
            self.ended = True
            return True
        statement = as_executed(event.query, self.version)
        kind = effect(statement)
        if kind is Effect.NONE:  # nothing the replica stores changes
            self.ended = not self.explicit
            return self.ended
        opening = _OPENS_TRANSACTION.search(statement)
        if opening is not None:  # MySQL's CREATE TABLE ... SELECT: its rows follow
            statement, self.explicit = statement[: opening.start()], True
        try:
            defaults = CharsetDefaults.of_source(
                event.status.charset,
                event.status.default_collation_for_utf8mb4,
                mariadb=self.version.mariadb,
            )
            self.session.apply_ddl(statement, event.db, defaults)
        except EngineError as exc:
            # An account statement's passwords and hashes never reach an error message.
            query = redacted(event.query) if kind is Effect.ACCOUNT else event.query
            raise ApplyError(
                exc.code,
                f"Error '{exc.message}' on query. Default database: '{event.db}'. Query: '{query}'",
                transient=exc.transient,
            ) from exc
        # Inside BEGIN (MariaDB's CREATE TABLE ... SELECT) the rows and the commit follow.
        self.ended = not self.explicit
        return self.ended

    # -- XA (apply.xa) -----------------------------------------------------------------------

    def _apply_xa(self, event: Query) -> bool:
        try:
            statement = parse_xa(event.query)
        except ValueError:
            statement = None
        if statement is None or statement.xid is None:
            raise self._unexpected_xa(event)
        verb, xid = statement.verb, statement.xid
        if verb is XaVerb.START and self.xa is None and not self.explicit:
            self.explicit, self.xa, self.xa_rows = True, xid, []
            return False
        if self.xa is not None and xid == self.xa:
            if verb is XaVerb.END:
                return False
            if verb is XaVerb.PREPARE:  # an XA PREPARE Query instead of the XA_prepare event
                return self._xa_prepare(xid, one_phase=False)
            if verb is XaVerb.COMMIT and statement.one_phase:
                return self._xa_prepare(xid, one_phase=True)
        if self.explicit or verb not in (XaVerb.COMMIT, XaVerb.ROLLBACK):
            raise self._unexpected_xa(event)
        return self._xa_complete(event, statement)

    def _xa_prepare(self, xid: Xid, *, one_phase: bool) -> bool:
        """The end of an XA transaction's first phase: keep its rows in the engine, or apply
        them now when it commits in one phase."""
        rows, self.xa, self.xa_rows = self.xa_rows or [], None, None
        if one_phase:
            for event in rows:
                self._apply_rows(event)
        else:
            try:
                self.session.keep_prepared(PreparedXa(xid.text, self.gtid, encode_events(rows)))
            except EngineError as exc:
                raise ApplyError(exc.code, str(exc), transient=exc.transient) from exc
            except BinlogError as exc:
                raise _read_failure(exc) from exc
        self.ended = True
        return True

    def _xa_complete(self, event: Query, statement: XaStatement) -> bool:
        """``XA COMMIT`` applies the prepared transaction's rows; ``XA ROLLBACK`` drops them;
        an xid that is not prepared is MySQL's 1397."""
        assert statement.xid is not None
        prepared = self.session.take_prepared(statement.xid.text)
        if prepared is None:
            message = format_message(ErrorCode.XAER_NOTA)
            raise ApplyError(
                ErrorCode.XAER_NOTA,
                f"Error '{message}' on query. Default database: '{event.db}'. "
                f"Query: '{event.query}'",
            )
        if statement.verb is XaVerb.COMMIT:
            try:
                rows = list(decode_events(prepared.events))
            except BinlogError as exc:
                raise _read_failure(exc) from exc
            for rows_event in rows:
                self._apply_rows(rows_event)
        self.ended = True
        return True

    def _unexpected_xa(self, event: Query) -> ApplyError:
        return ApplyError(
            ErrorCode.REPLICA_RELAY_LOG_READ_FAILURE,
            f"Relay log read failure: unexpected '{event.query}' in transaction '{self.gtid}'",
        )

    def _apply_rows(self, event: RowsEvent) -> None:
        table_map = event.table_map
        assert table_map is not None, "the decoder attaches the Table_map"
        if not event.full_image:
            raise ApplyError(
                ErrorCode.REPLICA_RELAY_LOG_READ_FAILURE,
                f"Relay log read failure: a {event.header.type_name} event on table "
                f"{table_map.schema}.{table_map.table} does not carry full row images; "
                "the source must use binlog_row_image=FULL",
            )
        kind = event.kind
        try:
            self.session.apply_rows(table_map, RowChange.of_rows(kind, event.rows))
        except EngineError as exc:
            exc.add_context(table=TableRef(table_map.schema, table_map.table), kind=kind,
                            gtid=self.gtid)  # fmt: skip
            detail = exc.row_event_detail(self.source_log, event.header.log_pos)
            raise ApplyError(exc.code, detail, transient=exc.transient) from exc


def _read_failure(error: BinlogError) -> ApplyError:
    """A prepared XA transaction's events that cannot be encoded or read back."""
    code = ErrorCode.REPLICA_RELAY_LOG_READ_FAILURE
    return ApplyError(code, format_message(code, str(error)))
