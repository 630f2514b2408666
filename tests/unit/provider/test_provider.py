"""Transaction providers: boundaries, truncation, errors, skipping, the reader thread
(DES.TS.0010-0080, TP.1, RD.1/2, STREAM.3/4; T42, T43, T71, T72)."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.constants import EventFlag, EventType
from spark_replica.applier_core.binlog.events import (
    Event,
    FormatDescription,
    Heartbeat,
    Incident,
    PreviousGtids,
    StatementOnlyEvent,
    UnknownEvent,
    make_header,
)
from spark_replica.applier_core.binlog.file import BinlogFileReader, read_raw_events
from spark_replica.applier_core.binlog.payload import payload_events
from spark_replica.applier_core.binlog.relaylog import RelayLog, relay_log_directory
from spark_replica.applier_core.binlog.transactions import Transaction, group_transactions
from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.provider import (
    EVENT_MEMORY,
    AsyncTransactionProvider,
    FetchableTransaction,
    SyncTransactionProvider,
    TransactionProvider,
    TransactionState,
)
from spark_replica.tools.generator.simulate import SERVER_UUID, WorkloadSpec, simulate
from spark_replica.tools.generator.writer import write_binlogs
from tests.unit.provider.helpers import (
    CHANNEL,
    ITEMS,
    UUID,
    WAIT,
    RelayBuilder,
    SpyMonitor,
    drain,
    gtid,
    monitor,
    query,
    row_ids,
    rows,
    state,
    transaction,
    types,
    xid,
)

FIXTURES = Path(__file__).resolve().parents[4] / "shared" / "fixtures" / "binlogs"
PROVIDERS = [SyncTransactionProvider, AsyncTransactionProvider]
PREFIX = f"Replica SQL for channel '{CHANNEL}': Relay log read failure: "
Q, TM, WR, XID = EventType.QUERY, EventType.TABLE_MAP, EventType.WRITE_ROWS, EventType.XID


def _take_all(
    provider: TransactionProvider, count: int | None = None
) -> list[FetchableTransaction]:
    """``count`` transactions (each waited for), then checks that no other one comes; without
    ``count`` (synchronous providers only), every transaction up to the end of the relay log."""
    if count is None:
        assert isinstance(provider, SyncTransactionProvider)
        found = []
        while (trx := provider.next(0.05)) is not None:
            found.append(trx)
        return found
    taken = [provider.next(WAIT) for _ in range(count)]
    assert provider.next(0.05) is None
    return [trx for trx in taken if trx is not None]


@pytest.mark.parametrize("kind", PROVIDERS, ids=["sync", "async"])
@pytest.mark.parametrize("compression", [False, True], ids=["plain", "compressed"])
def test_a_generated_workload_comes_out_transaction_for_transaction(
    tmp_path: Path, kind: type[TransactionProvider], compression: bool
) -> None:
    """Oracle: the source binlog grouped by TransactionGrouper. The relay log rotates every
    4 KiB, so transactions span files."""
    spec = WorkloadSpec(
        transactions=120, rows_per_table=15, seed=7, ddl_every=50, large_share=0.1, large_size=40
    )
    generated, _ = simulate(spec)
    source = write_binlogs(generated, tmp_path / "source", server_uuid=SERVER_UUID,
                           compression=compression)  # fmt: skip
    expected: list[Transaction] = []
    for path in source:
        items = ((path.name, p, e, ev) for p, e, ev in BinlogFileReader(path))
        expected += [t for t in group_transactions(items) if isinstance(t, Transaction)]
    builder = RelayBuilder(tmp_path / "data", max_size=4096)
    for path in source:
        for raw in [bytes(r) for _, _, r in read_raw_events(path)][2:]:  # after FDE, PGTIDs
            if raw[4] != EventType.ROTATE:
                builder.append_raw(raw)
    assert len(builder.files()) > 3
    memory = monitor()
    with kind(builder.relay, channel=CHANNEL, monitor=memory) as provider:
        found = _take_all(provider, len(expected))
        assert len(found) == len(expected)
        assert any(t.end is not None and t.end.file != t.start.file for t in found)
        for trx, reference in zip(found, expected, strict=True):
            clock = (reference.last_committed, reference.sequence_number)
            assert (trx.gtid_text, trx.last_committed, trx.sequence_number) == (
                reference.gtid_text,
                *clock,
            )
            events = drain(trx)
            assert trx.state is TransactionState.COMPLETE
            inner: list[Event] = []
            for event in reference.events[1:]:
                if event.header.type_code == EventType.TRANSACTION_PAYLOAD:
                    inner += payload_events(event)  # type: ignore[arg-type]
                else:
                    inner.append(event)
            assert events == inner
            trx.finish()
    assert memory.held(EVENT_MEMORY) == 0
    builder.close()


@pytest.mark.parametrize("kind", PROVIDERS, ids=["sync", "async"])
def test_gtid_after_an_unterminated_transaction_truncates_it(
    builder: RelayBuilder, kind: type[TransactionProvider]
) -> None:
    """T72, STREAM.3/4: the partial copy is truncated (no error); the full copy follows."""
    builder.append(gtid(1), query("BEGIN"), ITEMS, rows([1], 50))
    builder.append(*transaction(1, [1, 2]))
    with kind(builder.relay, channel=CHANNEL, monitor=monitor()) as provider:
        partial, full = _take_all(provider, 2)
        assert partial.state is TransactionState.TRUNCATED and partial.error is None
        assert partial.next_event(0) is None  # nothing of a truncated copy is handed out
        assert row_ids(drain(full)) == [1, 2] and full.state is TransactionState.COMPLETE
        assert partial.gtid_text == full.gtid_text
        partial.finish()
        full.finish()
        assert not provider.is_error()
    assert builder.relay.tracker.usage(builder.files()[0]).failed is False


@pytest.mark.parametrize("kind", PROVIDERS, ids=["sync", "async"])
def test_stop_truncates_the_open_transaction_and_a_restart_applies_it_whole(
    builder: RelayBuilder, kind: type[TransactionProvider]
) -> None:
    """T71, STREAM.3: a consumer waiting for the rest is released; after the restart the
    transaction is read completely once the rest arrives."""
    builder.append(gtid(1), query("BEGIN"), ITEMS, rows([1], 50))
    provider = kind(builder.relay, channel=CHANNEL, monitor=monitor())
    provider.start()
    trx = provider.next(WAIT)
    assert trx is not None
    got: list[list[Event]] = []
    consumer = threading.Thread(target=lambda: got.append(drain(trx, timeout=WAIT * 3)))
    if kind is SyncTransactionProvider:
        assert provider.next(0.01) is None  # publishes what is written
    consumer.start()
    provider.stop()
    consumer.join(WAIT)
    assert not consumer.is_alive()
    assert trx.state is TransactionState.TRUNCATED and trx.error is None
    assert types(got[0]) in ([], [Q], [Q, TM], [Q, TM, WR])
    trx.finish()  # a stop keeps the files: the transaction is applied after the restart
    assert builder.relay.tracker.usage(trx.start.file).failed
    provider.stop()  # idempotent
    assert provider.next(0) is None
    builder.relay.tracker.reset_failures()
    builder.append(rows([2], 50), xid(1))
    with kind(builder.relay, channel=CHANNEL, monitor=monitor(), start=trx.start) as again:
        [whole] = _take_all(again, 1)
        assert row_ids(drain(whole)) == [1, 2] and whole.state is TransactionState.COMPLETE
        whole.finish()


def test_ddl_query_is_a_transaction_of_its_own(builder: RelayBuilder) -> None:
    builder.append(gtid(1), query("CREATE TABLE shop.t (a INT)"), *transaction(2))
    with SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=monitor()) as provider:
        ddl, dml = _take_all(provider)
        [event] = drain(ddl)
        assert event.query == "CREATE TABLE shop.t (a INT)"  # type: ignore[attr-defined]
        assert ddl.state is TransactionState.COMPLETE and ddl.end == dml.start
        assert types(drain(dml)) == [Q, TM, WR, XID]
        ddl.finish()
        dml.finish()


def test_control_and_ignorable_events_are_left_out(builder: RelayBuilder) -> None:
    heartbeat = Heartbeat(make_header(EventType.HEARTBEAT_V2), "source-bin.000001", 4)
    previous = PreviousGtids(make_header(EventType.PREVIOUS_GTIDS), GtidSet())
    ignorable = UnknownEvent(make_header(99, flags=EventFlag.IGNORABLE), 99, b"future")
    builder.append(heartbeat, previous, gtid(1), query("BEGIN"), ITEMS)
    builder.append(ignorable, heartbeat, rows([1]), rows([2]), xid(1), ignorable)
    with SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=monitor()) as provider:
        [trx] = _take_all(provider)
        assert types(drain(trx)) == [Q, TM, WR, WR, XID] and trx.event_count == 5
        trx.rewind()  # the segments skip the left-out events
        assert row_ids(drain(trx)) == [1, 2]
        trx.finish()


def test_clock_reset_after_a_source_format_description(builder: RelayBuilder) -> None:
    """A new source binlog: sequence numbers restart, the next transaction says so."""
    source_fde = FormatDescription.for_server("8.4.0", server_id=9)
    builder.append(*transaction(1), source_fde, *transaction(2))
    with SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=monitor()) as provider:
        first, second = _take_all(provider)
        assert (first.clock_reset, second.clock_reset) == (False, True)
        first.finish(success=False)
        second.finish(success=False)


def test_a_restarted_source_truncates_the_open_transaction(builder: RelayBuilder) -> None:
    restarted = FormatDescription.for_server("8.4.0", server_id=9, create_timestamp=1700000000)
    builder.append(gtid(1), query("BEGIN"), restarted, *transaction(1))
    with SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=monitor()) as provider:
        cut, whole = _take_all(provider)
        assert cut.state is TransactionState.TRUNCATED and whole.clock_reset
        assert row_ids(drain(whole)) == [1]
        cut.finish()
        whole.finish()


@pytest.mark.parametrize(
    "skip",
    [GtidSet.parse(f"{UUID}:1-2"), lambda g: g.gno <= 2],
    ids=["gtid set", "predicate"],
)
def test_executed_transactions_are_marked_to_skip(builder: RelayBuilder, skip: object) -> None:
    for gno in (1, 2, 3):
        builder.append(*transaction(gno, [gno], payload=10))
    memory = monitor()
    with SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=memory,
                                 skip=skip) as provider:  # type: ignore[arg-type]  # fmt: skip
        found = _take_all(provider)
        assert [t.skip for t in found] == [True, True, False]
        assert [drain(t) for t in found[:2]] == [[], []]  # nothing published
        assert found[0].state is TransactionState.COMPLETE and found[0].event_count == 0
        assert row_ids(drain(found[2])) == [3]
        for trx in found:
            trx.finish()
    assert memory.stats(EVENT_MEMORY).peak < 200


def test_reading_starts_at_the_given_position(builder: RelayBuilder) -> None:
    builder.append(*transaction(1))
    start = builder.writer.position
    builder.append(*transaction(2))
    with SyncTransactionProvider(builder.relay, channel=CHANNEL, start=start) as provider:
        [trx] = _take_all(provider)
        assert (trx.gtid.gno, trx.start) == (2, start)
        trx.finish()


def test_a_start_file_not_in_the_relay_log_is_a_read_failure(builder: RelayBuilder) -> None:
    with pytest.raises(ReplicaError) as caught:
        SyncTransactionProvider(builder.relay, channel=CHANNEL, start=("relay-bin-c1.000009", 4))
    assert caught.value.code == ErrorCode.REPLICA_RELAY_LOG_READ_FAILURE
    assert caught.value.message.startswith(PREFIX + "relay log file is not listed")


def _flip(relay: RelayLog, file: str, offset: int, *, value: bytes | None = None) -> None:
    with open(relay.path(file), "r+b") as handle:
        handle.seek(offset)
        old = handle.read(1 if value is None else len(value))
        handle.seek(offset)
        handle.write(bytes([old[0] ^ 0x55]) if value is None else value)


@pytest.mark.parametrize("damage", ["checksum", "length"])
@pytest.mark.parametrize("kind", PROVIDERS, ids=["sync", "async"])
def test_corrupt_relay_log_is_a_13121_read_failure(
    builder: RelayBuilder, kind: type[TransactionProvider], damage: str
) -> None:
    """T42, DES.TS.0060: the open transaction fails too; every later call raises again."""
    builder.append(*transaction(1))
    builder.append(gtid(2), query("BEGIN"), ITEMS)
    position = builder.writer.position
    builder.append(rows([1], 30), xid(2))
    if damage == "checksum":
        _flip(builder.relay, position.file, position.offset + 30)
        cause = f"event checksum mismatch (file '{position.file}', position {position.offset})"
    else:
        _flip(builder.relay, position.file, position.offset + 9, value=b"\xff\xff\x00\x00")
        cause = (f"corrupt event: declared length 65535 runs past the end of the written relay "
                 f"log at {builder.writer.position.offset} (file '{position.file}', position "
                 f"{position.offset})")  # fmt: skip
    with kind(builder.relay, channel=CHANNEL, monitor=monitor()) as provider:
        first = provider.next(WAIT)
        second = provider.next(WAIT)
        assert first is not None and second is not None
        with pytest.raises(ReplicaError) as caught:
            provider.next(WAIT)
        error = caught.value
        assert error.code == ErrorCode.REPLICA_RELAY_LOG_READ_FAILURE.value == 13121
        assert error.message == PREFIX + cause
        assert provider.is_error() and provider.error is error
        with pytest.raises(ReplicaError):
            provider.next(0)
        assert row_ids(drain(first)) == [1] and first.state is TransactionState.COMPLETE
        assert drain(second) == []  # a failed transaction hands out nothing more
        assert second.state is TransactionState.FAILED and second.error is error
        first.finish()
        second.finish(success=False)


UNSUPPORTED: list[tuple[str, list[Event]]] = [
    ("INTVAR", [StatementOnlyEvent(make_header(EventType.INTVAR), EventType.INTVAR, bytes(9))]),
    ("RAND", [StatementOnlyEvent(make_header(EventType.RAND), EventType.RAND, bytes(16))]),
    (
        "USER_VAR",
        [
            StatementOnlyEvent(
                make_header(EventType.USER_VAR), EventType.USER_VAR, b"\x01\x00\x00\x00a\x01"
            )
        ],
    ),  # fmt: skip
    ("QUERY", [query("INSERT INTO shop.items VALUES (1)")]),
    ("INCIDENT", [Incident(make_header(EventType.INCIDENT), 1, "LOST_EVENTS")]),
]


@pytest.mark.parametrize(("name", "events"), UNSUPPORTED, ids=[n for n, _ in UNSUPPORTED])
def test_unsupported_event_fails_with_the_unexpected_event_text(
    builder: RelayBuilder, name: str, events: list[Event]
) -> None:
    """T43, DES.TS.0080, ERR.11."""
    builder.append(gtid(1), query("BEGIN"))
    position = builder.writer.position
    builder.append(*events, xid(1))
    with SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=monitor()) as provider:
        trx = provider.next(WAIT)
        assert trx is not None
        with pytest.raises(ReplicaError) as caught:
            provider.next(WAIT)
        assert caught.value.message == (
            f"{PREFIX}Unexpected event in the Change stream applier reader: {name} "
            f"(file '{position.file}', position {position.offset})"
        )
        assert trx.state is TransactionState.FAILED
        trx.finish(success=False)


@pytest.mark.parametrize("cut", [False, True], ids=["rotated", "cut_before_its_rotate"])
def test_a_file_that_ends_inside_a_transaction_without_its_rotate_truncates_it(
    builder: RelayBuilder, cut: bool
) -> None:
    """13121, nothing applied twice or half: a transaction the writer's rotation split over
    two files is read whole; the same file cut short at an event boundary before its Rotate
    (events lost in between) truncates the open transaction, and the next file's rest of it
    is an unexpected event, not more rows of that transaction."""
    builder.append(*transaction(1))
    builder.append(gtid(2), query("BEGIN"), ITEMS, rows([1], 30))
    end = builder.writer.position
    builder.rotate()
    builder.append(rows([2], 30), xid(2))
    if cut:
        path = builder.relay.index.path(end.file)
        path.write_bytes(path.read_bytes()[: end.offset])
    with SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=monitor()) as provider:
        first, second = provider.next(WAIT), provider.next(WAIT)
        assert first is not None and second is not None
        assert row_ids(drain(first)) == [1]
        if not cut:
            assert row_ids(drain(second)) == [1, 2]
            assert second.state is TransactionState.COMPLETE
            return
        with pytest.raises(ReplicaError) as caught:
            provider.next(WAIT)
        assert caught.value.code == 13121 and "WRITE_ROWS" in caught.value.message
        assert second.state is TransactionState.TRUNCATED


def test_row_events_without_a_gtid_are_unexpected(builder: RelayBuilder) -> None:
    builder.append(query("BEGIN"), ITEMS, rows([1]), xid(1))
    with SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=monitor()) as provider:
        with pytest.raises(ReplicaError, match="applier reader: QUERY"):
            provider.next(WAIT)


def _relay_of_fixture(tmp_path: Path, name: str) -> RelayLog:
    directory = relay_log_directory(tmp_path / "data", CHANNEL)
    directory.mkdir(parents=True)
    shutil.copyfile(FIXTURES / name, directory / "relay-bin-c1.000001")
    (directory / "relay-bin-c1.index").write_text("relay-bin-c1.000001\n")
    relay = RelayLog.for_channel(tmp_path / "data", CHANNEL)
    relay.open()
    return relay


@pytest.mark.parametrize(
    ("name", "shapes"),
    [
        ("binlog_transaction_with_GTID_TAG.000001", [[Q, TM, WR, XID]]),
        ("transaction_compression.000001", [[Q, TM, WR, XID]]),
        ("mysql-bin.compressed", [[Q, TM, EventType.UPDATE_ROWS, XID]]),
        ("rpl_atomic_ddl_rollback_full.000001", [[Q]] * 4),
    ],
)
def test_real_mysql_binlogs(tmp_path: Path, name: str, shapes: list[list[int]]) -> None:
    relay = _relay_of_fixture(tmp_path, name)
    with SyncTransactionProvider(relay, channel=CHANNEL, monitor=monitor()) as provider:
        found = _take_all(provider)
        assert [types(drain(t)) for t in found] == shapes
        assert all(t.state is TransactionState.COMPLETE for t in found)
        for trx in found:
            trx.finish()
    relay.close()


def test_real_binlog_the_applier_refuses(tmp_path: Path) -> None:
    """A statement-based INSERT inside a transaction (T43 on a real MySQL binlog)."""
    relay = _relay_of_fixture(tmp_path, "binlog_transaction_with_GTID.000001")
    with SyncTransactionProvider(relay, channel=CHANNEL, monitor=monitor()) as provider:
        ddl = provider.next(WAIT)
        insert = provider.next(WAIT)
        assert ddl is not None and insert is not None
        with pytest.raises(ReplicaError, match=r"applier reader: QUERY \(file '.*', position 424"):
            provider.next(WAIT)
        assert ddl.state is TransactionState.COMPLETE and insert.state is TransactionState.FAILED
        ddl.finish()
        insert.finish(success=False)
    relay.close()


def test_real_binlog_with_an_unknown_ignorable_event(tmp_path: Path) -> None:
    """Aurora's event type 100 (flagged ignorable) inside a transaction is left out; the file
    ends before the transaction does."""
    relay = _relay_of_fixture(tmp_path, "mysql-bin.aurora-padding")
    with SyncTransactionProvider(relay, channel=CHANNEL, monitor=monitor()) as provider:
        [trx] = _take_all(provider)
        assert trx.gtid_text == "ANONYMOUS" and trx.state is TransactionState.OPEN
        begin = trx.next_event(WAIT)
        assert begin is not None and types([begin]) == [Q]
        with pytest.raises(TimeoutError):
            trx.next_event(0)
    assert state(trx) is TransactionState.TRUNCATED
    trx.finish()
    relay.close()


def test_async_provider_stop_joins_its_thread_and_returns_untaken_transactions(
    builder: RelayBuilder,
) -> None:
    for gno in (1, 2, 3):
        builder.append(*transaction(gno))
    builder.append(gtid(4), query("BEGIN"))
    provider = AsyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=monitor())
    with pytest.raises(RuntimeError, match="not started"):
        provider.next(0)
    provider.start()
    assert provider.thread.name == f"csa-provider-{CHANNEL}" and provider.thread.is_alive()
    taken = provider.next(WAIT)
    assert taken is not None
    provider.stop()
    assert not provider.thread.is_alive() and provider.is_stopped()
    provider.stop()
    provider.start()  # after stop: nothing happens
    assert provider.next(0) is None and not provider.thread.is_alive()
    taken.finish()
    file = builder.files()[0]
    assert builder.relay.tracker.usage(file).references == 0  # nobody holds the file
    assert builder.relay.tracker.usage(file).failed  # untaken ones were not applied


def test_stop_while_the_provider_waits_for_memory(builder: RelayBuilder) -> None:
    builder.append(*transaction(1, [1], payload=900))
    builder.append(*transaction(2, [2], payload=900))
    spy = SpyMonitor(1024)
    provider = AsyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=spy)
    provider.start()
    first = provider.next(WAIT)
    second = provider.next(WAIT)
    assert first is not None and second is not None
    assert spy.blocked.wait(WAIT)  # the second one's events wait for the first one's memory
    provider.stop()
    assert second.state is TransactionState.TRUNCATED
    assert first.state is TransactionState.COMPLETE
    first.finish(success=False)
    second.finish()
    assert spy.held(EVENT_MEMORY) == 0


def test_sync_next_returns_when_another_thread_stops_the_provider(builder: RelayBuilder) -> None:
    provider = SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=monitor())
    result: list[FetchableTransaction | None] = []
    reading = threading.Thread(target=lambda: result.append(provider.next(None)))
    reading.start()
    provider.stop()
    reading.join(WAIT)
    assert not reading.is_alive() and result == [None]


def test_a_file_a_stopped_run_left_unapplied_survives_a_restart_stopped_inside_it(
    builder: RelayBuilder,
) -> None:
    """WL10500.PURGE.2/3 across restarts (a STOP/START storm found it): run 1 reads past the
    end of the first file, then stops before its transactions commit; run 2 stops while
    reading inside that file; the file must still be there for run 3, which applies it."""
    builder.append(*transaction(1, [1]), *transaction(2, [2]))
    first_file = builder.files()[0]
    builder.rotate()
    builder.append(*transaction(3, [3]))
    with SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=monitor()) as provider:
        one, two, three = _take_all(provider, 3)  # the reader moved past the first file
        for trx in (one, two, three):
            drain(trx)
            trx.finish(success=False)  # STOP before they commit
    assert builder.relay.tracker.usage(first_file).failed
    builder.relay.tracker.reset_failures()  # run 2 starts over from the first file
    provider = SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=monitor())
    again = provider.next(WAIT)
    assert again is not None and again.gtid.gno == 1
    drain(again)
    again.finish()  # transaction 1 commits, then STOP inside the first file
    provider.stop()
    assert first_file in builder.files()
    builder.relay.tracker.reset_failures()  # run 3 applies transaction 2 from that file
    with SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=monitor()) as provider:
        gnos = []
        for trx in _take_all(provider, 3):
            gnos.append(trx.gtid.gno)
            drain(trx)
            trx.finish()
    assert gnos == [1, 2, 3]
    assert builder.files() == [builder.files()[-1]]  # then the applied file is purged


def test_a_run_starting_in_a_file_that_opens_with_a_transactions_end_skips_that_end(
    builder: RelayBuilder,
) -> None:
    """A relay log file rotates by size inside a transaction (max_relay_log_size, as MySQL's
    may); once that transaction is durable the file holding its start is purged, and the
    file left opens with the rest of it. The next run (START REPLICA, a restart) reads from
    that file: the rest of a transaction applied already is skipped up to the next GTID,
    not refused with 13121 "Unexpected event" (found with STOP and START REPLICA after a
    50M-row load; WL10500.PURGE.1)."""
    builder.append(*transaction(1, [1]))
    builder.append(gtid(2), query("BEGIN"), ITEMS, rows([2]))  # transaction 2 begins
    builder.rotate()  # past max_relay_log_size
    builder.append(rows([3]), xid(2), *transaction(3, [4]))
    with SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=monitor()) as provider:
        taken = _take_all(provider, 3)
        assert [row_ids(drain(trx)) for trx in taken] == [[1], [2, 3], [4]]
        for trx in taken[:2]:
            trx.finish()  # transaction 3 is not applied when the run stops
    assert len(builder.files()) == 1  # the file with transaction 2's start is purged
    builder.relay.tracker.reset_failures()
    with SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=monitor()) as provider:
        (again,) = _take_all(provider, 1)
        assert again.gtid.gno == 3 and row_ids(drain(again)) == [4]
        again.finish()


def test_only_one_transactions_end_is_skipped_at_the_start_of_a_later_file(
    builder: RelayBuilder,
) -> None:
    """What a run skips at the start of a later file ends with the first transaction's end:
    a stream without GTIDs is still refused at its next transaction."""
    builder.append(*transaction(1, [1]))
    builder.rotate()
    builder.append(rows([2]), xid(2), query("BEGIN"), ITEMS, rows([3]), xid(3))
    with SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=monitor()) as provider:
        one = provider.next(WAIT)
        assert one is not None and one.gtid.gno == 1
        drain(one)
        one.finish()
        with pytest.raises(ReplicaError, match="applier reader: WRITE_ROWS"):
            provider.next(WAIT)  # read on: the events after transaction 1 have no GTID
    assert len(builder.files()) == 1  # the first file is purged
    builder.relay.tracker.reset_failures()
    with SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=monitor()) as provider:
        with pytest.raises(ReplicaError, match="applier reader: QUERY"):
            provider.next(WAIT)  # the end of "transaction 2" skipped; BEGIN has no GTID
