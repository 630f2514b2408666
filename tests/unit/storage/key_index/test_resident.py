"""The key index's pages leave the process's resident set after each batch once its file
is bigger than ``resident_limit`` (the memory bound of the Spark engine's configuration:
``spark.key_index_memory``), and every row is still read as written."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spark_replica.applier_core.storage.key_index import (
    KeyIndexError,
    LmdbKeyIndex,
    TableChanges,
    lmdb_index,
)

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


def run_child(script: str, path: Path) -> str:
    """What ``script`` prints, run in a Python process of its own on the index at ``path``
    (``sys.argv[1]``)."""
    child = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True, text=True, check=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[4] / "src")},
    )  # fmt: skip
    return child.stdout


#: Run in a process of its own: its peak resident set (``VmHWM``) is the measure.
_PEAK_OF_A_BATCH = """
import random, sys
from spark_replica.applier_core.storage.key_index import LmdbKeyIndex, TableChanges, lmdb_index

def status(field):
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) * 1024 for l in status if l.startswith(field + ":"))

lmdb_index.CHANGES_PER_TXN = 64  # what a commit maps shrinks with it (512 in the product)
with LmdbKeyIndex(sys.argv[1], sync=False, resident_limit=1 << 20) as index:
    index.apply(1, {1: TableChanges(replace=[], key_of=lambda row: (row[0],))})
    for batch in range(2, 12):
        first = (batch - 2) * 20_000
        rows = {(i,): (i, "x" * 200) for i in range(first, first + 20_000)}
        index.apply(batch, {1: TableChanges(puts=rows)})
    keys = random.Random(5).sample(range(200_000), 20_000)
    changes = {1: TableChanges(puts={(k,): (k, "z" * 200) for k in keys})}
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # the peak starts again from the resident set now
    before = status("VmRSS")
    index.apply(12, changes)
    peak = status("VmHWM") - before
    assert all(index.get(1, (k,)) == (k, "z" * 200) for k in keys)
    print(index._used_bytes(), peak)
"""


def test_a_batch_of_random_changes_maps_a_part_of_the_file_at_a_time(tmp_path: Path) -> None:
    """A batch touches a B-tree path per changed key, all over the file, and each commit
    touches every page its transaction wrote, the kernel mapping the cached pages around
    each: a batch is a run of small write transactions, each releasing what it mapped, so
    the process's peak stays far below the file (one transaction of 30,000 random changes
    mapped all of a 1M-row index: 430 MB, a 1.1 GB spike at 5M rows)."""
    output = run_child(_PEAK_OF_A_BATCH, tmp_path / "index")
    used, peak = (int(part) for part in output.split()[-2:])
    assert used > 50 << 20
    assert peak < 16 << 20, f"peak {peak / 2**20:.1f} MiB over a {used / 2**20:.0f} MiB index"


#: Run in a process of its own: memory this test process freed earlier would be reused.
_RANDOM_BATCH = """
import random, sys
from spark_replica.applier_core.storage.key_index import LmdbKeyIndex, TableChanges

def anonymous():
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) * 1024 for l in status if l.startswith("RssAnon:"))

with LmdbKeyIndex(sys.argv[1], sync=False, resident_limit=1 << 20) as index:
    # Loaded in small batches, as replication does: little freed memory to reuse later.
    index.apply(1, {1: TableChanges(replace=[], key_of=lambda row: (row[0],))})
    for batch in range(2, 102):
        first = (batch - 2) * 1_000
        rows = {(i,): (i, "x" * 200) for i in range(first, first + 1_000)}
        index.apply(batch, {1: TableChanges(puts=rows)})
    keys = random.Random(11).sample(range(100_000), 20_000)
    changes = {1: TableChanges(puts={(k,): (k, "z" * 200) for k in keys})}
    before = anonymous()
    index.apply(102, changes)
    grown = anonymous() - before
    assert all(index.get(1, (k,)) == (k, "z" * 200) for k in keys)
    print(grown)
