"""The key index's codec: rows round-trip exactly, keys encode deterministically.

Row-based replication (CPT.0010) hands the engine decoded values of every column type; a
partial image (MINIMAL/NOBLOB) is completed from the index's stored row, so the row must come
back with the same types and values the decoder produced."""

from __future__ import annotations

import marshal
import pickle
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

import pytest
import spark_replica_native
from hypothesis import given
from hypothesis import strategies as st

from spark_replica.applier_core.binlog.rows.json_text import JsonText, binary_to_text
from spark_replica.applier_core.binlog.rows.values import Geometry
from spark_replica.applier_core.storage.key_index import codec
from spark_replica.applier_core.storage.key_index.codec import (
    KeyTypeError,
    decode_key,
    decode_row,
    encode_key,
    encode_row,
    encode_row_in_python,
    key_bytes,
    key_bytes_in_python,
)

_PLAIN = (type(None), bool, int, float, str, bytes)
_UTC_DATETIMES = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(),
    st.binary(),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.dates(),
    st.datetimes(),
    _UTC_DATETIMES,
    st.times(),
    st.timedeltas(),
    st.builds(lambda text: JsonText(text, text.encode()), st.text()),
    st.builds(Geometry, st.integers(0, 2**32 - 1), st.binary()),
    st.lists(st.floats(width=32, allow_nan=False), max_size=4),
)
ROWS = st.tuples(SCALARS, SCALARS, SCALARS) | st.lists(SCALARS, max_size=6).map(tuple)
#: Values a key can hold: what the engine compares with ``==``, one type per column.
KEY_VALUES = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(),
    st.binary(),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.dates(),
    st.datetimes(),
    _UTC_DATETIMES,
    st.times(),
    st.timedeltas(),
)


def _identical(left: object, right: object) -> bool:
    """Same type and value, all the way down (``==`` alone would accept 1 for 1.0 or True,
    '1' for JsonText('1'))."""
    if type(left) is not type(right):
        return False
    if isinstance(left, tuple | list):
        assert isinstance(right, tuple | list)
        return len(left) == len(right) and all(map(_identical, left, right))
    if isinstance(left, JsonText):
        assert isinstance(right, JsonText)
        return str(left) == str(right) and left.binary == right.binary
    if isinstance(left, float):
        return repr(left) == repr(right)  # -0.0 is not 0.0 here
    if isinstance(left, Decimal):
        return str(left) == str(right)
    if isinstance(left, datetime):
        assert isinstance(right, datetime)
        return left == right and left.tzinfo == right.tzinfo and left.fold == right.fold
    return left == right


@given(ROWS)
def test_a_row_round_trips_exactly(row: tuple[object, ...]) -> None:
    assert _identical(decode_row(encode_row(row)), row)


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        2**64 - 1,
        -(2**63),
        10**30,
        -0.0,
        1e308,
        "caf\u00e9 \U0001f600",
        "\udcff surrogate-escaped",
        b"\x00\xff",
        Decimal("-12345678901234567890123456789012345678901234567890.123456789012345"),
        Decimal("1.50"),
        date(1, 1, 1),
        datetime(2024, 2, 29, 23, 59, 59, 999999),
        datetime(1970, 1, 1, tzinfo=UTC),
        datetime(2021, 11, 7, 1, 30, fold=1),
        time(23, 59, 59, 1),
        timedelta(days=-35, microseconds=1),
        "2021-04-31 10:00:00.500",  # a DATETIME Python cannot hold, kept as MySQL prints it
        binary_to_text(b"\x00\x01\x00\x0c\x00\x0b\x00\x01\x00\x05\x01\x00a"),
        Geometry(4326, b"\x01\x01\x00\x00\x00" + bytes(16)),
        [0.5, -1.25],
        (0.5, -1.25),
    ],
    ids=repr,
)
def test_every_decoder_value_round_trips(value: object) -> None:
    row = (1, value, value)
    assert _identical(decode_row(encode_row(row)), row)


def test_plain_rows_take_marshal_and_others_pickle() -> None:
    """The cheaper encoding when it can; pickle (first byte 0x80) for the rest."""
    plain = (1, "a", None)
    assert encode_row_in_python(plain) == marshal.dumps(plain, 4)
    assert marshal.loads(encode_row(plain)) == plain
    temporal = (1, Decimal("1.50"), date(2024, 2, 29), datetime(2021, 11, 7, 1, 30, fold=1),
                time(1, 2, 3, 4), timedelta(days=-1))  # fmt: skip
    assert encode_row(temporal)[0] != 0x80
    assert encode_row((1, datetime(1970, 1, 1, tzinfo=UTC)))[0] == 0x80
    assert encode_row((JsonText("1", b"\x05\x01\x00"),))[0] == 0x80
    assert encode_row((1, [date(2024, 1, 1)]))[0] == 0x80  # marshal holds no date in a list


def test_a_row_encodes_alike_whichever_way_is_tried_first() -> None:
    """The encoder tries first the way the last row took: the bytes do not depend on it."""
    rows = [(1, "a"), (2, date(2020, 1, 1)), (3, "b"), (4, Decimal("4.0")), (5, None)]
    first = [encode_row_in_python(row) for row in rows]
    assert [encode_row_in_python(row) for row in reversed(rows)] == first[::-1]
    assert [decode_row(data) for data in first] == rows


