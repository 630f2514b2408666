"""What the channel layer needs from persistent metadata; ``metadata/`` implements it.

Every method is one transaction: a statement either stores all it changed or nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from spark_replica.applier_core.channels.config import ChannelConfig


@dataclass(frozen=True, slots=True)
class ChannelChanges:
    """Everything one replication statement changes in the channel metadata."""

    save: tuple[ChannelConfig, ...] = ()
    delete: tuple[str, ...] = ()
    clear_workers: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """Progress of one worker of a channel: one ``mysql.slave_worker_info`` row, by value.

    ``relay_log_*``/``source_log_*``: where the worker's last committed transaction ends.
    ``checkpoint_*``: the channel's low-water mark at the last checkpoint; bit ``i`` of
    ``checkpoint_group_bitmap`` (little-endian bit order within each byte) is set when the
    worker committed the ``i``-th transaction after it (``checkpoint_seqno`` of them are
    counted, in ``checkpoint_group_size`` bits).
    """

    id: int
    relay_log_name: str = ""
    relay_log_pos: int = 0
    source_log_name: str = ""
    source_log_pos: int = 0
    checkpoint_relay_log_name: str = ""
    checkpoint_relay_log_pos: int = 0
    checkpoint_source_log_name: str = ""
    checkpoint_source_log_pos: int = 0
    checkpoint_seqno: int = 0
    checkpoint_group_size: int = 0
    checkpoint_group_bitmap: bytes = b""

    @property
    def has_gaps(self) -> bool:
        """Whether the worker committed transactions after an uncommitted one (a stop with
        an error, or a crash, of the multi-threaded applier)."""
        return any(self.checkpoint_group_bitmap)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A legacy applier's checkpoint: its low-water mark in the relay log and in the source's
    binary log (Relay_Log_File/Pos, Relay_Source_Log_File/Exec_Source_Log_Pos) and its
    workers' rows."""

    relay_log_file: str
    relay_log_pos: int
    source_log_file: str
    source_log_pos: int
    workers: tuple[WorkerInfo, ...] = ()


class ChannelStore(Protocol):
    """Connection and applier metadata of every channel."""

    def load_channels(self) -> list[ChannelConfig]:
        """Every stored channel, in creation order."""
        ...

    def save_channel(self, config: ChannelConfig) -> None:
        """Insert or replace both metadata rows of one channel, atomically."""
        ...

    def delete_channel(self, name: str) -> None:
        """Remove every row of a channel (connection, applier and worker metadata)."""
        ...

    def apply_channel_changes(self, changes: ChannelChanges) -> None:
        """Store all of ``changes`` in one transaction."""
        ...

    def load_worker_info(self, channel: str) -> list[WorkerInfo]:
        """The ``slave_worker_info`` rows of a channel, by worker id."""
        ...

    def save_checkpoint(self, config: ChannelConfig, workers: Sequence[WorkerInfo]) -> None:
        """A legacy applier's checkpoint, in one transaction: the applier positions of
        ``config`` (its ``slave_relay_log_info`` row) and the channel's worker rows."""
        ...


class VariableStore(Protocol):
    """Global variables set with SET GLOBAL, kept across restarts (as SET PERSIST does)."""

    def load_variables(self) -> dict[str, str]:
        """Every persisted variable, by lower-case name, as text."""
        ...

    def save_variables(self, values: Mapping[str, str]) -> None:
        """Insert or replace the given variables, atomically."""
        ...
