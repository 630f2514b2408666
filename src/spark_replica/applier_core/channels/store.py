"""What the channel layer needs from persistent metadata; ``metadata/`` implements it.

Every method is one transaction: a statement either stores all it changed or nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from spark_replica.applier_core.channels.config import ChannelConfig


@dataclass(frozen=True, slots=True)
class ChannelChanges:
    """Everything one replication statement changes in the channel metadata."""

    save: tuple[ChannelConfig, ...] = ()
    delete: tuple[str, ...] = ()
    clear_workers: tuple[str, ...] = field(default_factory=tuple)


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


class VariableStore(Protocol):
    """Global variables set with SET GLOBAL, kept across restarts (as SET PERSIST does)."""

    def load_variables(self) -> dict[str, str]:
        """Every persisted variable, by lower-case name, as text."""
        ...

    def save_variables(self, values: Mapping[str, str]) -> None:
        """Insert or replace the given variables, atomically."""
        ...
