"""performance_schema replication tables.

Column names, order, types and nullability follow MySQL's
``storage/perfschema/table_replication_*.cc`` (8.0.43; ``replication_applier_status_by_worker``
uses the 8.4 ``CHAR(90)`` transaction columns, which hold tagged GTIDs). The three
``APPLIER_*`` columns of ``replication_applier_configuration`` are the Change Stream
Applier settings.

``replication_applier_metrics`` and ``replication_applier_progress_by_worker`` are
this server's own tables, modelled on the applier metrics tables of MySQL 9.1+; their
columns are not MySQL's.
"""

from __future__ import annotations

from .columns import TableDef, col

SCHEMA = "performance_schema"

_TS = "TIMESTAMP(6)"
_ON_OFF = "ENUM('ON','OFF')"
_YES_NO = "ENUM('YES','NO')"
_ONE_ZERO = "ENUM('1','0')"

REPLICATION_APPLIER_CONFIGURATION = TableDef(
    SCHEMA,
    "replication_applier_configuration",
    (
        col("CHANNEL_NAME", "CHAR(64)"),
        col("DESIRED_DELAY", "INT"),
        col("PRIVILEGE_CHECKS_USER", "TEXT", null=True),
        col("REQUIRE_ROW_FORMAT", _YES_NO),
        col("REQUIRE_TABLE_PRIMARY_KEY_CHECK", "ENUM('STREAM','ON','OFF','GENERATE')"),
        col("ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS_TYPE", "ENUM('OFF','LOCAL','UUID')"),
        col("ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS_VALUE", "TEXT", null=True),
        col("APPLIER_VERSION", "INT UNSIGNED"),
        col("APPLIER_WORKER_COUNT", "INT UNSIGNED"),
        col("APPLIER_EVENT_MEMORY_LIMIT", "BIGINT UNSIGNED"),
    ),
)

REPLICATION_APPLIER_STATUS = TableDef(
    SCHEMA,
    "replication_applier_status",
    (
        col("CHANNEL_NAME", "CHAR(64)"),
        col("SERVICE_STATE", _ON_OFF),
        col("REMAINING_DELAY", "INT UNSIGNED", null=True),
        col("COUNT_TRANSACTIONS_RETRIES", "BIGINT UNSIGNED"),
    ),
)

REPLICATION_APPLIER_STATUS_BY_COORDINATOR = TableDef(
    SCHEMA,
    "replication_applier_status_by_coordinator",
    (
        col("CHANNEL_NAME", "CHAR(64)"),
        col("THREAD_ID", "BIGINT UNSIGNED", null=True),
        col("SERVICE_STATE", _ON_OFF),
        col("LAST_ERROR_NUMBER", "INT"),
        col("LAST_ERROR_MESSAGE", "VARCHAR(1024)"),
        col("LAST_ERROR_TIMESTAMP", _TS),
        col("LAST_PROCESSED_TRANSACTION", "CHAR(57)", null=True),
        col("LAST_PROCESSED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP", _TS),
        col("LAST_PROCESSED_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP", _TS),
        col("LAST_PROCESSED_TRANSACTION_START_BUFFER_TIMESTAMP", _TS),
        col("LAST_PROCESSED_TRANSACTION_END_BUFFER_TIMESTAMP", _TS),
        col("PROCESSING_TRANSACTION", "CHAR(57)", null=True),
        col("PROCESSING_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP", _TS),
        col("PROCESSING_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP", _TS),
        col("PROCESSING_TRANSACTION_START_BUFFER_TIMESTAMP", _TS),
    ),
)

