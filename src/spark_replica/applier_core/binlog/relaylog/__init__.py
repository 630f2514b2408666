"""Relay logs: one channel's files of raw binary log events, written by the receiver and read
concurrently by the applier.

``RelayLog`` (files, index, published end position, purge bookkeeping), ``RelayLogWriter``
(one owning thread), ``RelayLogReader`` (any number, without locks during I/O) and the
SHOW REPLICA STATUS figures. Events are handled as raw bytes framed by their common header.
"""

from __future__ import annotations

from spark_replica.applier_core.binlog.relaylog.framing import TailRepair as TailRepair
from spark_replica.applier_core.binlog.relaylog.index import (
    Reconciliation as Reconciliation,
)
from spark_replica.applier_core.binlog.relaylog.index import (
    RelayLogFile as RelayLogFile,
)
from spark_replica.applier_core.binlog.relaylog.index import (
    RelayLogIndex as RelayLogIndex,
)
from spark_replica.applier_core.binlog.relaylog.index import (
    relay_log_base_name as relay_log_base_name,
)
from spark_replica.applier_core.binlog.relaylog.index import (
    relay_log_directory as relay_log_directory,
)
from spark_replica.applier_core.binlog.relaylog.log_space import LogSpace as LogSpace
from spark_replica.applier_core.binlog.relaylog.log_space import Room as Room
from spark_replica.applier_core.binlog.relaylog.position import EndPosition as EndPosition
from spark_replica.applier_core.binlog.relaylog.position import LogPosition as LogPosition
from spark_replica.applier_core.binlog.relaylog.position import (
    RelayCoordinate as RelayCoordinate,
)
from spark_replica.applier_core.binlog.relaylog.purge import FileUsage as FileUsage
from spark_replica.applier_core.binlog.relaylog.purge import PurgeTracker as PurgeTracker
from spark_replica.applier_core.binlog.relaylog.purge import Subscription as Subscription
from spark_replica.applier_core.binlog.relaylog.reader import ReaderState as ReaderState
from spark_replica.applier_core.binlog.relaylog.reader import RelayEvent as RelayEvent
from spark_replica.applier_core.binlog.relaylog.reader import (
    RelayLogReader as RelayLogReader,
)
from spark_replica.applier_core.binlog.relaylog.relay_log import Recovery as Recovery
from spark_replica.applier_core.binlog.relaylog.relay_log import RelayLog as RelayLog
from spark_replica.applier_core.binlog.relaylog.relay_log import (
    RelayLogState as RelayLogState,
)
from spark_replica.applier_core.binlog.relaylog.space import RelayLogStatus as RelayLogStatus
from spark_replica.applier_core.binlog.relaylog.space import (
    relay_log_space as relay_log_space,
)
from spark_replica.applier_core.binlog.relaylog.space import (
    relay_log_status as relay_log_status,
)
from spark_replica.applier_core.binlog.relaylog.writer import (
    DEFAULT_MAX_SIZE as DEFAULT_MAX_SIZE,
)
from spark_replica.applier_core.binlog.relaylog.writer import (
    RelayLogWriter as RelayLogWriter,
)
from spark_replica.applier_core.binlog.relaylog.writer import WriterState as WriterState

__all__ = [
    "DEFAULT_MAX_SIZE",
    "EndPosition",
    "FileUsage",
    "LogPosition",
    "LogSpace",
    "PurgeTracker",
    "ReaderState",
    "Reconciliation",
    "Recovery",
    "RelayCoordinate",
    "RelayEvent",
    "RelayLog",
    "RelayLogFile",
    "RelayLogIndex",
    "RelayLogReader",
    "RelayLogState",
    "RelayLogStatus",
    "RelayLogWriter",
    "Room",
    "Subscription",
    "TailRepair",
    "WriterState",
    "relay_log_base_name",
    "relay_log_directory",
    "relay_log_space",
    "relay_log_status",
]
