"""TABLE_MAP_EVENT (19): decode and encode (mysql-reference §7.8).

A ``TableMapEvent`` binds a table id to a ``TableDefinition``. Definitions are decoded once per
distinct Table_map body and shared; each caches the compiled row decoders of its table (one
per columns-present bitmap), so a definition decoded once serves every rows event on the table.
"""

from __future__ import annotations

import struct
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from spark_replica.applier_core.binlog.constants import HEADER_LEN
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
class TableDefinition:
    """What a Table_map event says about its table: everything but the table id and the flags.

    A source writes the same Table_map in every transaction on a table; all the events share
    one definition, and with it the compiled row decoders it caches. Nothing changes a
    definition after it is built.

    ``primary_key`` holds the key's column indexes (empty when the source did not log them:
    ``binlog_row_metadata=MINIMAL``), ``primary_key_prefix`` the prefix length of each key
    column when the source logged PRIMARY_KEY_WITH_PREFIX (0 = whole column).
    """

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
    _decoders: dict[Any, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: Decoded rows-event heads by type code, then head bytes.
    plans: dict[int, HeadPlans] = field(default_factory=dict, repr=False)

    def key(self) -> tuple[object, ...]:
        return (
            self.schema, self.table, self.columns, self.primary_key, self.primary_key_prefix,
            self.default_collation, self.enum_set_default_collation, self.layout,
            tuple(sorted(self.unknown_metadata.items())),
        )  # fmt: skip

    @property
    def layout(self) -> tuple[int, ...]:
        if self.metadata_layout is not None:
            return self.metadata_layout
        return default_layout(self.columns, self.primary_key)

    def cached(self, key: object, build: Callable[[], Any]) -> Any:
        """A cache for compiled decoders (built once per key; bounded, since MINIMAL row
        images may present many different column sets). Safe to share between threads."""
        found = self._decoders.get(key)
        if found is None:
            found = build()
            with self._lock:
                if len(self._decoders) >= MAX_CACHED_DECODERS:
                    self._decoders.clear()
                self._decoders[key] = found
        return found

    def remember_plan(self, type_code: int, head: bytes, plan: object) -> None:
        """Keep what a rows event's ``head`` decodes to (bounded, like the decoders)."""
        with self._lock:
            plans = self.plans.get(type_code)
            if plans is None or len(plans) >= MAX_CACHED_DECODERS:
                plans = self.plans[type_code] = HeadPlans(len(head))
            plans[head] = plan


class HeadPlans(dict[bytes, Any]):
    """Decoded rows-event heads of one type code by their bytes, all ``head_size`` long."""

    def __init__(self, head_size: int) -> None:
        super().__init__()
        self.head_size = head_size


class TableMapEvent(Event):
    """A decoded Table_map event: a table id bound to a :class:`TableDefinition`.

    Build one with the definition's fields as keywords; the decoder binds cached definitions
    with :meth:`bind`. The definition's fields read as the event's own.
    """

    __slots__ = ("header", "table_id", "flags", "table_id_size", "definition")

    header: EventHeader
    table_id: int
    flags: int
    #: Size of the table id: 6 bytes, or 4 for servers whose post-header is 6 bytes long.
    table_id_size: int
    definition: TableDefinition

    def __init__(
        self,
        *,
        header: EventHeader,
        table_id: int,
        schema: str,
        table: str,
        columns: tuple[ColumnSpec, ...],
        flags: int = 0,
        table_id_size: int = 6,
        primary_key: tuple[int, ...] = (),
        primary_key_prefix: tuple[int, ...] = (),
        default_collation: int | None = None,
        enum_set_default_collation: int | None = None,
        metadata_layout: tuple[int, ...] | None = None,
        unknown_metadata: dict[int, bytes] | None = None,
    ) -> None:
        self.header = header
        self.table_id = table_id
        self.flags = flags
        self.table_id_size = table_id_size
        self.definition = TableDefinition(
            schema=schema,
            table=table,
            columns=columns,
            primary_key=primary_key,
            primary_key_prefix=primary_key_prefix,
            default_collation=default_collation,
            enum_set_default_collation=enum_set_default_collation,
            metadata_layout=metadata_layout,
            unknown_metadata=dict(unknown_metadata or {}),
        )

    @classmethod
    def bind(
        cls,
        header: EventHeader,
        table_id: int,
        flags: int,
        table_id_size: int,
        definition: TableDefinition,
    ) -> TableMapEvent:
        """An event for ``definition`` without building a new one."""
        event = _new(cls)
        event.header = header
        event.table_id = table_id
        event.flags = flags
        event.table_id_size = table_id_size
        event.definition = definition
        return event

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TableMapEvent):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        d = self.definition
        return (
            f"TableMapEvent(table_id={self.table_id}, flags={self.flags}, "
            f"table={d.schema}.{d.table}, columns={d.columns!r}, primary_key={d.primary_key})"
        )

    def _key(self) -> tuple[object, ...]:
        return (self.table_id, self.flags, self.table_id_size, self.definition.key())

    schema = property(lambda self: self.definition.schema)
    table = property(lambda self: self.definition.table)
    columns = property(lambda self: self.definition.columns)
    primary_key = property(lambda self: self.definition.primary_key)
    primary_key_prefix = property(lambda self: self.definition.primary_key_prefix)
    default_collation = property(lambda self: self.definition.default_collation)
    enum_set_default_collation = property(lambda self: self.definition.enum_set_default_collation)
    metadata_layout = property(lambda self: self.definition.metadata_layout)
    unknown_metadata = property(lambda self: self.definition.unknown_metadata)
    layout = property(lambda self: self.definition.layout)

    @property
    def column_count(self) -> int:
        return len(self.definition.columns)

    @property
    def column_types(self) -> tuple[int, ...]:
        return tuple(c.type for c in self.definition.columns)

    @property
    def column_names(self) -> tuple[str | None, ...]:
        return tuple(c.name for c in self.definition.columns)

    @property
    def json_column_count(self) -> int:
        return sum(1 for c in self.definition.columns if c.type == T.JSON)

    def cached(self, key: object, build: Callable[[], Any]) -> Any:
        """The definition's cache of compiled decoders."""
        return self.definition.cached(key, build)


