"""SHOW [GLOBAL | SESSION] VARIABLES [LIKE 'pattern'] on the built-in source: the system
variables it answers to ``SELECT @@name``, by name, filtered with LIKE; and what it is for:
python-mysql-replication (which asks ``SHOW GLOBAL VARIABLES LIKE 'BINLOG_CHECKSUM'`` and
``SHOW VARIABLES LIKE 'BINLOG_ROW_METADATA'`` before it streams) reads the source's row
changes, with their column names, exactly as generated."""

from __future__ import annotations

from pathlib import Path

import pytest
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

from spark_replica.applier_core.receiver.client import SourceClient, SourceError
from spark_replica.tools.generator.simulate import simulate
from spark_replica.tools.source import SourceBinlog, SourceServer
from tests.source.conftest import (
    REPL_PASSWORD,
    REPL_USER,
    SPEC,
    TOTAL,
    UUID,
    Connect,
    MakeBinlog,
    StartServer,
    disk_files,
)

FILLED = 30
COLUMNS = ["Variable_name", "Value"]


@pytest.fixture
def binlog(make_binlog: MakeBinlog) -> SourceBinlog:
    return make_binlog(FILLED)


@pytest.fixture
def client(server: SourceServer, connect: Connect) -> SourceClient:
    return connect(server)


def _names(client: SourceClient, sql: str) -> list[str | None]:
    result = client.query(sql)
    assert result.columns == COLUMNS
    return [name for name, _ in result.rows]


def test_what_python_mysql_replication_asks(client: SourceClient) -> None:
    result = client.query("SHOW GLOBAL VARIABLES LIKE 'BINLOG_CHECKSUM'")
    assert result.columns == COLUMNS
    assert result.rows == [("binlog_checksum", "CRC32")]
    # Every Table_map the source serves carries the column names.
    assert client.query("SHOW VARIABLES LIKE 'BINLOG_ROW_METADATA';").rows == [
        ("binlog_row_metadata", "FULL")]  # fmt: skip


def test_every_variable_is_listed_by_name_with_its_select_value(client: SourceClient) -> None:
    rows = client.query("SHOW VARIABLES").rows
    names = [str(name) for name, _ in rows]
    assert names == sorted(names)
    assert {"server_id", "server_uuid", "gtid_mode", "binlog_row_image", "log_bin"} <= set(names)
    for name, value in rows:
        assert client.query(f"SELECT @@GLOBAL.{name}").rows == [(value,)], name
    assert _names(client, "SHOW SESSION VARIABLES") == names
    assert _names(client, "show local variables") == names


def test_values_follow_the_binary_log(client: SourceClient) -> None:
    assert client.query("SHOW GLOBAL VARIABLES LIKE 'gtid_executed'").rows == [
        ("gtid_executed", f"{UUID}:1-{FILLED}")]  # fmt: skip


@pytest.mark.parametrize(
    ("pattern", "names"),
    [
        ("gtid%", ["gtid_executed", "gtid_mode", "gtid_purged"]),
        ("%ROW%", ["binlog_row_image", "binlog_row_metadata"]),
        ("log_bi_", ["log_bin"]),
        ("log\\_bin", ["log_bin"]),
        ("log\\_b\\%", []),
        ("lo\\_\\_bin", []),
        ("logxbin", []),
        ("no_such_variable", []),
    ],
)
def test_like_filters_by_name(client: SourceClient, pattern: str, names: list[str]) -> None:
    """``%`` any run of characters, ``_`` any one, a backslash makes the next one literal;
    names compare without regard to case."""
    assert _names(client, f"SHOW VARIABLES LIKE '{pattern}'") == names


def test_other_forms_are_1235(client: SourceClient) -> None:
    with pytest.raises(SourceError) as caught:
        client.query("SHOW VARIABLES WHERE Variable_name = 'log_bin'")
    assert (caught.value.code, caught.value.sqlstate) == (1235, "42000")
    assert caught.value.message == (
        "This version of MySQL doesn't yet support "
        "'SHOW VARIABLES WHERE Variable_name = 'log_bin''")  # fmt: skip


# The library opens its second connection with PyMySQL's deprecated ``db`` argument.
@pytest.mark.filterwarnings("ignore:'db' is deprecated:DeprecationWarning")
def test_python_mysql_replication_reads_every_row_change(
    make_binlog: MakeBinlog, start_server: StartServer, tmp_path: Path
) -> None:
    """The library's own client, over several binary log files, from the first one: every
    row change of the workload in order, with its table, kind, column names and values."""
    server = start_server(make_binlog(TOTAL))
    transactions, _ = simulate(SPEC)
    expected = []
    for trx in transactions:
        for change in trx.changes:
            names = [column.name for column in change.table.columns]
            images = {image: dict(zip(names, row, strict=True))
                      for image, row in (("before", change.before), ("after", change.after))
                      if row is not None}  # fmt: skip
            expected.append((change.table.schema, change.table.name, change.kind, images))
    stream = BinLogStreamReader(
        {"host": "127.0.0.1", "port": server.port, "user": REPL_USER, "password": REPL_PASSWORD},
        server_id=77, blocking=False, only_events=[WriteRowsEvent, UpdateRowsEvent,
        DeleteRowsEvent], log_file=disk_files(tmp_path / "binlog")[0], log_pos=4,
        resume_stream=True,
    )  # fmt: skip
    kinds = {WriteRowsEvent: "insert", UpdateRowsEvent: "update", DeleteRowsEvent: "delete"}
    found = []
    try:
        for event in stream:
            kind = kinds[type(event)]
            for row in event.rows:
                images = (
                    {"before": row["before_values"], "after": row["after_values"]}
                    if kind == "update"
                    else {"after" if kind == "insert" else "before": row["values"]}
                )
                found.append((event.schema, event.table, kind, images))
    finally:
        stream.close()
    assert len(disk_files(tmp_path / "binlog")) > 3
    assert found == expected
