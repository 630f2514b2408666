"""MySQL 8.4's view of a replicated column's type: its ``COLUMN_TYPE`` text and metadata.

A replicated table's columns carry the type text of the replicated CREATE TABLE as the DDL
parser rendered it (``INT UNSIGNED``, ``DECIMAL(10, 2)``, ``ENUM('a', 'b')``). SHOW COLUMNS,
SHOW CREATE TABLE and ``information_schema.COLUMNS`` show what MySQL stores instead: the
canonical lower-case type (``int unsigned``, ``decimal(10,2)``, ``enum('a','b')``) with
defaults filled in and integer display widths dropped (MySQL 8.0.19+ keeps only
``tinyint(1)``), plus DATA_TYPE, lengths, precision and scale as ``information_schema``
reports them. The type text is read by ``column_types.parse_type`` (MySQL's synonyms
resolved: ``INT8`` is ``bigint``, ``NCHAR`` a utf8mb3 ``char``). A string column is shown in
its own collation (``column_info``), else the character set its type names, else utf8mb4.
https://dev.mysql.com/doc/refman/8.4/en/information-schema-columns-table.html
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from spark_replica.applier_core.storage import Column
from spark_replica.applier_core.storage.collations import SERVER_DEFAULTS, charset_of, max_bytes
from spark_replica.applier_core.storage.column_types import (
    BLOB_LIMITS,
    REALS,
    SPATIALS,
    STRINGS,
    TEXT_LIMITS,
    MySqlType,
    parse_type,
)

CHARSET = "utf8mb4"
COLLATION = "utf8mb4_0900_ai_ci"

#: NUMERIC_PRECISION of the integer types: (signed, unsigned).
_INTEGERS = {
    "tinyint": (3, 3),
    "smallint": (5, 5),
    "mediumint": (7, 8),
    "int": (10, 10),
    "bigint": (19, 20),
}
#: Byte lengths of the TEXT and BLOB types.
_LOBS = {**TEXT_LIMITS, **BLOB_LIMITS}
#: Types that take no literal DEFAULT, so SHOW CREATE TABLE prints no ``DEFAULT NULL``.
_NO_DEFAULT = frozenset({*_LOBS, "json", *SPATIALS})


@dataclass(frozen=True, slots=True)
class TypeInfo:
    """A column type as ``information_schema.COLUMNS`` describes it."""

    column_type: str
    data_type: str
    character_maximum_length: int | None = None
    character_octet_length: int | None = None
    numeric_precision: int | None = None
    numeric_scale: int | None = None
    datetime_precision: int | None = None
    character_set_name: str | None = None
    collation_name: str | None = None

    @property
    def takes_default(self) -> bool:
        """False for BLOB, TEXT, JSON and spatial types (no ``DEFAULT NULL`` shown)."""
        return self.data_type not in _NO_DEFAULT


def column_info(column: Column) -> TypeInfo:
    """``type_info`` of the column's type with its own character set and collation (those
    of ``type_info`` when the catalog has none)."""
    info = type_info(column.type)
    if not column.collation or info.character_set_name is None:
        return info
    charset = charset_of(column.collation)
    octets = info.character_octet_length
    if info.data_type not in _LOBS and info.character_maximum_length is not None:
        octets = info.character_maximum_length * max_bytes(charset)
    return replace(
        info,
        character_set_name=charset,
        collation_name=column.collation,
        character_octet_length=octets,
    )


@lru_cache(maxsize=4096)
def type_info(type_text: str) -> TypeInfo:
    """MySQL's description of the column type written ``type_text`` (cached: catalogs repeat
    a few types over many columns); text that is no MySQL type is shown as written, in lower
    case.

    >>> type_info("DECIMAL(10, 2) UNSIGNED").column_type
    'decimal(10,2) unsigned'
    >>> type_info("INT(11)").column_type, type_info("TINYINT(1)").column_type
    ('int', 'tinyint(1)')
    """
    try:
        mysql = parse_type(type_text)
    except ValueError:
        written = type_text.strip().lower()
        return TypeInfo(written, written.split("(", 1)[0].split(" ", 1)[0])
    return _described(mysql)


def _described(mysql: MySqlType) -> TypeInfo:
    name, column_type = mysql.name, mysql.column_type()
    if name in _INTEGERS:
        signed, positive = _INTEGERS[name]
        precision = positive if mysql.unsigned else signed
        return TypeInfo(column_type, name, numeric_precision=precision, numeric_scale=0)
    if name == "decimal" or (name in REALS and mysql.precision is not None):
        return TypeInfo(
            column_type, name, numeric_precision=mysql.precision, numeric_scale=mysql.scale
        )
    if name in REALS:
        return TypeInfo(column_type, name, numeric_precision=12 if name == "float" else 22)
    if name == "bit":
        return TypeInfo(column_type, name, numeric_precision=mysql.length)
    if name in ("datetime", "timestamp", "time"):
        return TypeInfo(column_type, name, datetime_precision=mysql.fsp)
    if name in ("binary", "varbinary") or name in BLOB_LIMITS:
        length = mysql.length if mysql.length is not None else _LOBS.get(name, 1)
        return TypeInfo(column_type, name, length, length)
    if name in STRINGS:
        return _text(mysql, column_type)
    return TypeInfo(column_type, name)


def _text(mysql: MySqlType, column_type: str) -> TypeInfo:
    """A type with a character set: the one its text names (a national type's utf8mb3),
    else the table's utf8mb4 default."""
    name = mysql.name
    if name in _LOBS:
        chars = _LOBS[name]
    elif name == "enum":
        chars = max((len(v) for v in mysql.values), default=0)
    elif name == "set":
        chars = sum(len(v) for v in mysql.values) + max(len(mysql.values) - 1, 0)
    else:  # CHAR, VARCHAR
        chars = mysql.length if mysql.length is not None else 1
    charset, collation = CHARSET, COLLATION
    if mysql.charset is not None or mysql.collation is not None:
        charset = mysql.charset or charset_of(mysql.collation or "")
        collation = mysql.collation or SERVER_DEFAULTS.default_of(charset)
    if mysql.binary and mysql.collation is None:
        collation = f"{charset}_bin"
    octets = chars if name in _LOBS else chars * max_bytes(charset)
    return TypeInfo(
        column_type,
        name,
        chars,
        octets,
        character_set_name=charset,
        collation_name=collation,
    )
