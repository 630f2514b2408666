"""Row values compared with mysqlbinlog's decoding (MariaDB 10.11's ``mariadb-binlog``).

Two sources: the real binlogs in the shared fixtures, and binlogs written by the codec's
encoder for a table with a column of every type mysqlbinlog prints, filled with random rows.
See ``oracle.py`` for how the printed values are normalised.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.rows import encode_rows_event, encode_table_map
from tests.unit.binlog_rows.binlog_files import FIXTURES, decode_file, write_binlog
from tests.unit.binlog_rows.builders import rows_event, table
from tests.unit.binlog_rows.oracle import MYSQLBINLOG, expected_rows, run_mysqlbinlog
from tests.unit.binlog_rows.strategies import all_types_columns, rows_for

pytestmark = pytest.mark.skipif(MYSQLBINLOG is None, reason="mysqlbinlog is not installed")

#: Fixtures whose rows mysqlbinlog prints in full, with the number of rows compared.
COMPARED = {
    "binlog-invisible-columns.000001": 3,
    "binlog_56_gtid_reserved_word.000001": 1,
    "bug32407.001": 2,
    "mariadb-bin.000001": 2,
    "minimal_row_metadata.000001": 1,
    "mysql-bin.checksum-none": 36,
    "mysql-enum-string-set.000001": 3,
    "mysql_type_bit.000001": 1,
    "rpl_unfiltered_hidden_gcol.000001": 1,
    "time_issue.000001": 1,
    "update-full-row.binlog": 7,
    "update-partial-row.binlog": 7,
    "ver_5_1_23.001": 5,
    "ver_trunk_row_v2.001": 5,
    "write-full-row.binlog": 7,
    "write-partial-row.binlog": 7,
}

#: Fixtures with rows mysqlbinlog does not print, and why.
NOT_COMPARED = {
    "json.binlog.000001": "JSON columns: mysqlbinlog stops at the first rows event",
    "json-opaque.binlog": "JSON columns: mysqlbinlog stops at the first rows event",
    "vector.binlog": "VECTOR columns: mysqlbinlog stops at the first rows event",
    "transaction_compression.000001": "rows inside a Transaction_payload event",
    "mysql-bin.compressed": "rows inside a Transaction_payload event",
    "binlog_transaction_with_GTID_TAG.000001": "mysqlbinlog stops at the tagged GTID event",
}


@pytest.mark.parametrize("name", sorted(COMPARED))
def test_fixture_rows_match_mysqlbinlog(name: str) -> None:
    decoded = decode_file(FIXTURES / name)
    ours = expected_rows([event for raw, event in decoded.rows if not raw.inner])
    theirs, status = run_mysqlbinlog(FIXTURES / name)
    assert status == 0
    assert len(ours) == len(theirs) == COMPARED[name]
    for number, (mine, printed) in enumerate(zip(ours, theirs, strict=True)):
        assert mine == printed, f"row {number + 1}"


@pytest.mark.parametrize("name", sorted(NOT_COMPARED))
def test_fixtures_mysqlbinlog_cannot_print_still_decode(name: str) -> None:
    decoded = decode_file(FIXTURES / name)
    assert decoded.rows
    theirs, _ = run_mysqlbinlog(FIXTURES / name)
    assert len(theirs) < sum(len(event.rows) for _, event in decoded.rows)


ORACLE_COLUMNS = all_types_columns(oracle=True)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(rows=st.lists(rows_for(ORACLE_COLUMNS), min_size=1, max_size=8))
def test_encoded_rows_of_every_type_match_mysqlbinlog(
    rows: list[tuple[Any, ...]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    all_types = table(ORACLE_COLUMNS, name="all_types")
    event = rows_event(all_types, rows, flags=1)
    path: Path = tmp_path_factory.mktemp("oracle") / "all-types.000001"
    write_binlog(
        path,
        [
            (EventType.TABLE_MAP, 0, encode_table_map(all_types)),
            (EventType.WRITE_ROWS, 0, encode_rows_event(event, all_types)),
        ],
    )
    theirs, status = run_mysqlbinlog(path)
    assert status == 0
    assert expected_rows([event]) == theirs
