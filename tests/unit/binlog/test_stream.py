"""StreamDecoder: the Format_description and Table_map state a reader carries between events."""

from __future__ import annotations

import pytest

from spark_replica.applier_core.binlog.codecs.registry import decode_event, encode_event
from spark_replica.applier_core.binlog.constants import ColumnType, EventType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import (
    Event,
    FormatDescription,
    Gtid,
    Query,
    Xid,
    make_header,
)
from spark_replica.applier_core.binlog.rows import RowsEvent, make_column
from spark_replica.applier_core.binlog.stream import StreamDecoder
from tests.unit.binlog_rows.builders import rows_event, table

FDE = FormatDescription.for_server("8.4.0")
T1 = table((make_column(0, ColumnType.LONG),), table_id=11)


def _bytes(events: list[Event], *, checksum: bool = True) -> list[bytes]:
    maps: dict[int, object] = {T1.table_id: T1}
    return [encode_event(e, checksum=checksum, log_pos=0, table_maps=maps) for e in events]


def _gtid(gno: int) -> Gtid:
    return Gtid(make_header(EventType.GTID), 0, "3e11fa47-71ca-11e1-9e33-c80aa9429562", gno)


def _transaction(gno: int, *, begin: bool = True) -> list[Event]:
    events: list[Event] = [_gtid(gno)]
    if begin:
        events.append(Query.build(make_header(EventType.QUERY), "BEGIN", db="test"))
    events += [T1, rows_event(T1, [(gno,)]), Xid(make_header(EventType.XID), gno)]
    return events


def test_follows_the_format_description_and_the_table_maps() -> None:
    stream = StreamDecoder()
    decoded = [stream.decode(d) for d in _bytes([FDE, *_transaction(1), *_transaction(2)])]
    assert stream.fde == decoded[0]
    rows = [e for e in decoded if isinstance(e, RowsEvent)]
    assert [r.rows for r in rows] == [[(1,)], [(2,)]]
    assert stream.table_maps == {}  # the last Xid ended the transaction


def test_without_a_format_description_events_have_no_checksum() -> None:
    stream = StreamDecoder()
    assert isinstance(stream.decode(_bytes([Xid(make_header(16), 5)], checksum=False)[0]), Xid)
    with pytest.raises(BinlogError, match="event length mismatch|Xid event"):
        stream.decode(_bytes([Xid(make_header(16), 5)])[0])


@pytest.mark.parametrize("begin", [True, False], ids=["BEGIN", "no BEGIN"])
def test_table_maps_do_not_outlive_their_transaction(begin: bool) -> None:
    stream = StreamDecoder()
    first = _transaction(1, begin=begin)
    for data in _bytes([FDE, *first[:-1]]):  # no Xid: cut off before its end
        stream.decode(data)
    assert set(stream.table_maps) == {T1.table_id}
    orphan = _bytes([rows_event(T1, [(2,)])])[0]
    stream.decode(_bytes([_gtid(2)])[0])
    with pytest.raises(BinlogError, match="without a Table_map event"):
        stream.decode(orphan)


def test_decodes_as_decode_event_does() -> None:
    events = [FDE, *_transaction(1), *_transaction(2, begin=False)]
    stream = StreamDecoder()
    fde: FormatDescription | None = None
    maps: dict[int, object] = {}
    for data in _bytes(events):
        expected = decode_event(data, fde, table_maps=maps)
        if isinstance(expected, FormatDescription):
            fde = expected
        elif expected.header.type_code == EventType.TABLE_MAP:
            maps[T1.table_id] = expected
        assert stream.decode(data) == expected


def test_a_format_description_inside_a_transaction_keeps_its_table_maps() -> None:
    """A relay log file can start in the middle of a transaction with the replica's own
    Format_description; the rows after it still find their Table_map."""
    stream = StreamDecoder()
    first = _transaction(1)
    events = [FDE, *first[:-2], FDE, *first[-2:]]  # GTID, BEGIN, map | FDE | rows, Xid
    decoded = [stream.decode(d) for d in _bytes(events)]
    rows = [e for e in decoded if isinstance(e, RowsEvent)]
    assert [r.rows for r in rows] == [[(1,)]]
