"""The MySQL → Spark type mapping without Spark: the mapping table, the DDL text, the Arrow
schema and the value conversions (round trips through pyarrow).

``EDGE_COLUMNS`` / ``EDGE_ROWS`` (one column of each type, edge values) are shared with the
Spark round trip in ``test_types_spark.py``.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_replica.applier_core.binlog.rows import Geometry
from spark_replica.applier_core.binlog.rows.json_text import binary_to_text, text_to_binary
from spark_replica.applier_core.storage.interface import Column
from spark_replica.applier_core.storage.spark.types import (
    SparkType,
    arrow_schema,
    from_arrow_rows,
    parse_time,
    spark_columns_ddl,
    spark_type,
    time_text,
    to_arrow_table,
)
from tests.unit.binlog_rows.strategies import (
    dates,
    datetimes,
    decimals,
    json_texts,
    times,
    timestamps,
)

QUICK = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

DEC128 = pa.decimal128
TS_UTC = pa.timestamp("us", tz="UTC")
TS = pa.timestamp("us")
VECTOR = pa.list_(pa.float32())

MAPPING: list[tuple[str, str, pa.DataType]] = [
    ("TINYINT", "TINYINT", pa.int8()),
    ("TINYINT(1)", "TINYINT", pa.int8()),
    ("BOOLEAN", "TINYINT", pa.int8()),
    ("BOOL", "TINYINT", pa.int8()),
    ("TINYINT UNSIGNED", "SMALLINT", pa.int16()),
    ("TINYINT(4) UNSIGNED", "SMALLINT", pa.int16()),
    ("TINYINT ZEROFILL", "SMALLINT", pa.int16()),
    ("SMALLINT", "SMALLINT", pa.int16()),
    ("SMALLINT UNSIGNED", "INT", pa.int32()),
    ("MEDIUMINT", "INT", pa.int32()),
    ("MEDIUMINT UNSIGNED", "INT", pa.int32()),
    ("INT", "INT", pa.int32()),
    ("INT(11)", "INT", pa.int32()),
    ("INTEGER", "INT", pa.int32()),
    ("INT SIGNED", "INT", pa.int32()),
    ("INT UNSIGNED", "BIGINT", pa.int64()),
    ("INT(10) UNSIGNED", "BIGINT", pa.int64()),
    ("BIGINT", "BIGINT", pa.int64()),
    ("BIGINT UNSIGNED", "DECIMAL(20,0)", DEC128(20, 0)),
    ("BIGINT(20) UNSIGNED", "DECIMAL(20,0)", DEC128(20, 0)),
    ("SERIAL", "DECIMAL(20,0)", DEC128(20, 0)),
    ("DECIMAL", "DECIMAL(10,0)", DEC128(10, 0)),
    ("DECIMAL(10)", "DECIMAL(10,0)", DEC128(10, 0)),
    ("DECIMAL(10, 2)", "DECIMAL(10,2)", DEC128(10, 2)),
    ("DECIMAL(10, 2) UNSIGNED", "DECIMAL(10,2)", DEC128(10, 2)),
    ("NUMERIC(8, 3)", "DECIMAL(8,3)", DEC128(8, 3)),
    ("DEC(5, 1)", "DECIMAL(5,1)", DEC128(5, 1)),
    ("FIXED(5, 2)", "DECIMAL(5,2)", DEC128(5, 2)),
    ("DECIMAL(38, 30)", "DECIMAL(38,30)", DEC128(38, 30)),
    ("DECIMAL(39, 0)", "STRING", pa.string()),
    ("DECIMAL(65, 30)", "STRING", pa.string()),
    ("FLOAT", "FLOAT", pa.float32()),
    ("FLOAT(10)", "FLOAT", pa.float32()),
    ("FLOAT(24)", "FLOAT", pa.float32()),
    ("FLOAT(25)", "DOUBLE", pa.float64()),
    ("FLOAT(7, 3)", "FLOAT", pa.float32()),
    ("DOUBLE", "DOUBLE", pa.float64()),
    ("DOUBLE(10, 2)", "DOUBLE", pa.float64()),
    ("DOUBLE UNSIGNED", "DOUBLE", pa.float64()),
    ("DOUBLE PRECISION", "DOUBLE", pa.float64()),
    ("REAL", "DOUBLE", pa.float64()),
    ("BIT", "BIGINT", pa.int64()),
    ("BIT(3)", "BIGINT", pa.int64()),
    ("BIT(64)", "BIGINT", pa.int64()),
    ("DATE", "DATE", pa.date32()),
    ("DATETIME", "TIMESTAMP_NTZ", TS),
    ("DATETIME(6)", "TIMESTAMP_NTZ", TS),
    ("TIMESTAMP", "TIMESTAMP", TS_UTC),
    ("TIMESTAMP(3)", "TIMESTAMP", TS_UTC),
    ("TIME", "STRING", pa.string()),
    ("TIME(3)", "STRING", pa.string()),
    ("YEAR", "SMALLINT", pa.int16()),
    ("YEAR(4)", "SMALLINT", pa.int16()),
    ("CHAR", "STRING", pa.string()),
    ("CHAR(3)", "STRING", pa.string()),
    ("NCHAR(3)", "STRING", pa.string()),
    ("NATIONAL CHAR(3)", "STRING", pa.string()),
    ("VARCHAR(10)", "STRING", pa.string()),
    ("CHARACTER VARYING(10)", "STRING", pa.string()),
    ("NVARCHAR(10)", "STRING", pa.string()),
    ("TINYTEXT", "STRING", pa.string()),
    ("TEXT", "STRING", pa.string()),
    ("TEXT(100)", "STRING", pa.string()),
    ("MEDIUMTEXT", "STRING", pa.string()),
    ("LONGTEXT", "STRING", pa.string()),
    ("LONG VARCHAR", "STRING", pa.string()),
    ("ENUM('x', 'y')", "STRING", pa.string()),
    ("ENUM('a,b', 'it''s', ')')", "STRING", pa.string()),
    ("SET('a', 'b')", "STRING", pa.string()),
    ("JSON", "STRING", pa.string()),
    ("BINARY", "BINARY", pa.binary()),
    ("BINARY(3)", "BINARY", pa.binary()),
    ("VARBINARY(4)", "BINARY", pa.binary()),
    ("TINYBLOB", "BINARY", pa.binary()),
    ("BLOB", "BINARY", pa.binary()),
    ("BLOB(100)", "BINARY", pa.binary()),
    ("MEDIUMBLOB", "BINARY", pa.binary()),
    ("LONGBLOB", "BINARY", pa.binary()),
    ("GEOMETRY", "BINARY", pa.binary()),
    ("POINT", "BINARY", pa.binary()),
    ("POINT SRID 4326", "BINARY", pa.binary()),
    ("LINESTRING", "BINARY", pa.binary()),
    ("POLYGON", "BINARY", pa.binary()),
    ("MULTIPOINT", "BINARY", pa.binary()),
    ("MULTILINESTRING", "BINARY", pa.binary()),
    ("MULTIPOLYGON", "BINARY", pa.binary()),
    ("GEOMETRYCOLLECTION", "BINARY", pa.binary()),
    ("GEOMCOLLECTION", "BINARY", pa.binary()),
    ("VECTOR", "ARRAY<FLOAT>", VECTOR),
    ("VECTOR(3)", "ARRAY<FLOAT>", VECTOR),
    ("int unsigned", "BIGINT", pa.int64()),
]


@pytest.mark.parametrize(("mysql", "spark_sql", "arrow"), MAPPING, ids=[m[0] for m in MAPPING])
def test_the_mapping_table(mysql: str, spark_sql: str, arrow: pa.DataType) -> None:
    spark = spark_type(mysql)
    assert (spark.mysql, spark.spark_sql, spark.arrow) == (mysql, spark_sql, arrow)


UNKNOWN = [
    "",
    "FOO",
    "INTEGRAL",
    "INT UNSIGNED BIGINT",
    "DECIMAL(66)",
    "DECIMAL(10, 11)",
    "DECIMAL(40, 31)",
    "DECIMAL(1, 2, 3)",
    "FLOAT(54)",
    "BIT(0)",
    "BIT(65)",
    "TIME(7)",
    "DATETIME(-1)",
    "DATE(1)",
    "VARCHAR(x)",
    "VARCHAR(10",
    "INT(11)(2)",
    "ENUM",
    "SET",
    "GEOMETRY(1)",
    "VECTOR(0)",
    "VECTOR(16384)",
]


@pytest.mark.parametrize("mysql", UNKNOWN)
def test_an_unknown_type_is_a_value_error(mysql: str) -> None:
    with pytest.raises(ValueError, match="MySQL type"):
        spark_type(mysql)


def test_spark_type_is_cached() -> None:
    assert spark_type("DECIMAL(12, 4)") is spark_type("DECIMAL(12, 4)")


def test_only_date_types_turn_values_into_null() -> None:
    zero_as_null = {mysql for mysql, _, _ in MAPPING if spark_type(mysql).zero_as_null}
    assert zero_as_null == {"DATE", "DATETIME", "DATETIME(6)", "TIMESTAMP", "TIMESTAMP(3)"}


# -- DDL and schema ---------------------------------------------------------------------------


def test_the_columns_ddl() -> None:
    columns = [
        Column("id", "BIGINT UNSIGNED", nullable=False),
        Column("v", "VARCHAR(10)"),
        Column("we`ird name", "DECIMAL(10, 2)", nullable=False),
        Column("d", "DATETIME(6)", nullable=False),
        Column("vec", "VECTOR(3)"),
    ]
    assert spark_columns_ddl(columns) == (
        "`id` DECIMAL(20,0) NOT NULL, `v` STRING, `we``ird name` DECIMAL(10,2) NOT NULL, "
        "`d` TIMESTAMP_NTZ, `vec` ARRAY<FLOAT>"
    )


def test_the_arrow_schema() -> None:
    columns = [
        Column("id", "INT", nullable=False),
        Column("t", "TEXT"),
        Column("day", "DATE", nullable=False),
    ]
    schema = arrow_schema(columns, [pa.field("_seq", pa.int64(), nullable=False)])
    assert schema == pa.schema(
        [
            pa.field("id", pa.int32(), nullable=False),
            pa.field("t", pa.string()),
            pa.field("day", pa.date32()),  # a zero date is NULL in Spark
            pa.field("_seq", pa.int64(), nullable=False),
        ]
    )


# -- conversions ------------------------------------------------------------------------------


def _convert(spark: SparkType, value: object) -> object:
    return value if spark.to_spark is None else spark.to_spark(value)


def _back(spark: SparkType, value: object) -> object:
    return value if spark.from_spark is None else spark.from_spark(value)


H = 3600


@pytest.mark.parametrize(
    ("fsp", "value", "text"),
    [
        (0, timedelta(0), "00:00:00"),
        (6, timedelta(0), "00:00:00.000000"),
        (6, -timedelta(hours=838, minutes=59, seconds=59), "-838:59:59.000000"),
        (0, timedelta(hours=838, minutes=59, seconds=59), "838:59:59"),
        (3, timedelta(seconds=-1.5), "-00:00:01.500"),
        (3, timedelta(microseconds=1000), "00:00:00.001"),
        (1, timedelta(seconds=-H - 61, microseconds=-900000), "-01:01:01.9"),
        (6, -timedelta(microseconds=1), "-00:00:00.000001"),
        (0, timedelta(microseconds=5), "00:00:00.000005"),  # finer than the column: kept
        (0, timedelta(hours=1023, minutes=59, seconds=59), "1023:59:59"),
    ],
)
def test_time_text(fsp: int, value: timedelta, text: str) -> None:
    spark = spark_type(f"TIME({fsp})")
    assert _convert(spark, value) == text == time_text(value, fsp)
    assert _back(spark, text) == value == parse_time(text)


@pytest.mark.parametrize("text", ["", "1:2", "00:00:00.", "00:00:00.1234567", "+01:00:00"])
def test_bad_time_text(text: str) -> None:
    with pytest.raises(ValueError):
        parse_time(text)


@pytest.mark.parametrize(
    ("mysql", "value", "spark_value"),
    [
        ("DATE", "0000-00-00", None),
        ("DATE", "2021-04-31", None),
        ("DATE", date(2024, 2, 29), date(2024, 2, 29)),
        ("DATETIME", "0000-00-00 00:00:00", None),
        ("DATETIME(3)", "2021-02-30 10:20:30.500", None),
        ("TIMESTAMP", "0000-00-00 00:00:00", None),
        ("TIMESTAMP(6)", "0000-00-00 00:00:00.000000", None),
        ("ENUM('x', 'y')", 2, "2"),
        ("ENUM('x', 'y')", 0, "0"),
        ("SET('a', 'b')", 3, "3"),
        ("SET('a', 'b')", (1 << 64) - 1, "18446744073709551615"),
        ("VARCHAR(10)", b"caf\xc3\xa9", "café"),
        ("TEXT", b"\xff\xfeok", "\ufffd\ufffdok"),
        ("BLOB", "é", b"\xc3\xa9"),
        ("BIT(64)", (1 << 64) - 1, -1),
        ("BIT(64)", 1 << 63, -(1 << 63)),
        ("BIT(64)", (1 << 63) - 1, (1 << 63) - 1),
        ("GEOMETRY", Geometry(4326, b"\x01\x02"), b"\xe6\x10\x00\x00\x01\x02"),
        ("DECIMAL(65, 30)", Decimal("-1.5" + "0" * 29), "-1.5" + "0" * 29),
        ("DECIMAL(65, 30)", Decimal("0E-30"), "0." + "0" * 30),
        ("DECIMAL(40, 0)", Decimal("1" + "0" * 39), "1" + "0" * 39),
    ],
)
def test_to_spark(mysql: str, value: object, spark_value: object) -> None:
    assert _convert(spark_type(mysql), value) == spark_value


@pytest.mark.parametrize(
    ("mysql", "value"),
    [("VARCHAR(3)", 1.5), ("BLOB", 1), ("TIME", "00:00:00"), ("DECIMAL(50, 2)", "1.00")],
)
def test_to_spark_refuses_other_values(mysql: str, value: object) -> None:
    with pytest.raises(TypeError):
        _convert(spark_type(mysql), value)


# -- tables -----------------------------------------------------------------------------------

F32_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]
F32_TINY = struct.unpack("<f", b"\x01\x00\x00\x00")[0]
F32_TENTH = struct.unpack("<f", struct.pack("<f", 0.1))[0]
POINT_WKB = b"\x01\x01\x00\x00\x00" + struct.pack("<dd", 1.0, -2.5)
JSON_TEXT = binary_to_text(text_to_binary('{"a": [1, 2.5, "x"]}'))
TS_MAX = datetime(2106, 2, 7, 6, 28, 15, 999999, tzinfo=UTC)
DEC38 = "9" * 28 + "." + "9" * 10
DEC65 = "9" * 35 + "." + "9" * 30


def _d(text: str) -> Decimal:
    return Decimal(text)


#: (type, nullable, values of rows 1..4 as the binlog decoder gives them)
EDGE: list[tuple[str, bool, list[Any]]] = [
    ("TINYINT", True, [-128, 127, None, 0]),
    ("TINYINT UNSIGNED", True, [0, 255, None, 1]),
    ("BOOLEAN", True, [0, 1, None, 1]),
    ("SMALLINT", True, [-32768, 32767, None, 0]),
    ("SMALLINT UNSIGNED", True, [0, 65535, None, 1]),
    ("MEDIUMINT", True, [-8388608, 8388607, None, 0]),
    ("MEDIUMINT UNSIGNED", True, [0, 16777215, None, 1]),
    ("INT", False, [-(1 << 31), (1 << 31) - 1, 0, 1]),
    ("INT UNSIGNED", True, [0, (1 << 32) - 1, None, 1]),
    ("BIGINT", True, [-(1 << 63), (1 << 63) - 1, None, 0]),
    ("BIGINT UNSIGNED", True, [0, (1 << 64) - 1, None, 1 << 63]),
    ("SERIAL", False, [1, (1 << 64) - 1, 2, 3]),
    ("DECIMAL(10, 2)", True, [_d("-99999999.99"), _d("99999999.99"), None, _d("0.00")]),
    ("DECIMAL(5)", True, [_d("-99999"), _d("99999"), None, _d("0")]),
    ("DECIMAL(5, 5)", True, [_d("-0.99999"), _d("0.99999"), None, _d("0.00001")]),
    ("DECIMAL(38, 10)", True, [_d("-" + DEC38), _d(DEC38), None, _d("0.0000000001")]),
    ("DECIMAL(65, 30)", True, [_d("-" + DEC65), _d(DEC65), None, _d("0." + "0" * 30)]),
    ("DECIMAL(65, 0)", True, [_d("-" + "9" * 65), _d("1" + "0" * 64), None, _d("0")]),
    ("FLOAT", True, [-F32_MAX, F32_MAX, None, F32_TENTH]),
    ("FLOAT(7, 3)", True, [F32_TINY, -0.0, None, 1.5]),
    ("DOUBLE", True, [-1.7976931348623157e308, 5e-324, None, 0.1]),
    ("FLOAT(30)", True, [-0.0, 1e300, None, 0.1]),
    ("BIT(1)", True, [0, 1, None, 1]),
    ("BIT(3)", True, [0, 7, None, 5]),
    ("BIT(64)", True, [0, (1 << 64) - 1, None, 1 << 63]),
    ("YEAR", True, [0, 2155, None, 1901]),
    ("DATE", True, [date(1, 1, 1), date(9999, 12, 31), None, date(1582, 10, 10)]),
    ("DATE", True, [date(2024, 2, 29), date(1000, 1, 1), None, "0000-00-00"]),
    ("DATETIME", False, [datetime(1000, 1, 1), datetime(9999, 12, 31, 23, 59, 59), datetime(1970, 1, 1), "2021-04-31 10:00:00"]),  # noqa: E501
    ("DATETIME(6)", True, [datetime(1, 1, 1), datetime(9999, 12, 31, 23, 59, 59, 999999), None, datetime(2024, 2, 29, 12, 0, 0, 1)]),  # noqa: E501
    ("DATETIME(3)", True, [datetime(1582, 10, 10, 1, 2, 3, 4000), "0000-00-00 00:00:00.000", None, datetime(2000, 1, 1)]),  # noqa: E501
    ("TIMESTAMP", True, [datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC), datetime(2038, 1, 19, 3, 14, 7, tzinfo=UTC), None, "0000-00-00 00:00:00"]),  # noqa: E501
    ("TIMESTAMP(6)", True, [datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC), TS_MAX, None, datetime(2024, 2, 29, tzinfo=UTC)]),  # noqa: E501
    ("TIME", True, [-timedelta(hours=838, minutes=59, seconds=59), timedelta(hours=838, minutes=59, seconds=59), None, timedelta(0)]),  # noqa: E501
    ("TIME(3)", True, [timedelta(seconds=-1.5), timedelta(microseconds=1000), None, timedelta(hours=-1)]),  # noqa: E501
    ("TIME(6)", True, [-timedelta(microseconds=1), timedelta(hours=1023, minutes=59, seconds=59, microseconds=999999), None, timedelta(days=1)]),  # noqa: E501
    ("CHAR(3)", True, ["abc", "", None, "é日本"]),
    ("VARCHAR(10)", False, ["😀 emoji", "it's", "", "nul\x00tab\t"]),
    ("VARCHAR(10)", True, [b"caf\xc3\xa9", b"\xff", None, "plain"]),
    ("TEXT", True, ["x" * 70000, "line\nbreak", None, "ça va"]),
    ("TINYTEXT", True, ["", "t", None, "\u200b"]),
    ("LONGTEXT", True, ["a" * 10, "\U0010ffff", None, "\\"]),
    ("ENUM('x', 'y')", True, ["x", "", None, 2]),
    ("SET('a', 'b')", True, ["a,b", "", None, 3]),
    ("JSON", True, ['{"a": 1}', "null", None, JSON_TEXT]),
    ("BINARY(3)", True, [b"\x00\x00\x00", b"\xff\x00\x01", None, b"ab\x00"]),
    ("VARBINARY(4)", True, [b"", b"\x00", None, b"\x80\x81"]),
    ("BLOB", True, [bytes(range(256)), b"", None, b"\x00" * 1000]),
    ("LONGBLOB", True, [b"\xde\xad\xbe\xef", b"x", None, b""]),
    ("GEOMETRY", True, [Geometry(0, POINT_WKB), Geometry((1 << 32) - 1, b""), None, Geometry(4326, b"\x00")]),  # noqa: E501
    ("POINT", True, [Geometry(4326, POINT_WKB), Geometry(0, POINT_WKB), None, Geometry(3857, POINT_WKB)]),  # noqa: E501
    ("VECTOR(3)", True, [[F32_TINY, -F32_MAX, F32_MAX], [], None, [F32_TENTH, -0.0, 1.0]]),
]  # fmt: skip

EDGE_COLUMNS: tuple[Column, ...] = (
    Column("id", "BIGINT", nullable=False),
    *(Column(f"c{i}", mysql, nullable) for i, (mysql, nullable, _) in enumerate(EDGE)),
)
EDGE_ROWS: list[tuple[object, ...]] = [
    (row + 1, *(values[row] for _, _, values in EDGE)) for row in range(4)
]


def lossy(mysql: str, value: object) -> object:
    """What a value reads back as: the documented lossy cases, else the value itself."""
    spark = spark_type(mysql)
    if spark.zero_as_null and isinstance(value, str):
        return None
    if spark.spark_sql == "STRING" and isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if spark.spark_sql == "STRING" and isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return str(value)  # JsonText reads back as plain text
    return value


def expected_rows(
    columns: Sequence[Column], rows: Sequence[tuple[object, ...]]
) -> list[tuple[object, ...]]:
    return [
        tuple(lossy(column.type, value) for column, value in zip(columns, row, strict=True))
        for row in rows
    ]


def same(a: object, b: object) -> bool:
    """Equality that also asks for the same type, Decimal scale, time zone and sign of zero."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if a != b:
        return False
    if isinstance(a, float) and isinstance(b, float):
        return math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, Decimal) and isinstance(b, Decimal):
        return a.as_tuple().exponent == b.as_tuple().exponent
    if isinstance(a, datetime) and isinstance(b, datetime):
        return a.tzinfo is b.tzinfo
    return True