REPLICATION_APPLIER_STATUS_BY_WORKER = TableDef(
    SCHEMA,
    "replication_applier_status_by_worker",
    (
        col("CHANNEL_NAME", "CHAR(64)"),
        col("WORKER_ID", "BIGINT UNSIGNED"),
        col("THREAD_ID", "BIGINT UNSIGNED", null=True),
        col("SERVICE_STATE", _ON_OFF),
        col("LAST_ERROR_NUMBER", "INT"),
        col("LAST_ERROR_MESSAGE", "VARCHAR(1024)"),
        col("LAST_ERROR_TIMESTAMP", _TS),
        col("LAST_APPLIED_TRANSACTION", "CHAR(90)", null=True),
        col("LAST_APPLIED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP", _TS),
        col("LAST_APPLIED_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP", _TS),
        col("LAST_APPLIED_TRANSACTION_START_APPLY_TIMESTAMP", _TS),
        col("LAST_APPLIED_TRANSACTION_END_APPLY_TIMESTAMP", _TS),
        col("APPLYING_TRANSACTION", "CHAR(90)", null=True),
        col("APPLYING_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP", _TS),
        col("APPLYING_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP", _TS),
        col("APPLYING_TRANSACTION_START_APPLY_TIMESTAMP", _TS),
        col("LAST_APPLIED_TRANSACTION_RETRIES_COUNT", "BIGINT UNSIGNED"),
        col("LAST_APPLIED_TRANSACTION_LAST_TRANSIENT_ERROR_NUMBER", "INT"),
        col("LAST_APPLIED_TRANSACTION_LAST_TRANSIENT_ERROR_MESSAGE", "VARCHAR(1024)", null=True),
        col("LAST_APPLIED_TRANSACTION_LAST_TRANSIENT_ERROR_TIMESTAMP", _TS),
        col("APPLYING_TRANSACTION_RETRIES_COUNT", "BIGINT UNSIGNED"),
        col("APPLYING_TRANSACTION_LAST_TRANSIENT_ERROR_NUMBER", "INT"),
        col("APPLYING_TRANSACTION_LAST_TRANSIENT_ERROR_MESSAGE", "VARCHAR(1024)", null=True),
        col("APPLYING_TRANSACTION_LAST_TRANSIENT_ERROR_TIMESTAMP", _TS),
    ),
)

REPLICATION_CONNECTION_CONFIGURATION = TableDef(
    SCHEMA,
    "replication_connection_configuration",
    (
        col("CHANNEL_NAME", "CHAR(64)"),
        col("HOST", "CHAR(255)"),
        col("PORT", "INT"),
        col("USER", "CHAR(32)"),
        col("NETWORK_INTERFACE", "CHAR(60)"),
        col("AUTO_POSITION", _ONE_ZERO),
        col("SSL_ALLOWED", "ENUM('YES','NO','IGNORED')"),
        col("SSL_CA_FILE", "VARCHAR(512)"),
        col("SSL_CA_PATH", "VARCHAR(512)"),
        col("SSL_CERTIFICATE", "VARCHAR(512)"),
        col("SSL_CIPHER", "VARCHAR(512)"),
        col("SSL_KEY", "VARCHAR(512)"),
        col("SSL_VERIFY_SERVER_CERTIFICATE", _YES_NO),
        col("SSL_CRL_FILE", "VARCHAR(255)"),
        col("SSL_CRL_PATH", "VARCHAR(255)"),
        col("CONNECTION_RETRY_INTERVAL", "INT"),
        col("CONNECTION_RETRY_COUNT", "BIGINT UNSIGNED"),
        col("HEARTBEAT_INTERVAL", "DOUBLE(10,3)"),
        col("TLS_VERSION", "VARCHAR(255)"),
        col("PUBLIC_KEY_PATH", "VARCHAR(512)"),
        col("GET_PUBLIC_KEY", _YES_NO),
        col("NETWORK_NAMESPACE", "VARCHAR(64)"),
        col("COMPRESSION_ALGORITHM", "CHAR(64)"),
        col("ZSTD_COMPRESSION_LEVEL", "INT"),
        col("TLS_CIPHERSUITES", "TEXT", null=True),
        col("SOURCE_CONNECTION_AUTO_FAILOVER", _ONE_ZERO),
        col("GTID_ONLY", _ONE_ZERO),
    ),
)

REPLICATION_CONNECTION_STATUS = TableDef(
    SCHEMA,
    "replication_connection_status",
    (
        col("CHANNEL_NAME", "CHAR(64)"),
        col("GROUP_NAME", "CHAR(36)"),
        col("SOURCE_UUID", "CHAR(36)"),
        col("THREAD_ID", "BIGINT UNSIGNED", null=True),
        col("SERVICE_STATE", "ENUM('ON','OFF','CONNECTING')"),
        col("COUNT_RECEIVED_HEARTBEATS", "BIGINT UNSIGNED"),
        col("LAST_HEARTBEAT_TIMESTAMP", _TS),
        col("RECEIVED_TRANSACTION_SET", "LONGTEXT"),
        col("LAST_ERROR_NUMBER", "INT"),
        col("LAST_ERROR_MESSAGE", "VARCHAR(1024)"),
        col("LAST_ERROR_TIMESTAMP", _TS),
        col("LAST_QUEUED_TRANSACTION", "CHAR(57)", null=True),
        col("LAST_QUEUED_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP", _TS),
        col("LAST_QUEUED_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP", _TS),
        col("LAST_QUEUED_TRANSACTION_START_QUEUE_TIMESTAMP", _TS),
        col("LAST_QUEUED_TRANSACTION_END_QUEUE_TIMESTAMP", _TS),
        col("QUEUEING_TRANSACTION", "CHAR(57)", null=True),
        col("QUEUEING_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP", _TS),
        col("QUEUEING_TRANSACTION_IMMEDIATE_COMMIT_TIMESTAMP", _TS),
        col("QUEUEING_TRANSACTION_START_QUEUE_TIMESTAMP", _TS),
    ),
)

