"""Real binlogs (MySQL 5.0-9.6, MariaDB 10.5): decoding, re-encoding, damaged files, and the
``mysqlbinlog`` (MariaDB's) decoding of the same files as an independent oracle."""

from __future__ import annotations

import re
import shutil
import subprocess
import zlib
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_replica.applier_core.binlog.codecs.payload import decompress_payload, split_events
from spark_replica.applier_core.binlog.codecs.registry import (
    decode_event,
    encode_event,
    remember_table_map,
)
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import (
    Event,
    FormatDescription,
    Gtid,
    GtidFormat,
    MariadbBinlogCheckpoint,
    MariadbGtid,
    MariadbGtidList,
    PreviousGtids,
    Query,
    Rotate,
    TransactionPayload,
    UnknownEvent,
    Xid,
)
from spark_replica.applier_core.binlog.file import BinlogFileReader, read_raw_events
from spark_replica.applier_core.binlog.payload import payload_events
from tests.unit.binlog import FIXTURES, ROW_TYPES

FIXTURE_FILES = sorted(path.name for path in FIXTURES.glob("*") if path.name != "README.md")

#: file -> (position, cause) of the BinlogError that reading it ends with; the others decode.
EXPECTED_ERRORS: dict[str, tuple[int, str]] = {
    "binlog_truncated_event.000001": (
        4,
        r"truncated event: the file ends 10 bytes into the 19-byte header",
    ),
    "binlog_truncated_prev_gtid_event.000001": (
        120,
        r"truncated event: the file ends 9 bytes into the 19-byte header",
    ),
    # a Query event whose body is the middle of another statement
    "corrupt-relay-bin.000624": (
        91204,
        r"QUERY event is too short: 152 bytes of body, "
        r"the status variables and database name need 17030",
    ),
    # a 5.2 prototype numbering its events differently (type 16 is a table map there)
    "ver_5_1-wl2325_r.001": (428, r"Xid event: 11 unexpected trailing bytes"),
    # pre-GA rows events (types 20-22), which no released server reads
    "ver_5_1-wl2325_s.001": (
        411,
        r"unsupported \(PRE_GA_WRITE_ROWS\) event type 20 without the IGNORABLE flag",
    ),
}


def control_events(path: Path) -> list[tuple[int, bytes, Event]]:
    """(position, raw, event) of the events other than Table_map/Rows, decoded in order."""
    fde: FormatDescription | None = None
    out: list[tuple[int, bytes, Event]] = []
    for pos, _end, raw in read_raw_events(path):
        if raw[4] in ROW_TYPES:
            continue
        try:
            event = decode_event(raw, fde)
        except BinlogError as exc:
            raise exc.at(str(path), pos) from exc
        if isinstance(event, FormatDescription):
            fde = event
        out.append((pos, raw, event))
    return out


def _check_expected_error(name: str, error: BinlogError) -> None:
    assert name in EXPECTED_ERRORS, f"unexpected error: {error}"
    position, cause = EXPECTED_ERRORS[name]
    assert error.file == str(FIXTURES / name)
    assert error.position == position
    assert re.fullmatch(cause, error.cause), error.cause


@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_control_events_decode_and_re_encode_exactly(name: str) -> None:
    path = FIXTURES / name
    try:
        events = control_events(path)
    except BinlogError as error:
        _check_expected_error(name, error)
        return
    assert name not in EXPECTED_ERRORS
    assert isinstance(events[0][2], FormatDescription)
    fde = events[0][2]
    for _pos, raw, event in events:
        if isinstance(event, FormatDescription):
            fde = event
        again = encode_event(event, checksum=fde.checksums, log_pos=event.header.log_pos)
        assert again == raw, f"{type(event).__name__} at {_pos} does not re-encode exactly"


@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_fixture_decodes_fully_or_fails_cleanly(name: str) -> None:
    path = FIXTURES / name
    reader = BinlogFileReader(path)
    events: list[tuple[int, int, Event]] = []
    try:
        events.extend(reader)
    except BinlogError as error:
        _check_expected_error(name, error)
        return
    assert name not in EXPECTED_ERRORS
    assert events[-1][1] == path.stat().st_size == reader.position
    assert [pos for pos, _, _ in events[1:]] == [end for _, end, _ in events[:-1]]


def _frames_until_error(path: Path) -> list[tuple[int, int, bytes]]:
    frames: list[tuple[int, int, bytes]] = []
    try:
        frames.extend(read_raw_events(path))
    except BinlogError:
        pass
    return frames


# --- values of known files ----------------------------------------------------------------


def _events_of(name: str, kind: type[Event]) -> list[Event]:
    return [event for _, _, event in control_events(FIXTURES / name) if isinstance(event, kind)]


