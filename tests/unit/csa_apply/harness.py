"""A channel's Change Stream Applier run against the in-memory engine, as START REPLICA runs it:
relay logs in the channel's directory, a ThreadContext, the CsaApplier component."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from spark_replica.applier_core.binlog.relaylog import relay_log_base_name, relay_log_directory
from spark_replica.applier_core.channels.components import RunningThreads, ThreadContext
from spark_replica.applier_core.channels.config import (
    ApplierSettings,
    ApplierVersion,
    ChannelConfig,
    Until,
)
from spark_replica.applier_core.channels.relay_logs import RelayLogs
from spark_replica.applier_core.channels.status import ErrorInfo, StatusBoard
from spark_replica.applier_core.csa.applier import CsaApplier
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.progress import ExecutedGtids
from spark_replica.applier_core.settings import SystemVariables
from spark_replica.applier_core.storage import (
    InMemoryEngine,
    RowChange,
    StorageEngine,
    TableRef,
    TransactionRef,
)
from spark_replica.tools.generator.simulate import (
    GeneratedTransaction,
    WorkloadSpec,
    simulate,
)
from spark_replica.tools.generator.writer import write_binlogs

CHANNEL = "c1"
WAIT = 60.0


def copy_into_relay_log(files: Sequence[Path], data_dir: Path, channel: str = CHANNEL) -> None:
    """Copy binlog files into the channel's relay log directory and list them in its index
    (the DBA's way of applying binary logs)."""
    directory = relay_log_directory(data_dir, channel)
    directory.mkdir(parents=True, exist_ok=True)
    for path in files:
        shutil.copy(path, directory / path.name)
    index = directory / f"{relay_log_base_name(channel)}.index"
    index.write_text("".join(f"{p.name}\n" for p in files))


Content = dict[str, list[tuple[object, ...]]]


def engine_content(engine: StorageEngine) -> Content:
    """Every table's committed rows, sorted by key, by ``db.table`` (the generator's form)."""
    return {
        f"{t.schema}.{t.table}": sorted(engine.rows(t), key=lambda r: r[0])  # type: ignore[arg-type,return-value]
        for t in engine.tables()
    }


def insert_locally(engine: StorageEngine, schema: str, table: str, row: tuple[object, ...]) -> None:
    """Commit ``row`` behind the applier's back (a conflicting local write)."""
    session = engine.session("local")
    session.begin(TransactionRef("local:1", -1))
    session.apply_rows(TableRef(schema, table), [RowChange.insert(row)])
    session.prepare()
    session.commit()


def generate(spec: WorkloadSpec, directory: Path) -> tuple[list[GeneratedTransaction],
                                                          dict[str, list[tuple[object, ...]]],
                                                          list[Path]]:  # fmt: skip
    transactions, content = simulate(spec)
    files = write_binlogs(transactions, directory, server_uuid=spec.server_uuid)
    return transactions, content, files


class ChannelRun:
    """What the appliers' harnesses share: the channel's exits, waiting for GTIDs, the one
    stop path, and the content the applier left in the engine."""

    engine: InMemoryEngine
    executed: ExecutedGtids
    relay_logs: RelayLogs
    exits: list[ErrorInfo | None]
    exited: threading.Event
    handle: RunningThreads | None

    def _on_exit(self, error: ErrorInfo | None) -> None:
        self.exits.append(error)
        self.exited.set()

    def start(self) -> object:
        raise NotImplementedError  # each applier's harness starts its own component

    def wait_for(self, gtids: str) -> bool:
        return self.executed.wait_for(GtidSet.parse(gtids), WAIT)

    def run_until_applied(self, gtids: str) -> None:
        """START, wait until ``gtids`` are executed, STOP: the run must end without error."""
        self.start()
        assert self.wait_for(gtids)
        self.stop()
        assert self.exits == []

    def stop(self) -> None:
        if self.handle is not None:
            self.handle.stop()
            self.handle = None

    def close(self) -> None:
        self.stop()
        self.relay_logs.close_all()

    def content(self) -> Content:
        """Every table's committed rows, sorted by key, by ``db.table``."""
        return engine_content(self.engine)

    def rows(self, schema: str, table: str) -> list[tuple[object, ...]]:
        return sorted(self.engine.rows(TableRef(schema, table)), key=lambda r: r[0])  # type: ignore[arg-type,return-value]


@dataclass
class Replica(ChannelRun):
    """One channel's applier on an in-memory engine."""

    data_dir: Path
    workers: int = 4
    commit_order: bool = True
    channel: str = CHANNEL
    engine: InMemoryEngine = field(default_factory=InMemoryEngine)
    settings: SystemVariables = field(default_factory=lambda: SystemVariables({}))
    status: StatusBoard = field(default_factory=StatusBoard)
    exits: list[ErrorInfo | None] = field(default_factory=list)
    exited: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.settings.set_internal("replica_preserve_commit_order", int(self.commit_order))
        self.executed = ExecutedGtids(settings=self.settings)
        self.relay_logs = RelayLogs(self.data_dir)
        self.applier = CsaApplier(self.engine)
        self.handle: RunningThreads | None = None

    def sibling(self, channel: str) -> Replica:
        """Another channel of the same server: same engine, applier, executed set, data dir."""
        other = Replica(self.data_dir, self.workers, self.commit_order, channel, self.engine,
                        self.settings)  # fmt: skip
        other.executed, other.relay_logs, other.applier = (
            self.executed, self.relay_logs, self.applier)  # fmt: skip
        return other

    def config(self) -> ChannelConfig:
        applier = ApplierSettings(
            applier_version=ApplierVersion.CSA, applier_worker_count=self.workers
        )
        return ChannelConfig(name=self.channel, applier=applier)

    def start(self, until: Until | None = None) -> None:
        context = ThreadContext(
            config=self.config(),
            status=self.status,
            settings=self.settings,
            data_dir=str(self.data_dir),
            exited=self._on_exit,
            executed=self.executed,
            relay_logs=self.relay_logs,
            until=until,
        )
        self.exited.clear()
        self.handle = self.applier.start_applier(context)
