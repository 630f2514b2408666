"""Events as SHOW BINLOG EVENTS and SHOW RELAYLOG EVENTS show them, and row changes as JSON.

https://dev.mysql.com/doc/refman/8.4/en/show-binlog-events.html
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path

from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.events import (
    Event,
    FormatDescription,
    Gtid,
    Heartbeat,
    Incident,
    MariadbAnnotateRows,
    MariadbGtid,
    MariadbGtidList,
    PreviousGtids,
    Query,
    Rotate,
    RowsQuery,
    TransactionPayload,
    Xid,
)
from spark_replica.applier_core.binlog.file import BinlogFileReader
from spark_replica.applier_core.binlog.payload import payload_events
from spark_replica.applier_core.binlog.rows import (
    ABSENT,
    Geometry,
    RowKind,
    RowsEvent,
    TableMapEvent,
)

#: Event_type names as MySQL prints them.
EVENT_TYPE_NAMES = {
    EventType.QUERY: "Query", EventType.STOP: "Stop", EventType.ROTATE: "Rotate",
    EventType.INTVAR: "Intvar", EventType.RAND: "RAND", EventType.USER_VAR: "User var",
    EventType.FORMAT_DESCRIPTION: "Format_desc", EventType.XID: "Xid",
    EventType.TABLE_MAP: "Table_map", EventType.WRITE_ROWS_V1: "Write_rows_v1",
    EventType.UPDATE_ROWS_V1: "Update_rows_v1", EventType.DELETE_ROWS_V1: "Delete_rows_v1",
    EventType.INCIDENT: "Incident", EventType.HEARTBEAT: "Heartbeat",
    EventType.IGNORABLE: "Ignorable", EventType.ROWS_QUERY: "Rows_query",
    EventType.WRITE_ROWS: "Write_rows", EventType.UPDATE_ROWS: "Update_rows",
    EventType.DELETE_ROWS: "Delete_rows", EventType.GTID: "Gtid",
    EventType.ANONYMOUS_GTID: "Anonymous_Gtid", EventType.PREVIOUS_GTIDS: "Previous_gtids",
    EventType.XA_PREPARE: "XA_prepare", EventType.PARTIAL_UPDATE_ROWS: "Update_rows_partial",
    EventType.TRANSACTION_PAYLOAD: "Transaction_payload", EventType.HEARTBEAT_V2: "Heartbeat_v2",
    EventType.GTID_TAGGED: "Gtid_tagged", EventType.MARIADB_ANNOTATE_ROWS: "Annotate_rows",
    EventType.MARIADB_BINLOG_CHECKPOINT: "Binlog_checkpoint", EventType.MARIADB_GTID: "Gtid",
    EventType.MARIADB_GTID_LIST: "Gtid_list",
}  # fmt: skip

SHOW_EVENTS_COLUMNS = ("Log_name", "Pos", "Event_type", "Server_id", "End_log_pos", "Info")


@dataclass(frozen=True, slots=True)
class EventLine:
    log_name: str
    pos: int
    event_type: str
    server_id: int
    end_log_pos: int
    info: str

    def as_row(self) -> tuple[str, int, str, int, int, str]:
        return (self.log_name, self.pos, self.event_type, self.server_id, self.end_log_pos,
                self.info)  # fmt: skip


def event_type_name(type_code: int) -> str:
    try:
        return EVENT_TYPE_NAMES[EventType(type_code)]
    except (KeyError, ValueError):
        return f"Unknown({type_code})"


def info(event: Event) -> str:
    """The Info column of SHOW BINLOG EVENTS for ``event``."""
    if isinstance(event, FormatDescription):
        return f"Server ver: {event.server_version}, Binlog ver: {event.binlog_version}"
    if isinstance(event, PreviousGtids):
        return str(event.gtids)
    if isinstance(event, Gtid):
        gtid = "ANONYMOUS" if event.anonymous else event.gtid_text
        return f"SET @@SESSION.GTID_NEXT= '{gtid}'"
    if isinstance(event, Query):
        if not event.db or event.is_begin or event.is_commit:
            return event.query
        return f"use `{event.db}`; {event.query}"
    if isinstance(event, TableMapEvent):
        return f"table_id: {event.table_id} ({event.schema}.{event.table})"
    if isinstance(event, RowsEvent):
        flags = " flags: STMT_END_F" if event.flags & 1 else ""
        return f"table_id: {event.table_id}{flags}"
    if isinstance(event, Xid):
        return f"COMMIT /* xid={event.xid} */"
    if isinstance(event, Rotate):
        return f"{event.next_file};pos={event.position}"
    if isinstance(event, TransactionPayload):
        compression = "ZSTD" if event.compression_type == 0 else "NONE"
        return f"compression='{compression}', decompressed_size={event.uncompressed_size} bytes"
    if isinstance(event, RowsQuery | MariadbAnnotateRows):
        return f"# {event.query}"
    if isinstance(event, MariadbGtid):
        return f"BEGIN GTID {event.gtid_text}"
    if isinstance(event, MariadbGtidList):
        return str(event)
    if isinstance(event, Heartbeat):
        return f"{event.log_file};pos={event.log_position}"
    if isinstance(event, Incident):
        return f"#{event.incident_type} ({event.message})"
    return ""


def show_events(path: Path, *, start: int = 4) -> Iterator[EventLine]:
    """Every event of one file, from ``start``, as SHOW BINLOG EVENTS lines."""
    reader = BinlogFileReader(path, start=start)
    for pos, end, event in reader:
        header = event.header
        yield EventLine(path.name, pos, event_type_name(header.type_code), header.server_id,
                        end, info(event))  # fmt: skip


def json_value(value: object) -> object:
    """A row value as JSON: text for exact numbers and times, base64 for bytes."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat()
    if isinstance(value, timedelta):
        return _mysql_time(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return "base64:" + base64.b64encode(bytes(value)).decode()
    if isinstance(value, Geometry):
        return {"srid": value.srid, "wkb": json_value(value.wkb)}
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    return str(value)


def _mysql_time(value: timedelta) -> str:
    total = abs(value)
    seconds = total.days * 86400 + total.seconds
    text = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    if total.microseconds:
        text += f".{total.microseconds:06d}"
    return ("-" if value < timedelta(0) else "") + text


def _image(row: tuple[object, ...], table_map: TableMapEvent) -> dict[str, object]:
    names = table_map.column_names
    return {
        (names[i] or f"@{i + 1}"): json_value(v)
        for i, v in enumerate(row)
        if v is not ABSENT and i < len(names)
    }


def row_changes(path: Path) -> Iterator[str]:
    """One JSON object per row change: gtid, db, table, op, before, after."""
    gtid = ""
    for _, _, event in BinlogFileReader(path):
        inner_events = (
            list(payload_events(event)) if isinstance(event, TransactionPayload) else [event]
        )
        for inner in inner_events:
            if isinstance(inner, Gtid | MariadbGtid):
                gtid = "ANONYMOUS" if getattr(inner, "anonymous", False) else inner.gtid_text
            if not isinstance(inner, RowsEvent) or inner.table_map is None:
                continue
            table_map = inner.table_map
            for row in inner.rows:
                before = after = None
                if inner.kind is RowKind.UPDATE:
                    before, after = (_image(r, table_map) for r in row)
                elif inner.kind is RowKind.INSERT:
                    after = _image(row, table_map)
                else:
                    before = _image(row, table_map)
                yield json.dumps(
                    {"gtid": gtid, "db": table_map.schema, "table": table_map.table,
                     "op": inner.kind.value, "before": before, "after": after},
                    ensure_ascii=False,
                )  # fmt: skip
