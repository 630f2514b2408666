"""SHOW RELAYLOG EVENTS: a channel's relay log files, read without changing them.

https://dev.mysql.com/doc/refman/8.4/en/show-relaylog-events.html
"""

from __future__ import annotations

from itertools import islice

from spark_replica.applier_core.binlog.describe import SHOW_EVENTS_COLUMNS, show_events
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.relaylog import (
    RelayLogIndex,
    relay_log_base_name,
    relay_log_directory,
)
from spark_replica.applier_core.channels.config import DEFAULT_CHANNEL
from spark_replica.applier_core.channels.manager import ChannelManager
from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.sql_handlers.parser.statements import ShowRelaylogEvents
from spark_replica.sql_handlers.tables.definitions import ValueKind

COLUMNS = tuple(
    (name, ValueKind.INTEGER if name in ("Pos", "Server_id", "End_log_pos") else ValueKind.STRING)
    for name in SHOW_EVENTS_COLUMNS
)
_COMMAND = "SHOW RELAYLOG EVENTS"


def show_relaylog_events(
    manager: ChannelManager, statement: ShowRelaylogEvents
) -> list[tuple[object, ...]]:
    """The events of one relay log file, from a position, with LIMIT applied."""
    with manager.lock:
        name = statement.channel
        if name is None:
            if len(manager) > 1:
                raise ReplicaError.from_code(ErrorCode.REPLICA_MULTIPLE_CHANNELS_CMD)
            name = DEFAULT_CHANNEL
        if manager.get(name) is None:
            raise ReplicaError.from_code(ErrorCode.REPLICA_CHANNEL_DOES_NOT_EXIST, name)
    directory = relay_log_directory(manager.data_dir, name)
    try:
        files = RelayLogIndex(directory, relay_log_base_name(name)).listed_names()
    except BinlogError as e:
        raise _failure(str(e)) from e
    if statement.log_name is None:
        if not files:
            return []
        log_name = files[0]
    elif statement.log_name in files:
        log_name = statement.log_name
    else:
        raise _failure("Could not find target log")
    events = show_events(directory / log_name, start=statement.position or 4)
    stop = None if statement.limit is None else statement.offset + statement.limit
    try:
        return [line.as_row() for line in islice(events, statement.offset, stop)]
    except BinlogError as e:
        if statement.position is not None:
            raise _failure("Wrong offset or I/O error") from e
        raise _failure(str(e)) from e


def _failure(reason: str) -> ReplicaError:
    return ReplicaError.from_code(ErrorCode.ERROR_WHEN_EXECUTING_COMMAND, _COMMAND, reason)
