"""Every Table_map and rows event of the real binlog fixtures: decoding, byte-exact round trips,
the compiled decoders against the interpreter, and values checked against what the fixtures'
servers wrote."""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from spark_replica.applier_core.binlog.codecs.registry import encode_event
from spark_replica.applier_core.binlog.events import TransactionPayload
from spark_replica.applier_core.binlog.file import BinlogFileReader
from spark_replica.applier_core.binlog.packing import Reader
from spark_replica.applier_core.binlog.payload import payload_events
from spark_replica.applier_core.binlog.rows import (
    ABSENT,
    PartialJson,
    RowKind,
    RowsEvent,
    TableMapEvent,
    bit_bytes,
    decode_rows_event,
    encode_rows_event,
    encode_table_map,
)
from spark_replica.applier_core.binlog.rows.json_binary import decode_json, encode_json
from spark_replica.applier_core.binlog.rows.json_text import JsonText, to_text
from spark_replica.applier_core.binlog.rows.partial import read_image
from spark_replica.applier_core.binlog.rows.values import codec_for
from tests.unit.binlog_rows.binlog_files import FIXTURES, Decoded, decode_file, row_fixtures
from tests.unit.binlog_rows.test_oracle import COMPARED, NOT_COMPARED

ROW_FIXTURES = row_fixtures()


@functools.cache
def decoded(name: str) -> Decoded:
    return decode_file(FIXTURES / name)


def rows_of(name: str, *, inner: bool | None = None) -> list[RowsEvent]:
    return [e for raw, e in decoded(name).rows if inner is None or raw.inner == inner]


def test_every_row_fixture_is_compared_or_explained() -> None:
    assert len(ROW_FIXTURES) == 22
    assert set(ROW_FIXTURES) == set(COMPARED) | set(NOT_COMPARED)


@pytest.mark.parametrize("name", ROW_FIXTURES)
def test_table_maps_encode_back_to_the_same_bytes(name: str) -> None:
    for raw, table_map in decoded(name).table_maps:
        assert encode_table_map(table_map) == raw.body


@pytest.mark.parametrize("name", ROW_FIXTURES)
def test_rows_events_encode_back_to_the_same_bytes(name: str) -> None:
    for raw, event in decoded(name).rows:
        assert event.table_map is not None
        body = encode_rows_event(event, event.table_map)
        assert body == raw.body
        maps = {event.table_id: event.table_map}
        again = decode_rows_event(raw.header, memoryview(body), raw.post_header_len, maps)
        assert again == event


@pytest.mark.parametrize("name", ROW_FIXTURES)
def test_compiled_decoders_agree_with_the_interpreter(name: str) -> None:
    for raw, event in decoded(name).rows:
        if event.is_partial:
            continue
        table = event.table_map
        assert table is not None
        width = event.width
        before = {
            i: codec_for(table.columns[i]) for i in range(width) if event.columns_present >> i & 1
        }
        after_bits = event.columns_after or 0
        after = {i: codec_for(table.columns[i]) for i in range(width) if after_bits >> i & 1}
        size = 6 if event.table_id_size == 6 else 4
        start = size + 2 + (2 + len(event.extra_data) if event.extra_data is not None else 0)
        start += 1 + (width + 7) // 8 * (2 if event.kind is RowKind.UPDATE else 1)
        reader = Reader(raw.body, start)
        rows: list[Any] = []
        while reader.remaining:
            old = read_image(reader, before, width)
            rows.append((old, read_image(reader, after, width)) if after else old)
        assert rows == event.rows


def _json_values(name: str) -> list[JsonText]:
    found = []
    for event in rows_of(name):
        for row in event.rows:
            for image in row if event.kind is RowKind.UPDATE else (row,):
                found += [v for v in image if isinstance(v, JsonText)]
    return found


@pytest.mark.parametrize("name", ["json.binlog.000001", "json-opaque.binlog"])
def test_json_documents_reencode_byte_exact(name: str) -> None:
    values = _json_values(name)
    assert len(values) >= 8
    for value in values:
        tree = decode_json(value.binary)
        assert encode_json(tree) == value.binary
        assert to_text(tree) == value


