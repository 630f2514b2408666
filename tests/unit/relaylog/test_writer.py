"""Appending, publishing, rotation and crash recovery of the relay log writer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.constants import MAGIC, EventType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.relaylog import (
    DEFAULT_MAX_SIZE,
    LogPosition,
    RelayCoordinate,
    RelayLog,
    RelayLogReader,
    RelayLogWriter,
    WriterState,
)
from tests.unit.relaylog.conftest import CHANNEL, new_writer
from tests.unit.relaylog.fakes import (
    HEADER,
    make_event,
    make_header,
    make_rotate,
    numbered,
    rotate_target,
)

BASE = f"relay-bin-{CHANNEL}"
FIRST = f"{BASE}.000001"
START = len(MAGIC) + len(HEADER)


def _events(relay_log: RelayLog) -> list[tuple[str, int, bytes]]:
    with RelayLogReader(relay_log) as reader:
        return [(e.file, e.data[4], e.data) for e in reader]


def test_first_open_creates_the_first_file_with_magic_and_header(
    relay_log: RelayLog, writer: RelayLogWriter
) -> None:
    assert writer.state is WriterState.OPEN
    assert relay_log.files() == [FIRST]
    assert relay_log.path(FIRST).read_bytes() == MAGIC + HEADER
    assert writer.position == RelayCoordinate(FIRST, START)
    assert relay_log.end_coordinate() == RelayCoordinate(FIRST, START)


def test_append_writes_whole_events_and_publishes_them(
    relay_log: RelayLog, writer: RelayLogWriter
) -> None:
    event = make_event(payload=b"x" * 10)
    assert writer.append(event) == RelayCoordinate(FIRST, START + len(event))
    assert relay_log.end_coordinate() == RelayCoordinate(FIRST, START + len(event))
    assert relay_log.path(FIRST).read_bytes() == MAGIC + HEADER + event


def test_append_without_flush_publishes_on_flush(
    relay_log: RelayLog, writer: RelayLogWriter
) -> None:
    before = relay_log.end.get()
    writer.append(make_event(), flush=False)
    writer.append(make_event(), flush=False)
    assert relay_log.end.get() == before
    writer.flush()
    assert relay_log.end.get() == LogPosition(before.ordinal, START + 38)


@pytest.mark.parametrize("event", [b"short", make_event(payload=b"abc")[:-1], b"\x00" * 19])
def test_append_refuses_bytes_that_are_not_one_event(
    relay_log: RelayLog, writer: RelayLogWriter, event: bytes
) -> None:
    with pytest.raises(BinlogError, match="cannot append"):
        writer.append(event)
    assert writer.state is WriterState.OPEN
    assert relay_log.path(FIRST).stat().st_size == START


def test_append_many_writes_the_events_at_once_and_publishes_them(
    relay_log: RelayLog, writer: RelayLogWriter
) -> None:
    events = [make_event(payload=b"a"), make_event(payload=b"bb" * 20)]
    end = START + sum(map(len, events))
    assert writer.append_many(events) == RelayCoordinate(FIRST, end)
    assert relay_log.end_coordinate() == RelayCoordinate(FIRST, end)
    assert relay_log.path(FIRST).read_bytes() == MAGIC + HEADER + b"".join(events)


def test_append_many_writes_nothing_when_one_event_is_not_whole(
    relay_log: RelayLog, writer: RelayLogWriter
) -> None:
    good = make_event()
    with pytest.raises(BinlogError, match="cannot append"):
        writer.append_many([good, good[:-1]])
    writer.flush()
    assert relay_log.path(FIRST).read_bytes() == MAGIC + HEADER
    assert writer.state is WriterState.OPEN


def test_explicit_rotation_ends_the_old_file_with_a_rotate_event(
    relay_log: RelayLog, writer: RelayLogWriter
) -> None:
    writer.append(make_event(payload=b"one"))
    assert writer.rotate() == f"{BASE}.000002"
    writer.append(make_event(payload=b"two"))
    assert relay_log.files() == [FIRST, f"{BASE}.000002"]
    events = _events(relay_log)
    first = [e for e in events if e[0] == FIRST]
    assert first[-1][1] == EventType.ROTATE
    assert rotate_target(first[-1][2]) == f"{BASE}.000002"
    second = relay_log.path(f"{BASE}.000002").read_bytes()
    assert second.startswith(MAGIC + HEADER)
    assert writer.position == RelayCoordinate(f"{BASE}.000002", len(second))


def test_rotation_by_size(relay_log: RelayLog) -> None:
    with new_writer(relay_log, max_size=1000) as writer:
        for i in range(40):
            writer.append(numbered(i, 100))
    files = relay_log.files()
    assert len(files) >= 4
    for name in files[:-1]:
        size = relay_log.path(name).stat().st_size
        # Rotated once past max_size: at most one event and the ROTATE event beyond it.
        assert 1000 < size <= 1000 + 100 + 19 + 8 + len(name)
    bodies = [e[2] for e in _events(relay_log) if e[1] == EventType.QUERY]
    assert bodies == [numbered(i, 100) for i in range(40)]


def test_a_header_made_inside_append_many_learns_how_much_of_the_batch_is_written(
    relay_log: RelayLog,
) -> None:
    """The receiver names in each new file's Previous_gtids the transactions that ended in
    the batch's part written before it: the header callback reads ``batch_written``."""
    seen: list[int] = []

    def header() -> bytes:
        seen.append(writer.batch_written)
        return make_header()

    writer = RelayLogWriter(relay_log, make_header=header, make_rotate=make_rotate,
                            max_size=250)  # fmt: skip
    with writer:
        # Each file: 90 bytes of magic and header, then two events of 100 bytes.
        writer.append_many([numbered(i, 100) for i in range(8)])
        assert writer.batch_written == 0
        writer.rotate()
    # At open; after events 2, 4 and 6 (each past 250 bytes); after the 8th, at the end of
    # the batch; an explicit rotation outside a batch.
    assert seen == [0, 2, 4, 6, 8, 0]


