"""The relay log prefetcher (DES.PF.0010, WL10500.PF.1): a reader with one reads exactly what
it reads without, the prefetcher reads only bytes that never change, and it never fails the
reader."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

import pytest

from spark_replica.applier_core.binlog.relaylog import RelayLog, RelayLogReader, RelayLogWriter
from spark_replica.applier_core.binlog.relaylog.prefetch import Prefetcher
from tests.unit.relaylog.conftest import new_writer
from tests.unit.relaylog.fakes import make_event

BATCH = 64 << 10  # files of about 1 MB, read by the reader 256 KiB at a time


def _fill(writer: RelayLogWriter, files: int, events: int) -> list[bytes]:
    """``files`` complete files of ``events`` events each (then an active one)."""
    written = []
    for file in range(files):
        for number in range(events):
            event = make_event(payload=f"{file}:{number}:".encode() + b"x" * (number % 1000))
            writer.append(event, flush=number == events - 1)
            written.append(event)
        writer.rotate()
    return written


def _read_all(relay_log: RelayLog, prefetcher: Prefetcher | None) -> list[tuple[str, int, bytes]]:
    with RelayLogReader(relay_log, prefetcher=prefetcher) as reader:
        return [(e.file, e.start, e.data) for e in reader]


@pytest.fixture
def prefetcher(relay_log: RelayLog) -> Iterator[Prefetcher]:
    found = Prefetcher(relay_log, name="test-prefetcher", batch_size=BATCH, max_bytes=4 * BATCH)
    found.start()
    yield found
    found.stop()


def test_a_reader_with_a_prefetcher_reads_what_it_reads_without(
    relay_log: RelayLog, writer: RelayLogWriter, prefetcher: Prefetcher
) -> None:
    _fill(writer, files=3, events=2000)
    plain = _read_all(relay_log, None)
    assert _read_all(relay_log, prefetcher) == plain
    assert prefetcher.stats.hits > 0 and prefetcher.stats.batches > 3


def test_the_active_file_is_prefetched_only_when_asked_and_never_past_the_end(
    relay_log: RelayLog, writer: RelayLogWriter
) -> None:
    for active_files in (False, True):
        with RelayLogReader(relay_log) as reader:
            expected = [(e.file, e.start, e.data) for e in reader]
        prefetcher = Prefetcher(relay_log, name="test-prefetcher", active_files=active_files,
                                batch_size=BATCH, max_bytes=4 * BATCH)  # fmt: skip
        prefetcher.start()
        try:
            with RelayLogReader(relay_log, prefetcher=prefetcher) as reader:
                assert [(e.file, e.start, e.data) for e in reader] == expected
                more = [make_event(payload=b"later" * n) for n in range(1, 50)]
                for event in more:  # written after the reader reached the end
                    writer.append(event)
                got = [e.data for e in reader]
                assert got == more
            if not active_files:
                assert prefetcher.stats.bytes_read == 0 and prefetcher.stats.hits == 0
        finally:
            prefetcher.stop()


def test_held_bytes_stay_bounded_and_stop_joins_the_thread(
    relay_log: RelayLog, writer: RelayLogWriter
) -> None:
    _fill(writer, files=2, events=600)
    prefetcher = Prefetcher(relay_log, name="test-prefetcher", batch_size=BATCH,
                            max_bytes=2 * BATCH)  # fmt: skip
    prefetcher.start()
    reader = RelayLogReader(relay_log, prefetcher=prefetcher)
    try:
        assert reader.poll() is not None  # the first read tells the prefetcher where to go
        stats = prefetcher.stats
        with prefetcher._changed:  # it fills up to max_bytes, then waits for the reader
            assert prefetcher._changed.wait_for(lambda: prefetcher._held >= 2 * BATCH, 10)
        # What the reader took (one read: at most 256 KiB), what is held (at most max_bytes,
        # and one batch more while the reader waited), nothing else.
        with prefetcher._changed:
            assert prefetcher._held <= 3 * BATCH
            assert stats.bytes_read <= (256 << 10) + 3 * BATCH
    finally:
        reader.close()
        prefetcher.stop()
        prefetcher.stop()  # idempotent
    assert not [t for t in threading.enumerate() if t.name == "test-prefetcher"]


def test_a_missing_file_does_not_fail_the_reader(
    relay_log: RelayLog, writer: RelayLogWriter, prefetcher: Prefetcher
) -> None:
    written = _fill(writer, files=2, events=50)
    first = relay_log.index.entries()[0]
    expected = _read_all(relay_log, None)
    path = relay_log.path(first.name)
    away = path.with_name(path.name + ".away")
    os.rename(path, away)
    with pytest.raises(Exception, match="missing"):
        _read_all(relay_log, prefetcher)  # the reader's own error, as without a prefetcher
    os.rename(away, path)
    assert _read_all(relay_log, prefetcher) == expected
    assert len(written) == 100


def test_a_second_writer_after_rotation(relay_log: RelayLog) -> None:
    """The prefetcher follows the index to files created after it started."""
    writer = new_writer(relay_log)
    writer.open()
    prefetcher = Prefetcher(relay_log, name="test-prefetcher", batch_size=BATCH,
                            max_bytes=8 * BATCH)  # fmt: skip
    prefetcher.start()
    try:
        _fill(writer, files=1, events=100)
        expected = _read_all(relay_log, None)
        assert _read_all(relay_log, prefetcher) == expected
        _fill(writer, files=2, events=100)
        expected = _read_all(relay_log, None)
        assert _read_all(relay_log, prefetcher) == expected
    finally:
        prefetcher.stop()
        writer.close()


def test_a_prefetcher_not_started_or_stopped_leaves_the_reading_to_the_reader(
    relay_log: RelayLog, writer: RelayLogWriter
) -> None:
    _fill(writer, files=2, events=100)
    expected = _read_all(relay_log, None)
    idle = Prefetcher(relay_log, name="test-prefetcher")
    assert _read_all(relay_log, idle) == expected  # never started: every read is a miss
    assert idle.stats.hits == 0 and idle.stats.misses > 0
    idle.start()
    idle.stop()
    assert _read_all(relay_log, idle) == expected
    assert idle.stats.hits == 0
