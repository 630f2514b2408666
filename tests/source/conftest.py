"""Fixtures and helpers for the built-in binlog server's tests.

A small generated workload (57 transactions: the setup's DDL and load, then row changes) is
encoded once; ``make_binlog`` opens a ``SourceBinlog`` in the test's ``tmp_path`` and appends
the first ``count`` of them; ``start_server`` serves one with the accounts below; ``connect``
logs a ``SourceClient`` in. Everything opened is closed at the end of the test.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.events import DEFAULT_FDE, Event, Gtid
from spark_replica.applier_core.binlog.file import read_raw_events
from spark_replica.applier_core.binlog.stream import StreamDecoder
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.receiver.client import Security, SourceClient
from spark_replica.applier_core.receiver.dump import events
from spark_replica.applier_core.receiver.protocol import COM_BINLOG_DUMP, NATIVE
from spark_replica.tools.generator.simulate import WorkloadSpec, simulate
from spark_replica.tools.generator.writer import TransactionEncoder
from spark_replica.tools.source import Account, SourceBinlog, SourceOptions, SourceServer

MakeBinlog = Callable[..., SourceBinlog]
StartServer = Callable[..., SourceServer]
Connect = Callable[..., SourceClient]

SPEC = WorkloadSpec(tables=2, rows_per_table=10, transactions=50, load_batch=5)
UUID = SPEC.server_uuid
OTHER_UUID = "11111111-2222-3333-4444-555555555555"
SERVER_ID = 7
REPLICA_SERVER_ID = 42
SMALL_FILES = 4096  # max_size: a file rotates after every few transactions

REPL_USER, REPL_PASSWORD = "repl", "repl-secret"
NATIVE_USER, NATIVE_PASSWORD = "old", "old-secret"
ACCOUNTS = (Account(REPL_USER, REPL_PASSWORD), Account(NATIVE_USER, NATIVE_PASSWORD, NATIVE))

BINLOG_DUMP_NON_BLOCK = 1
LOG_EVENT_ARTIFICIAL_F = 0x20


@functools.cache
def workload() -> tuple[tuple[tuple[bytes, ...], int], ...]:
    """Every transaction of the workload: its events (encoded once, log_pos 0) and gno."""
    transactions, _ = simulate(SPEC)
    encoder = TransactionEncoder(UUID, SERVER_ID)
    return tuple((tuple(encoder.encode(trx)), trx.gno) for trx in transactions)


TOTAL = len(workload())


def append_workload(binlog: SourceBinlog, first: int, last: int) -> None:
    """Append the transactions with gno ``first`` .. ``last`` (1-based, inclusive)."""
    for events_, gno in workload()[first - 1 : last]:
        binlog.append(events_, (UUID, gno))


def gtids(first: int, last: int, uuid: str = UUID) -> GtidSet:
    """``uuid:first-last`` (empty when last < first)."""
    result = GtidSet()
    if last >= first:
        result.add_interval(uuid, "", first, last)
    return result


def gnos(decoded: list[Event]) -> list[int]:
    """The gno of every GTID event, in order."""
    return [e.gno for e in decoded if isinstance(e, Gtid)]


def decode(raws: list[bytes]) -> list[Event]:
    """Decode a dump's events in order (CRC32 from the start: the fake Rotate comes first).
    Every event must be one whole event: its length field equals its size and its checksum
    holds (WL5721.READ.1, T80)."""
    decoder = StreamDecoder(DEFAULT_FDE)
    decoded = []
    for raw in raws:
        event = decoder.decode(raw)
        assert event.header.event_length == len(raw)
        decoded.append(event)
    return decoded


def types(decoded: list[Event]) -> list[str]:
    return [e.header.type_name for e in decoded]


def file_events(path: Path) -> list[tuple[int, int, bytes]]:
    """``(start, end, raw)`` of every event of a binary log file on disk."""
    return list(read_raw_events(path))


def disk_files(directory: Path) -> list[str]:
    """The binary log files in ``directory`` (not the index), by name."""
    return sorted(p.name for p in directory.iterdir() if p.name[len("binlog.") :].isdigit())


def read_all(client: SourceClient) -> list[bytes]:
    """Every event of a non-blocking dump, up to its EOF packet."""
    return list(events(client))


def dump_file(
    client: SourceClient, file: str, position: int, *, flags: int = BINLOG_DUMP_NON_BLOCK
) -> None:
    """COM_BINLOG_DUMP from ``file`` at ``position``."""
    body = struct.pack("<IHI", position, flags, REPLICA_SERVER_ID) + file.encode()
    client.command(COM_BINLOG_DUMP, body)


@pytest.fixture
def make_binlog(tmp_path: Path) -> Iterator[MakeBinlog]:
    """``make_binlog(count=0, max_size=SMALL_FILES, directory=tmp_path/"binlog")``: an open
    binary log holding the first ``count`` transactions of the workload."""
    opened: list[SourceBinlog] = []

    def make(
        count: int = 0, *, max_size: int = SMALL_FILES, directory: Path | None = None
    ) -> SourceBinlog:
        binlog = SourceBinlog(directory or tmp_path / "binlog", server_id=SERVER_ID,
                              max_size=max_size)  # fmt: skip
        binlog.open()
        opened.append(binlog)
        append_workload(binlog, 1, count)
        return binlog

    yield make
    for binlog in opened:
        binlog.close()


@pytest.fixture
def start_server() -> Iterator[StartServer]:
    """``start_server(binlog, **options)``: a started SourceServer with ``ACCOUNTS``."""
    servers: list[SourceServer] = []

    def start(binlog: SourceBinlog, **options: object) -> SourceServer:
        settings: dict[str, object] = {"server_id": SERVER_ID, "server_uuid": UUID,
                                       "accounts": list(ACCOUNTS)}  # fmt: skip
        settings.update(options)
        server = SourceServer(binlog, SourceOptions(**settings))  # type: ignore[arg-type]
        servers.append(server)
        return server.start()

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def connect() -> Iterator[Connect]:
    """``connect(server, user=REPL_USER, password=REPL_PASSWORD, security=...)``: a logged
    in client (by default one that may fetch the RSA key for a first login)."""
    clients: list[SourceClient] = []

    def make(
        server: SourceServer,
        user: str = REPL_USER,
        password: str = REPL_PASSWORD,
        security: Security | None = None,
    ) -> SourceClient:
        security = security or Security(get_public_key=True)
        client = SourceClient.connect(
            "127.0.0.1", server.port, user, password, timeout=20, security=security
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def server(binlog: SourceBinlog, start_server: StartServer) -> SourceServer:
    """The server of the module's ``binlog`` fixture."""
    return start_server(binlog)
