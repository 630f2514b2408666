"""Column types as far as values care (``SqlType``): the kind, storage bits, length,
precision and scale, members, fractional digits of a type text read by
``column_types.parse_type``; and which type changes keep every value as it is."""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass, field

from spark_replica.applier_core.storage.column_types import (
    BLOB_LIMITS,
    REALS,
    TEXT_LIMITS,
    MySqlType,
    parse_type,
)


class Kind(enum.Enum):
    INTEGER = "integer"
    DECIMAL = "decimal"
    REAL = "real"
    CHAR = "char"
    VARCHAR = "varchar"
    TEXT = "text"
    BINARY = "binary"
    VARBINARY = "varbinary"
    BLOB = "blob"
    ENUM = "enum"
    SET = "set"
    DATE = "date"
    DATETIME = "datetime"
    TIMESTAMP = "timestamp"
    TIME = "time"
    YEAR = "year"
    OTHER = "other"  # BIT, JSON, spatial types, VECTOR, ...


STRINGS = frozenset({Kind.CHAR, Kind.VARCHAR, Kind.TEXT})
BINARIES = frozenset({Kind.BINARY, Kind.VARBINARY, Kind.BLOB})


@dataclass(frozen=True, slots=True)
class SqlType:
    """A column type as far as values care.

    ``bits``: storage bits of an integer (8..64) or a real (32, 64); ``length``: characters of
    CHAR/VARCHAR, bytes of BINARY/VARBINARY, the byte limit of TEXT/BLOB; ``precision`` and
    ``scale``: DECIMAL's (a FLOAT(M,D)/DOUBLE(M,D) has ``scale`` D, a plain one -1);
    ``members``: ENUM/SET names; ``fsp``: fractional seconds digits; ``other``: the type of an
    OTHER kind, upper case. ``text`` is the type as written and takes no part in comparisons.
    """

    kind: Kind
    unsigned: bool = False
    bits: int = 0
    length: int = 0
    precision: int = 0
    scale: int = 0
    members: tuple[str, ...] = ()
    fsp: int = 0
    other: str = ""
    text: str = field(default="", compare=False)


_INTEGER_BITS = {"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64}
_TEMPORAL = {
    "date": Kind.DATE,
    "datetime": Kind.DATETIME,
    "timestamp": Kind.TIMESTAMP,
    "time": Kind.TIME,
    "year": Kind.YEAR,
}


@functools.lru_cache(maxsize=1024)
def sql_type(text: str) -> SqlType:
    """The ``SqlType`` of a column type as the catalog writes it (``Column.type``), read by
    ``column_types.parse_type``; a text that is no MySQL type is of kind OTHER."""
    try:
        mysql = parse_type(text)
    except ValueError:
        return SqlType(Kind.OTHER, other=text.upper(), text=text)
    name = mysql.name
    if name in _INTEGER_BITS:
        return SqlType(Kind.INTEGER, mysql.unsigned, _INTEGER_BITS[name], text=text)
    if name == "decimal":
        precision, scale = mysql.precision or 10, mysql.scale or 0
        return SqlType(Kind.DECIMAL, mysql.unsigned, precision=precision, scale=scale, text=text)
    if name in REALS:
        # FLOAT(M,D)/DOUBLE(M,D) have ``scale`` D, a plain one -1.
        precision, scale = mysql.precision or 0, -1 if mysql.scale is None else mysql.scale
        bits = 32 if name == "float" else 64
        return SqlType(Kind.REAL, mysql.unsigned, bits, precision=precision, scale=scale, text=text)
    if name in _TEMPORAL:
        return SqlType(_TEMPORAL[name], fsp=mysql.fsp, text=text)
    return _string_type(mysql, text)


def _string_type(mysql: MySqlType, text: str) -> SqlType:
    name, length = mysql.name, mysql.length
    if name in _STRING_KINDS and length is not None:
        return SqlType(_STRING_KINDS[name], text=text, length=length)
    if name in TEXT_LIMITS:
        return SqlType(Kind.TEXT, text=text, length=TEXT_LIMITS[name])
    if name in BLOB_LIMITS:
        return SqlType(Kind.BLOB, text=text, length=BLOB_LIMITS[name])
    if name in ("enum", "set"):
        kind = Kind.ENUM if name == "enum" else Kind.SET
        return SqlType(kind, text=text, members=mysql.values)
    # BIT, JSON, spatial types, VECTOR; and VARCHAR/VARBINARY without a length.
    other = mysql.column_type().upper() + (f" SRID {mysql.srid}" if mysql.srid is not None else "")
    return SqlType(Kind.OTHER, other=other, text=text)


_STRING_KINDS = {
    "char": Kind.CHAR,
    "varchar": Kind.VARCHAR,
    "binary": Kind.BINARY,
    "varbinary": Kind.VARBINARY,
}


def needs_copy(old: SqlType, new: SqlType) -> bool:
    """Whether MySQL rebuilds the table by copying rows for this type change (the in-place
    changes: none, a longer VARCHAR, ENUM/SET members added at the end). It decides the
    error MySQL gives for a NULL left in a column made NOT NULL."""
    if old == new:
        return False
    if old.kind is new.kind and old.kind in (Kind.VARCHAR, Kind.ENUM, Kind.SET):
        return not keeps_values(old, new)
    return True


def keeps_values(old: SqlType, new: SqlType) -> bool:
    """Whether every value of type ``old`` is the same value of type ``new`` (the same type,
    or a wider one of its kind), so rows need no conversion."""
    if old == new:
        return True
    if old.kind is Kind.INTEGER and new.kind is Kind.INTEGER:
        if old.unsigned == new.unsigned:
            return new.bits >= old.bits
        return old.unsigned and new.bits > old.bits
    if old.kind is Kind.DECIMAL and new.kind is Kind.DECIMAL:
        wider = new.precision - new.scale >= old.precision - old.scale
        return wider and new.scale == old.scale and old.unsigned >= new.unsigned
    if old.kind is Kind.REAL and new.kind is Kind.REAL:
        plain = old.scale < 0 and new.scale < 0 and old.unsigned >= new.unsigned
        return plain and new.bits >= old.bits
    if (old.kind, new.kind) in _WIDENING:
        return new.length >= old.length
    if old.kind is new.kind and old.kind in (Kind.ENUM, Kind.SET):
        return new.members[: len(old.members)] == old.members
    return old.kind is Kind.TIME and new.kind is Kind.TIME and new.fsp >= old.fsp


#: Kind changes where a value stays the same when it fits (``length`` compared).
_WIDENING = frozenset(
    {
        (Kind.CHAR, Kind.CHAR),
        (Kind.CHAR, Kind.VARCHAR),
        (Kind.VARCHAR, Kind.VARCHAR),
        (Kind.TEXT, Kind.TEXT),
        (Kind.VARBINARY, Kind.VARBINARY),
        (Kind.BLOB, Kind.BLOB),
    }
)


def key_prefix_after(prefix: int, new_type: str) -> int:
    """A key part's prefix length after its column's type changed: MySQL keys the whole
    value when the new type takes no prefix or is shorter than the prefix."""
    target = sql_type(new_type)
    if prefix == 0 or target.kind not in STRINGS | BINARIES:
        return 0
    if target.kind in (Kind.TEXT, Kind.BLOB):
        return prefix
    return 0 if target.length < prefix else prefix
