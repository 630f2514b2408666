"""MySQL column types in Spark: the Spark SQL type, the Arrow type, and the value conversions.

The Spark engine keeps a replicated table as Spark SQL data (docs/type-mapping.md). Rows go to
Spark as a ``pyarrow.Table`` (``to_arrow_table``, then ``spark.createDataFrame(table,
schema=spark_schema(...))``) and come back from ``DataFrame.toArrow()`` (``from_arrow_rows``).
The engine compares what it reads back with what the binlog decoder produces (its key index is
rebuilt from Spark after a restart), so the conversions are exact round trips for every value
the decoder can produce, except the few documented lossy cases:

* zero and invalid dates (``'0000-00-00'``, ``'2021-04-31 10:00:00'``, the zero TIMESTAMP),
  which Spark's date types cannot hold, become NULL; such columns are nullable in Spark even
  when the MySQL column is NOT NULL;
* text in a character set the decoder leaves as ``bytes`` becomes UTF-8 text (invalid bytes
  replaced by U+FFFD), since a Spark STRING holds only valid UTF-8;
* ENUM and SET values without member names (the decoder's integers) become the text of the
  number.

Some values are exact but typed differently, where Spark has no type for them: DECIMAL above
38 digits and TIME are text, BIGINT UNSIGNED is DECIMAL(20,0), BIT(64) keeps its 64 bits in a
BIGINT (negative from 2**63), spatial values are MySQL's internal bytes.

The type text is ``Column.type``: sqlglot's MySQL rendering of the column definition
(``'INT UNSIGNED'``, ``'DECIMAL(10, 2)'``, ``"ENUM('x', 'y')"``), read by
``column_types.parse_type`` with MySQL's synonyms (``INTEGER``, ``INT8``, ``DEC``, ``DOUBLE
PRECISION``, ``NCHAR``, ...).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from types import MappingProxyType
from typing import Any

import pyarrow as pa

from spark_replica.applier_core.binlog.rows import Geometry
from spark_replica.applier_core.storage.column_types import (
    BINARIES,
    REALS,
    SPATIALS,
    STRINGS,
    MySqlType,
    parse_type,
)
from spark_replica.applier_core.storage.interface import Column

Convert = Callable[[object], object]


@dataclass(frozen=True, slots=True)
class SparkType:
    """How a MySQL column type is kept in Spark.

    ``to_spark`` turns an engine value into one pyarrow accepts for ``arrow``; ``from_spark``
    turns the value ``Table.to_pylist()`` gives back (after a trip through Spark) into the
    engine value again. Neither is called with None (NULL stays NULL); None means identity.
    """

    #: The MySQL type text it was made from.
    mysql: str
    #: The Spark SQL type text, as DDL takes it: ``BIGINT``, ``DECIMAL(20,0)``, ``STRING``.
    spark_sql: str
    #: The Arrow type of the column in the table handed to ``spark.createDataFrame``.
    arrow: pa.DataType
    to_spark: Convert | None
    from_spark: Convert | None
    #: pyarrow takes the engine's usual values for this type as they are; ``to_spark`` is
    #: needed only for rare ones (a zero date, ``bytes`` in a text column), so
    #: ``to_arrow_table`` first tries a column unconverted, which costs no Python per value.
    direct: bool = False
    #: ``to_spark`` turns some non-NULL values (zero and invalid dates) into NULL: the Spark
    #: column is nullable whatever the MySQL column says.
    zero_as_null: bool = False
    #: ``from_arrow_rows`` casts a column read back to this Arrow type before making Python
    #: values of it (``from_spark`` takes those too): Arrow makes ``int`` of a DECIMAL(20,0)
    #: and naive datetimes of UTC timestamps far faster than Python converts them.
    read_as: pa.DataType | None = None


# -- conversions ------------------------------------------------------------------------------

_MICRO = timedelta(microseconds=1)
_TWO_64 = 1 << 64
_TWO_63 = 1 << 63
_TIME_TEXT = re.compile(r"(-?)(\d+):(\d{2}):(\d{2})(?:\.(\d{1,6}))?\Z")


def _text(value: object) -> object:
    """Text for a STRING column: ``bytes`` of an unknown character set decoded as UTF-8 (a
    Spark STRING must be valid UTF-8, so undecodable bytes become U+FFFD), the ENUM index or
    SET bitmap that the decoder gives without member names as the number's text."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise TypeError(f"{value!r} is not text")


def _binary(value: object) -> object:
    if isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    raise TypeError(f"{value!r} is not bytes")


