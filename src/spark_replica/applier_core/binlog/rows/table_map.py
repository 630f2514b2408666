"""TABLE_MAP_EVENT (19): decode and encode (mysql-reference §7.8).

A ``TableMapEvent`` maps a table id to a table definition. It also caches the compiled row
decoders of that table (one per columns-present bitmap), so a table map decoded once serves
every rows event that refers to it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import Event, EventHeader
from spark_replica.applier_core.binlog.packing import Reader, pack_int
from spark_replica.applier_core.binlog.rows.charsets import name_bytes, name_text
from spark_replica.applier_core.binlog.rows.columns import ColumnSpec, T, read_meta
from spark_replica.applier_core.binlog.rows.metadata import (
    TableMetadata,
    decode_optional,
    default_layout,
    encode_optional,
)

MAX_CACHED_DECODERS = 256

#: Table_map flags.
TM_BIT_LEN_EXACT_F = 0x1
TM_REFERRED_FK_DB_F = 0x2
TM_GENERATED_INVISIBLE_PK_F = 0x4


@dataclass(eq=False, kw_only=True)
class TableMapEvent(Event):
    """A decoded Table_map event.

    ``primary_key`` holds the key's column indexes (empty when the source did not log them:
    ``binlog_row_metadata=MINIMAL``), ``primary_key_prefix`` the prefix length of each key
    column when the source logged PRIMARY_KEY_WITH_PREFIX (0 = whole column).
    """

    header: EventHeader
    table_id: int
    flags: int = 0
    schema: str
    table: str
    columns: tuple[ColumnSpec, ...]
    primary_key: tuple[int, ...] = ()
    primary_key_prefix: tuple[int, ...] = ()
    #: DEFAULT_CHARSET / ENUM_AND_SET_DEFAULT_CHARSET default collations.
    default_collation: int | None = None
    enum_set_default_collation: int | None = None
    #: Optional metadata field types in the order they are encoded (None: MySQL's FULL set).
    metadata_layout: tuple[int, ...] | None = None
    unknown_metadata: dict[int, bytes] = field(default_factory=dict)
    #: Size of the table id: 6 bytes, or 4 for servers whose post-header is 6 bytes long.
    table_id_size: int = 6
    _decoders: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TableMapEvent):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple[object, ...]:
        return (
            self.table_id, self.flags, self.schema, self.table, self.columns, self.primary_key,
            self.primary_key_prefix, self.default_collation, self.enum_set_default_collation,
            self.layout, tuple(sorted(self.unknown_metadata.items())), self.table_id_size,
        )  # fmt: skip

    @property
    def column_count(self) -> int:
        return len(self.columns)

    @property
    def column_types(self) -> tuple[int, ...]:
        return tuple(c.type for c in self.columns)

    @property
    def column_names(self) -> tuple[str | None, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def json_column_count(self) -> int:
        return sum(1 for c in self.columns if c.type == T.JSON)

    @property
    def layout(self) -> tuple[int, ...]:
        if self.metadata_layout is not None:
            return self.metadata_layout
        return default_layout(self.columns, self.primary_key)

    def cached(self, key: object, build: Callable[[], Any]) -> Any:
        """A per-table cache for compiled decoders (built once per key; bounded, since
        MINIMAL row images may present many different column sets)."""
        found = self._decoders.get(key)
        if found is None:
            if len(self._decoders) >= MAX_CACHED_DECODERS:
                self._decoders.clear()
            found = self._decoders[key] = build()
        return found


def _name(reader: Reader) -> str:
    size = reader.packed()
    raw = reader.bytes(size)
    if reader.u8() != 0:
        raise BinlogError("Table_map name is not NUL-terminated")
    return name_text(raw)


#: Decoded Table_map events by body: a source writes the same Table_map for every transaction
#: on a table, and reusing the decoded event also reuses its compiled row decoders.
_DECODED: OrderedDict[tuple[bytes, int], TableMapEvent] = OrderedDict()
_DECODED_MAX = 4096
_DECODED_LOCK = threading.Lock()


def decode_table_map(header: EventHeader, body: memoryview, post_header_len: int) -> TableMapEvent:
    """Decode a Table_map event body (after the common header, without checksum)."""
    key = (bytes(body), post_header_len)
    with _DECODED_LOCK:
        found = _DECODED.get(key)
        if found is not None:
            _DECODED.move_to_end(key)
    if found is not None:
        return replace(found, header=header)
    event = _decode_table_map(header, body, post_header_len)
    with _DECODED_LOCK:
        _DECODED[key] = event
        if len(_DECODED) > _DECODED_MAX:
            _DECODED.popitem(last=False)
    return event


def _decode_table_map(header: EventHeader, body: memoryview, post_header_len: int) -> TableMapEvent:
    reader = Reader(body)
    if post_header_len == 6:
        table_id, id_size = reader.u32(), 4
    else:
        table_id, id_size = reader.u48(), 6
    flags = reader.u16()
    if post_header_len > 8:
        reader.skip(post_header_len - 8)
    schema = _name(reader)
    table = _name(reader)
    count = reader.packed()
    if count > reader.remaining:
        raise BinlogError(f"Table_map claims {count} columns in a {len(body)}-byte event")
    types = reader.bytes(count)
    meta_len = reader.packed()
    meta_end = reader.pos + meta_len
    if meta_end > reader.end:
        raise BinlogError("Table_map column metadata is truncated")
    data = reader.data
    metas: list[bytes] = []
    pos = reader.pos
    for type_code in types:
        meta, pos = read_meta(type_code, data, pos, meta_end)
        metas.append(meta)
    if pos != meta_end:
        raise BinlogError(f"Table_map column metadata has {meta_end - pos} unexpected bytes")
    reader.pos = meta_end
    null_bits = reader.bytes((count + 7) // 8)
    columns = [
        ColumnSpec(i, types[i], metas[i], bool(null_bits[i >> 3] & (1 << (i & 7))))
        for i in range(count)
    ]
    optional = reader.rest()
    table_meta = TableMetadata()
    if optional:
        columns, table_meta = decode_optional(optional, columns)
    return TableMapEvent(
        header=header,
        table_id=table_id,
        flags=flags,
        schema=schema,
        table=table,
        columns=tuple(columns),
        primary_key=table_meta.primary_key,
        primary_key_prefix=table_meta.primary_key_prefix,
        default_collation=table_meta.default_collation,
        enum_set_default_collation=table_meta.enum_set_default_collation,
        metadata_layout=table_meta.layout,
        unknown_metadata=table_meta.unknown,
        table_id_size=id_size,
    )


def encode_table_map(event: TableMapEvent) -> bytes:
    """The body of a Table_map event (after the common header, without checksum)."""
    out = bytearray()
    if event.table_id_size == 4:
        out += event.table_id.to_bytes(4, "little")
    else:
        out += event.table_id.to_bytes(6, "little")
    out += event.flags.to_bytes(2, "little")
    for name in (event.schema, event.table):
        raw = name_bytes(name)
        out += pack_int(len(raw)) + raw + b"\x00"
    out += pack_int(len(event.columns))
    out += bytes(c.type for c in event.columns)
    meta = b"".join(c.meta for c in event.columns)
    out += pack_int(len(meta)) + meta
    nulls = bytearray((len(event.columns) + 7) // 8)
    for column in event.columns:
        if column.nullable:
            nulls[column.index >> 3] |= 1 << (column.index & 7)
    out += nulls
    table = TableMetadata(
        primary_key=event.primary_key,
        primary_key_prefix=event.primary_key_prefix,
        default_collation=event.default_collation,
        enum_set_default_collation=event.enum_set_default_collation,
        layout=event.layout,
        unknown=event.unknown_metadata,
    )
    out += encode_optional(event.columns, table)
    return bytes(out)