def test_mysql_56_gtids() -> None:
    gtids = _events_of("binlog_transaction_with_GTID.000001", Gtid)
    uuid = "006c2cf2-b1ea-11e4-9057-8c705a3d3e78"
    assert [g.gtid_text for g in gtids] == [f"{uuid}:{n}" for n in (1, 2, 3)]  # type: ignore[attr-defined]
    assert {g.format for g in gtids} == {GtidFormat.MYSQL_56}  # type: ignore[attr-defined]


def test_tagged_gtids_96() -> None:
    name = "binlog_transaction_with_GTID_TAG.000001"
    uuid = "55778904-0299-11f1-b1b8-4ef0c4956feb"
    (previous,) = _events_of(name, PreviousGtids)
    assert isinstance(previous, PreviousGtids) and previous.tagged
    assert str(previous.gtids) == f"{uuid}:1-13:mytag:1-2"
    (gtid,) = _events_of(name, Gtid)
    assert isinstance(gtid, Gtid) and gtid.header.type_code == 42
    assert gtid.gtid_text == f"{uuid}:mytag:3" and gtid.tag == "mytag"
    assert (gtid.last_committed, gtid.sequence_number) == (0, 1)
    assert gtid.immediate_server_version == gtid.original_server_version == 90600
    (rotate,) = _events_of(name, Rotate)
    assert isinstance(rotate, Rotate)
    assert gtid.transaction_length == rotate.header.log_pos - rotate.header.event_length - 245


def test_untagged_previous_gtids_80() -> None:
    (previous,) = _events_of("binlog_transaction_previous_GTID_no_tag.000001", PreviousGtids)
    assert isinstance(previous, PreviousGtids) and not previous.tagged
    assert str(previous.gtids) == "b9b88c66-0755-11f1-9899-4a9da94c4d71:1-2"


def test_mariadb_events() -> None:
    name = "mariadb-bin.000001"
    gtids = _events_of(name, MariadbGtid)
    assert [g.gtid_text for g in gtids] == ["0-1-1", "0-1-2"]  # type: ignore[attr-defined]
    assert all(g.flags == 12 and g.commit_id is None for g in gtids)  # type: ignore[attr-defined]
    (gtid_list,) = _events_of(name, MariadbGtidList)
    assert isinstance(gtid_list, MariadbGtidList) and gtid_list.gtids == ()
    (checkpoint,) = _events_of(name, MariadbBinlogCheckpoint)
    assert isinstance(checkpoint, MariadbBinlogCheckpoint)
    assert checkpoint.log_file == "mariadb-bin.000001"
    assert [x.xid for x in _events_of(name, Xid)] == [800, 820]  # type: ignore[attr-defined]


def _server_version(fde: FormatDescription) -> int:
    match = re.match(r"(\d+)\.(\d+)\.(\d+)", fde.server_version)
    assert match is not None
    major, minor, patch = (int(part) for part in match.groups())
    return major * 10000 + minor * 100 + patch


#: GTID events carrying a transaction length (8.0.2+), per file.
GTIDS_WITH_LENGTH = {
    "binlog-invisible-columns.000001": 5,
    "binlog_transaction_with_GTID_TAG.000001": 1,
    "json-opaque.binlog": 3,
    "json.binlog.000001": 8,
    "minimal_row_metadata.000001": 1,
    "mysql-bin.compressed": 1,
    "mysql-enum-string-set.000001": 5,
    "mysql_type_bit.000001": 3,
    "rpl_unfiltered_hidden_gcol.000001": 3,
    "time_issue.000001": 1,
    "transaction_compression.000001": 1,
    "vector.binlog": 10,
}


@pytest.mark.parametrize("name", [n for n in FIXTURE_FILES if n not in EXPECTED_ERRORS])
def test_gtid_fields_agree_with_the_file(name: str) -> None:
    """Transaction length = bytes up to the next transaction; versions and times agree."""
    frames = list(read_raw_events(FIXTURES / name))
    checked = 0
    fde: FormatDescription | None = None
    for pos, _end, raw in frames:
        if raw[4] in ROW_TYPES:
            continue
        event = decode_event(raw, fde)
        if isinstance(event, FormatDescription):
            fde = event
        if not isinstance(event, Gtid) or event.format < GtidFormat.TRANSACTION_LENGTH:
            continue
        assert fde is not None
        following = [p for p, _, r in frames if p > pos and r[4] in (33, 34, 42, 3, 4)]
        end = following[0] if following else frames[-1][1]
        assert event.transaction_length == end - pos
        assert event.immediate_server_version == _server_version(fde)
        assert event.immediate_commit_timestamp // 1_000_000 == event.header.timestamp
        checked += 1
    assert checked == GTIDS_WITH_LENGTH.get(name, 0)


