"""WRITE/UPDATE/DELETE_ROWS events v1 (23-25) and v2 (30-32), PARTIAL_UPDATE_ROWS (39).

Layout (mysql-reference §7.9): table id, flags, [v2: extra data], width, columns-present
bitmap, [UPDATE: after-image bitmap], then row images to the end of the event. Row values
follow ``values``; rows of WRITE and DELETE events are tuples, rows of UPDATE events
``(before, after)`` pairs of tuples. A column an image does not carry is ``ABSENT``.
"""

from __future__ import annotations

import enum
import functools
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from spark_replica.applier_core.binlog.constants import HEADER_LEN, EventType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import Event, EventHeader
from spark_replica.applier_core.binlog.packing import Reader, pack_int
from spark_replica.applier_core.binlog.rows.columns import ColumnSpec
from spark_replica.applier_core.binlog.rows.compiler import (
    CompiledImage,
    RowsDecoder,
    compile_image,
    compile_update,
)
from spark_replica.applier_core.binlog.rows.json_diff import JsonDiff
from spark_replica.applier_core.binlog.rows.partial import (
    decode_partial_rows,
    encode_image,
    encode_shared_image,
)
from spark_replica.applier_core.binlog.rows.table_map import TableDefinition, TableMapEvent
from spark_replica.applier_core.binlog.rows.values import Codec, codec_for

#: Rows event flags.
STMT_END_F = 0x1
NO_FOREIGN_KEY_CHECKS_F = 0x2
RELAXED_UNIQUE_CHECKS_F = 0x4
COMPLETE_ROWS_F = 0x8


class RowKind(enum.Enum):
    INSERT = "insert"
    UPDATE = "update"
    DELETE = "delete"


E = EventType
KIND: dict[int, RowKind] = {
    E.WRITE_ROWS_V1: RowKind.INSERT, E.WRITE_ROWS: RowKind.INSERT,
    E.UPDATE_ROWS_V1: RowKind.UPDATE, E.UPDATE_ROWS: RowKind.UPDATE,
    E.PARTIAL_UPDATE_ROWS: RowKind.UPDATE,
    E.DELETE_ROWS_V1: RowKind.DELETE, E.DELETE_ROWS: RowKind.DELETE,
}  # fmt: skip
V1_TYPES = frozenset({E.WRITE_ROWS_V1, E.UPDATE_ROWS_V1, E.DELETE_ROWS_V1})
_PARTIAL = int(E.PARTIAL_UPDATE_ROWS)
_ID_FLAGS_6 = struct.Struct("<IHH")
#: A 4-byte table id and the flags, or the low and high parts of a 6-byte table id.
_U32_U16 = struct.Struct("<IH")


@dataclass(eq=False, slots=True)
class RowsEvent(Event):
    """A decoded rows event; its kind and version follow ``header.type_code``.

    ``columns_present`` is the before-image bitmap (the after image's for WRITE events),
    ``columns_after`` the after-image bitmap of UPDATE events; bit i stands for column i.
    For partial updates ``value_options`` and ``json_diffs`` hold each row's shared image:
    the after value of a column with diffs is the before value with the diffs applied
    (``PartialJson`` when the before image lacks the column).
    """

    header: EventHeader
    table_id: int
    width: int
    columns_present: int
    flags: int = 0
    #: v2 extra data (after its length field); None for v1 events.
    extra_data: bytes | None = None
    columns_after: int | None = None
    rows: list[Any] = field(default_factory=list)
    value_options: list[int] | None = None
    json_diffs: list[dict[int, tuple[JsonDiff, ...]]] | None = None
    #: Servers before 8.0 set the unused bits of NULL bitmaps; 8.0 clears them.
    null_padding: bool = False
    #: Unused high bits of the two column bitmaps, as the event carried them.
    bitmap_padding: tuple[int, int] = (0, 0)
    table_id_size: int = 6
    table_map: TableMapEvent | None = field(default=None, repr=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RowsEvent):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]

    @property
    def type_code(self) -> int:
        return self.header.type_code

    def _key(self) -> tuple[object, ...]:
        return (
            self.type_code, self.table_id, self.flags, self.extra_data, self.width,
            self.columns_present, self.columns_after, self.rows, self.value_options,
            self.json_diffs, self.null_padding, self.bitmap_padding, self.table_id_size,
        )  # fmt: skip

    @property
    def kind(self) -> RowKind:
        return KIND[EventType(self.type_code)]

    @property
    def version(self) -> int:
        return 1 if self.type_code in V1_TYPES else 2

    @property
    def is_partial(self) -> bool:
        return self.type_code == E.PARTIAL_UPDATE_ROWS

    @property
    def full_image(self) -> bool:
        """True when every image carries every column of the table
        (``binlog_row_image=FULL``); an applier that needs whole rows refuses the others."""
        columns = self.table_map.column_count if self.table_map is not None else self.width
        full = (1 << columns) - 1
        return (
            self.width == columns
            and self.columns_present == full
            and self.columns_after in (None, full)
        )


