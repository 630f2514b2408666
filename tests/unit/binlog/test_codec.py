"""decode_event / encode_event: round trips of every control event, checksums, errors."""

from __future__ import annotations

import dataclasses
import zlib
from typing import Any

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_replica.applier_core.binlog.codecs.gtid import read_varlen, restamped_gtid, write_varlen
from spark_replica.applier_core.binlog.codecs.payload import (
    MAX_UNCOMPRESSED_PAYLOAD,
    decompress_payload,
)
from spark_replica.applier_core.binlog.codecs.registry import (
    STATEMENT_ONLY_TYPES,
    decode_event,
    decode_header,
    encode_event,
    encode_event_at,
)
from spark_replica.applier_core.binlog.constants import ChecksumAlg, EventFlag, EventType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import (
    DEFAULT_FDE,
    CompressionType,
    Event,
    FormatDescription,
    Gtid,
    GtidFormat,
    Heartbeat,
    Incident,
    MariadbAnnotateRows,
    MariadbBinlogCheckpoint,
    MariadbGtid,
    MariadbGtidList,
    PreviousGtids,
    Query,
    QueryStatus,
    Rotate,
    RowsQuery,
    StatementOnlyEvent,
    Stop,
    TransactionPayload,
    UnknownEvent,
    XaPrepare,
    Xid,
    make_header,
)
from spark_replica.applier_core.binlog.packing import Reader
from spark_replica.applier_core.binlog.payload import make_transaction_payload, payload_events
from spark_replica.applier_core.gtid import MAX_GNO, GtidSet

U8 = st.integers(0, 0xFF)
U16 = st.integers(0, 0xFFFF)
U24 = st.integers(0, 0xFFFFFF)
U32 = st.integers(0, 0xFFFFFFFF)
U64 = st.integers(0, (1 << 64) - 1)
I64 = st.integers(0, (1 << 63) - 1)
ZERO_UUID = "00000000-0000-0000-0000-000000000000"
TAGS = st.from_regex(r"\A[a-z_][a-z0-9_]{0,31}\Z")
SHORT = st.text(max_size=40)
NAMES = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=30)
LATIN1_CHARS = (
    bytes(range(256))
    .decode("latin-1")
    .translate(
        {b: bytes((b,)).decode("cp1252", errors="ignore") or chr(b) for b in range(0x80, 0xA0)}
    )
)


def header_for(type_code: int, flags: st.SearchStrategy[int] = U16) -> st.SearchStrategy[Any]:
    return st.builds(make_header, st.just(type_code), timestamp=U32, server_id=U32, flags=flags)


@st.composite
def fdes(draw: st.DrawFn) -> FormatDescription:
    if draw(st.booleans()):
        versions = ["8.0.36", "8.4.0", "9.6.0-debug", "5.7.44-log", "10.5.15-MariaDB-log", "5.6.1"]
        alg: int | None = draw(st.sampled_from([ChecksumAlg.OFF, ChecksumAlg.CRC32]))
    else:
        versions, alg = ["5.1.73", "5.0.96-log", "5.6.0"], None
    lengths = tuple(draw(st.lists(U8, min_size=15, max_size=171)))
    return FormatDescription(
        draw(header_for(15)), 4, draw(st.sampled_from(versions)), draw(U32), 19, lengths, alg
    )


@st.composite
def gtid_sets(draw: st.DrawFn) -> GtidSet:
    result = GtidSet()
    for _ in range(draw(st.integers(0, 4))):
        uuid, tag = str(draw(st.uuids())), draw(st.one_of(st.just(""), TAGS))
        for _ in range(draw(st.integers(1, 3))):
            first = draw(st.integers(1, MAX_GNO))
            result.add_interval(uuid, tag, first, draw(st.integers(first, MAX_GNO)))
    return result


@st.composite
def previous_gtids(draw: st.DrawFn) -> PreviousGtids:
    gtids = draw(gtid_sets())
    tagged = draw(st.booleans()) or any(tag for _, tag, _, _ in gtids.intervals())
    return PreviousGtids(draw(header_for(35)), gtids, tagged)


