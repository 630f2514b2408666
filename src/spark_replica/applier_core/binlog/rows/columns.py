"""One column of a Table_map event: its type, metadata and optional-metadata attributes.

``ColumnSpec.meta`` keeps the column's metadata bytes exactly as the event carries them
(mysql-reference §7.8); the attributes a decoder needs (real type, lengths, precision,
fractional seconds, ...) are derived from them. ``make_column`` builds a spec from those
attributes instead, for code that writes events.
"""

from __future__ import annotations

from dataclasses import dataclass

from spark_replica.applier_core.binlog.constants import ColumnType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.rows.charsets import charset_of

T = ColumnType

#: Metadata size in bytes per column type (types absent here carry none).
META_SIZE: dict[int, int] = {
    T.FLOAT: 1, T.DOUBLE: 1, T.TINY_BLOB: 1, T.MEDIUM_BLOB: 1, T.LONG_BLOB: 1, T.BLOB: 1,
    T.GEOMETRY: 1, T.JSON: 1, T.VECTOR: 1, T.TIMESTAMP2: 1, T.DATETIME2: 1, T.TIME2: 1,
    T.VARCHAR: 2, T.VAR_STRING: 2, T.STRING: 2, T.ENUM: 2, T.SET: 2, T.BIT: 2, T.NEWDECIMAL: 2,
}  # fmt: skip

#: Column types a Table_map may name.
KNOWN_TYPES = frozenset(int(t) for t in ColumnType)

#: Types with a SIGNEDNESS bit (``has_signedess_information_type``).
NUMERIC_TYPES = frozenset(
    {T.TINY, T.SHORT, T.INT24, T.LONG, T.LONGLONG, T.YEAR, T.FLOAT, T.DOUBLE, T.DECIMAL,
     T.NEWDECIMAL}
)  # fmt: skip

#: Real types whose collation DEFAULT_CHARSET / COLUMN_CHARSET carry (VECTOR, binary, since
#: MySQL 9.0).
CHARACTER_TYPES = frozenset(
    {T.STRING, T.VAR_STRING, T.VARCHAR, T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB,
     T.VECTOR}
)  # fmt: skip
ENUM_SET_TYPES = frozenset({T.ENUM, T.SET})


def read_meta(type_code: int, data: bytes | memoryview, pos: int, end: int) -> tuple[bytes, int]:
    """The metadata bytes of one column starting at ``pos``."""
    if type_code not in KNOWN_TYPES:
        raise BinlogError(f"Table_map names unknown column type {type_code}")
    if type_code == T.TYPED_ARRAY:
        if pos >= end:
            raise BinlogError("Table_map column metadata is truncated")
        element = data[pos]
        size = 3 if element == T.VARCHAR else META_SIZE.get(element, 0)
        size += 1
    else:
        size = META_SIZE.get(type_code, 0)
    if pos + size > end:
        raise BinlogError("Table_map column metadata is truncated")
    return bytes(data[pos : pos + size]), pos + size


@dataclass(frozen=True, slots=True)
class ColumnSpec:
    """A column as a Table_map event describes it.

    ``collation`` is the column's collation id (for ENUM/SET: the collation of its member
    names), ``members`` the ENUM or SET member names when the source logs them
    (``binlog_row_metadata=FULL``), ``visible`` None when the event has no visibility data.
    """

    index: int
    type: int
    meta: bytes = b""
    nullable: bool = True
    unsigned: bool = False
    collation: int | None = None
    name: str | None = None
    members: tuple[str, ...] | None = None
    geometry_type: int | None = None
    visible: bool | None = None

    @property
    def real_type(self) -> int:
        """STRING's real type (CHAR, ENUM or SET); the type itself for the others."""
        if self.type == T.STRING and self.meta and self.meta[0]:
            real = self.meta[0] | 0x30
            if real in (T.ENUM, T.SET, T.STRING):
                return real
        return self.type

    @property
    def max_length(self) -> int | None:
        """Maximum length in bytes of CHAR/VARCHAR/VAR_STRING columns."""
        if self.type in (T.VARCHAR, T.VAR_STRING) and len(self.meta) == 2:
            return self.meta[0] | self.meta[1] << 8
        if self.type == T.STRING and len(self.meta) == 2 and self.real_type == T.STRING:
            return self.meta[1] | (((self.meta[0] & 0x30) ^ 0x30) << 4)
        return None

    @property
    def pack_length(self) -> int | None:
        """Length-prefix bytes (BLOB/TEXT/JSON/GEOMETRY/VECTOR), value bytes (ENUM/SET,
        FLOAT/DOUBLE)."""
        if self.type in (T.ENUM, T.SET) and len(self.meta) == 2:
            return self.meta[1]
        if self.type == T.STRING and self.real_type in (T.ENUM, T.SET):
            return self.meta[1]
        if len(self.meta) == 1 and self.type not in (T.TIMESTAMP2, T.DATETIME2, T.TIME2):
            return self.meta[0]
        return None

    @property
    def precision(self) -> int | None:
        return self.meta[0] if self.type == T.NEWDECIMAL and len(self.meta) == 2 else None

    @property
    def scale(self) -> int | None:
        return self.meta[1] if self.type == T.NEWDECIMAL and len(self.meta) == 2 else None

    @property
    def fsp(self) -> int | None:
        if self.type in (T.TIMESTAMP2, T.DATETIME2, T.TIME2):
            return self.meta[0] if self.meta else 0
        return None

    @property
    def bits(self) -> int | None:
        if self.type == T.BIT and len(self.meta) == 2:
            return self.meta[1] * 8 + self.meta[0]
        return None

    @property
    def charset(self) -> str | None:
        """Character set name of the column's collation (None when not known)."""
        return charset_of(self.collation)

    @property
    def is_numeric(self) -> bool:
        return self.real_type in NUMERIC_TYPES

    @property
    def is_character(self) -> bool:
        return self.real_type in CHARACTER_TYPES

    @property
    def is_enum_or_set(self) -> bool:
        return self.real_type in ENUM_SET_TYPES

    def describe(self) -> str:
        """A short human-readable type, for error messages."""
        try:
            name = ColumnType(self.real_type).name
        except ValueError:
            name = str(self.real_type)
        label = self.name if self.name is not None else f"@{self.index + 1}"
        return f"column {label} ({name})"


