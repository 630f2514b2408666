"""Round trips of random values of every type through the row encoder and the compiled
decoders, and the encoders' refusals."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_replica.applier_core.binlog.constants import ColumnType as T
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.packing import Reader
from spark_replica.applier_core.binlog.rows import ABSENT, Geometry, encode_rows_event, make_column
from spark_replica.applier_core.binlog.rows.decimal import (
    decimal_size,
    decode_decimal,
    encode_decimal,
)
from spark_replica.applier_core.binlog.rows.partial import read_image
from spark_replica.applier_core.binlog.rows.temporal import (
    datetime2_decoder,
    datetime2_encoder,
    time2_decoder,
    time2_encoder,
    timestamp2_decoder,
    timestamp2_encoder,
)
from spark_replica.applier_core.binlog.rows.values import codec_for
from tests.unit.binlog_rows.builders import round_trip_rows, rows_event, table
from tests.unit.binlog_rows.strategies import (
    ENUM_NAMES,
    all_types_columns,
    decimals,
    rows_for,
    times,
    values_for,
)

COLUMNS = all_types_columns()
ALL_TYPES = table(COLUMNS)
QUICK = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def same(a: Any, b: Any) -> bool:
    """Equality that tells -0.0 from 0.0."""
    if isinstance(a, float) and isinstance(b, float):
        return math.copysign(1, a) == math.copysign(1, b) and a == b
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b or (isinstance(a, str) and a == b)


@pytest.mark.parametrize("spec", COLUMNS, ids=lambda c: c.describe())
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_type_round_trips_alone(spec: Any, data: st.DataObject) -> None:
    column = make_column(0, spec.type, **_attributes(spec))
    one = table((column,))
    values = data.draw(st.lists(values_for(column) | st.none(), min_size=1, max_size=5))
    event = rows_event(one, [(v,) for v in values])
    again = round_trip_rows(event, one)
    assert all(same(row[0], v) for row, v in zip(again.rows, values, strict=True))


def _attributes(spec: Any) -> dict[str, Any]:
    keys = ("unsigned", "collation", "members")
    out = {k: getattr(spec, k) for k in keys}
    out.update(
        length=spec.max_length, precision=spec.precision, scale=spec.scale, fsp=spec.fsp,
        bits=spec.bits, pack_length=spec.pack_length, real_type=spec.real_type,
    )  # fmt: skip
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    rows=st.lists(rows_for(COLUMNS), min_size=1, max_size=4),
    kind=st.sampled_from(["insert", "delete", "update", "insert_v1", "update_v1"]),
    present=st.integers(1, (1 << len(COLUMNS)) - 1),
    padding=st.booleans(),
)
def test_rows_of_every_type_round_trip(
    rows: list[tuple[Any, ...]], kind: str, present: int, padding: bool
) -> None:
    image = [tuple(v if present >> i & 1 else ABSENT for i, v in enumerate(r)) for r in rows]
    if kind.startswith("update"):
        pairs = list(zip(image, reversed(image), strict=True))
        event = rows_event(
            ALL_TYPES, pairs, kind, present=present, after=present, null_padding=padding
        )
    else:
        event = rows_event(ALL_TYPES, image, kind, present=present, null_padding=padding)
    again = round_trip_rows(event, ALL_TYPES)
    assert same(again.rows, event.rows)
    assert again.full_image == (present == (1 << len(COLUMNS)) - 1)
    assert again.null_padding == (padding and bin(present).count("1") % 8 != 0)


@QUICK
@given(rows=st.lists(rows_for(COLUMNS), min_size=1, max_size=6))
def test_compiled_decoder_agrees_with_interpreter(rows: list[tuple[Any, ...]]) -> None:
    event = rows_event(ALL_TYPES, rows)
    body = encode_rows_event(event, ALL_TYPES)
    decoded = round_trip_rows(event, ALL_TYPES)
    width = len(COLUMNS)
    reader = Reader(body, 6 + 2 + 2 + 1 + (width + 7) // 8)
    codecs = {i: codec_for(c) for i, c in enumerate(COLUMNS)}
    interpreted = []
    while reader.remaining:
        interpreted.append(read_image(reader, codecs, width))
    assert same(interpreted, decoded.rows)


# -- DECIMAL ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "precision", "scale", "hex_bytes"),
    [
        ("1234567890.1234", 14, 4, "810dfb38d204d2"),  # strings/decimal.cc's example
        ("-1234567890.1234", 14, 4, "7ef204c72dfb2d"),
        ("0", 1, 0, "80"),
        ("-0.5", 5, 2, "7fffcd"),
        ("9.00", 11, 2, "8000000900"),  # json-opaque.binlog
        ("123.456", 6, 3, "807b01c8"),
        ("0.000000001", 10, 9, "8000000001"),
    ],
)
def test_decimal_known_bytes(text: str, precision: int, scale: int, hex_bytes: str) -> None:
    raw = encode_decimal(Decimal(text), precision, scale)
    assert raw.hex() == hex_bytes
    assert len(raw) == decimal_size(precision, scale)
    assert decode_decimal(raw, precision, scale) == Decimal(text)
    assert decode_decimal(raw, precision, scale).as_tuple().exponent == -scale


@settings(max_examples=200, deadline=None)
@given(data=st.data(), precision=st.integers(1, 65))
def test_decimal_round_trip(data: st.DataObject, precision: int) -> None:
    scale = data.draw(st.integers(0, min(30, precision)))
    value = data.draw(decimals(precision, scale))
    raw = encode_decimal(value, precision, scale)
    assert len(raw) == decimal_size(precision, scale)
    back = decode_decimal(raw, precision, scale)
    assert back == value and back.as_tuple().exponent == -scale
    assert value.is_signed() == back.is_signed()


@pytest.mark.parametrize(
    ("value", "precision", "scale"),
    [("1000", 3, 0), ("0.001", 5, 2), ("NaN", 5, 2), ("Infinity", 5, 0), ("1E+70", 65, 0)],
)
def test_decimal_that_does_not_fit_is_refused(value: str, precision: int, scale: int) -> None:
    with pytest.raises(BinlogError):
        encode_decimal(Decimal(value), precision, scale)


def test_decimal_with_invalid_digit_groups_is_refused() -> None:
    with pytest.raises(BinlogError, match="invalid DECIMAL"):
        decode_decimal(bytes.fromhex("80ffffffff"), 10, 0)


# -- temporal types -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "fsp", "hex_bytes"),
    [  # the table in my_time.cc (my_time_packed_from_binary), fsp 2
        (timedelta(0), 2, "80000000"),
        (-timedelta(microseconds=10000), 2, "7fffffff"),
        (-timedelta(microseconds=990000), 2, "7fffff9d"),
        (-timedelta(seconds=1), 2, "7fffff00"),
        (-timedelta(seconds=1, microseconds=10000), 2, "7ffffeff"),
        (-timedelta(seconds=1, microseconds=100000), 2, "7ffffef6"),
        (timedelta(hours=838, minutes=59, seconds=59), 0, "b46efb"),
        (-timedelta(hours=838, minutes=59, seconds=59), 0, "4b9105"),
    ],
)
def test_time2_known_bytes(value: timedelta, fsp: int, hex_bytes: str) -> None:
    assert time2_encoder(fsp)(value).hex() == hex_bytes
    assert time2_decoder(fsp)(bytes.fromhex(hex_bytes)) == value


@settings(max_examples=150, deadline=None)
@given(data=st.data(), fsp=st.integers(0, 6))
def test_negative_time_with_fractions_round_trips(data: st.DataObject, fsp: int) -> None:
    value = data.draw(times(fsp))
    raw = time2_encoder(fsp)(value)
    assert len(raw) == 3 + (fsp + 1) // 2
    assert time2_decoder(fsp)(raw) == value


def test_time2_order_matches_byte_order() -> None:
    """MySQL's TIME2 bytes sort like the values (which is why negatives reverse fractions)."""
    values = [timedelta(microseconds=n * 10000) for n in range(-300, 300, 7)]
    for fsp in (2, 4, 6):
        assert sorted(values, key=time2_encoder(fsp)) == sorted(values)


