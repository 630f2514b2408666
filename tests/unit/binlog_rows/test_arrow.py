"""Arrow types of columns, and decoded values loading into them."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_replica.applier_core.binlog.constants import ColumnType as T
from spark_replica.applier_core.binlog.rows import (
    ColumnSpec,
    arrow_schema,
    arrow_type,
    make_column,
)
from tests.unit.binlog_rows.builders import table
from tests.unit.binlog_rows.strategies import all_types_columns, values_for

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_rows.py"


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        (make_column(0, T.TINY), pa.int8()),
        (make_column(0, T.TINY, unsigned=True), pa.int16()),
        (make_column(0, T.SHORT, unsigned=True), pa.int32()),
        (make_column(0, T.INT24, unsigned=True), pa.int32()),
        (make_column(0, T.LONG), pa.int32()),
        (make_column(0, T.LONG, unsigned=True), pa.int64()),
        (make_column(0, T.LONGLONG), pa.int64()),
        (make_column(0, T.LONGLONG, unsigned=True), pa.decimal128(20, 0)),
        (make_column(0, T.NEWDECIMAL, precision=12, scale=3), pa.decimal128(12, 3)),
        (make_column(0, T.NEWDECIMAL, precision=65, scale=30), pa.decimal256(65, 30)),
        (make_column(0, T.FLOAT), pa.float32()),
        (make_column(0, T.DOUBLE), pa.float64()),
        (make_column(0, T.YEAR), pa.int16()),
        (make_column(0, T.BIT, bits=63), pa.int64()),
        (make_column(0, T.BIT, bits=64), pa.binary()),
        (make_column(0, T.DATE), pa.date32()),
        (make_column(0, T.TIME2, fsp=3), pa.duration("us")),
        (make_column(0, T.DATETIME2, fsp=6), pa.timestamp("us")),
        (make_column(0, T.TIMESTAMP2), pa.timestamp("us", tz="UTC")),
        (make_column(0, T.VARCHAR, length=10, collation=255), pa.string()),
        (make_column(0, T.BLOB, collation=8), pa.string()),
        (make_column(0, T.BLOB, collation=63), pa.binary()),
        (make_column(0, T.STRING, length=4), pa.binary()),  # no charset metadata
        (make_column(0, T.STRING, real_type=T.ENUM, members=("a",)), pa.string()),
        (make_column(0, T.STRING, real_type=T.SET, members=("a",)), pa.string()),
        (make_column(0, T.STRING, real_type=T.ENUM, pack_length=2), pa.int32()),
        (make_column(0, T.JSON), pa.string()),
        (make_column(0, T.GEOMETRY), pa.binary()),
        (make_column(0, T.VECTOR), pa.list_(pa.float32())),
    ],
)
def test_arrow_types(column: ColumnSpec, expected: Any) -> None:
    assert arrow_type(column) == expected


def _to_arrow(spec: ColumnSpec, value: Any) -> Any:
    """What an applier hands to pyarrow for a decoded value."""
    if isinstance(value, str) and spec.real_type in (
        T.DATE,
        T.DATETIME,
        T.DATETIME2,
        T.TIMESTAMP,
        T.TIMESTAMP2,
    ):
        return None  # a zero or invalid date: no Arrow value
    if spec.real_type == T.GEOMETRY:
        return value.wkb
    if spec.real_type == T.BIT and (spec.bits or 0) > 63:
        return value.to_bytes(8, "big")
    return value


@pytest.mark.parametrize("spec", all_types_columns(), ids=lambda c: c.describe())
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_decoded_values_load_into_their_arrow_type(spec: ColumnSpec, data: st.DataObject) -> None:
    values = data.draw(st.lists(values_for(spec), min_size=1, max_size=5))
    array = pa.array([_to_arrow(spec, v) for v in values], type=arrow_type(spec))
    assert len(array) == len(values)


def test_arrow_schema_names_and_nullability() -> None:
    columns = (make_column(0, T.LONG, nullable=False, name="id"), make_column(1, T.DOUBLE))
    schema = arrow_schema(table(columns))
    assert schema.names == ["id", "@2"]
    assert not schema.field("id").nullable and schema.field("@2").nullable


def test_the_row_decoder_does_not_import_pyarrow() -> None:
    code = (
        "import sys; import spark_replica.applier_core.binlog.rows as r; "
        "from spark_replica.applier_core.binlog.rows import make_column; "
        "assert 'pyarrow' not in sys.modules, 'pyarrow imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_bench_script_runs(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("_bench_rows", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_bench_rows"] = module
    try:
        spec.loader.exec_module(module)
        assert module.main(["--rows", "40", "--repeat", "1"]) == 0
    finally:
        sys.modules.pop("_bench_rows", None)
    out = capsys.readouterr().out
    assert "sbtest" in out and "all types" in out and out.count("rows/s") == 6