REPLICATION_APPLIER_FILTERS = TableDef(
    SCHEMA,
    "replication_applier_filters",
    (
        col("CHANNEL_NAME", "CHAR(64)"),
        col("FILTER_NAME", "CHAR(64)"),
        col("FILTER_RULE", "LONGTEXT"),
        col(
            "CONFIGURED_BY",
            "ENUM('STARTUP_OPTIONS','CHANGE_REPLICATION_FILTER',"
            "'STARTUP_OPTIONS_FOR_CHANNEL','CHANGE_REPLICATION_FILTER_FOR_CHANNEL')",
        ),
        col("ACTIVE_SINCE", _TS),
        col("COUNTER", "BIGINT UNSIGNED"),
    ),
)

REPLICATION_APPLIER_GLOBAL_FILTERS = TableDef(
    SCHEMA,
    "replication_applier_global_filters",
    (
        col("FILTER_NAME", "CHAR(64)"),
        col("FILTER_RULE", "LONGTEXT"),
        col("CONFIGURED_BY", "ENUM('STARTUP_OPTIONS','CHANGE_REPLICATION_FILTER')"),
        col("ACTIVE_SINCE", _TS),
    ),
)

_COUNTER = "BIGINT UNSIGNED"

REPLICATION_APPLIER_METRICS = TableDef(
    SCHEMA,
    "replication_applier_metrics",
    (
        col("CHANNEL_NAME", "CHAR(64)"),
        col("TRANSACTIONS_COMMITTED", _COUNTER),
        col("TRANSACTIONS_ONGOING", _COUNTER),
        col("TRANSACTIONS_RETRIED", _COUNTER),
        col("EVENTS_APPLIED", _COUNTER),
        col("BYTES_APPLIED", _COUNTER),
        col("WAITS_FOR_MEMORY", _COUNTER),
        col("WAITS_FOR_COMMIT_ORDER", _COUNTER),
        col("DEPENDENCY_WINDOW_WIDTH", _COUNTER),
        col("UNBLOCK_REQUESTS", _COUNTER),
        col("TIME_APPLYING_NS", _COUNTER),
        col("TIME_WAITING_NS", _COUNTER),
        col("TIME_SCHEDULING_NS", _COUNTER),
    ),
    comment="Per-channel applier counters",
)

REPLICATION_APPLIER_PROGRESS_BY_WORKER = TableDef(
    SCHEMA,
    "replication_applier_progress_by_worker",
    (
        col("CHANNEL_NAME", "CHAR(64)"),
        col("WORKER_ID", "BIGINT UNSIGNED"),
        col("TRANSACTIONS_COMMITTED", _COUNTER),
        col("TRANSACTIONS_RETRIED", _COUNTER),
        col("EVENTS_APPLIED", _COUNTER),
        col("BYTES_APPLIED", _COUNTER),
        col("WAITS_FOR_MEMORY", _COUNTER),
        col("WAITS_FOR_COMMIT_ORDER", _COUNTER),
        col("TIME_APPLYING_NS", _COUNTER),
        col("TIME_WAITING_NS", _COUNTER),
    ),
    comment="Per-worker applier counters",
)

PERFORMANCE_SCHEMA_TABLES: tuple[TableDef, ...] = (
    REPLICATION_APPLIER_CONFIGURATION,
    REPLICATION_APPLIER_STATUS,
    REPLICATION_APPLIER_STATUS_BY_COORDINATOR,
    REPLICATION_APPLIER_STATUS_BY_WORKER,
    REPLICATION_CONNECTION_CONFIGURATION,
    REPLICATION_CONNECTION_STATUS,
    REPLICATION_APPLIER_FILTERS,
    REPLICATION_APPLIER_GLOBAL_FILTERS,
    REPLICATION_APPLIER_METRICS,
    REPLICATION_APPLIER_PROGRESS_BY_WORKER,
)
