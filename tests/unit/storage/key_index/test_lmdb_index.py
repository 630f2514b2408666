"""The LMDB key index: batches, undo to the recorded commit point, scans, rebuild, verify,
map growth.

The index answers the STRICT checks (1062 duplicate key, 1032 key not found) and completes
partial row images (MINIMAL/NOBLOB), so after a crash it must equal the tables at the
recorded commit point exactly: apply then undo leaves it byte for byte as it was (CPT.0030:
recovery resumes from a consistent point)."""

from __future__ import annotations

import marshal
import pickle
import random
from collections import Counter
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.storage.key_index import (
    Difference,
    KeyIndexError,
    KeyIndexOutOfDate,
    LmdbKeyIndex,
    TableChanges,
    lmdb_index,
)
from spark_replica.applier_core.storage.key_index.codec import CODEC_VERSION, encode_key
from tests.unit.storage.key_index.workload import (
    KEYED,
    KEYLESS,
    Model,
    batches,
    key_of,
    model_after,
    writes_for,
)


@pytest.fixture
def index(tmp_path: Path) -> Iterator[LmdbKeyIndex]:
    with LmdbKeyIndex(tmp_path / "index", sync=False) as opened:
        yield opened


def raw_state(index: LmdbKeyIndex) -> dict[str, object]:
    """Everything that makes the index's content, as stored bytes: the batch, the tables'
    entries, and the data entries under the generations those name."""
    env = index._env
    with env.begin() as txn:
        tables = dict(txn.items(db=index._tables))
        prefixes = {value[:8] for value in tables.values()}
        data = [(key, value) for key, value in txn.items(db=index._data) if key[:8] in prefixes]
        batch = txn.get(b"batch", db=index._meta)
    return {"batch": batch, "tables": tables, "data": data}


def test_a_new_index_is_at_batch_zero(index: LmdbKeyIndex) -> None:
    assert index.batch == 0
    assert index.table_ids() == []
    assert index.get(1, (1,)) is None
    assert index.count(1, (1,)) == 0
    assert list(index.rows(1)) == []


def test_batches_give_the_model_content(index: LmdbKeyIndex) -> None:
    model = Model()
    for number, writes in batches(1, 12):
        index.apply(number, writes)
        model.apply(writes)
        assert index.batch == number
        assert model.matches(index)


def test_get_and_count_see_the_rows(index: LmdbKeyIndex) -> None:
    row = (7, "seven", Decimal("7.00"), None)
    index.apply(
        1,
        {
            1: TableChanges(replace=[row], key_of=key_of),
            2: TableChanges(replace=[(1, -0.0), (1, 0.0), (2, "x")], key_of=None),
        },
    )
    assert index.get(1, (7,)) == row
    assert str(index.get(1, (7,))[2]) == "7.00"  # type: ignore[index]
    assert index.get(1, (8,)) is None
    assert index.count(2, (1, 0.0)) == 2
    assert sorted(index.rows(2), key=repr) == [(1, -0.0), (1, -0.0), (2, "x")]
    assert index.size(1) == 1 and index.size(2) == 3


def test_present_tells_each_key_in_one_read(index: LmdbKeyIndex) -> None:
    long = "k" * 600  # stored as a prefix and a digest
    index.apply(1, {1: TableChanges(replace=[(7, "a"), (-3, "b")], key_of=key_of)})
    index.apply(2, {3: TableChanges(replace=[(long, 1)], key_of=key_of)})
    assert index.present(1, [(7,), (8,), (-3,), (7,)]) == [True, False, True, True]
    assert index.present(3, [(long,), (long[:-1],)]) == [True, False]
    assert index.present(2, [(7,)]) == [False]  # no such table
    assert index.present(1, []) == []
    index.apply(3, {1: TableChanges(puts={(7,): None, (8,): (8, "c")})})
    assert index.present(1, [(7,), (8,)]) == [False, True]


def test_a_batch_must_be_the_next_one(index: LmdbKeyIndex) -> None:
    index.apply(1, writes_for(1))
    for wrong in (1, 3):
        with pytest.raises(KeyIndexError, match=f"batch {wrong} applied to a key index at 1"):
            index.apply(wrong, writes_for(2))
    assert index.batch == 1


def test_dropping_an_unknown_table_is_no_change(index: LmdbKeyIndex) -> None:
    """A batch that created and dropped a table may still name it."""
    index.apply(1, {5: TableChanges(drop=True)})
    assert index.table_ids() == [] and index.batch == 1
    index.undo(1)
    assert index.batch == 0