def assert_same_rows(
    columns: Sequence[Column],
    actual: Sequence[tuple[object, ...]],
    expected: Sequence[tuple[object, ...]],
) -> None:
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        for column, x, y in zip(columns, got, want, strict=True):
            assert same(x, y), f"{column}: {x!r} != {y!r}"


def test_the_edge_rows_round_trip_through_arrow() -> None:
    table = to_arrow_table(EDGE_COLUMNS, EDGE_ROWS)
    assert table.schema == arrow_schema(EDGE_COLUMNS)
    assert table.num_rows == 4
    back = from_arrow_rows(EDGE_COLUMNS, table)
    assert_same_rows(EDGE_COLUMNS, back, expected_rows(EDGE_COLUMNS, EDGE_ROWS))


def test_only_the_documented_values_change() -> None:
    expected = expected_rows(EDGE_COLUMNS, EDGE_ROWS)
    changed = {
        (column.type, repr(before))
        for row, want in zip(EDGE_ROWS, expected, strict=True)
        for column, before, after in zip(EDGE_COLUMNS, row, want, strict=True)
        if not same(before, after)
    }
    assert changed == {
        ("JSON", repr(JSON_TEXT)),  # the same text, as a plain str
        ("DATE", "'0000-00-00'"),
        ("DATETIME", "'2021-04-31 10:00:00'"),
        ("DATETIME(3)", "'0000-00-00 00:00:00.000'"),
        ("TIMESTAMP", "'0000-00-00 00:00:00'"),
        ("VARCHAR(10)", "b'caf\\xc3\\xa9'"),
        ("VARCHAR(10)", "b'\\xff'"),
        ("ENUM('x', 'y')", "2"),
        ("SET('a', 'b')", "3"),
    }