def test_json_opaque_scalars_print_as_mysql_prints_them() -> None:
    assert [str(v) for v in _json_values("json-opaque.binlog")] == [
        '{"a": "base64:type15:VQ=="}',
        '{"b": "2012-03-18"}',
        '{"c": "2012-03-18 11:30:45.000000"}',
        '{"c": "87:31:46.654321"}',
        '{"d": 123.456}',
        '{"e": 9.00}',
        '{"e": [0, 1, true, false]}',
        '{"e": null}',
    ]


def _key(row: tuple[Any, ...]) -> Any:
    return row[0]


def test_partial_json_updates_agree_with_the_generated_columns() -> None:
    """json.binlog.000001: t(id, json_col, name AS (json_col->>'$.name'), age AS
    (json_col->'$.age')); the partial update's diffs, applied to the documents the earlier
    events left, give the generated columns the same event carries."""
    from spark_replica.applier_core.binlog.rows import apply_diffs
    from spark_replica.applier_core.binlog.rows.json_text import parse_json

    state: dict[int, Any] = {}
    partial_rows = 0
    for event in rows_of("json.binlog.000001"):
        for row in event.rows:
            if event.kind is RowKind.INSERT:
                state[_key(row)] = decode_json(row[1].binary)
            elif not event.is_partial:
                state[_key(row[1])] = decode_json(row[1][1].binary)
            else:
                old, new = row
                assert isinstance(new[1], PartialJson)
                document: Any = apply_diffs(state[_key(old)], new[1].diffs)
                previous: Any = parse_json(to_text(state[_key(old)]))
                assert document["name"] == new[2]
                assert document["age"] == new[3] == previous["age"] + 1
                state[_key(old)] = document
                partial_rows += 1
    assert partial_rows == 6


def test_partial_json_update_with_a_full_before_image_applies_the_diffs() -> None:
    events = rows_of("json.binlog.000001")
    full_update = next(e for e in events if e.kind is RowKind.UPDATE and not e.is_partial)
    partial = next(e for e in events if e.is_partial)
    assert partial.table_map is not None and partial.json_diffs is not None
    documents = {row[1][0]: row[1] for row in full_update.rows}
    rows = [(documents[old[0]], new) for old, new in partial.rows]
    event = RowsEvent(
        header=partial.header, table_id=partial.table_id, flags=partial.flags,
        extra_data=partial.extra_data, width=4, columns_present=0xF,
        columns_after=partial.columns_after, rows=rows, value_options=partial.value_options,
        json_diffs=partial.json_diffs, table_map=partial.table_map,
    )  # fmt: skip
    body = encode_rows_event(event, partial.table_map)
    maps = {event.table_id: partial.table_map}
    again = decode_rows_event(partial.header, memoryview(body), 10, maps)
    for (old, new), (_, expected) in zip(again.rows, rows, strict=True):
        assert '"age": ' + str(new[3]) in new[1]
        assert new[1] == old[1].replace(f'"age": {old[3]}', f'"age": {new[3]}')
        assert new[2:] == expected[2:]
    assert encode_rows_event(again, partial.table_map) == body


def test_time_issue_negative_time() -> None:
    assert rows_of("time_issue.000001")[0].rows == [
        (-timedelta(hours=507, minutes=48, seconds=27),)
    ]


def test_bit_columns() -> None:
    (row,) = rows_of("mysql_type_bit.000001")[0].rows
    assert row == (0b100, "foo", 0b100000)
    assert bit_bytes(row[0], 3) == b"\x04" and bit_bytes(row[2], 8) == b"\x20"


