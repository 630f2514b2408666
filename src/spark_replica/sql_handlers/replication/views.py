"""Rows of the replication status tables, read from the live channels and the metadata.

https://dev.mysql.com/doc/refman/8.4/en/performance-schema-replication-tables.html

Each function returns tuples in the column order of its table definition. Only channels with
SOURCE_HOST set produce rows, and THREAD_ID is NULL while a thread is off, as in MySQL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from spark_replica.applier_core.channels.config import ApplierVersion, ChannelConfig
from spark_replica.applier_core.channels.manager import Channel, ChannelManager
from spark_replica.applier_core.channels.status import (
    ChannelStatus,
    ErrorInfo,
    TransactionInfo,
    WorkerStatus,
)
from spark_replica.applier_core.settings import SystemVariables
from spark_replica.sql_handlers.tables.definitions import (
    REPLICATION_APPLIER_METRICS,
    REPLICATION_APPLIER_PROGRESS_BY_WORKER,
    TIMESTAMP_ZERO,
)

Row = tuple[object, ...]
MASKED_PASSWORD = "********"


def timestamp(seconds: float) -> str:
    """TIMESTAMP(6) text; MySQL's zero value when unset."""
    if not seconds:
        return TIMESTAMP_ZERO
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def error_timestamp(seconds: float) -> str:
    """Last_IO_Error_Timestamp / Last_SQL_Error_Timestamp: ``YYMMDD HH:MM:SS``, '' when unset."""
    if not seconds:
        return ""
    return datetime.fromtimestamp(seconds, UTC).strftime("%y%m%d %H:%M:%S")


def _yes_no(flag: bool) -> str:
    return "YES" if flag else "NO"


def _configured(manager: ChannelManager) -> Iterator[tuple[Channel, ChannelStatus]]:
    for channel in manager:
        if channel.config.connection.configured:
            yield channel, channel.status.snapshot()


def applier_configuration(manager: ChannelManager) -> list[Row]:
    rows: list[Row] = []
    for channel, _ in _configured(manager):
        applier = channel.config.applier
        account = None
        if applier.privilege_checks_user is not None:
            account = f"'{applier.privilege_checks_user}'@'{applier.privilege_checks_host}'"
        rows.append(
            (
                channel.name,
                applier.sql_delay,
                account,
                _yes_no(applier.require_row_format),
                applier.require_table_primary_key_check.value,
                applier.assign_gtids_type.value,
                applier.assign_gtids_value or None,
                int(applier.applier_version),
                applier.applier_worker_count,
                applier.applier_event_memory_limit,
            )
        )
    return rows


def _on_off(running: bool) -> str:
    return "ON" if running else "OFF"


def applier_status(manager: ChannelManager) -> list[Row]:
    return [
        (channel.name, _on_off(channel.sql_running), None, status.count_transactions_retries)
        for channel, status in _configured(manager)
    ]


def _has_coordinator(config: ChannelConfig, settings: SystemVariables) -> bool:
    if config.applier.applier_version is ApplierVersion.CSA:
        return True
    return settings.get_int("replica_parallel_workers") > 0


def _transaction(info: TransactionInfo, *, with_end: bool) -> Row:
    values: Row = (
        info.gtid,
        timestamp(info.original_commit),
        timestamp(info.immediate_commit),
        timestamp(info.start),
    )
    return values + (timestamp(info.end),) if with_end else values


def _error(error: ErrorInfo) -> Row:
    return (error.number, error.message, timestamp(error.timestamp))


def applier_status_by_coordinator(manager: ChannelManager, settings: SystemVariables) -> list[Row]:
    rows: list[Row] = []
    for channel, status in _configured(manager):
        if not _has_coordinator(channel.config, settings):
            continue
        rows.append(
            (channel.name, status.sql_thread_id, _on_off(channel.sql_running))
            + _error(status.coordinator_error)
            + _transaction(status.last_processed, with_end=True)
            + _transaction(status.processing, with_end=False)
        )
    return rows