def test_max_size_zero_means_the_default(relay_log: RelayLog) -> None:
    assert new_writer(relay_log).max_size == DEFAULT_MAX_SIZE == 1 << 30
    with pytest.raises(ValueError):
        new_writer(relay_log, max_size=-1)


def test_writer_continues_the_last_file_after_reopening(relay_log: RelayLog) -> None:
    with new_writer(relay_log) as writer:
        writer.append(make_event(payload=b"a"))
    with new_writer(relay_log) as writer:
        assert writer.file_name == FIRST
        writer.append(make_event(payload=b"b"))
    assert relay_log.files() == [FIRST]
    assert [e[2][19:] for e in _events(relay_log)][-2:] == [b"a", b"b"]


def test_one_writer_at_a_time(relay_log: RelayLog, writer: RelayLogWriter) -> None:
    with pytest.raises(RuntimeError, match="already has an open writer"):
        new_writer(relay_log).open()


def test_closed_writer_refuses_to_write(relay_log: RelayLog) -> None:
    writer = new_writer(relay_log)
    with pytest.raises(RuntimeError):
        writer.append(make_event())
    writer.close()  # idempotent on a writer never opened
    assert writer.state is WriterState.CLOSED


def test_crash_mid_event_is_trimmed_on_reopen(datadir: Path, relay_log: RelayLog) -> None:
    with new_writer(relay_log) as writer:
        writer.append(make_event(payload=b"whole"))
        end = writer.append(make_event(payload=b"y" * 50)).offset
    relay_log.close()
    os.truncate(relay_log.path(FIRST), end - 20)  # the last event is cut in its middle

    log = RelayLog.for_channel(datadir, CHANNEL)
    recovery = log.open()
    assert recovery.tail is not None
    kept = end - 69
    assert (recovery.tail.file, recovery.tail.position) == (FIRST, kept)
    assert recovery.tail.removed_bytes == 49
    assert "partial event" in recovery.tail.cause
    assert log.path(FIRST).stat().st_size == kept
    with new_writer(log) as writer:
        assert writer.position == RelayCoordinate(FIRST, kept)
        writer.append(make_event(payload=b"after"))
    assert [e[2][19:] for e in _events(log)][-2:] == [b"whole", b"after"]
    log.close()


def test_zeroed_tail_is_trimmed(datadir: Path, relay_log: RelayLog) -> None:
    with new_writer(relay_log) as writer:
        end = writer.append(make_event(payload=b"whole")).offset
    relay_log.close()
    with relay_log.path(FIRST).open("ab") as file:
        file.write(b"\x00" * 4096)
    log = RelayLog.for_channel(datadir, CHANNEL)
    recovery = log.open()
    assert recovery.tail is not None and "corrupt event length 0" in recovery.tail.cause
    assert log.path(FIRST).stat().st_size == end
    log.close()