# --- compressed transactions --------------------------------------------------------------

PAYLOADS = {
    "transaction_compression.000001": (179, [2, 19, 30, 16]),
    "mysql-bin.compressed": (960, [2, 19, 31, 16]),
}


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_payload_decompression(name: str) -> None:
    size, types = PAYLOADS[name]
    (payload,) = _events_of(name, TransactionPayload)
    assert isinstance(payload, TransactionPayload)
    assert (payload.compression_type, payload.uncompressed_size) == (0, size)
    inner = decompress_payload(payload)
    assert len(inner) == size
    frames = list(split_events(inner))
    assert [raw[4] for _, raw in frames] == types
    assert all(int.from_bytes(raw[13:17], "little") == 0 for _, raw in frames)  # log_pos 0
    begin = decode_event(frames[0][1], None)
    assert isinstance(begin, Query) and begin.query == "BEGIN"
    assert isinstance(decode_event(frames[-1][1], None), Xid)


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_payload_inner_events_decode(name: str) -> None:
    (payload,) = _events_of(name, TransactionPayload)
    assert isinstance(payload, TransactionPayload)
    inner = payload_events(payload)
    assert [e.header.type_code for e in inner] == PAYLOADS[name][1]


# --- an unknown event type ----------------------------------------------------------------


def test_aurora_padding_is_ignorable(tmp_path: Path) -> None:
    path = FIXTURES / "mysql-bin.aurora-padding"
    events = {pos: event for pos, _, event in BinlogFileReader(path)}
    padding = events[281]
    assert isinstance(padding, UnknownEvent)
    assert padding.type_code == 100 and padding.header.flags == 0x80
    assert len(padding.raw_body) == 928 - 19 - 4
    data = bytearray(path.read_bytes())
    data[281 + 17] = 0  # clear IGNORABLE; fix the CRC so only the flag differs
    data[1209 - 4 : 1209] = zlib.crc32(bytes(data[281 : 1209 - 4])).to_bytes(4, "little")
    copy = tmp_path / "aurora-no-flag"
    copy.write_bytes(bytes(data))
    with pytest.raises(BinlogError) as info:
        list(BinlogFileReader(copy))
    assert info.value.position == 281 and info.value.file == str(copy)
    assert info.value.cause == "unknown event type 100 without the IGNORABLE flag"


# --- mysqlbinlog as an oracle ---------------------------------------------------------------

MYSQLBINLOG = shutil.which("mysqlbinlog") or shutil.which("mariadb-binlog")
_AT = re.compile(r"^# at (\d+)$")
_HEADER = re.compile(
    r"^#\d{6}\s+\d{1,2}:\d\d:\d\d server id (\d+)\s+end_log_pos (\d+)"
    r"(?: CRC32 0x([0-9a-f]{8}))?\s*(.*)$"
)
_FAILED_AT = re.compile(r"Could not read entry at offset (\d+)")
_TYPE_WORDS = [
    ("Start:", {15}),
    ("Query", {2}),
    ("Xid =", {16}),
    ("Intvar", {5}),
    ("Rotate to", {4}),
    ("Stop", {3}),
    ("Ignorable", {33, 34, 35, 100}),
    ("Gtid list", {163}),
    ("Binlog checkpoint", {161}),
    ("GTID ", {162}),
    ("Annotate_rows", {160}),
    ("Table_map", {19}),
    ("Write_rows", {23, 30}),
    ("Update_rows", {24, 31}),
    ("Delete_rows", {25, 32}),
    ("User_var", {14}),
    ("Rand", {13}),
    ("Execute_load_query", {18}),
    ("", {9, 17}),
]


def _mysqlbinlog(
    path: Path,
) -> tuple[list[int], list[tuple[int, int, str | None, str]], int | None]:
    assert MYSQLBINLOG is not None
    result = subprocess.run(
        [MYSQLBINLOG, "--base64-output=DECODE-ROWS", str(path)],
        capture_output=True,
        timeout=60,
        check=False,
    )
    text = (result.stdout + result.stderr).decode("utf-8", errors="replace")
    positions: list[int] = []
    headers: list[tuple[int, int, str | None, str]] = []
    for line in text.splitlines():
        if match := _AT.match(line):
            positions.append(int(match.group(1)))
        elif match := _HEADER.match(line):
            server, end, crc, rest = match.groups()
            headers.append((int(server), int(end), crc, rest))
    failed = _FAILED_AT.search(text)
    return positions, headers, int(failed.group(1)) if failed else None


