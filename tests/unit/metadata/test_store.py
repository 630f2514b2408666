"""Behaviour of the metadata store, run on every backend of ``conftest.py``: SQLite in memory,
SQLite in a file and PostgreSQL. Two tests are about one backend's own settings and run on it
alone: SQLite's journal and sync PRAGMAs, PostgreSQL's default isolation level."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from types import MappingProxyType

import pytest
from sqlalchemy import text

from spark_replica.applier_core.channels.config import (
    AnonymousGtids,
    ApplierSettings,
    ApplierVersion,
    ChannelConfig,
    PrimaryKeyCheck,
    SourceConnection,
)
from spark_replica.applier_core.storage.interface import Column, TableDef, TableRef
from spark_replica.applier_core.storage.prepared_xa import PreparedXa
from spark_replica.applier_core.storage.spark.state import (
    CommitPointMoved,
    DurableState,
    LegacyFiles,
    StoredTable,
)
from spark_replica.metadata import (
    MYSQL_TABLE_NAMES,
    MetadataError,
    MetadataStore,
    WorkerInfo,
    mysql_native_password_hash,
    open_store,
)

UUID_A = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
UUID_B = "8a94f357-aab4-11df-86ab-c80aa9429562"

FULL = ChannelConfig(
    name="shop",
    connection=SourceConnection(
        host="10.0.0.5",
        port=3307,
        user="repl",
        password="s3cret",
        connect_retry=30,
        retry_count=7,
        heartbeat_period=2.5,
        bind="10.0.0.9",
        network_namespace="blue",
        source_log_file="binlog.000042",
        source_log_pos=1234,
        auto_position=True,
        ssl=True,
        ssl_ca="/ssl/ca.pem",
        ssl_capath="/ssl/ca",
        ssl_cert="/ssl/cert.pem",
        ssl_cipher="AES256-SHA",
        ssl_key="/ssl/key.pem",
        ssl_verify_server_cert=True,
        ssl_crl="/ssl/crl.pem",
        ssl_crlpath="/ssl/crl",
        tls_version="TLSv1.3",
        tls_ciphersuites="TLS_AES_256_GCM_SHA384",
        public_key_path="/ssl/pub.pem",
        get_public_key=True,
        compression_algorithms="zstd,zlib",
        zstd_compression_level=7,
        ignore_server_ids=(3, 4),
        source_uuid=UUID_A,
        source_server_id=5,
        source_connection_auto_failover=True,
        gtid_only=True,
    ),
    applier=ApplierSettings(
        relay_log_file="./shop-relay.000003",
        relay_log_pos=777,
        source_log_file="binlog.000041",
        source_log_pos=999,
        sql_delay=3600,
        privilege_checks_user="checker",
        privilege_checks_host="localhost",
        require_row_format=True,
        require_table_primary_key_check=PrimaryKeyCheck.GENERATE,
        assign_gtids_type=AnonymousGtids.UUID,
        assign_gtids_value=UUID_B,
        applier_version=ApplierVersion.CSA,
        applier_worker_count=8,
        applier_event_memory_limit=2**32 - 1,
    ),
)

MASTER_INFO_COLUMNS = [
    "Number_of_lines",
    "Master_log_name",
    "Master_log_pos",
    "Host",
    "User_name",
    "User_password",
    "Port",
    "Connect_retry",
    "Enabled_ssl",
    "Ssl_ca",
    "Ssl_capath",
    "Ssl_cert",
    "Ssl_cipher",
    "Ssl_key",
    "Ssl_verify_server_cert",
    "Heartbeat",
    "Bind",
    "Ignored_server_ids",
    "Uuid",
    "Retry_count",
    "Ssl_crl",
    "Ssl_crlpath",
    "Enabled_auto_position",
    "Channel_name",
    "Tls_version",
    "Public_key_path",
    "Get_public_key",
    "Network_namespace",
    "Master_compression_algorithm",
    "Master_zstd_compression_level",
    "Tls_ciphersuites",
    "Source_connection_auto_failover",
    "Gtid_only",
]
RELAY_LOG_INFO_COLUMNS = [
    "Number_of_lines",
    "Relay_log_name",
    "Relay_log_pos",
    "Master_log_name",
    "Master_log_pos",
    "Sql_delay",
    "Number_of_workers",
    "Id",
    "Channel_name",
    "Privilege_checks_username",
    "Privilege_checks_hostname",
    "Require_row_format",
    "Require_table_primary_key_check",
    "Assign_gtids_to_anonymous_transactions_type",
    "Assign_gtids_to_anonymous_transactions_value",
    "Applier_version",
    "Applier_worker_count",
    "Applier_event_memory_limit",
]
WORKER_INFO_COLUMNS = [
    "Id",
    "Relay_log_name",
    "Relay_log_pos",
    "Master_log_name",
    "Master_log_pos",
    "Checkpoint_relay_log_name",
    "Checkpoint_relay_log_pos",
    "Checkpoint_master_log_name",
    "Checkpoint_master_log_pos",
    "Checkpoint_seqno",
    "Checkpoint_group_size",
    "Checkpoint_group_bitmap",
    "Channel_name",
]
GTID_EXECUTED_COLUMNS = ["source_uuid", "interval_start", "interval_end", "gtid_tag"]

WORKER_1 = WorkerInfo(
    id=1,
    relay_log_name="./shop-relay.000003",
    relay_log_pos=500,
    source_log_name="binlog.000041",
    source_log_pos=900,
    checkpoint_relay_log_name="./shop-relay.000002",
    checkpoint_relay_log_pos=400,
    checkpoint_source_log_name="binlog.000040",
    checkpoint_source_log_pos=800,
    checkpoint_seqno=12,
    checkpoint_group_size=64,
    checkpoint_group_bitmap=b"\x01\x00\xff",
)
WORKER_2 = WorkerInfo(id=2, relay_log_name="./shop-relay.000003", relay_log_pos=600)


def _stored(config: ChannelConfig) -> ChannelConfig:
    """What loading returns: the source's server id is learnt on connection, not stored."""
    return dataclasses.replace(
        config, connection=dataclasses.replace(config.connection, source_server_id=0)
    )


