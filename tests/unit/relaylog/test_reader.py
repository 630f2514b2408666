"""Readers: positions, rotation, waiting for new events, corruption (WL#5721, T80)."""

from __future__ import annotations

import struct
import threading
import time
from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.constants import MAGIC, EventType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.relaylog import (
    LogPosition,
    ReaderState,
    RelayCoordinate,
    RelayEvent,
    RelayLog,
    RelayLogReader,
    RelayLogWriter,
)
from tests.unit.relaylog.conftest import CHANNEL, new_writer
from tests.unit.relaylog.fakes import HEADER, make_event

BASE = f"relay-bin-{CHANNEL}"
FIRST = f"{BASE}.000001"
SECOND = f"{BASE}.000002"
START = len(MAGIC) + len(HEADER)
WAIT = 10.0  # generous upper bound for waits that an Event or an append ends early


def _body(event: RelayEvent) -> bytes:
    return event.data[19:]


def test_reader_yields_every_event_with_its_location(
    relay_log: RelayLog, writer: RelayLogWriter
) -> None:
    one = make_event(payload=b"one")
    writer.append(one)
    with RelayLogReader(relay_log) as reader:
        events = list(reader)
        assert reader.position == RelayCoordinate(FIRST, START + len(one))
    assert [e.data[4] for e in events] == [
        EventType.FORMAT_DESCRIPTION,
        EventType.PREVIOUS_GTIDS,
        EventType.QUERY,
    ]
    assert events[0][:3] == (FIRST, 4, 4 + 59)
    assert events[-1] == RelayEvent(FIRST, START, START + len(one), one)


def test_reader_follows_rotation_and_reports_finished_files(
    relay_log: RelayLog, writer: RelayLogWriter
) -> None:
    writer.append(make_event(payload=b"a"))
    writer.rotate()
    writer.append(make_event(payload=b"b"))
    finished: list[str] = []
    with RelayLogReader(relay_log, on_file_end=finished.append) as reader:
        events = list(reader)
    assert [(e.file, _body(e)) for e in events if e.data[4] == EventType.QUERY] == [
        (FIRST, b"a"),
        (SECOND, b"b"),
    ]
    assert finished == [FIRST]


def test_poll_batch_takes_what_poll_would_from_the_buffer(
    relay_log: RelayLog, writer: RelayLogWriter
) -> None:
    """DES.RS.0040: events taken in batches are the events ``poll`` gives one by one, with
    their locations; a batch never crosses into the next file (the reader moves there, and
    reports the finished one, through ``poll``), and an empty batch only says "poll"."""
    for i in range(5):
        writer.append(make_event(payload=bytes([i]) * 3))
    writer.rotate()
    writer.append(make_event(payload=b"next"))
    with RelayLogReader(relay_log) as one_by_one:
        expected = list(one_by_one)
    finished: list[str] = []
    with RelayLogReader(relay_log, on_file_end=finished.append) as reader:
        assert reader.poll_batch(4) == []  # nothing buffered before the first read
        taken = [reader.poll()]
        while True:
            batch = reader.poll_batch(2)
            assert len(batch) <= 2
            assert len({event.file for event in batch}) <= 1
            if batch:
                taken += batch
                assert reader.position == RelayCoordinate(batch[-1].file, batch[-1].end)
            elif (event := reader.poll()) is not None:
                taken.append(event)
            else:
                break
        assert finished == [FIRST]
    assert taken == expected
    assert [_body(e) for e in taken if e.data[4] == EventType.QUERY][-1] == b"next"


def test_poll_batch_leaves_a_corrupt_event_to_poll(datadir: Path, relay_log: RelayLog) -> None:
    log = _reopened_with_a_corrupt_second_event(datadir, relay_log)
    with RelayLogReader(log) as reader:
        assert reader.poll() is not None  # the file's first event
        batch = reader.poll_batch(8)
        assert _body(batch[-1]) == b"ok"  # and not the corrupt one after it
        assert reader.poll_batch(8) == []
        with pytest.raises(BinlogError, match="declared length 10"):
            reader.poll()
        assert reader.poll_batch(8) == []  # failed: nothing more
    log.close()


