"""MySQL 8.4's view of a replicated column's type: its ``COLUMN_TYPE`` text and metadata.

A replicated table's columns carry the type text of the replicated CREATE TABLE as the DDL
parser rendered it (``INT UNSIGNED``, ``DECIMAL(10, 2)``, ``ENUM('a', 'b')``). SHOW COLUMNS,
SHOW CREATE TABLE and ``information_schema.COLUMNS`` show what MySQL stores instead: the
canonical lower-case type (``int unsigned``, ``decimal(10,2)``, ``enum('a','b')``) with
defaults filled in and integer display widths dropped (MySQL 8.0.19+ keeps only
``tinyint(1)``), plus DATA_TYPE, lengths, precision and scale as ``information_schema``
reports them. Column-level character sets are not kept by the catalog: every string column
is shown in the table's utf8mb4 default.
https://dev.mysql.com/doc/refman/8.4/en/information-schema-columns-table.html
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from spark_replica.applier_core.storage import Column
from spark_replica.applier_core.storage.collations import charset_of, max_bytes

CHARSET = "utf8mb4"
COLLATION = "utf8mb4_0900_ai_ci"
#: Bytes per character of utf8mb4 (CHARACTER_OCTET_LENGTH = 4 × CHARACTER_MAXIMUM_LENGTH).
_MBMAXLEN = 4

#: NUMERIC_PRECISION of the integer types: (signed, unsigned).
_INTEGERS = {
    "tinyint": (3, 3),
    "smallint": (5, 5),
    "mediumint": (7, 8),
    "int": (10, 10),
    "bigint": (19, 20),
}
_ALIASES = {
    "integer": "int",
    "int4": "int",
    "numeric": "decimal",
    "dec": "decimal",
    "fixed": "decimal",
    "real": "double",
    "float8": "double",
    "float4": "float",
}
#: Byte lengths of the TEXT and BLOB types.
_LOBS = {
    "tinytext": 255,
    "text": 65535,
    "mediumtext": 16777215,
    "longtext": 4294967295,
    "tinyblob": 255,
    "blob": 65535,
    "mediumblob": 16777215,
    "longblob": 4294967295,
}
#: Types that take no literal DEFAULT, so SHOW CREATE TABLE prints no ``DEFAULT NULL``.
_NO_DEFAULT = frozenset(
    {*_LOBS, "json", "geometry", "point", "linestring", "polygon", "multipoint"}
    | {"multilinestring", "multipolygon", "geometrycollection", "geomcollection"}
)
_HEAD = re.compile(r"\s*(\w+)\s*")
_STRING = re.compile(r"'((?:[^'\\]|\\.|'')*)'", re.S)
_ESCAPES = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a"}


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
    a few types over many columns).

    >>> type_info("DECIMAL(10, 2) UNSIGNED").column_type
    'decimal(10,2) unsigned'
    >>> type_info("INT(11)").column_type, type_info("TINYINT(1)").column_type
    ('int', 'tinyint(1)')
    """
    name, args, attributes = _split(type_text)
    name = _ALIASES.get(name, name)
    unsigned = " unsigned" if "unsigned" in attributes else ""
    zerofill = "zerofill" in attributes
    if name in ("boolean", "bool"):
        return TypeInfo("tinyint(1)", "tinyint", numeric_precision=3, numeric_scale=0)
    if name == "serial":
        return TypeInfo("bigint unsigned", "bigint", numeric_precision=20, numeric_scale=0)
    if name in _INTEGERS:
        signed, positive = _INTEGERS[name]
        width = ""
        if args and (zerofill or (name == "tinyint" and args == ["1"])):
            width = f"({args[0]})"
        suffix = unsigned + (" zerofill" if zerofill else "")
        precision = positive if unsigned else signed
        return TypeInfo(
            f"{name}{width}{suffix}", name, numeric_precision=precision, numeric_scale=0
        )
    if name == "decimal":
        precision = int(args[0]) if args else 10
        scale = int(args[1]) if len(args) > 1 else 0
        return TypeInfo(
            f"decimal({precision},{scale}){unsigned}",
            name,
            numeric_precision=precision,
            numeric_scale=scale,
        )
    if name in ("float", "double"):
        return _floating(name, args, unsigned)
    if name == "bit":
        length = int(args[0]) if args else 1
        return TypeInfo(f"bit({length})", name, numeric_precision=length)
    if name in ("datetime", "timestamp", "time"):
        fsp = int(args[0]) if args else 0
        return TypeInfo(f"{name}({fsp})" if fsp else name, name, datetime_precision=fsp)
    if name in ("date", "year"):
        return TypeInfo(name, name)
    if name in ("char", "varchar", "binary", "varbinary"):
        return _string(name, int(args[0]) if args else 1)
    if name in _LOBS:
        return _lob(name, args)
    if name in ("enum", "set"):
        return _choice(name, args)
    rest = f"({','.join(args)})" if args else ""
    return TypeInfo(f"{name}{rest}{unsigned}", name)


