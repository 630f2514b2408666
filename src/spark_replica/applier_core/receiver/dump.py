"""Asking a source for its binary log: COM_REGISTER_SLAVE, then COM_BINLOG_DUMP_GTID with
the GTIDs the replica has (a MySQL source, or the built-in one), or COM_BINLOG_DUMP with
``@slave_connect_state`` (MariaDB's GTID dump), and reading the events it streams back.

Each streamed packet is an OK byte followed by one whole event (header, body and checksum,
as in a binlog file); an EOF packet ends a non-blocking dump once the source has nothing
more, and an ERR packet ends it with the source's error (1236 for a GTID it no longer has).
"""

from __future__ import annotations

import struct
import time
from collections.abc import Iterator

from spark_replica.applier_core.binlog.codecs.gtid import encode_gtid_set
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.receiver.client import (
    CR_SERVER_LOST,
    ResultSet,
    SourceClient,
    SourceError,
)
from spark_replica.applier_core.receiver.protocol import (
    COM_BINLOG_DUMP,
    COM_BINLOG_DUMP_GTID,
    COM_REGISTER_SLAVE,
)

#: An answer to ``SELECT @@GLOBAL.GTID_MODE`` that a GTID dump can work with.
_GTID_MODE_ON = "ON"
ER_REPLICA_FATAL_ERROR = 1593

#: Return EOF instead of waiting once the source has sent everything.
BINLOG_DUMP_NON_BLOCK = 1

#: What @mariadb_slave_capability announces: GTID-aware (MARIA_SLAVE_CAPABILITY_GTID).
MARIADB_CAPABILITY_GTID = 4


def register_replica(
    client: SourceClient, server_id: int, *, host: str = "", port: int = 0
) -> None:
    """COM_REGISTER_SLAVE: the source lists this replica in SHOW REPLICAS."""
    body = struct.pack("<I", server_id)
    for text in (host, "", ""):  # report host, user, password
        raw = text.encode()
        body += bytes([len(raw)]) + raw
    body += struct.pack("<HII", port, 0, 0)  # port, replication rank, source id
    client.command(COM_REGISTER_SLAVE, body)
    client.expect_ok()


def prepare_mariadb(client: SourceClient, gtid_position: str, *, heartbeat: float = 0.0) -> None:
    """The session variables a MariaDB source reads before a GTID dump: the checksum it may
    send, our capability, where to start (``domain-server-seq`` per domain; '' for the
    beginning) and, when ``heartbeat`` > 0, how many seconds of silence make it send a
    heartbeat event."""
    client.execute("SET @master_binlog_checksum = @@global.binlog_checksum")
    if heartbeat > 0:
        client.execute(f"SET @master_heartbeat_period = {round(heartbeat * 1e9)}")
    client.execute(f"SET @mariadb_slave_capability = {MARIADB_CAPABILITY_GTID}")
    client.execute(f"SET @slave_connect_state = '{_quoted(gtid_position)}'")
    client.execute("SET @slave_gtid_strict_mode = 1")