def test_a_failed_batch_changes_nothing(index: LmdbKeyIndex) -> None:
    index.apply(1, writes_for(1))
    before = raw_state(index)
    with pytest.raises(KeyIndexError, match="unknown"):
        index.apply(2, {KEYED: TableChanges(puts={(1,): (1,)}),
                        99: TableChanges(puts={(1,): (1,)})})  # fmt: skip
    assert raw_state(index) == before
    assert index.batch == 1


@pytest.mark.parametrize("seed", range(6))
def test_undo_restores_the_state_byte_for_byte(index: LmdbKeyIndex, seed: int) -> None:
    """Puts, deletes, keyless deltas, drops, replaces and creates, each undone exactly."""
    for number, writes in batches(1, 4 + seed):
        index.apply(number, writes)
    before = raw_state(index)
    rng = random.Random(seed)
    last = 4 + seed
    writes = writes_for(last + 1)
    writes[50 + seed] = TableChanges(replace=[(rng.random(),)], key_of=key_of)  # a create
    writes[3] = TableChanges(drop=True) if seed % 2 else TableChanges(replace=[], key_of=None)
    index.apply(last + 1, writes)
    assert raw_state(index) != before
    index.undo(last + 1)
    assert raw_state(index) == before
    assert index.batch == last
    assert model_after(last).matches(index)
    index.apply(last + 1, writes_for(last + 1))  # the batch applies again after its undo
    assert model_after(last + 1).matches(index)


def test_only_the_last_batch_can_be_undone(index: LmdbKeyIndex) -> None:
    for number, writes in batches(1, 3):
        index.apply(number, writes)
    with pytest.raises(KeyIndexError, match="undo of batch 2 asked of a key index at 3"):
        index.undo(2)
    index.undo(3)
    with pytest.raises(KeyIndexError, match="no undo records for batch 2"):
        index.undo(2)


def test_align_undoes_one_batch_or_asks_for_a_rebuild(index: LmdbKeyIndex) -> None:
    for number, writes in batches(1, 3):
        index.apply(number, writes)
    index.align(3)
    assert index.batch == 3
    index.align(2)
    assert index.batch == 2 and model_after(2).matches(index)
    with pytest.raises(KeyIndexOutOfDate) as raised:
        index.align(1)  # two behind: the undo of batch 2 is gone
    assert (raised.value.index_batch, raised.value.recorded_batch) == (2, 1)
    assert "batch 2" in str(raised.value) and "batch 1" in str(raised.value)
    with pytest.raises(KeyIndexOutOfDate):
        index.align(5)


def test_the_index_reopens_where_it_was(tmp_path: Path) -> None:
    with LmdbKeyIndex(tmp_path / "index") as index:
        for number, writes in batches(1, 5):
            index.apply(number, writes)
    with LmdbKeyIndex(tmp_path / "index") as index:
        assert index.batch == 5
        assert model_after(5).matches(index)
        index.align(4)  # the undo records survive the restart
        assert model_after(4).matches(index)


def test_retired_generations_are_reclaimed(index: LmdbKeyIndex) -> None:
    rows = [(i, "x" * 20) for i in range(3000)]
    index.apply(1, {1: TableChanges(replace=rows, key_of=key_of)})
    index.apply(2, {1: TableChanges(drop=True)})
    assert len(raw_state(index)["data"]) == 0  # type: ignore[arg-type]
    assert index.reclaim(budget=0) == 0  # retired, not yet garbage: batch 2 can be undone
    index.undo(2)
    assert sorted(index.rows(1)) == rows
    index.apply(2, {1: TableChanges(drop=True)})
    index.apply(3, {})  # batch 2 can no longer be undone: its retired generation is garbage
    with index._env.begin() as txn:
        assert txn.stat(index._data)["entries"] == 0


def test_reclaim_is_bounded_per_batch(index: LmdbKeyIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lmdb_index, "RECLAIM_PER_BATCH", 100)
    index.apply(1, {1: TableChanges(replace=[(i,) for i in range(250)], key_of=key_of)})
    index.apply(2, {1: TableChanges(drop=True)})
    entries = []
    for number in (3, 4, 5):
        index.apply(number, {})
        with index._env.begin() as txn:
            entries.append(txn.stat(index._data)["entries"])
    assert entries == [150, 50, 0]