_new = object.__new__


def _name(reader: Reader) -> str:
    size = reader.packed()
    raw = reader.bytes(size)
    if reader.u8() != 0:
        raise BinlogError("Table_map name is not NUL-terminated")
    return name_text(raw)


#: Definitions by the part of a Table_map body after the table id and flags: a source writes
#: the same Table_map in every transaction on a table.
_DEFINITIONS: dict[int, OrderedDict[bytes, TableDefinition]] = {6: OrderedDict(), 8: OrderedDict()}
_DEFINITIONS_MAX = 4096
_DEFINITIONS_LOCK = threading.Lock()
_ID_FLAGS_6 = struct.Struct("<IHH")
_ID_FLAGS_4 = struct.Struct("<IH")


def decode_table_map(
    header: EventHeader, body: bytes | memoryview, post_header_len: int
) -> TableMapEvent:
    """Decode a Table_map event body (after the common header, without checksum)."""
    data = bytes(HEADER_LEN) + bytes(body)
    return decode_table_map_at(header, data, len(data), post_header_len)


def decode_table_map_at(
    header: EventHeader, data: bytes, end: int, post_header_len: int
) -> TableMapEvent:
    """Decode the Table_map event whose body is ``data[HEADER_LEN:end]``."""
    if post_header_len == 6:
        if end - HEADER_LEN < 6:
            raise BinlogError(f"event is too short: {end - HEADER_LEN} bytes of body")
        table_id, flags = _ID_FLAGS_4.unpack_from(data, HEADER_LEN)
        id_size = 4
    else:
        if end - HEADER_LEN < 8:
            raise BinlogError(f"event is too short: {end - HEADER_LEN} bytes of body")
        low, high, flags = _ID_FLAGS_6.unpack_from(data, HEADER_LEN)
        table_id = low | high << 32
        id_size = 6
    key = data[HEADER_LEN + id_size + 2 : end]
    known = _DEFINITIONS.get(post_header_len)
    if known is None:
        known = _DEFINITIONS.setdefault(post_header_len, OrderedDict())
    definition = known.get(key)
    if definition is None:
        reader = Reader(memoryview(data)[HEADER_LEN:end], id_size + 2)
        if post_header_len > 8:
            reader.skip(post_header_len - 8)
        definition = _decode_definition(reader)
        with _DEFINITIONS_LOCK:
            known[key] = definition
            if len(known) > _DEFINITIONS_MAX:
                known.popitem(last=False)
    return TableMapEvent.bind(header, table_id, flags, id_size, definition)


def _decode_definition(reader: Reader) -> TableDefinition:
    schema = _name(reader)
    table = _name(reader)
    count = reader.packed()
    if count > reader.remaining:
        raise BinlogError(f"Table_map claims {count} columns in a {reader.end}-byte event")
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
    return TableDefinition(
        schema=schema,
        table=table,
        columns=tuple(columns),
        primary_key=table_meta.primary_key,
        primary_key_prefix=table_meta.primary_key_prefix,
        default_collation=table_meta.default_collation,
        enum_set_default_collation=table_meta.enum_set_default_collation,
        metadata_layout=table_meta.layout,
        unknown_metadata=table_meta.unknown,
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
