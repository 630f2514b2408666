"""SQLAlchemy 2 (reflection, Core, text()) and pandas against the replica.

Both MySQL dialects that need no C library are driven: ``mysql+pymysql`` and
``mysql+mysqlconnector`` (pure-Python mode).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import Engine, MetaData, Table, create_engine, inspect, select, text
from sqlalchemy.dialects.mysql import BIGINT, CHAR, ENUM, INTEGER, TEXT

from tests.helpers.server import ROOT_PASSWORD

REPLICATION_TABLES = {
    "replication_applier_configuration",
    "replication_applier_filters",
    "replication_applier_global_filters",
    "replication_applier_status",
    "replication_applier_status_by_coordinator",
    "replication_applier_status_by_worker",
    "replication_connection_configuration",
    "replication_connection_status",
}

APPLIER_CONFIGURATION_COLUMNS = [
    "CHANNEL_NAME",
    "DESIRED_DELAY",
    "PRIVILEGE_CHECKS_USER",
    "REQUIRE_ROW_FORMAT",
    "REQUIRE_TABLE_PRIMARY_KEY_CHECK",
    "ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS_TYPE",
    "ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS_VALUE",
    "APPLIER_VERSION",
    "APPLIER_WORKER_COUNT",
    "APPLIER_EVENT_MEMORY_LIMIT",
]

CHANNELS = (
    "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h1', SOURCE_AUTO_POSITION=1, "
    "REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2 FOR CHANNEL 'c1'",
    "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h2', SOURCE_AUTO_POSITION=1, "
    "REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2, APPLIER_WORKER_COUNT=16 "
    "FOR CHANNEL 'c2'",
    "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h3' FOR CHANNEL 'c3'",
)

DIALECTS = {
    "pymysql": {},
    "mysqlconnector": {"use_pure": True},
}


@pytest.fixture(params=sorted(DIALECTS))
def engine(server: int, request: pytest.FixtureRequest) -> Iterator[Engine]:
    """An engine on the replica; disposed when the test ends."""
    driver: str = request.param
    created = create_engine(
        f"mysql+{driver}://root:{ROOT_PASSWORD}@127.0.0.1:{server}/",
        connect_args=DIALECTS[driver],
    )
    try:
        yield created
    finally:
        created.dispose()


def _configure(engine: Engine) -> None:
    """c1 CSA, c2 CSA with 16 workers, c3 MTA (T79's shape)."""
    with engine.begin() as conn:
        for statement in CHANNELS:
            conn.execute(text(statement))


def test_dialect_sees_a_mysql_8_4_server(engine: Engine) -> None:
    with engine.connect() as conn:
        assert engine.dialect.server_version_info == (8, 4, 0)
        assert engine.dialect.is_mariadb is False
        assert conn.execute(text("SELECT @@version_comment")).scalar_one() == "spark-replica"


def test_schema_names(engine: Engine) -> None:
    names = inspect(engine).get_schema_names()
    assert {"information_schema", "mysql", "performance_schema"} <= set(names)


def test_performance_schema_table_names(engine: Engine) -> None:
    inspector = inspect(engine)
    assert REPLICATION_TABLES <= set(inspector.get_table_names("performance_schema"))
    assert inspector.has_table("replication_applier_configuration", schema="performance_schema")
    assert not inspector.has_table("no_such_table", schema="performance_schema")
    for table in ("slave_master_info", "slave_relay_log_info", "slave_worker_info"):
        assert inspector.has_table(table, schema="mysql")


def test_mysql_schema_table_names(engine: Engine) -> None:
    names = inspect(engine).get_table_names("mysql")
    assert {"slave_master_info", "slave_relay_log_info", "slave_worker_info"} <= set(names)


def test_applier_configuration_columns(engine: Engine) -> None:
    """INT.0016/0027/0038 (PS.PFS.1): the three applier columns follow MySQL's seven."""
    columns = inspect(engine).get_columns(
        "replication_applier_configuration", schema="performance_schema"
    )
    assert [c["name"] for c in columns] == APPLIER_CONFIGURATION_COLUMNS
    by_name: dict[str, Any] = {c["name"]: c for c in columns}
    channel = by_name["CHANNEL_NAME"]
    assert isinstance(channel["type"], CHAR)
    assert (channel["type"].length, channel["nullable"]) == (64, False)
    row_format = by_name["REQUIRE_ROW_FORMAT"]
    assert isinstance(row_format["type"], ENUM)
    assert row_format["type"].enums == ["YES", "NO"]
    assert isinstance(by_name["PRIVILEGE_CHECKS_USER"]["type"], TEXT)
    assert by_name["PRIVILEGE_CHECKS_USER"]["nullable"] is True
    for name, kind in (
        ("APPLIER_VERSION", INTEGER),
        ("APPLIER_WORKER_COUNT", INTEGER),
        ("APPLIER_EVENT_MEMORY_LIMIT", BIGINT),
    ):
        column = by_name[name]
        assert isinstance(column["type"], kind), name
        assert column["type"].unsigned is True, name
        assert column["nullable"] is False, name


def test_primary_keys(engine: Engine) -> None:
    inspector = inspect(engine)
    assert inspector.get_pk_constraint("slave_master_info", schema="mysql")[
        "constrained_columns"
    ] == ["Channel_name"]
    assert inspector.get_pk_constraint("slave_relay_log_info", schema="mysql")[
        "constrained_columns"
    ] == ["Channel_name"]
    assert inspector.get_pk_constraint("slave_worker_info", schema="mysql")[
        "constrained_columns"
    ] == ["Channel_name", "Id"]
    assert inspector.get_pk_constraint(
        "replication_applier_configuration", schema="performance_schema"
    )["constrained_columns"] == ["CHANNEL_NAME"]


def test_text_select_on_performance_schema(engine: Engine) -> None:
    """T79 through text(): one row per channel, with a bound parameter."""
    _configure(engine)
    with engine.connect() as conn:
        result = conn.execute(
            text(
                "SELECT CHANNEL_NAME, APPLIER_VERSION, APPLIER_WORKER_COUNT, "
                "APPLIER_EVENT_MEMORY_LIMIT "
                "FROM performance_schema.replication_applier_configuration "
                "WHERE APPLIER_VERSION = :version ORDER BY CHANNEL_NAME"
            ),
            {"version": 2},
        )
        assert list(result.keys()) == [
            "CHANNEL_NAME",
            "APPLIER_VERSION",
            "APPLIER_WORKER_COUNT",
            "APPLIER_EVENT_MEMORY_LIMIT",
        ]
        assert [tuple(row) for row in result] == [("c1", 2, 4, 0), ("c2", 2, 16, 0)]
        status = conn.execute(text("SHOW REPLICA STATUS FOR CHANNEL 'c3'")).mappings().one()
        assert (status["Source_Host"], status["Channel_Name"]) == ("h3", "c3")


def test_reflected_table_in_core_select(engine: Engine) -> None:
    """A Table reflected from performance_schema works in SQLAlchemy Core queries."""
    _configure(engine)
    config = Table(
        "replication_applier_configuration",
        MetaData(),
        autoload_with=engine,
        schema="performance_schema",
    )
    query = (
        select(config.c.CHANNEL_NAME, config.c.APPLIER_WORKER_COUNT)
        .where(config.c.APPLIER_VERSION == 2)
        .order_by(config.c.APPLIER_WORKER_COUNT.desc())
    )
    with engine.connect() as conn:
        assert [tuple(row) for row in conn.execute(query)] == [("c2", 16), ("c1", 4)]
        assert list(conn.execute(select(config)).keys()) == APPLIER_CONFIGURATION_COLUMNS


def test_pandas_read_sql(engine: Engine) -> None:
    _configure(engine)
    with engine.connect() as conn:
        frame = pd.read_sql(
            text(
                "SELECT CHANNEL_NAME, APPLIER_VERSION, APPLIER_WORKER_COUNT "
                "FROM performance_schema.replication_applier_configuration ORDER BY CHANNEL_NAME"
            ),
            conn,
        )
    assert list(frame.columns) == ["CHANNEL_NAME", "APPLIER_VERSION", "APPLIER_WORKER_COUNT"]
    assert frame.to_dict("records") == [
        {"CHANNEL_NAME": "c1", "APPLIER_VERSION": 2, "APPLIER_WORKER_COUNT": 4},
        {"CHANNEL_NAME": "c2", "APPLIER_VERSION": 2, "APPLIER_WORKER_COUNT": 16},
        {"CHANNEL_NAME": "c3", "APPLIER_VERSION": 1, "APPLIER_WORKER_COUNT": 4},
    ]
    assert str(frame["APPLIER_VERSION"].dtype) == "int64"

    counts = pd.read_sql(
        "SELECT APPLIER_VERSION, COUNT(*) AS channels "
        "FROM performance_schema.replication_applier_configuration GROUP BY APPLIER_VERSION "
        "ORDER BY APPLIER_VERSION",
        engine,
        index_col="APPLIER_VERSION",
    )
    assert counts["channels"].to_dict() == {1: 1, 2: 2}