def test_start_position_and_two_readers_at_different_positions(
    relay_log: RelayLog, writer: RelayLogWriter
) -> None:
    ends = [writer.append(make_event(payload=bytes([i]) * 5)).offset for i in range(6)]
    writer.rotate()
    writer.append(make_event(payload=b"last"))
    with (
        RelayLogReader(relay_log, (FIRST, ends[1])) as late,
        RelayLogReader(relay_log, (FIRST, 0)) as early,
    ):
        assert _body(late.next_event(0)) == bytes([2]) * 5  # type: ignore[arg-type]
        assert early.next_event(0).data[4] == EventType.FORMAT_DESCRIPTION  # type: ignore[union-attr]
        rest_late = [_body(e) for e in late]
        rest_early = [_body(e) for e in early]
    assert rest_late[-1] == rest_early[-1] == b"last"
    assert len(rest_early) > len(rest_late)


def test_start_in_an_unlisted_file_is_an_error(relay_log: RelayLog, writer: RelayLogWriter) -> None:
    with pytest.raises(BinlogError, match="not listed") as caught:
        RelayLogReader(relay_log, ("relay-bin-c1.000009", 4))
    assert caught.value.file == "relay-bin-c1.000009"
    with pytest.raises(BinlogError, match="invalid start offset"):
        RelayLogReader(relay_log, (FIRST, 2))


def test_next_event_times_out_with_none(relay_log: RelayLog, writer: RelayLogWriter) -> None:
    with RelayLogReader(relay_log, (FIRST, START)) as reader:
        assert reader.next_event(0) is None
        assert reader.next_event(0.05) is None


def _watch_waits(relay_log: RelayLog) -> threading.Event:
    """An Event set whenever a reader starts waiting on the end position."""
    waiting = threading.Event()
    real = relay_log.end.wait_beyond

    def wait_beyond(position: LogPosition, timeout: float | None) -> bool:
        waiting.set()
        return real(position, timeout)

    relay_log.end.wait_beyond = wait_beyond  # type: ignore[method-assign]
    return waiting


def test_waiting_reader_wakes_when_an_event_is_appended(
    relay_log: RelayLog, writer: RelayLogWriter
) -> None:
    waiting = _watch_waits(relay_log)
    got: list[RelayEvent | None] = []
    reader = RelayLogReader(relay_log, (FIRST, START))

    def read() -> None:
        got.append(reader.next_event(WAIT))

    thread = threading.Thread(target=read, name="relay-reader-test")
    started = time.monotonic()
    thread.start()
    assert waiting.wait(WAIT)
    event = make_event(payload=b"wake")
    writer.append(event)
    thread.join(WAIT)
    assert not thread.is_alive()
    assert got == [RelayEvent(FIRST, START, START + len(event), event)]
    assert time.monotonic() - started < WAIT
    reader.close()


def test_reader_waits_for_the_first_file(relay_log: RelayLog) -> None:
    waiting = _watch_waits(relay_log)
    got: list[RelayEvent | None] = []
    reader = RelayLogReader(relay_log)
    assert reader.position is None
    thread = threading.Thread(target=lambda: got.append(reader.next_event(WAIT)), name="r")
    thread.start()
    assert waiting.wait(WAIT)
    with new_writer(relay_log):
        pass
    thread.join(WAIT)
    assert not thread.is_alive()
    assert got[0] is not None and got[0].data[4] == EventType.FORMAT_DESCRIPTION
    reader.close()


def test_closing_the_relay_log_releases_waiting_readers(relay_log: RelayLog) -> None:
    waiting = _watch_waits(relay_log)
    got: list[RelayEvent | None] = []
    reader = RelayLogReader(relay_log)
    thread = threading.Thread(target=lambda: got.append(reader.next_event(None)), name="r")
    thread.start()
    assert waiting.wait(WAIT)
    relay_log.close()
    thread.join(WAIT)
    assert not thread.is_alive()
    assert got == [None]
    reader.close()


