"""Tables the workload generator writes to, and random values for each column type.

Two schemas: sysbench's ``sbtest`` (id, k, c, pad) and ``alltypes``, one column of every
MySQL type the row codec handles. Values are the codec's Python value model (ints, Decimal,
float, date/time objects, str, bytes, ``Geometry``, lists of floats), chosen so that they
survive an exact round trip (FLOAT and VECTOR values are exact float32 numbers).
"""

from __future__ import annotations

import random
import string
import struct
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from spark_replica.applier_core.binlog.constants import ColumnType
from spark_replica.applier_core.binlog.rows.values import Geometry

Value = object
Row = tuple[Value, ...]

_WKB_POINT = struct.Struct("<BIdd")  # byte order, geometry type, x, y
_WKB_LITTLE_ENDIAN = 1
_WKB_POINT_TYPE = 1


@dataclass(frozen=True, slots=True)
class ColumnDef:
    """One column: its SQL type (as DDL writes it) and how the binlog carries it."""

    name: str
    sql_type: str
    column_type: ColumnType
    nullable: bool = True
    unsigned: bool = False
    #: Type parameters the Table_map metadata carries (length, precision/scale, fsp, ...).
    params: tuple[int, ...] = ()
    #: ENUM/SET member names.
    members: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TableDef:
    schema: str
    name: str
    columns: tuple[ColumnDef, ...]
    #: The key's column indexes; empty for a table without a primary key (a multiset of whole
    #: rows on a replica; the generator still keeps column 0 unique to track its rows).
    primary_key: tuple[int, ...] = (0,)

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}"

    def create_statement(self) -> str:
        cols = [f"`{c.name}` {c.sql_type}{'' if c.nullable else ' NOT NULL'}" for c in self.columns]
        if self.primary_key:
            key = ", ".join(f"`{self.columns[i].name}`" for i in self.primary_key)
            cols.append(f"PRIMARY KEY ({key})")
        return f"CREATE TABLE `{self.schema}`.`{self.name}` (\n  " + ",\n  ".join(cols) + "\n)"

    @property
    def keyless(self) -> bool:
        """No primary key: MySQL's WRITESET tracking has no key to hash for its rows."""
        return not self.primary_key

    def without_primary_key(self) -> TableDef:
        return TableDef(self.schema, self.name, self.columns, ())

    def with_column(self, column: ColumnDef) -> TableDef:
        return TableDef(self.schema, self.name, (*self.columns, column), self.primary_key)


def _col(name: str, sql: str, ctype: ColumnType, *params: int, **kw: object) -> ColumnDef:
    return ColumnDef(name, sql, ctype, params=tuple(params), **kw)  # type: ignore[arg-type]


def sbtest_table(schema: str, index: int) -> TableDef:
    return TableDef(
        schema,
        f"sbtest{index}",
        (
            _col("id", "INT", ColumnType.LONG, nullable=False),
            _col("k", "INT", ColumnType.LONG, nullable=False),
            _col("c", "CHAR(120)", ColumnType.STRING, 120, nullable=False),
            _col("pad", "CHAR(60)", ColumnType.STRING, 60, nullable=False),
        ),
    )


def alltypes_table(schema: str, index: int) -> TableDef:
    c = ColumnType
    return TableDef(
        schema,
        f"alltypes{index}",
        (
            _col("id", "BIGINT", c.LONGLONG, nullable=False),
            _col("t_tiny", "TINYINT", c.TINY),
            _col("t_utiny", "TINYINT UNSIGNED", c.TINY, unsigned=True),
            _col("t_small", "SMALLINT", c.SHORT),
            _col("t_medium", "MEDIUMINT", c.INT24),
            _col("t_uint", "INT UNSIGNED", c.LONG, unsigned=True),
            _col("t_ubig", "BIGINT UNSIGNED", c.LONGLONG, unsigned=True),
            _col("t_decimal", "DECIMAL(12,3)", c.NEWDECIMAL, 12, 3),
            _col("t_float", "FLOAT", c.FLOAT, 4),
            _col("t_double", "DOUBLE", c.DOUBLE, 8),
            _col("t_bit", "BIT(12)", c.BIT, 12),
            _col("t_year", "YEAR", c.YEAR),
            _col("t_date", "DATE", c.DATE),
            _col("t_time", "TIME(6)", c.TIME2, 6),
            _col("t_datetime", "DATETIME(6)", c.DATETIME2, 6),
            _col("t_timestamp", "TIMESTAMP(3)", c.TIMESTAMP2, 3),
            _col("t_char", "CHAR(10)", c.STRING, 40),
            _col("t_varchar", "VARCHAR(64)", c.VARCHAR, 256),
            _col("t_binary", "BINARY(4)", c.STRING, 4),
            _col("t_varbinary", "VARBINARY(16)", c.VARCHAR, 16),
            _col("t_text", "TEXT", c.BLOB, 2),
            _col("t_blob", "BLOB", c.BLOB, 2),
            _col("t_enum", "ENUM('new','paid','shipped')", c.STRING, 1,
                 members=("new", "paid", "shipped")),
            _col("t_set", "SET('a','b','c')", c.STRING, 1, members=("a", "b", "c")),
            _col("t_json", "JSON", c.JSON, 4),
            _col("t_geometry", "GEOMETRY", c.GEOMETRY, 4),
            _col("t_vector", "VECTOR(4)", c.VECTOR, 4),
        ),
    )  # fmt: skip