@st.composite
def untagged_gtids(draw: st.DrawFn) -> Gtid:
    anonymous = draw(st.booleans())
    fmt = draw(st.sampled_from(GtidFormat))
    values: dict[str, Any] = {"flags": draw(U8)}
    if fmt >= GtidFormat.LOGICAL_CLOCK:
        values |= {"last_committed": draw(I64), "sequence_number": draw(I64)}
    if fmt >= GtidFormat.COMMIT_TIMESTAMPS:
        immediate = draw(st.integers(0, (1 << 55) - 1))
        original = draw(st.one_of(st.just(immediate), st.integers(0, (1 << 56) - 1)))
        values |= {"immediate_commit_timestamp": immediate, "original_commit_timestamp": original}
    if fmt >= GtidFormat.TRANSACTION_LENGTH:
        values["transaction_length"] = draw(U64)
    if fmt >= GtidFormat.SERVER_VERSION:
        immediate = draw(st.integers(0, (1 << 31) - 1))
        original = draw(st.one_of(st.just(immediate), U32))
        values |= {
            "immediate_server_version": immediate,
            "original_server_version": original,
            "commit_group_ticket": draw(U64),
        }
    return Gtid(
        draw(header_for(34 if anonymous else 33)),
        uuid=ZERO_UUID if anonymous else str(draw(st.uuids())),
        gno=0 if anonymous else draw(st.integers(1, MAX_GNO - 1)),
        format=fmt,
        **values,
    )


@st.composite
def tagged_gtids(draw: st.DrawFn) -> Gtid:
    immediate_ts, immediate_version = draw(U64), draw(U32)
    return Gtid(
        draw(header_for(42)),
        draw(U8),
        str(draw(st.uuids())),
        draw(st.integers(1, MAX_GNO - 1)),
        draw(TAGS),
        draw(I64),
        draw(I64),
        immediate_ts,
        draw(st.one_of(st.just(immediate_ts), U64)),
        draw(U64),
        immediate_version,
        draw(st.one_of(st.just(immediate_version), U32)),
        draw(U64),
    )