def _write_file(path: Path, *events: bytes) -> None:
    path.write_bytes(MAGIC + HEADER + b"".join(events))


def _reopened_with_a_corrupt_second_event(datadir: Path, relay_log: RelayLog) -> RelayLog:
    """The channel's first relay log file rewritten as a good event and one whose declared
    length (10) is below the header's, opened again."""
    with new_writer(relay_log) as writer:
        writer.rotate()
    relay_log.close()
    bad = bytearray(make_event(payload=b"p" * 20))
    struct.pack_into("<I", bad, 9, 10)
    _write_file(relay_log.path(FIRST), make_event(payload=b"ok"), bytes(bad))
    log = RelayLog.for_channel(datadir, CHANNEL)
    log.open()
    return log


def test_corrupt_event_length_is_located(datadir: Path, relay_log: RelayLog) -> None:
    log = _reopened_with_a_corrupt_second_event(datadir, relay_log)
    reader = RelayLogReader(log)
    with pytest.raises(BinlogError) as caught:
        list(reader)
    error = caught.value
    assert (error.file, error.position) == (FIRST, START + 21)
    assert "declared length 10" in error.cause
    assert str(error) == (
        f"corrupt event: declared length 10 is below the 19-byte header "
        f"(file '{FIRST}', position {START + 21})"
    )
    assert reader.state is ReaderState.FAILED
    with pytest.raises(BinlogError):
        reader.poll()
    reader.close()
    log.close()


def test_event_running_past_the_end_of_a_complete_file(datadir: Path, relay_log: RelayLog) -> None:
    with new_writer(relay_log) as writer:
        writer.rotate()
    relay_log.close()
    cut = make_event(payload=b"q" * 40)[:-10]
    _write_file(relay_log.path(FIRST), cut)
    log = RelayLog.for_channel(datadir, CHANNEL)
    log.open()
    with RelayLogReader(log) as reader, pytest.raises(BinlogError) as caught:
        list(reader)
    assert (caught.value.file, caught.value.position) == (FIRST, START)
    assert "runs past the end of the file" in caught.value.cause
    log.close()


def test_event_running_past_the_published_end(relay_log: RelayLog, writer: RelayLogWriter) -> None:
    """A length field that points past what the writer published is corruption, not a wait."""
    writer.append(make_event(payload=b"ok"))
    with relay_log.path(FIRST).open("r+b") as file:
        file.seek(START + 9)
        file.write(struct.pack("<I", 5000))
    with RelayLogReader(relay_log, (FIRST, START)) as reader, pytest.raises(BinlogError) as caught:
        reader.next_event(0)
    assert (caught.value.file, caught.value.position) == (FIRST, START)
    assert "runs past the end of the written relay log" in caught.value.cause


def test_file_with_bad_magic_is_an_error(datadir: Path, relay_log: RelayLog) -> None:
    with new_writer(relay_log) as writer:
        writer.rotate()
    relay_log.close()
    relay_log.path(FIRST).write_bytes(b"GIF8" + HEADER)
    log = RelayLog.for_channel(datadir, CHANNEL)
    log.open()
    with pytest.raises(BinlogError, match="bad magic") as caught:
        RelayLogReader(log, (FIRST, 4))
    assert (caught.value.file, caught.value.position) == (FIRST, 0)
    log.close()


def test_reader_releases_its_subscription_on_close(
    relay_log: RelayLog, writer: RelayLogWriter
) -> None:
    reader = RelayLogReader(relay_log)
    list(reader)
    assert relay_log.tracker.usage(FIRST).references == 1
    reader.close()
    reader.close()
    assert relay_log.tracker.usage(FIRST).references == 0
    with pytest.raises(RuntimeError):
        reader.poll()