def test_extra_columns_and_empty_tables() -> None:
    columns = [Column("id", "INT", nullable=False), Column("t", "TIME(2)")]
    rows = [(1, timedelta(seconds=1)), (2, None)]
    table = to_arrow_table(columns, rows, {"_seq": (pa.int64(), [7, 8])})
    assert table.column_names == ["id", "t", "_seq"]
    assert table.column("t").to_pylist() == ["00:00:01.00", None]
    assert table.column("_seq").to_pylist() == [7, 8]
    assert from_arrow_rows(columns, table) == rows
    empty = to_arrow_table(columns, [], {"_seq": (pa.int64(), [])})
    assert empty.num_rows == 0 and empty.schema == table.schema
    assert from_arrow_rows(columns, empty) == []
    assert from_arrow_rows([], table) == [(), ()]


def test_rows_come_from_any_iterable_and_columns_by_name() -> None:
    columns = [Column("Id", "INT"), Column("v", "VARCHAR(3)")]
    table = to_arrow_table(columns, (row for row in [(1, "a"), (2, "b")]))
    shuffled = table.select(["v", "Id"]).rename_columns(["V", "ID"])
    assert from_arrow_rows(columns, shuffled) == [(1, "a"), (2, "b")]
    with pytest.raises(ValueError, match="'w' is not in the table"):
        from_arrow_rows([Column("w", "INT")], table)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([(1, "a"), (2,)], "different widths"),
        ([(1,), (2,)], "1 values for 2 columns"),
        ([(None, "a")], "'id' is NOT NULL"),
        ([(1 << 31, "a")], r"'id' \(INT\)"),
        ([(1, 2.5)], r"'v' \(VARCHAR\(3\)\)"),
    ],
)
def test_bad_rows(rows: list[tuple[object, ...]], message: str) -> None:
    columns = [Column("id", "INT", nullable=False), Column("v", "VARCHAR(3)")]
    with pytest.raises(ValueError, match=message):
        to_arrow_table(columns, rows)


