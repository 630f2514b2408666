"""Real relay logs for the transaction provider tests and the appliers' tests that read one:
codec-encoded events appended with the relay log writer, and small builders of
transactions."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from spark_replica.applier_core.binlog.codecs.registry import encode_event_at, remember_table_map
from spark_replica.applier_core.binlog.constants import ColumnType, EventFlag, EventType
from spark_replica.applier_core.binlog.events import (
    Event,
    FormatDescription,
    Gtid,
    Query,
    Rotate,
    Xid,
    make_header,
)
from spark_replica.applier_core.binlog.payload import make_transaction_payload
from spark_replica.applier_core.binlog.relaylog import RelayCoordinate, RelayLog, RelayLogWriter
from spark_replica.applier_core.binlog.rows import RowsEvent, make_column
from spark_replica.applier_core.provider import (
    EVENT_MEMORY,
    FetchableTransaction,
    ResourceMonitor,
    TransactionState,
)
from tests.unit.binlog_rows.builders import rows_event, table

CHANNEL = "c1"
UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
RELAY_FDE = FormatDescription.for_server("8.4.0", flags=EventFlag.RELAY_LOG)
ITEMS = table(
    (make_column(0, ColumnType.LONG), make_column(1, ColumnType.BLOB, pack_length=4)),
    table_id=7,
    schema="shop",
    name="items",
)
WAIT = 10.0


def gtid(gno: int, *, last_committed: int = 0, sequence_number: int = 0, length: int = 0) -> Gtid:
    return Gtid(
        make_header(EventType.GTID),
        flags=0,
        uuid=UUID,
        gno=gno,
        last_committed=last_committed,
        sequence_number=sequence_number or gno,
        transaction_length=length,
    )


def query(text: str) -> Query:
    return Query.build(make_header(EventType.QUERY), text, db="shop")


def rows(ids: Sequence[int], payload: int = 0) -> RowsEvent:
    """An insert of ``(id, payload bytes)`` rows into ``ITEMS``."""
    return rows_event(ITEMS, [(i, bytes([i % 251]) * payload) for i in ids])


def xid(number: int) -> Xid:
    return Xid(make_header(EventType.XID), number)


def body(gno: int, ids: Sequence[int] = (1,), payload: int = 0) -> list[Event]:
    """BEGIN, the Table_map, one rows event per id, Xid."""
    return [query("BEGIN"), ITEMS, *(rows([i], payload) for i in ids), xid(gno)]


def transaction(gno: int, ids: Sequence[int] = (1,), payload: int = 0, **kw: int) -> list[Event]:
    return [gtid(gno, **kw), *body(gno, ids, payload)]


def compressed(gno: int, ids: Sequence[int] = (1,), payload: int = 0) -> list[Event]:
    """The transaction as a source with binlog_transaction_compression writes it."""
    inner = body(gno, ids, payload)
    event = make_transaction_payload(
        make_header(EventType.TRANSACTION_PAYLOAD), inner, table_maps={ITEMS.table_id: ITEMS}
    )
    return [gtid(gno), event]


class RelayBuilder:
    """A channel's relay log under ``datadir`` and its writer; events are encoded as written."""

    def __init__(self, datadir: Path, *, max_size: int = 0, purge: bool = True) -> None:
        self.relay = RelayLog.for_channel(datadir, CHANNEL, purge_enabled=purge)
        self.relay.open()
        self.table_maps: dict[int, object] = {ITEMS.table_id: ITEMS}
        self.writer = RelayLogWriter(
            self.relay,
            make_header=lambda: encode_event_at(RELAY_FDE, 4, checksum=True),
            make_rotate=self._rotate_event,
            max_size=max_size,
        )
        self.writer.open()

    def _rotate_event(self, next_name: str) -> bytes:
        rotate = Rotate(make_header(EventType.ROTATE, flags=EventFlag.RELAY_LOG), 4, next_name)
        return encode_event_at(rotate, self.writer.position.offset, checksum=True)

    def encode(self, event: Event) -> bytes:
        data = encode_event_at(
            event, self.writer.position.offset, checksum=True, table_maps=self.table_maps
        )
        remember_table_map(event, self.table_maps)
        return data

    def append(self, *events: Event) -> RelayCoordinate:
        """Write ``events``; returns where the last one ends."""
        end = self.writer.position
        for event in events:
            end = self.writer.append(self.encode(event))
        return end

    def append_raw(self, data: bytes) -> RelayCoordinate:
        return self.writer.append(data)

    def rotate(self) -> str:
        return self.writer.rotate()

    def files(self) -> list[str]:
        return self.relay.files()

    def close(self) -> None:
        self.writer.close()
        self.relay.close()


def monitor(limit: int = 1 << 30) -> ResourceMonitor:
    result = ResourceMonitor(CHANNEL)
    result.register(EVENT_MEMORY, limit)
    return result


class SpyMonitor(ResourceMonitor):
    """Sets ``blocked`` when an acquisition cannot be granted at once."""

    def __init__(self, limit: int) -> None:
        super().__init__(CHANNEL)
        self.register(EVENT_MEMORY, limit)
        self.blocked = threading.Event()

    def acquire(
        self,
        name: str,
        amount: int,
        *,
        timeout: float | None = None,
        abort: Callable[[], bool] | None = None,
    ) -> bool:
        if self.try_acquire(name, amount):
            return True
        self.blocked.set()
        return super().acquire(name, amount, timeout=timeout, abort=abort)


def drain(trx: FetchableTransaction, timeout: float = WAIT) -> list[Event]:
    """Every event ``next_event`` hands out until it returns None."""
    events: list[Event] = []
    while (event := trx.next_event(timeout)) is not None:
        events.append(event)
    return events


def row_ids(events: Sequence[Event]) -> list[int]:
    """The ids of the rows inserted by ``events``."""
    return [int(row[0]) for e in events if isinstance(e, RowsEvent) for row in e.rows]


def types(events: Sequence[Event]) -> list[int]:
    return [e.header.type_code for e in events]


def state(trx: FetchableTransaction) -> TransactionState:
    """``trx.state``, read again (so mypy does not keep an earlier narrowing)."""
    return trx.state