def _worker_row(name: str, worker: WorkerStatus, running: bool) -> Row:
    last, applying = worker.last_applied, worker.applying
    return (
        (
            name,
            worker.worker_id,
            worker.thread_id,
            _on_off(running and worker.thread_id is not None),
        )
        + _error(worker.last_error)
        + _transaction(last, with_end=True)
        + _transaction(applying, with_end=False)
        + (last.retries,)
        + _error(last.last_transient_error)
        + (applying.retries,)
        + _error(applying.last_transient_error)
    )


def applier_status_by_worker(manager: ChannelManager, settings: SystemVariables) -> list[Row]:
    rows: list[Row] = []
    for channel, status in _configured(manager):
        workers = status.workers
        if not workers and not _has_coordinator(channel.config, settings):
            # The single-threaded applier shows its SQL thread as worker 0.
            workers = [WorkerStatus(0, status.sql_thread_id, status.sql_error)]
        rows.extend(_worker_row(channel.name, w, channel.sql_running) for w in workers)
    return rows


def connection_configuration(manager: ChannelManager) -> list[Row]:
    rows: list[Row] = []
    for channel, _ in _configured(manager):
        c = channel.config.connection
        rows.append(
            (
                channel.name, c.host, c.port, c.user, c.bind, "1" if c.auto_position else "0",
                "YES" if c.ssl else "NO", c.ssl_ca, c.ssl_capath, c.ssl_cert, c.ssl_cipher,
                c.ssl_key, _yes_no(c.ssl_verify_server_cert), c.ssl_crl, c.ssl_crlpath,
                c.connect_retry, c.retry_count, c.heartbeat_period, c.tls_version,
                c.public_key_path, _yes_no(c.get_public_key), c.network_namespace,
                c.compression_algorithms, c.zstd_compression_level, c.tls_ciphersuites,
                "1" if c.source_connection_auto_failover else "0", "1" if c.gtid_only else "0",
            )
        )  # fmt: skip
    return rows


def _service_state(channel: Channel, status: ChannelStatus) -> str:
    if not channel.io_running:
        return "OFF"
    return "CONNECTING" if status.io_connecting else "ON"


def connection_status(manager: ChannelManager) -> list[Row]:
    rows: list[Row] = []
    for channel, s in _configured(manager):
        rows.append(
            (
                channel.name,
                "",
                s.source_uuid or channel.config.connection.source_uuid,
                s.io_thread_id,
                _service_state(channel, s),
                s.count_received_heartbeats,
                timestamp(s.last_heartbeat),
                s.received_transaction_set,
            )
            + _error(s.io_error)
            + _transaction(s.last_queued, with_end=True)
            + _transaction(s.queueing, with_end=False)
        )
    return rows


def no_rows(manager: ChannelManager) -> list[Row]:
    """Replication filters are not supported: the filter tables are always empty."""
    del manager
    return []


def _metric_values(columns: list[str], metrics: dict[str, int]) -> Row:
    return tuple(metrics.get(name.lower(), 0) for name in columns)


def applier_metrics(manager: ChannelManager) -> list[Row]:
    columns = REPLICATION_APPLIER_METRICS.column_names()[1:]
    return [
        (channel.name,) + _metric_values(columns, status.metrics)
        for channel, status in _configured(manager)
    ]


def applier_progress_by_worker(manager: ChannelManager) -> list[Row]:
    columns = REPLICATION_APPLIER_PROGRESS_BY_WORKER.column_names()[2:]
    return [
        (channel.name, worker.worker_id) + _metric_values(columns, worker.metrics)
        for channel, status in _configured(manager)
        for worker in status.workers
    ]


PERFORMANCE_SCHEMA_ROWS: dict[str, Callable[[ChannelManager, SystemVariables], list[Row]]] = {
    "replication_applier_configuration": lambda m, s: applier_configuration(m),
    "replication_applier_status": lambda m, s: applier_status(m),
    "replication_applier_status_by_coordinator": applier_status_by_coordinator,
    "replication_applier_status_by_worker": applier_status_by_worker,
    "replication_connection_configuration": lambda m, s: connection_configuration(m),
    "replication_connection_status": lambda m, s: connection_status(m),
    "replication_applier_filters": lambda m, s: no_rows(m),
    "replication_applier_global_filters": lambda m, s: no_rows(m),
    "replication_applier_metrics": lambda m, s: applier_metrics(m),
    "replication_applier_progress_by_worker": lambda m, s: applier_progress_by_worker(m),
}
