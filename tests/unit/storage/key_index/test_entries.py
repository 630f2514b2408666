"""The key index's data entries of a batch's changes, by the native core and by the Python
codec: the same data keys, in the same order, rows that read back alike."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from spark_replica.applier_core.storage.key_index.codec import decode_row, encode_row_in_python
from spark_replica.applier_core.storage.key_index.entries import (
    KEY_LIMIT,
    data_keys,
    data_keys_in_python,
    keyed_entries,
    keyed_entries_in_python,
    stored_key,
)
from spark_replica.applier_core.storage.key_index.layout import Layout

PREFIX = b"\x00\x00\x00\x00\x00\x00\x00\x07"
KEYS = st.tuples(st.integers(-(2**63), 2**64 - 1)) | st.tuples(st.text(max_size=8), st.dates())
ROWS = st.tuples(
    st.integers(), st.text(), st.none() | st.dates() | st.datetimes(), st.decimals(allow_nan=False)
)


@given(st.dictionaries(KEYS, st.none() | ROWS, max_size=20))
def test_the_native_entries_are_the_python_codecs(changes: dict[object, object]) -> None:
    items = list(changes.items())
    native = keyed_entries(PREFIX, items, None)  # type: ignore[arg-type]
    python = keyed_entries_in_python(PREFIX, items)  # type: ignore[arg-type]
    assert [stored for stored, _ in native] == [stored for stored, _ in python]
    assert [stored for stored, _ in native] == sorted(stored for stored, _ in native)
    for (_, mine), (_, theirs) in zip(native, python, strict=True):
        assert (mine is None) == (theirs is None)
        if mine is not None and theirs is not None:
            assert decode_row(mine) == decode_row(theirs)
    keys = [key for key, _ in items]
    assert data_keys(PREFIX, keys) == data_keys_in_python(PREFIX, keys)  # type: ignore[arg-type]


def test_a_long_key_or_a_value_the_native_core_leaves_takes_the_python_codec() -> None:
    long = ("k" * KEY_LIMIT,)
    items = [((1,), (1, "a")), (long, ("k", 2)), ((2,), None)]
    entries = keyed_entries(PREFIX, items, None)  # type: ignore[arg-type]
    assert entries == keyed_entries_in_python(PREFIX, items)  # type: ignore[arg-type]
    hashed = PREFIX + stored_key(b"\x06" + len(long[0]).to_bytes(4, "big") + long[0].encode())
    assert hashed in [stored for stored, _ in entries]
    assert len(hashed) == len(PREFIX) + KEY_LIMIT
    assert data_keys(PREFIX, [(1,), long]) == data_keys_in_python(PREFIX, [(1,), long])
    aware = [((1,), (datetime(2020, 1, 1).astimezone(),))]
    assert keyed_entries(PREFIX, aware, None) == keyed_entries_in_python(PREFIX, aware)  # type: ignore[arg-type]


def test_rows_are_placed_by_the_layout_first() -> None:
    layout = Layout((2, 0, 3), 4)  # columns moved, a slot left unread
    items = [((1,), (1, date(2020, 1, 2), Decimal("3.50"))), ((2,), None)]
    entries = keyed_entries(PREFIX, items, layout)  # type: ignore[arg-type]
    placed = layout.place((1, date(2020, 1, 2), Decimal("3.50")))
    assert decode_row(entries[0][1] or b"") == decode_row(encode_row_in_python(placed))
    assert entries[1][1] is None
