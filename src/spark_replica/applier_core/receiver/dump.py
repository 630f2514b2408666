"""Asking a source for its binary log: COM_REGISTER_SLAVE, then COM_BINLOG_DUMP with
``@slave_connect_state`` (MariaDB's GTID dump), and reading the events it streams back.
MySQL's COM_BINLOG_DUMP_GTID is not built yet.

Each streamed packet is an OK byte followed by one whole event (header, body and checksum,
as in a binlog file); an EOF packet ends a non-blocking dump once the source has nothing
more, and an ERR packet ends it with the source's error (1236 for a GTID it no longer has).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from spark_replica.applier_core.receiver.client import SourceClient

COM_BINLOG_DUMP = 0x12
COM_REGISTER_SLAVE = 0x15

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


def dump_mariadb(client: SourceClient, server_id: int, *, blocking: bool = True) -> None:
    """COM_BINLOG_DUMP from the GTID position set by ``prepare_mariadb``."""
    flags = 0 if blocking else BINLOG_DUMP_NON_BLOCK
    client.command(COM_BINLOG_DUMP, struct.pack("<IHI", 4, flags, server_id))


def events(client: SourceClient) -> Iterator[bytes]:
    """The streamed events, each a whole event as bytes, until the source ends the dump.

    Raises:
        SourceError: the source's ERR packet, or a lost connection.
    """
    while True:
        packet = client.read_packet()
        kind = packet[0]
        if kind == 0x00:
            yield packet[1:]
        elif kind == 0xFE and len(packet) < 9:
            return
        else:
            raise client.error_of(packet)


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")
