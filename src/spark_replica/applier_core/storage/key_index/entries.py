"""The index's entries as bytes: a table's catalogue entry, data keys and values.

A data key is the table generation (8 bytes, big-endian) and the key's bytes. Keys longer
than ``KEY_LIMIT`` (LMDB refuses keys over 511 bytes) are stored as a prefix and a BLAKE2b
digest, exactly ``KEY_LIMIT`` bytes, which no literal key is; a keyed table's value then
starts with the whole key, so scans still give keys back. A keyed table's value is the row;
a keyless table's is the row's count, followed by the exact row when the key encoding
normalised it or had to be hashed (otherwise the key decodes to the row).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import itemgetter

from spark_replica.applier_core.storage.interface import Key, Row
from spark_replica.applier_core.storage.key_index.codec import (
    NATIVE,
    decode_key,
    decode_row,
    encode_key,
    encode_row,
)
from spark_replica.applier_core.storage.key_index.layout import Layout

U64 = struct.Struct(">Q")
TABLE_ID = struct.Struct(">q")
_TABLE = struct.Struct(">QBQ")  # generation, keyed, rows
_LENGTH = struct.Struct(">I")
#: With the 8-byte generation and the 1-byte undo tag: 489 bytes, under LMDB's 511.
KEY_LIMIT = 480
_DIGEST = 16
_HASHED_PREFIX = KEY_LIMIT - _DIGEST
_first = itemgetter(0)


@dataclass(frozen=True, slots=True)
class TableEntry:
    """A table's catalogue entry: its generation (as the data key prefix), whether it has
    a primary key, its row count, and where its columns lie in the stored rows (None: the
    identity; packed after the rest when recorded)."""

    prefix: bytes
    keyed: bool
    rows: int
    layout: Layout | None = field(default=None)

    @staticmethod
    def parse(raw: bytes) -> TableEntry:
        generation, keyed, rows = _TABLE.unpack_from(raw)
        layout = Layout.unpack(raw[_TABLE.size :]) if len(raw) > _TABLE.size else None
        return TableEntry(U64.pack(generation), bool(keyed), rows, layout)

    @property
    def generation(self) -> int:
        return int(U64.unpack(self.prefix)[0])

    def pack(self) -> bytes:
        packed = _TABLE.pack(self.generation, self.keyed, self.rows)
        return packed if self.layout is None else packed + self.layout.pack()


def stored_key(raw: bytes) -> bytes:
    if len(raw) < KEY_LIMIT:
        return raw
    return raw[:_HASHED_PREFIX] + hashlib.blake2b(raw, digest_size=_DIGEST).digest()


def keyed_value(raw_key: bytes, row: Row) -> bytes:
    if len(raw_key) < KEY_LIMIT:
        return encode_row(row)
    return _LENGTH.pack(len(raw_key)) + raw_key + encode_row(row)


def data_keys(prefix: bytes, keys: list[Key]) -> list[bytes]:
    """The data keys of ``keys`` in the table whose entries start with ``prefix``."""
    if NATIVE is not None:
        found: list[bytes] | None = NATIVE.stored_keys(prefix, keys, KEY_LIMIT)
        if found is not None:
            return found
    return data_keys_in_python(prefix, keys)


def data_keys_in_python(prefix: bytes, keys: list[Key]) -> list[bytes]:
    """``data_keys`` without the native core (which gives the same keys)."""
    return [prefix + stored_key(encode_key(key)) for key in keys]


def keyed_entries(
    prefix: bytes, items: list[tuple[Key, Row | None]], layout: Layout | None
) -> list[tuple[bytes, bytes | None]]:
    """A keyed table's changes (key → row in the table's columns, None deleting) as data
    entries: the data key and the value (None for a delete), sorted by data key; rows
    placed by ``layout``."""
    if layout is not None:
        items = [(key, None if row is None else layout.place(row)) for key, row in items]
    if NATIVE is not None:
        found: list[tuple[bytes, bytes | None]] | None = NATIVE.keyed_entries(
            prefix, items, KEY_LIMIT
        )
        if found is not None:
            return found
    return keyed_entries_in_python(prefix, items)


def keyed_entries_in_python(
    prefix: bytes, items: list[tuple[Key, Row | None]]
) -> list[tuple[bytes, bytes | None]]:
    """``keyed_entries`` (rows placed already) without the native core, which gives the
    same entries (rows encoded alike: ``codec``)."""
    entries = []
    for key, row in items:
        raw = encode_key(key)
        value = None if row is None else keyed_value(raw, row)
        entries.append((prefix + stored_key(raw), value))
    entries.sort(key=_first)
    return entries


def keyed_row(stored_key: bytes, value: bytes) -> tuple[bytes, Row]:
    """The key bytes and row of a keyed entry (``stored_key`` without the generation)."""
    if len(stored_key) < KEY_LIMIT:
        return stored_key, decode_row(value)
    (length,) = _LENGTH.unpack_from(value)
    return value[4 : 4 + length], decode_row(value[4 + length :])


def bag_value(count: int, raw: bytes, exact: bool, row: Row, previous: bytes | None) -> bytes:
    if previous is not None:
        return U64.pack(count) + previous[8:]
    if exact and len(raw) < KEY_LIMIT:
        return U64.pack(count)
    return U64.pack(count) + encode_row(row)


def bag_row(stored_key: bytes, value: bytes) -> tuple[Row, int]:
    (count,) = U64.unpack_from(value)
    if len(value) > 8:
        return decode_row(value[8:]), count
    return decode_key(stored_key), count


def pack_generations(generations: Iterable[int]) -> bytes:
    return b"".join(U64.pack(g) for g in generations)


def unpack_generations(raw: bytes | None) -> list[int]:
    return [g for (g,) in U64.iter_unpack(raw)] if raw else []