@functools.lru_cache(maxsize=1024)
def _shared_image(columns: tuple[ColumnSpec, ...], present: int, width: int) -> CompiledImage:
    """Compiled decoders shared by every Table_map event describing the same columns.

    A source writes a new Table_map event for every transaction, so a cache on the event
    alone would compile the same decoder again for each transaction.
    """
    return compile_image(columns, present, width)


@functools.lru_cache(maxsize=1024)
def _shared_update(
    columns: tuple[ColumnSpec, ...], before: int, after: int, width: int
) -> RowsDecoder:
    """The compiled UPDATE loop, shared like ``_shared_image``."""
    return compile_update(columns, before, after, width)


def _rows_decoder(
    table: TableDefinition, present: int, after: int | None, width: int
) -> RowsDecoder:
    """The loop over an event's rows: images for WRITE and DELETE, pairs for UPDATE."""
    key = (present, after, width)
    decoder: RowsDecoder | None = table._decoders.get(key)
    if decoder is None:
        if after is None:
            build = lambda: _shared_image(table.columns, present, width).rows  # noqa: E731
        else:
            build = lambda: _shared_update(table.columns, present, after, width)  # noqa: E731
        decoder = table.cached(key, build)
    return decoder


def _codecs(table: TableDefinition | TableMapEvent, present: int, width: int) -> dict[int, Codec]:
    def build() -> dict[int, Codec]:
        return {i: codec_for(table.columns[i]) for i in range(width) if present >> i & 1}

    codecs: dict[int, Codec] = table.cached(("codecs", present, width), build)
    return codecs


