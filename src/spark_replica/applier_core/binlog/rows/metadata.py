"""Table_map optional metadata (types 1-12, mysql-reference §7.8): decode and encode.

Decoding folds the fields into the column specs (signedness, collations, names, members,
geometry types, visibility) and the table (primary key, default collations). Encoding
rebuilds each field from those attributes, in the order the event carried them, so a decoded
event encodes back to the same bytes.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.packing import Reader, pack_int
from spark_replica.applier_core.binlog.rows.charsets import member_codec, name_bytes, name_text
from spark_replica.applier_core.binlog.rows.columns import ColumnSpec, T


class MetadataType(enum.IntEnum):
    SIGNEDNESS = 1
    DEFAULT_CHARSET = 2
    COLUMN_CHARSET = 3
    COLUMN_NAME = 4
    SET_STR_VALUE = 5
    ENUM_STR_VALUE = 6
    GEOMETRY_TYPE = 7
    SIMPLE_PRIMARY_KEY = 8
    PRIMARY_KEY_WITH_PREFIX = 9
    ENUM_AND_SET_DEFAULT_CHARSET = 10
    ENUM_AND_SET_COLUMN_CHARSET = 11
    COLUMN_VISIBILITY = 12


M = MetadataType


@dataclass(slots=True)
class TableMetadata:
    """What the optional metadata says about the table as a whole."""

    primary_key: tuple[int, ...] = ()
    primary_key_prefix: tuple[int, ...] = ()
    default_collation: int | None = None
    enum_set_default_collation: int | None = None
    #: Field types in event order; unknown types keep their raw value in ``unknown``.
    layout: tuple[int, ...] = ()
    unknown: dict[int, bytes] = field(default_factory=dict)


def _bits_msb(data: bytes, count: int) -> list[bool]:
    if len(data) * 8 < count:
        raise BinlogError("Table_map optional metadata bitmap is too short")
    return [bool(data[i >> 3] & (0x80 >> (i & 7))) for i in range(count)]


def _pack_bits_msb(flags: Sequence[bool]) -> bytes:
    out = bytearray((len(flags) + 7) // 8)
    for i, flag in enumerate(flags):
        if flag:
            out[i >> 3] |= 0x80 >> (i & 7)
    return bytes(out)


def _packed_list(value: bytes) -> list[int]:
    reader = Reader(value)
    out: list[int] = []
    while reader.remaining:
        out.append(reader.packed())
    return out


def _charset_field(
    value: bytes, columns: Sequence[int], *, default: bool
) -> tuple[int | None, dict[int, int]]:
    """(default collation, {column index: collation}) of a DEFAULT_ or COLUMN_CHARSET field."""
    numbers = _packed_list(value)
    found: dict[int, int] = {}
    if not default:
        if len(numbers) != len(columns):
            raise BinlogError(
                f"Table_map charset metadata has {len(numbers)} entries for {len(columns)} columns"
            )
        return None, dict(zip(columns, numbers, strict=True))
    if not numbers or len(numbers) % 2 != 1:
        raise BinlogError("Table_map default charset metadata is malformed")
    fallback = numbers[0]
    for position in columns:
        found[position] = fallback
    for i in range(1, len(numbers), 2):
        which, collation = numbers[i], numbers[i + 1]
        if which >= len(columns):
            raise BinlogError(f"Table_map charset metadata names character column {which}")
        found[columns[which]] = collation
    return fallback, found


def _members(value: bytes, columns: Sequence[ColumnSpec]) -> dict[int, list[bytes]]:
    reader = Reader(value)
    out: dict[int, list[bytes]] = {}
    for column in columns:
        count = reader.packed()
        out[column.index] = [reader.bytes(reader.packed()) for _ in range(count)]
    if reader.remaining:
        raise BinlogError("Table_map ENUM/SET metadata has trailing bytes")
    return out


def decode_optional(
    data: bytes, columns: list[ColumnSpec]
) -> tuple[list[ColumnSpec], TableMetadata]:
    """Apply the optional metadata TLVs in ``data`` to ``columns``."""
    table = TableMetadata()
    reader = Reader(data)
    updates: list[dict[str, Any]] = [{} for _ in columns]
    raw_members: dict[int, list[bytes]] = {}
    layout: list[int] = []
    numeric = [c.index for c in columns if c.is_numeric]
    character = [c.index for c in columns if c.is_character]
    enum_set = [c.index for c in columns if c.is_enum_or_set]
    while reader.remaining:
        kind = reader.u8()
        value = reader.bytes(reader.packed())
        layout.append(kind)
        if kind == M.SIGNEDNESS:
            for index, flag in zip(numeric, _bits_msb(value, len(numeric)), strict=True):
                updates[index]["unsigned"] = flag
        elif kind in (M.DEFAULT_CHARSET, M.COLUMN_CHARSET):
            fallback, found = _charset_field(value, character, default=kind == M.DEFAULT_CHARSET)
            table.default_collation = fallback
            for index, collation in found.items():
                updates[index]["collation"] = collation
        elif kind in (M.ENUM_AND_SET_DEFAULT_CHARSET, M.ENUM_AND_SET_COLUMN_CHARSET):
            default = kind == M.ENUM_AND_SET_DEFAULT_CHARSET
            fallback, found = _charset_field(value, enum_set, default=default)
            table.enum_set_default_collation = fallback
            for index, collation in found.items():
                updates[index]["collation"] = collation
        elif kind == M.COLUMN_NAME:
            names = Reader(value)
            for column in columns:
                updates[column.index]["name"] = name_text(names.bytes(names.packed()))
            if names.remaining:
                raise BinlogError("Table_map column names have trailing bytes")
        elif kind in (M.SET_STR_VALUE, M.ENUM_STR_VALUE):
            wanted = T.SET if kind == M.SET_STR_VALUE else T.ENUM
            raw_members.update(_members(value, [c for c in columns if c.real_type == wanted]))
        elif kind == M.GEOMETRY_TYPE:
            geometry = [c.index for c in columns if c.type == T.GEOMETRY]
            kinds = _packed_list(value)
            if len(kinds) != len(geometry):
                raise BinlogError("Table_map geometry metadata does not match the columns")
            for index, geometry_type in zip(geometry, kinds, strict=True):
                updates[index]["geometry_type"] = geometry_type
        elif kind == M.SIMPLE_PRIMARY_KEY:
            table.primary_key = tuple(_packed_list(value))
        elif kind == M.PRIMARY_KEY_WITH_PREFIX:
            pairs = _packed_list(value)
            if len(pairs) % 2:
                raise BinlogError("Table_map primary key metadata is malformed")
            table.primary_key = tuple(pairs[0::2])
            table.primary_key_prefix = tuple(pairs[1::2])
        elif kind == M.COLUMN_VISIBILITY:
            for column, flag in zip(columns, _bits_msb(value, len(columns)), strict=True):
                updates[column.index]["visible"] = flag
        else:
            table.unknown[kind] = value
    if any(index >= len(columns) for index in table.primary_key):
        raise BinlogError("Table_map primary key names a column the table does not have")
    for index, names_raw in raw_members.items():
        member_collation: int | None = updates[index].get("collation", columns[index].collation)
        decode, _ = member_codec(member_collation)
        updates[index]["members"] = tuple(decode(name) for name in names_raw)
    table.layout = tuple(layout)
    new_columns = [
        dataclasses.replace(c, **u) if u else c for c, u in zip(columns, updates, strict=True)
    ]
    return new_columns, table


def default_layout(columns: Sequence[ColumnSpec], primary_key: Sequence[int]) -> tuple[int, ...]:
    """The fields MySQL writes with ``binlog_row_metadata=FULL``, in its order (as MySQL 8.0
    and 9.x fixtures show it), for the attributes the columns have."""
    layout: list[int] = []
    if any(c.is_numeric for c in columns):
        layout.append(M.SIGNEDNESS)
    if any(c.is_character and c.collation is not None for c in columns):
        layout.append(M.COLUMN_CHARSET)
    if any(c.type == T.GEOMETRY and c.geometry_type is not None for c in columns):
        layout.append(M.GEOMETRY_TYPE)
    if columns and all(c.name is not None for c in columns):
        layout.append(M.COLUMN_NAME)
    if any(c.is_enum_or_set and c.collation is not None for c in columns):
        layout.append(M.ENUM_AND_SET_COLUMN_CHARSET)
    if any(c.real_type == T.SET and c.members is not None for c in columns):
        layout.append(M.SET_STR_VALUE)
    if any(c.real_type == T.ENUM and c.members is not None for c in columns):
        layout.append(M.ENUM_STR_VALUE)
    if primary_key:
        layout.append(M.SIMPLE_PRIMARY_KEY)
    if any(c.visible is not None for c in columns):
        layout.append(M.COLUMN_VISIBILITY)
    return tuple(layout)


def _charset_value(columns: Sequence[ColumnSpec], default: int | None) -> bytes:
    if default is None:
        return b"".join(pack_int(c.collation or 0) for c in columns)
    out = bytearray(pack_int(default))
    for position, column in enumerate(columns):
        if column.collation is not None and column.collation != default:
            out += pack_int(position) + pack_int(column.collation)
    return bytes(out)


def _members_value(columns: Sequence[ColumnSpec]) -> bytes:
    out = bytearray()
    for column in columns:
        _, encode = member_codec(column.collation)
        members = column.members or ()
        out += pack_int(len(members))
        for member in members:
            raw = encode(member)
            out += pack_int(len(raw)) + raw
    return bytes(out)


def _field_value(kind: int, columns: Sequence[ColumnSpec], table: TableMetadata) -> bytes:
    if kind == M.SIGNEDNESS:
        return _pack_bits_msb([c.unsigned for c in columns if c.is_numeric])
    if kind in (M.DEFAULT_CHARSET, M.COLUMN_CHARSET):
        default = table.default_collation if kind == M.DEFAULT_CHARSET else None
        if kind == M.DEFAULT_CHARSET and default is None:
            raise BinlogError("DEFAULT_CHARSET metadata needs a default collation")
        return _charset_value([c for c in columns if c.is_character], default)
    if kind in (M.ENUM_AND_SET_DEFAULT_CHARSET, M.ENUM_AND_SET_COLUMN_CHARSET):
        default = (
            table.enum_set_default_collation if kind == M.ENUM_AND_SET_DEFAULT_CHARSET else None
        )
        if kind == M.ENUM_AND_SET_DEFAULT_CHARSET and default is None:
            raise BinlogError("ENUM_AND_SET_DEFAULT_CHARSET metadata needs a default collation")
        return _charset_value([c for c in columns if c.is_enum_or_set], default)
    if kind == M.COLUMN_NAME:
        raw = [name_bytes(c.name or "") for c in columns]
        return b"".join(pack_int(len(name)) + name for name in raw)
    if kind == M.SET_STR_VALUE:
        return _members_value([c for c in columns if c.real_type == T.SET])
    if kind == M.ENUM_STR_VALUE:
        return _members_value([c for c in columns if c.real_type == T.ENUM])
    if kind == M.GEOMETRY_TYPE:
        return b"".join(pack_int(c.geometry_type or 0) for c in columns if c.type == T.GEOMETRY)
    if kind == M.SIMPLE_PRIMARY_KEY:
        return b"".join(pack_int(i) for i in table.primary_key)
    if kind == M.PRIMARY_KEY_WITH_PREFIX:
        prefixes = table.primary_key_prefix or (0,) * len(table.primary_key)
        pairs = zip(table.primary_key, prefixes, strict=True)
        return b"".join(pack_int(i) + pack_int(p) for i, p in pairs)
    if kind == M.COLUMN_VISIBILITY:
        return _pack_bits_msb([c.visible is not False for c in columns])
    if kind in table.unknown:
        return table.unknown[kind]
    raise BinlogError(f"no value for Table_map optional metadata type {kind}")


def encode_optional(columns: Sequence[ColumnSpec], table: TableMetadata) -> bytes:
    out = bytearray()
    for kind in table.layout:
        value = _field_value(kind, columns, table)
        out += bytes((kind,)) + pack_int(len(value)) + value
    return bytes(out)
