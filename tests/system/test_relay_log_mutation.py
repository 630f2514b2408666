"""A damaged relay log (issue 8's reliability suite): a channel receives a workload from the
built-in source, the replica server is stopped, its relay log is damaged on disk (flipped
bytes in an event's header or body, a file cut inside an event, bytes removed from the
middle of a file, garbage appended, a zeroed block, two events swapped, a listed file
deleted), and the server is started again with START REPLICA, with either applier; with
the seal its receiver left at its clean stop, or without it (as after a crash).

The replica must never apply a damaged transaction. Damage that opening the relay log cuts
away (a partial or corrupt tail of the last file, what a crash mid-write leaves; not when
the seal names the last file at its present length) is fetched again from the source and
replication goes on. Any other damage stops the applier with
ER_REPLICA_RELAY_LOG_READ_FAILURE (13121) in SHOW REPLICA STATUS and performance_schema
(DES.TS.0060, ERR.10, T42), with the transactions before it applied and in gtid_executed,
none after. A deleted file keeps the relay log from opening: START REPLICA fails with
ER_RELAY_LOG_INIT (1380) and nothing is applied. Then the DBA's way out, RESET REPLICA and
START REPLICA, fetches everything again from the source by GTID auto-position and ends in
the source's content.

Positions are random; the seed is printed, and ``SPARK_REPLICA_SEED`` replays one.
"""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pymysql
import pytest

from spark_replica.applier_core.binlog.relaylog import relay_log_base_name, relay_log_directory
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.storage import InMemoryEngine
from spark_replica.server.components import default_components
from spark_replica.tools.generator.simulate import (
    Dependency,
    GeneratedTransaction,
    Source,
    WorkloadSpec,
)
from spark_replica.tools.generator.writer import TransactionEncoder
from tests.helpers.builtin_source import (
    REPL_PASSWORD,
    REPL_USER,
    BuiltinSource,
    running_source,
)
from tests.helpers.relay_log_damage import MUTATIONS, Damage, Expected, expected, read_layout
from tests.helpers.replica_channel import (
    APPLIERS,
    CHANNEL,
    change_source_at,
    channel_threads,
    executed,
    poll,
    wait_applied,
)
from tests.helpers.replica_fixtures import engine as engine  # noqa: F401 (a fixture)
from tests.helpers.server import connect, running_server
from tests.helpers.soak import soak_size
from tests.unit.csa_apply.harness import Content, engine_content

SPEC = WorkloadSpec(tables=3, rows_per_table=20, transactions=120, clients=4,
                    dependency=Dependency.WRITESET, seed=23)  # fmt: skip
SETUP = sum(1 for _ in Source(SPEC).setup())
"""The transactions that create and load the tables; the damage comes after them."""
RELAY_LOG_SIZE = 8192
"""max_relay_log_size while receiving the first part of the workload: many small files."""
READ_FAILURE = 13121
RELAY_LOG_INIT = 1380
READ_FAILURE_TEXT = f"Replica SQL for channel '{CHANNEL}': Relay log read failure: "


@pytest.fixture
def seed() -> int:
    value = int(os.environ.get("SPARK_REPLICA_SEED") or random.randrange(1 << 32))
    print(f"SPARK_REPLICA_SEED={value}")
    return value


@dataclass(frozen=True)
class Received:
    """A source and a replica data directory whose channel 'm1' received all of it (and
    applied none): the first part into files of ``RELAY_LOG_SIZE``, the rest into one."""

    applier: str
    source: BuiltinSource
    data: Path


