"""Small builders of Table_map and rows events for the tests."""

from __future__ import annotations

from typing import Any

from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.events import make_header
from spark_replica.applier_core.binlog.rows import (
    RowsEvent,
    TableMapEvent,
    decode_rows_event,
    decode_table_map,
    encode_rows_event,
    encode_table_map,
)
from spark_replica.applier_core.binlog.rows.columns import ColumnSpec

KIND_TYPES = {
    "insert": EventType.WRITE_ROWS,
    "update": EventType.UPDATE_ROWS,
    "delete": EventType.DELETE_ROWS,
    "insert_v1": EventType.WRITE_ROWS_V1,
    "update_v1": EventType.UPDATE_ROWS_V1,
    "delete_v1": EventType.DELETE_ROWS_V1,
}


def table(columns: tuple[ColumnSpec, ...], table_id: int = 42, **kw: Any) -> TableMapEvent:
    return TableMapEvent(
        header=make_header(EventType.TABLE_MAP),
        table_id=table_id,
        schema=kw.pop("schema", "test"),
        table=kw.pop("name", "t"),
        columns=columns,
        **kw,
    )


def rows_event(
    table_map: TableMapEvent,
    rows: list[Any],
    kind: str = "insert",
    *,
    present: int | None = None,
    after: int | None = None,
    **kw: Any,
) -> RowsEvent:
    width = len(table_map.columns)
    full = (1 << width) - 1
    type_code = KIND_TYPES[kind]
    is_update = kind.startswith("update")
    return RowsEvent(
        header=make_header(type_code),
        table_id=table_map.table_id,
        extra_data=None if kind.endswith("_v1") else kw.pop("extra_data", b""),
        width=width,
        columns_present=full if present is None else present,
        columns_after=(full if after is None else after) if is_update else None,
        rows=rows,
        table_map=table_map,
        **kw,
    )


def round_trip_table(table_map: TableMapEvent) -> TableMapEvent:
    body = encode_table_map(table_map)
    again = decode_table_map(table_map.header, memoryview(body), 8)
    assert encode_table_map(again) == body
    return again


def round_trip_rows(event: RowsEvent, table_map: TableMapEvent) -> RowsEvent:
    """Encode, decode, and check that re-encoding gives the same bytes."""
    body = encode_rows_event(event, table_map)
    post_header = 8 if event.version == 1 else 10
    again = decode_rows_event(
        event.header, memoryview(body), post_header, {event.table_id: table_map}
    )
    assert encode_rows_event(again, table_map) == body
    return again