def prepare_mysql(
    client: SourceClient, *, heartbeat: float = 0.0, replica_uuid: str = ""
) -> tuple[int, str]:
    """What a MySQL replica asks and tells its source before a dump (after ``clock_diff``):
    the source's server id, the heartbeat period (in nanoseconds), that it takes CRC32
    checksums, and its own UUID. Returns the source's server_id and server_uuid.

    Raises:
        SourceError: the connection broke (2013), or the source refused what a dump needs:
            1593 (ER_REPLICA_FATAL_ERROR) with MySQL's reason.
    """
    found = _required(client, "SELECT @@GLOBAL.SERVER_ID", "getting the value of SERVER_ID")
    text = found.rows[0][0] if found.rows else None
    server_id = int(text) if text is not None and text.isdigit() else 0
    if heartbeat > 0:
        period = round(heartbeat * 1e9)
        _required(
            client,
            f"SET @master_heartbeat_period = {period}, @source_heartbeat_period = {period}",
            "setting @source_heartbeat_period",
        )
    _required(
        client,
        "SET @master_binlog_checksum = @@global.binlog_checksum, "
        "@source_binlog_checksum = @@global.binlog_checksum",
        "setting @source_binlog_checksum",
    )
    mode = _required(client, "SELECT @@GLOBAL.GTID_MODE", "getting the value of GTID_MODE")
    if not mode.rows or mode.rows[0][0] != _GTID_MODE_ON:
        raise SourceError(
            ER_REPLICA_FATAL_ERROR,
            "Fatal error: The replication receiver thread cannot start in AUTO_POSITION mode: "
            "the source has GTID_MODE = OFF instead of ON.",
        )
    uuid = _required(client, "SELECT @@GLOBAL.SERVER_UUID", "getting the value of SERVER_UUID")
    if replica_uuid:
        _tolerated(client, f"SET @slave_uuid = '{replica_uuid}', @replica_uuid = '{replica_uuid}'")
    return server_id, (uuid.rows[0][0] or "") if uuid.rows else ""


def clock_diff(client: SourceClient) -> int:
    """How many seconds the replica's clock is ahead of the source's (negative: behind), as
    MySQL's receiver measures it when it connects: ``time(0)`` less the source's
    ``SELECT UNIX_TIMESTAMP()``. Seconds_Behind_Source subtracts it. 0 when the source does
    not answer with a number (MySQL goes on then too).

    Raises:
        SourceError: the connection broke (2013).
    """
    try:
        found = client.query("SELECT UNIX_TIMESTAMP()")
    except SourceError as exc:
        if exc.code == CR_SERVER_LOST:
            raise
        return 0
    text = found.rows[0][0] if found.rows else None
    try:
        source_now = int(float(text)) if text is not None else None
    except ValueError:
        source_now = None
    return 0 if source_now is None else int(time.time()) - source_now


def _required(client: SourceClient, sql: str, what: str) -> ResultSet:
    try:
        return client.query(sql)
    except SourceError as exc:
        if exc.code == CR_SERVER_LOST:
            raise
        raise SourceError(
            ER_REPLICA_FATAL_ERROR,
            f"Fatal error: The replica I/O thread stops because a fatal error is encountered "
            f"when {what} on source. Error: {exc.message}",
        ) from exc


def _tolerated(client: SourceClient, sql: str) -> None:
    try:
        client.query(sql)
    except SourceError as exc:
        if exc.code == CR_SERVER_LOST:
            raise


def dump_gtid(
    client: SourceClient, server_id: int, gtids: GtidSet, *, blocking: bool = True
) -> None:
    """COM_BINLOG_DUMP_GTID: everything the source has that ``gtids`` lacks."""
    flags = 0 if blocking else BINLOG_DUMP_NON_BLOCK
    data = encode_gtid_set(gtids)
    body = struct.pack("<HII", flags, server_id, 0) + struct.pack("<QI", 4, len(data)) + data
    client.command(COM_BINLOG_DUMP_GTID, body)


def dump_mariadb(client: SourceClient, server_id: int, *, blocking: bool = True) -> None:
    """COM_BINLOG_DUMP from the GTID position set by ``prepare_mariadb``."""
    flags = 0 if blocking else BINLOG_DUMP_NON_BLOCK
    client.command(COM_BINLOG_DUMP, struct.pack("<IHI", 4, flags, server_id))


def events(client: SourceClient) -> Iterator[bytes]:
    """The streamed events, each a whole event as bytes, until the source ends the dump.

    Raises:
        SourceError: the source's ERR packet, or a lost connection.
    """
    read_packet = client.stream.read_packet
    while True:
        packet = read_packet()
        kind = packet[0]
        if kind == 0x00:
            yield packet[1:]
        elif kind == 0xFE and len(packet) < 9:
            return
        else:
            raise client.error_of(packet)


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")
