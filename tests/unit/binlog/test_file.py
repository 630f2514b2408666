"""BinlogFileWriter / BinlogFileReader / read_raw_events."""

from __future__ import annotations

import dataclasses
import os
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_replica.applier_core.binlog import file as file_module
from spark_replica.applier_core.binlog.codecs.registry import decode_header, encode_event
from spark_replica.applier_core.binlog.constants import MAGIC, ChecksumAlg, EventType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import (
    Event,
    FormatDescription,
    Heartbeat,
    PreviousGtids,
    Query,
    Rotate,
    Xid,
    make_header,
)
from spark_replica.applier_core.binlog.file import (
    BinlogFileReader,
    BinlogFileWriter,
    read_raw_events,
)
from spark_replica.applier_core.gtid import GtidSet
from tests.unit.binlog import FIXTURES, ROW_TYPES
from tests.unit.binlog.test_codec import EVENTS, assert_same

FDE = FormatDescription.for_server("8.4.0", server_id=7, timestamp=1_700_000_000)
STREAM_EVENTS = EVENTS.filter(lambda e: not isinstance(e, FormatDescription))


def _some_events() -> list[Event]:
    return [
        Query.build(make_header(2, server_id=7), "BEGIN", db="test"),
        Query.build(make_header(2, server_id=7), "INSERT INTO t VALUES (1)", db="test"),
        Xid(make_header(16, server_id=7), 31),
        Rotate(make_header(4, server_id=7), 4, "binlog.000002"),
    ]


def _write(path: Path, events: list[Event], *, checksum: bool = True) -> list[tuple[int, int]]:
    with BinlogFileWriter(path, FDE, checksum=checksum) as writer:
        return [writer.write(event) for event in events]


@settings(
    max_examples=60,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(STREAM_EVENTS, max_size=12), st.booleans())
def test_write_then_read(tmp_path: Path, events: list[Event], checksum: bool) -> None:
    path = tmp_path / f"binlog.{os.getpid()}.{id(events)}"
    try:
        spans = _write(path, events, checksum=checksum)
        read = list(BinlogFileReader(path))
        fde = read[0][2]
        assert isinstance(fde, FormatDescription) and fde.checksums is checksum
        assert read[0][:2] == (4, 4 + fde.header.event_length) == (4, 4 + 19 + 57 + 42 + 5)
        assert fde.header.log_pos == read[0][1]
        assert [(pos, end) for pos, end, _ in read[1:]] == spans
        for (_, end, decoded), original in zip(read[1:], events, strict=True):
            assert_same(decoded, original)
            heartbeat_v1 = isinstance(original, Heartbeat) and original.header.type_code == 27
            if not heartbeat_v1:
                assert decoded.header.log_pos == end
        assert path.stat().st_size == (spans[-1][1] if spans else read[0][1])
    finally:
        path.unlink(missing_ok=True)


def test_raw_events_are_the_written_bytes(tmp_path: Path) -> None:
    path = tmp_path / "binlog.000001"
    events = _some_events()
    spans = _write(path, events)
    raw = list(read_raw_events(path))
    assert [(pos, end) for pos, end, _ in raw[1:]] == spans
    for (pos, end, data), event in zip(raw[1:], events, strict=True):
        assert data == encode_event(event, checksum=True, log_pos=end)
        assert len(data) == end - pos
    assert raw[0][2][:19] == encode_event(FDE, checksum=True, log_pos=raw[0][1])[:19]


def test_checksums_off(tmp_path: Path) -> None:
    path = tmp_path / "binlog.000001"
    spans = _write(path, _some_events(), checksum=False)
    reader = BinlogFileReader(path)
    events = list(reader)
    assert reader.fde is not None and reader.fde.checksum_alg == ChecksumAlg.OFF
    assert [len(data) for _, _, data in read_raw_events(path)][1:] == [
        end - pos for pos, end in spans
    ]
    assert isinstance(events[3][2], Xid) and events[3][2].xid == 31