@given(st.lists(KEY_VALUES, min_size=1, max_size=3).map(tuple))
def test_equal_keys_encode_equally(key: tuple[object, ...]) -> None:
    """A copy built from other objects (no shared identity, other representation of the same
    number) encodes to the same bytes."""
    copy = pickle.loads(pickle.dumps(key))
    assert encode_key(copy) == encode_key(key)
    assert decode_key(encode_key(key)) == key


@given(KEY_VALUES, KEY_VALUES)
def test_different_values_of_a_type_encode_differently(left: object, right: object) -> None:
    if type(left) is type(right) and left != right:
        assert encode_key((left,)) != encode_key((right,))


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (0.0, -0.0),
        (Decimal("1.5"), Decimal("1.500")),
        (Decimal("0"), Decimal("-0.00")),
        (Decimal("100"), Decimal("1E+2")),
        (1, True),
        ("[1]", JsonText("[1]", b"\x02\x01\x00\x07\x00\x05\x01\x00")),
        ((1, b"x"), Geometry(1, b"x")),
        (datetime(2021, 11, 7, 1, 30), datetime(2021, 11, 7, 1, 30, fold=1)),
    ],
    ids=repr,
)
def test_keys_equal_by_value_encode_equally(left: object, right: object) -> None:
    assert left == right
    assert encode_key((left, "x")) == encode_key((right, "x"))


def test_the_key_encoding_says_when_it_normalised() -> None:
    assert key_bytes((1, "a", Decimal("1.5"), 0.5))[1]
    assert not key_bytes((-0.0,))[1]
    assert not key_bytes((Decimal("1.50"),))[1]
    assert not key_bytes((JsonText("1", b""),))[1]
    assert decode_key(key_bytes((-0.0, Decimal("1.50")))[0]) == (0.0, Decimal("1.5"))


def test_ascending_integer_keys_sort_ascending() -> None:
    """Sequential ids append at the end of the B-tree."""
    values = [-(2**63), -1, 0, 1, 255, 256, 2**63, 2**64 - 1]
    encoded = [encode_key((v,)) for v in values]
    assert encoded == sorted(encoded)


def test_an_unknown_key_type_is_refused() -> None:
    with pytest.raises(KeyTypeError):
        encode_key((object(),))


# -- the native core ---------------------------------------------------------------------------

#: Values the native core encodes itself (the rest it leaves to the Python codec).
NATIVE_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64 - 1),
    st.floats(allow_nan=False),
    st.text(alphabet=st.characters(exclude_categories=["Cs"])),
    st.binary(),
    st.dates(),
    st.datetimes(),
    st.times(),
    st.timedeltas(),
)
NATIVE_ROW_VALUES = NATIVE_VALUES | st.decimals(allow_nan=False) | st.integers()


def test_the_native_core_is_built() -> None:
    """``make install`` builds it; without it the codec is several times slower."""
    assert codec._native is spark_replica_native


@given(st.lists(NATIVE_ROW_VALUES | st.lists(NATIVE_VALUES, max_size=3), max_size=8).map(tuple))
def test_the_native_core_writes_rows_the_python_codec_reads_back(row: tuple[object, ...]) -> None:
    encoded = spark_replica_native.encode_row(row)
    temporal = any(isinstance(v, list) and any(type(x) not in _PLAIN for x in v) for v in row)
    if temporal or any(type(v) is int and not -(2**127) <= v < 2**127 for v in row):
        return  # a list holding dates, or an int beyond 128 bits: the Python codec's
    assert encoded is not None
    assert _identical(decode_row(encoded), row)
    assert _identical(decode_row(encode_row_in_python(row)), row)


@given(ROWS)
def test_rows_the_native_core_leaves_are_encoded_by_the_python_codec(
    row: tuple[object, ...],
) -> None:
    assert _identical(decode_row(encode_row(row)), row)
    encoded = spark_replica_native.encode_row(row)
    if encoded is not None:
        assert _identical(decode_row(encoded), row)


@given(st.lists(NATIVE_VALUES | st.tuples(NATIVE_VALUES, NATIVE_VALUES), max_size=4).map(tuple))
def test_the_native_core_writes_the_python_codecs_key_bytes(key: tuple[object, ...]) -> None:
    assert spark_replica_native.key_bytes(key) == key_bytes_in_python(key)
    assert spark_replica_native.encode_key(key) == key_bytes_in_python(key)[0]


@given(st.lists(KEY_VALUES | st.builds(lambda t: JsonText(t, b""), st.text()), max_size=3))
def test_keys_the_native_core_leaves_are_encoded_by_the_python_codec(
    values: list[object],
) -> None:
    key = tuple(values)
    native = spark_replica_native.key_bytes(key)
    assert native is None or native == key_bytes_in_python(key)
    assert key_bytes(key) == key_bytes_in_python(key)


@pytest.mark.parametrize(
    "key",
    [
        (Decimal("1.50"),),
        (datetime(1970, 1, 1, tzinfo=UTC),),
        (JsonText("1", b""),),
        ("\udcff",),
        (2**64,),
        ([1, (2, "x")],),
        [1],
    ],
    ids=repr,
)
def test_the_native_core_leaves_some_keys_to_the_python_codec(key: object) -> None:
    native = spark_replica_native.key_bytes(key)
    if isinstance(key, tuple) and isinstance(key[0], int | list):
        assert native == key_bytes_in_python(key)  # big ints and lists it encodes
    else:
        assert native is None