def _optional(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


STATUSES = st.builds(
    QueryStatus,
    flags2=_optional(U32),
    sql_mode=_optional(U64),
    catalog=_optional(SHORT),
    auto_increment=_optional(st.tuples(U16, U16)),
    charset=_optional(st.tuples(st.sampled_from([8, 33, 45, 63, 255, 5, 28]), U16, U16)),
    time_zone=_optional(SHORT),
    catalog_nz=_optional(SHORT),
    lc_time_names=_optional(U16),
    charset_database=_optional(U16),
    table_map_for_update=_optional(U64),
    master_data_written=_optional(U32),
    invoker=_optional(st.tuples(SHORT, SHORT)),
    updated_db_names=_optional(st.lists(NAMES, max_size=5).map(tuple)),
    microseconds=_optional(U24),
    explicit_defaults_for_timestamp=_optional(U8),
    ddl_xid=_optional(U64),
    default_collation_for_utf8mb4=_optional(U16),
    sql_require_primary_key=_optional(U8),
    default_table_encryption=_optional(U8),
    mariadb_hrnow=_optional(U24),
    mariadb_xid=_optional(U64),
)


@st.composite
def queries(draw: st.DrawFn) -> Query:
    status = draw(STATUSES)
    if status.text_charset == "latin1":
        text = draw(st.text(st.sampled_from(LATIN1_CHARS), max_size=200))
    else:
        text = draw(st.text(max_size=200))
    return Query.build(
        draw(header_for(2)),
        text,
        db=draw(st.text(max_size=60)),
        status=status,
        thread_id=draw(U32),
        exec_time=draw(U32),
        error_code=draw(U16),
    )


@st.composite
def mariadb_gtids(draw: st.DrawFn) -> MariadbGtid:
    flags = draw(U8)
    commit_id = draw(U64) if flags & 2 else None
    extra = draw(st.one_of(st.just(b""), st.binary(min_size=6, max_size=30)))
    if commit_id is None and extra and not any(extra):
        extra = b""
    return MariadbGtid(draw(header_for(162)), draw(U32), draw(U64), flags, commit_id, extra)


UNKNOWN_TYPES = st.one_of(
    st.integers(43, 159), st.integers(172, 255), st.sampled_from([28, 36, 37])
)

EVENTS: st.SearchStrategy[Event] = st.one_of(
    fdes(),
    previous_gtids(),
    untagged_gtids(),
    tagged_gtids(),
    queries(),
    st.builds(Rotate, header_for(4), U64, NAMES),
    st.builds(Xid, header_for(16), U64),
    st.builds(Stop, header_for(3)),
    st.builds(Incident, header_for(26), U16, SHORT),
    st.builds(Heartbeat, header_for(27), NAMES, U32),
    st.builds(Heartbeat, header_for(41), NAMES, U64),
    st.builds(RowsQuery, header_for(29), st.text(max_size=300)),
    st.builds(
        XaPrepare,
        header_for(38),
        st.booleans(),
        st.integers(-(2**31), 2**31 - 1),
        st.binary(max_size=64),
        st.binary(max_size=64),
    ),
    st.builds(TransactionPayload, header_for(40), st.just(0), U32, st.binary(max_size=100)),
    st.builds(
        TransactionPayload, header_for(40), st.just(255), st.just(0), st.binary(max_size=100)
    ),
    st.sampled_from(sorted(STATEMENT_ONLY_TYPES)).flatmap(
        lambda t: st.builds(StatementOnlyEvent, header_for(t), st.just(t), st.binary(max_size=50))
    ),
    UNKNOWN_TYPES.flatmap(
        lambda t: st.builds(
            UnknownEvent,
            header_for(t, U16.map(lambda f: f | 0x80)),
            st.just(t),
            st.binary(max_size=50),
        )
    ),
    st.builds(MariadbAnnotateRows, header_for(160), st.text(max_size=100)),
    st.builds(MariadbBinlogCheckpoint, header_for(161), NAMES),
    mariadb_gtids(),
    st.builds(
        MariadbGtidList,
        header_for(163),
        st.lists(st.tuples(U32, U32, U64), max_size=8).map(tuple),
        st.integers(0, 15),
        st.binary(max_size=8),
    ),
)


def assert_same(decoded: Event, original: Event) -> None:
    """Equal but for the header's length and position, which the encoder sets."""
    assert type(decoded) is type(original)
    assert dataclasses.replace(decoded, header=original.header) == original  # type: ignore[type-var]


def round_trip(event: Event, checksum: bool, log_pos: int) -> Event:
    data = encode_event(event, checksum=checksum, log_pos=log_pos)
    decoded = decode_event(data, None, checksum=checksum)
    assert_same(decoded, event)
    assert decoded.header.event_length == len(data)
    heartbeat_v1 = isinstance(event, Heartbeat) and event.header.type_code == 27
    assert decoded.header.log_pos == (event.log_position if heartbeat_v1 else log_pos)  # type: ignore[attr-defined]
    assert encode_event(decoded, checksum=checksum, log_pos=log_pos) == data
    return decoded


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(EVENTS, st.booleans(), U32)
def test_round_trip_every_event_type(event: Event, checksum: bool, log_pos: int) -> None:
    round_trip(event, checksum, log_pos)


@given(EVENTS.filter(lambda e: not isinstance(e, FormatDescription)), st.data())
def test_any_flipped_byte_is_detected(event: Event, data: st.DataObject) -> None:
    raw = bytearray(encode_event(event, checksum=True, log_pos=1000))
    index = data.draw(st.integers(0, len(raw) - 1))
    raw[index] ^= data.draw(st.integers(1, 255))
    with pytest.raises(BinlogError):
        decode_event(bytes(raw), None, checksum=True)


def test_checksum_mismatch_message() -> None:
    raw = bytearray(encode_event(Xid(make_header(16), 77), checksum=True, log_pos=50))
    raw[20] ^= 0x01
    expected = zlib.crc32(bytes(raw[:-4]))
    found = int.from_bytes(raw[-4:], "little")
    with pytest.raises(BinlogError) as info:
        decode_event(bytes(raw), None, checksum=True)
    assert str(info.value) == (
        f"event checksum mismatch: expected 0x{expected:08x}, found 0x{found:08x}"
    )


def test_fde_checksum_ignores_the_in_use_flag() -> None:
    fde = FormatDescription.for_server(flags=EventFlag.BINLOG_IN_USE)
    raw = encode_event(fde, checksum=False, log_pos=126)
    cleared = bytearray(raw)
    cleared[17] &= ~EventFlag.BINLOG_IN_USE
    assert raw[-4:] == cleared[-4:] == zlib.crc32(bytes(cleared[:-4])).to_bytes(4, "little")
    assert decode_event(raw, None) == dataclasses.replace(
        fde, header=fde.header._replace(event_length=len(raw), log_pos=126)
    )
    assert decode_event(bytes(cleared), None).header.flags == 0


def test_fde_decides_checksums_itself() -> None:
    on = FormatDescription.for_server("8.0.36")
    off = dataclasses.replace(on, checksum_alg=ChecksumAlg.OFF)
    old = dataclasses.replace(on, server_version="5.1.73", checksum_alg=None)
    for fde, length in ((on, 19 + 57 + 42 + 5), (off, 19 + 57 + 42 + 5), (old, 19 + 57 + 42)):
        raw = encode_event(fde, checksum=True, log_pos=0)
        assert len(raw) == length
        decoded = decode_event(raw, None, checksum=False)
        assert isinstance(decoded, FormatDescription)
        assert decoded.checksum_alg == fde.checksum_alg
        assert decoded.checksums is (fde is on)


def test_type_40_post_header_quirk() -> None:
    fde = FormatDescription.for_server("8.4.0")
    assert fde.post_header_lengths[EventType.TRANSACTION_PAYLOAD - 1] == 40
    assert fde.post_header_len(EventType.TRANSACTION_PAYLOAD) == 0
    assert fde.post_header_len(EventType.QUERY) == 13
    assert fde.post_header_len(EventType.FORMAT_DESCRIPTION) == 57 + 42
    assert fde.post_header_len(EventType.MARIADB_GTID) == 19  # beyond the FDE: defaults


def test_events_after_an_fde_follow_its_checksum_setting() -> None:
    xid = Xid(make_header(16), 5)
    with_crc = encode_event(xid, checksum=True, log_pos=10)
    without = encode_event(xid, checksum=False, log_pos=10)
    assert len(with_crc) == len(without) + 4
    assert isinstance(decode_event(with_crc, FormatDescription.for_server(checksum=True)), Xid)
    assert isinstance(decode_event(without, FormatDescription.for_server(checksum=False)), Xid)
    assert isinstance(decode_event(without, None), Xid)
    with pytest.raises(BinlogError, match="Xid event: 4 unexpected trailing bytes"):
        decode_event(with_crc, FormatDescription.for_server(checksum=False))
    padded = without[:9] + (len(without) + 4).to_bytes(4, "little") + without[13:] + bytes(4)
    with pytest.raises(BinlogError, match="checksum mismatch"):
        decode_event(padded, FormatDescription.for_server(checksum=True))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "event is too short: 0 bytes"),
        (b"\x00" * 18, "event is too short: 18 bytes"),
        (bytes(9) + (30).to_bytes(4, "little") + bytes(6), "event length mismatch"),
    ],
)
def test_short_or_mislabelled_input(data: bytes, message: str) -> None:
    with pytest.raises(BinlogError, match=message):
        decode_event(data, None)


