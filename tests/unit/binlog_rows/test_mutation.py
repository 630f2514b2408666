"""Damaged Table_map and rows events: only BinlogError ever escapes the decoders."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.rows import (
    RowKind,
    RowsEvent,
    TableMapEvent,
    decode_rows_event,
    decode_table_map,
)
from tests.unit.binlog_rows.binlog_files import FIXTURES, RawEvent, decode_file, row_fixtures
from tests.unit.binlog_rows.builders import round_trip_rows, rows_event, table
from tests.unit.binlog_rows.strategies import all_types_columns, rows_for


@functools.cache
def samples() -> tuple[list[tuple[RawEvent, RowsEvent]], list[RawEvent]]:
    rows: list[tuple[RawEvent, RowsEvent]] = []
    maps: list[RawEvent] = []
    for name in row_fixtures():
        decoded = decode_file(FIXTURES / name)
        rows += decoded.rows
        maps += [raw for raw, _ in decoded.table_maps]
    return rows, maps


def _decode_rows(raw: RawEvent, event: RowsEvent, body: bytes) -> RowsEvent | None:
    assert event.table_map is not None
    try:
        return decode_rows_event(
            raw.header, memoryview(body), raw.post_header_len, {event.table_id: event.table_map}
        )
    except BinlogError:
        return None


def _decode_map(raw: RawEvent, body: bytes) -> TableMapEvent | None:
    try:
        return decode_table_map(raw.header, memoryview(body), raw.post_header_len)
    except BinlogError:
        return None


def test_every_truncation_of_every_fixture_rows_event() -> None:
    """Cut anywhere: a BinlogError, or (cut between rows) the leading rows."""
    for raw, event in samples()[0]:
        for cut in range(len(raw.body)):
            shorter = _decode_rows(raw, event, raw.body[:cut])
            if shorter is not None:
                assert shorter.rows == event.rows[: len(shorter.rows)]
                assert len(shorter.rows) < len(event.rows)


def test_every_truncation_of_every_fixture_table_map() -> None:
    for raw in samples()[1]:
        whole = _decode_map(raw, raw.body)
        assert whole is not None
        for cut in range(len(raw.body)):
            shorter = _decode_map(raw, raw.body[:cut])
            if shorter is not None:  # only the optional metadata may be cut short cleanly
                assert shorter.columns[0].type == whole.columns[0].type


def _mutate(data: bytes, draw: Any) -> bytes:
    body = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        action = draw(st.sampled_from(["flip", "set", "insert", "delete", "truncate"]))
        position = draw(st.integers(0, max(0, len(body) - 1)))
        if action == "flip" and body:
            body[position] ^= 1 << draw(st.integers(0, 7))
        elif action == "set" and body:
            body[position] = draw(st.sampled_from([0x00, 0x7F, 0x80, 0xFB, 0xFC, 0xFE, 0xFF]))
        elif action == "insert":
            body[position:position] = draw(st.binary(min_size=1, max_size=8))
        elif action == "delete" and body:
            del body[position : position + draw(st.integers(1, 8))]
        else:
            del body[position:]
    return bytes(body)


MUTATIONS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@MUTATIONS
@given(data=st.data())
def test_mutated_fixture_rows_events_raise_only_binlog_errors(data: st.DataObject) -> None:
    raw, event = data.draw(st.sampled_from(samples()[0]))
    _decode_rows(raw, event, _mutate(raw.body, data.draw))


@MUTATIONS
@given(data=st.data())
def test_mutated_fixture_table_maps_raise_only_binlog_errors(data: st.DataObject) -> None:
    raw = data.draw(st.sampled_from(samples()[1]))
    _decode_map(raw, _mutate(raw.body, data.draw))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_partial_json_updates_raise_only_binlog_errors(data: st.DataObject) -> None:
    partial = [(raw, event) for raw, event in samples()[0] if event.is_partial]
    raw, event = data.draw(st.sampled_from(partial))
    _decode_rows(raw, event, _mutate(raw.body, data.draw))


ALL_TYPES = table(all_types_columns())


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), rows=st.lists(rows_for(ALL_TYPES.columns), min_size=1, max_size=3))
def test_mutated_rows_of_every_type_raise_only_binlog_errors(
    data: st.DataObject, rows: list[tuple[Any, ...]]
) -> None:
    """Every value decoder (DECIMAL, temporal, JSON, ...) sees damaged bytes too."""
    from spark_replica.applier_core.binlog.rows import encode_rows_event

    kind = data.draw(st.sampled_from(["insert", "update"]))
    image = rows if kind == "insert" else [(r, r) for r in rows]
    event = round_trip_rows(rows_event(ALL_TYPES, image, kind), ALL_TYPES)
    body = encode_rows_event(event, ALL_TYPES)
    try:
        decode_rows_event(event.header, memoryview(_mutate(body, data.draw)), 10, {42: ALL_TYPES})
    except BinlogError:
        pass


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"\x2a\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00", "no columns"),
        (b"\x2b\x00\x00\x00\x00\x00\x00\x00\x02\x00\x01\x01\x01\x00", "without a Table_map"),
        (b"\x2a\x00\x00\x00\x00\x00\x00\x00\x01\x00", "extra data length"),
        (b"\x2a\x00\x00\x00\x00\x00\x00\x00\x02\x00\x05\x1f", "has 5 columns"),
        (b"\x2a\x00\x00\x00\x00\x00\x00\x00\x02\x00\x01\x01\x00\x05", "truncated"),
    ],
)
def test_rows_event_errors_are_clear(body: bytes, message: str) -> None:
    from spark_replica.applier_core.binlog.constants import ColumnType as T
    from spark_replica.applier_core.binlog.rows import make_column

    one = table((make_column(0, T.LONG),))
    header = rows_event(one, []).header
    with pytest.raises(BinlogError, match=message):
        decode_rows_event(header, memoryview(body), 10, {42: one})


def test_update_kind_of_partial_rows() -> None:
    partial = [e for _, e in samples()[0] if e.is_partial]
    assert partial and all(e.kind is RowKind.UPDATE for e in partial)