def _check_details(event: Event, rest: str) -> None:
    if isinstance(event, Query):
        assert rest.startswith(
            f"Query\tthread_id={event.thread_id}\texec_time={event.exec_time}"
            f"\terror_code={event.error_code}"
        )
    elif isinstance(event, Xid):
        assert rest == f"Xid = {event.xid}"
    elif isinstance(event, Rotate):
        assert rest == f"Rotate to {event.next_file}  pos: {event.position}"
    elif isinstance(event, FormatDescription):
        assert rest.startswith(f"Start: binlog v 4, server v {event.server_version} created")
    elif isinstance(event, MariadbGtid):
        assert rest.startswith(f"GTID {event.gtid_text}")
    elif isinstance(event, MariadbBinlogCheckpoint):
        assert rest == f"Binlog checkpoint {event.log_file}"


@pytest.mark.clients
@pytest.mark.skipif(MYSQLBINLOG is None, reason="mysqlbinlog is not installed")
@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_positions_and_headers_match_mysqlbinlog(name: str) -> None:
    path = FIXTURES / name
    positions, headers, failed_at = _mysqlbinlog(path)
    frames = _frames_until_error(path)
    ours = [pos for pos, _, _ in frames]
    assert len(positions) == len(headers)
    assert positions == ours[: len(positions)]
    if failed_at is not None:
        assert failed_at in {*ours, frames[-1][1] if frames else 4}
    try:
        decoded = {pos: event for pos, _, event in control_events(path)}
    except BinlogError as error:
        _check_expected_error(name, error)
        decoded = {}
    for (pos, _end, raw), (server, end_log_pos, crc, rest) in zip(frames, headers, strict=False):
        assert int.from_bytes(raw[5:9], "little") == server
        assert int.from_bytes(raw[13:17], "little") == end_log_pos
        if crc is not None:
            assert raw[-4:] == bytes.fromhex(crc)[::-1]
        words = next(types for word, types in _TYPE_WORDS if rest.startswith(word))
        assert raw[4] in words, (pos, raw[4], rest)
        if pos in decoded:
            _check_details(decoded[pos], rest)
    if name in EXPECTED_ERRORS and failed_at is not None:
        assert failed_at >= EXPECTED_ERRORS[name][0]


# --- mutations: only BinlogError, never a hang --------------------------------------------


Sample = tuple[bytes, FormatDescription | None, dict[int, object]]


def _sample_events() -> list[Sample]:
    """Events of every fixture, with the FDE and Table_maps in force where they appear."""
    samples: list[Sample] = []
    for name in FIXTURE_FILES:
        fde: FormatDescription | None = None
        maps: dict[int, object] = {}
        for _pos, _end, raw in _frames_until_error(FIXTURES / name):
            try:
                event = decode_event(raw, fde, table_maps=maps)
            except BinlogError:
                break
            if isinstance(event, FormatDescription):
                fde = event
            remember_table_map(event, maps)
            if len(raw) <= 2048:
                samples.append((raw, fde, dict(maps)))
    return samples


SAMPLES = _sample_events()
MUTATIONS = st.lists(
    st.tuples(
        st.sampled_from(["flip", "insert", "delete"]), st.integers(0, 1 << 16), st.integers(1, 255)
    ),
    min_size=1,
    max_size=4,
)


def _mutate(raw: bytes, mutations: list[tuple[str, int, int]]) -> bytearray:
    data = bytearray(raw)
    for kind, where, value in mutations:
        index = where % (len(data) + 1)
        if kind == "insert":
            data.insert(index, value)
        elif data:
            index = min(index, len(data) - 1)
            if kind == "flip":
                data[index] ^= value
            else:
                del data[index]
    return data


@settings(
    max_examples=1500,
    deadline=timedelta(milliseconds=500),
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.sampled_from(SAMPLES), MUTATIONS, st.booleans(), st.booleans())
def test_mutated_events_raise_only_binlog_error(
    sample: Sample,
    mutations: list[tuple[str, int, int]],
    fix_length: bool,
    strip_checksum: bool,
) -> None:
    raw, fde, maps = sample
    checksum = fde is not None and fde.checksums and raw[4] != 15
    if checksum and strip_checksum:
        raw, checksum = raw[:-4], False
        raw = raw[:9] + len(raw).to_bytes(4, "little") + raw[13:]
    data = _mutate(raw, mutations)
    if fix_length and len(data) >= 13:
        data[9:13] = len(data).to_bytes(4, "little")
    try:
        event = decode_event(bytes(data), fde, checksum=checksum, table_maps=maps)
        if isinstance(event, TransactionPayload):
            payload_events(event, fde)
    except BinlogError:
        pass