@pytest.mark.parametrize("fsp", range(7))
def test_datetime2_and_timestamp2_every_fsp(fsp: int) -> None:
    unit = 10 ** (6 - fsp)
    moment = datetime(2021, 12, 31, 23, 59, 58, 999999 // unit * unit)
    raw = datetime2_encoder(fsp)(moment)
    assert len(raw) == 5 + (fsp + 1) // 2
    assert datetime2_decoder(fsp)(raw) == moment
    aware = moment.replace(tzinfo=UTC)
    raw = timestamp2_encoder(fsp)(aware)
    assert len(raw) == 4 + (fsp + 1) // 2
    assert timestamp2_decoder(fsp)(raw) == aware
    if fsp <= 4:  # stored in units of 10**(6 - fsp rounded up to even) microseconds
        with pytest.raises(BinlogError, match="fractional digits"):
            datetime2_encoder(fsp)(moment.replace(microsecond=1))


def test_zero_and_invalid_dates_are_text() -> None:
    columns = (make_column(0, T.DATE), make_column(1, T.DATETIME2, fsp=3),
               make_column(2, T.TIMESTAMP2, fsp=0), make_column(3, T.DATETIME))  # fmt: skip
    t = table(columns)
    rows = [
        ("0000-00-00", "0000-00-00 00:00:00.000", "0000-00-00 00:00:00", "0000-00-00 00:00:00"),
        ("2021-02-30", "2021-04-31 10:20:30.500", datetime(2038, 1, 19, 3, 14, 8, tzinfo=UTC),
         "2021-00-00 00:00:00"),
        (date(1, 1, 1), datetime(9999, 12, 31, 23, 59, 59, 999000),
         datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC), datetime(1000, 1, 1)),
    ]  # fmt: skip
    assert round_trip_rows(rows_event(t, rows), t).rows == rows