def test_extra_columns_must_have_a_value_per_row() -> None:
    with pytest.raises(ValueError, match="'_seq' has 1 values for 2 rows"):
        to_arrow_table([Column("id", "INT")], [(1,), (2,)], {"_seq": (pa.int64(), [1])})


def test_a_not_null_date_column_takes_zero_dates() -> None:
    columns = [Column("d", "DATETIME", nullable=False)]
    table = to_arrow_table(columns, [(datetime(2020, 1, 1),), ("0000-00-00 00:00:00",)])
    assert table.column("d").to_pylist() == [datetime(2020, 1, 1), None]


# -- properties -------------------------------------------------------------------------------


def _round_trip(mysql: str, values: list[object]) -> None:
    columns = [Column("v", mysql)]
    rows = [(value,) for value in values]
    back = from_arrow_rows(columns, to_arrow_table(columns, rows))
    for (got,), (want,) in zip(back, expected_rows(columns, rows), strict=True):
        assert same(got, want), f"{mysql}: {got!r} != {want!r}"


def _ints(bits: int, unsigned: bool) -> st.SearchStrategy[int]:
    if unsigned:
        return st.integers(0, (1 << bits) - 1)
    return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)


STRATEGIES: dict[str, st.SearchStrategy[Any]] = {
    "TINYINT": _ints(8, False),
    "TINYINT UNSIGNED": _ints(8, True),
    "SMALLINT UNSIGNED": _ints(16, True),
    "MEDIUMINT UNSIGNED": _ints(24, True),
    "INT UNSIGNED": _ints(32, True),
    "BIGINT": _ints(64, False),
    "BIGINT UNSIGNED": _ints(64, True),
    "BIT(64)": _ints(64, True),
    "BIT(7)": _ints(7, True),
    "YEAR": st.just(0) | st.integers(1901, 2155),
    "FLOAT": st.floats(width=32, allow_nan=False),
    "DOUBLE": st.floats(allow_nan=False),
    "DECIMAL(10, 2)": decimals(10, 2),
    "DECIMAL(38, 30)": decimals(38, 30),
    "DECIMAL(65, 30)": decimals(65, 30),
    "DECIMAL(50, 0)": decimals(50, 0),
    "DATE": dates(),
    "DATETIME": datetimes(0),
    "DATETIME(4)": datetimes(4),
    "TIMESTAMP": timestamps(0),
    "TIMESTAMP(6)": timestamps(6),
    "TIME": times(0),
    "TIME(1)": times(1),
    "TIME(6)": times(6),
    "VARCHAR(80)": st.text(max_size=40) | st.binary(max_size=10),
    "ENUM('a')": st.sampled_from(["", "a"]) | st.integers(0, 65535),
    "SET('a', 'b')": st.sampled_from(["", "a", "a,b"]) | st.integers(0, (1 << 64) - 1),
    "JSON": json_texts(),
    "BLOB": st.binary(max_size=40),
    "GEOMETRY": st.builds(Geometry, st.integers(0, (1 << 32) - 1), st.binary(max_size=40)),
    "VECTOR": st.lists(st.floats(width=32, allow_nan=False), max_size=8),
}


