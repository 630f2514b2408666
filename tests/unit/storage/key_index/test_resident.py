"""The key index's pages leave the process's resident set after each batch once its file
is bigger than ``resident_limit`` (the memory bound of the Spark engine's configuration:
``spark.key_index_memory``), and every row is still read as written."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.storage.key_index import LmdbKeyIndex, TableChanges

ROWS = 20_000
PAD = "x" * 200


def mapped_resident(path: Path) -> int:
    """Bytes of ``path``'s mappings resident in this process (``/proc/self/smaps``)."""
    total, inside = 0, False
    with open("/proc/self/smaps", encoding="utf-8") as smaps:
        for line in smaps:
            head = line.split()
            if "-" in head[0] and len(head) >= 5:  # a mapping's first line
                inside = len(head) == 6 and head[5] == str(path)
            elif inside and head[0] == "Rss:":
                total += int(head[1]) * 1024
    return total


def fill(index: LmdbKeyIndex, batch: int, first: int) -> None:
    rows = [(i, PAD) for i in range(first, first + ROWS)]
    if batch == 1:  # creates the table
        changes = TableChanges(replace=rows, key_of=lambda row: (row[0],))
    else:
        changes = TableChanges(puts={(row[0],): row for row in rows})
    index.apply(batch, {1: changes})


def read_all(index: LmdbKeyIndex, upto: int) -> None:
    for i in range(upto):
        assert index.get(1, (i,)) == (i, PAD)


def test_pages_reads_map_are_released_above_the_limit(tmp_path: Path) -> None:
    """Reading every row of a file of ~5 MB with a 1 MiB bound keeps about 1 MiB of it
    mapped (released every few reads and after each batch); every row reads as written."""
    data = (tmp_path / "index").resolve() / "data.mdb"
    with LmdbKeyIndex(tmp_path / "index", sync=False, resident_limit=1 << 20) as index:
        fill(index, 1, 0)
        assert mapped_resident(data) < 2 << 20
        read_all(index, ROWS)
        assert mapped_resident(data) < 2 << 20
        fill(index, 2, ROWS)
        read_all(index, 2 * ROWS)
        assert mapped_resident(data) < 2 << 20


def test_without_a_limit_or_below_it_the_pages_stay(tmp_path: Path) -> None:
    for limit in (None, 1 << 30):
        path = tmp_path / f"index-{limit}"
        data = path.resolve() / "data.mdb"
        with LmdbKeyIndex(path, sync=False, resident_limit=limit) as index:
            fill(index, 1, 0)
            read_all(index, ROWS)
            before = mapped_resident(data)
            assert before > 4 << 20  # the reads mapped the file's pages (~5 MB of rows)
            fill(index, 2, ROWS)
            assert mapped_resident(data) >= before


def test_a_batch_of_random_changes_releases_pages_as_it_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large batch touches a B-tree path per changed key, all over the file: its write
    transaction releases what it mapped as it goes, so the mapping stays near the bound
    until its commit (released only after it, it held the whole file: a 1.1 GB spike at 5M
    rows)."""
    path = tmp_path / "index"
    data = path.resolve() / "data.mdb"
    with LmdbKeyIndex(path, sync=False, resident_limit=1 << 20) as index:
        for batch in range(1, 4):
            fill(index, batch, (batch - 1) * ROWS)
        assert data.stat().st_size > 10 << 20
        before_commit: list[int] = []
        apply = index._apply

        def measured(txn: Any, batch: int, writes: Any) -> None:
            apply(txn, batch, writes)
            before_commit.append(mapped_resident(data))

        monkeypatch.setattr(index, "_apply", measured)
        keys = random.Random(7).sample(range(3 * ROWS), 5_000)
        index.apply(4, {1: TableChanges(puts={(k,): (k, "y" * 200) for k in keys})})
        assert before_commit and before_commit[0] < 2 << 20, before_commit
        assert all(index.get(1, (k,)) == (k, "y" * 200) for k in keys)