# -- other types -------------------------------------------------------------------------------


def test_latin1_is_windows_1252_with_c1_gaps() -> None:
    column = make_column(0, T.VARCHAR, length=255, collation=8)
    t = table((column,))
    text = "€ŠšŸ\x81\x8d\x8f\x90\x9dÿ"
    event = rows_event(t, [(text,)])
    body = encode_rows_event(event, t)
    assert body.endswith(bytes([0x80, 0x8A, 0x9A, 0x9F, 0x81, 0x8D, 0x8F, 0x90, 0x9D, 0xFF]))
    assert round_trip_rows(event, t).rows == [(text,)]
    with pytest.raises(BinlogError, match="latin1"):
        encode_rows_event(rows_event(t, [("\u0080",)]), t)


def test_every_latin1_byte_is_one_character_and_back() -> None:
    from spark_replica.applier_core.binlog.text import decode_latin1, encode_latin1

    every = bytes(range(256))
    text = decode_latin1(every)
    assert len(text) == 256 and text[0x80] == "€" and text[0x9D] == "\x9d"
    assert text[:0x80] == every[:0x80].decode("ascii") and text[0xA0:] == every[0xA0:].decode(
        "latin-1"
    )
    assert encode_latin1(text) == every
    with pytest.raises(UnicodeEncodeError, match="not a MySQL latin1 character"):
        encode_latin1("abc Ł")


def test_unknown_character_sets_keep_bytes() -> None:
    t = table((make_column(0, T.VARCHAR, length=20, collation=28),))  # gbk
    assert round_trip_rows(rows_event(t, [(b"\xc4\xe3\xba\xc3",)]), t).rows == [
        (b"\xc4\xe3\xba\xc3",)
    ]
    without = table((make_column(0, T.BLOB),))  # no charset metadata: bytes
    assert round_trip_rows(rows_event(without, [(b"text",)]), without).rows == [(b"text",)]


def test_enum_and_set_without_member_names_are_numbers() -> None:
    columns = (make_column(0, T.STRING, real_type=T.ENUM, pack_length=1),
               make_column(1, T.STRING, real_type=T.SET, pack_length=3))  # fmt: skip
    t = table(columns)
    assert round_trip_rows(rows_event(t, [(3, 0b101)]), t).rows == [(3, 0b101)]


def test_enum_index_zero_is_the_empty_string() -> None:
    t = table((make_column(0, T.STRING, real_type=T.ENUM, members=ENUM_NAMES),))
    assert round_trip_rows(rows_event(t, [("",), ("ça va",)]), t).rows == [("",), ("ça va",)]


