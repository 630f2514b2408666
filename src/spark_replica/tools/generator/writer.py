"""Write a generated transaction stream as MySQL 8.4 binary log files.

Each transaction becomes what a source writes: a GTID event with its logical clock and
transaction length, then ``BEGIN``, Table_map events, rows events (split near 8 KiB as
``binlog_row_event_max_size`` does, STMT_END_F on the last one) and ``XID``; a DDL becomes a
GTID event and its Query. With compression the events after the GTID event go into one
zstd Transaction_payload event. A new file starts with Format_description and
Previous_gtids; the old one ends with a Rotate event.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from spark_replica.applier_core.binlog.codecs.registry import encode_event
from spark_replica.applier_core.binlog.constants import ColumnType, EventFlag, EventType
from spark_replica.applier_core.binlog.events import (
    Event,
    EventHeader,
    FormatDescription,
    Gtid,
    Query,
    Rotate,
    Xid,
    make_header,
)
from spark_replica.applier_core.binlog.file import BinlogFileWriter
from spark_replica.applier_core.binlog.packing import pack_int
from spark_replica.applier_core.binlog.payload import make_transaction_payload
from spark_replica.applier_core.binlog.rows import (
    ColumnSpec,
    RowsEvent,
    TableMapEvent,
    make_column,
)
from spark_replica.applier_core.binlog.rows.rows import STMT_END_F
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.tools.generator.schema import ColumnDef, TableDef
from spark_replica.tools.generator.simulate import GeneratedTransaction, RowChange

SERVER_VERSION = "8.4.0"
SERVER_VERSION_ID = 80400
ROW_EVENT_MAX_SIZE = 8192
UTF8MB4 = 255
BINARY = 63
_ROWS_TYPE = {"insert": EventType.WRITE_ROWS, "update": EventType.UPDATE_ROWS,
              "delete": EventType.DELETE_ROWS}  # fmt: skip


def column_spec(index: int, column: ColumnDef) -> ColumnSpec:
    """The Table_map description of a generated column (binlog_row_metadata=FULL)."""
    base = column.sql_type.split("(")[0].split(" ")[0]
    binary = base in ("BINARY", "VARBINARY", "BLOB", "VECTOR")
    textual = base in ("CHAR", "VARCHAR", "TEXT", "ENUM", "SET")
    params = column.params
    kwargs: dict[str, object] = {}
    ctype = column.column_type
    if base in ("CHAR", "BINARY", "VARCHAR", "VARBINARY"):
        kwargs["length"] = params[0]
    elif ctype is ColumnType.NEWDECIMAL:
        kwargs["precision"], kwargs["scale"] = params
    elif ctype in (ColumnType.TIME2, ColumnType.DATETIME2, ColumnType.TIMESTAMP2):
        kwargs["fsp"] = params[0]
    elif ctype is ColumnType.BIT:
        kwargs["bits"] = params[0]
    elif ctype in (ColumnType.BLOB, ColumnType.JSON, ColumnType.FLOAT, ColumnType.DOUBLE,
                   ColumnType.GEOMETRY, ColumnType.VECTOR):  # fmt: skip
        kwargs["pack_length"] = params[0]
    elif base in ("ENUM", "SET"):
        kwargs["real_type"] = ColumnType.ENUM if base == "ENUM" else ColumnType.SET
        kwargs["members"] = column.members
    return make_column(
        index,
        ctype,
        unsigned=column.unsigned,
        nullable=column.nullable,
        collation=BINARY if binary else UTF8MB4 if textual else None,
        name=column.name,
        **kwargs,  # type: ignore[arg-type]
    )


@dataclass(slots=True)
class TransactionEncoder:
    """Encodes generated transactions as a source's events, each with ``log_pos`` 0 (the
    writer moves them to where they land). Table ids are given on first use of a table and
    kept until ``forget_tables`` (a new file)."""

    server_uuid: str = ""
    server_id: int = 1
    compression: bool = False
    _table_ids: dict[str, tuple[TableDef, int]] = field(default_factory=dict)
    _next_table_id: int = 100

    def encode(self, trx: GeneratedTransaction) -> list[bytes]:
        """The transaction's events: its GTID event first."""
        ts = trx.commit_time_us // 1_000_000
        body = list(self._body(trx, ts))
        if self.compression and trx.ddl is None:
            payload = make_transaction_payload(
                self._header(EventType.TRANSACTION_PAYLOAD, ts), body
            )
            body = [payload]
        maps = self._maps(body)
        encoded = [encode_event(e, checksum=True, log_pos=0, table_maps=maps) for e in body]
        body_size = sum(map(len, encoded))
        # The GTID event counts itself, and its length field grows with the value.
        short_gtid = len(encode_event(self._gtid(trx, ts, 0), checksum=True, log_pos=0))
        length = body_size + short_gtid
        while body_size + short_gtid - 1 + len(pack_int(length)) != length:
            length = body_size + short_gtid - 1 + len(pack_int(length))
        gtid = encode_event(self._gtid(trx, ts, length), checksum=True, log_pos=0)
        return [gtid, *encoded]

    def forget_tables(self) -> None:
        self._table_ids.clear()

    def _header(self, type_code: int, timestamp: int, flags: int = 0) -> EventHeader:
        return make_header(type_code, timestamp=timestamp, server_id=self.server_id, flags=flags)

    def _maps(self, events: list[Event]) -> dict[int, object]:
        return {e.table_id: e for e in events if isinstance(e, TableMapEvent)}

    def _gtid(self, trx: GeneratedTransaction, ts: int, length: int) -> Gtid:
        return Gtid(
            self._header(EventType.GTID, ts),
            flags=0,
            uuid=self.server_uuid,
            gno=trx.gno,
            last_committed=trx.last_committed,
            sequence_number=trx.sequence_number,
            immediate_commit_timestamp=trx.commit_time_us,
            original_commit_timestamp=trx.commit_time_us,
            transaction_length=length,
            immediate_server_version=SERVER_VERSION_ID,
            original_server_version=SERVER_VERSION_ID,
        )

    def _body(self, trx: GeneratedTransaction, ts: int) -> Iterator[Event]:
        if trx.ddl is not None:
            yield Query.build(self._header(EventType.QUERY, ts), trx.ddl, db=trx.ddl_database)
            return
        yield Query.build(self._header(EventType.QUERY, ts), "BEGIN")
        maps: dict[str, TableMapEvent] = {}
        for change in trx.changes:
            name = change.table.qualified
            if name not in maps:
                maps[name] = self._table_map(change.table, ts)
                yield maps[name]
        yield from self._rows_events(trx.changes, maps, ts)
        yield Xid(self._header(EventType.XID, ts), trx.gno)

    def _table_map(self, table: TableDef, ts: int) -> TableMapEvent:
        known = self._table_ids.get(table.qualified)
        if known is None or known[0] != table:
            known = (table, self._next_table_id)
            self._next_table_id += 1
            self._table_ids[table.qualified] = known
        return TableMapEvent(
            header=self._header(EventType.TABLE_MAP, ts),
            table_id=known[1],
            schema=table.schema,
            table=table.name,
            columns=tuple(column_spec(i, c) for i, c in enumerate(table.columns)),
            primary_key=table.primary_key,
            default_collation=UTF8MB4,
        )

    def _rows_events(
        self, changes: tuple[RowChange, ...], maps: dict[str, TableMapEvent], ts: int
    ) -> Iterator[Event]:
        pending: list[RowChange] = []
        size = 0
        for index, change in enumerate(changes):
            pending.append(change)
            size += _estimate(change)
            following = changes[index + 1] if index + 1 < len(changes) else None
            same = following is not None and (
                following.kind == change.kind and following.table is change.table
            )
            if same and size < ROW_EVENT_MAX_SIZE:
                continue
            last = following is None
            yield self._rows_event(pending, maps[change.table.qualified], ts, last)
            pending, size = [], 0

    def _rows_event(
        self, changes: list[RowChange], table_map: TableMapEvent, ts: int, last: bool
    ) -> RowsEvent:
        kind = changes[0].kind
        width = len(table_map.columns)
        everything = (1 << width) - 1
        rows: list[object] = [
            (c.before, c.after) if kind == "update" else (c.after if kind == "insert" else c.before)
            for c in changes
        ]
        return RowsEvent(
            header=self._header(_ROWS_TYPE[kind], ts),
            table_id=table_map.table_id,
            flags=STMT_END_F if last else 0,
            extra_data=b"",
            width=width,
            columns_present=everything,
            columns_after=everything if kind == "update" else None,
            rows=rows,
            table_map=table_map,
        )


