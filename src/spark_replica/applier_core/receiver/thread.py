"""A channel's receiver thread (START REPLICA IO_THREAD).

The thread ``receiver-<channel>`` connects to the source named by CHANGE REPLICATION SOURCE
TO (the user and password of START REPLICA, when given, win; TLS and caching_sha2_password's
RSA key per SOURCE_SSL*, SOURCE_PUBLIC_KEY_PATH and GET_SOURCE_PUBLIC_KEY), asks for
everything after the GTIDs the replica has (executed or received): with COM_BINLOG_DUMP_GTID
from a MySQL source or the built-in one, with ``@slave_connect_state`` from a MariaDB source,
whose events it converts to a MySQL source's form (``convert.py``). It appends each event to
the channel's relay log, where the applier follows it. A transaction counts as received
(Received_transaction_set) once its last event is written; the next START asks again for a
transaction cut off by a stop, and the relay-log reader drops its first, partial copy.

Stopping (``stop``, idempotent) shuts the connection down, which ends the blocking read, and
joins the thread. An error ends the thread with MySQL's IO error number and text in SHOW
REPLICA STATUS (1045 bad credentials, 2003 refused, 2005 unknown host, 1236 from the source).

A lost connection, or a failed attempt to connect, is tried again every SOURCE_CONNECT_RETRY
seconds, at most SOURCE_RETRY_COUNT times in a row; meanwhile Replica_IO_Running reads
Connecting and Last_IO_Error shows the last failure.

Relay log files rotate past max_relay_log_size (max_binlog_size when it is 0), read at every
batch written, and each start of the thread begins a new file. With relay_log_space_limit,
the receiver waits after a batch that takes the relay log past it until the applier's purges
free space (``LogSpace``); when the applier has read everything and nothing it read can be
purged, it goes on for one more batch, rotating first if it is between transactions, as
MySQL's receiver does to avoid a deadlock.

"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from dataclasses import dataclass

from spark_replica.applier_core.binlog.codecs.registry import encode_event_at
from spark_replica.applier_core.binlog.constants import ROWS_EVENTS, EventFlag, EventType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import (
    FormatDescription,
    PreviousGtids,
    Rotate,
    make_header,
)
from spark_replica.applier_core.binlog.relaylog import RelayLogWriter, Room, WriterState
from spark_replica.applier_core.channels.components import (
    RunningThreads,
    SourcePosition,
    ThreadContext,
)
from spark_replica.applier_core.channels.status import ErrorInfo, TransactionInfo
from spark_replica.applier_core.errors import ErrorCode, format_message
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.receiver.checks import (
    ER_REPLICA_RELAY_LOG_WRITE_FAILURE,
    EventCheck,
)
from spark_replica.applier_core.receiver.client import (
    CR_SERVER_LOST,
    Security,
    SourceClient,
    SourceError,
)
from spark_replica.applier_core.receiver.convert import MariadbConverter, MysqlTracker
from spark_replica.applier_core.receiver.dump import (
    clock_diff,
    dump_gtid,
    dump_mariadb,
    events,
    prepare_mariadb,
    prepare_mysql,
    register_replica,
)
from spark_replica.applier_core.receiver.mariadb import connect_state, mariadb_text
from spark_replica.applier_core.receiver.position import ReadPosition

logger = logging.getLogger(__name__)

CONNECTING = "Connecting to source"
WAITING = "Waiting for source to send event"
RECONNECTING = "Waiting to reconnect after a failed source event read"
DISK_FULL = "Waiting for disk space"
FREE_SPACE = "Waiting for the replica SQL thread to free relay log space"
#: Seconds between two looks at a full disk, as MySQL waits when it cannot write a log.
DISK_FULL_RETRY = 5.0
RELAY_SERVER_VERSION = "8.4.0"
#: Seconds between saves of the receiver's position while it receives.
SAVE_PERIOD = 1.0
#: Bytes appended to the relay log after which they are published even while more arrive.
PUBLISH_BYTES = 1 << 16
_HEARTBEATS = frozenset({EventType.HEARTBEAT, EventType.HEARTBEAT_V2})
#: Events every source's stream passes on unchanged, inside a transaction.
_PASSED = ROWS_EVENTS | {EventType.TABLE_MAP}


class Receivers:
    """The receiver component ``Components.receiver`` holds."""

    def start_receiver(self, context: ThreadContext) -> RunningThreads:
        receiver = Receiver(context)
        receiver.start()
        return receiver


class Receiver:
    """One channel's receiver thread (see the module text)."""

    def __init__(self, context: ThreadContext) -> None:
        self.context = context
        self.name = context.config.name
        connection, credentials = context.config.connection, context.credentials
        self.host, self.port = connection.host, connection.port
        self.user = credentials.user if credentials.user is not None else connection.user
        self._password = (
            credentials.password if credentials.password is not None else connection.password
        )
        self.server_id = context.settings.get_int("server_id")
        self.timeout = float(context.settings.get_int("replica_net_timeout"))
        self.space_limit = context.settings.get_int("relay_log_space_limit")
        self._rotate_at = self._max_size()  # the receiver thread's, once it runs
        self.relay_log = context.relay_logs.get(self.name)
        self.received = GtidSet.parse(context.status.snapshot().received_transaction_set)
        self._waited_for_space = False  # the receiver thread's: a full disk was waited for
        # _lock guards _client and _started against a concurrent stop.
        self._lock = threading.Lock()
        self._client: SourceClient | None = None
        self._writer: RelayLogWriter | None = None  # the receiver thread's
        self._attempt = 0  # the receiver thread's: connection attempts in a row
        self._connecting = False  # the receiver thread's: not yet dumping
        self.mariadb = False  # the receiver thread's: the source is a MariaDB
        connection = context.config.connection
        self.read = ReadPosition(connection.source_log_file, connection.source_log_pos)
        self._saved = time.monotonic()  # when the position was last saved
        # Transactions received whole, not yet published: each GTID, and the number of
        # pending events up to its last one.
        self._ended_since: list[tuple[tuple[str, int], int]] = []
        self._in_transaction = False  # the receiver thread's: the last event appended is not
        # a transaction's last
        # The receiver thread's: the transaction being queued, the last one queued whole
        # (and when), and the one the status shows as being queued.
        self._queued: Queued | None = None
        self._last_queued: Queued | None = None
        self._queued_end = 0.0
        self._shown: Queued | None = None
        self._started = False
        self._stop = threading.Event()
        label = f"receiver-{self.name}" if self.name else "receiver"
        self._thread = threading.Thread(target=self._run, name=label)

    def __repr__(self) -> str:
        return f"<Receiver '{self.name}' {self.user}@{self.host}:{self.port}>"

    def start(self) -> None:
        with self._lock:
            if self._started or self._stop.is_set():
                return
            self._started = True
            self._thread.start()

    def stop(self) -> None:
        """STOP REPLICA IO_THREAD: end the dump and join the thread. Idempotent; not from the
        receiver's own thread."""
        self._stop.set()
        self.relay_log.space.wake()  # a wait for relay log space ends at once
        with self._lock:
            client, started = self._client, self._started
        if client is not None:
            client.abort()
        if started:
            self._thread.join()

    # -- the thread ----------------------------------------------------------------------------

    def _run(self) -> None:
        error: ErrorInfo | None = None
        writer = RelayLogWriter(
            self.relay_log,
            make_header=self._relay_header,
            make_rotate=self._rotate_event,
            max_size=self._rotate_at,
        )
        self._writer = writer
        fresh_file = True
        try:
            while True:
                try:
                    writer.open()
                    if fresh_file and writer.holds_events:
                        # A new file at every start, as MySQL's receiver does: the one
                        # before can then be purged once the applier is done with it.
                        writer.rotate()
                    fresh_file = True
                    self._connect_and_copy(writer)
                    break
                except OSError as exc:
                    if self._stop.is_set() or not _out_of_space(exc):
                        raise
                    if not self._wait_for_space(exc, writer):
                        break
        except SourceError as exc:
            if not self._stop.is_set():
                error = ErrorInfo.now(exc.code, self._io_message(exc, self._attempt))
        except (BinlogError, OSError) as exc:  # the relay log cannot be written (a full disk)
            if not self._stop.is_set():
                message = _write_failure(exc, writer.file_name)
                error = ErrorInfo.now(ErrorCode.REPLICA_RELAY_LOG_WRITE_FAILURE, message)
        except Exception as exc:  # a bug: stop the channel's receiver with it rather than hang
            logger.exception("the receiver of channel %r failed", self.name)
            error = ErrorInfo.now(ErrorCode.UNKNOWN_ERROR, f"Fatal error: {exc}")
        finally:
            self._drop_client()
            writer.close()
            self._seal()
            self._report_position(durable=True)
        if error is not None:
            logger.error("Replica I/O for channel '%s': %s", self.name, error.message)
        if not self._stop.is_set() or error is not None:
            self.context.exited(error)

    def _seal(self) -> None:
        """Seal the relay log with the transactions received whole, so the next server
        start need not read it back (``relaylog/seal.py``)."""
        try:
            self.relay_log.seal(self.received.format(","))
        except OSError:
            logger.warning("channel %r: the relay log could not be sealed; the next start "
                           "reads it back", self.name, exc_info=True)  # fmt: skip

    def _wait_for_space(self, exc: OSError, writer: RelayLogWriter) -> bool:
        """The relay log's disk is full: show the error, leave the source, and look again
        every ``DISK_FULL_RETRY`` seconds; False when stopped meanwhile. What was written
        and not published is cut by the writer's next ``open``, and the transactions it held
        are asked for again (they were not counted as received)."""
        message = _write_failure(exc, writer.file_name)
        if not self._waited_for_space:  # once per full disk, not at every look
            logger.warning("Replica I/O for channel '%s': %s; waiting for disk space",
                           self.name, message)  # fmt: skip
        self.context.status.update(
            io_error=ErrorInfo.now(ErrorCode.REPLICA_RELAY_LOG_WRITE_FAILURE, message),
            io_connecting=False,
            io_state_text=DISK_FULL,
        )
        self._drop_client()
        writer.close()
        self._ended_since.clear()
        self._waited_for_space = True
        return not self._stop.wait(DISK_FULL_RETRY)

    def _connect_and_copy(self, writer: RelayLogWriter) -> None:
        """Connect, dump, copy; after a lost connection or a failed attempt, try again every
        SOURCE_CONNECT_RETRY seconds, SOURCE_RETRY_COUNT times in a row at most. Raises the
        last ``SourceError`` once the attempts are used up."""
        connection = self.context.config.connection
        status = self.context.status
        while not self._stop.is_set():
            self._attempt += 1
            try:
                client = self._connect()
                self._attempt = 0  # connected: a later loss starts counting again
                self._copy(client, writer)
                return  # the source ended the dump (it does not, unless told to)
            except SourceError as exc:
                if self._stop.is_set() or not _retryable(exc):
                    raise
                if self._attempt >= max(1, connection.retry_count):
                    raise
                status.update(
                    io_error=ErrorInfo.now(exc.code, self._io_message(exc, self._attempt)),
                    io_connecting=True,
                    io_state_text=RECONNECTING,
                )
                self._drop_client()
                if self._stop.wait(connection.connect_retry):
                    return

    def _connect(self) -> SourceClient:
        status = self.context.status
        status.update(io_connecting=True, io_state_text=CONNECTING)
        self._connecting = True
        connection = self.context.config.connection
        security = Security(
            use_ssl=connection.ssl, ca=connection.ssl_ca, cert=connection.ssl_cert,
            key=connection.ssl_key, verify_server_cert=connection.ssl_verify_server_cert,
            public_key_path=connection.public_key_path,
            get_public_key=connection.get_public_key,
        )  # fmt: skip
        client = SourceClient.connect(
            self.host, self.port, self.user, self._password, timeout=self.timeout,
            security=security,
        )  # fmt: skip
        with self._lock:
            self._client = client
        self._connecting = False  # logged in: later errors are not connection errors
        if self._stop.is_set():
            raise SourceError(CR_SERVER_LOST, "Lost connection to MySQL server during query")
        assert client.handshake is not None
        have = self.context.executed.snapshot().union(self.received)
        heartbeat = connection.heartbeat_period
        self.mariadb = "MariaDB" in client.handshake.server_version
        status.update(source_clock_diff=clock_diff(client))
        if self.mariadb:
            prepare_mariadb(client, connect_state(have), heartbeat=heartbeat)
            register_replica(client, self.server_id)
            dump_mariadb(client, self.server_id)
        else:
            server_id, uuid = prepare_mysql(client, heartbeat=heartbeat)
            status.update(source_uuid=uuid, source_server_id=server_id)
            register_replica(client, self.server_id)
            dump_gtid(client, self.server_id, have)
        status.update(io_connecting=False, io_state_text=WAITING)
        return client

    def _drop_client(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def _copy(self, client: SourceClient, writer: RelayLogWriter) -> None:
        """Append the dump's events to the relay log; count heartbeats, which are not
        written; keep the queueing and last queued transactions up to date.

        Events are published to the applier in batches: whenever the connection has nothing
        more buffered (the source is idle or slower than us), and at least every
        ``PUBLISH_BYTES``. A transaction counts as received once its last event is published.
        Table maps and rows events (most of a dump) go through as they are: they neither
        start nor end a transaction, and only move the read position.
        """
        converter = MariadbConverter() if self.mariadb else MysqlTracker()
        check, read = EventCheck(), self.read
        status = self.context.status
        heartbeats = status.snapshot().count_received_heartbeats
        self._ended_since.clear()
        self._queued = self._last_queued = None
        pending: list[bytes] = []  # received, checked, not yet appended
        unpublished = 0
        in_transaction = self._in_transaction  # a dump cut short may have left one open
        stream = client.stream
        try:
            for raw in events(client):
                if raw[4] in _PASSED:
                    check.check(raw)
                    pending.append(raw)
                    unpublished += len(raw)
                    read.follow(raw)
                elif raw[4] in _HEARTBEATS:  # counted, never written
                    heartbeats += 1
                    status.update(count_received_heartbeats=heartbeats,
                                  last_heartbeat=time.time())  # fmt: skip
                else:
                    check.check(raw)
                    for event in converter.convert(raw):
                        pending.append(event)
                        unpublished += len(event)
                    if read.follow(raw):
                        self._report_position()
                    started, ended = converter.started, converter.ended
                    if started is not None:
                        in_transaction = True
                        self._queued = Queued(started, converter.commit_times, raw, time.time())
                    if ended is not None:
                        in_transaction = False
                        self._ended_since.append((ended, len(pending)))
                        self._last_queued, self._queued = self._queued, None
                        self._queued_end = time.time()
                    self._in_transaction = in_transaction
                if stream.buffered and unpublished < PUBLISH_BYTES:
                    continue  # more is already here: publish it with what follows
                unpublished = 0
                self._publish(writer, pending)
                if self._stop.is_set():  # what the connection still buffers is not written
                    return
        finally:
            # Whole transactions already received count as received, even when the
            # connection broke: the next dump must not ask for them again.
            if writer.state is WriterState.OPEN:
                self._queued = None
                self._publish(writer, pending)

    def _publish(self, writer: RelayLogWriter, pending: list[bytes]) -> None:
        """Append and publish the ``pending`` events, and count the transactions they ended
        as received once published (a relay log file the writer starts on the way names
        those before it in its Previous_gtids: see ``_relay_header``); show the transaction
        being queued, if any, and the last one queued whole."""
        max_size = self._max_size()
        if max_size != self._rotate_at:  # SET GLOBAL changed it: the next rotation follows
            writer.max_size = self._rotate_at = max_size
        writer.append_many(pending)
        pending.clear()
        if self._waited_for_space:  # the disk has room again: the error is over
            self._waited_for_space = False
            logger.warning("Replica I/O for channel '%s': the relay log is written again",
                           self.name)  # fmt: skip
            self.context.status.update(io_error=ErrorInfo())
        queueing = self._queued.info() if self._queued is not None else TransactionInfo()
        if self._ended_since:
            for (uuid, gno), _end in self._ended_since:
                self.received.add(uuid, "", gno)
            self._ended_since.clear()
            last = self._last_queued
            self.context.status.update(
                received_transaction_set=self.received.format(","),
                last_queued=last.info(end=self._queued_end) if last else TransactionInfo(),
                queueing=queueing,
            )
            self._report_position()
        elif self._queued is not None and self._queued is not self._shown:
            self.context.status.update(queueing=queueing)
        self._shown = self._queued
        if self.space_limit and self.relay_log.space.total > self.space_limit:
            self._wait_for_relay_space(writer)

    def _wait_for_relay_space(self, writer: RelayLogWriter) -> None:
        """relay_log_space_limit is exceeded: wait until purges free space (or a stop).
        When the applier has read everything and cannot free any by itself, go on for one
        more batch; first rotate when between transactions, so the file left behind can be
        purged once its transactions are durable (never while one is cut in two, nor with
        relay_log_purge=OFF, when rotating frees nothing)."""
        status = self.context.status
        status.update(io_state_text=FREE_SPACE)
        room = self.relay_log.space.wait_for_room(
            self.space_limit,
            purge_pending=self.relay_log.purge_pending,
            stopped=self._stop.is_set,
        )
        if room is Room.STOPPED:
            return
        if (room is Room.CAUGHT_UP and not self._in_transaction and writer.holds_events
                and self.relay_log.purge_enabled):  # fmt: skip
            writer.rotate()
        status.update(io_state_text=WAITING)

    def _max_size(self) -> int:
        """Where relay log files rotate: max_relay_log_size, or max_binlog_size when 0."""
        settings = self.context.settings
        return settings.get_int("max_relay_log_size") or settings.get_int("max_binlog_size")

    def _report_position(self, *, durable: bool = False) -> None:
        """Record Source_Log_File/Read_Source_Log_Pos; saved at most every
        ``SAVE_PERIOD`` seconds, and when the thread ends."""
        record = self.context.source_position
        if record is None:
            return
        now = time.monotonic()
        durable = durable or now - self._saved >= SAVE_PERIOD
        if durable:
            self._saved = now
        source = self.context.status.snapshot() if durable else None
        uuid = source.source_uuid if source else ""
        server_id = source.source_server_id if source else 0
        try:
            record(SourcePosition(self.read.file, self.read.position, uuid, durable, server_id))
        except Exception:  # the metadata cannot be written (a full disk): the next save will
            logger.warning(
                "channel %r: could not save the receiver's position %s:%d",
                self.name, self.read.file, self.read.position, exc_info=True,
            )  # fmt: skip

    # -- relay log events ----------------------------------------------------------------------

    def _relay_header(self) -> bytes:
        """A new relay log file's Format_description and Previous_gtids (every GTID received
        before the file: what ``retrieved_gtids`` reads back after a restart). The file may
        start in the middle of a batch being published: the transactions whose last event
        is in the batch's part written before it count too."""
        whole = self.received.copy()
        written = self._writer.batch_written if self._writer is not None else 0
        for (uuid, gno), end in self._ended_since:
            if end > written:
                break
            whole.add(uuid, "", gno)
        fde = FormatDescription.for_server(
            RELAY_SERVER_VERSION, server_id=self.server_id, flags=EventFlag.RELAY_LOG
        )
        data = encode_event_at(fde, 4, checksum=True)
        header = make_header(EventType.PREVIOUS_GTIDS, server_id=self.server_id,
                             flags=EventFlag.RELAY_LOG)  # fmt: skip
        previous = PreviousGtids(header, whole)
        return data + encode_event_at(previous, 4 + len(data), checksum=True)

    def _rotate_event(self, next_name: str) -> bytes:
        rotate = Rotate(
            make_header(EventType.ROTATE, server_id=self.server_id, flags=EventFlag.RELAY_LOG),
            4,
            next_name,
        )
        assert self._writer is not None
        return encode_event_at(rotate, self._writer.position.offset, checksum=True)

    def _io_message(self, exc: SourceError, attempt: int) -> str:
        """Last_IO_Error's text: a connection error names the source as MySQL's does."""
        if self._connecting:
            connection = self.context.config.connection
            return (
                f"Error connecting to source '{self.user}@{self.host}:{self.port}'. This was "
                f"attempt {attempt}/{connection.retry_count}, with a delay of "
                f"{connection.connect_retry} seconds between attempts. Message: {exc.message}"
            )
        if exc.code == ER_SOURCE_FATAL_ERROR_READING_BINLOG:
            return (
                f"Got fatal error {exc.code} from source when reading data from binary log: "
                f"'{exc.message}'"
            )
        return exc.message


def _out_of_space(exc: OSError) -> bool:
    """A write failed because the disk (or the user's quota) is full."""
    return exc.errno in (errno.ENOSPC, errno.EDQUOT)


def _write_failure(exc: BinlogError | OSError, file: str) -> str:
    """Last_IO_Error for a relay log that cannot be written: MySQL's text, then the cause."""
    if isinstance(exc, OSError) and exc.strerror:
        where = os.path.basename(exc.filename) if isinstance(exc.filename, str) else file
        cause = f"{exc.strerror} (file '{where}')" if where else exc.strerror
    else:
        cause = str(exc)
    return format_message(
        ErrorCode.REPLICA_RELAY_LOG_WRITE_FAILURE, f"could not queue event from source: {cause}"
    )


ER_SOURCE_FATAL_ERROR_READING_BINLOG = 1236
ER_REPLICA_FATAL_ERROR = 1593


@dataclass(frozen=True, slots=True)
class Queued:
    """A transaction as it starts being queued: its GTID, the commit times its GTID event
    ``raw`` gives (microseconds from a MySQL source, else its header's second) and when."""

    gtid: tuple[str, int]
    commit_times: tuple[float, float]
    raw: bytes
    start: float

    def info(self, *, end: float = 0.0) -> TransactionInfo:
        """The transaction as SHOW REPLICA STATUS and performance_schema show it."""
        original, immediate = self.commit_times
        if not immediate:
            original = immediate = float(int.from_bytes(self.raw[0:4], "little"))
        return TransactionInfo(gtid=mariadb_text(*self.gtid), original_commit=original,
                               immediate_commit=immediate, start=self.start, end=end)  # fmt: skip


def _retryable(exc: SourceError) -> bool:
    """Errors after which MySQL's receiver tries again: the connection's, and the source
    refusing the login (it may be fixed meanwhile). A source's answer to the dump itself (1236:
    it no longer has what we need), a source without GTIDs (1593), an event that is not
    whole (13122) and an unsupported source are final. A checksum that does not match (1743)
    and a malformed packet (2027) are tried again: the network may have damaged them."""
    return exc.code not in (
        ER_SOURCE_FATAL_ERROR_READING_BINLOG, ER_REPLICA_FATAL_ERROR, ErrorCode.NOT_SUPPORTED_YET,
        ER_REPLICA_RELAY_LOG_WRITE_FAILURE,
    )  # fmt: skip
