"""Virtual table definitions: column counts, names at MySQL's positions, types, old names."""

from __future__ import annotations

import pytest

from spark_replica.sql_handlers.tables.definitions import (
    GTID_EXECUTED,
    REPLICATION_APPLIER_CONFIGURATION,
    REPLICATION_APPLIER_STATUS,
    REPLICATION_APPLIER_STATUS_BY_COORDINATOR,
    REPLICATION_APPLIER_STATUS_BY_WORKER,
    REPLICATION_CONNECTION_CONFIGURATION,
    REPLICATION_CONNECTION_STATUS,
    SHOW_REPLICA_STATUS,
    SLAVE_MASTER_INFO,
    SLAVE_RELAY_LOG_INFO,
    SLAVE_STATUS_NAMES,
    SLAVE_WORKER_INFO,
    TABLES,
    TIMESTAMP_ZERO,
    Column,
    TableDef,
    ValueKind,
    get_table,
    show_slave_status_columns,
    value_kind_for,
)


def _names(columns: tuple[Column, ...]) -> list[str]:
    return [c.name for c in columns]


@pytest.mark.parametrize(
    ("table", "count"),
    [
        (REPLICATION_APPLIER_CONFIGURATION, 10),
        (REPLICATION_APPLIER_STATUS, 4),
        (REPLICATION_APPLIER_STATUS_BY_COORDINATOR, 15),
        (REPLICATION_APPLIER_STATUS_BY_WORKER, 24),
        (REPLICATION_CONNECTION_CONFIGURATION, 27),
        (REPLICATION_CONNECTION_STATUS, 20),
        (SLAVE_MASTER_INFO, 33),
        (SLAVE_RELAY_LOG_INFO, 18),
        (SLAVE_WORKER_INFO, 13),
        (GTID_EXECUTED, 4),
    ],
)
def test_column_counts(table: TableDef, count: int) -> None:
    assert len(table.columns) == count


def test_show_replica_status_has_60_columns() -> None:
    assert len(SHOW_REPLICA_STATUS) == 60


@pytest.mark.parametrize(
    ("table", "position", "name"),
    [
        (REPLICATION_APPLIER_CONFIGURATION, 2, "DESIRED_DELAY"),
        (REPLICATION_APPLIER_CONFIGURATION, 8, "APPLIER_VERSION"),
        (REPLICATION_APPLIER_CONFIGURATION, 10, "APPLIER_EVENT_MEMORY_LIMIT"),
        (REPLICATION_APPLIER_STATUS_BY_WORKER, 2, "WORKER_ID"),
        (REPLICATION_APPLIER_STATUS_BY_WORKER, 17, "LAST_APPLIED_TRANSACTION_RETRIES_COUNT"),
        (
            REPLICATION_APPLIER_STATUS_BY_WORKER,
            24,
            "APPLYING_TRANSACTION_LAST_TRANSIENT_ERROR_TIMESTAMP",
        ),
        (REPLICATION_CONNECTION_CONFIGURATION, 5, "NETWORK_INTERFACE"),
        (REPLICATION_CONNECTION_CONFIGURATION, 18, "HEARTBEAT_INTERVAL"),
        (REPLICATION_CONNECTION_CONFIGURATION, 27, "GTID_ONLY"),
        (REPLICATION_CONNECTION_STATUS, 8, "RECEIVED_TRANSACTION_SET"),
        (REPLICATION_CONNECTION_STATUS, 20, "QUEUEING_TRANSACTION_START_QUEUE_TIMESTAMP"),
        (SLAVE_MASTER_INFO, 16, "Heartbeat"),
        (SLAVE_MASTER_INFO, 24, "Channel_name"),
        (SLAVE_MASTER_INFO, 33, "Gtid_only"),
        (SLAVE_RELAY_LOG_INFO, 9, "Channel_name"),
        (SLAVE_RELAY_LOG_INFO, 16, "Applier_version"),
        (SLAVE_RELAY_LOG_INFO, 17, "Applier_worker_count"),
        (SLAVE_RELAY_LOG_INFO, 18, "Applier_event_memory_limit"),
        (SLAVE_WORKER_INFO, 12, "Checkpoint_group_bitmap"),
        (SLAVE_WORKER_INFO, 13, "Channel_name"),
    ],
)
def test_names_at_positions(table: TableDef, position: int, name: str) -> None:
    # Positions are 1-based, as in MySQL's DDL.
    assert table.columns[position - 1].name == name


@pytest.mark.parametrize(
    ("index", "name"),
    [
        (0, "Replica_IO_State"),
        (3, "Source_Port"),
        (21, "Exec_Source_Log_Pos"),
        (32, "Seconds_Behind_Source"),
        (43, "SQL_Remaining_Delay"),
        (52, "Executed_Gtid_Set"),
        (55, "Channel_Name"),
        (58, "Get_Source_public_key"),
        (59, "Network_Namespace"),
    ],
)
def test_show_replica_status_positions(index: int, name: str) -> None:
    assert SHOW_REPLICA_STATUS[index].name == name


