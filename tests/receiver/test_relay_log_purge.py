"""Relay logs stay bounded: the receiver rotates them at max_relay_log_size (max_binlog_size
when 0), the appliers purge each file once every transaction in it is durable in the store
(WL10500.PURGE.1-5, DES.RS.0050-0090), relay_log_purge=OFF keeps them, and
relay_log_space_limit makes the receiver wait for purges. Both appliers, against the built-in
binlog server, on an in-memory engine whose durability reports can be held back."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.binlog.relaylog import relay_log_directory
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.server.components import default_components
from spark_replica.tools.generator.simulate import Dependency, WorkloadSpec
from tests.helpers.builtin_source import REPL_PASSWORD, REPL_USER, BuiltinSource, running_source
from tests.helpers.held_durability import HeldDurabilityEngine
from tests.helpers.replica_channel import (
    APPLIERS,
    CHANNEL,
    change_source_at,
    poll,
    status,
    wait_applied,
)
from tests.helpers.server import connect, running_server
from tests.helpers.soak import soak_size
from tests.unit.csa_apply.harness import engine_content

FILE_SIZE = 16384  # max_relay_log_size / max_binlog_size: a few hundred transactions a file
SPACE_LIMIT = 4 * FILE_SIZE
FREE_SPACE = "Waiting for the replica SQL thread to free relay log space"
#: What the relay log may exceed relay_log_space_limit by: the receiver looks at the space
#: after each batch it writes (at most 64 KiB and one event), and a file it rotated to.
SLACK = (1 << 16) + 2 * FILE_SIZE


def _spec(transactions: int, seed: int = 5) -> WorkloadSpec:
    return WorkloadSpec(tables=3, rows_per_table=30, transactions=transactions, clients=6,
                        dependency=Dependency.WRITESET, seed=seed)  # fmt: skip


class RelayDirectory:
    """The channel's relay log files on disk, and the largest total seen by a sampler."""

    def __init__(self, data_dir: Path) -> None:
        self.path = relay_log_directory(data_dir, CHANNEL)
        self.largest = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="relay-sampler", daemon=True)

    def files(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for entry in sorted(self.path.glob("*.[0-9]*")):
            try:
                found[entry.name] = entry.stat().st_size
            except FileNotFoundError:  # purged meanwhile
                continue
        return found

    def total(self) -> int:
        return sum(self.files().values())

    def __enter__(self) -> RelayDirectory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            self.largest = max(self.largest, self.total())


@pytest.fixture
def engine() -> HeldDurabilityEngine:
    return HeldDurabilityEngine()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def limited_port(data_dir: Path, engine: HeldDurabilityEngine) -> Iterator[int]:
    """A server started with relay_log_space_limit (read-only, as in MySQL)."""
    with running_server(data_dir, default_components(engine),
                        relay_log_space_limit=SPACE_LIMIT) as server:  # fmt: skip
        yield server.port


@pytest.fixture
def port(data_dir: Path, engine: HeldDurabilityEngine) -> Iterator[int]:
    with running_server(data_dir, default_components(engine)) as server:
        yield server.port


def _start(cursor: Any, source: BuiltinSource, applier: str) -> None:
    cursor.execute(change_source_at("127.0.0.1", source.port, REPL_USER, REPL_PASSWORD,
                                    GET_SOURCE_PUBLIC_KEY=1, SOURCE_CONNECT_RETRY=1))  # fmt: skip
    cursor.execute(f"CHANGE REPLICATION SOURCE TO {APPLIERS[applier]} FOR CHANNEL '{CHANNEL}'")
    cursor.execute(f"START REPLICA FOR CHANNEL '{CHANNEL}'")
    source.live.start()


def _space_is_on_disk(cursor: Any, relay: RelayDirectory) -> dict[str, Any]:
    """Relay_Log_Space equals the files on disk (polled: a purge may be under way)."""
    return poll(cursor, lambda s: s["Relay_Log_Space"] == relay.total() > 0)


@pytest.mark.soak
@pytest.mark.parametrize("applier", sorted(APPLIERS))
def test_a_long_backlog_keeps_the_relay_log_within_the_space_limit(
    tmp_path: Path, limited_port: int, data_dir: Path, engine: HeldDurabilityEngine, applier: str
) -> None:
    """The whole workload is at the source at once: the receiver could run far ahead of the
    applier. Files rotate at max_binlog_size (max_relay_log_size is 0), each is purged once
    applied and durable, and the receiver waits at relay_log_space_limit: the directory never
    holds much more than the limit, whatever the backlog."""
    spec = _spec(soak_size(short=4000, long=60000))
    engine.commit_latency = 0.002  # an applier well behind the receiver
    with (
        running_source(tmp_path / "source", spec) as source,
        connect(limited_port) as conn,
        conn.cursor() as cursor,
        RelayDirectory(data_dir) as relay,
    ):
        cursor.execute(f"SET GLOBAL max_binlog_size = {FILE_SIZE}")
        _start(cursor, source, applier)
        found = wait_applied(cursor, source.all_gtids(), wait=240)
        assert (found["Last_IO_Errno"], found["Last_SQL_Errno"]) == (0, 0)
        written = source.server.binlog.end()
        found = _space_is_on_disk(cursor, relay)
        assert len(relay.files()) <= 3, relay.files()  # the rest were purged
        cursor.execute(f"STOP REPLICA FOR CHANNEL '{CHANNEL}'")
    assert engine_content(engine) == source.content
    # The source wrote many times the limit; the relay log never held much more than it.
    assert written[1] > 0 and found["Read_Source_Log_Pos"] > 0
    assert relay.largest <= SPACE_LIMIT + SLACK, relay.largest


@pytest.mark.parametrize("applier", sorted(APPLIERS))
def test_relay_log_files_are_purged_only_once_durable(
    tmp_path: Path, port: int, data_dir: Path, engine: HeldDurabilityEngine, applier: str
) -> None:
    """Applied but not durable, a file is the only copy of its transactions: every file stays
    until the engine reports them durable; then all but the active one go (T74,
    WL10500.PURGE.3, DES.RS.0070)."""
    engine.hold()
    with (
        running_source(tmp_path / "source", _spec(1500)) as source,
        connect(port) as conn,
        conn.cursor() as cursor,
        RelayDirectory(data_dir) as relay,
    ):
        cursor.execute(f"SET GLOBAL max_relay_log_size = {FILE_SIZE}")
        _start(cursor, source, applier)
        wait_applied(cursor, source.all_gtids())
        held = relay.files()
        assert len(held) >= 5 and min(held) == f"relay-bin-{CHANNEL}.000001", held
        assert engine.queued > 0
        _space_is_on_disk(cursor, relay)
        engine.release()
        found = poll(cursor, lambda _: len(relay.files()) == 1)
        [active] = relay.files()
        assert active == max(held) or active > max(held)
        found = _space_is_on_disk(cursor, relay)
        assert found["Relay_Log_Space"] == relay.files()[active]
        # Each start of the receiver begins a new file, as MySQL's does: the one it wrote
        # before is no longer active, and goes once the applier has read past it.
        cursor.execute(f"STOP REPLICA IO_THREAD FOR CHANNEL '{CHANNEL}'")
        cursor.execute(f"START REPLICA IO_THREAD FOR CHANNEL '{CHANNEL}'")
        stem, number = active.rsplit(".", 1)
        following = f"{stem}.{int(number) + 1:06d}"
        poll(cursor, lambda _: list(relay.files()) == [following])
        cursor.execute(f"STOP REPLICA FOR CHANNEL '{CHANNEL}'")
    assert engine_content(engine) == source.content


@pytest.mark.parametrize("applier", sorted(APPLIERS))
def test_relay_log_purge_off_keeps_every_file(
    tmp_path: Path, port: int, data_dir: Path, engine: HeldDurabilityEngine, applier: str
) -> None:
    """SET GLOBAL relay_log_purge=OFF, while the server runs: applied, durable files stay,
    every one from the first."""
    spec = _spec(1500)
    with (
        running_source(tmp_path / "source", spec) as source,
        connect(port) as conn,
        conn.cursor() as cursor,
        RelayDirectory(data_dir) as relay,
    ):
        cursor.execute("SET GLOBAL relay_log_purge = OFF")
        cursor.execute(f"SET GLOBAL max_relay_log_size = {FILE_SIZE}")
        _start(cursor, source, applier)
        wait_applied(cursor, source.all_gtids())
        kept = relay.files()
        numbers = [int(name.rsplit(".", 1)[1]) for name in kept]
        assert len(kept) >= 5 and numbers == list(range(1, len(kept) + 1)), kept
        _space_is_on_disk(cursor, relay)
        cursor.execute(f"STOP REPLICA FOR CHANNEL '{CHANNEL}'")
    assert engine_content(engine) == source.content


@pytest.mark.parametrize("applier", sorted(APPLIERS))
def test_the_receiver_waits_at_the_space_limit_and_resumes_after_purges(
    tmp_path: Path, limited_port: int, data_dir: Path, engine: HeldDurabilityEngine, applier: str
) -> None:
    """Over relay_log_space_limit with nothing durable, the receiver waits (its IO state says
    so) even though the applier has read everything: the files it read will be purged once
    durable. STOP REPLICA IO_THREAD while it waits returns at once; after START it waits
    again; once durability comes, purges free space and every transaction arrives."""
    engine.hold()
    spec = _spec(3000, seed=9)
    with (
        running_source(tmp_path / "source", spec) as source,
        connect(limited_port) as conn,
        conn.cursor() as cursor,
        RelayDirectory(data_dir) as relay,
    ):
        cursor.execute(f"SET GLOBAL max_relay_log_size = {FILE_SIZE}")
        _start(cursor, source, applier)
        waiting = poll(cursor, lambda s: s["Replica_IO_State"] == FREE_SPACE)
        assert SPACE_LIMIT < waiting["Relay_Log_Space"] <= SPACE_LIMIT + SLACK
        received = GtidSet.parse(waiting["Retrieved_Gtid_Set"])
        assert not source.all_gtids().is_subset(received)

        began = time.monotonic()
        cursor.execute(f"STOP REPLICA IO_THREAD FOR CHANNEL '{CHANNEL}'")
        assert time.monotonic() - began < 2.0
        assert status(cursor)["Replica_IO_Running"] == "No"
        cursor.execute(f"START REPLICA IO_THREAD FOR CHANNEL '{CHANNEL}'")
        poll(cursor, lambda s: s["Replica_IO_State"] == FREE_SPACE)

        engine.release()
        found = wait_applied(cursor, source.all_gtids())
        assert (found["Last_IO_Errno"], found["Last_SQL_Errno"]) == (0, 0)
        poll(cursor, lambda s: s["Replica_IO_State"] == "Waiting for source to send event")
        cursor.execute(f"STOP REPLICA FOR CHANNEL '{CHANNEL}'")
    assert engine_content(engine) == source.content
    assert relay.largest <= SPACE_LIMIT + SLACK, relay.largest
