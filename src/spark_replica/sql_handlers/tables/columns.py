"""Column and table descriptors for the virtual tables the server answers.

A :class:`Column` records what MySQL's DDL says about one column (name in MySQL's
exact case, SQL type, nullability) plus the :class:`ValueKind` that decides how its
values go on the wire. A :class:`TableDef` is an ordered tuple of columns with
case-insensitive lookup, as MySQL resolves column names.

``sql_type`` strings are the type part of MySQL's DDL in upper case, without
character set, collation, default or comment (``INTEGER`` is spelled ``INT``).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

# What MySQL shows in a TIMESTAMP(6) NOT NULL performance_schema column that has
# never been set.
TIMESTAMP_ZERO = "0000-00-00 00:00:00.000000"


class ValueKind(enum.Enum):
    """How a column's values are typed on the wire."""

    INTEGER = "integer"  # signed integer (also BOOLEAN, i.e. TINYINT(1))
    UNSIGNED = "unsigned"  # unsigned integer
    DECIMAL = "decimal"  # exact fixed-point number
    FLOAT = "float"  # FLOAT / DOUBLE
    STRING = "string"  # CHAR, VARCHAR, TEXT, LONGTEXT, ENUM
    TIMESTAMP = "timestamp"  # TIMESTAMP(n)
    BLOB = "blob"  # binary string


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a virtual table or of a SHOW result set."""

    name: str
    sql_type: str
    nullable: bool
    kind: ValueKind


@dataclass(frozen=True, slots=True)
class TableDef:
    """An ordered set of columns under ``schema.name``."""

    schema: str
    name: str
    columns: tuple[Column, ...]
    comment: str = ""

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for col in self.columns:
            key = col.name.lower()
            if key in seen:
                raise ValueError(f"duplicate column {col.name!r} in {self.schema}.{self.name}")
            seen.add(key)

    def column_names(self) -> list[str]:
        """The column names in table order, in MySQL's case."""
        return [col.name for col in self.columns]

    def column(self, name: str) -> Column:
        """Look a column up by name, ignoring case; ``KeyError`` if there is none."""
        wanted = name.lower()
        for col in self.columns:
            if col.name.lower() == wanted:
                return col
        raise KeyError(f"{self.schema}.{self.name} has no column {name!r}")


_INTEGER_TYPES = frozenset({"TINYINT", "SMALLINT", "MEDIUMINT", "INT", "INTEGER", "BIGINT"})
_STRING_TYPES = frozenset({"CHAR", "VARCHAR", "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT"})
_STRING_PREFIXES = ("ENUM(", "SET(")
_BLOB_TYPES = frozenset({"TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB", "BINARY", "VARBINARY"})
_FLOAT_TYPES = frozenset({"FLOAT", "DOUBLE", "REAL"})
_DECIMAL_TYPES = frozenset({"DECIMAL", "NUMERIC"})
_BASE_RE = re.compile(r"[A-Z]+")


def value_kind_for(sql_type: str) -> ValueKind:
    """The wire kind implied by an upper-case MySQL type such as ``BIGINT UNSIGNED``."""
    if sql_type.startswith(_STRING_PREFIXES):
        return ValueKind.STRING
    match = _BASE_RE.match(sql_type)
    base = match.group(0) if match else ""
    if base in _INTEGER_TYPES:
        return ValueKind.UNSIGNED if sql_type.endswith(" UNSIGNED") else ValueKind.INTEGER
    if base in ("BOOLEAN", "BOOL"):
        return ValueKind.INTEGER
    if base in _STRING_TYPES:
        return ValueKind.STRING
    if base in _BLOB_TYPES:
        return ValueKind.BLOB
    if base in _FLOAT_TYPES:
        return ValueKind.FLOAT
    if base in _DECIMAL_TYPES:
        return ValueKind.DECIMAL
    if base in ("TIMESTAMP", "DATETIME"):
        return ValueKind.TIMESTAMP
    raise ValueError(f"no value kind for SQL type {sql_type!r}")


def col(name: str, sql_type: str, *, null: bool = False) -> Column:
    """A column whose kind follows from its SQL type; NOT NULL unless ``null``."""
    return Column(name, sql_type, null, value_kind_for(sql_type))