def _null_if_text(value: object) -> object:
    """The decoder gives zero and invalid dates as MySQL's text; Spark has no such dates."""
    return None if isinstance(value, str) else value


def _utc(value: object) -> object:
    """The decoder's TIMESTAMP values are in ``datetime.UTC``; pyarrow gives them back in a
    ``zoneinfo`` zone, or naive in UTC after ``read_as``. Equal either way, but the engine's
    values are kept uniform."""
    if not isinstance(value, datetime):
        raise TypeError(f"{value!r} is not a datetime")
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _bit64_to_spark(value: object) -> object:
    """BIT(64) values above 2**63 - 1 keep their 64 bits in a BIGINT (two's complement)."""
    if isinstance(value, int) and value >= _TWO_63:
        return value - _TWO_64
    return value


def _bit64_from_spark(value: object) -> object:
    if isinstance(value, int) and value < 0:
        return value + _TWO_64
    return value


def _integer(value: object) -> object:
    """A DECIMAL(20,0) read back as the BIGINT UNSIGNED ``int`` it holds."""
    if isinstance(value, int):
        return value
    if not isinstance(value, Decimal):
        raise TypeError(f"{value!r} is not a Decimal")
    return int(value)


def _decimal_text(value: object) -> object:
    """Plain notation (never an exponent): the text a client sees, and ``Decimal(text)``
    gives back the value with the same scale."""
    if not isinstance(value, Decimal | int):
        raise TypeError(f"{value!r} is not a Decimal")
    return format(Decimal(value), "f")


def _decimal(value: object) -> object:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not DECIMAL text")
    return Decimal(value)


def time_text(value: timedelta, fsp: int) -> str:
    """MySQL's text of a TIME value: ``[-]hh:mm:ss`` (at least two hour digits) and ``fsp``
    fraction digits, or all six when the value has finer fractions than the column."""
    total = value // _MICRO
    sign = "-" if total < 0 else ""
    seconds, micro = divmod(abs(total), 1_000_000)
    hours, rest = divmod(seconds, 3600)
    text = f"{sign}{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
    digits = fsp if micro % 10 ** (6 - fsp) == 0 else 6
    if digits:
        text += f".{micro:06d}"[: digits + 1]
    return text


def parse_time(text: str) -> timedelta:
    """The ``timedelta`` of TIME text as ``time_text`` writes it."""
    match = _TIME_TEXT.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not TIME text")
    sign, hours, minutes, seconds, fraction = match.groups()
    total = ((int(hours) * 60 + int(minutes)) * 60 + int(seconds)) * 1_000_000
    total += int((fraction or "").ljust(6, "0"))
    return timedelta(microseconds=-total if sign else total)


def _time_writer(fsp: int) -> Convert:
    def to_spark(value: object) -> object:
        if not isinstance(value, timedelta):
            raise TypeError(f"{value!r} is not a timedelta")
        return time_text(value, fsp)

    return to_spark


def _time_reader(value: object) -> object:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not TIME text")
    return parse_time(value)


def _geometry_bytes(value: object) -> object:
    """MySQL's internal form: the SRID (4 bytes, little-endian), then the WKB."""
    if isinstance(value, Geometry):
        return value.srid.to_bytes(4, "little") + bytes(value.wkb)
    return _binary(value)


def _geometry(value: object) -> object:
    if not isinstance(value, bytes) or len(value) < 4:
        raise ValueError(f"{value!r} is not a SRID and WKB")
    return Geometry(int.from_bytes(value[:4], "little"), value[4:])


# -- the mapping ------------------------------------------------------------------------------

_INT = {
    # name: (signed, unsigned) Spark types; the unsigned one holds the whole unsigned range.
    "tinyint": ("TINYINT", "SMALLINT"),
    "smallint": ("SMALLINT", "INT"),
    "mediumint": ("INT", "INT"),
    "int": ("INT", "BIGINT"),
    "bigint": ("BIGINT", "DECIMAL(20,0)"),
}
#: Spark's largest DECIMAL precision; MySQL's is 65.
SPARK_MAX_PRECISION = 38

_ARROW_OF: Mapping[str, pa.DataType] = {
    "TINYINT": pa.int8(),
    "SMALLINT": pa.int16(),
    "INT": pa.int32(),
    "BIGINT": pa.int64(),
    "FLOAT": pa.float32(),
    "DOUBLE": pa.float64(),
    "STRING": pa.string(),
    "BINARY": pa.binary(),
    "DATE": pa.date32(),
    "TIMESTAMP": pa.timestamp("us", tz="UTC"),
    "TIMESTAMP_NTZ": pa.timestamp("us"),
}


