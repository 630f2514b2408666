"""Reading a channel's relay log into transactions: the engine of both transaction providers
(DES.TS.0050-0080, WL10500.RD.1/RD.2, STREAM.1-3, PURGE.1).

``TransactionReader`` reads whole events with a ``RelayLogReader`` and decodes only what finds
the boundaries (``boundaries.py``): Format_description, GTID and Query events (RD.1). Any other
event of a transaction is published raw, its checksum checked; the consumer decodes it. A
transaction is handed out right after its GTID event (STREAM.1). A GTID event that comes while
a transaction is open truncates it (STREAM.3, T72), and so does a Format_description event of
a restarted source; a Query right after the GTID event that is not ``BEGIN`` is DDL, a
transaction of its own; inside a ``BEGIN`` body only savepoints and ``COMMIT``/``ROLLBACK``
are accepted (a statement there is statement-based replication). ``XA START`` opens a body
that ``XA END`` and an XA_prepare event (or an ``XA PREPARE`` Query) close; ``XA COMMIT`` and
``XA ROLLBACK`` are single statements (docs/decisions/0015).
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from collections.abc import Callable

from spark_replica.applier_core.binlog.codecs.registry import type_name
from spark_replica.applier_core.binlog.constants import CRC32_RESIDUE, MAGIC, EventFlag, EventType
from spark_replica.applier_core.binlog.errors import BinlogError, read_failure
from spark_replica.applier_core.binlog.events import Event, FormatDescription, Gtid, Query, Rotate
from spark_replica.applier_core.binlog.relaylog import (
    RelayCoordinate,
    RelayEvent,
    RelayLog,
    RelayLogReader,
)
from spark_replica.applier_core.binlog.relaylog.index import split_numbered
from spark_replica.applier_core.binlog.relaylog.prefetch import Prefetcher
from spark_replica.applier_core.binlog.stream import StreamDecoder
from spark_replica.applier_core.errors import ReplicaError
from spark_replica.applier_core.provider import boundaries as kinds
from spark_replica.applier_core.provider.boundaries import (
    KINDS,
    UNEXPECTED_EVENT,
    SkipRule,
    belongs_in_body,
    is_xa,
    skip_predicate,
    xa_verb,
)
from spark_replica.applier_core.provider.fetchable import FetchableTransaction
from spark_replica.applier_core.provider.holds import FileHolds, purge_quietly
from spark_replica.applier_core.provider.resources import EVENT_MEMORY, ResourceMonitor
from spark_replica.applier_core.provider.streaming import CACHE_THRESHOLD, Item, StreamContext

logger = logging.getLogger(__name__)

WAIT_SLICE = 0.05
"""Seconds a reader waits for new relay log events before it checks for a stop request."""
# Events are published in batches of at most this many events or bytes, and always at the end
# of a transaction and before the reader waits for the relay log: a waiting consumer is woken
# once per batch, not once per event (a thread switch costs more than reading the batch).
_BATCH_EVENTS = 32
_BATCH_BYTES = 1 << 16
#: A transaction is handed out once it is read whole, or once this much of it is read, or
#: when the rest is not in the relay log yet (then its events stream to the worker).
_READ_AHEAD_BYTES = 1 << 16
#: Events taken from the relay log reader's buffer at once (``RelayLogReader.poll_batch``).
_AHEAD_EVENTS = 64
_IGNORABLE = int(EventFlag.IGNORABLE)
_ROTATE = int(EventType.ROTATE)
_RELAY_LOG_FLAG = int(EventFlag.RELAY_LOG)
_BODY, _XID, _PAYLOAD, _QUERY = kinds.BODY, kinds.XID, kinds.PAYLOAD, kinds.QUERY
assert 0 < _BODY < _XID < _PAYLOAD  # the order the hot path relies on


class TransactionReader:
    """Reads transactions from a relay log. One thread at a time.

    Args:
        stop: set by the provider to make a read return (checked every ``WAIT_SLICE`` while
            waiting for events, and while waiting for event memory after ``monitor.wake()``).
        prefetcher: reads the relay log ahead of this reader (``RelayLogReader``).

    Raises:
        ReplicaError: ER_REPLICA_RELAY_LOG_READ_FAILURE, ``start`` cannot be read from.
    """

    def __init__(
        self,
        relay_log: RelayLog,
        monitor: ResourceMonitor,
        stop: threading.Event,
        *,
        channel: str = "",
        start: tuple[str, int] | None = None,
        skip: SkipRule = None,
        own_server_id: int | None = None,
        resource: str = EVENT_MEMORY,
        cache_threshold: int = CACHE_THRESHOLD,
        prefetcher: Prefetcher | None = None,
        after_durable: Callable[[Callable[[], None]], None] | None = None,
    ) -> None:
        self._relay_log = relay_log
        self._monitor = monitor
        self._stop = stop
        self._channel = channel
        self._skip = skip_predicate(skip)
        self._own_server_id = own_server_id
        self._resource = resource
        self._holds = FileHolds(relay_log, after_durable)
        self._context = StreamContext(relay_log, monitor, self._holds, resource, channel,
                                      cache_threshold)  # fmt: skip
        self._decoder = StreamDecoder()
        self._fde: FormatDescription | None = None
        self._checksum = False
        try:
            self._reader = RelayLogReader(relay_log, start, on_file_end=self._file_read,
                                          prefetcher=prefetcher)  # fmt: skip
            if start is not None and start[1] > len(MAGIC):
                self._read_preamble(start[0], start[1])
        except BinlogError as exc:
            raise read_failure(exc, channel) from exc
        self._active: FetchableTransaction | None = None
        self._found: FetchableTransaction | None = None
        self._in_body = False  # a BEGIN opened the active transaction's body
        self._in_xa = False  # the body is an XA transaction's (XA START)
        self._file = ""  # the last file the active transaction has events in
        self._rotated = False  # the event handled last is a relay log file's closing Rotate
        self._pending: list[Item] = []
        self._pending_memory = 0
        self._pending_size = 0
        self._trx_bytes = 0  # the active transaction's events so far
        self._trx_length = 0  # and their size by its GTID event (0: unknown)
        self._clock_reset = False  # a source's Format_description came since the last GTID
        self._source_file = ""  # the source binary log a source's Rotate event named last
        self._error: ReplicaError | None = None
        self._closed = False
        # Read from the start of a file that is not the relay log's first (not from a
        # position a run recorded), the first events may be the end of a transaction whose
        # start was in a file purged since: applied and durable (files are purged only
        # then), so they are skipped, up to that transaction's end.
        first = start[0] if start is not None else next(iter(relay_log.files()), "")
        numbered = split_numbered(first)
        self._tail = (start is None or start[1] <= len(MAGIC)) and (
            numbered is not None and numbered[1] > 1
        )
        self._tail_events = 0
        # Events taken from the relay log reader but not handled yet, and the next one's index.
        self._ahead: list[RelayEvent] = []
        self._ahead_at = 0

    def __repr__(self) -> str:
        return f"<TransactionReader {self._reader!r} active={self._active!r}>"

    @property
    def position(self) -> RelayCoordinate | None:
        """Where the next event is read from."""
        if self._ahead_at < len(self._ahead):
            relay = self._ahead[self._ahead_at]
            return RelayCoordinate(relay.file, relay.start)
        return self._reader.position

    @property
    def error(self) -> ReplicaError | None:
        return self._error

    def next_transaction(self, timeout: float | None) -> FetchableTransaction | None:
        """Read up to the next GTID event and return its transaction, OPEN.

        The events of the transaction returned before are published on the way.

        Returns:
            None on timeout, on a stop request, once closed, or while the relay log is closed.

        Raises:
            ReplicaError: ER_REPLICA_RELAY_LOG_READ_FAILURE (13121), a corrupt relay log or an
                event the applier does not support; every later call raises it again.
        """
        if self._error is not None:
            raise self._error
        if self._closed:
            return None
        deadline = None if timeout is None else time.monotonic() + timeout
        poll, batch, stopped = self._reader.poll, self._reader.poll_batch, self._stop.is_set
        ahead, at = self._ahead, self._ahead_at  # taken from the reader, not handled yet
        # The transaction found and being read ahead (one found by the call before, when a
        # GTID cut off the one it handed out, comes first).
        handing, self._found = self._found, None
        available = 0  # event memory known to be free (the provider alone takes it)
        try:
            while not stopped():
                relay: RelayEvent | None
                if at < len(ahead):
                    relay = ahead[at]
                    at += 1
                elif ahead := batch(_AHEAD_EVENTS):
                    relay, at = ahead[0], 1
                else:
                    relay, at = poll(), 0
                if relay is None:
                    if handing is not None:  # the rest is not written yet: stream it
                        self._flush(None)
                        return handing
                    relay = self._wait(deadline)
                    if relay is None:
                        if self._relay_log.end.closed or (
                            deadline is not None and time.monotonic() >= deadline
                        ):
                            return None
                        continue
                data = relay.data
                kind = KINDS[data[4]]
                trx = self._active
                if kind <= _XID and kind and trx is not None and self._in_body:
                    # The hot path: a Table_map, rows or Xid event of a transaction.
                    if self._checksum and zlib.crc32(data) != CRC32_RESIDUE:
                        raise BinlogError("event checksum mismatch", file=relay.file,
                                          position=relay.start)  # fmt: skip
                    self._trx_bytes += len(data)
                    if relay.file is not self._file and relay.file != self._file:
                        self._extend(trx, relay.file)
                    if not trx.skip:
                        memory = len(data) if kind == _BODY else 0  # Xid: never counted
                        self._pending.append((relay, memory, self._fde, None))
                        self._pending_memory += memory
                        self._pending_size += len(data)
                    if handing is not None and self._pending_memory > available:
                        available = self._monitor.available(self._resource)
                        if self._pending_memory > available:
                            return handing  # publishing would wait for memory: hand out first
                    if kind == _XID:
                        self._complete(relay)
                        if handing is not None:
                            return handing
                    elif self._pending_size >= _READ_AHEAD_BYTES and handing is not None:
                        self._flush(None)  # a large transaction: hand it out, streaming
                        return handing
                    elif len(self._pending) >= _BATCH_EVENTS or self._pending_size >= _BATCH_BYTES:
                        self._flush(None)
                    continue
                started = self._handle(relay, kind)
                if handing is not None and self._active is not handing:
                    self._flush(None)
                    self._found = started  # a GTID cut it off: the next call's
                    return handing  # it ended (COMMIT or DDL) or was cut off
                if started is not None:
                    handing = started
            return handing
        except BinlogError as exc:
            error = self.fail(exc)
            if handing is not None:  # it fails with the error; the next call raises it
                return handing
            raise error from exc
        except OSError as exc:
            error = self.fail(BinlogError(f"cannot read the relay log: {exc}"))
            if handing is not None:
                return handing
            raise error from exc
        finally:
            self._ahead, self._ahead_at = ahead, at

    def fail(self, error: BinlogError) -> ReplicaError:
        """Record ``error`` as the reader's (sticky) failure and fail the open transaction."""
        replica_error = read_failure(error, self._channel)
        self._error = replica_error
        trx, self._active = self._active, None
        self._pending, self._pending_memory, self._pending_size = [], 0, 0
        if trx is not None:
            trx.fail(replica_error)
        return replica_error

    def close(self) -> None:
        """Truncate the open transaction (a stop: STREAM.3) and close the files. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._ahead, self._ahead_at = [], 0
        if self._active is not None:
            self._cut(by_stop=True)
        self._reader.close()
        self._relay_log.space.caught_up(None)
        self._holds.leave_all()

    def _wait(self, deadline: float | None) -> RelayEvent | None:
        """Publish what is pending (consumers get it before the wait), tell the receiver that
        everything written is read (it may be waiting for relay log space: ``LogSpace``),
        then wait a slice."""
        self._flush(None)
        self._relay_log.space.caught_up(self._reader.position)
        wait = WAIT_SLICE
        if deadline is not None:
            wait = min(wait, deadline - time.monotonic())
        if wait <= 0 or self._stop.is_set():
            return None
        return self._reader.next_event(wait)

    # -- one event -----------------------------------------------------------------------------

    def _handle(self, relay: RelayEvent, kind: int) -> FetchableTransaction | None:
        """Every event but the hot path's."""
        trx = self._active
        if kind == _PAYLOAD and trx is not None and not self._in_body:
            if self._checksum and zlib.crc32(relay.data) != CRC32_RESIDUE:
                raise BinlogError("event checksum mismatch", file=relay.file,
                                  position=relay.start)  # fmt: skip
            self._add(trx, relay, len(relay.data), None)  # the whole compressed body
            self._complete(relay)
        elif trx is None and self._tail and (_BODY <= kind <= _PAYLOAD or kind == _QUERY):
            self._skip_tail(relay, kind)
        elif _BODY <= kind <= _PAYLOAD:
            raise self._unexpected(relay)  # outside a transaction, or a payload after BEGIN
        elif kind == _QUERY:
            self._query(relay)
        elif kind == kinds.GTID:
            gtid = self._decode(relay)
            if not isinstance(gtid, Gtid):
                raise self._unexpected(relay)
            if trx is not None:
                self._cut(by_stop=False)
            if self._tail:
                self._end_tail(relay)
            return self._open(relay, gtid)
        elif kind == kinds.FDE:
            self._format_description(relay)
        elif relay.data[4] == _ROTATE:
            self._rotate(relay)
        elif kind != kinds.CONTROL and (kind != kinds.OTHER or not relay.data[17] & _IGNORABLE):
            raise self._unexpected(relay)
        elif self._checksum and zlib.crc32(relay.data) != CRC32_RESIDUE:  # skipped: checked
            raise BinlogError("event checksum mismatch", file=relay.file, position=relay.start)
        return None

    def _skip_tail(self, relay: RelayEvent, kind: int) -> None:
        """``relay`` belongs to the end of a transaction applied before (``_tail``); the
        tail ends with that transaction's end (Xid, XA_prepare, COMMIT or ROLLBACK)."""
        if self._checksum and zlib.crc32(relay.data) != CRC32_RESIDUE:
            raise BinlogError("event checksum mismatch", file=relay.file, position=relay.start)
        self._tail_events += 1
        if kind != _BODY:
            query = self._decode(relay) if kind == _QUERY else None
            if not isinstance(query, Query) or query.is_commit:
                self._end_tail(relay)

    def _end_tail(self, relay: RelayEvent) -> None:
        """No later event can belong to a transaction applied before."""
        if self._tail_events:
            logger.info("channel '%s': %d events at the start of relay log file %s skipped: "
                        "the end of a transaction applied before, whose start was purged",
                        self._channel, self._tail_events, relay.file)  # fmt: skip
        self._tail = False

    def _query(self, relay: RelayEvent) -> None:
        trx = self._active
        query = self._decode(relay)
        if trx is None or not isinstance(query, Query):
            raise self._unexpected(relay)
        size = len(relay.data)
        if query.is_begin:
            if self._in_body:
                raise self._unexpected(relay)
            self._in_body = True
            self._add(trx, relay, size, query)
        elif query.is_commit:
            if not self._in_body or self._in_xa:
                raise self._unexpected(relay)
            self._add(trx, relay, 0, query)
            self._complete(relay)
        elif is_xa(query):
            self._xa_query(trx, relay, query)
        elif self._in_body:
            if not belongs_in_body(query):
                raise self._unexpected(relay)  # a statement inside a row transaction
            self._add(trx, relay, size, query)
        else:
            self._add(trx, relay, size, query)  # DDL: a transaction of its own
            self._complete(relay)

    def _xa_query(self, trx: FetchableTransaction, relay: RelayEvent, query: Query) -> None:
        verb = xa_verb(query)
        if verb == "START" and not self._in_body:
            self._in_body = self._in_xa = True
            self._add(trx, relay, len(relay.data), query)
        elif verb == "END" and self._in_xa:
            self._add(trx, relay, len(relay.data), query)
        elif verb == "PREPARE" and self._in_xa:
            self._add(trx, relay, 0, query)
            self._complete(relay)
        elif verb == "COMMIT" and self._in_xa:  # XA COMMIT ... ONE PHASE
            self._add(trx, relay, 0, query)
            self._complete(relay)
        elif verb in ("COMMIT", "ROLLBACK") and not self._in_body:
            self._add(trx, relay, len(relay.data), query)
            self._complete(relay)
        else:
            raise self._unexpected(relay)

    def _format_description(self, relay: RelayEvent) -> None:
        fde = self._decode(relay)
        if not isinstance(fde, FormatDescription):
            raise self._unexpected(relay)
        self._fde, self._checksum = fde, fde.checksums
        own = fde.header.flags & _RELAY_LOG_FLAG or fde.header.server_id == self._own_server_id
        rotated, self._rotated = self._rotated, False
        if own and self._active is not None and not rotated:
            # A relay log file begins, and the one before ended inside a transaction
            # without the Rotate that closes a file the writer rotated: the rest of that
            # transaction is not in this file (a receiver that stopped or died fetches it
            # again whole; a file cut short lost it, and what follows stops the applier).
            self._cut(by_stop=False)
        if not own:
            if self._active is not None and fde.create_timestamp:
                self._cut(by_stop=False)  # the source restarted: its open transaction is lost
            if fde.header.log_pos:
                self._clock_reset = True

    def _rotate(self, relay: RelayEvent) -> None:
        """A source's Rotate event names the binary log its next events come from; the
        relay log's own (this server's) only move to the next relay log file."""
        rotate = self._decode(relay)
        if not isinstance(rotate, Rotate):
            return
        if rotate.header.flags & _RELAY_LOG_FLAG or rotate.header.server_id == self._own_server_id:
            self._rotated = True
        else:
            self._source_file = rotate.next_file

    def _read_preamble(self, file: str, offset: int) -> None:
        """Starting inside ``file``: take the Format_description and Rotate events of its
        header."""
        with RelayLogReader(self._relay_log, (file, len(MAGIC))) as header:
            while (relay := header.poll()) is not None and relay.start < offset:
                kind = KINDS[relay.data[4]]
                if kind == kinds.FDE:
                    fde = self._decode(relay)
                    if isinstance(fde, FormatDescription):
                        self._fde, self._checksum = fde, fde.checksums
                elif relay.data[4] == _ROTATE:
                    self._rotate(relay)
                elif kind != kinds.CONTROL:
                    return

    def _decode(self, relay: RelayEvent) -> Event:
        try:
            return self._decoder.decode(relay.data)
        except BinlogError as exc:
            raise exc.at(relay.file, relay.start) from exc

    def _unexpected(self, relay: RelayEvent) -> BinlogError:
        name = type_name(relay.data[4])
        return BinlogError(f"{UNEXPECTED_EVENT}: {name}", file=relay.file, position=relay.start)

    # -- the active transaction ------------------------------------------------------------------

    def _open(self, relay: RelayEvent, gtid: Gtid) -> FetchableTransaction:
        skip = self._skip is not None and not gtid.anonymous and self._skip(gtid)
        self._holds.hold(relay.file)
        trx = FetchableTransaction(
            gtid,
            RelayCoordinate(relay.file, relay.start),
            self._context,
            skip=skip,
            clock_reset=self._clock_reset,
            gtid_size=len(relay.data),
            source_file=self._source_file,
        )
        self._clock_reset = False
        self._active, self._in_body, self._file = trx, False, relay.file
        self._in_xa = False
        self._trx_bytes, self._trx_length = len(relay.data), gtid.transaction_length
        return trx

    def _extend(self, trx: FetchableTransaction, file: str) -> None:
        trx.extend(file)
        self._file = file

    def _add(self, trx: FetchableTransaction, relay: RelayEvent, memory: int,
             decoded: Event | None) -> None:  # fmt: skip
        self._trx_bytes += len(relay.data)
        if relay.file is not self._file and relay.file != self._file:
            self._extend(trx, relay.file)
        if trx.skip:
            return
        self._pending.append((relay, memory, self._fde, decoded))
        self._pending_memory += memory
        self._pending_size += len(relay.data)

    def _flush(self, end: RelayCoordinate | None, source_end: int = 0) -> None:
        """Publish the pending events (and complete the transaction at ``end``), once their
        memory is acquired; a stop request while waiting for it truncates the transaction."""
        trx = self._active
        if trx is None or (not self._pending and end is None):
            return
        items, memory, size = self._pending, self._pending_memory, self._pending_size
        self._pending, self._pending_memory, self._pending_size = [], 0, 0
        if trx.abandoned:  # nobody takes these events (their consumer gave up)
            items, memory = [], 0
        elif memory and not self._monitor.acquire(self._resource, memory, abort=self._stop.is_set):
            self._cut(by_stop=True)
            return
        if not trx.publish(items, memory, size, end, source_end) and memory:
            self._monitor.release(self._resource, memory)

    def _complete(self, relay: RelayEvent) -> None:
        if self._trx_length and self._trx_bytes != self._trx_length:
            raise BinlogError(f"the transaction holds {self._trx_bytes} bytes of events, its "
                              f"GTID event says {self._trx_length}", file=relay.file,
                              position=relay.start)  # fmt: skip
        log_pos = int.from_bytes(relay.data[13:17], "little")
        self._flush(RelayCoordinate(relay.file, relay.end), log_pos)
        self._active = None

    def _cut(self, *, by_stop: bool) -> None:
        trx, self._active = self._active, None
        self._pending, self._pending_memory, self._pending_size = [], 0, 0
        if trx is not None:
            trx.truncate(by_stop=by_stop)

    def _file_read(self, name: str) -> None:
        """The reader moved past ``name``: every transaction in it is handed out (PURGE.2)."""
        purge = self._relay_log.mark_applied(name)
        self._holds.leave(name)  # purges when the file becomes a candidate this way
        if purge:
            purge_quietly(self._relay_log)