def test_truncated_body_names_the_event() -> None:
    raw = bytearray(encode_event(Rotate(make_header(4), 4, "x"), checksum=False, log_pos=0))
    raw = raw[:24]
    raw[9:13] = len(raw).to_bytes(4, "little")
    with pytest.raises(BinlogError, match=r"^ROTATE event is too short"):
        decode_event(bytes(raw), None)


def test_unknown_type_needs_the_ignorable_flag() -> None:
    raw = bytearray(
        encode_event(
            UnknownEvent(make_header(100, flags=0x80), 100, b"abc"), checksum=True, log_pos=0
        )
    )
    decoded = decode_event(bytes(raw), None, checksum=True)
    assert isinstance(decoded, UnknownEvent) and decoded.raw_body == b"abc"
    raw[17] = 0
    raw[-4:] = zlib.crc32(bytes(raw[:-4])).to_bytes(4, "little")
    with pytest.raises(BinlogError, match="unknown event type 100 without the IGNORABLE flag"):
        decode_event(bytes(raw), None, checksum=True)


@pytest.mark.parametrize(
    ("type_code", "name"),
    [(1, "START_V3"), (20, "PRE_GA_WRITE_ROWS"), (164, "MARIADB_START_ENCRYPTION")],
)
def test_unsupported_known_types(type_code: int, name: str) -> None:
    raw = encode_event(
        UnknownEvent(make_header(type_code), type_code, b""), checksum=False, log_pos=0
    )
    with pytest.raises(BinlogError, match=rf"unsupported \({name}\) event type {type_code}"):
        decode_event(raw, None)


