"""``scan_tail``: the check of the last relay log file at open (crash recovery of the relay
log): where its last whole event ends, that event's type, and the cut of a partial tail,
including events that straddle the read window."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.constants import HEADER_LEN, MAGIC, EventType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.relaylog import framing
from spark_replica.applier_core.binlog.relaylog.framing import scan_tail
from tests.unit.relaylog.fakes import HEADER, make_event, make_rotate, numbered


def _scan(path: Path, data: bytes) -> tuple[framing.TailScan, bytes]:
    path.write_bytes(data)
    fd = os.open(path, os.O_RDWR)
    try:
        scan = scan_tail(fd, path.name)
    finally:
        os.close(fd)
    return scan, path.read_bytes()


def test_a_whole_file_is_kept_and_its_last_event_type_given(tmp_path: Path) -> None:
    events = MAGIC + HEADER + b"".join(numbered(i, 50 + i) for i in range(100))
    data = events + make_rotate("relay.000002")
    scan, kept = _scan(tmp_path / "relay.000001", data)
    assert (scan.end, scan.last_type, scan.repair) == (len(data), EventType.ROTATE, None)
    assert kept == data


def test_a_file_with_only_the_magic_number_has_no_last_event(tmp_path: Path) -> None:
    scan, _ = _scan(tmp_path / "relay.000001", MAGIC)
    assert (scan.end, scan.last_type, scan.repair) == (len(MAGIC), None, None)


@pytest.mark.parametrize(
    ("tail", "cause"),
    [
        (make_event(EventType.XID, b"x" * 8)[:-3], "partial event: length 27, 24 bytes written"),
        (make_event(EventType.XID, b"x" * 8)[:7], "partial event header (7 bytes)"),
        (b"\x00" * 40, "corrupt event length 0"),
    ],
    ids=["partial-event", "partial-header", "zeroed"],
)
def test_a_partial_or_corrupt_tail_is_cut_after_the_last_whole_event(
    tmp_path: Path, tail: bytes, cause: str
) -> None:
    whole = MAGIC + HEADER + numbered(1, 60) + make_event(EventType.XID, b"x" * 8)
    scan, kept = _scan(tmp_path / "relay.000001", whole + tail)
    assert (scan.end, scan.last_type) == (len(whole), EventType.XID)
    assert scan.repair is not None and scan.repair.cause == cause
    assert scan.repair.removed_bytes == len(tail) and kept == whole


def test_events_across_read_windows_are_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A window of 64 bytes: event headers and bodies straddle every window boundary."""
    monkeypatch.setattr(framing, "_SCAN_WINDOW", 64)
    events = [numbered(i, HEADER_LEN + 4 + (i * 7) % 90) for i in range(200)]
    whole = MAGIC + HEADER + b"".join(events)
    tail = numbered(999, 80)[:50]
    scan, kept = _scan(tmp_path / "relay.000001", whole + tail)
    assert (scan.end, scan.last_type) == (len(whole), EventType.QUERY)
    assert scan.repair is not None and scan.repair.removed_bytes == 50 and kept == whole


def test_a_file_without_the_magic_number_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BinlogError, match="bad magic number"):
        _scan(tmp_path / "relay.000001", b"\x00bin" + HEADER)
