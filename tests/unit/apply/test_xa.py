"""XA statements and prepared transactions: xids as sources write them, the events an engine
keeps, a real MariaDB binary log in the relay log's MySQL form, and the applier's steps on the
in-memory engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_replica.applier_core.apply.transaction import ApplyError, TransactionApplier
from spark_replica.applier_core.apply.xa import (
    XaVerb,
    Xid,
    decode_events,
    encode_events,
    parse_xa,
)
from spark_replica.applier_core.binlog.codecs.registry import encode_event
from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.events import Event, Query, XaPrepare, make_header
from spark_replica.applier_core.binlog.rows import RowsEvent
from spark_replica.applier_core.binlog.stream import StreamDecoder
from spark_replica.applier_core.binlog.transactions import Transaction, group_transactions
from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.receiver.convert import MariadbConverter, MysqlTracker
from spark_replica.applier_core.storage import InMemoryEngine, TableRef, TransactionRef
from tests.unit.provider.helpers import ITEMS, UUID, gtid, query, rows

MARIADB_XA = Path(__file__).parents[2] / "fixtures" / "binlogs" / "mariadb-10.11-xa.000001"


@pytest.mark.parametrize(
    ("text", "verb", "xid", "one_phase"),
    [
        ("XA START 'a'", XaVerb.START, Xid(b"a"), False),
        ("xa begin 'a','b'", XaVerb.START, Xid(b"a", b"b"), False),
        ("XA END X'61',X'',1", XaVerb.END, Xid(b"a"), False),
        ("XA PREPARE 'g','b',7", XaVerb.PREPARE, Xid(b"g", b"b", 7), False),
        ("XA COMMIT X'6731',X'62',12345", XaVerb.COMMIT, Xid(b"g1", b"b", 12345), False),
        ("XA COMMIT 'it''s' ONE PHASE", XaVerb.COMMIT, Xid(b"it's"), True),
        ("XA ROLLBACK \"d\\\"q\", 0x0102, 3", XaVerb.ROLLBACK, Xid(b'd"q', b"\x01\x02", 3), False),
        ("XA RECOVER", XaVerb.RECOVER, None, False),
    ],
)  # fmt: skip
def test_xa_statements_as_sources_write_them(
    text: str, verb: XaVerb, xid: Xid | None, one_phase: bool
) -> None:
    statement = parse_xa(text)
    assert statement is not None
    assert (statement.verb, statement.xid, statement.one_phase) == (verb, xid, one_phase)


def test_what_is_not_an_xa_statement() -> None:
    assert parse_xa("XAVIER") is None
    assert parse_xa("SELECT 'XA START'") is None
    with pytest.raises(ValueError):
        parse_xa("XA COMMIT")
    assert Xid(b"g1", b"b", 12345).text == "X'6731',X'62',12345"


def _mariadb_stream() -> list[Transaction]:
    """The fixture's events as the receiver writes them to the relay log, grouped."""
    data = MARIADB_XA.read_bytes()
    converter, decoder = MariadbConverter(), StreamDecoder()
    events: list[tuple[str, int, int, Event]] = []
    at = 4
    while at < len(data):
        size = int.from_bytes(data[at + 9 : at + 13], "little")
        for raw in converter.convert(data[at : at + size]):
            events.append(("relay", at, at + size, decoder.decode(raw)))
        at += size
    return [item for item in group_transactions(events) if isinstance(item, Transaction)]


def _shape(transaction: Transaction) -> list[str]:
    return [
        event.query if isinstance(event, Query) else event.header.type_name
        for event in transaction.events
    ]


def test_a_mariadb_xa_binlog_becomes_mysql_xa_transactions() -> None:
    transactions = _mariadb_stream()
    assert [t.complete for t in transactions] == [True] * 6
    assert _shape(transactions[1]) == [
        "GTID", "XA START X'61',X'',1", "TABLE_MAP", "WRITE_ROWS_V1", "XA END X'61',X'',1",
        "XA_PREPARE",
    ]  # fmt: skip
    assert _shape(transactions[2])[1] == "XA START X'62',X'71',7"
    assert _shape(transactions[3]) == ["GTID", "XA COMMIT X'61',X'',1"]
    assert _shape(transactions[4]) == ["GTID", "XA ROLLBACK X'62',X'71',7"]
    assert _shape(transactions[5]) == ["GTID", "BEGIN", "TABLE_MAP", "WRITE_ROWS_V1", "XID"]
    prepare = transactions[2].events[-1]
    assert isinstance(prepare, XaPrepare) and not prepare.one_phase
    assert Xid.of_prepare(prepare).text == "X'62',X'71',7"


def test_the_kept_events_read_back_as_written() -> None:
    rows = [e for e in _mariadb_stream()[1].events if isinstance(e, RowsEvent)]
    back = list(decode_events(encode_events(rows)))
    assert [(e.rows, e.table_map and e.table_map.table) for e in back] == [([(1, 1)], "t")]