def test_previous_gtids_follow_the_fde(tmp_path: Path) -> None:
    path = tmp_path / "binlog.000001"
    gtids = GtidSet.parse(
        "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5,3e11fa47-71ca-11e1-9e33-c80aa9429562:blue:1"
    )
    with BinlogFileWriter(path, FDE, previous_gtids=gtids) as writer:
        writer.write(Xid(make_header(16), 1))
    events = [event for _, _, event in BinlogFileReader(path)]
    assert isinstance(events[1], PreviousGtids)
    assert events[1].gtids == gtids and events[1].tagged
    assert events[1].header.server_id == 7 and events[1].header.flags == 0x80


def test_log_pos_override_and_raw_writes(tmp_path: Path) -> None:
    path = tmp_path / "relay.000001"
    source_event = encode_event(Xid(make_header(16, server_id=9), 5), checksum=True, log_pos=8888)
    with BinlogFileWriter(path, FDE) as writer:
        start, end = writer.write(Xid(make_header(16), 4), log_pos=12345)
        raw_span = writer.write_raw(source_event)
        writer.flush()
        writer.fsync()
        assert writer.position == raw_span[1] == path.stat().st_size
    assert raw_span == (end, end + len(source_event))
    headers = [decode_header(data) for _, _, data in read_raw_events(path)]
    assert [h.log_pos for h in headers[1:]] == [12345, 8888]


def test_writer_refuses_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "binlog.000001"
    path.write_bytes(b"keep")
    with pytest.raises(BinlogError, match="cannot create binary log") as info:
        BinlogFileWriter(path, FDE)
    assert info.value.file == str(path)
    assert path.read_bytes() == b"keep"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", r"not a binary log: bad magic number 0x\(empty\)"),
        (b"\xfe\x62", "not a binary log: bad magic number 0xfe62"),
        (b"GIF89a", "not a binary log: bad magic number 0x47494638"),
        (b"\xfdbin" + bytes(40), "encrypted binary logs are not supported"),
    ],
)
def test_bad_magic(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "not-a-binlog"
    path.write_bytes(content)
    for read in (lambda: list(BinlogFileReader(path)), lambda: list(read_raw_events(path))):
        with pytest.raises(BinlogError, match=message) as info:
            read()
        assert (info.value.file, info.value.position) == (str(path), 0)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BinlogError, match="cannot open binary log"):
        list(BinlogFileReader(tmp_path / "nope"))


def test_magic_only_is_an_empty_log(tmp_path: Path) -> None:
    path = tmp_path / "binlog.000001"
    path.write_bytes(MAGIC)
    assert list(BinlogFileReader(path)) == []


@pytest.mark.timeout(10)
@pytest.mark.parametrize("cut", [1, 4, 10, 18, 19, 20, 27])
def test_truncated_last_event(tmp_path: Path, cut: int) -> None:
    path = tmp_path / "binlog.000001"
    spans = _write(path, _some_events())
    last_start, last_end = spans[-1]
    with open(path, "r+b") as handle:
        handle.truncate(last_end - cut)
    reader = BinlogFileReader(path)
    seen: list[int] = []
    with pytest.raises(BinlogError, match="^truncated event") as info:
        for pos, _end, _event in reader:
            seen.append(pos)
    assert (info.value.file, info.value.position) == (str(path), last_start)
    assert seen == [4, *[start for start, _ in spans[:-1]]]
    with pytest.raises(BinlogError, match="^truncated event"):
        list(read_raw_events(path))


