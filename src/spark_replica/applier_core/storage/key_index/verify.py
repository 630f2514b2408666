"""Comparing a table's rows with the index: both sorted by key bytes, walked side by side."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from spark_replica_native import Cursor

from spark_replica.applier_core.storage.interface import Key, Row
from spark_replica.applier_core.storage.key_index.codec import decode_key
from spark_replica.applier_core.storage.key_index.entries import bag_row, keyed_row
from spark_replica.applier_core.storage.key_index.layout import Layout


@dataclass(frozen=True, slots=True)
class Difference:
    """A disagreement ``verify`` found. ``kind``: ``missing`` (in the table, not the index),
    ``extra`` (in the index only), ``different`` (same key, other row), ``duplicate`` (the
    table has the key twice), ``count`` (a keyless row's count differs), ``kind`` (keyed in
    one, keyless in the other)."""

    kind: str
    key: Key | None = None
    table_row: Row | None = None
    index_row: Row | None = None
    table_count: int = 0
    index_count: int = 0


def prefixed(cursor: Cursor, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
    found = cursor.set_range(prefix)
    while found:
        key = cursor.key()
        if not key.startswith(prefix):
            return
        yield key[8:], cursor.value()
        found = cursor.next()


def merge(
    theirs: Iterator[tuple[bytes, bytes]],
    mine: Iterator[tuple[bytes, bytes]],
    keyed: bool,
    limit: int,
    layout: Layout | None = None,
) -> list[Difference]:
    """The differences between the table's entries (``theirs``, rows as the table has them)
    and the index's (``mine``, rows as stored by ``layout``), both in key-bytes order."""
    differences: list[Difference] = []
    table_entry = next(theirs, None)
    index_entry = next(mine, None)
    while (table_entry or index_entry) and len(differences) < limit:
        if index_entry is None or (table_entry is not None and table_entry[0] < index_entry[0]):
            assert table_entry is not None
            differences.append(_one_sided("missing", table_entry, keyed, None, table_side=True))
            table_entry = next(theirs, None)
        elif table_entry is None or index_entry[0] < table_entry[0]:
            differences.append(_one_sided("extra", index_entry, keyed, layout, table_side=False))
            index_entry = next(mine, None)
        else:
            difference = _compare_entries(table_entry, index_entry, keyed, layout)
            if difference is not None:
                differences.append(difference)
            table_entry = next(theirs, None)
            index_entry = next(mine, None)
    return differences


def _one_sided(
    kind: str, entry: tuple[bytes, bytes], keyed: bool, layout: Layout | None, *, table_side: bool
) -> Difference:
    if keyed:
        raw, row = keyed_row(*entry)
        key = decode_key(raw)
        if layout is not None:
            row = layout.read(row)
        if table_side:
            return Difference(kind, key, table_row=row)
        return Difference(kind, key, index_row=row)
    row, count = bag_row(*entry)
    if table_side:
        return Difference(kind, table_row=row, table_count=count)
    return Difference(kind, index_row=row, index_count=count)


def _compare_entries(
    table_entry: tuple[bytes, bytes],
    index_entry: tuple[bytes, bytes],
    keyed: bool,
    layout: Layout | None,
) -> Difference | None:
    if keyed:
        raw, table_row = keyed_row(*table_entry)
        index_row = keyed_row(*index_entry)[1]
        if layout is not None:
            index_row = layout.read(index_row)
        if _same(table_row, index_row):
            return None
        return Difference("different", decode_key(raw), table_row, index_row)
    table_row, table_count = bag_row(*table_entry)
    index_row, index_count = bag_row(*index_entry)
    if table_count == index_count:
        return None
    return Difference("count", None, table_row, index_row, table_count, index_count)


def _same(left: Row, right: Row) -> bool:
    return len(left) == len(right) and all(
        type(a) is type(b) and a == b for a, b in zip(left, right, strict=True)
    )