def _channel(name: str, host: str = "db1") -> ChannelConfig:
    return ChannelConfig(name=name, connection=SourceConnection(host=host))


def test_full_config_has_no_default_field() -> None:
    for value, default in (
        (FULL.connection, SourceConnection()),
        (FULL.applier, ApplierSettings()),
    ):
        for f in dataclasses.fields(value):
            assert getattr(value, f.name) != getattr(default, f.name), f.name


def test_full_channel_round_trip(store: MetadataStore) -> None:
    store.save_channel(FULL)

    loaded = store.load_channels()

    assert loaded == [_stored(FULL)]
    assert loaded[0].connection.source_server_id == 0
    assert loaded[0].connection.ignore_server_ids == (3, 4)
    assert loaded[0].applier.applier_version is ApplierVersion.CSA
    assert loaded[0].applier.require_table_primary_key_check is PrimaryKeyCheck.GENERATE


def test_default_channel_round_trip(store: MetadataStore) -> None:
    store.save_channel(ChannelConfig(name=""))

    assert store.load_channels() == [ChannelConfig(name="")]


def test_empty_store(store: MetadataStore) -> None:
    assert store.load_channels() == []
    assert store.load_variables() == {}
    assert store.load_gtid_executed() == []
    assert store.load_worker_info("") == []
    assert store.get_user("root") is None
    for name in MYSQL_TABLE_NAMES:
        assert store.rows(name)[1] == []


def test_update_keeps_creation_order(store: MetadataStore) -> None:
    for name in ("zeta", "alpha", "mid"):
        store.save_channel(_channel(name))

    store.save_channel(_channel("zeta", host="db2"))

    loaded = store.load_channels()
    assert [c.name for c in loaded] == ["zeta", "alpha", "mid"]
    assert [c.connection.host for c in loaded] == ["db2", "db1", "db1"]

    store.delete_channel("alpha")
    store.save_channel(_channel("alpha", host="db3"))
    assert [c.name for c in store.load_channels()] == ["zeta", "mid", "alpha"]


def test_delete_removes_everything(store: MetadataStore) -> None:
    store.save_channel(FULL)
    store.save_channel(_channel("other"))
    store.save_worker_info("shop", [WORKER_1, WORKER_2])
    store.save_worker_info("other", [WORKER_2])

    store.delete_channel("shop")

    assert store.load_channels() == [_channel("other")]
    assert store.load_worker_info("shop") == []
    assert store.load_worker_info("other") == [WORKER_2]
    assert [r[23] for r in store.rows("slave_master_info")[1]] == ["other"]
    assert [r[8] for r in store.rows("slave_relay_log_info")[1]] == ["other"]
    assert [(r[12], r[0]) for r in store.rows("slave_worker_info")[1]] == [("other", 2)]