@pytest.fixture(scope="module", params=sorted(APPLIERS))
def received(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[Received]:  # fmt: skip
    directory = tmp_path_factory.mktemp(f"received-{request.param}")
    with running_source(directory / "source", SPEC) as source:
        receive(directory / "data", source, request.param)
        yield Received(request.param, source, directory / "data")


def receive(data: Path, source: BuiltinSource, applier: str) -> None:
    encoder = TransactionEncoder(SPEC.server_uuid)
    workload = source.transactions[SETUP:]
    first_part = SPEC.transactions // 3

    def append(transactions: list[GeneratedTransaction]) -> GtidSet:
        for trx in transactions:
            source.server.binlog.append(encoder.encode(trx), (SPEC.server_uuid, trx.gno))
        return GtidSet.parse(f"{SPEC.server_uuid}:1-{transactions[-1].gno}")

    components = default_components(InMemoryEngine())
    with running_server(data, components) as server, connect(server.port) as conn:
        with conn.cursor() as cursor:
            # Heartbeats end the source's dump thread soon after the replica goes away.
            cursor.execute(change_source_at(
                "127.0.0.1", source.port, REPL_USER, REPL_PASSWORD, GET_SOURCE_PUBLIC_KEY=1,
                SOURCE_CONNECT_RETRY=1, SOURCE_HEARTBEAT_PERIOD=0.2,
            ))  # fmt: skip
            cursor.execute(f"CHANGE REPLICATION SOURCE TO {APPLIERS[applier]} FOR CHANNEL 'm1'")
            for size, part in ((RELAY_LOG_SIZE, workload[:first_part]),
                               (0, workload[first_part:])):  # fmt: skip
                cursor.execute(f"SET GLOBAL max_relay_log_size = {size}")
                cursor.execute("START REPLICA IO_THREAD FOR CHANNEL 'm1'")
                wait_received(cursor, append(part))
                cursor.execute("STOP REPLICA IO_THREAD FOR CHANNEL 'm1'")


def wait_received(cursor: Any, gtids: GtidSet) -> None:
    poll(cursor, lambda status: GtidSet.parse(status["Retrieved_Gtid_Set"]) == gtids)


def damage_relay_log(data: Path, kind: str, rng: random.Random) -> tuple[Damage, Expected]:
    directory = relay_log_directory(data, CHANNEL)
    layout = read_layout(directory, relay_log_base_name(CHANNEL))
    assert len(layout.files) > 5, layout.files  # max_relay_log_size rotated the relay log
    assert layout.of_transactions(SETUP + SPEC.transactions // 3)[-1].file == layout.files[-1]
    damage = MUTATIONS[kind](layout, rng, SETUP + 1)
    return damage, expected(layout, damage)


def content_after(source: BuiltinSource, count: int) -> Content:
    """The tables once the first ``count`` transactions are applied (all tables exist)."""
    tables: dict[str, dict[Any, tuple[object, ...]]] = {name: {} for name in source.content}
    for trx in source.transactions[:count]:
        for change in trx.changes:
            rows = tables[change.table.qualified]
            if change.before is not None:
                del rows[change.before[0]]
            if change.after is not None:
                rows[change.after[0]] = change.after
    return {name: [rows[key] for key in sorted(rows)] for name, rows in tables.items()}


def applier_errors(cursor: Any) -> set[tuple[int, str]]:
    """The errors performance_schema shows for 'm1''s applier (coordinator and workers)."""
    found: set[tuple[int, str]] = set()
    for table in ("replication_applier_status_by_coordinator",
                  "replication_applier_status_by_worker"):  # fmt: skip
        cursor.execute(f"SELECT LAST_ERROR_NUMBER, LAST_ERROR_MESSAGE FROM "
                       f"performance_schema.{table} WHERE CHANNEL_NAME = 'm1'")  # fmt: skip
        found.update((number, message) for number, message in cursor.fetchall() if number)
    return found


def start_replica_is_refused(cursor: Any, damage: Damage) -> None:
    """A relay log that cannot be opened: START REPLICA fails with ER_RELAY_LOG_INIT, both
    threads stay stopped, nothing is applied."""
    with pytest.raises(pymysql.err.OperationalError) as failed:
        cursor.execute("START REPLICA FOR CHANNEL 'm1'")
    assert failed.value.args == (RELAY_LOG_INIT, (
        "Failed initializing relay log position: relay log file listed in the index is "
        f"missing (file '{damage.file}')"))  # fmt: skip
    status = poll(cursor, lambda _: True)
    assert (status["Replica_IO_Running"], status["Replica_SQL_Running"]) == ("No", "No")
    assert executed(cursor).count() == 0


def applier_stops_before_the_damage(
    cursor: Any, engine: InMemoryEngine, received: Received, want: Expected
) -> None:
    """START REPLICA: the applier stops with ER_REPLICA_RELAY_LOG_READ_FAILURE, shown in SHOW
    REPLICA STATUS and performance_schema, having applied a gap-free prefix of the source
    that ends before the damage: exactly the transactions before it with the Change Stream
    Applier; the multi-threaded applier may give up those still queued (WL5569.ERR.1)."""
    cursor.execute("START REPLICA FOR CHANNEL 'm1'")
    status = poll(cursor, lambda s: s["Replica_SQL_Running"] == "No")
    assert status["Last_SQL_Errno"] == READ_FAILURE, status
    message = status["Last_SQL_Error"]
    assert message.startswith(READ_FAILURE_TEXT), message
    reason = message.removeprefix(f"Replica SQL for channel '{CHANNEL}': ")
    shown = applier_errors(cursor)
    assert any(number == READ_FAILURE and text.endswith(reason) for number, text in shown)
    applied = executed(cursor)
    count = applied.count()
    assert applied == GtidSet.parse(f"{SPEC.server_uuid}:1-{count}" if count else "")
    if received.applier == "csa":
        assert count == want.applied, (message, applied)
    else:
        assert count <= want.applied, (message, applied)
    assert engine_content(engine) == content_after(received.source, count), message


def start_on_damage(
    data: Path, engine: InMemoryEngine, received: Received, damage: Damage, want: Expected
) -> None:
    """Start the server on the damaged relay log and START REPLICA: it goes on, or it stops
    as it must and then RESET REPLICA and START REPLICA fetch everything again. Either way
    the replica ends with the source's content."""
    everything = received.source.all_gtids()
    with running_server(data, default_components(engine)) as server, connect(server.port) as conn:
        with conn.cursor() as cursor:
            if want.unopenable:
                start_replica_is_refused(cursor, damage)
            elif not want.recovered:
                applier_stops_before_the_damage(cursor, engine, received, want)
            if want.unopenable or not want.recovered:
                cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
                cursor.execute("RESET REPLICA FOR CHANNEL 'm1'")
                assert not list(relay_log_directory(data, CHANNEL).glob("*.seal"))
            cursor.execute("START REPLICA FOR CHANNEL 'm1'")
            status = wait_applied(cursor, everything)
            assert (status["Last_SQL_Errno"], status["Last_IO_Errno"]) == (0, 0), status
            cursor.execute("STOP REPLICA FOR CHANNEL 'm1'")
            assert channel_threads() == []
    assert engine_content(engine) == received.source.content


@pytest.mark.parametrize("stop", ["clean", "crash"])
@pytest.mark.parametrize("kind", list(MUTATIONS))
def test_a_damaged_relay_log_applies_no_damaged_transaction(
    tmp_path: Path, engine: InMemoryEngine, received: Received, seed: int, kind: str,
    stop: str,
) -> None:  # fmt: skip
    """``clean``: the receiver stopped and sealed the relay log, so damage to the last file
    that keeps its length is not cut at the next start but stops the applier like damage
    elsewhere. ``crash``: no seal (the receiver died with the server), as before."""
    data = tmp_path / "data"
    shutil.copytree(received.data, data)
    seals = list(relay_log_directory(data, CHANNEL).glob("*.seal"))
    assert len(seals) == 1  # the receiver's clean stop sealed the relay log
    if stop == "crash":
        seals[0].unlink()
    damage, want = damage_relay_log(data, kind, random.Random(f"{seed}:{kind}"))
    print(damage, want)
    start_on_damage(data, engine, received, damage, want)


@pytest.mark.soak
def test_random_damage_applies_no_damaged_transaction(
    tmp_path: Path, received: Received, seed: int
) -> None:
    """Random mutations at random places, each on a fresh copy of the received relay log."""
    rng = random.Random(seed)
    for round_ in range(soak_size(short=4, long=400)):
        data = tmp_path / f"data-{round_}"
        shutil.copytree(received.data, data)
        damage, want = damage_relay_log(data, rng.choice(list(MUTATIONS)), rng)
        print(round_, damage, want)
        start_on_damage(data, InMemoryEngine(), received, damage, want)
        shutil.rmtree(data)