@functools.cache
def spark_type(mysql_type: str) -> SparkType:
    """The Spark form of a MySQL column type.

    Raises:
        ValueError: the text is not a MySQL type, or its arguments are out of MySQL's range.
    """
    return _build(mysql_type, parse_type(mysql_type))


def _plain(
    mysql: str,
    spark_sql: str,
    to_spark: Convert | None = None,
    from_spark: Convert | None = None,
    *,
    direct: bool = False,
    zero_as_null: bool = False,
) -> SparkType:
    arrow = _ARROW_OF[spark_sql]
    return SparkType(mysql, spark_sql, arrow, to_spark, from_spark, direct, zero_as_null)


def _build(text: str, mysql: MySqlType) -> SparkType:
    name = mysql.name
    if name in _INT:
        spark_sql = _INT[name][1 if mysql.unsigned else 0]
        if spark_sql.startswith("DECIMAL"):
            arrow = pa.decimal128(20, 0)
            return SparkType(text, spark_sql, arrow, None, _integer, read_as=pa.uint64())
        return _plain(text, spark_sql)
    if name == "decimal":
        return _decimal_type(text, mysql)
    if name in REALS:
        return _plain(text, name.upper())
    if name == "bit":
        if mysql.length == 64:
            return _plain(text, "BIGINT", _bit64_to_spark, _bit64_from_spark)
        return _plain(text, "BIGINT")
    if name == "year":
        return _plain(text, "SMALLINT")
    return _temporal_or_string(text, mysql)


def _temporal_or_string(text: str, mysql: MySqlType) -> SparkType:
    name = mysql.name
    if name == "date":
        return _plain(text, "DATE", _null_if_text, direct=True, zero_as_null=True)
    if name == "time":
        return _plain(text, "STRING", _time_writer(mysql.fsp), _time_reader)
    if name == "datetime":
        return _plain(text, "TIMESTAMP_NTZ", _null_if_text, direct=True, zero_as_null=True)
    if name == "timestamp":
        spark = _plain(text, "TIMESTAMP", _null_if_text, _utc, direct=True, zero_as_null=True)
        return replace(spark, read_as=_ARROW_OF["TIMESTAMP_NTZ"])
    if name in STRINGS or name == "json":
        return _plain(text, "STRING", _text, direct=True)
    if name in BINARIES:
        return _plain(text, "BINARY", _binary, direct=True)
    if name in SPATIALS:
        return _plain(text, "BINARY", _geometry_bytes, _geometry)
    if name == "vector":
        return SparkType(text, "ARRAY<FLOAT>", pa.list_(pa.float32()), None, None)
    raise ValueError(f"MySQL type {text!r}: no Spark type for {name}")


def _decimal_type(text: str, mysql: MySqlType) -> SparkType:
    precision, scale = mysql.precision or 10, mysql.scale or 0
    if precision > SPARK_MAX_PRECISION:
        return _plain(text, "STRING", _decimal_text, _decimal)
    arrow = pa.decimal128(precision, scale)
    return SparkType(text, f"DECIMAL({precision},{scale})", arrow, None, None)


# -- schemas and tables -----------------------------------------------------------------------


def nullable(column: Column, spark: SparkType) -> bool:
    """Whether the Spark column is nullable: the MySQL column is, or zero dates become NULL."""
    return column.nullable or spark.zero_as_null


def arrow_schema(columns: Sequence[Column], extra: Sequence[pa.Field] = ()) -> pa.Schema:
    """The Arrow schema of a table's columns (nullable as the columns are, and always for
    date columns, whose zero dates become NULL), then the ``extra`` fields."""
    fields = []
    for column in columns:
        spark = spark_type(column.type)
        fields.append(pa.field(column.name, spark.arrow, nullable=nullable(column, spark)))
    return pa.schema([*fields, *extra])