def test_delete_of_unknown_channel_changes_nothing(store: MetadataStore) -> None:
    store.save_channel(_channel("c1"))

    store.delete_channel("nope")

    assert store.load_channels() == [_channel("c1")]


def test_worker_info_round_trip(store: MetadataStore) -> None:
    store.save_worker_info("shop", [WORKER_2, WORKER_1])

    assert store.load_worker_info("shop") == [WORKER_1, WORKER_2]

    store.save_worker_info("shop", [WORKER_2])
    assert store.load_worker_info("shop") == [WORKER_2]

    store.delete_worker_info("shop")
    assert store.load_worker_info("shop") == []


def test_variables_round_trip(store: MetadataStore) -> None:
    store.save_variables({"Replica_Parallel_Workers": "8", "replica_exec_mode": "STRICT"})
    store.save_variables({"replica_parallel_workers": "16", "sql_mode": ""})

    assert store.load_variables() == {
        "replica_parallel_workers": "16",
        "replica_exec_mode": "STRICT",
        "sql_mode": "",
    }


def test_users(store: MetadataStore) -> None:
    auth = mysql_native_password_hash("password")
    assert auth == "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"

    store.put_user("root", auth, "admin")
    store.put_user("reader", "", "read_only")
    assert store.get_user("root") == (auth, "admin")
    assert store.get_user("reader") == ("", "read_only")
    assert store.get_user("nobody") is None

    store.put_user("root", mysql_native_password_hash("other"), "read_only")
    assert store.get_user("root") == ("*023494FBCDFBF9C93B6B2663B348A1C4A939B247", "read_only")


def test_unknown_role_is_rejected(store: MetadataStore) -> None:
    with pytest.raises(ValueError, match="unknown role 'superuser'"):
        store.put_user("root", "", "superuser")
    assert store.get_user("root") is None


def test_gtid_rows(store: MetadataStore) -> None:
    store.save_gtid_intervals(
        [(UUID_B, "", 1, 10), (UUID_A, "blue", 1, 5), (UUID_A, "", 20, 30), (UUID_A, "", 1, 7)]
    )

    assert store.load_gtid_executed() == [
        (UUID_A, "", 1, 7),
        (UUID_A, "", 20, 30),
        (UUID_A, "blue", 1, 5),
        (UUID_B, "", 1, 10),
    ]

    store.save_gtid_intervals([(UUID_A, "", 1, 2**63 - 1)])
    assert store.load_gtid_executed() == [(UUID_A, "", 1, 2**63 - 1)]

    store.save_gtid_intervals([])
    assert store.load_gtid_executed() == []


def test_failed_call_stores_nothing(store: MetadataStore) -> None:
    store.save_gtid_intervals([(UUID_A, "", 1, 7)])

    with pytest.raises(MetadataError) as raised:
        store.save_gtid_intervals([(UUID_B, "", 1, 2), (UUID_B, "", 1, 3)])

    assert store.load_gtid_executed() == [(UUID_A, "", 1, 7)]
    # ER_REPLICA_FATAL_ERROR in the database's words, without the statement or its values.
    error = raised.value
    assert (error.code, error.sqlstate) == (13117, "HY000")
    assert error.message.startswith("Fatal error: the replication metadata store failed: ")
    assert "\n" not in error.message and "[SQL" not in error.message
    assert UUID_B not in error.message


def test_rows_columns_are_mysqls(store: MetadataStore) -> None:
    assert MYSQL_TABLE_NAMES == (
        "slave_master_info",
        "slave_relay_log_info",
        "slave_worker_info",
        "gtid_executed",
    )
    assert store.rows("slave_master_info")[0] == MASTER_INFO_COLUMNS
    assert store.rows("slave_relay_log_info")[0] == RELAY_LOG_INFO_COLUMNS
    assert store.rows("slave_worker_info")[0] == WORKER_INFO_COLUMNS
    assert store.rows("gtid_executed")[0] == GTID_EXECUTED_COLUMNS
    assert store.rows("MYSQL.Gtid_Executed")[0] == GTID_EXECUTED_COLUMNS


def test_rows_of_unknown_table_are_refused(store: MetadataStore) -> None:
    with pytest.raises(ValueError, match="not a metadata table: 'mysql.user'"):
        store.rows("mysql.user")


