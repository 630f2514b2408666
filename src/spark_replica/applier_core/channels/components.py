"""Where the receiver and the two appliers plug into a channel.

A component is a factory that starts one thread group for a channel and returns a handle. The
handle's ``stop`` asks the group to finish and joins every thread it started (idempotent). A
group that ends by itself (an error, an UNTIL condition reached) calls ``exited`` on its
context exactly once; the channel then shows the thread as stopped with that error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, cast

from spark_replica.applier_core.channels.config import ApplierVersion, ChannelConfig, Until
from spark_replica.applier_core.channels.relay_logs import RelayLogs
from spark_replica.applier_core.channels.status import ErrorInfo, StatusBoard
from spark_replica.applier_core.channels.store import Checkpoint, WorkerInfo
from spark_replica.applier_core.progress import ExecutedGtids
from spark_replica.applier_core.settings import SystemVariables
from spark_replica.applier_core.storage import StorageEngine


class RunningThreads(Protocol):
    """A started receiver or applier."""

    def stop(self) -> None:
        """Ask every thread to finish, then join them all; safe to call more than once."""
        ...


@dataclass(frozen=True, slots=True)
class Credentials:
    """START REPLICA USER/PASSWORD/DEFAULT_AUTH/PLUGIN_DIR, which override the metadata."""

    user: str | None = None
    password: str | None = None
    default_auth: str | None = None
    plugin_dir: str | None = None


@dataclass(frozen=True, slots=True)
class SourcePosition:
    """Where a receiver has read its source's binary log up to, and the source's UUID and
    server id: Source_Log_File, Read_Source_Log_Pos, Uuid and Master_id of
    ``mysql.slave_master_info`` (an empty UUID, a 0 server id: unchanged).
    ``durable``: also save them now (not only in memory)."""

    log_file: str
    log_pos: int
    source_uuid: str = ""
    durable: bool = False
    source_server_id: int = 0


@dataclass(frozen=True, slots=True)
class ThreadContext:
    """What a starting component gets: the channel's configuration and where to report."""

    config: ChannelConfig
    status: StatusBoard
    settings: SystemVariables
    data_dir: str
    exited: Callable[[ErrorInfo | None], None]
    #: ``@@global.gtid_executed``, shared by every channel's applier.
    executed: ExecutedGtids
    #: The open relay logs; the channel's is ``relay_logs.get(config.name)``.
    relay_logs: RelayLogs
    until: Until | None = None
    credentials: Credentials = field(default_factory=Credentials)
    #: Records a legacy applier's checkpoint (the channel's applier positions and worker
    #: rows); None when nothing keeps them.
    checkpoint: Callable[[Checkpoint], None] | None = None
    #: The ``mysql.slave_worker_info`` rows the channel's last legacy-applier run left.
    workers: Sequence[WorkerInfo] = ()
    #: Records the receiver's position in the source's binary log; None when nothing does.
    source_position: Callable[[SourcePosition], None] | None = None


class ApplierFactory(Protocol):
    def start_applier(self, context: ThreadContext) -> RunningThreads: ...


class ReceiverFactory(Protocol):
    def start_receiver(self, context: ThreadContext) -> RunningThreads: ...


@dataclass(frozen=True, slots=True)
class Components:
    """The installed receiver and appliers; a missing one makes START REPLICA say so."""

    appliers: Mapping[ApplierVersion, ApplierFactory] = field(default_factory=dict)
    receiver: ReceiverFactory | None = None

    @property
    def engine(self) -> StorageEngine | None:
        """The storage engine of the first applier that has one (the CSA applier's ``engine``):
        the replicated tables that SHOW and information_schema list."""
        for applier in self.appliers.values():
            engine = getattr(applier, "engine", None)
            if engine is not None:
                return cast(StorageEngine, engine)
        return None