TABLE_FACTORIES: dict[str, Callable[[str, int], TableDef]] = {
    "sbtest": sbtest_table,
    "alltypes": alltypes_table,
}


def _text(rng: random.Random, size: int) -> str:
    return "".join(rng.choices(string.ascii_letters + string.digits + "-", k=size))


def random_value(rng: random.Random, column: ColumnDef) -> Value:
    """A random non-key value for ``column`` (sometimes NULL when the column allows it)."""
    if column.nullable and rng.random() < 0.05:
        return None
    return _GENERATORS[column.sql_type.split("(")[0].split(" ")[0]](rng, column)


def _int_range(column: ColumnDef) -> tuple[int, int]:
    bits = {
        ColumnType.TINY: 8,
        ColumnType.SHORT: 16,
        ColumnType.INT24: 24,
        ColumnType.LONG: 32,
        ColumnType.LONGLONG: 64,
    }[column.column_type]
    if column.unsigned:
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def _integer(rng: random.Random, column: ColumnDef) -> Value:
    low, high = _int_range(column)
    return rng.randint(low, high)


def _char(rng: random.Random, column: ColumnDef) -> Value:
    size = int(column.sql_type.split("(")[1].rstrip(")"))
    if column.sql_type.startswith(("BINARY", "VARBINARY")):
        # BINARY pads with zero bytes; keep values full length so they round-trip unchanged.
        length = size if column.sql_type.startswith("BINARY") else rng.randint(0, size)
        # Trailing zero bytes are BINARY's padding; end on a non-zero byte so values round-trip.
        return (
            bytes(rng.getrandbits(8) for _ in range(length - 1)) + bytes((rng.randint(1, 255),))
            if length
            else b""
        )
    if column.name == "c" or column.name == "pad":  # sbtest fills its CHAR columns
        return _text(rng, size)
    return _text(rng, rng.randint(0, size)).rstrip(" ")


def _decimal(rng: random.Random, column: ColumnDef) -> Value:
    precision, scale = column.params
    digits = rng.randint(0, 10 ** (precision - scale) - 1)
    frac = rng.randint(0, 10**scale - 1)
    sign = "-" if rng.random() < 0.3 else ""
    return Decimal(f"{sign}{digits}.{frac:0{scale}d}")


def _point(rng: random.Random) -> Geometry:
    """A POINT in WGS 84 (SRID 4326) or without a spatial reference (SRID 0), as WKB."""
    x, y = rng.uniform(-180, 180), rng.uniform(-90, 90)
    return Geometry(
        rng.choice((0, 4326)), _WKB_POINT.pack(_WKB_LITTLE_ENDIAN, _WKB_POINT_TYPE, x, y)
    )


def _datetime(rng: random.Random, column: ColumnDef) -> Value:
    seconds = rng.randint(0, 2_000_000_000)
    fsp = column.params[0] if column.params else 0
    micro = rng.randint(0, 999_999) // 10 ** (6 - fsp) * 10 ** (6 - fsp)
    moment = datetime(1970, 1, 1) + timedelta(seconds=seconds, microseconds=micro)
    if column.column_type is ColumnType.TIMESTAMP2:
        return moment.replace(tzinfo=UTC) if seconds else moment.replace(second=1, tzinfo=UTC)
    return moment


_GENERATORS: dict[str, Callable[[random.Random, ColumnDef], Value]] = {
    "TINYINT": _integer,
    "SMALLINT": _integer,
    "MEDIUMINT": _integer,
    "INT": _integer,
    "BIGINT": _integer,
    "DECIMAL": _decimal,
    "FLOAT": lambda rng, c: rng.randint(-(1 << 20), 1 << 20) / 4.0,
    "DOUBLE": lambda rng, c: rng.uniform(-1e9, 1e9),
    "BIT": lambda rng, c: rng.getrandbits(c.params[0]),
    "YEAR": lambda rng, c: rng.randint(1901, 2155),
    "DATE": lambda rng, c: date(1000, 1, 1) + timedelta(days=rng.randint(0, 3_000_000)),
    "TIME": lambda rng, c: timedelta(
        hours=rng.randint(-838, 838),
        minutes=rng.randint(0, 59),
        microseconds=rng.randint(0, 999_999),
    ),
    "DATETIME": _datetime,
    "TIMESTAMP": _datetime,
    "CHAR": _char,
    "VARCHAR": _char,
    "BINARY": _char,
    "VARBINARY": _char,
    "TEXT": lambda rng, c: _text(rng, rng.randint(0, 300)),
    "BLOB": lambda rng, c: bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 300))),
    "ENUM": lambda rng, c: rng.choice(c.members),
    "SET": lambda rng, c: ",".join(m for m in c.members if rng.random() < 0.5),
    # Keys in MySQL's stored order (by length, then bytes), so the text round-trips exactly.
    "GEOMETRY": lambda rng, c: _point(rng),
    # float32-exact components, so the values round-trip unchanged.
    "VECTOR": lambda rng, c: [rng.randint(-(1 << 20), 1 << 20) / 8.0 for _ in range(4)],
    "JSON": lambda rng, c: (
        f'{{"id": {rng.randint(0, 10**6)}, "ok": {"true" if rng.random() < 0.5 else "false"}, '
        f'"tags": ["{_text(rng, 5)}", "{_text(rng, 3)}"]}}'
    ),
}