def test_rows_values_of_master_info(store: MetadataStore) -> None:
    store.save_channel(FULL)

    _, rows = store.rows("mysql.slave_master_info")

    assert rows == [
        (
            33,
            "binlog.000042",
            1234,
            "10.0.0.5",
            "repl",
            "s3cret",
            3307,
            30,
            1,
            "/ssl/ca.pem",
            "/ssl/ca",
            "/ssl/cert.pem",
            "AES256-SHA",
            "/ssl/key.pem",
            1,
            2.5,
            "10.0.0.9",
            "2 3 4",
            UUID_A,
            7,
            "/ssl/crl.pem",
            "/ssl/crl",
            1,
            "shop",
            "TLSv1.3",
            "/ssl/pub.pem",
            1,
            "blue",
            "zstd,zlib",
            7,
            "TLS_AES_256_GCM_SHA384",
            1,
            1,
        )
    ]


def test_rows_values_of_relay_log_info(store: MetadataStore) -> None:
    store.save_channel(FULL)
    legacy = dataclasses.replace(
        FULL, name="legacy", applier=ApplierSettings(applier_worker_count=6)
    )
    store.save_channel(legacy)

    _, rows = store.rows("slave_relay_log_info")

    assert rows == [
        (18, "", 4, "", 0, 0, 0, 1, "legacy", None, None, 0, "STREAM", "OFF", "", 1, 6, 0),
        (
            18,
            "./shop-relay.000003",
            777,
            "binlog.000041",
            999,
            3600,
            8,
            1,
            "shop",
            "checker",
            "localhost",
            1,
            "GENERATE",
            "UUID",
            UUID_B,
            2,
            8,
            2**32 - 1,
        ),
    ]


def test_rows_values_of_worker_info_and_gtids(store: MetadataStore) -> None:
    store.save_worker_info("shop", [WORKER_1])
    store.save_gtid_intervals([(UUID_A, "blue", 1, 5), (UUID_A, "", 3, 4)])

    assert store.rows("slave_worker_info")[1] == [
        (
            1,
            "./shop-relay.000003",
            500,
            "binlog.000041",
            900,
            "./shop-relay.000002",
            400,
            "binlog.000040",
            800,
            12,
            64,
            b"\x01\x00\xff",
            "shop",
        )
    ]
    assert store.rows("gtid_executed")[1] == [(UUID_A, 3, 4, ""), (UUID_A, 1, 5, "blue")]


def test_ignored_server_ids_none(store: MetadataStore) -> None:
    store.save_channel(_channel("c1"))

    assert store.rows("slave_master_info")[1][0][17] == "0"
    assert store.load_channels()[0].connection.ignore_server_ids == ()


def test_store_is_shared_between_threads(store: MetadataStore) -> None:
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def writer(n: int) -> None:
        try:
            start.wait(timeout=30)
            for i in range(10):
                store.save_channel(_channel(f"t{n}-{i}"))
                store.save_variables({f"v{n}": str(i)})
        except BaseException as exc:  # handed back to the test thread
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,), name=f"writer-{n}") for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)

    assert errors == []
    loaded = store.load_channels()
    assert sorted(c.name for c in loaded) == sorted(
        f"t{n}-{i}" for n in range(4) for i in range(10)
    )
    for n in range(4):  # each writer's channels come back in the order it created them
        assert [c.name for c in loaded if c.name.startswith(f"t{n}-")] == [
            f"t{n}-{i}" for i in range(10)
        ]
    assert store.load_variables() == {"v0": "9", "v1": "9", "v2": "9", "v3": "9"}


def test_destroy_and_create_tables(store: MetadataStore) -> None:
    store.save_channel(FULL)

    store.destroy_tables()
    with pytest.raises(MetadataError):
        store.load_channels()

    store.create_tables()
    assert store.load_channels() == []