def _split(type_text: str) -> tuple[str, list[str], set[str]]:
    """``DECIMAL(10, 2) UNSIGNED`` → ``('decimal', ['10', '2'], {'unsigned'})``; string
    arguments (ENUM values) stay quoted as written."""
    head = _HEAD.match(type_text)
    if head is None:
        return type_text.strip().lower(), [], set()
    name = head.group(1).lower()
    rest = type_text[head.end() :]
    args: list[str] = []
    if rest.startswith("("):
        end = _closing(rest)
        inside = rest[1:end]
        if "'" in inside:
            args = [m.group(0) for m in _STRING.finditer(inside)]
        else:
            args = [a.strip() for a in inside.split(",") if a.strip()]
        rest = rest[end + 1 :]
    return name, args, {word.lower() for word in rest.split()}


def _closing(text: str) -> int:
    """The index of the parenthesis closing ``text[0]``, skipping quoted strings."""
    depth, quoted, index = 0, False, 0
    while index < len(text):
        char = text[index]
        if quoted:
            if char == "\\":
                index += 1
            elif char == "'":
                quoted = False
        elif char == "'":
            quoted = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return len(text)


def _floating(name: str, args: list[str], unsigned: str) -> TypeInfo:
    if len(args) == 2:
        precision, scale = int(args[0]), int(args[1])
        return TypeInfo(
            f"{name}({precision},{scale}){unsigned}",
            name,
            numeric_precision=precision,
            numeric_scale=scale,
        )
    if len(args) == 1:
        # FLOAT(p): p <= 24 is a FLOAT, 25..53 a DOUBLE.
        name = "float" if int(args[0]) <= 24 else "double"
    return TypeInfo(f"{name}{unsigned}", name, numeric_precision=12 if name == "float" else 22)


def _string(name: str, length: int) -> TypeInfo:
    if name in ("binary", "varbinary"):
        return TypeInfo(f"{name}({length})", name, length, length)
    return TypeInfo(
        f"{name}({length})",
        name,
        length,
        length * _MBMAXLEN,
        character_set_name=CHARSET,
        collation_name=COLLATION,
    )


def _lob(name: str, args: list[str]) -> TypeInfo:
    if args:
        # TEXT(n) / BLOB(n): the smallest type that holds n characters (bytes for BLOB).
        family = "text" if name.endswith("text") else "blob"
        needed = int(args[0]) * (_MBMAXLEN if family == "text" else 1)
        sizes = [f"{size}{family}" for size in ("tiny", "", "medium", "long")]
        name = next((s for s in sizes if _LOBS[s] >= needed), sizes[-1])
    length = _LOBS[name]
    if name.endswith("blob"):
        return TypeInfo(name, name, length, length)
    return TypeInfo(
        name, name, length, length, character_set_name=CHARSET, collation_name=COLLATION
    )


def _choice(name: str, values: list[str]) -> TypeInfo:
    lengths = [len(_unquote(v)) for v in values]
    if name == "enum":
        longest = max(lengths, default=0)
    else:
        longest = sum(lengths) + max(len(lengths) - 1, 0)
    return TypeInfo(
        f"{name}({','.join(values)})",
        name,
        longest,
        longest * _MBMAXLEN,
        character_set_name=CHARSET,
        collation_name=COLLATION,
    )


def _unquote(literal: str) -> str:
    body = literal[1:-1].replace("''", "'")
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)