@dataclass(slots=True)
class BinlogSetWriter:
    """Writes ``<directory>/<base>.NNNNNN`` files and their index."""

    directory: Path
    base: str = "binlog"
    server_uuid: str = ""
    compression: bool = False
    server_id: int = 1
    files: list[Path] = field(default_factory=list)
    _writer: BinlogFileWriter | None = None
    _file_index: int = 0
    _executed: GtidSet = field(default_factory=GtidSet)
    _encoder: TransactionEncoder = field(init=False)

    def __post_init__(self) -> None:
        self._encoder = TransactionEncoder(self.server_uuid, self.server_id, self.compression)

    def write(self, transactions: Iterable[GeneratedTransaction]) -> list[Path]:
        self.directory.mkdir(parents=True, exist_ok=True)
        for trx in transactions:
            if trx.file_index != self._file_index:
                self._open(trx.file_index, trx.commit_time_us // 1_000_000)
            assert self._writer is not None
            for data in self._encoder.encode(trx):
                self._writer.write_moved(data)
            self._executed.add(self.server_uuid, "", trx.gno)
        self.close()
        index = self.directory / f"{self.base}.index"
        index.write_text("".join(f"./{p.name}\n" for p in self.files))
        return self.files

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def _open(self, file_index: int, timestamp: int) -> None:
        path = self.directory / f"{self.base}.{file_index:06d}"
        header = make_header(EventType.ROTATE, timestamp=timestamp, server_id=self.server_id)
        if self._writer is not None:
            self._writer.write(Rotate(header, 4, path.name))
            self.close()
        fde = FormatDescription.for_server(
            SERVER_VERSION, server_id=self.server_id, timestamp=timestamp,
            create_timestamp=timestamp if file_index == 1 else 0,
        )  # fmt: skip
        self._writer = BinlogFileWriter(path, fde, previous_gtids=self._executed.copy())
        self._file_index = file_index
        self.files.append(path)
        # A new file starts without table maps: every table gets a fresh id on first use.
        self._encoder.forget_tables()


def _estimate(change: RowChange) -> int:
    total = 0
    for row in (change.before, change.after):
        for value in row or ():
            total += len(value) if isinstance(value, str | bytes) else 8
    return total


def write_binlogs(
    transactions: Iterable[GeneratedTransaction],
    directory: Path,
    *,
    server_uuid: str,
    base: str = "binlog",
    compression: bool = False,
) -> list[Path]:
    """Write the stream; returns the files written, in order (an index file lists them)."""
    writer = BinlogSetWriter(directory, base, server_uuid, compression)
    try:
        return writer.write(transactions)
    finally:
        writer.close()


__all__ = ["EventFlag", "column_spec", "write_binlogs"]
