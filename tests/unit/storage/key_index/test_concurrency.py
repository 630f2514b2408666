"""Readers during apply: the apply workers check keys (1062/1032) while the flusher writes a
batch. A reader sees every batch whose ``apply`` returned, and each key as of that batch or
the one being applied (a batch is a run of write transactions; the engine's overlay holds the
running batch's keys until its commit point); readers keep reading while the map grows under
them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from spark_replica.applier_core.storage.key_index import LmdbKeyIndex, TableChanges
from tests.unit.storage.conftest import JOIN_TIMEOUT

KEYS = 50
TABLES = (1, 2)


def _batch(number: int, *, padding: int = 0) -> dict[int, TableChanges]:
    """Every key of every table gets ``number``; a keyless table counts ``number`` rows."""
    rows = {(key,): (key, number, "p" * padding) for key in range(KEYS)}
    writes = {table: TableChanges(puts=dict(rows)) for table in TABLES}
    writes[3] = TableChanges(deltas={("n",): 1})
    return writes


def _create(index: LmdbKeyIndex) -> None:
    writes = {t: TableChanges(replace=[], key_of=lambda r: (r[0],)) for t in TABLES}
    writes[3] = TableChanges(replace=[], key_of=None)
    index.apply(1, writes)


def _run(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(JOIN_TIMEOUT)
        assert not thread.is_alive()


def _reader(
    index: LmdbKeyIndex, start: threading.Barrier, done: threading.Event, errors: list[str]
) -> Callable[[], None]:
    def read() -> None:
        start.wait(JOIN_TIMEOUT)
        last = 0
        while True:
            finished = done.is_set()
            with index.snapshot() as snapshot:
                batch = snapshot.batch
                seen = {
                    snapshot.get(t, (k,))[1]  # type: ignore[index]
                    for t in TABLES
                    for k in range(KEYS)
                    if snapshot.get(t, (k,)) is not None
                }
                count = snapshot.count(3, ("n",))
            expected = {batch, batch + 1} if batch > 1 else {batch + 1}
            counts = {max(batch - 1, 0), batch}
            if not seen <= expected or count not in counts or batch < last:
                errors.append(f"batch {batch} (after {last}): values {seen}, count {count}")
                return
            last = batch
            if finished:
                return

    return read


def test_readers_see_each_key_before_or_after_the_running_batch(tmp_path: Path) -> None:
    with LmdbKeyIndex(tmp_path / "index", sync=False) as index:
        _create(index)
        start, done, errors = threading.Barrier(4), threading.Event(), []

        def write() -> None:
            start.wait(JOIN_TIMEOUT)
            for number in range(2, 60):
                index.apply(number, _batch(number))
            done.set()

        readers = [threading.Thread(target=_reader(index, start, done, errors)) for _ in range(3)]
        _run([threading.Thread(target=write), *readers])
        assert errors == []


def test_a_batch_is_visible_to_every_thread_once_apply_returns(tmp_path: Path) -> None:
    with LmdbKeyIndex(tmp_path / "index", sync=False) as index:
        _create(index)
        applied, checked = threading.Event(), threading.Event()
        found: list[object] = []

        def check() -> None:
            for _ in range(2, 30):
                assert applied.wait(JOIN_TIMEOUT)
                applied.clear()
                found.append(index.get(2, (KEYS - 1,)))
                checked.set()

        def write() -> None:
            for number in range(2, 30):
                index.apply(number, _batch(number))
                applied.set()
                assert checked.wait(JOIN_TIMEOUT)
                checked.clear()

        _run([threading.Thread(target=check), threading.Thread(target=write)])
        assert found == [(KEYS - 1, n, "") for n in range(2, 30)]


def test_readers_keep_reading_while_the_map_grows(tmp_path: Path) -> None:
    with LmdbKeyIndex(tmp_path / "index", map_size=64 << 10, sync=False) as index:
        _create(index)
        start, done, errors = threading.Barrier(3), threading.Event(), []
        first_size = index.map_size

        def write() -> None:
            start.wait(JOIN_TIMEOUT)
            for number in range(2, 12):
                index.apply(number, _batch(number, padding=3000))
            done.set()

        readers = [threading.Thread(target=_reader(index, start, done, errors)) for _ in range(2)]
        _run([threading.Thread(target=write), *readers])
        assert errors == []
        assert index.map_size > first_size