def make_column(
    index: int,
    column_type: int,
    *,
    length: int | None = None,
    precision: int | None = None,
    scale: int | None = None,
    fsp: int | None = None,
    bits: int | None = None,
    pack_length: int | None = None,
    real_type: int | None = None,
    members: tuple[str, ...] | None = None,
    unsigned: bool = False,
    nullable: bool = True,
    collation: int | None = None,
    name: str | None = None,
    geometry_type: int | None = None,
    visible: bool | None = None,
) -> ColumnSpec:
    """A column spec from its attributes; the metadata bytes are computed.

    ``length`` is the maximum length in bytes (CHAR/VARCHAR); ``pack_length`` the length
    prefix size of BLOB/TEXT/JSON/GEOMETRY/VECTOR (default 2 for BLOB, 4 for the others) or the
    value size of ENUM/SET (default: from the number of members).
    """
    meta = _meta_for(
        column_type, length, precision, scale, fsp, bits, pack_length, real_type, members
    )
    return ColumnSpec(
        index, int(column_type), meta, nullable, unsigned, collation, name, members,
        geometry_type, visible,
    )  # fmt: skip


def _meta_for(
    column_type: int,
    length: int | None,
    precision: int | None,
    scale: int | None,
    fsp: int | None,
    bits: int | None,
    pack_length: int | None,
    real_type: int | None,
    members: tuple[str, ...] | None,
) -> bytes:
    if column_type == T.STRING:
        real = T.STRING if real_type is None else real_type
        if real in (T.ENUM, T.SET):
            size = pack_length or _enum_set_size(real, len(members or ()))
            return bytes((real, size))
        size = 0 if length is None else length
        if size > 1023:
            raise BinlogError(f"CHAR length {size} does not fit the Table_map metadata")
        return bytes(((T.STRING & ~0x30) | (((size >> 4) & 0x30) ^ 0x30), size & 0xFF))
    if column_type in (T.VARCHAR, T.VAR_STRING):
        return (length or 0).to_bytes(2, "little")
    if column_type == T.NEWDECIMAL:
        return bytes((precision or 10, scale or 0))
    if column_type == T.BIT:
        nbits = 1 if bits is None else bits
        return bytes((nbits % 8, nbits // 8))
    if column_type in (T.TIMESTAMP2, T.DATETIME2, T.TIME2):
        return bytes((fsp or 0,))
    if column_type == T.FLOAT:
        return bytes((pack_length or 4,))
    if column_type == T.DOUBLE:
        return bytes((pack_length or 8,))
    if column_type in (T.BLOB, T.TINY_BLOB, T.MEDIUM_BLOB, T.LONG_BLOB):
        return bytes((pack_length or 2,))
    if column_type in (T.JSON, T.GEOMETRY, T.VECTOR):
        return bytes((pack_length or 4,))
    if column_type in (T.ENUM, T.SET):
        return bytes((column_type, pack_length or _enum_set_size(column_type, len(members or ()))))
    if column_type == T.TYPED_ARRAY:
        raise BinlogError("TYPED_ARRAY columns cannot be built")
    return b""


def _enum_set_size(real_type: int, count: int) -> int:
    if real_type == T.ENUM:
        return 1 if count < 256 else 2
    return min(8, max(1, (count + 7) // 8))
