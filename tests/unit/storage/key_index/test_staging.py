"""Staged content in the key index: the rows an ALTER TABLE converted, loaded a chunk at a
time outside the batches, read under a stage id, adopted by the batch that records the
ALTER, and gone after a crash before it (CPT.0030: recovery resumes from a consistent
point; nothing of an ALTER that did not reach the commit point stays)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from spark_replica.applier_core.storage.key_index import (
    KeyIndexDuplicate,
    LmdbKeyIndex,
    TableChanges,
    lmdb_index,
)

__all__ = ["index"]  # the fixture
from spark_replica.applier_core.storage.key_index.lmdb_index import _GARBAGE, unpack_generations
from tests.unit.storage.key_index.test_lmdb_index import index, raw_state
from tests.unit.storage.key_index.workload import key_of


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lmdb_index, "CHUNK_ROWS", 3)


def garbage(index: LmdbKeyIndex) -> list[int]:
    with index._env.begin() as txn:
        return unpack_generations(txn.get(_GARBAGE, db=index._meta))


def with_old_table(index: LmdbKeyIndex) -> None:
    rows = [(k, f"v{k}") for k in range(10)]
    index.apply(1, {7: TableChanges(replace=rows, key_of=key_of)})


@pytest.mark.usefixtures("small_chunks")
def test_staged_rows_are_read_under_the_stage_id(index: LmdbKeyIndex) -> None:
    with_old_table(index)
    stage = index.stage(((k, f"w{k}", k * 2) for k in range(10)), key_of)
    assert stage < 0
    assert index.batch == 1  # outside the batches
    assert index.get(stage, (4,)) == (4, "w4", 8)
    assert index.size(stage) == 10
    assert index.get(7, (4,)) == (4, "v4")  # the table itself is as it was


@pytest.mark.usefixtures("small_chunks")
def test_a_key_twice_names_its_row_and_stages_nothing(index: LmdbKeyIndex) -> None:
    with_old_table(index)
    rows = [(k % 8, f"w{k}") for k in range(10)]  # keys 0 and 1 again, in the fourth chunk
    with pytest.raises(KeyIndexDuplicate) as raised:
        index.stage(rows, key_of)
    assert key_of(raised.value.row) in {(0,), (1,)}
    assert index.table_ids() == [7]
    assert garbage(index)  # the chunks loaded before are reclaimed
    index.reclaim()
    assert not garbage(index)
    with index._env.begin() as txn:
        assert txn.stat(index._data)["entries"] == 10  # the table's rows alone


def test_a_key_twice_within_one_chunk_is_found(index: LmdbKeyIndex) -> None:
    with pytest.raises(KeyIndexDuplicate) as raised:
        index.stage([(1, "a"), (2, "b"), (1, "c")], key_of)
    assert raised.value.row[0] == 1


def test_an_error_from_the_rows_stages_nothing(index: LmdbKeyIndex) -> None:
    def rows() -> Iterator[tuple[int, str]]:
        yield (1, "a")
        raise ValueError("a value that does not convert")

    with pytest.raises(ValueError, match="does not convert"):
        index.stage(rows(), key_of)
    assert index.table_ids() == []
    assert garbage(index)


def test_a_batch_adopts_the_stage_and_undo_gives_it_back(index: LmdbKeyIndex) -> None:
    with_old_table(index)
    stage = index.stage([(k, f"w{k}") for k in range(5)], key_of)
    before = raw_state(index)
    index.apply(2, {7: TableChanges(adopt=stage, puts={(9,): (9, "new")})})
    assert index.get(7, (3,)) == (3, "w3")
    assert index.get(7, (9,)) == (9, "new")
    assert index.size(7) == 6
    index.undo(2)  # a crash before the commit point: the table and the stage as they were
    assert raw_state(index) == before
    assert index.get(stage, (9,)) is None


def test_unstage_after_adoption_keeps_the_rows(index: LmdbKeyIndex) -> None:
    with_old_table(index)
    stage = index.stage([(k, f"w{k}") for k in range(5)], key_of)
    index.apply(2, {7: TableChanges(adopt=stage)})
    index.unstage(stage)
    index.apply(3, {})  # batch 2 can no longer be undone: the old content becomes garbage
    index.reclaim()
    assert index.table_ids() == [7]
    assert sorted(index.rows(7)) == [(k, f"w{k}") for k in range(5)]


def test_stages_left_by_a_crash_are_dropped_and_reclaimed(tmp_path: Path) -> None:
    path = tmp_path / "index"
    with LmdbKeyIndex(path, sync=False) as index:
        with_old_table(index)
        adopted = index.stage([(1, "a")], key_of)
        index.apply(2, {8: TableChanges(adopt=adopted)})  # recorded, not yet unstaged
        left = index.stage([(2, "b")], key_of)  # its ALTER never reached a batch
    with LmdbKeyIndex(path, sync=False) as index:
        assert set(index.table_ids()) == {adopted, left, 7, 8}
        index.drop_stages()
        assert index.table_ids() == [7, 8]
        assert garbage(index) == [-left]
        index.reclaim()
        assert index.get(8, (1,)) == (1, "a")
