"""SHOW REPLICA STATUS and the mysql.* replication tables.

https://dev.mysql.com/doc/refman/8.4/en/show-replica-status.html
"""

from __future__ import annotations

import os
from typing import Protocol

from spark_replica.applier_core.channels.lag import seconds_behind_source
from spark_replica.applier_core.channels.manager import Channel, ChannelManager
from spark_replica.applier_core.channels.status import ChannelStatus
from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.settings import SystemVariables
from spark_replica.sql_handlers.replication.views import MASKED_PASSWORD, Row, error_timestamp
from spark_replica.sql_handlers.tables.definitions import (
    SHOW_REPLICA_STATUS,
    Column,
    TableDef,
    get_table,
    show_slave_status_columns,
)


class MetadataRows(Protocol):
    def rows(self, table_name: str) -> tuple[list[str], list[tuple[object, ...]]]: ...


def _io_running(channel: Channel, status: ChannelStatus) -> str:
    if not channel.io_running:
        return "No"
    return "Connecting" if status.io_connecting else "Yes"


def _seconds_behind(channel: Channel, status: ChannelStatus) -> int | None:
    return seconds_behind_source(
        status,
        applier_running=channel.sql_running,
        receiver_connected=channel.io_running and not status.io_connecting,
    )


def status_row(channel: Channel, executed_gtids: str) -> Row:
    """The 60 values of one channel, in SHOW REPLICA STATUS order."""
    c, a = channel.config.connection, channel.config.applier
    s = channel.status.snapshot()
    sql_error = s.sql_error
    return (
        s.io_state_text, c.host, c.user, c.port, c.connect_retry, c.source_log_file,
        c.source_log_pos, os.path.basename(s.relay_log_file or a.relay_log_file),
        s.relay_log_pos or a.relay_log_pos, a.source_log_file, _io_running(channel, s),
        "Yes" if channel.sql_running else "No", "", "", "", "", "", "",
        sql_error.number, sql_error.message, 0, a.source_log_pos, s.relay_log_space,
        s.until_condition, s.until_log_file, s.until_log_pos, "Yes" if c.ssl else "No",
        c.ssl_ca, c.ssl_capath, c.ssl_cert, c.ssl_cipher, c.ssl_key, _seconds_behind(channel, s),
        "Yes" if c.ssl_verify_server_cert else "No", s.io_error.number, s.io_error.message,
        sql_error.number, sql_error.message, ", ".join(str(i) for i in c.ignore_server_ids),
        s.source_server_id or c.source_server_id, s.source_uuid or c.source_uuid,
        "mysql.slave_master_info",
        a.sql_delay, None,
        s.sql_state_text, c.retry_count, c.bind, error_timestamp(s.io_error.timestamp),
        error_timestamp(sql_error.timestamp), c.ssl_crl, c.ssl_crlpath,
        s.received_transaction_set, executed_gtids, int(c.auto_position), "", channel.name,
        c.tls_version, c.public_key_path, int(c.get_public_key), c.network_namespace,
    )  # fmt: skip


def show_replica_status(
    manager: ChannelManager,
    settings: SystemVariables,
    channel_name: str | None,
    *,
    legacy_names: bool,
) -> tuple[tuple[Column, ...], list[Row]]:
    """Columns and rows: every configured channel, or the one named (3074 when unknown).

    Read without the statement lock (as the performance_schema tables are): a statement that
    holds it for long, STOP REPLICA joining threads, does not hold SHOW REPLICA STATUS up.
    Each channel's status and configuration are snapshots, consistent per channel."""
    columns = show_slave_status_columns() if legacy_names else SHOW_REPLICA_STATUS
    if channel_name is not None:
        channel = manager.get(channel_name)
        if channel is None:
            raise ReplicaError.from_code(ErrorCode.REPLICA_CHANNEL_DOES_NOT_EXIST, channel_name)
        channels = [channel]
    else:
        channels = list(manager)
    executed = settings.get_str("gtid_executed")
    rows = [status_row(c, executed) for c in channels if c.config.connection.configured]
    return tuple(columns), rows


def mysql_table_rows(store: MetadataRows, table: TableDef) -> list[Row]:
    """Rows of a mysql.* replication table in its definition's column order; passwords masked."""
    names, rows = store.rows(table.name)
    index = {name.lower(): i for i, name in enumerate(names)}
    order = [index[name.lower()] for name in table.column_names()]
    password = index.get("user_password")
    result: list[Row] = []
    for row in rows:
        values = list(row)
        if password is not None and values[password]:
            values[password] = MASKED_PASSWORD
        result.append(tuple(values[i] for i in order))
    return result


def mysql_table(name: str) -> TableDef | None:
    return get_table("mysql", name)
