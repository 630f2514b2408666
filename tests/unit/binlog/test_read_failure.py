"""A damaged relay log is reported as ER_REPLICA_RELAY_LOG_READ_FAILURE (13121)."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.errors import BinlogError, read_failure
from spark_replica.applier_core.binlog.file import BinlogFileReader
from spark_replica.applier_core.errors import ErrorCode

FIXTURES = Path(__file__).resolve().parents[4] / "shared" / "fixtures" / "binlogs"


@pytest.mark.parametrize(
    ("name", "position"),
    [
        ("binlog_truncated_event.000001", 4),
        ("binlog_truncated_prev_gtid_event.000001", 120),
        ("corrupt-relay-bin.000624", 91204),
    ],
)
def test_damaged_fixture_gives_13121_naming_file_and_position(name: str, position: int) -> None:
    with pytest.raises(BinlogError) as caught:
        for _ in BinlogFileReader(FIXTURES / name):
            pass
    error = read_failure(caught.value, "c1")
    assert error.code == ErrorCode.REPLICA_RELAY_LOG_READ_FAILURE == 13121
    assert error.sqlstate == "HY000"
    assert error.message.startswith("Replica SQL for channel 'c1': Relay log read failure: ")
    assert f"file '{FIXTURES / name}'" in error.message or name in error.message
    assert f"position {position}" in error.message
    assert read_failure(caught.value).message.startswith("Relay log read failure: ")