def test_show_replica_status_types() -> None:
    by_name = {c.name: c for c in SHOW_REPLICA_STATUS}
    assert by_name["Replica_IO_State"].sql_type == "VARCHAR(14)"
    assert by_name["Source_Port"].sql_type == "INT"
    assert by_name["Read_Source_Log_Pos"].sql_type == "BIGINT"
    assert by_name["Source_UUID"].sql_type == "VARCHAR(36)"
    assert by_name["Channel_Name"].sql_type == "VARCHAR(64)"
    assert {c.kind for c in SHOW_REPLICA_STATUS} == {ValueKind.STRING, ValueKind.INTEGER}
    assert [c.name for c in SHOW_REPLICA_STATUS if c.nullable] == [
        "Seconds_Behind_Source",
        "SQL_Remaining_Delay",
    ]


def test_every_registered_table_has_unique_names() -> None:
    for table in TABLES.values():
        lowered = [n.lower() for n in table.column_names()]
        assert len(lowered) == len(set(lowered)), table.name
    lowered = [n.lower() for n in _names(SHOW_REPLICA_STATUS)]
    assert len(lowered) == len(set(lowered))


def test_duplicate_column_is_rejected() -> None:
    col = Column("A", "INT", False, ValueKind.INTEGER)
    with pytest.raises(ValueError):
        TableDef("mysql", "t", (col, Column("a", "INT", False, ValueKind.INTEGER)))


def test_registry_keys_and_lookup() -> None:
    assert TABLES[("mysql", "slave_master_info")] is SLAVE_MASTER_INFO
    assert TABLES[("performance_schema", "replication_applier_status_by_worker")] is (
        REPLICATION_APPLIER_STATUS_BY_WORKER
    )
    for (schema, name), table in TABLES.items():
        assert (schema, name) == (table.schema, table.name)
        assert schema == schema.lower() and name == name.lower()
        assert schema in ("performance_schema", "mysql")
    assert ("performance_schema", "replication_applier_metrics") in TABLES
    assert ("performance_schema", "replication_applier_progress_by_worker") in TABLES
    assert ("performance_schema", "replication_applier_filters") in TABLES
    assert ("performance_schema", "replication_applier_global_filters") in TABLES
    assert ("mysql", "gtid_executed") in TABLES
    assert get_table("MySQL", "SLAVE_RELAY_LOG_INFO") is SLAVE_RELAY_LOG_INFO
    assert get_table("mysql", "no_such_table") is None


def test_column_lookup_ignores_case() -> None:
    assert SLAVE_MASTER_INFO.column("channel_name").name == "Channel_name"
    assert SLAVE_MASTER_INFO.column("CHANNEL_NAME") is SLAVE_MASTER_INFO.column("Channel_name")
    worker = REPLICATION_APPLIER_STATUS_BY_WORKER
    assert worker.column("worker_id").name == "WORKER_ID"
    with pytest.raises(KeyError):
        worker.column("NO_SUCH_COLUMN")


def test_column_names_in_order() -> None:
    assert GTID_EXECUTED.column_names() == [
        "source_uuid",
        "interval_start",
        "interval_end",
        "gtid_tag",
    ]
    assert REPLICATION_APPLIER_STATUS.column_names() == [
        "CHANNEL_NAME",
        "SERVICE_STATE",
        "REMAINING_DELAY",
        "COUNT_TRANSACTIONS_RETRIES",
    ]


def test_types_nullability_and_kinds() -> None:
    worker = REPLICATION_APPLIER_STATUS_BY_WORKER
    assert worker.column("CHANNEL_NAME") == Column(
        "CHANNEL_NAME", "CHAR(64)", False, ValueKind.STRING
    )
    assert worker.column("THREAD_ID") == Column(
        "THREAD_ID", "BIGINT UNSIGNED", True, ValueKind.UNSIGNED
    )
    assert worker.column("LAST_APPLIED_TRANSACTION").sql_type == "CHAR(90)"
    assert worker.column("APPLYING_TRANSACTION").sql_type == "CHAR(90)"
    assert worker.column("LAST_ERROR_TIMESTAMP").kind is ValueKind.TIMESTAMP
    assert not worker.column("LAST_ERROR_TIMESTAMP").nullable
    assert worker.column("LAST_ERROR_NUMBER").kind is ValueKind.INTEGER
    assert worker.column("SERVICE_STATE").sql_type == "ENUM('ON','OFF')"

    conf = REPLICATION_CONNECTION_CONFIGURATION
    assert conf.column("HEARTBEAT_INTERVAL").sql_type == "DOUBLE(10,3)"
    assert conf.column("HEARTBEAT_INTERVAL").kind is ValueKind.FLOAT
    assert conf.column("TLS_CIPHERSUITES").nullable

    applier = REPLICATION_APPLIER_CONFIGURATION
    assert applier.column("APPLIER_WORKER_COUNT").sql_type == "INT UNSIGNED"
    assert applier.column("APPLIER_EVENT_MEMORY_LIMIT").sql_type == "BIGINT UNSIGNED"
    assert applier.column("PRIVILEGE_CHECKS_USER").nullable

    assert REPLICATION_APPLIER_STATUS.column("REMAINING_DELAY").nullable
    assert REPLICATION_CONNECTION_STATUS.column("RECEIVED_TRANSACTION_SET").sql_type == "LONGTEXT"

    assert SLAVE_MASTER_INFO.column("Heartbeat").kind is ValueKind.FLOAT
    assert SLAVE_MASTER_INFO.column("Enabled_ssl").sql_type == "BOOLEAN"
    assert SLAVE_MASTER_INFO.column("Host").nullable
    assert not SLAVE_MASTER_INFO.column("Master_log_name").nullable
    assert SLAVE_RELAY_LOG_INFO.column("Relay_log_name").nullable
    assert not SLAVE_RELAY_LOG_INFO.column("Channel_name").nullable
    assert SLAVE_RELAY_LOG_INFO.column("Sql_delay").kind is ValueKind.INTEGER
    assert SLAVE_WORKER_INFO.column("Checkpoint_group_bitmap").kind is ValueKind.BLOB
    assert all(not c.nullable for c in SLAVE_WORKER_INFO.columns)
    assert all(not c.nullable for c in GTID_EXECUTED.columns)

    assert SLAVE_RELAY_LOG_INFO.comment == "Relay Log Information"
    assert SLAVE_MASTER_INFO.comment == "Master Information"
    assert SLAVE_WORKER_INFO.comment == "Worker Information"