def test_geometry_and_vector() -> None:
    columns = (make_column(0, T.GEOMETRY), make_column(1, T.VECTOR))
    t = table(columns)
    point = bytes.fromhex("0101000000000000000000f03f0000000000000040")
    rows = [(Geometry(4326, point), [1.5, -2.25, 0.0])]
    assert round_trip_rows(rows_event(t, rows), t).rows == rows


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        (make_column(0, T.TINY), 128, "out of range"),
        (make_column(0, T.TINY, unsigned=True), -1, "out of range"),
        (make_column(0, T.LONG), "12", "not a number"),
        (make_column(0, T.INT24), 1 << 23, "too big"),
        (make_column(0, T.YEAR), 1900, "not a YEAR"),
        (make_column(0, T.BIT, bits=3), 8, "does not fit BIT"),
        (make_column(0, T.VARCHAR, length=4, collation=255), "hello", "do not fit"),
        (make_column(0, T.VARCHAR, length=40, collation=63), "text", "binary"),
        (make_column(0, T.STRING, real_type=T.ENUM, members=("a",)), "b", "not a member"),
        (make_column(0, T.STRING, real_type=T.SET, members=("a",)), "a,b", "not a member"),
        (make_column(0, T.DATE), datetime(2020, 1, 1), "not a datetime"),
        (make_column(0, T.DATETIME2), datetime(2020, 1, 1, tzinfo=UTC), "naive"),
        (make_column(0, T.TIMESTAMP2), datetime(2020, 1, 1), "aware"),
        (make_column(0, T.TIME2), 5, "timedelta"),
        (make_column(0, T.TIME), timedelta(microseconds=5), "fractions"),
        (make_column(0, T.JSON), "{bad", "invalid JSON"),
        (make_column(0, T.JSON), '{"a": NaN}', "invalid JSON"),
        (make_column(0, T.GEOMETRY), b"\x00" * 8, "not a Geometry"),
    ],
)
def test_encoder_refuses_values_the_column_cannot_hold(
    column: Any, value: Any, message: str
) -> None:
    t = table((column,))
    with pytest.raises(BinlogError, match=message):
        encode_rows_event(rows_event(t, [(value,)]), t)


def test_rows_must_match_the_image() -> None:
    t = table((make_column(0, T.LONG), make_column(1, T.LONG)))
    with pytest.raises(BinlogError, match="ABSENT"):
        encode_rows_event(rows_event(t, [(1, ABSENT)]), t)
    with pytest.raises(BinlogError, match="not in the image"):
        encode_rows_event(rows_event(t, [(1, 2)], present=0b01), t)
    with pytest.raises(BinlogError, match="3 values for 2 columns"):
        encode_rows_event(rows_event(t, [(1, 2, 3)]), t)


def test_null_type_columns_are_always_null() -> None:
    t = table((make_column(0, T.LONG), make_column(1, T.NULL), make_column(2, T.LONG)))
    rows = [(1, None, 2), (None, None, 3)]
    assert round_trip_rows(rows_event(t, rows), t).rows == rows


def test_types_rows_cannot_carry_are_refused() -> None:
    for column in (make_column(0, T.DECIMAL), make_column(0, T.NEWDATE)):
        t = table((column,))
        with pytest.raises(BinlogError, match="cannot carry"):
            encode_rows_event(rows_event(t, [(None,)]), t)


@pytest.mark.parametrize("module", ["decimal", "json_text"])
def test_module_examples(module: str) -> None:
    import doctest
    import importlib

    loaded = importlib.import_module(f"spark_replica.applier_core.binlog.rows.{module}")
    assert doctest.testmod(loaded).failed == 0


def test_an_event_narrower_than_its_table_is_not_a_full_image() -> None:
    t = table((make_column(0, T.LONG), make_column(1, T.LONG), make_column(2, T.LONG)))
    narrow = rows_event(t, [(1, 2)], present=0b11)
    narrow.width = 2
    again = round_trip_rows(narrow, t)
    assert again.rows == [(1, 2)] and not again.full_image
    assert round_trip_rows(rows_event(t, [(1, 2, 3)]), t).full_image
