"""Layouts: where a keyed table's columns lie in the rows the key index stores, so that an
ALTER adding, dropping or moving columns (an Iceberg schema change) copies no row
(requirement: ADD/DROP COLUMN and reordering are metadata-only). The index records the
layout with the batch of the ALTER: an undo takes it out with the batch, a restart reads it,
and verify compares the table's rows with the stored ones read through it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from spark_replica.applier_core.storage.key_index import (
    KeyIndexError,
    LmdbKeyIndex,
    TableChanges,
)
from spark_replica.applier_core.storage.key_index.layout import Layout


def key_of(row: tuple[object, ...]) -> tuple[object, ...]:
    return (row[0],)


@pytest.fixture
def index(tmp_path: Path) -> Iterator[LmdbKeyIndex]:
    with LmdbKeyIndex(tmp_path / "index", sync=False) as opened:
        yield opened


def test_added_dropped_and_moved_columns_take_and_leave_slots() -> None:
    start = Layout.identity(3)  # (id, a, b)
    added = start.after((0, 1, 2, None))  # (id, a, b, c)
    dropped = added.after((0, 2, 3))  # (id, b, c)
    moved = dropped.after((2, 0, 1))  # (c, id, b)
    assert (added.slots, added.width) == ((0, 1, 2, 3), 4)
    assert (dropped.slots, dropped.width) == ((0, 2, 3), 4)
    assert (moved.slots, moved.width) == ((3, 0, 2), 4)
    old, new = (1, "a", "b"), moved.place(("c", 2, "b2"))
    assert new == (2, None, "b2", "c")  # the dropped slot holds NULL
    assert moved.read(old) == (None, 1, "b")  # a slot the row predates reads NULL
    assert moved.read(new) == ("c", 2, "b2")
    assert added.read(old) == (1, "a", "b", None)  # in order: padded
    assert start.read(added.place((1, "a", "b", "c"))) == (1, "a", "b")  # a wider row: cut
    assert Layout.unpack(moved.pack()) == moved


def test_a_batch_records_the_layout_and_places_its_rows(index: LmdbKeyIndex) -> None:
    index.apply(1, {7: TableChanges(replace=[(1, "a"), (2, "b")], key_of=key_of)})
    moved = Layout.identity(2).after((None, 1, 0))  # (c, v, id)
    index.apply(2, {7: TableChanges(layout=moved, puts={(3,): ("x", "c", 3)})})
    assert index.layout(7) == moved
    assert index.get(7, (3,)) == (3, "c", "x")  # as stored: the slots' order
    assert index.get(7, (1,)) == (1, "a")
    last = lambda row: (row[2],)  # noqa: E731 - the key column moved last
    assert index.verify(7, [(None, "a", 1), (None, "b", 2), ("x", "c", 3)], last) == []
    differences = index.verify(7, [(None, "a", 1), ("y", "b", 2), ("x", "c", 3)], last)
    assert [(d.kind, d.key, d.table_row, d.index_row) for d in differences] == [
        ("different", (2,), ("y", "b", 2), (None, "b", 2))
    ]


def test_undo_takes_the_layout_out_with_its_batch(tmp_path: Path) -> None:
    path = tmp_path / "index"
    moved = Layout.identity(2).after((1, 0))
    with LmdbKeyIndex(path, sync=False) as index:
        index.apply(1, {7: TableChanges(replace=[(1, "a")], key_of=key_of)})
        index.apply(2, {7: TableChanges(layout=moved, puts={(2,): ("b", 2)})})
    with LmdbKeyIndex(path, sync=False) as index:
        assert index.layout(7) == moved  # recorded: read again at opening
        index.align(1)  # the commit point of batch 2 was not recorded
        assert index.layout(7) is None
        assert index.get(7, (2,)) is None
        # a later batch's changes keep the layout, a rewrite of the table drops it
        index.apply(2, {7: TableChanges(layout=moved, puts={(2,): ("b", 2)})})
        index.apply(3, {7: TableChanges(puts={(3,): ("c", 3)})})
        assert (index.layout(7), index.get(7, (3,))) == (moved, (3, "c"))
        index.apply(4, {7: TableChanges(replace=[(1, "a")], key_of=key_of)})
        assert index.layout(7) is None


def test_a_keyless_table_has_no_layout(index: LmdbKeyIndex) -> None:
    index.apply(1, {7: TableChanges(replace=[(1, "a")], key_of=None)})
    with pytest.raises(KeyIndexError, match="not keyed"):
        index.apply(2, {7: TableChanges(layout=Layout.identity(3))})
    assert index.layout(7) is None