def test_second_store_on_same_database_sees_the_first_ones_writes(shared_url: str) -> None:
    first = open_store(shared_url)
    first.save_channel(FULL)
    first.save_channel(_channel("c2"))
    first.save_worker_info("shop", [WORKER_1])
    first.save_variables({"replica_parallel_workers": "8"})
    first.save_gtid_intervals([(UUID_A, "", 1, 42)])
    first.put_user("root", mysql_native_password_hash("password"), "admin")

    second = open_store(shared_url)
    try:
        assert second.load_channels() == [_stored(FULL), _channel("c2")]
        assert second.load_worker_info("shop") == [WORKER_1]
        assert second.load_variables() == {"replica_parallel_workers": "8"}
        assert second.load_gtid_executed() == [(UUID_A, "", 1, 42)]
        assert second.get_user("root") == ("*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19", "admin")
    finally:
        second.close()
        first.close()

    third = open_store(shared_url)
    try:
        assert [c.name for c in third.load_channels()] == ["shop", "c2"]
    finally:
        third.close()


def test_file_database_is_durable(tmp_path: Path) -> None:
    """SQLite only: WAL and synchronous=FULL are SQLite's settings (PostgreSQL's durability is
    the server's own configuration)."""
    store = open_store(f"sqlite:///{tmp_path / 'metadata.db'}")
    try:
        with store.engine.connect() as conn:
            assert conn.execute(text("PRAGMA journal_mode")).scalar_one() == "wal"
            assert conn.execute(text("PRAGMA synchronous")).scalar_one() == 2  # FULL
    finally:
        store.close()


def _save_the_same_channels_at_once(url: str, writers: int = 3, rounds: int = 15) -> None:
    """``writers`` stores on ``url``, each in its own thread, save channels ``c0``, ``c1``, ...
    in lock-step: in every round each of them saves the same new channel and variable."""
    stores = [open_store(url) for _ in range(writers)]
    errors: list[BaseException] = []
    start = threading.Barrier(writers)

    def writer(n: int) -> None:
        try:
            for i in range(rounds):
                start.wait(timeout=30)
                stores[n].save_channel(_channel(f"c{i}", host=f"db{n}"))
                stores[n].save_variables({"round": str(i)})
        except BaseException as exc:  # handed back to the test thread
            errors.append(exc)
            start.abort()

    threads = [
        threading.Thread(target=writer, args=(n,), name=f"store-{n}") for n in range(writers)
    ]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert errors == []
        assert [c.name for c in stores[0].load_channels()] == [f"c{i}" for i in range(rounds)]
        assert stores[0].load_variables() == {"round": str(rounds - 1)}
    finally:
        for s in stores:
            s.close()


def test_stores_on_one_database_serialise_read_then_write(shared_url: str) -> None:
    """Saving a channel reads its row (and the last creation position) before it inserts or
    updates: stores on one database, as several processes would have, never both insert."""
    _save_the_same_channels_at_once(shared_url)


def test_postgresql_default_isolation_does_not_matter(postgres_url: str) -> None:
    """PostgreSQL only (SQLite has no isolation levels to choose): a server whose transactions
    default to SERIALIZABLE serialises the stores as well, with no serialization failure."""
    serializable = f"{postgres_url}?options=-c%20default_transaction_isolation%3Dserializable"
    _save_the_same_channels_at_once(serializable)


def test_text_keys_sort_by_code_point(store: MetadataStore) -> None:
    """Results ordered by a text key are in code-point order on every backend, whatever the
    database's collation (en-US, for one, sorts 'ch_1' before 'ch1' and 'é' before 'f')."""
    created = ["é", "ch_1", "f", "ch1", "ch-1"]
    by_code_point = ["ch-1", "ch1", "ch_1", "f", "é"]
    for name in created:
        store.save_channel(_channel(name))
    store.save_gtid_intervals([(UUID_A, "a_1", 1, 2), (UUID_A, "a1", 1, 3), (UUID_A, "a", 1, 4)])

    assert [r[23] for r in store.rows("slave_master_info")[1]] == by_code_point
    assert [r[8] for r in store.rows("slave_relay_log_info")[1]] == by_code_point
    assert [c.name for c in store.load_channels()] == created  # creation order
    assert store.load_gtid_executed() == [
        (UUID_A, "a", 1, 4),
        (UUID_A, "a1", 1, 3),
        (UUID_A, "a_1", 1, 2),
    ]
    assert store.rows("gtid_executed")[1] == [
        (UUID_A, 1, 4, "a"),
        (UUID_A, 1, 3, "a1"),
        (UUID_A, 1, 2, "a_1"),
    ]


