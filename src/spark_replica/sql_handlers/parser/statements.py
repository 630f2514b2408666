"""The parsed forms of the replication statements."""

from __future__ import annotations

from dataclasses import dataclass, field

from spark_replica.applier_core.channels.config import BOTH_THREADS, ThreadType, Until, UntilKind
from spark_replica.applier_core.errors import Diagnostic

__all__ = ["BOTH_THREADS", "ThreadType", "Until", "UntilKind"]


@dataclass(frozen=True, slots=True)
class Account:
    """PRIVILEGE_CHECKS_USER = 'user'@'host'."""

    user: str
    host: str = "%"


@dataclass(slots=True)
class ChangeSource:
    """CHANGE REPLICATION SOURCE TO (or CHANGE MASTER TO).

    ``options`` maps the SOURCE_* spelling of each option to its value; a repeated option keeps
    its last value. Values are ``int``, ``float`` (heartbeat), ``str``, ``None`` (NULL),
    ``Account``, or ``tuple[int, ...]`` (IGNORE_SERVER_IDS).
    """

    options: dict[str, object]
    channel: str | None
    warnings: list[Diagnostic] = field(default_factory=list)


@dataclass(slots=True)
class StartReplica:
    threads: frozenset[ThreadType]
    until: Until | None
    user: str | None
    password: str | None
    default_auth: str | None
    plugin_dir: str | None
    channel: str | None
    warnings: list[Diagnostic] = field(default_factory=list)


@dataclass(slots=True)
class StopReplica:
    threads: frozenset[ThreadType]
    channel: str | None
    warnings: list[Diagnostic] = field(default_factory=list)


@dataclass(slots=True)
class ResetReplica:
    all: bool
    channel: str | None
    warnings: list[Diagnostic] = field(default_factory=list)


@dataclass(slots=True)
class ShowReplicaStatus:
    channel: str | None
    legacy_names: bool
    warnings: list[Diagnostic] = field(default_factory=list)


@dataclass(slots=True)
class ShowRelaylogEvents:
    """SHOW RELAYLOG EVENTS [IN 'file'] [FROM pos] [LIMIT [offset,] count] [FOR CHANNEL 'c']."""

    log_name: str | None
    position: int | None
    offset: int
    limit: int | None
    channel: str | None
    warnings: list[Diagnostic] = field(default_factory=list)


Statement = (
    ChangeSource
    | StartReplica
    | StopReplica
    | ResetReplica
    | ShowReplicaStatus
    | ShowRelaylogEvents
)
