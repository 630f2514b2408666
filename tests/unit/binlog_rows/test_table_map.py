"""Table_map events: column metadata, optional metadata types 1-12, errors."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_replica.applier_core.binlog.constants import ColumnType as T
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.rows import (
    ColumnSpec,
    decode_table_map,
    encode_table_map,
    make_column,
)
from spark_replica.applier_core.binlog.rows.metadata import MetadataType as M
from tests.unit.binlog_rows.builders import round_trip_table, table
from tests.unit.binlog_rows.strategies import all_types_columns

_KINDS: list[tuple[int, dict[str, Any]]] = [
    (T.TINY, {}), (T.LONGLONG, {}), (T.YEAR, {}), (T.FLOAT, {}), (T.DOUBLE, {}),
    (T.NEWDECIMAL, {"precision": 30, "scale": 10}), (T.BIT, {"bits": 17}), (T.DATE, {}),
    (T.TIME2, {"fsp": 3}), (T.DATETIME2, {"fsp": 6}), (T.TIMESTAMP2, {"fsp": 0}),
    (T.VARCHAR, {"length": 1000}), (T.STRING, {"length": 300}), (T.STRING, {"length": 20}),
    (T.BLOB, {"pack_length": 3}), (T.JSON, {}), (T.GEOMETRY, {}), (T.VECTOR, {}),
    (T.STRING, {"real_type": T.ENUM, "members": ("x", "y")}),
    (T.STRING, {"real_type": T.SET, "members": ("p", "q", "r")}),
]  # fmt: skip


@st.composite
def tables(draw: st.DrawFn) -> Any:
    kinds = draw(st.lists(st.sampled_from(_KINDS), min_size=1, max_size=12))
    names = draw(st.booleans())
    visibility = draw(st.booleans())
    charsets = draw(st.booleans())
    columns = []
    for i, (kind, attributes) in enumerate(kinds):
        attrs = dict(attributes)
        if not names:
            attrs.pop("members", None)
        spec = make_column(
            i, kind,
            unsigned=draw(st.booleans()),
            nullable=draw(st.booleans()),
            name=draw(st.text(max_size=10)) if names else None,
            visible=draw(st.booleans()) if visibility else None,
            geometry_type=draw(st.integers(0, 7)) if kind == T.GEOMETRY and names else None,
            **attrs,
        )  # fmt: skip
        if not spec.is_numeric:
            spec = _replace(spec, unsigned=False)
        if charsets and (spec.is_character or spec.is_enum_or_set):
            spec = _replace(spec, collation=draw(st.sampled_from([8, 33, 45, 63, 255])))
        columns.append(spec)
    key = draw(st.lists(st.integers(0, len(columns) - 1), unique=True, max_size=3))
    return table(tuple(columns), table_id=draw(st.integers(0, (1 << 48) - 1)),
                 primary_key=tuple(key) if names else ())  # fmt: skip


def _replace(spec: ColumnSpec, **changes: Any) -> ColumnSpec:
    import dataclasses

    return dataclasses.replace(spec, **changes)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table_map=tables())
def test_table_maps_round_trip(table_map: Any) -> None:
    again = round_trip_table(table_map)
    assert again.columns == table_map.columns
    assert again.primary_key == table_map.primary_key
    assert again.table_id == table_map.table_id


def test_all_types_metadata_decodes_to_the_same_attributes() -> None:
    named = [c for c in all_types_columns() if not (c.is_enum_or_set and c.members is None)]
    columns = tuple(_replace(c, index=i) for i, c in enumerate(named))
    again = round_trip_table(table(columns, primary_key=(0,)))
    assert again.columns == columns
    assert (65, 30) in [(c.precision, c.scale) for c in again.columns]
    char = next(c for c in again.columns if c.max_length == 1020)
    assert char.real_type == T.STRING and char.charset == "utf8mb4"
    enum = next(c for c in again.columns if c.real_type == T.ENUM)
    assert enum.members is not None and enum.pack_length == 1


def test_default_charset_layout() -> None:
    columns = (
        make_column(0, T.VARCHAR, length=10, collation=255),
        make_column(1, T.LONG),
        make_column(2, T.STRING, length=10, collation=8),
        make_column(3, T.BLOB, collation=255),
        make_column(4, T.STRING, real_type=T.ENUM, members=("a",), collation=33),
    )
    layout = (M.SIGNEDNESS, M.DEFAULT_CHARSET, M.ENUM_AND_SET_DEFAULT_CHARSET, M.ENUM_STR_VALUE)
    t = table(columns, default_collation=255, enum_set_default_collation=33,
              metadata_layout=layout)  # fmt: skip
    body = encode_table_map(t)
    # DEFAULT_CHARSET: default 255, then (character column 1, collation 8)
    assert bytes([M.DEFAULT_CHARSET, 5, 0xFC, 0xFF, 0x00, 0x01, 0x08]) in body
    again = round_trip_table(t)
    assert [c.collation for c in again.columns] == [255, None, 8, 255, 33]
    assert again.default_collation == 255 and again.columns[4].members == ("a",)


def test_primary_key_with_prefix_and_unknown_metadata() -> None:
    columns = (make_column(0, T.VARCHAR, length=100), make_column(1, T.LONG))
    t = table(
        columns,
        primary_key=(0, 1),
        primary_key_prefix=(10, 0),
        metadata_layout=(M.PRIMARY_KEY_WITH_PREFIX, 99),
        unknown_metadata={99: b"\x01\x02"},
    )
    again = round_trip_table(t)
    assert again.primary_key == (0, 1) and again.primary_key_prefix == (10, 0)
    assert again.unknown_metadata == {99: b"\x01\x02"} and again.layout == (9, 99)


def test_old_servers_four_byte_table_id() -> None:
    t = table((make_column(0, T.LONG),), table_id=7, table_id_size=4)
    body = encode_table_map(t)
    assert body[:6] == b"\x07\x00\x00\x00\x00\x00"[:4] + b"\x00\x00"
    again = decode_table_map(t.header, memoryview(body), 6)
    assert again.table_id == 7 and again.table_id_size == 4


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (bytes.fromhex("2a0000000000000001610001620001"), "claims 1 columns"),
        (bytes.fromhex("2a00000000000000016100016200016400"), "unknown column type 100"),
        (bytes.fromhex("2a0000000000000001610001620001fe0100"), "metadata is truncated"),
        (bytes.fromhex("2a00000000000000016101"), "NUL-terminated"),
        (bytes.fromhex("2a0000000000000001610001620001030000080105"), "primary key"),
        (bytes.fromhex("2a00000000000000016100016200fffe"), "packed integer"),
        (bytes.fromhex("2a00000000000000016100016200010f03aabbcc00"), "unexpected bytes"),
    ],
)
def test_malformed_table_maps_are_refused(body: bytes, message: str) -> None:
    t = table((make_column(0, T.LONG),))
    with pytest.raises(BinlogError, match=message):
        decode_table_map(t.header, memoryview(body), 8)


def test_column_spec_attributes() -> None:
    char = make_column(0, T.STRING, length=1020)
    assert char.meta == bytes([0xCE, 0xFC]) and char.max_length == 1020
    assert make_column(0, T.STRING, length=20).meta == bytes([0xFE, 20])
    assert make_column(0, T.BIT, bits=10).meta == bytes([2, 1])
    enum = make_column(0, T.STRING, real_type=T.ENUM, members=tuple("abc"))
    assert enum.real_type == T.ENUM and enum.pack_length == 1 and enum.is_enum_or_set
    assert make_column(0, T.STRING, real_type=T.SET, members=tuple("abcdefghi")).pack_length == 2
    assert make_column(0, T.TIME2, fsp=4).fsp == 4 and make_column(0, T.LONG).fsp is None
    assert make_column(0, T.VECTOR).is_character  # binary collation, counted since 9.0
    assert make_column(0, T.LONG, name="id").describe() == "column id (LONG)"