def _engine() -> InMemoryEngine:
    """An engine with the database the fixture's source made unlogged."""
    engine = InMemoryEngine()
    session = engine.session("setup")
    session.begin(TransactionRef("setup:1", 0))
    session.apply_ddl("CREATE DATABASE x", None)
    session.prepare()
    session.commit()
    return engine


def _applier(engine: InMemoryEngine, gno: int) -> TransactionApplier:
    session = engine.session(f"s{gno}")
    session.begin(TransactionRef(f"uuid:{gno}", gno))
    return TransactionApplier(session, f"uuid:{gno}", "mariadb-bin.000001")


def _apply(engine: InMemoryEngine, gno: int, events: tuple[Event, ...]) -> None:
    applier = _applier(engine, gno)
    for event in events:
        applier.apply(event)
    assert applier.ended
    applier.session.prepare()
    applier.session.commit()


def test_the_applier_keeps_a_prepare_and_applies_it_at_xa_commit() -> None:
    transactions = _mariadb_stream()
    engine = _engine()
    for gno, transaction in enumerate(transactions[:3], 1):
        _apply(engine, gno, transaction.events[1:])
    assert engine.rows(TableRef("x", "t")) == []
    assert [(p.xid, p.gtid) for p in engine.prepared_xa()] == [
        ("X'61',X'',1", "uuid:2"), ("X'62',X'71',7", "uuid:3")]  # fmt: skip
    for gno, transaction in enumerate(transactions[3:], 4):
        _apply(engine, gno, transaction.events[1:])
    assert sorted(engine.rows(TableRef("x", "t"))) == [(1, 1), (3, 3)]
    assert engine.prepared_xa() == []


def test_a_prepared_xid_twice_is_1440_and_an_unknown_one_1397() -> None:
    transactions = _mariadb_stream()
    engine = _engine()
    for gno, transaction in enumerate(transactions[:2], 1):
        _apply(engine, gno, transaction.events[1:])
    again = _applier(engine, 9)
    with pytest.raises(ApplyError) as raised:
        for event in transactions[1].events[1:]:
            again.apply(event)
    assert raised.value.code == ErrorCode.XAER_DUPID
    again.session.rollback()
    for text in ("XA COMMIT X'62',X'71',7", "XA ROLLBACK 'zz'"):
        applier = _applier(engine, 10)
        with pytest.raises(ApplyError) as raised:
            applier.apply(Query.build(transactions[3].events[1].header, text, db="x"))
        assert raised.value.code == ErrorCode.XAER_NOTA
        assert raised.value.detail == (
            f"Error 'XAER_NOTA: Unknown XID' on query. Default database: 'x'. Query: '{text}'"
        )
        applier.session.rollback()
    assert [p.xid for p in engine.prepared_xa()] == ["X'61',X'',1"]


def test_an_xa_prepare_query_ends_the_first_phase_as_the_event_does() -> None:
    transactions = _mariadb_stream()
    events = transactions[1].events[1:-1]
    header = events[0].header
    engine = _engine()
    _apply(engine, 1, transactions[0].events[1:])
    _apply(engine, 2, (*events, Query.build(header, "XA PREPARE X'61',X'',1", db="x")))
    assert [p.xid for p in engine.prepared_xa()] == ["X'61',X'',1"]
    _apply(engine, 3, (Query.build(header, "XA COMMIT 'a'", db="x"),))
    assert engine.rows(TableRef("x", "t")) == [(1, 1)]


def test_xa_statements_out_of_place_are_refused() -> None:
    engine = _engine()
    header = _mariadb_stream()[3].events[1].header
    for events in (("BEGIN", "XA START 'a'"), ("XA START 'a'", "XA END 'b'"),
                   ("XA RECOVER",), ("XA START 'a'", "XA COMMIT 'a'")):  # fmt: skip
        applier = _applier(engine, 1)
        with pytest.raises(ApplyError) as raised:
            for text in events:
                applier.apply(Query.build(header, text, db="x"))
        assert raised.value.code == ErrorCode.REPLICA_RELAY_LOG_READ_FAILURE
        applier.session.rollback()


def test_the_receiver_follows_a_mysql_sources_xa_transactions() -> None:
    """XA START opens a body as BEGIN does (not a DDL's single statement), the XA_prepare
    event ends it, XA COMMIT is a transaction of its own."""
    first = [gtid(1), query("XA START X'61',X'',1"), ITEMS, rows([1]),
             query("XA END X'61',X'',1"), XaPrepare(make_header(EventType.XA_PREPARE), False, 1,
                                                    b"a", b"")]  # fmt: skip
    second = [gtid(2), query("XA COMMIT X'61',X'',1")]
    tracker, maps = MysqlTracker(), {ITEMS.table_id: ITEMS}
    ends = []
    for event in (*first, *second):
        tracker.convert(encode_event(event, checksum=False, log_pos=0, table_maps=maps))
        ends.append(tracker.ended)
    assert ends == [None] * 5 + [(UUID, 1), None, (UUID, 2)]