def test_long_keys_and_rows_are_stored_by_digest(index: LmdbKeyIndex) -> None:
    """LMDB keys stop at 511 bytes; a VARCHAR(255) utf8mb4 key or a keyless row is longer."""
    long_a, long_b = "é" * 400 + "a", "é" * 400 + "b"
    index.apply(
        1,
        {
            1: TableChanges(replace=[(long_a, 1), (long_b, 2)], key_of=key_of),
            2: TableChanges(replace=[(long_a, b"\x00" * 600)] * 2, key_of=None),
        },
    )
    assert index.get(1, (long_a,)) == (long_a, 1)
    assert index.get(1, (long_b,)) == (long_b, 2)
    assert dict(index.keyed_items(1)) == {(long_a,): (long_a, 1), (long_b,): (long_b, 2)}
    assert index.count(2, (long_a, b"\x00" * 600)) == 2
    index.apply(2, {1: TableChanges(puts={(long_a,): None})})
    assert list(index.rows(1)) == [(long_b, 2)]


def test_scans_read_in_chunks(index: LmdbKeyIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lmdb_index, "SCAN_CHUNK", 7)
    rows = [(i, str(i)) for i in range(50)]
    index.apply(1, {1: TableChanges(replace=rows, key_of=key_of),
                    2: TableChanges(replace=rows[:20] * 3, key_of=None)})  # fmt: skip
    assert list(index.rows(1)) == rows
    assert list(index.keyed_items(1)) == [((r[0],), r) for r in rows]
    assert Counter(index.rows(2)) == Counter(rows[:20] * 3)
    with pytest.raises(KeyIndexError, match="keyless"):
        list(index.keyed_items(2))


def test_a_scan_stops_when_its_table_is_replaced(
    index: LmdbKeyIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lmdb_index, "SCAN_CHUNK", 2)
    index.apply(1, {1: TableChanges(replace=[(i,) for i in range(6)], key_of=key_of)})
    scan = index.rows(1)
    assert next(scan) == (0,)
    index.apply(2, {1: TableChanges(replace=[], key_of=key_of)})
    with pytest.raises(KeyIndexError, match="dropped or replaced"):
        list(scan)


def test_rebuild_loads_a_table_in_chunks(
    index: LmdbKeyIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lmdb_index, "CHUNK_ROWS", 100)
    index.apply(1, writes_for(1))
    rows = [(i, f"row {i}") for i in range(1050)]
    index.rebuild(KEYED, iter(rows), key_of)
    index.rebuild(KEYLESS, iter(rows[:300] * 2), None)
    index.set_batch(40)
    assert index.batch == 40
    assert sorted(index.rows(KEYED)) == rows
    assert index.size(KEYLESS) == 600 and index.count(KEYLESS, rows[5]) == 2
    with pytest.raises(KeyIndexOutOfDate):
        index.align(39)  # a rebuild leaves nothing to undo
    with pytest.raises(KeyIndexError, match="duplicate keys"):
        index.rebuild(KEYED, [(1, "a"), (1, "b")], key_of)
    assert sorted(index.rows(KEYED)) == rows


def test_verify_lists_the_differences(index: LmdbKeyIndex) -> None:
    index.apply(1, {1: TableChanges(replace=[(1, "a"), (2, "b"), (3, "c")], key_of=key_of),
                    2: TableChanges(replace=[("x",), ("x",), ("y",)], key_of=None)})  # fmt: skip
    assert index.verify(1, [(3, "c"), (1, "a"), (2, "b")], key_of) == []
    assert index.verify(1, [(1, 1.0), (2, "b"), (4, "d"), (4, "e")], key_of) == [
        Difference("duplicate", (4,), table_row=(4, "e")),
        Difference("different", (1,), table_row=(1, 1.0), index_row=(1, "a")),
        Difference("extra", (3,), index_row=(3, "c")),
        Difference("missing", (4,), table_row=(4, "d")),
    ]
    assert index.verify(2, [("y",), ("x",), ("x",)], None) == []
    assert index.verify(2, [("y",), ("x",), ("z",)], None) == [
        Difference("count", None, ("x",), ("x",), 1, 2),
        Difference("missing", table_row=("z",), table_count=1),
    ]
    assert index.verify(2, [], key_of) == [Difference("kind")]
    assert index.verify(9, [(1,)], key_of) == [Difference("missing", (1,), table_row=(1,))]
    assert len(index.verify(9, [(i,) for i in range(50)], key_of, limit=10)) == 10