def test_encoder_rejects_inconsistent_events() -> None:
    with pytest.raises(BinlogError, match="cannot have type code"):
        encode_event(Rotate(make_header(2), 4, "x"), checksum=False, log_pos=0)
    with pytest.raises(BinlogError, match="out of range"):
        encode_event(Xid(make_header(16), -1), checksum=False, log_pos=0)
    with pytest.raises(BinlogError, match="out of range"):
        encode_event(Xid(make_header(16), 1), checksum=False, log_pos=1 << 32)
    with pytest.raises(BinlogError):
        encode_event(
            Gtid(make_header(42), 0, str(ZERO_UUID), 1, "Not-A-Tag"), checksum=False, log_pos=0
        )
    with pytest.raises(BinlogError, match="at most 64 bytes"):
        encode_event(
            XaPrepare(make_header(38), False, 1, b"x" * 65, b""), checksum=False, log_pos=0
        )


def test_encode_event_at_sets_the_end_position() -> None:
    event = Xid(make_header(16), 9)
    raw = encode_event_at(event, 1000, checksum=True)
    assert decode_header(raw).log_pos == 1000 + len(raw) == 1031


# --- GTID events --------------------------------------------------------------------------


def test_gtid_text_and_flags() -> None:
    uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
    assert Gtid(make_header(33), 1, uuid, 7).gtid_text == f"{uuid}:7"
    assert Gtid(make_header(42), 0, uuid, 7, "blue").gtid_text == f"{uuid}:blue:7"
    anonymous = Gtid(make_header(34), 1, ZERO_UUID, 0)
    assert anonymous.anonymous and anonymous.gtid_text == "ANONYMOUS"
    assert anonymous.may_have_sbr


@pytest.mark.parametrize("gno", [0, MAX_GNO])
def test_gtid_number_out_of_range(gno: int) -> None:
    event = Gtid(make_header(33), 0, "3e11fa47-71ca-11e1-9e33-c80aa9429562", gno)
    with pytest.raises(BinlogError, match="out of range"):
        decode_event(encode_event(event, checksum=False, log_pos=0), None)


_UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


@pytest.mark.parametrize("checksum", [True, False])
@pytest.mark.parametrize(
    "fields",
    [
        {"transaction_length": 250},
        {"transaction_length": 251},
        {"transaction_length": 65535},
        {"transaction_length": 65536},
        {"transaction_length": 1 << 40},
        {"transaction_length": 900, "original_commit_timestamp": 1_600_000_000_000_000},
        {"transaction_length": 900, "original_server_version": 80036},
        {"transaction_length": 90, "commit_group_ticket": 3},
        {"transaction_length": 251, "format": GtidFormat.TRANSACTION_LENGTH},
        {"transaction_length": 0, "format": GtidFormat.COMMIT_TIMESTAMPS},
    ],
    ids=lambda f: "-".join(f"{k}={v}" for k, v in f.items()),
)
def test_gtid_shapes_round_trip(fields: dict[str, object], checksum: bool) -> None:
    """The usual MySQL 8 shapes have a fast path; every other shape takes the general one."""
    values: dict[str, object] = {
        "last_committed": 41, "sequence_number": 42,
        "immediate_commit_timestamp": 1_700_000_000_123_456,
        "original_commit_timestamp": 1_700_000_000_123_456,
        "immediate_server_version": 80400, "original_server_version": 80400, **fields,
    }  # fmt: skip
    if values.get("format", GtidFormat.SERVER_VERSION) < GtidFormat.SERVER_VERSION:
        values["immediate_server_version"] = values["original_server_version"] = 0
    event = Gtid(make_header(33), 0, _UUID, 7, **values)  # type: ignore[arg-type]
    round_trip(event, checksum, 1234)


