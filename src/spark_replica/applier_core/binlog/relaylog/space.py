"""Relay log figures for SHOW REPLICA STATUS: Relay_Log_File, Relay_Log_Pos, Relay_Log_Space.

https://dev.mysql.com/doc/refman/8.4/en/show-replica-status.html
"""

from __future__ import annotations

from dataclasses import dataclass

from spark_replica.applier_core.binlog.constants import MAGIC
from spark_replica.applier_core.binlog.relaylog.position import RelayCoordinate
from spark_replica.applier_core.binlog.relaylog.relay_log import RelayLog


@dataclass(frozen=True, slots=True)
class RelayLogStatus:
    relay_log_file: str
    """Relay_Log_File: the file the applier is reading (its name, no directory)."""
    relay_log_pos: int
    """Relay_Log_Pos: the applier's position in that file."""
    relay_log_space: int
    """Relay_Log_Space: the total size of every listed relay log file."""


def relay_log_space(relay_log: RelayLog) -> int:
    """The total size in bytes of every file the index lists (a file deleted meanwhile by a
    purge counts as 0)."""
    total = 0
    for name in relay_log.files():
        try:
            total += relay_log.path(name).stat().st_size
        except FileNotFoundError:
            continue
    return total


def relay_log_status(
    relay_log: RelayLog, applier_position: RelayCoordinate | None
) -> RelayLogStatus:
    """The status fields, given the applier's position (None if it has none yet).

    Without an applier position, MySQL shows the first relay log file at position 4; with no
    file yet, the name the first file will get.
    """
    if applier_position is None:
        files = relay_log.files()
        first = files[0] if files else relay_log.index.next_name()
        applier_position = RelayCoordinate(first, len(MAGIC))
    return RelayLogStatus(
        applier_position.file, applier_position.offset, relay_log_space(relay_log)
    )