def test_huge_declared_length_is_truncation_not_allocation(tmp_path: Path) -> None:
    path = tmp_path / "binlog.000001"
    spans = _write(path, _some_events())
    data = bytearray(path.read_bytes())
    start = spans[1][0]
    data[start + 9 : start + 13] = (0xFFFFFFF0).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    tracemalloc.start()
    try:
        with pytest.raises(BinlogError, match="header says 4294967280 bytes") as info:
            list(read_raw_events(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.position == start
    assert peak < 16 << 20


@pytest.mark.parametrize("buffer", [19, 20, 64, 333])
def test_events_across_read_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, buffer: int
) -> None:
    path = tmp_path / "binlog.000001"
    spans = _write(path, _some_events() * 5)
    whole = list(BinlogFileReader(path))
    monkeypatch.setattr(file_module, "_READ_BUFFER", buffer)
    assert [(pos, end) for pos, end, _ in read_raw_events(path)][1:] == spans
    assert list(BinlogFileReader(path)) == whole
    with open(path, "r+b") as handle:
        handle.truncate(spans[-1][1] - 3)
    with pytest.raises(BinlogError, match="^truncated event") as info:
        list(BinlogFileReader(path))
    assert info.value.position == spans[-1][0]


def test_invalid_event_length(tmp_path: Path) -> None:
    path = tmp_path / "binlog.000001"
    spans = _write(path, _some_events())
    data = bytearray(path.read_bytes())
    data[spans[0][0] + 9 : spans[0][0] + 13] = (5).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    with pytest.raises(BinlogError, match="invalid event length 5") as info:
        list(BinlogFileReader(path))
    assert info.value.position == spans[0][0]


def test_corrupt_event_is_located(tmp_path: Path) -> None:
    path = tmp_path / "binlog.000001"
    spans = _write(path, _some_events())
    data = bytearray(path.read_bytes())
    data[spans[2][0] + 20] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(BinlogError, match="event checksum mismatch") as info:
        list(BinlogFileReader(path))
    assert (info.value.file, info.value.position) == (str(path), spans[2][0])
    assert str(info.value).endswith(f"(file '{path}', position {spans[2][0]})")


@pytest.mark.parametrize("checksum", [True, False])
def test_resume_inside_a_file(tmp_path: Path, checksum: bool) -> None:
    path = tmp_path / "binlog.000001"
    spans = _write(path, _some_events(), checksum=checksum)
    reader = BinlogFileReader(path, start=spans[2][0])
    events = list(reader)
    assert [(pos, end) for pos, end, _ in events] == spans[2:]
    assert isinstance(events[0][2], Xid)
    assert reader.fde is not None and reader.fde.checksums is checksum


def test_relay_log_with_two_fdes() -> None:
    path = FIXTURES / "rpl_unfiltered_hidden_gcol.000001"
    reader = BinlogFileReader(path)
    fdes = []
    for _pos, _end, event in reader:
        if isinstance(event, FormatDescription):
            fdes.append(event)
    assert [fde.server_version for fde in fdes] == ["8.0.17-debug", "8.0.17-debug"]
    assert fdes[0].header.flags & 0x40 and fdes[0].header.server_id == 2
    assert reader.fde is fdes[-1] and reader.fde.header.server_id == 1


def test_resume_in_a_relay_log_uses_the_source_fde() -> None:
    path = FIXTURES / "rpl_unfiltered_hidden_gcol.000001"
    positions = [pos for pos, _, _ in read_raw_events(path)]
    reader = BinlogFileReader(path, start=positions[5])
    first = next(iter(reader))
    assert first[0] == positions[5]
    assert reader.fde is not None and reader.fde.header.server_id == 1


def test_table_maps_are_tracked() -> None:
    reader = BinlogFileReader(FIXTURES / "mysql-bin.checksum-none")
    checked = 0
    for _pos, _end, event in reader:
        if event.header.type_code in ROW_TYPES and event.header.type_code != EventType.TABLE_MAP:
            assert event.table_id in reader.table_maps  # type: ignore[attr-defined]
            checked += 1
        if isinstance(event, Xid):
            assert not reader.table_maps
    assert checked == 36


def test_writer_sets_the_fde_checksum_algorithm(tmp_path: Path) -> None:
    path = tmp_path / "binlog.000001"
    old = dataclasses.replace(FDE, checksum_alg=ChecksumAlg.OFF)
    with BinlogFileWriter(path, old, checksum=True) as writer:
        assert writer.fde.checksum_alg == ChecksumAlg.CRC32
    (only,) = list(BinlogFileReader(path))
    assert isinstance(only[2], FormatDescription) and only[2].checksums


@pytest.mark.parametrize("checksum", [True, False])
def test_moved_events_are_written_as_if_encoded_in_place(tmp_path: Path, checksum: bool) -> None:
    direct, moved = tmp_path / "binlog.000001", tmp_path / "binlog.000002"
    _write(direct, _some_events(), checksum=checksum)
    with BinlogFileWriter(moved, FDE, checksum=checksum) as writer:
        for event in _some_events():
            writer.write_moved(encode_event(event, checksum=checksum, log_pos=0))
        with pytest.raises(BinlogError, match="other than a Format_description"):
            writer.write_moved(encode_event(FDE, checksum=checksum, log_pos=0))
    assert moved.read_bytes() == direct.read_bytes()