def test_a_restamped_gtid_event_carries_the_new_commit_time_and_a_valid_checksum() -> None:
    """A transaction encoded beforehand, committed later: both commit timestamps, the header's
    second and the CRC32 change, nothing else does."""
    values: dict[str, Any] = {
        "last_committed": 41, "sequence_number": 42,
        "immediate_commit_timestamp": 1_700_000_000_123_456,
        "original_commit_timestamp": 1_700_000_000_123_456, "transaction_length": 777,
        "immediate_server_version": 80400, "original_server_version": 80400,
    }  # fmt: skip
    event = Gtid(make_header(33, timestamp=1_700_000_000), 0, _UUID, 7, **values)
    data = encode_event(event, checksum=True, log_pos=1234)
    stamped = restamped_gtid(data, 1_800_000_000_654_321)
    decoded = decode_event(stamped, None, checksum=True)  # checks the CRC32
    assert isinstance(decoded, Gtid)
    assert decoded.original_commit_timestamp == decoded.immediate_commit_timestamp
    assert decoded.original_commit_timestamp == 1_800_000_000_654_321
    assert decoded.header.timestamp == 1_800_000_000
    fields = ("uuid", "gno", "last_committed", "sequence_number", "transaction_length",
              "immediate_server_version", "original_server_version")  # fmt: skip
    assert [getattr(decoded, f) for f in fields] == [getattr(event, f) for f in fields]
    assert len(stamped) == len(data) and stamped[4:-4] != data[4:-4]


def test_only_a_gtid_event_with_one_commit_timestamp_is_restamped() -> None:
    differing = Gtid(make_header(33), 0, _UUID, 7, last_committed=1, sequence_number=2,
                     immediate_commit_timestamp=5, original_commit_timestamp=4)  # fmt: skip
    for data in (
        encode_event(differing, checksum=True, log_pos=0),
        encode_event(Xid(make_header(16), 9), checksum=True, log_pos=0),
        b"",
    ):
        with pytest.raises(BinlogError, match="not a GTID event with one commit timestamp"):
            restamped_gtid(data, 1)


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        (0, "00"),
        (60, "78"),
        (0x89, "2502"),
        (127, "fe"),
        (128, "0102"),
        ((1 << 64) - 1, "ff" + "ff" * 8),
    ],
)
def test_varlen_integers(value: int, encoded: str) -> None:
    assert write_varlen(value).hex() == encoded
    assert read_varlen(Reader(bytes.fromhex(encoded))) == value


@given(U64)
def test_varlen_round_trip(value: int) -> None:
    raw = write_varlen(value)
    reader = Reader(raw)
    assert read_varlen(reader) == value and reader.remaining == 0


# --- Query --------------------------------------------------------------------------------


def _query_with(charset: int, text: bytes) -> bytes:
    status = QueryStatus(charset=(charset, charset, charset)).encode()
    body = (
        bytes(8)
        + b"\x02"
        + bytes(2)
        + len(status).to_bytes(2, "little")
        + status
        + b"db\x00"
        + text
    )
    return bytes(4) + b"\x02" + bytes(4) + (19 + len(body)).to_bytes(4, "little") + bytes(6) + body


def test_query_text_charsets() -> None:
    latin1 = decode_event(_query_with(8, b"caf\xe9 \x80 \x81"), None)
    assert isinstance(latin1, Query)
    assert latin1.query == "café € \x81" and latin1.raw_query is None
    assert encode_event(latin1, checksum=False, log_pos=0) == _query_with(8, b"caf\xe9 \x80 \x81")
    utf8 = decode_event(_query_with(255, "café".encode()), None)
    assert isinstance(utf8, Query) and utf8.query == "café" and utf8.db == "db"
    lossy = decode_event(_query_with(33, b"x'\xff\xfe'"), None)
    assert isinstance(lossy, Query)
    assert lossy.query == "x'\ufffd\ufffd'" and lossy.raw_query == b"x'\xff\xfe'"
    assert encode_event(lossy, checksum=False, log_pos=0) == _query_with(33, b"x'\xff\xfe'")
    assert lossy.with_query("SELECT 1").raw_query is None


