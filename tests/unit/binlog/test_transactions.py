"""Grouping events into transactions."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spark_replica.applier_core.binlog.constants import EventFlag
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import (
    Event,
    FormatDescription,
    Gtid,
    Heartbeat,
    Incident,
    MariadbAnnotateRows,
    MariadbGtid,
    Query,
    Rotate,
    StatementOnlyEvent,
    Stop,
    TransactionPayload,
    UnknownEvent,
    XaPrepare,
    Xid,
    make_header,
)
from spark_replica.applier_core.binlog.file import BinlogFileReader
from spark_replica.applier_core.binlog.transactions import (
    StandaloneEvent,
    StreamItem,
    Transaction,
    TransactionGrouper,
    TransactionStatus,
    group_transactions,
)
from tests.unit.binlog import FIXTURES

UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
COMPLETE, TRUNCATED, INCOMPLETE = (
    TransactionStatus.COMPLETE,
    TransactionStatus.TRUNCATED,
    TransactionStatus.INCOMPLETE,
)


def gtid(n: int) -> Gtid:
    return Gtid(make_header(33), 0, UUID, n, last_committed=n - 1, sequence_number=n)


def anonymous(n: int) -> Gtid:
    return Gtid(
        make_header(34),
        0,
        "00000000-0000-0000-0000-000000000000",
        0,
        last_committed=n - 1,
        sequence_number=n,
    )


def query(text: str) -> Query:
    return Query.build(make_header(2), text, db="test")


def table_map() -> UnknownEvent:
    return UnknownEvent(make_header(19), 19, b"")


def rows() -> UnknownEvent:
    return UnknownEvent(make_header(30), 30, b"")


def xid() -> Xid:
    return Xid(make_header(16), 1)


def fde(
    *, log_pos: int = 126, created: int = 0, flags: int = 0, server_id: int = 1
) -> FormatDescription:
    base = FormatDescription.for_server(server_id=server_id, create_timestamp=created, flags=flags)
    return dataclasses.replace(base, header=base.header._replace(log_pos=log_pos))


def maria(seq: int, flags: int) -> MariadbGtid:
    return MariadbGtid(make_header(162), 0, seq, flags)


def group(
    events: Iterable[Event], *, file: str = "relay.000001", **kwargs: int
) -> list[StreamItem]:
    items: list[tuple[str, int, int, Event]] = []
    pos = 4
    for event in events:
        items.append((file, pos, pos + 100, event))
        pos += 100
    return list(group_transactions(items, **kwargs))


def transactions(items: list[StreamItem]) -> list[Transaction]:
    return [item for item in items if isinstance(item, Transaction)]


def shape(items: list[StreamItem]) -> list[tuple[str, int] | str]:
    """('T'|'t'|'i', number of events) per transaction, class name per standalone event."""
    out: list[tuple[str, int] | str] = []
    for item in items:
        if isinstance(item, Transaction):
            out.append(
                ({COMPLETE: "T", TRUNCATED: "t", INCOMPLETE: "i"}[item.status], len(item.events))
            )
        else:
            out.append(type(item.event).__name__)
    return out


def test_gtid_row_transaction() -> None:
    items = group(
        [fde(), gtid(1), query("BEGIN"), table_map(), rows(), xid(), Stop(make_header(3))]
    )
    assert shape(items) == ["FormatDescription", ("T", 5), "Stop"]
    (trx,) = transactions(items)
    assert trx.gtid_text == f"{UUID}:1" and trx.complete
    assert (trx.start, trx.end) == (("relay.000001", 104), ("relay.000001", 604))
    assert (trx.last_committed, trx.sequence_number) == (0, 1)
    assert isinstance(trx.events[0], Gtid) and trx.gtid_event is trx.events[0]


def test_ddl_is_a_single_statement_transaction() -> None:
    items = group([gtid(1), query("CREATE TABLE t (a INT)"), gtid(2), query("DROP TABLE t")])
    assert shape(items) == [("T", 2), ("T", 2)]


def test_new_gtid_cuts_an_open_transaction() -> None:
    items = group([gtid(1), query("BEGIN"), table_map(), rows(), gtid(2), query("BEGIN"), xid()])
    assert shape(items) == [("t", 4), ("T", 3)]
    first, second = transactions(items)
    assert first.status is TRUNCATED and first.end == ("relay.000001", 404)
    assert second.gtid_text == f"{UUID}:2" and second.complete


def test_missing_terminator_at_end_of_stream() -> None:
    items = group([gtid(1), query("BEGIN"), table_map(), rows()])
    assert shape(items) == [("i", 4)]
    grouper = TransactionGrouper()
    assert grouper.feed("f", 4, 10, gtid(1)) == []
    assert bool(grouper.open)
    (incomplete,) = grouper.finish()
    assert isinstance(incomplete, Transaction) and incomplete.status is INCOMPLETE
    assert not grouper.open and grouper.finish() == []


def test_gtid_without_body_is_truncated_by_the_next() -> None:
    assert shape(group([gtid(1), gtid(2), query("CREATE DATABASE d")])) == [("t", 1), ("T", 2)]


def test_transactions_without_gtids() -> None:
    intvar = StatementOnlyEvent(make_header(5), 5, bytes(9))
    items = group(
        [
            query("BEGIN"),
            intvar,
            query("INSERT INTO t VALUES (NULL)"),
            xid(),
            intvar,
            query("INSERT INTO m VALUES (NULL)"),
            query("BEGIN"),
            query("INSERT INTO m VALUES (1)"),
            query("COMMIT"),
            query("BEGIN"),
            query("SAVEPOINT a"),
            query("ROLLBACK TO a"),
            query("ROLLBACK"),
        ]
    )
    assert shape(items) == [("T", 4), ("T", 2), ("T", 3), ("T", 4)]
    assert all(trx.gtid_event is None and trx.gtid_text == "" for trx in transactions(items))


def test_begin_inside_a_body_cuts() -> None:
    items = group([query("BEGIN"), table_map(), query("BEGIN"), rows(), xid()])
    assert shape(items) == [("t", 2), ("T", 3)]


def test_anonymous_gtids_carry_the_logical_clock() -> None:
    items = group(
        [anonymous(1), query("BEGIN"), rows(), xid(), anonymous(2), query("DROP TABLE t")]
    )
    first, second = transactions(items)
    assert first.gtid_text == "ANONYMOUS" and (first.last_committed, first.sequence_number) == (
        0,
        1,
    )
    assert (second.last_committed, second.sequence_number) == (1, 2)


def test_mariadb_gtid_stands_for_begin() -> None:
    annotate = MariadbAnnotateRows(make_header(160), "INSERT ...")
    items = group(
        [
            maria(1, 12),
            annotate,
            table_map(),
            rows(),
            xid(),
            maria(2, 1 | 8),
            query("CREATE TABLE t (a INT)"),
            maria(3, 8),
            query("INSERT INTO myisam VALUES (1)"),
            query("COMMIT"),
        ]
    )
    assert shape(items) == [("T", 5), ("T", 2), ("T", 3)]
    assert [trx.gtid_text for trx in transactions(items)] == ["0-1-1", "0-1-2", "0-1-3"]
    assert all(trx.last_committed == trx.sequence_number == 0 for trx in transactions(items))


def test_mariadb_xa_prepare() -> None:
    items = group(
        [
            maria(1, 64 | 4),
            query("XA START 'x'"),
            rows(),
            query("XA END 'x'"),
            query("XA PREPARE 'x'"),
            maria(2, 128 | 1),
            query("XA COMMIT 'x'"),
        ]
    )
    assert shape(items) == [("T", 5), ("T", 2)]


def test_mysql_xa_prepare() -> None:
    prepare = XaPrepare(make_header(38), False, 1, b"g", b"")
    items = group(
        [
            gtid(1),
            query("XA START X'67',X'',1"),
            table_map(),
            rows(),
            query("XA END X'67',X'',1"),
            prepare,
            gtid(2),
            query("XA COMMIT X'67',X'',1"),
        ]
    )
    assert shape(items) == [("T", 6), ("T", 2)]


def test_payload_holds_the_whole_transaction() -> None:
    payload = TransactionPayload(make_header(40), 0, 10, b"")
    assert shape(group([gtid(1), payload, gtid(2), payload])) == [("T", 2), ("T", 2)]


def test_source_fde_resets_the_clock_once() -> None:
    items = group(
        [
            fde(),
            gtid(1),
            query("DROP TABLE a"),
            gtid(2),
            query("DROP TABLE b"),
            Rotate(make_header(4), 4, "binlog.000002"),
            fde(log_pos=126),
            gtid(1),
            query("DROP TABLE c"),
        ]
    )
    assert [trx.clock_reset for trx in transactions(items)] == [True, False, True]


@pytest.mark.parametrize(
    "control",
    [fde(log_pos=0), fde(flags=EventFlag.RELAY_LOG), fde(server_id=99)],
    ids=["resent-by-dump-thread", "relay-log-flag", "own-server-id"],
)
def test_fdes_that_do_not_reset_the_clock(control: FormatDescription) -> None:
    items = group([control, gtid(1), query("DROP TABLE a")], own_server_id=99)
    assert [trx.clock_reset for trx in transactions(items)] == [False]


def test_restarted_source_cuts_the_open_transaction() -> None:
    items = group(
        [
            gtid(1),
            query("BEGIN"),
            rows(),
            fde(created=1_700_000_000),
            gtid(1),
            query("DROP TABLE a"),
        ]
    )
    assert shape(items) == [("t", 3), "FormatDescription", ("T", 2)]
    assert [trx.clock_reset for trx in transactions(items)] == [False, True]


def test_control_events_inside_a_transaction_are_kept() -> None:
    rotate = Rotate(make_header(4), 4, "relay.000002")
    relay_fde = fde(flags=EventFlag.RELAY_LOG, created=1_700_000_000)
    resent = fde(log_pos=0)
    stream = [
        ("relay.000001", 4, 50, gtid(1)),
        ("relay.000001", 50, 100, query("BEGIN")),
        ("relay.000001", 100, 150, rotate),
        ("relay.000002", 4, 120, relay_fde),
        ("relay.000002", 120, 230, resent),
        ("relay.000002", 230, 280, rows()),
        ("relay.000002", 280, 311, xid()),
    ]
    (trx,) = list(group_transactions(stream))
    assert isinstance(trx, Transaction) and trx.complete and len(trx.events) == 7
    assert (trx.start, trx.end) == (("relay.000001", 4), ("relay.000002", 311))


def test_standalone_events() -> None:
    incident = Incident(make_header(26), 1, "lost events")
    heartbeat = Heartbeat(make_header(27), "binlog.000001", 500)
    padding = UnknownEvent(make_header(100, flags=0x80), 100, b"")
    items = group([incident, heartbeat, padding, Stop(make_header(3))])
    assert shape(items) == ["Incident", "Heartbeat", "UnknownEvent", "Stop"]
    assert isinstance(items[0], StandaloneEvent) and items[0].start == ("relay.000001", 4)
    assert shape(group([gtid(1), incident])) == [("T", 2)]


# --- a property: nothing is lost, reordered or invented -----------------------------------

TRANSACTIONS = st.sampled_from(
    [
        [gtid(1), query("BEGIN"), table_map(), rows(), xid()],
        [anonymous(1), query("CREATE TABLE t (a INT)")],
        [query("BEGIN"), query("INSERT INTO t VALUES (1)"), query("COMMIT")],
        [StatementOnlyEvent(make_header(5), 5, bytes(9)), query("INSERT INTO t VALUES (NULL)")],
        [maria(5, 12), table_map(), rows(), xid()],
        [gtid(2), TransactionPayload(make_header(40), 0, 1, b"")],
    ]
)
CONTROLS = st.sampled_from(
    [Rotate(make_header(4), 4, "b.2"), Stop(make_header(3)), Heartbeat(make_header(27), "b", 4)]
)


@given(st.lists(st.one_of(TRANSACTIONS, CONTROLS.map(lambda e: [e])), max_size=20))
def test_grouping_partitions_the_stream(parts: list[list[Event]]) -> None:
    events = [event for part in parts for event in part]
    items = group(events)
    flattened = [
        e
        for item in items
        for e in (item.events if isinstance(item, Transaction) else (item.event,))
    ]
    assert flattened == events
    assert all(isinstance(item, StandaloneEvent) or item.complete for item in items)
    assert len(items) == len(parts)


# --- real files ---------------------------------------------------------------------------


def _group_file(name: str) -> list[StreamItem]:
    path = FIXTURES / name
    return list(group_transactions((name, p, e, ev) for p, e, ev in BinlogFileReader(path)))


def test_anonymous_ddl_file() -> None:
    trxs = transactions(_group_file("bug27213339-bin.000001"))
    assert len(trxs) == 46
    assert all(t.complete and t.gtid_text == "ANONYMOUS" and len(t.events) == 2 for t in trxs)
    assert [t.sequence_number for t in trxs] == list(range(1, 47))


def test_statement_based_57_file() -> None:
    items = _group_file("rpl_cross_version_default_utf8mb4_collation.000001")
    assert shape(items) == [
        "FormatDescription",
        "PreviousGtids",
        ("T", 2),
        ("T", 5),
        ("T", 5),
        ("T", 2),
        ("T", 2),
        "Stop",
    ]
    assert [(t.last_committed, t.sequence_number) for t in transactions(items)] == [
        (0, 1),
        (1, 2),
        (2, 3),
        (3, 4),
        (4, 5),
    ]
    assert transactions(items)[0].clock_reset


def test_corrupt_relay_log_stops_with_an_error() -> None:
    path = FIXTURES / "corrupt-relay-bin.000624"
    seen: list[StreamItem] = []
    with pytest.raises(BinlogError, match="position 91204"):
        seen.extend(group_transactions(("r", p, e, ev) for p, e, ev in BinlogFileReader(path)))
    trxs = transactions(seen)
    assert len(trxs) > 200 and all(t.complete for t in trxs)


def test_mariadb_file() -> None:
    items = _group_file("mariadb-bin.000001")
    assert shape(items) == [
        "FormatDescription",
        "MariadbGtidList",
        "MariadbBinlogCheckpoint",
        ("T", 5),
        ("T", 5),
    ]
    assert [t.gtid_text for t in transactions(items)] == ["0-1-1", "0-1-2"]


@pytest.mark.parametrize(
    "name",
    [
        "mysql-enum-string-set.000001",
        "json.binlog.000001",
        "binlog_transaction_with_GTID_TAG.000001",
        "vector.binlog",
    ],
)
def test_row_files_group_into_complete_transactions(name: str) -> None:
    trxs = transactions(_group_file(name))
    assert trxs and all(t.complete for t in trxs)
    for trx in trxs:
        assert isinstance(trx.gtid_event, Gtid)
        if trx.gtid_event.transaction_length:
            assert trx.end[1] - trx.start[1] == trx.gtid_event.transaction_length
