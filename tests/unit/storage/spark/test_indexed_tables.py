"""The Spark engine's tables without Spark: an overlay of unflushed commits over the key
index, drained once the index holds a flushed batch."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from spark_replica.applier_core.storage.interface import Column, TableDef, TableRef
from spark_replica.applier_core.storage.key_index import LmdbKeyIndex, TableChanges
from spark_replica.applier_core.storage.memory_tables import Stage
from spark_replica.applier_core.storage.spark.indexed_tables import Content, IndexedTable

KEYED = TableDef((Column("id", "INT", False), Column("v", "VARCHAR(10)", True)), (0,))
KEYLESS = TableDef((Column("a", "INT", True), Column("b", "VARCHAR(10)", True)), ())
T = TableRef("d", "t")


def stage(table: IndexedTable, **changes: Any) -> Stage:
    found = Stage(table)
    found.changes.update(changes.get("keyed", {}))
    found.deltas.update(changes.get("deltas", {}))
    return found


def test_a_keyed_table_reads_its_overlay_then_the_index(tmp_path: Path) -> None:
    with LmdbKeyIndex(tmp_path / "index", sync=False) as index:
        index.apply(1, {7: TableChanges(replace=[(1, "a"), (2, "b")], key_of=lambda r: r[:1])})
        table = IndexedTable(T, KEYED, Content(index, 7))
        assert table.get((1,)) == (1, "a") and table.get((3,)) is None
        table.commit(stage(table, keyed={(1,): None, (3,): (3, "c")}), 1)
        table.commit(stage(table, keyed={(2,): (2, "B")}), 2)
        assert table.get((1,)) is None and table.get((3,)) == (3, "c")
        assert sorted(table.snapshot()) == [(2, "B"), (3, "c")]
        # Commit 1 is flushed: the index holds it, its entries go; commit 2's stays.
        index.apply(2, {7: TableChanges(puts={(1,): None, (3,): (3, "c")})})
        table.content.drain(1)
        assert set(table.content.entries) == {(2,)}
        assert table.get((1,)) is None and table.get((3,)) == (3, "c")
        assert table.get((2,)) == (2, "B")
        assert sorted(table.renamed(TableRef("d", "u")).snapshot()) == [(2, "B"), (3, "c")]


def test_present_reads_the_overlay_then_the_index_in_one_go(tmp_path: Path) -> None:
    with LmdbKeyIndex(tmp_path / "index", sync=False) as index:
        index.apply(1, {7: TableChanges(replace=[(1, "a"), (2, "b")], key_of=lambda r: r[:1])})
        table = IndexedTable(T, KEYED, Content(index, 7))
        table.commit(stage(table, keyed={(1,): None, (3,): (3, "c")}), 1)
        keys = [(1,), (2,), (3,), (4,)]
        assert table.present(keys) == [False, True, True, False]
        assert table.present(keys) == [table.get(key) is not None for key in keys]
        created = IndexedTable(T, KEYED, Content(index, None))  # the overlay is complete
        created.load([(2, "x")])
        assert created.present(keys) == [False, True, False, False]


def test_a_later_commit_keeps_its_entry_when_an_earlier_one_is_drained(tmp_path: Path) -> None:
    with LmdbKeyIndex(tmp_path / "index", sync=False) as index:
        index.apply(1, {1: TableChanges(replace=[], key_of=lambda r: r[:1])})
        table = IndexedTable(T, KEYED, Content(index, 1))
        table.commit(stage(table, keyed={(1,): (1, "a")}), 1)
        table.commit(stage(table, keyed={(1,): (1, "b")}), 2)  # overwrites commit 1's entry
        index.apply(2, {1: TableChanges(puts={(1,): (1, "a")})})
        table.content.drain(1)
        assert table.get((1,)) == (1, "b")


def test_a_keyless_table_keeps_counts_in_its_overlay(tmp_path: Path) -> None:
    with LmdbKeyIndex(tmp_path / "index", sync=False) as index:
        index.apply(1, {2: TableChanges(replace=[(1, "x"), (1, "x"), (2, "y")])})
        table = IndexedTable(T, KEYLESS, Content(index, 2))
        assert table.count((1, "x")) == 2
        table.commit(stage(table, deltas={(1, "x"): -2, (3, "z"): 1}), 1)
        assert table.count((1, "x")) == 0 and table.count((3, "z")) == 1
        assert table.counts() == Counter({(2, "y"): 1, (3, "z"): 1})
        index.apply(2, {2: TableChanges(deltas={(1, "x"): -2, (3, "z"): 1})})
        table.content.drain(1)
        assert not table.content.entries
        assert table.counts() == Counter({(2, "y"): 1, (3, "z"): 1})


def test_a_table_made_by_ddl_lives_in_its_overlay_until_rebased(tmp_path: Path) -> None:
    with LmdbKeyIndex(tmp_path / "index", sync=False) as index:
        table = IndexedTable(T, KEYED, Content(index, None))  # CREATE / TRUNCATE / ALTER
        table.load([(1, "a")])
        table.commit(stage(table, keyed={(2,): (2, "b")}), 4)
        table.commit(stage(table, keyed={(3,): (3, "c")}), 5)
        assert table.get((2,)) == (2, "b")
        table.content.drain(4)  # nothing drains before the table is in the index
        assert len(table.content.entries) == 3
        rows = [(1, "a"), (2, "b")]
        index.apply(1, {9: TableChanges(replace=rows, key_of=lambda r: r[:1])})
        table.content.rebase(9, 4)
        assert set(table.content.entries) == {(3,)}
        assert sorted(table.snapshot()) == [(1, "a"), (2, "b"), (3, "c")]