def test_query_status_unknown_code_stops_parsing() -> None:
    from spark_replica.applier_core.binlog.status_vars import parse_status_vars

    raw = QueryStatus(flags2=5).encode() + b"\x0e\x01\x02\x03" + QueryStatus(sql_mode=1).encode()
    assert parse_status_vars(raw) == QueryStatus(flags2=5)
    assert parse_status_vars(b"\x0c\xfe") == QueryStatus(updated_db_names=())
    with pytest.raises(BinlogError, match="too short"):
        parse_status_vars(b"\x01\x00")


def test_begin_and_commit_queries() -> None:
    def query(text: str) -> Query:
        return Query.build(make_header(2), text)

    assert query("BEGIN").is_begin and not query("BEGIN").is_commit
    assert query("COMMIT").is_commit and query(" rollback ").is_commit
    assert not query("ROLLBACK TO SAVEPOINT a").is_commit
    assert not query("INSERT INTO t VALUES (1)").is_begin


# --- Transaction_payload ------------------------------------------------------------------


def _inner() -> list[Event]:
    return [
        Query.build(make_header(2, flags=8), "BEGIN", db="test"),
        Query.build(make_header(2), "INSERT INTO t VALUES ('" + "x" * 500 + "')", db="test"),
        Xid(make_header(16), 42),
    ]


@pytest.mark.parametrize("compression", list(CompressionType))
def test_payload_round_trip(compression: CompressionType) -> None:
    payload = make_transaction_payload(make_header(40), _inner(), compression=compression)
    decoded = round_trip(payload, True, 999)
    assert isinstance(decoded, TransactionPayload)
    inner = payload_events(decoded)
    assert [type(e) for e in inner] == [Query, Query, Xid]
    for got, want in zip(inner, _inner(), strict=True):
        assert_same(got, want)
        assert got.header.log_pos == 0
    if compression == CompressionType.ZSTD:
        assert len(decoded.payload) < decoded.uncompressed_size


def _payload(data: bytes, declared: int) -> TransactionPayload:
    return TransactionPayload(make_header(40), CompressionType.ZSTD, declared, data)


def test_payload_decompression_is_bounded() -> None:
    inner = b"".join(encode_event(e, checksum=False, log_pos=0) for e in _inner())
    frame = zstandard.ZstdCompressor().compress(inner)
    assert decompress_payload(_payload(frame, len(inner))) == inner
    for declared in (len(inner) - 1, len(inner) + 1):
        with pytest.raises(BinlogError, match="declared"):
            decompress_payload(_payload(frame, declared))
    with pytest.raises(BinlogError, match="more than"):
        decompress_payload(_payload(frame, MAX_UNCOMPRESSED_PAYLOAD + 1))
    with pytest.raises(BinlogError, match="does not decompress"):
        decompress_payload(_payload(b"not zstd at all", 10))
    bomb = zstandard.ZstdCompressor().compress(bytes(50_000_000))
    with pytest.raises(BinlogError, match="declared 100"):
        decompress_payload(_payload(bomb, 100))
    with pytest.raises(BinlogError, match="unsupported transaction compression type 7"):
        decompress_payload(TransactionPayload(make_header(40), 7, 0, b""))


def test_payload_inner_garbage_is_a_binlog_error() -> None:
    data = zstandard.ZstdCompressor().compress(b"\x00" * 30)
    with pytest.raises(BinlogError, match="invalid event length 0 at offset 0"):
        payload_events(_payload(data, 30))
    bad_inner = encode_event(Xid(make_header(16), 1), checksum=False, log_pos=0) + b"\x00"
    bad_inner = bad_inner[:9] + len(bad_inner).to_bytes(4, "little") + bad_inner[13:]
    payload = make_transaction_payload(make_header(40), [], compression=CompressionType.NONE)
    payload = dataclasses.replace(payload, payload=bad_inner)
    with pytest.raises(BinlogError, match="in compressed transaction at offset 0"):
        payload_events(payload)


def test_default_fde_is_an_84_server() -> None:
    assert DEFAULT_FDE.server_version == "8.4.0" and DEFAULT_FDE.checksums
    assert len(DEFAULT_FDE.post_header_lengths) == 42
