"""A full disk under the replica's data directory (issue 8's reliability suite): the data
directory (relay logs and the metadata SQLite file) lies on a small tmpfs, and the receiver
fetches a workload from the built-in source until the disk is full.

As MySQL does when it cannot write a log, the receiver waits for space: Replica_IO_State
"Waiting for disk space", Last_IO_Errno ER_REPLICA_RELAY_LOG_WRITE_FAILURE (13122), "Relay log
write failure: could not queue event from source" and the cause; the server goes on
answering. The relay log holds whole events with valid checksums up to where the receiver
published (part of an event the full disk cut short may lie past it: no reader goes there,
and the writer cuts it when it writes again). Once the disk has room again (the tmpfs is
grown, or the file that filled it is deleted), the receiver goes on by itself where it
stopped, the error clears, and the replica ends with the source's content. STOP REPLICA
while it waits returns at once.

The tmpfs needs root (``mount``); without it the tests are skipped, or fail when ``CI`` is
set.
"""

from __future__ import annotations

import errno
import os
import subprocess
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.binlog.constants import HEADER_LEN, MAGIC, EventType
from spark_replica.applier_core.binlog.relaylog import relay_log_base_name, relay_log_directory
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.storage import InMemoryEngine
from spark_replica.server.components import default_components
from spark_replica.tools.generator.simulate import Dependency, Source, WorkloadSpec
from tests.helpers.builtin_source import (
    REPL_PASSWORD,
    REPL_USER,
    BuiltinSource,
    running_source,
)
from tests.helpers.replica_channel import (
    APPLIERS,
    CHANNEL,
    change_source_at,
    channel_threads,
    poll,
    wait_applied,
)
from tests.helpers.replica_fixtures import engine as engine  # noqa: F401 (a fixture)
from tests.helpers.server import connect, running_server
from tests.unit.csa_apply.harness import engine_content

SPEC = WorkloadSpec(tables=3, rows_per_table=20, transactions=600, clients=4,
                    dependency=Dependency.WRITESET, seed=31)  # fmt: skip
DISK_KIB = 640
"""The tmpfs at first: room for the metadata and part of the relay log."""
GROWN_KIB = 16384
FILLED_KIB = 2048
"""The tmpfs another file fills."""
RELAY_LOG_SIZE = 65536
"""max_relay_log_size: files rotate after the event that takes them past it."""
WRITE_FAILURE = 13122
DISK_FULL_STATE = "Waiting for disk space"
_CRC_RESIDUE = 0x2144DF1C  # CRC32 of any event whose last four bytes are its own CRC32
_IN_USE = 0x1  # LOG_EVENT_BINLOG_IN_USE_F: a Format_description's checksum leaves it out


@contextmanager
def small_disk(directory: Path, kib: int) -> Iterator[Path]:
    """A tmpfs of ``kib`` KiB mounted on ``directory`` (unmounted at the end)."""
    directory.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs",
                               str(directory)], capture_output=True, text=True)  # fmt: skip
        refused = done.stderr.strip() if done.returncode else ""
    except FileNotFoundError as exc:
        refused = str(exc)
    if refused:
        reason = f"a tmpfs cannot be mounted here (root is needed): {refused}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    try:
        yield directory
    finally:
        if subprocess.run(["umount", str(directory)]).returncode:
            subprocess.run(["umount", "--lazy", str(directory)], check=True)
            raise AssertionError(f"{directory} was busy: a file on it was left open")


def grow(directory: Path, kib: int) -> None:
    subprocess.run(["mount", "-o", f"remount,size={kib}k", str(directory)], check=True)


def whole_events(path: Path, *, last: bool) -> int:
    """Check that ``path`` is a relay log file of whole events with valid checksums; returns
    how many it holds. The last file may end with part of an event past the published end
    (a write the full disk cut short), which readers never reach and the next writer cuts."""
    data = path.read_bytes()
    assert data[: len(MAGIC)] == MAGIC, path
    offset, count = len(MAGIC), 0
    while offset < len(data):
        length = int.from_bytes(data[offset + 9 : offset + 13], "little")
        if last and (len(data) - offset < HEADER_LEN or offset + length > len(data)):
            break
        assert HEADER_LEN <= length <= len(data) - offset, (path, offset, length)
        event = bytearray(data[offset : offset + length])
        if event[4] == EventType.FORMAT_DESCRIPTION:
            event[17] &= ~_IN_USE
        assert zlib.crc32(event) == _CRC_RESIDUE, (path, offset)
        offset, count = offset + length, count + 1
    return count


def fill(directory: Path) -> Path:
    """Write a file in ``directory`` until the disk is full."""
    filler = directory / "filler"
    chunk = bytes(1 << 16)
    with open(filler, "wb", buffering=0) as handle:
        with pytest.raises(OSError) as full:
            while True:
                handle.write(chunk)
    assert full.value.errno == errno.ENOSPC, full.value
    return filler


def configure(cursor: Any, source: BuiltinSource, applier: str) -> None:
    # Heartbeats end the source's dump thread soon after the replica goes away.
    cursor.execute(change_source_at(
        "127.0.0.1", source.port, REPL_USER, REPL_PASSWORD, GET_SOURCE_PUBLIC_KEY=1,
        SOURCE_CONNECT_RETRY=1, SOURCE_HEARTBEAT_PERIOD=0.2,
    ))  # fmt: skip
    cursor.execute(f"CHANGE REPLICATION SOURCE TO {APPLIERS[applier]} FOR CHANNEL 'm1'")


