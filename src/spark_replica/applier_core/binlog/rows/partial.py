"""PARTIAL_UPDATE_ROWS_EVENT (39) row images (``rpl_record.h``: before image, shared image,
after image).

The shared image is ``value_options`` (packed integer; bit 0 = PARTIAL_JSON_UPDATES) followed,
when that bit is set, by one bit per JSON column of the table (LSB first): 1 when the column's
after value is a list of diffs rather than a document. The diffs are applied to the column's
before value to give the after value; the diffs themselves are kept for re-encoding.

These rows go through a plain interpreter rather than the compiled decoders: partial updates
are rare and need the JSON trees of the before image.
"""

from __future__ import annotations

import struct
from typing import Any

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.packing import Reader, pack_int
from spark_replica.applier_core.binlog.rows.columns import ColumnSpec, T
from spark_replica.applier_core.binlog.rows.json_binary import JsonValue, decode_json
from spark_replica.applier_core.binlog.rows.json_diff import (
    JsonDiff,
    PartialJson,
    apply_diffs,
    decode_diffs,
    encode_diffs,
)
from spark_replica.applier_core.binlog.rows.json_text import JsonText, to_text
from spark_replica.applier_core.binlog.rows.values import ABSENT, Codec

PARTIAL_JSON_UPDATES = 1
Row = tuple[Any, ...]
Diffs = dict[int, tuple[JsonDiff, ...]]


def read_value(codec: Codec, reader: Reader) -> Any:
    """One non-NULL value, bounds-checked (the interpreter counterpart of compiled code)."""
    if codec.prefix:
        raw: Any = reader.bytes(reader.uint(codec.prefix))
    elif codec.fmt:
        raw = reader.bytes(codec.size)
        if codec.fmt[-1] != "s":
            raw = struct.unpack("<" + codec.fmt, raw)[0]
    else:
        return None
    return codec.convert(raw) if codec.convert is not None else raw


def _image(
    reader: Reader,
    codecs: dict[int, Codec],
    width: int,
    partial: frozenset[int],
    trees: dict[int, JsonValue] | None,
) -> tuple[list[Any], Diffs]:
    present = sorted(codecs)
    nulls = reader.uint((len(present) + 7) // 8)
    values: list[Any] = [ABSENT] * width
    diffs: Diffs = {}
    for bit, index in enumerate(present):
        codec = codecs[index]
        if nulls >> bit & 1:
            values[index] = None
        elif index in partial:
            diffs[index] = decode_diffs(reader.bytes(reader.u32()))
        elif trees is not None and codec.spec.type == T.JSON:
            raw = reader.bytes(reader.uint(codec.prefix))
            trees[index] = decode_json(raw) if raw else None
            values[index] = JsonText(to_text(trees[index]), raw)
        else:
            values[index] = read_value(codec, reader)
    return values, diffs


def read_image(reader: Reader, codecs: dict[int, Codec], width: int) -> tuple[Any, ...]:
    """One row image, read value by value: the reference for the compiled decoders."""
    values, _ = _image(reader, codecs, width, frozenset(), None)
    return tuple(values)


def decode_partial_rows(
    buf: bytes,
    pos: int,
    columns: tuple[ColumnSpec, ...],
    before: dict[int, Codec],
    after: dict[int, Codec],
    width: int,
) -> tuple[list[tuple[Row, Row]], list[int], list[Diffs]]:
    """(rows, value_options per row, diffs per row) of a partial update's row data."""
    reader = Reader(buf, pos)
    json_columns = [c.index for c in columns if c.type == T.JSON]
    rows: list[tuple[Row, Row]] = []
    options: list[int] = []
    all_diffs: list[Diffs] = []
    while reader.remaining:
        trees: dict[int, JsonValue] = {}
        old, _ = _image(reader, before, width, frozenset(), trees)
        value_options = reader.packed()
        partial: frozenset[int] = frozenset()
        if value_options & PARTIAL_JSON_UPDATES:
            bits = reader.uint((len(json_columns) + 7) // 8)
            partial = frozenset(i for n, i in enumerate(json_columns) if bits >> n & 1)
        new, diffs = _image(reader, after, width, partial, None)
        for index, column_diffs in diffs.items():
            if index in trees:
                new[index] = to_text(apply_diffs(trees[index], column_diffs))
            else:
                new[index] = PartialJson(column_diffs)
        rows.append((tuple(old), tuple(new)))
        options.append(value_options)
        all_diffs.append(diffs)
    return rows, options, all_diffs


def encode_image(
    row: Row, codecs: dict[int, Codec], width: int, padding: bool, diffs: Diffs | None = None
) -> bytes:
    """One row image: NULL bitmap over the present columns, then their values."""
    if len(row) != width:
        raise BinlogError(f"row has {len(row)} values for {width} columns")
    present = sorted(codecs)
    nulls = 0
    parts: list[bytes] = []
    for bit, index in enumerate(present):
        value = row[index]
        if diffs and index in diffs:
            payload = encode_diffs(diffs[index])
            parts.append(len(payload).to_bytes(4, "little") + payload)
        elif value is None:
            nulls |= 1 << bit
        elif value is ABSENT:
            raise BinlogError(f"{codecs[index].spec.describe()} is in the image but ABSENT")
        else:
            parts.append(codecs[index].encode(value))
    for index in range(width):
        if index not in codecs and row[index] is not ABSENT:
            raise BinlogError(f"column {index + 1} is not in the image but has a value")
    count = len(present)
    if padding and count % 8:
        nulls |= ((1 << (8 - count % 8)) - 1) << count
    return nulls.to_bytes((count + 7) // 8, "little") + b"".join(parts)


def encode_shared_image(columns: tuple[ColumnSpec, ...], value_options: int, diffs: Diffs) -> bytes:
    out = pack_int(value_options)
    if value_options & PARTIAL_JSON_UPDATES:
        json_columns = [c.index for c in columns if c.type == T.JSON]
        bits = sum(1 << n for n, index in enumerate(json_columns) if index in diffs)
        out += bits.to_bytes((len(json_columns) + 7) // 8, "little")
    elif diffs:
        raise BinlogError("JSON diffs need value_options with PARTIAL_JSON_UPDATES")
    return out