def spark_schema(columns: Sequence[Column], extra: Sequence[pa.Field] = ()) -> Any:
    """The ``pyspark.sql.types.StructType`` to hand ``spark.createDataFrame`` with a table of
    ``to_arrow_table``. Without it Spark makes every Arrow timestamp a TIMESTAMP, and DATETIME
    columns must be TIMESTAMP_NTZ."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(arrow_schema(columns, extra), prefer_timestamp_ntz=True)


def quote_name(name: str) -> str:
    """A Spark SQL identifier: backquoted, inner backquotes doubled."""
    return "`" + name.replace("`", "``") + "`"


def string_text(text: str) -> str:
    """``text`` as it goes between the quotes of a Spark SQL string literal."""
    return text.replace("\\", "\\\\").replace("'", "\\'")


def spark_columns_ddl(columns: Sequence[Column]) -> str:
    """The column list of a Spark ``CREATE TABLE``: ```id` BIGINT NOT NULL, `v` STRING``."""
    parts = []
    for column in columns:
        spark = spark_type(column.type)
        null = "" if nullable(column, spark) else " NOT NULL"
        parts.append(f"{quote_name(column.name)} {spark.spark_sql}{null}")
    return ", ".join(parts)


_ARROW_ERRORS = (pa.ArrowException, OverflowError, TypeError, ValueError)
_NO_EXTRA: Mapping[str, tuple[pa.DataType, Sequence[object]]] = MappingProxyType({})


def to_arrow_table(
    columns: Sequence[Column],
    rows: Iterable[Sequence[object]],
    extra: Mapping[str, tuple[pa.DataType, Sequence[object]]] = _NO_EXTRA,
) -> pa.Table:
    """A ``pyarrow.Table`` of engine rows (values in column order), then the ``extra``
    columns (name → (type, values), nullable).

    Built column by column: the rows are transposed in C (``zip``), and a column whose values
    pyarrow takes as they are is converted by pyarrow alone.

    Raises:
        ValueError: a row's width is not the number of columns, a value does not fit its
            column, or a NOT NULL column holds NULL.
    """
    try:
        values = list(zip(*rows, strict=True))
    except ValueError:
        raise ValueError("rows of different widths") from None
    if values and len(values) != len(columns):
        raise ValueError(f"rows of {len(values)} values for {len(columns)} columns")
    count = len(values[0]) if values else 0
    arrays = []
    for index, column in enumerate(columns):
        spark = spark_type(column.type)
        array = _array(column, spark, values[index] if values else ())
        if array.null_count and not nullable(column, spark):
            raise ValueError(f"column {column.name!r} is NOT NULL but a value is NULL")
        arrays.append(array)
    fields = []
    for name, (kind, data) in extra.items():
        if len(data) != count:
            raise ValueError(f"extra column {name!r} has {len(data)} values for {count} rows")
        arrays.append(pa.array(data, type=kind))
        fields.append(pa.field(name, kind))
    return pa.Table.from_arrays(arrays, schema=arrow_schema(columns, fields))


def _array(column: Column, spark: SparkType, values: Sequence[object]) -> pa.Array:
    convert = spark.to_spark
    try:
        if convert is None:
            return pa.array(values, type=spark.arrow)
        if spark.direct:
            try:
                return pa.array(values, type=spark.arrow)
            except _ARROW_ERRORS:
                pass  # a value pyarrow does not take as it is: convert them all
        return pa.array([None if v is None else convert(v) for v in values], type=spark.arrow)
    except _ARROW_ERRORS as exc:
        raise ValueError(f"column {column.name!r} ({column.type}): {exc}") from exc


def from_arrow_rows(columns: Sequence[Column], table: pa.Table) -> list[tuple[object, ...]]:
    """Engine rows (tuples in ``columns`` order) of a table read back from Spark.

    Columns are found by name (exactly, else case-insensitively, as Spark and MySQL compare
    them); other columns of ``table`` are ignored.
    """
    names = table.column_names
    folded = {name.casefold(): index for index, name in enumerate(names)}
    exact = {name: index for index, name in enumerate(names)}
    data: list[list[object]] = []
    for column in columns:
        index = exact.get(column.name, folded.get(column.name.casefold()))
        if index is None:
            raise ValueError(f"column {column.name!r} is not in the table")
        spark = spark_type(column.type)
        values = _python_values(table.column(index), spark)
        convert = spark.from_spark
        if convert is not None:
            values = [None if v is None else convert(v) for v in values]
        data.append(values)
    if not data:
        return [() for _ in range(table.num_rows)]
    return list(zip(*data, strict=True))


#: Arrow types whose Python values numpy makes an order of magnitude faster than pyarrow.
_VIA_NUMPY = (pa.date32(), pa.timestamp("us"))


def _python_values(array: pa.ChunkedArray, spark: SparkType) -> list[object]:
    if spark.read_as is not None and array.type != spark.read_as:
        array = array.cast(spark.read_as)
    values: list[object]
    if array.type in _VIA_NUMPY:  # NULL (NaT) becomes None
        values = array.to_numpy(zero_copy_only=False).astype(object).tolist()
    else:
        values = array.to_pylist()
    return values
