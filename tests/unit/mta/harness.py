"""A channel's legacy multi-threaded applier run against the in-memory engine, as START
REPLICA runs it: relay logs in the channel's directory, a ThreadContext, the MtaApplier
component. Reading and generating relay logs comes from the CSA's harness."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from spark_replica.applier_core.channels.components import ThreadContext
from spark_replica.applier_core.channels.config import (
    ApplierSettings,
    ApplierVersion,
    ChannelConfig,
    Until,
)
from spark_replica.applier_core.channels.relay_logs import RelayLogs
from spark_replica.applier_core.channels.status import ErrorInfo, StatusBoard
from spark_replica.applier_core.channels.store import Checkpoint, WorkerInfo
from spark_replica.applier_core.mta import MtaApplier, MtaChannel
from spark_replica.applier_core.progress import ExecutedGtids
from spark_replica.applier_core.settings import SystemVariables
from spark_replica.applier_core.storage import InMemoryEngine, StoreSession
from tests.unit.csa_apply.faults import RecordingEngine, RecordingSession
from tests.unit.csa_apply.harness import CHANNEL, WAIT, ChannelRun

#: The replica's server id: not the generator's (1), so the source's Format_description
#: events restart the logical clock as a real source's do.
REPLICA_SERVER_ID = 2


@dataclass
class MtaReplica(ChannelRun):
    """One channel's legacy applier on an in-memory engine."""

    data_dir: Path
    workers: int = 4
    commit_order: bool = True
    channel: str = CHANNEL
    engine: InMemoryEngine = field(default_factory=InMemoryEngine)
    settings: SystemVariables = field(default_factory=lambda: SystemVariables({}))
    status: StatusBoard = field(default_factory=StatusBoard)
    exits: list[ErrorInfo | None] = field(default_factory=list)
    exited: threading.Event = field(default_factory=threading.Event)
    server_id: int = REPLICA_SERVER_ID
    #: The checkpoints the applier recorded (what the server saves in its metadata).
    checkpoints: list[Checkpoint] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.settings.set_internal("replica_parallel_workers", self.workers)
        self.settings.set_internal("replica_preserve_commit_order", int(self.commit_order))
        self.settings.set_internal("server_id", self.server_id)
        self.executed = ExecutedGtids(settings=self.settings)
        self.relay_logs = RelayLogs(self.data_dir)
        self.applier = MtaApplier(self.engine)
        self.handle: MtaChannel | None = None

    def start(self, until: Until | None = None) -> MtaChannel:
        """START REPLICA SQL_THREAD [UNTIL ...], from the positions and worker rows of the
        last checkpoint, as the server keeps them."""
        applier = ApplierSettings(applier_version=ApplierVersion.MTA)
        workers: tuple[WorkerInfo, ...] = ()
        if self.checkpoints:
            last = self.checkpoints[-1]
            applier = replace(
                applier,
                relay_log_file=last.relay_log_file,
                relay_log_pos=last.relay_log_pos,
                source_log_file=last.source_log_file,
                source_log_pos=last.source_log_pos,
            )
            workers = last.workers
        config = ChannelConfig(name=self.channel, applier=applier)
        context = ThreadContext(
            config=config,
            status=self.status,
            settings=self.settings,
            data_dir=str(self.data_dir),
            exited=self._on_exit,
            executed=self.executed,
            relay_logs=self.relay_logs,
            checkpoint=self.checkpoints.append,
            until=until,
            workers=workers,
        )
        self.exited.clear()
        handle = self.applier.start_applier(context)
        assert isinstance(handle, MtaChannel)
        self.handle = handle
        return handle


def wait_until(predicate: Callable[[], bool], timeout: float = WAIT) -> bool:
    """Poll ``predicate`` (a status a DBA would read) until it holds; False after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.002)
    return True


def channel_threads(channel: str = CHANNEL) -> list[str]:
    """The names of the live threads of ``channel``'s legacy applier."""
    return sorted(t.name for t in threading.enumerate() if t.name.startswith(f"mta-{channel}-"))


class TimelineEngine(RecordingEngine):
    """Records, in one list, every ``("begin", gno)`` and ``("commit", gno)`` in the order
    they happened (a commit once it is visible): what the scheduling tests check."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.timeline: list[tuple[str, int]] = []
        self.timeline_lock = threading.Lock()
        #: ``gno -> event``: the transaction's commit waits for it (30 s at most).
        self.hold_commit: dict[int, threading.Event] = {}
        #: ``gno -> event``: set when the transaction begins.
        self.began: dict[int, threading.Event] = {}

    def session(self, name: str) -> StoreSession:
        return TimelineSession(self, name)


class TimelineSession(RecordingSession):
    def __init__(self, engine: TimelineEngine, name: str) -> None:
        super().__init__(engine, name)
        self._timeline = engine

    def begin(self, trx: Any) -> None:
        gno = _gno(trx.gtid)
        with self._timeline.timeline_lock:
            self._timeline.timeline.append(("begin", gno))
        super().begin(trx)
        began = self._timeline.began.get(gno)
        if began is not None:
            began.set()

    def commit(self, *, durable: bool = True) -> None:
        gno = _gno(self.transaction.gtid if self.transaction else "")
        hold = self._timeline.hold_commit.get(gno)
        if hold is not None:
            assert hold.wait(30), f"the commit of {gno} was held too long"
        super().commit(durable=durable)
        with self._timeline.timeline_lock:
            self._timeline.timeline.append(("commit", gno))


def _gno(gtid: str) -> int:
    return int(gtid.rsplit(":", 1)[1]) if ":" in gtid else -1