def test_enum_set_and_strings_with_member_names() -> None:
    write, update, delete = rows_of("mysql-enum-string-set.000001")
    digits = "0123456789" * 10
    assert write.rows[0][:5] == (digits, write.rows[0][1], "var1", "one,three", "0123456789")
    old, new = update.rows[0]
    assert old == write.rows[0]
    assert new[:4] == ("field1", "field_2", "variant2", "two,four")
    assert delete.rows == [new]
    table = write.table_map
    assert table is not None
    assert table.columns[2].members == ("var1", "variant2", "foo")
    assert table.columns[3].members == ("one", "two", "three", "four")
    assert [c.name for c in table.columns] == ["f1", "f2", "f3", "f4", "f5"]


def test_minimal_image_is_detected_and_decoded() -> None:
    (event,) = rows_of("minimal_row_metadata.000001")
    assert not event.full_image
    assert event.rows == [(1, ABSENT, "a", ABSENT, 3230202323)]


def test_full_images_are_full() -> None:
    assert all(e.full_image for e in rows_of("mysql-bin.checksum-none"))
    delete = [e for e in rows_of("update-partial-row.binlog") if e.kind is RowKind.DELETE]
    assert delete and not delete[0].full_image


def test_mariadb_table_map_metadata() -> None:
    (event, _) = rows_of("mariadb-bin.000001")
    table = event.table_map
    assert table is not None
    assert table.primary_key == (0,)
    assert table.column_names == ("id", "topic", "event_type", "event", "created")
    assert table.columns[2].members == ("BLOB", "JSON", "PROTOBUF")
    assert event.rows[0] == (
        62, "foo", "JSON", b'{"foo":1}', datetime(2022, 4, 20, 22, 18, 4, tzinfo=UTC)
    )  # fmt: skip


def test_invisible_columns_and_signedness() -> None:
    write = rows_of("binlog-invisible-columns.000001")[0]
    table = write.table_map
    assert table is not None
    assert [c.visible for c in table.columns] == [False, False, True, True, True, False]
    assert [c.unsigned for c in table.columns] == [True, True, False, False, False, True]
    assert write.rows == [(1, 2, -3, "4", b"\x05", 6000000000)]


def test_vector_columns() -> None:
    first = rows_of("vector.binlog")[0]
    assert [[round(x, 5) for x in row[1]] for row in first.rows] == [
        [1.1, 2.2, 3.3],
        [1.0, -1.0, 0.0],
    ]
    table = rows_of("vector.binlog")[1].table_map
    assert table is not None and 13 in table.unknown_metadata  # vector dimensions, kept raw


def test_decimal_and_gtid_tagged_fixture() -> None:
    (event,) = rows_of("binlog_transaction_with_GTID_TAG.000001")
    assert event.rows == [(3, 100, Decimal("250.00"))]


def test_rows_inside_compressed_transactions() -> None:
    (event,) = rows_of("transaction_compression.000001", inner=True)
    assert event.rows == [(1,)]
    (update,) = rows_of("mysql-bin.compressed", inner=True)
    assert update.kind is RowKind.UPDATE and update.rows[0][0][1] == "Once Upon a Time in the West"


@pytest.mark.parametrize("name", ROW_FIXTURES)
def test_the_codecs_file_reader_decodes_and_reencodes_every_event(name: str) -> None:
    """The row codec behind the shared codec: BinlogFileReader and encode_event."""
    reader = BinlogFileReader(FIXTURES / name)
    data = (FIXTURES / name).read_bytes()
    mine = [e for _, e in decoded(name).rows]
    found: list[RowsEvent] = []
    for position, end, event in reader:
        inner: tuple[Any, ...] = ()
        if isinstance(event, TransactionPayload):
            inner = payload_events(event, reader.fde, reader.table_maps)
        for item in (event, *inner):
            if isinstance(item, RowsEvent):
                found.append(item)
        if isinstance(event, TableMapEvent | RowsEvent):
            assert reader.fde is not None
            maps = (
                {event.table_id: event} if isinstance(event, TableMapEvent) else reader.table_maps
            )
            again = encode_event(
                event, checksum=reader.fde.checksums, log_pos=event.header.log_pos, table_maps=maps
            )
            assert again == data[position:end]
    assert found == mine