def test_applier_metric_tables() -> None:
    metrics = TABLES[("performance_schema", "replication_applier_metrics")]
    by_worker = TABLES[("performance_schema", "replication_applier_progress_by_worker")]
    assert metrics.column_names()[0] == "CHANNEL_NAME"
    assert by_worker.column_names()[:2] == ["CHANNEL_NAME", "WORKER_ID"]
    for name in (
        "TRANSACTIONS_ONGOING",
        "DEPENDENCY_WINDOW_WIDTH",
        "UNBLOCK_REQUESTS",
        "TIME_SCHEDULING_NS",
    ):
        assert name in metrics.column_names()
        assert name not in by_worker.column_names()
    for table in (metrics, by_worker):
        for c in table.columns[1:]:
            assert (c.sql_type, c.nullable, c.kind) == (
                "BIGINT UNSIGNED",
                False,
                ValueKind.UNSIGNED,
            )


def test_kind_of_every_column_matches_its_type() -> None:
    for table in TABLES.values():
        for c in table.columns:
            assert c.kind is value_kind_for(c.sql_type), (table.name, c.name)


def test_slave_status_names() -> None:
    assert SLAVE_STATUS_NAMES["Replica_IO_State"] == "Slave_IO_State"
    assert SLAVE_STATUS_NAMES["Source_Host"] == "Master_Host"
    assert SLAVE_STATUS_NAMES["Exec_Source_Log_Pos"] == "Exec_Master_Log_Pos"
    assert SLAVE_STATUS_NAMES["Seconds_Behind_Source"] == "Seconds_Behind_Master"
    assert SLAVE_STATUS_NAMES["Relay_Source_Log_File"] == "Relay_Master_Log_File"
    assert SLAVE_STATUS_NAMES["Replica_SQL_Running_State"] == "Slave_SQL_Running_State"
    assert SLAVE_STATUS_NAMES["Source_SSL_Verify_Server_Cert"] == "Master_SSL_Verify_Server_Cert"
    assert SLAVE_STATUS_NAMES["Get_Source_public_key"] == "Get_master_public_key"
    # Only renamed columns are listed, and every key is a SHOW REPLICA STATUS column.
    names = set(_names(SHOW_REPLICA_STATUS))
    assert set(SLAVE_STATUS_NAMES) <= names
    assert all(new != old for new, old in SLAVE_STATUS_NAMES.items())
    for unchanged in ("Connect_Retry", "Relay_Log_File", "Last_Errno", "Channel_Name"):
        assert unchanged not in SLAVE_STATUS_NAMES


def test_show_slave_status_columns() -> None:
    old = show_slave_status_columns()
    assert len(old) == 60
    assert old[0].name == "Slave_IO_State"
    assert old[32].name == "Seconds_Behind_Master"
    assert old[32].nullable
    assert old[4].name == "Connect_Retry"
    assert len({c.name for c in old}) == 60


def test_timestamp_zero() -> None:
    assert TIMESTAMP_ZERO == "0000-00-00 00:00:00.000000"


def test_value_kind_for() -> None:
    assert value_kind_for("INT") is ValueKind.INTEGER
    assert value_kind_for("INT UNSIGNED") is ValueKind.UNSIGNED
    assert value_kind_for("BIGINT UNSIGNED") is ValueKind.UNSIGNED
    assert value_kind_for("BOOLEAN") is ValueKind.INTEGER
    assert value_kind_for("ENUM('ON','OFF')") is ValueKind.STRING
    assert value_kind_for("TIMESTAMP(6)") is ValueKind.TIMESTAMP
    assert value_kind_for("DECIMAL(10,2)") is ValueKind.DECIMAL
    assert value_kind_for("FLOAT") is ValueKind.FLOAT
    assert value_kind_for("BLOB") is ValueKind.BLOB
    with pytest.raises(ValueError):
        value_kind_for("GEOMETRY")
