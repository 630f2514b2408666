"""Result columns with MySQL's whole column definition, and the encoders their values need.

A session builds its result sets through ``ColumnDefinitions``, which keeps a ``ColumnMeta``
per column (type code, character set, length, decimals, flags, schema, table and column
names: see ``sql_handlers.query.column_meta``) until the connection writes them with
``definition_packets``; mysql-mimic alone writes a name, a type and a length of 256 for
every column. (mysql-mimic's result classes are compiled: they take no subclass and no
extra attribute, so the definitions wait beside the result.)

The binary protocol (COM_STMT_EXECUTE) packs each value by its column's type code, and
mysql-mimic packs every integer as signed and a TINY as a boolean: an INT UNSIGNED of 2^31 or
a TINYINT of 5 would not survive. A column here gets the packing of its type and sign. BIT
values (integers in the engine) go out as MySQL sends them, big-endian bytes; TIME values
(text in the engine) as the protocol's time.
"""

from __future__ import annotations

import re
import struct
from collections.abc import AsyncIterable, Callable, Iterable, Sequence
from datetime import timedelta
from typing import Any

from mysql_mimic import ColumnType, ResultColumn, ResultSet
from mysql_mimic.charset import CharacterSet
from mysql_mimic.packets import make_column_definition_41
from mysql_mimic.results import _binary_encode_timedelta
from mysql_mimic.types import ColumnDefinition

from spark_replica.sql_handlers.query.column_meta import ColumnMeta, Flag

Encoder = Callable[[Any, Any], bytes]

#: struct formats of the binary protocol's integers, by type code: (signed, unsigned).
_INTEGER_FORMATS = {
    ColumnType.TINY: ("<b", "<B"),
    ColumnType.SHORT: ("<h", "<H"),
    ColumnType.YEAR: ("<h", "<H"),
    ColumnType.INT24: ("<i", "<I"),
    ColumnType.LONG: ("<i", "<I"),
    ColumnType.LONGLONG: ("<q", "<Q"),
}


class ColumnDefinitions:
    """The column definitions of the result set a session's statement returned, kept until
    the connection writes it (one statement at a time per session)."""

    def __init__(self) -> None:
        self._pending: tuple[Sequence[ResultColumn], Sequence[ColumnMeta]] | None = None

    def result(
        self,
        rows: Iterable[Sequence[Any]] | AsyncIterable[Sequence[Any]],
        definitions: Sequence[ColumnMeta],
    ) -> ResultSet:
        """``rows`` under columns described by ``definitions``, with the encoders they
        need; the definitions are kept for ``take``."""
        columns = [_column(meta) for meta in definitions]
        self._pending = (columns, tuple(definitions))
        return ResultSet(rows=rows, columns=columns)

    def take(self, result_set: ResultSet) -> Sequence[ColumnMeta]:
        """The definitions of ``result_set`` (empty for a result built elsewhere)."""
        pending, self._pending = self._pending, None
        if pending is not None and pending[0] is result_set.columns:
            return pending[1]
        return ()


def _column(meta: ColumnMeta) -> ResultColumn:
    column_type = ColumnType[meta.type]
    column = ResultColumn(
        meta.name,
        column_type,
        character_set=CharacterSet.binary if meta.binary else CharacterSet.utf8mb4,
        text_encoder=_text_encoder(column_type, meta),
        binary_encoder=_binary_encoder(column_type, meta),
    )
    if meta.binary:
        column.codec = "utf-8"  # numbers and dates are ASCII text in the text protocol
    return column


def definition_packets(
    server_charset: CharacterSet, result_set: ResultSet, definitions: Sequence[ColumnMeta]
) -> list[bytes]:
    """The Protocol::ColumnDefinition41 packets of ``result_set``'s columns: the whole
    ``definitions`` when there is one per column, a name and a type otherwise."""
    if len(definitions) != len(result_set.columns):
        return [
            make_column_definition_41(
                server_charset=server_charset,
                name=column.name,
                column_type=column.type,
                character_set=column.character_set,
            )
            for column in result_set.columns
        ]
    return [
        make_column_definition_41(
            server_charset=server_charset,
            schema=meta.schema,
            table=meta.table,
            org_table=meta.org_table,
            name=column.name,
            org_name=meta.org_name or None,
            character_set=column.character_set,
            column_length=meta.length,
            column_type=column.type,
            flags=ColumnDefinition(int(meta.flags)),
            decimals=meta.decimals,
        )
        for column, meta in zip(result_set.columns, definitions, strict=True)
    ]


def _text_encoder(column_type: ColumnType, meta: ColumnMeta) -> Encoder | None:
    if column_type is ColumnType.BIT:
        return lambda column, value: _bit_bytes(value, meta.length)
    return None


def _binary_encoder(column_type: ColumnType, meta: ColumnMeta) -> Encoder | None:
    formats = _INTEGER_FORMATS.get(column_type)
    if formats is not None:
        packer = struct.Struct(formats[1] if meta.flags & Flag.UNSIGNED else formats[0])
        return lambda column, value: packer.pack(int(value))
    if column_type is ColumnType.BIT:
        return lambda column, value: _length_encoded(_bit_bytes(value, meta.length))
    if column_type is ColumnType.TIME:
        return lambda column, value: _binary_encode_timedelta(column, _as_timedelta(value))
    return None


def _bit_bytes(value: Any, bits: int) -> bytes:
    """A BIT(``bits``) value as MySQL sends it: big-endian, (bits + 7) // 8 bytes."""
    if isinstance(value, bytes):
        return value
    size = max(1, (bits + 7) // 8)
    return (int(value) & ((1 << (size * 8)) - 1)).to_bytes(size, "big")


def _length_encoded(data: bytes) -> bytes:
    size = len(data)
    if size < 251:
        return bytes([size]) + data
    if size < 1 << 16:
        return b"\xfc" + size.to_bytes(2, "little") + data
    if size < 1 << 24:
        return b"\xfd" + size.to_bytes(3, "little") + data
    return b"\xfe" + size.to_bytes(8, "little") + data


_TIME = re.compile(r"(-)?(\d+):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$")


def _as_timedelta(value: Any) -> timedelta:
    """A TIME value held as MySQL's text (``-838:59:59.000000``) as a ``timedelta``."""
    if isinstance(value, timedelta):
        return value
    found = _TIME.match(str(value).strip())
    if found is None:
        raise ValueError(f"not a TIME value: {value!r}")
    sign, hours, minutes, seconds, fraction = found.groups()
    span = timedelta(hours=int(hours), minutes=int(minutes), seconds=int(seconds),
                     microseconds=int((fraction or "0").ljust(6, "0")))  # fmt: skip
    return -span if sign else span
