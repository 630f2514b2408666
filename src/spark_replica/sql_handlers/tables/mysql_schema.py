"""Replication metadata tables of the ``mysql`` schema.

Column names, order, types and nullability follow MySQL's
``scripts/mysql_system_tables.sql`` (8.0.43 for the three ``slave_*`` tables; 8.4 for
``gtid_executed``, which gained ``gtid_tag CHAR(32)`` as its last column). MySQL leaves
every column without ``NOT NULL`` nullable, e.g. ``slave_relay_log_info.Relay_log_name``.
The last three ``slave_relay_log_info`` columns hold the Change Stream Applier settings.
"""

from __future__ import annotations

from .columns import TableDef, col

SCHEMA = "mysql"

SLAVE_RELAY_LOG_INFO = TableDef(
    SCHEMA,
    "slave_relay_log_info",
    (
        col("Number_of_lines", "INT UNSIGNED"),
        col("Relay_log_name", "TEXT", null=True),
        col("Relay_log_pos", "BIGINT UNSIGNED", null=True),
        col("Master_log_name", "TEXT", null=True),
        col("Master_log_pos", "BIGINT UNSIGNED", null=True),
        col("Sql_delay", "INT", null=True),
        col("Number_of_workers", "INT UNSIGNED", null=True),
        col("Id", "INT UNSIGNED", null=True),
        col("Channel_name", "VARCHAR(64)"),
        col("Privilege_checks_username", "VARCHAR(32)", null=True),
        col("Privilege_checks_hostname", "VARCHAR(255)", null=True),
        col("Require_row_format", "BOOLEAN"),
        col("Require_table_primary_key_check", "ENUM('STREAM','ON','OFF','GENERATE')"),
        col("Assign_gtids_to_anonymous_transactions_type", "ENUM('OFF','LOCAL','UUID')"),
        col("Assign_gtids_to_anonymous_transactions_value", "TEXT", null=True),
        col("Applier_version", "INT UNSIGNED"),
        col("Applier_worker_count", "INT UNSIGNED"),
        col("Applier_event_memory_limit", "BIGINT UNSIGNED"),
    ),
    comment="Relay Log Information",
)

SLAVE_MASTER_INFO = TableDef(
    SCHEMA,
    "slave_master_info",
    (
        col("Number_of_lines", "INT UNSIGNED"),
        col("Master_log_name", "TEXT"),
        col("Master_log_pos", "BIGINT UNSIGNED"),
        col("Host", "VARCHAR(255)", null=True),
        col("User_name", "TEXT", null=True),
        col("User_password", "TEXT", null=True),
        col("Port", "INT UNSIGNED"),
        col("Connect_retry", "INT UNSIGNED"),
        col("Enabled_ssl", "BOOLEAN"),
        col("Ssl_ca", "TEXT", null=True),
        col("Ssl_capath", "TEXT", null=True),
        col("Ssl_cert", "TEXT", null=True),
        col("Ssl_cipher", "TEXT", null=True),
        col("Ssl_key", "TEXT", null=True),
        col("Ssl_verify_server_cert", "BOOLEAN"),
        col("Heartbeat", "FLOAT"),
        col("Bind", "TEXT", null=True),
        col("Ignored_server_ids", "TEXT", null=True),
        col("Uuid", "TEXT", null=True),
        col("Retry_count", "BIGINT UNSIGNED"),
        col("Ssl_crl", "TEXT", null=True),
        col("Ssl_crlpath", "TEXT", null=True),
        col("Enabled_auto_position", "BOOLEAN"),
        col("Channel_name", "VARCHAR(64)"),
        col("Tls_version", "TEXT", null=True),
        col("Public_key_path", "TEXT", null=True),
        col("Get_public_key", "BOOLEAN"),
        col("Network_namespace", "TEXT", null=True),
        col("Master_compression_algorithm", "VARCHAR(64)"),
        col("Master_zstd_compression_level", "INT UNSIGNED"),
        col("Tls_ciphersuites", "TEXT", null=True),
        col("Source_connection_auto_failover", "BOOLEAN"),
        col("Gtid_only", "BOOLEAN"),
    ),
    comment="Master Information",
)

SLAVE_WORKER_INFO = TableDef(
    SCHEMA,
    "slave_worker_info",
    (
        col("Id", "INT UNSIGNED"),
        col("Relay_log_name", "TEXT"),
        col("Relay_log_pos", "BIGINT UNSIGNED"),
        col("Master_log_name", "TEXT"),
        col("Master_log_pos", "BIGINT UNSIGNED"),
        col("Checkpoint_relay_log_name", "TEXT"),
        col("Checkpoint_relay_log_pos", "BIGINT UNSIGNED"),
        col("Checkpoint_master_log_name", "TEXT"),
        col("Checkpoint_master_log_pos", "BIGINT UNSIGNED"),
        col("Checkpoint_seqno", "INT UNSIGNED"),
        col("Checkpoint_group_size", "INT UNSIGNED"),
        col("Checkpoint_group_bitmap", "BLOB"),
        col("Channel_name", "VARCHAR(64)"),
    ),
    comment="Worker Information",
)

GTID_EXECUTED = TableDef(
    SCHEMA,
    "gtid_executed",
    (
        col("source_uuid", "CHAR(36)"),
        col("interval_start", "BIGINT"),
        col("interval_end", "BIGINT"),
        col("gtid_tag", "CHAR(32)"),
    ),
)

MYSQL_TABLES: tuple[TableDef, ...] = (
    SLAVE_RELAY_LOG_INFO,
    SLAVE_MASTER_INFO,
    SLAVE_WORKER_INFO,
    GTID_EXECUTED,
)