def test_values_at_the_limits_of_mysqls_columns(store: MetadataStore) -> None:
    """INTEGER UNSIGNED columns (Port, Connect_retry) take 2**32 - 1, BIGINT ones 2**63 - 1, and
    text the SQL layer does not limit is kept whole on every backend (a 300-character host)."""
    config = ChannelConfig(
        name="big",
        connection=SourceConnection(
            host="h" * 300,
            port=2**32 - 1,
            connect_retry=2**32 - 1,
            retry_count=2**63 - 1,
            source_log_pos=2**63 - 1,
            user="u" * 100,
        ),
        applier=ApplierSettings(
            relay_log_pos=2**63 - 1,
            source_log_pos=2**40,
            sql_delay=2**31 - 1,
            privilege_checks_user="p" * 40,
            privilege_checks_host="q" * 300,
            applier_event_memory_limit=2**63 - 1,
        ),
    )
    store.save_channel(config)
    store.save_checkpoint(
        config, [dataclasses.replace(WORKER_1, relay_log_pos=2**63 - 1, source_log_pos=2**33)]
    )

    assert store.load_channels() == [config]
    assert store.load_worker_info("big")[0].relay_log_pos == 2**63 - 1
    master = store.rows("slave_master_info")[1][0]
    assert (master[2], master[3], master[6], master[7]) == (
        2**63 - 1,
        "h" * 300,
        2**32 - 1,
        2**32 - 1,
    )


def test_spark_state_round_trip(store: MetadataStore) -> None:
    """The Spark engine's commit point records databases, tables (their Iceberg snapshot ids,
    64-bit and signed), counters and the executed GTIDs together; loading returns what was
    committed (batch numbers past 2**31 included)."""
    orders = StoredTable(
        1,
        TableRef("shop", "orders"),
        TableDef(
            (Column("id", "int", False), Column("note", "varchar(10)", True, "latin1_bin")),
            (0,),
            collation="latin1_swedish_ci",
        ),
        snapshot=2**62 + 5,
        changes=3,
    )
    notes = StoredTable(2, TableRef("é", "ch_1"), TableDef((Column("x", "text"),)), -(2**63))
    old = StoredTable(3, TableRef("shop", "old"), TableDef((Column("x", "text"),)),
                      legacy=LegacyFiles(4, True, (2**31, 2**31 + 1)))  # fmt: skip
    first = DurableState(
        databases=frozenset({"shop", "é"}),
        tables=MappingProxyType({orders.ref: orders, notes.ref: notes, old.ref: old}),
        last_batch=2**31 + 1,
        gtids=((UUID_A, "", 1, 7),),
        next_table_id=4,
        collations=MappingProxyType({"shop": "latin1_swedish_ci"}),
    )
    assert store.load_spark_state() == DurableState()

    store.commit_spark_state(DurableState(), first)
    assert store.load_spark_state() == first

    second = first.with_tables(
        {orders.ref: orders.with_snapshot(-12345)},
        databases=frozenset({"shop"}),
        last_batch=2**31 + 2,
        gtids=((UUID_A, "", 1, 8),),
        collations=MappingProxyType({"shop": "utf8mb4_bin"}),  # ALTER DATABASE
    )
    store.commit_spark_state(first, second)
    assert store.load_spark_state() == second
    assert store.load_gtid_executed() == [(UUID_A, "", 1, 8)]
    # Compare and swap: a commit point from a state no longer recorded is refused.
    with pytest.raises(CommitPointMoved, match="another replica process"):
        store.commit_spark_state(first, second.with_tables({}, last_batch=2**31 + 3))
    assert store.load_spark_state() == second


def test_prepared_xa_transactions_are_recorded_at_the_commit_point(store: MetadataStore) -> None:
    """Prepared XA transactions are written with the GTIDs of the commit point that keeps or
    drops them, their events as bytes."""
    kept_a = PreparedXa("X'61',X'',1", f"{UUID_A}:2", b"\x00\x01events\xff")
    kept_b = PreparedXa("X'62',X'71',7", f"{UUID_A}:3", b"")
    both = MappingProxyType({kept_a.xid: kept_a, kept_b.xid: kept_b})
    first = DurableState(gtids=((UUID_A, "", 1, 3),), prepared_xa=both)
    store.commit_spark_state(DurableState(), first)
    assert store.load_spark_state() == first
    second = first.with_tables(first.tables, gtids=((UUID_A, "", 1, 4),),
                               prepared_xa=MappingProxyType({kept_b.xid: kept_b}))  # fmt: skip
    store.commit_spark_state(first, second)
    assert store.load_spark_state() == second