def _padding(buf: bytes, pos: int, present: int, end: int | None = None) -> bool:
    """Whether the first row's NULL bitmap (at ``pos``) sets its unused high bits."""
    count = present.bit_count()
    if not count % 8 or pos + (count + 7) // 8 > (len(buf) if end is None else end):
        return False
    return bool(buf[pos + count // 8] >> (count % 8))


#: What value conversions raise on bytes no server writes (invalid UTF-8, ...).
_VALUE_ERRORS = (ValueError, OverflowError, TypeError, KeyError, struct.error, IndexError)
_ROW_ERRORS = (*_VALUE_ERRORS, BinlogError)


def _decode_rows(kind: RowKind, buf: bytes, pos: int, decoder: RowsDecoder) -> list[Any]:
    end = len(buf)
    rows: list[Any] = []
    try:
        pos = decoder(buf, pos, end, rows)
    except BinlogError as exc:
        raise BinlogError(f"{kind.value} row {len(rows) + 1}: {exc.cause}") from None
    except (struct.error, IndexError):
        raise BinlogError(f"{kind.value} row {len(rows) + 1}: rows event is truncated") from None
    except _VALUE_ERRORS as exc:
        raise BinlogError(f"{kind.value} row {len(rows) + 1}: invalid value: {exc}") from None
    if pos != end:
        raise BinlogError(f"{kind.value} row {len(rows)}: image ends past the event")
    return rows


def decode_rows_event(
    header: EventHeader,
    body: bytes | memoryview,
    post_header_len: int,
    table_maps: Mapping[int, TableMapEvent],
) -> RowsEvent:
    """Decode a rows event body (after the common header, without checksum)."""
    data = bytes(HEADER_LEN) + bytes(body)
    return decode_rows_event_at(header, data, len(data), post_header_len, table_maps)


def _short(size: int, needed: int) -> BinlogError:
    return BinlogError(f"event is too short: {size} bytes of body, needs {needed}")


class _Plan(NamedTuple):
    """Everything a rows event's head (flags to bitmaps) says, decoded once per distinct head
    of a table: the fast path only decodes the table id and the rows."""

    kind: RowKind
    flags: int
    extra: bytes | None
    width: int
    present: int
    after_bits: int | None
    bitmap_padding: tuple[int, int]
    decoder: RowsDecoder


def _plan_head_size(definition: TableDefinition, type_code: int) -> int:
    """The head size of the events the fast path serves: no extra data, every column."""
    count = len(definition.columns)
    if count >= 251:
        return -1
    size = 2 + (0 if type_code in V1_TYPES else 2) + 1
    return size + ((count + 7) >> 3) * (2 if KIND.get(type_code) is RowKind.UPDATE else 1)


def decode_rows_event_at(
    header: EventHeader,
    data: bytes,
    end: int,
    post_header_len: int,
    table_maps: Mapping[int, TableMapEvent],
) -> RowsEvent:
    """Decode the rows event whose body is ``data[HEADER_LEN:end]``.

    A table's events repeat the same head (flags, widths, bitmaps), so a head seen before is
    looked up instead of decoded: then only the table id and the rows are read.
    """
    table = None
    if post_header_len == 10 and end - HEADER_LEN >= 6:
        low, high = _U32_U16.unpack_from(data, HEADER_LEN)
        table = table_maps.get(low | high << 32)
    if table is None or type(table) is not TableMapEvent:
        return _decode_rows_event(header, data, end, post_header_len, table_maps)
    type_code = header[1]
    definition = table.definition
    start = HEADER_LEN + 6
    plans = definition.plans.get(type_code)
    if plans is None:
        return _decode_rows_event(header, data, end, post_header_len, table_maps)
    pos = start + plans.head_size
    plan = plans.get(data[start:pos])
    if plan is None or pos > end:
        return _decode_rows_event(header, data, end, post_header_len, table_maps)
    _, flags, extra, width, present, after_bits, bitmap_padding, decoder = plan
    padding = _padding(data, pos, present, end)
    rows: list[Any] = []
    try:
        rows_end = decoder(data[:end] if end != len(data) else data, pos, end, rows)
    except _ROW_ERRORS:
        rows_end = -1
    if rows_end != end:  # let the general path say what is wrong
        return _decode_rows_event(header, data, end, post_header_len, table_maps)
    return RowsEvent(
        header, table.table_id, width, present, flags, extra, after_bits, rows, None, None,
        padding, bitmap_padding, 6, table,
    )  # fmt: skip


def _decode_rows_event(
    header: EventHeader,
    data: bytes,
    end: int,
    post_header_len: int,
    table_maps: Mapping[int, TableMapEvent],
) -> RowsEvent:
    """The general decoder: every layout, and the plan for the fast path of this one."""
    type_code = header.type_code
    kind = KIND.get(type_code)
    if kind is None:
        raise BinlogError(f"event type {type_code} is not a rows event")
    if end != len(data):
        data = data[:end]
    size = end - HEADER_LEN
    if post_header_len == 6:
        if size < 6:
            raise _short(size, 6)
        table_id, flags = _U32_U16.unpack_from(data, HEADER_LEN)
        pos = HEADER_LEN + 6
        id_size = 4
    else:
        if size < 8:
            raise _short(size, 8)
        low, high, flags = _ID_FLAGS_6.unpack_from(data, HEADER_LEN)
        table_id = low | high << 32
        pos = HEADER_LEN + 8
        id_size = 6
    extra: bytes | None = None
    if type_code not in V1_TYPES:
        if pos + 2 > end:
            raise _short(size, pos + 2 - HEADER_LEN)
        extra_len = data[pos] | data[pos + 1] << 8
        if extra_len < 2:
            raise BinlogError(f"rows event extra data length {extra_len} is below 2")
        pos += extra_len
        if pos > end:
            raise _short(size, pos - HEADER_LEN)
        extra = data[pos - extra_len + 2 : pos]
    if pos >= end:
        raise _short(size, pos + 1 - HEADER_LEN)
    width = data[pos]
    if width < 251:
        pos += 1
    else:
        reader = Reader(data, pos)
        width = reader.packed()
        pos = reader.pos
    if width == 0:
        raise BinlogError("rows event has no columns")
    table = table_maps.get(table_id)
    if not isinstance(table, TableMapEvent):
        raise BinlogError(f"rows event for table id {table_id} without a Table_map event")
    definition = table.definition
    if width > len(definition.columns):
        raise BinlogError(
            f"rows event has {width} columns, table {definition.schema}.{definition.table} "
            f"has {len(definition.columns)}"
        )
    bitmap_size = (width + 7) >> 3
    mask = (1 << width) - 1
    if pos + bitmap_size > end:
        raise _short(size, pos + bitmap_size - HEADER_LEN)
    raw = int.from_bytes(data[pos : pos + bitmap_size], "little")
    pos += bitmap_size
    present, pad_before = raw & mask, raw & ~mask
    after_bits: int | None = None
    pad_after = 0
    if kind is RowKind.UPDATE:
        if pos + bitmap_size > end:
            raise _short(size, pos + bitmap_size - HEADER_LEN)
        raw = int.from_bytes(data[pos : pos + bitmap_size], "little")
        pos += bitmap_size
        after_bits, pad_after = raw & mask, raw & ~mask
    partial = type_code == _PARTIAL
    if not present and not after_bits and pos < end and not partial:
        raise BinlogError("rows event has row data but its images have no columns")
    event = RowsEvent(
        header, table_id, width, present, flags, extra, after_bits, [], None, None,
        _padding(data, pos, present), (pad_before, pad_after), id_size, table,
    )  # fmt: skip
    if partial:
        assert after_bits is not None
        before_codecs = _codecs(definition, present, width)
        after_codecs = _codecs(definition, after_bits, width)
        try:
            rows, options, diffs = decode_partial_rows(
                data, pos, definition.columns, before_codecs, after_codecs, width
            )
        except BinlogError as exc:
            raise BinlogError(f"partial update rows: {exc.cause}") from None
        except _VALUE_ERRORS as exc:
            raise BinlogError(f"partial update rows: invalid value: {exc}") from None
        event.rows, event.value_options, event.json_diffs = rows, options, diffs
        return event
    decoder = _rows_decoder(definition, present, after_bits, width)
    if id_size == 6 and pos - HEADER_LEN - 6 == _plan_head_size(definition, type_code):
        head = data[HEADER_LEN + 6 : pos]
        plan = _Plan(kind, flags, extra, width, present, after_bits, (pad_before, pad_after),
                     decoder)  # fmt: skip
        definition.remember_plan(type_code, head, plan)
    event.rows = _decode_rows(kind, data, pos, decoder)
    return event


def encode_rows_event(event: RowsEvent, table_map: TableMapEvent) -> bytes:
    """The body of a rows event (after the common header, without checksum)."""
    out = bytearray(event.table_id.to_bytes(event.table_id_size, "little"))
    out += event.flags.to_bytes(2, "little")
    v1 = event.type_code in V1_TYPES
    if not v1:
        extra = event.extra_data or b""
        out += (len(extra) + 2).to_bytes(2, "little") + extra
    elif event.extra_data:
        raise BinlogError("v1 rows events carry no extra data")
    width = event.width
    if width > table_map.column_count:
        raise BinlogError(f"rows event has {width} columns, the table {table_map.column_count}")
    size = (width + 7) // 8
    out += pack_int(width)
    out += (event.columns_present | event.bitmap_padding[0]).to_bytes(size, "little")
    kind = event.kind
    if kind is RowKind.UPDATE:
        if event.columns_after is None:
            raise BinlogError("an UPDATE rows event needs an after-image bitmap")
        out += (event.columns_after | event.bitmap_padding[1]).to_bytes(size, "little")
    before = _codecs(table_map, event.columns_present, width)
    padding = event.null_padding
    if kind is not RowKind.UPDATE:
        for row in event.rows:
            out += encode_image(row, before, width, padding)
        return bytes(out)
    assert event.columns_after is not None
    after = _codecs(table_map, event.columns_after, width)
    partial = event.type_code == E.PARTIAL_UPDATE_ROWS
    for number, (old, new) in enumerate(event.rows):
        out += encode_image(old, before, width, padding)
        diffs = event.json_diffs[number] if partial and event.json_diffs else {}
        if partial:
            options = event.value_options[number] if event.value_options else 0
            out += encode_shared_image(table_map.columns, options, diffs)
        out += encode_image(new, after, width, padding, diffs)
    return bytes(out)