"""


def test_a_batch_of_random_changes_writes_through_the_mapping_not_copies(
    tmp_path: Path,
) -> None:
    """The pages a batch changes are written in the file's page cache (LMDB's writemap),
    not in copies the process allocates: 20,000 random keys of a 100,000-row index change
    most of its 7,000 leaf pages (about 30 MB of copies without it; 150 MB for 50,000 keys
    of a 1M-row table), and the process's anonymous memory stays where it was."""
    output = run_child(_RANDOM_BATCH, tmp_path / "index")
    grown = int(output.split()[-1])
    assert grown < 8 << 20, f"{grown / 2**20:.1f} MiB allocated while the batch was written"


def test_disk_space_is_reserved_ahead_of_the_writes(tmp_path: Path) -> None:
    """Writing through a mapping of a sparse file meets a full disk as SIGBUS, so the data
    file has disk space allocated beyond what is used before a write transaction runs."""
    path = tmp_path / "index"
    with LmdbKeyIndex(path, sync=False) as index:
        fill(index, 1, 0)
        data = path.resolve() / "data.mdb"
        allocated = os.stat(data).st_blocks * 512
        assert data.stat().st_size == index.map_size  # the mapping's size, mostly a hole
        assert allocated >= index._used_bytes() + lmdb_index.MIN_RESERVE_BYTES // 2
        # A small index takes a few MB of disk, not the whole reserve (many engines in one
        # data directory, or a test suite, would fill a disk with 64 MiB each).
        # (the reserve runs ahead of an estimate of what a transaction writes, above it)
        assert allocated <= index._used_bytes() + 2 * lmdb_index.MIN_RESERVE_BYTES
        assert allocated < lmdb_index.RESERVE_BYTES // 4
        assert allocated < index.map_size


def test_a_full_disk_fails_the_write_with_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No space to reserve: the batch fails with KeyIndexError naming the file, nothing of
    it is applied, and the index goes on once there is room."""
    path = tmp_path / "index"
    with LmdbKeyIndex(path, sync=False) as index:
        fill(index, 1, 0)
        index._reserved = 0  # as after a restart: nothing known to be reserved

        def full(fd: int, offset: int, length: int) -> None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        with monkeypatch.context() as patch:
            patch.setattr(lmdb_index.os, "posix_fallocate", full)
            with pytest.raises(KeyIndexError) as caught:
                fill(index, 2, ROWS)
        assert "no disk space for the key index" in str(caught.value)
        assert str(path.resolve() / "data.mdb") in str(caught.value)
        assert "No space left on device" in str(caught.value)
        assert index.batch == 1 and index.get(1, (ROWS,)) is None
        fill(index, 2, ROWS)
        assert index.batch == 2 and index.get(1, (ROWS,)) == (ROWS, PAD)


def test_keys_past_the_greatest_are_not_counted_as_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bulk load's run of ascending new keys reads no page of the table (its duplicate
    checks and its writes follow the rightmost path): releasing the mapping every few of
    them cost a bulk load 7 % of its CPU. Random keys below the greatest are counted."""
    released: list[int] = []
    original = lmdb_index.resident.release

    def counted(path: Path, spans: list[tuple[int, int]] | None = None) -> int:
        released.append(1)
        return original(path, spans)

    monkeypatch.setattr(lmdb_index.resident, "release", counted)
    with LmdbKeyIndex(tmp_path / "index", sync=False, resident_limit=1 << 20) as index:
        fill(index, 1, 0)
        every = index._resident._every  # reads between releases
        released.clear()
        new_keys = [(i,) for i in range(ROWS, 2 * ROWS)]
        assert index.present(1, new_keys) == [False] * ROWS
        fill(index, 2, ROWS)
        appended = len(released)
        # One after each write transaction (the batch's first and last, 512 changes, then
        # runs of APPENDED_PER_TXN); counted as reads, 40,000 keys would be 5,000.
        assert appended <= 8
        released.clear()
        for first in range(0, 2 * ROWS, 32):  # a rows event's 16 inserts of existing keys
            assert index.present(1, [(i,) for i in range(first, first + 32, 2)]) == [True] * 16
        assert every < 16 and len(released) == 2 * ROWS // 32  # one each