def test_header_cut_short_leaves_a_file_that_gets_its_header(
    datadir: Path, relay_log: RelayLog
) -> None:
    with new_writer(relay_log):
        pass
    relay_log.close()
    os.truncate(relay_log.path(FIRST), 2)
    log = RelayLog.for_channel(datadir, CHANNEL)
    log.open()
    with new_writer(log) as writer:
        assert writer.position == RelayCoordinate(FIRST, START)
    assert log.path(FIRST).read_bytes() == MAGIC + HEADER
    log.close()


def test_last_file_with_bad_magic_is_an_error(datadir: Path, relay_log: RelayLog) -> None:
    with new_writer(relay_log):
        pass
    relay_log.close()
    relay_log.path(FIRST).write_bytes(b"\xfdbin" + HEADER)
    with pytest.raises(BinlogError, match="bad magic") as caught:
        RelayLog.for_channel(datadir, CHANNEL).open()
    assert (caught.value.file, caught.value.position) == (FIRST, 0)


class _FailingFile:
    """Writes half of what it is given, then fails like a full disk."""

    def __init__(self, real: object) -> None:
        self.real = real

    def write(self, data: bytes) -> int:
        self.real.write(data[: len(data) // 2])  # type: ignore[attr-defined]
        self.real.flush()  # type: ignore[attr-defined]
        raise OSError(28, "No space left on device")

    def __getattr__(self, name: str) -> object:
        return getattr(self.real, name)


def test_failed_write_breaks_the_writer_and_reopen_cuts_the_partial_event(
    relay_log: RelayLog,
) -> None:
    writer = new_writer(relay_log)
    writer.open()
    good = writer.append(make_event(payload=b"good")).offset
    writer._file = _FailingFile(writer._file)  # type: ignore[assignment]
    with pytest.raises(OSError):
        writer.append(make_event(payload=b"z" * 100))
    assert writer.state is WriterState.BROKEN
    assert relay_log.end_coordinate() == RelayCoordinate(FIRST, good)
    with pytest.raises(RuntimeError):
        writer.append(make_event())
    writer._file = writer._file.real  # type: ignore[union-attr]
    writer.close()
    assert relay_log.path(FIRST).stat().st_size > good

    with new_writer(relay_log) as again:
        assert again.position == RelayCoordinate(FIRST, good)
        again.append(make_event(payload=b"next"))
    assert [e[2][19:] for e in _events(relay_log)][-2:] == [b"good", b"next"]


def test_header_factory_bytes_are_checked(relay_log: RelayLog) -> None:
    writer = RelayLogWriter(relay_log, make_header=lambda: b"junk", make_rotate=lambda n: b"")
    with pytest.raises(BinlogError, match="file header"):
        writer.open()
    assert writer.state is WriterState.CLOSED
    assert relay_log.files() == []
    with new_writer(relay_log):
        pass
    assert relay_log.files() == [FIRST]


def test_failed_rotation_breaks_the_writer_and_reopen_completes_it(
    datadir: Path, relay_log: RelayLog
) -> None:
    writer = new_writer(relay_log)
    writer.open()
    writer.append(make_event(payload=b"before"))
    second = relay_log.path(f"{BASE}.000002")
    second.write_bytes(b"in the way")  # the next file cannot be created
    with pytest.raises(FileExistsError):
        writer.rotate()
    assert writer.state is WriterState.BROKEN
    assert second.read_bytes() == b"in the way"
    assert relay_log.files() == [FIRST]
    writer.close()
    relay_log.close()

    log = RelayLog.for_channel(datadir, CHANNEL)
    assert log.open().reconciliation.removed_unlisted == (f"{BASE}.000002",)
    with new_writer(log) as again:
        # The first file already ends with the ROTATE naming .000002: continue there.
        assert again.file_name == f"{BASE}.000002"
        again.append(make_event(payload=b"after"))
    events = _events(log)
    rotates = [e for e in events if e[1] == EventType.ROTATE]
    assert [(e[0], rotate_target(e[2])) for e in rotates] == [(FIRST, f"{BASE}.000002")]
    assert [e[2][19:] for e in events if e[1] == EventType.QUERY] == [b"before", b"after"]
    log.close()