def receiver_waits_on_full_disk(cursor: Any, data: Path) -> GtidSet:
    """Wait until the receiver waits for disk space; check its error, that the server
    answers, and that the relay log holds whole events only. Returns the transactions
    received."""
    status = poll(cursor, lambda s: s["Replica_IO_State"] == DISK_FULL_STATE)
    message = status["Last_IO_Error"]
    assert status["Last_IO_Errno"] == WRITE_FAILURE, status
    assert status["Replica_IO_Running"] == "Yes", status
    assert message.startswith("Relay log write failure: could not queue event from source: "
                              "No space left on device (file 'relay-bin-m1."), message  # fmt: skip
    cursor.execute("SELECT SERVICE_STATE, LAST_ERROR_NUMBER, LAST_ERROR_MESSAGE FROM "
                   "performance_schema.replication_connection_status")  # fmt: skip
    assert cursor.fetchall() == (("ON", WRITE_FAILURE, message),)
    cursor.execute("SELECT 1 + 1")
    assert cursor.fetchall() == ((2,),)
    directory = relay_log_directory(data, CHANNEL)
    files = (directory / f"{relay_log_base_name(CHANNEL)}.index").read_text().split()
    assert sum(whole_events(directory / name, last=name == files[-1]) for name in files) > 0
    received = GtidSet.parse(status["Retrieved_Gtid_Set"])
    assert 0 < received.count()
    return received


def goes_on(cursor: Any, source: BuiltinSource, received: GtidSet) -> None:
    """Once the disk has room, the receiver goes on by itself from what it received to the
    source's end; the applier, started then, applies everything."""
    everything = source.all_gtids()
    assert received.count() < everything.count()
    status = poll(cursor, lambda s: GtidSet.parse(s["Retrieved_Gtid_Set"]) == everything)
    assert (status["Last_IO_Errno"], status["Last_IO_Error"]) == (0, ""), status
    assert status["Replica_IO_State"] == "Waiting for source to send event"
    cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'm1'")
    status = wait_applied(cursor, everything)
    assert (status["Last_IO_Errno"], status["Last_SQL_Errno"]) == (0, 0), status
    cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
    assert channel_threads() == []


@pytest.fixture(autouse=True)
def quick_looks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The receiver looks at the full disk every 0.1 s instead of every few seconds."""
    monkeypatch.setattr("spark_replica.applier_core.receiver.thread.DISK_FULL_RETRY", 0.1)


@pytest.mark.parametrize("applier", sorted(APPLIERS))
def test_a_full_disk_makes_the_receiver_wait_and_it_goes_on_once_the_disk_is_grown(
    tmp_path: Path, engine: InMemoryEngine, applier: str
) -> None:
    """The relay log fills the disk while the applier is stopped (a lagging replica)."""
    with small_disk(tmp_path / "disk", DISK_KIB) as disk, \
            running_source(tmp_path / "source", SPEC) as source:  # fmt: skip
        data = disk / "data"
        with running_server(data, default_components(engine)) as server, \
                connect(server.port) as conn, conn.cursor() as cursor:  # fmt: skip
            cursor.execute(f"SET GLOBAL max_relay_log_size = {RELAY_LOG_SIZE}")
            configure(cursor, source, applier)
            source.live.start()
            cursor.execute("START REPLICA IO_THREAD FOR CHANNEL 'm1'")
            received = receiver_waits_on_full_disk(cursor, data)
            directory = relay_log_directory(data, CHANNEL)
            sizes = [p.stat().st_size for p in directory.glob("relay-bin-m1.0*")]
            assert len(sizes) > 2 and max(sizes) < RELAY_LOG_SIZE + (1 << 14), sizes
            grow(disk, GROWN_KIB)
            goes_on(cursor, source, received)
    assert engine_content(engine) == source.content


def test_a_disk_filled_by_another_file_makes_the_receiver_wait_until_it_is_freed(
    tmp_path: Path, engine: InMemoryEngine
) -> None:
    """Another file fills the disk: the receiver cannot write the relay log, nor save its
    position in the metadata (SQLite: "database or disk is full"); it waits all the same,
    and STOP REPLICA while it waits returns at once, leaving no thread."""
    setup = GtidSet.parse(f"{SPEC.server_uuid}:1-{sum(1 for _ in Source(SPEC).setup())}")
    with small_disk(tmp_path / "disk", FILLED_KIB) as disk, \
            running_source(tmp_path / "source", SPEC) as source:  # fmt: skip
        data = disk / "data"
        with running_server(data, default_components(engine)) as server, \
                connect(server.port) as conn, conn.cursor() as cursor:  # fmt: skip
            configure(cursor, source, "csa")
            cursor.execute("START REPLICA IO_THREAD FOR CHANNEL 'm1'")
            poll(cursor, lambda s: GtidSet.parse(s["Retrieved_Gtid_Set"]) == setup)
            filler = fill(disk)
            source.live.start()
            received = receiver_waits_on_full_disk(cursor, data)
            cursor.execute("STOP REPLICA IO_THREAD FOR CHANNEL 'm1'")
            assert channel_threads() == []
            filler.unlink()
            cursor.execute("START REPLICA IO_THREAD FOR CHANNEL 'm1'")
            goes_on(cursor, source, received)
    assert engine_content(engine) == source.content