def test_the_map_grows_when_full(tmp_path: Path) -> None:
    with LmdbKeyIndex(tmp_path / "index", map_size=64 << 10, sync=False) as index:
        model = Model()
        for number, writes in batches(1, 8, size=2000):
            index.apply(number, writes)
            model.apply(writes)
        rows = [(i, "y" * 200) for i in range(5000)]
        index.apply(9, {7: TableChanges(replace=rows, key_of=key_of)})  # grows mid-batch
        model.apply({7: TableChanges(replace=rows, key_of=key_of)})
        assert index.map_size > 64 << 10
        assert model.matches(index)


def test_a_full_map_grows_and_the_batch_runs_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the growth ahead of a batch, the batch meets MapFullError: a re-iterable
    replace runs again in the grown map, a one-shot iterator fails the batch cleanly."""
    with LmdbKeyIndex(tmp_path / "index", map_size=64 << 10, sync=False) as index:
        monkeypatch.setattr(index, "_grow_if_nearly_full", lambda: None)
        rows = [(i, "y" * 200) for i in range(5000)]
        with pytest.raises(KeyIndexError, match="one-shot iterator"):
            index.apply(1, {1: TableChanges(replace=iter(rows), key_of=key_of)})
        assert index.batch == 0 and index.table_ids() == []
        size = index.map_size
        index.apply(1, {1: TableChanges(replace=rows, key_of=key_of)})
        assert index.map_size > size
        assert list(index.rows(1)) == rows


def test_close_is_idempotent_and_final(tmp_path: Path) -> None:
    index = LmdbKeyIndex(tmp_path / "index")
    index.apply(1, writes_for(1))
    index.close()
    index.close()
    with pytest.raises(KeyIndexError, match="closed"):
        index.get(KEYED, (1,))
    with pytest.raises(KeyIndexError, match="closed"):
        index.apply(2, writes_for(2))


def test_an_index_of_another_codec_is_refused(tmp_path: Path) -> None:
    with LmdbKeyIndex(tmp_path / "index") as index, index._env.begin(write=True) as txn:
        txn.put(b"codec", b"0:other", db=index._meta)
    with pytest.raises(lmdb_index.KeyIndexIncompatible, match="other"):
        LmdbKeyIndex(tmp_path / "index")
    LmdbKeyIndex.remove(tmp_path / "index")
    with LmdbKeyIndex(tmp_path / "index") as index:
        assert index.batch == 0


def test_an_index_of_the_previous_codec_is_read_and_marked_as_this_codecs(
    tmp_path: Path,
) -> None:
    """Codec 1 wrote a row holding a date with pickle; this codec reads it as it is, and
    marks the index so that a program of codec 1 rebuilds it instead of misreading the
    rows written since."""
    dated = (7, date(2024, 2, 29), Decimal("1.50"))
    with LmdbKeyIndex(tmp_path / "index") as index:
        index.apply(1, {1: TableChanges(replace=[], key_of=key_of)})
        prefix = index._view.tables[1].prefix
        with index._env.begin(write=True) as txn:
            txn.put(prefix + encode_key((7,)), pickle.dumps(dated, 5), db=index._data)
            txn.put(b"codec", b"1:marshal%d:pickle5" % marshal.version, db=index._meta)
    with LmdbKeyIndex(tmp_path / "index") as index:
        assert index.get(1, (7,)) == dated
        with index._env.begin() as txn:
            assert txn.get(b"codec", db=index._meta) == CODEC_VERSION


@pytest.mark.parametrize("recover", ["apply", "undo", "align"])
def test_a_batch_appending_past_the_greatest_key_is_taken_out_too(
    index: LmdbKeyIndex, monkeypatch: pytest.MonkeyPatch, recover: str
) -> None:
    """Entries past a table's greatest key (a bulk load of ascending ids) are neither read
    nor given an undo record each: one record names the key they came after, and an undo
    deletes everything of the table after it, over as many transactions as it takes."""
    monkeypatch.setattr(lmdb_index, "CHANGES_PER_TXN", 4)
    monkeypatch.setattr(lmdb_index, "APPENDED_PER_TXN", 6)
    index.apply(1, {1: TableChanges(replace=[(k, "old") for k in (10, 20, 30)], key_of=key_of),
                    2: TableChanges(replace=[], key_of=key_of)})  # fmt: skip
    index.apply(2, {3: TableChanges(replace=[(5, "other")], key_of=key_of)})  # a later table
    before = raw_state(index)
    puts: dict[Any, Any] = {(k,): (k, "new") for k in range(25, 60)}  # 30 replaced, 31.. appended
    puts[(10,)] = None
    puts[(61,)] = None  # deleting what is not there
    appended = {(k,): (k, "fresh") for k in range(1, 11)}  # into the empty table
    writes = {1: TableChanges(puts=puts), 2: TableChanges(puts=appended)}
    change, calls = index._change, []

    def failing(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 6:
            raise KeyIndexError("no disk space for the key index (as a test)")
        return change(*args, **kwargs)

    monkeypatch.setattr(index, "_change", failing)
    with pytest.raises(KeyIndexError, match="as a test"):
        index.apply(3, writes)
    monkeypatch.setattr(index, "_change", change)
    assert raw_state(index) != before
    if recover == "apply":
        index.apply(3, writes)
        assert sorted(index.rows(1)) == [(20, "old")] + [(k, "new") for k in range(25, 60)]
        assert index.size(1) == 36 and index.size(2) == 10
        assert index.present(1, [(10,), (30,), (59,), (60,)]) == [False, True, True, False]
        index.undo(3)
    elif recover == "undo":
        index.undo(3)
    else:
        index.align(2)
    assert raw_state(index) == before
    assert index.present(2, [(1,)]) == [False] and index.size(1) == 3
    with index._env.begin() as txn:
        assert txn.stat(index._undo)["entries"] == 0


@pytest.mark.parametrize("recover", ["apply", "undo", "align"])
def test_a_batch_that_fails_between_its_transactions_is_taken_out(
    index: LmdbKeyIndex, monkeypatch: pytest.MonkeyPatch, recover: str
) -> None:
    """A batch is a run of write transactions of ``CHANGES_PER_TXN`` row changes: one that
    fails after some of them (a full disk, a crash) leaves the index at the batch before
    with part of it in; the next apply of the batch, an undo or ``align`` to the recorded
    batch takes the part out exactly (CPT.0030)."""
    monkeypatch.setattr(lmdb_index, "CHANGES_PER_TXN", 7)
    for number, writes in batches(1, 3):
        index.apply(number, writes)
    before = raw_state(index)
    change, calls = index._change, []

    def failing(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 3:
            raise KeyIndexError("no disk space for the key index (as a test)")
        return change(*args, **kwargs)

    monkeypatch.setattr(index, "_change", failing)
    with pytest.raises(KeyIndexError, match="as a test"):
        index.apply(4, writes_for(4))
    assert index.batch == 3 and raw_state(index) != before  # two transactions are in
    monkeypatch.setattr(index, "_change", change)
    if recover == "apply":
        index.apply(4, writes_for(4))
        assert model_after(4).matches(index)
        index.undo(4)
    elif recover == "undo":
        index.undo(4)
    else:
        index.align(3)
    assert raw_state(index) == before and index.batch == 3
    assert model_after(3).matches(index)


def test_runs_of_new_keys_past_the_greatest_go_in_larger_transactions(
    index: LmdbKeyIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bulk load's keys ascend past the table's greatest: after a transaction of only
    such keys the next takes ``APPENDED_PER_TXN`` changes (each commit syncs); a
    transaction that changes an existing key brings it back to ``CHANGES_PER_TXN``."""
    monkeypatch.setattr(lmdb_index, "CHANGES_PER_TXN", 4)
    monkeypatch.setattr(lmdb_index, "APPENDED_PER_TXN", 10)
    index.apply(1, {1: TableChanges(replace=[(k, "old") for k in range(0, 100, 10)],
                                    key_of=key_of)})  # fmt: skip
    sizes: list[int] = []
    change = index._change

    def counted(txn: Any, table_id: int, table: Any, items: list[Any], undo: bool) -> Any:
        sizes.append(len(items))
        return change(txn, table_id, table, items, undo)

    monkeypatch.setattr(index, "_change", counted)
    puts: dict[Any, Any] = {(k,): (k, "new") for k in range(100, 125)}  # past the greatest
    puts[(50,)] = (50, "updated")  # an existing key: the transaction holding it is not a run
    puts.update({(k,): (k, "new") for k in range(125, 140)})
    index.apply(2, {1: TableChanges(puts=puts)})
    # 100-103; 104-113; 114-123; 124, 50 and 125-132 (not a run); 133-136; 137-139.
    assert sizes == [4, 10, 10, 10, 4, 3]
    assert index.size(1) == 10 + 40
    assert sorted(index.rows(1))[5] == (50, "updated")
    index.undo(2)
    assert sorted(index.rows(1)) == [(k, "old") for k in range(0, 100, 10)]
