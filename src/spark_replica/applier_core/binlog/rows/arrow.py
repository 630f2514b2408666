"""Arrow (and so Spark) types of MySQL columns (architecture §5).

pyarrow is imported inside these functions only, so decoding rows never needs it.

=========================  ============================  =================================
MySQL                      Arrow                         Spark
=========================  ============================  =================================
TINYINT / UNSIGNED         int8 / int16                  TINYINT / SMALLINT
SMALLINT / UNSIGNED        int16 / int32                 SMALLINT / INT
MEDIUMINT (either)         int32                         INT
INT / UNSIGNED             int32 / int64                 INT / BIGINT
BIGINT / UNSIGNED          int64 / decimal128(20, 0)     BIGINT / DECIMAL(20,0)
DECIMAL(p,s)               decimal128(p,s), p > 38:      DECIMAL(p,s)
                           decimal256
FLOAT / DOUBLE             float32 / float64             FLOAT / DOUBLE
YEAR                       int16                         SMALLINT
BIT(n)                     int64 (n <= 63), else binary  BIGINT / BINARY
DATE                       date32                        DATE
TIME                       duration('us')                INTERVAL DAY TO SECOND
DATETIME                   timestamp('us')               TIMESTAMP_NTZ
TIMESTAMP                  timestamp('us', 'UTC')        TIMESTAMP
CHAR/VARCHAR/TEXT          string (binary when the       STRING
                           character set is binary or
                           not known)
BINARY/VARBINARY/BLOB      binary                        BINARY
ENUM / SET                 string (without member        STRING
                           names: int32 / int64, or
                           decimal128(20,0) for 64
                           members)
JSON                       string                        STRING
GEOMETRY                   binary (WKB)                  BINARY
VECTOR                     list<float32>                 ARRAY<FLOAT>
=========================  ============================  =================================
"""

from __future__ import annotations

from typing import Any

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.rows.charsets import TEXT_CODECS
from spark_replica.applier_core.binlog.rows.columns import ColumnSpec, T
from spark_replica.applier_core.binlog.rows.table_map import TableMapEvent

_SIGNED: dict[int, str] = {
    T.TINY: "int8", T.SHORT: "int16", T.INT24: "int32", T.LONG: "int32", T.LONGLONG: "int64",
}  # fmt: skip
_UNSIGNED: dict[int, str] = {T.TINY: "int16", T.SHORT: "int32", T.INT24: "int32", T.LONG: "int64"}


def arrow_type(spec: ColumnSpec) -> Any:
    """The ``pyarrow.DataType`` a column's values are stored as."""
    import pyarrow as pa

    kind = spec.real_type
    if kind in _SIGNED:
        if spec.unsigned:
            name = _UNSIGNED.get(kind)
            return getattr(pa, name)() if name else pa.decimal128(20, 0)
        return getattr(pa, _SIGNED[kind])()
    if kind == T.NEWDECIMAL:
        precision, scale = spec.precision or 10, spec.scale or 0
        if precision > 38:
            return pa.decimal256(precision, scale)
        return pa.decimal128(precision, scale)
    if kind == T.FLOAT:
        return pa.float64() if spec.pack_length == 8 else pa.float32()
    if kind == T.DOUBLE:
        return pa.float64()
    if kind == T.YEAR:
        return pa.int16()
    if kind == T.BIT:
        return pa.int64() if (spec.bits or 0) <= 63 else pa.binary()
    if kind == T.DATE:
        return pa.date32()
    if kind in (T.TIME, T.TIME2):
        return pa.duration("us")
    if kind in (T.DATETIME, T.DATETIME2):
        return pa.timestamp("us")
    if kind in (T.TIMESTAMP, T.TIMESTAMP2):
        return pa.timestamp("us", tz="UTC")
    if kind in (T.VARCHAR, T.VAR_STRING, T.STRING, T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB,
                T.LONG_BLOB):  # fmt: skip
        return pa.string() if (spec.charset or "") in TEXT_CODECS else pa.binary()
    if kind in (T.ENUM, T.SET):
        if spec.members is not None:
            return pa.string()
        if kind == T.ENUM:
            return pa.int32()
        return pa.decimal128(20, 0) if spec.pack_length == 8 else pa.int64()
    if kind == T.JSON:
        return pa.string()
    if kind == T.GEOMETRY:
        return pa.binary()
    if kind == T.VECTOR:
        return pa.list_(pa.float32())
    if kind == T.NULL:
        return pa.null()
    raise BinlogError(f"{spec.describe()} has no Arrow type")


def arrow_schema(table: TableMapEvent) -> Any:
    """A ``pyarrow.Schema`` for a table: one field per column (named ``@N`` when the event
    carries no column names)."""
    import pyarrow as pa

    return pa.schema(
        [
            pa.field(c.name if c.name is not None else f"@{c.index + 1}", arrow_type(c), c.nullable)
            for c in table.columns
        ]
    )