@pytest.mark.parametrize("mysql", sorted(STRATEGIES))
@QUICK
@given(data=st.data())
def test_values_round_trip(mysql: str, data: st.DataObject) -> None:
    values = data.draw(st.lists(STRATEGIES[mysql] | st.none(), max_size=6), label="values")
    _round_trip(mysql, values)


def test_from_spark_takes_what_to_pylist_gives() -> None:
    """``from_arrow_rows`` casts some columns first (``read_as``); ``from_spark`` alone still
    takes the values of the uncast column."""
    from zoneinfo import ZoneInfo

    unsigned = spark_type("BIGINT UNSIGNED")
    assert unsigned.read_as == pa.uint64()
    assert _back(unsigned, Decimal("18446744073709551615")) == (1 << 64) - 1
    timestamp = spark_type("TIMESTAMP(6)")
    paris = datetime(2024, 7, 1, 2, 0, tzinfo=ZoneInfo("Europe/Paris"))
    back = _back(timestamp, paris)
    assert isinstance(back, datetime) and back.tzinfo is UTC
    assert back == datetime(2024, 7, 1, 0, 0, tzinfo=UTC)
    assert _back(timestamp, datetime(2024, 7, 1)) == datetime(2024, 7, 1, tzinfo=UTC)


def test_the_documented_mapping_is_the_mapping() -> None:
    """Every concrete MySQL type named in docs/type-mapping.md's table maps as it says."""
    doc = Path(__file__).resolve().parents[4] / "docs" / "type-mapping.md"
    checked = 0
    for line in doc.read_text(encoding="utf-8").splitlines():
        if not line.startswith("| `"):
            continue
        mysql_cell, spark_cell = (cell.strip() for cell in line.strip("|").split("|")[:2])
        documented = spark_cell.strip("`")
        if not documented.isupper():  # DECIMAL(p,s): a pattern, not a type
            continue
        for mysql in re.findall(r"`([^`]+)`", mysql_cell):
            try:
                spark = spark_type(mysql)
            except ValueError:  # FLOAT(p), BIT(n), DATETIME(fsp): patterns
                continue
            assert spark.spark_sql == documented, mysql
            checked += 1
    assert checked >= 40
