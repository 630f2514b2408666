"""FetchableTransaction: streaming, cached and re-read events, retries, event memory, purge
(STREAM.1/2/5, FT.1-3, RD.5, RM.2/3, PURGE.1-3; T73-T77)."""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterator

import pytest

from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.events import Event, Query
from spark_replica.applier_core.binlog.relaylog import RelayLog
from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.provider import (
    EVENT_MEMORY,
    AsyncTransactionProvider,
    FetchableTransaction,
    ResourceMonitor,
    SyncTransactionProvider,
    TransactionState,
)
from tests.unit.provider.helpers import (
    CHANNEL,
    ITEMS,
    WAIT,
    RelayBuilder,
    SpyMonitor,
    compressed,
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

Q, TM, WR, XID = EventType.QUERY, EventType.TABLE_MAP, EventType.WRITE_ROWS, EventType.XID


def read_all(
    relay: RelayLog, memory: ResourceMonitor | None = None, *, cache_threshold: int = 512
) -> tuple[SyncTransactionProvider, list[FetchableTransaction]]:
    """Every transaction of ``relay``, read with a synchronous provider (left running)."""
    provider = SyncTransactionProvider(
        relay, channel=CHANNEL, monitor=memory or monitor(), cache_threshold=cache_threshold
    )
    found = []
    while (trx := provider.next(0.05)) is not None:
        found.append(trx)
    return provider, found


@pytest.fixture
def memory() -> ResourceMonitor:
    return monitor()


def test_small_transaction_keeps_its_decoded_events_for_a_retry(
    builder: RelayBuilder, memory: ResourceMonitor
) -> None:
    start = builder.writer.position
    end = builder.append(*transaction(1, [1, 2], last_committed=0, sequence_number=1))
    provider, [trx] = read_all(builder.relay, memory)
    assert (trx.gtid_text, trx.last_committed, trx.sequence_number) == (f"{gtid(1).uuid}:1", 0, 1)
    assert (trx.start, trx.end, trx.state) == (start, end, TransactionState.COMPLETE)
    assert trx.cached and trx.size <= 512
    first = drain(trx)
    assert types(first) == [Q, TM, WR, WR, XID] and row_ids(first) == [1, 2]
    assert trx.next_event(0) is None  # stays terminal
    trx.rewind()
    again = drain(trx)
    assert all(a is b for a, b in zip(first, again, strict=True))  # not decoded again
    assert memory.stats(EVENT_MEMORY).forced == 0
    trx.finish()
    assert memory.held(EVENT_MEMORY) == 0
    provider.stop()


def test_large_transaction_reads_its_events_again_from_the_relay_log(
    builder: RelayBuilder, memory: ResourceMonitor
) -> None:
    builder.append(*transaction(2, [1, 2, 3], payload=300))
    provider, [trx] = read_all(builder.relay, memory)
    assert not trx.cached and trx.size > 512
    first = drain(trx)
    assert row_ids(first) == [1, 2, 3]
    assert memory.held(EVENT_MEMORY) == 0  # each event released after use
    trx.rewind()
    again = drain(trx)
    assert again == first and not any(a is b for a, b in zip(first, again, strict=True))
    assert memory.stats(EVENT_MEMORY).forced == 5  # BEGIN, Table_map, 3 rows; the Xid is free
    trx.finish()
    assert memory.held(EVENT_MEMORY) == 0
    provider.stop()


def test_rewind_midway_reads_again_only_the_events_already_dropped(
    builder: RelayBuilder, memory: ResourceMonitor
) -> None:
    builder.append(gtid(3), query("BEGIN"), ITEMS, rows([1], 200))
    provider = SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=memory)
    trx = provider.next(WAIT)
    assert trx is not None
    assert provider.next(0.01) is None  # publishes BEGIN, the Table_map, the first rows
    taken = [trx.next_event(WAIT) for _ in range(3)]
    builder.append(rows([2], 200), rows([3], 200), xid(3))
    assert provider.next(0.01) is None
    trx.rewind()
    events = drain(trx)
    assert events[:3] == taken and types(events) == [Q, TM, WR, WR, WR, XID]
    assert row_ids(events) == [1, 2, 3]
    assert memory.stats(EVENT_MEMORY).forced == 3  # only the three taken were dropped
    trx.rewind()  # a second retry, after everything was dropped
    assert drain(trx) == events
    assert trx.rewinds == 2 and memory.stats(EVENT_MEMORY).forced == 3 + 5
    trx.finish()
    assert memory.held(EVENT_MEMORY) == 0
    provider.stop()


def test_a_transaction_growing_past_the_threshold_stops_caching(
    builder: RelayBuilder, memory: ResourceMonitor
) -> None:
    builder.append(gtid(4), query("BEGIN"), ITEMS)
    provider = SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=memory)
    trx = provider.next(WAIT)
    assert trx is not None
    cached_at_first = trx.cached
    assert cached_at_first
    assert provider.next(0.01) is None  # publishes BEGIN and the Table_map
    head = [trx.next_event(WAIT), trx.next_event(WAIT)]
    builder.append(rows([1], payload=1000), xid(4))
    assert provider.next(0.01) is None
    assert trx.size > 512 and not trx.cached
    rest = drain(trx)
    trx.rewind()
    assert drain(trx) == [*head, *rest]
    assert memory.stats(EVENT_MEMORY).forced == 3  # BEGIN, Table_map, rows: read again
    trx.finish()
    provider.stop()


def test_compressed_transaction_hands_out_its_inner_events(
    builder: RelayBuilder, memory: ResourceMonitor
) -> None:
    builder.append(*compressed(5, [5, 6]))
    provider, [trx] = read_all(builder.relay, memory, cache_threshold=16)
    assert trx.event_count == 1 and not trx.cached
    events = drain(trx)
    assert types(events) == [Q, TM, WR, WR, XID] and row_ids(events) == [5, 6]
    trx.rewind()
    assert drain(trx) == events  # decompressed again from the relay log
    trx.finish()
    assert memory.held(EVENT_MEMORY) == 0
    provider.stop()


def test_transaction_spanning_two_files_commits_once_with_every_row(
    builder: RelayBuilder, memory: ResourceMonitor
) -> None:
    """T73, STREAM.2: the Rotate and the new file's Format_description are left out; the
    events of both files are read again on a retry; both files are held until the end."""
    builder.append(gtid(6), query("BEGIN"), ITEMS, rows([1], 400), rows([2], 400))
    second = builder.rotate()
    builder.append(rows([3], 400), xid(6))
    f1, f2 = builder.files()
    assert second == f2
    provider, [trx] = read_all(builder.relay, memory)
    assert (trx.start.file, trx.end and trx.end.file) == (f1, f2)
    events = drain(trx)
    assert types(events) == [Q, TM, WR, WR, WR, XID] and row_ids(events) == [1, 2, 3]
    trx.rewind()
    assert drain(trx) == events
    assert builder.relay.tracker.usage(f1).references == 1  # the reader left f1: trx holds it
    assert builder.relay.purge() == []
    trx.finish()
    assert builder.files() == [f2]  # purged as soon as the transaction finished
    provider.stop()


def test_retry_of_a_damaged_file_fails_the_transaction_with_13121(
    builder: RelayBuilder, memory: ResourceMonitor
) -> None:
    end = builder.append(*transaction(7, [1, 2], payload=300))
    provider, [trx] = read_all(builder.relay, memory)
    drain(trx)
    path = builder.relay.path(end.file)
    with open(path, "r+b") as handle:  # flip a byte inside the last rows event
        handle.seek(end.offset - 60)
        byte = handle.read(1)
        handle.seek(end.offset - 60)
        handle.write(bytes([byte[0] ^ 0xFF]))
    trx.rewind()
    assert types(drain(trx)) == [Q, TM, WR]
    assert trx.state is TransactionState.FAILED and trx.error is not None
    assert trx.error.code == ErrorCode.REPLICA_RELAY_LOG_READ_FAILURE
    assert trx.error.message.startswith(
        f"Replica SQL for channel '{CHANNEL}': Relay log read failure: event checksum mismatch"
    )
    with pytest.raises(RuntimeError):
        trx.rewind()
    trx.finish(success=False)
    assert memory.held(EVENT_MEMORY) == 0
    provider.stop()  # the reader lets go of the file: it stays, as failed
    assert builder.relay.tracker.usage(end.file).failed


class _Writer:
    """Writes the event lists it is given, in its own thread (the receiver's role)."""

    def __init__(self, builder: RelayBuilder) -> None:
        self._builder = builder
        self._todo: queue.Queue[list[Event] | None] = queue.Queue()
        self.written = threading.Semaphore(0)
        self._thread = threading.Thread(target=self._run, name="test-relay-writer")
        self._thread.start()

    def write(self, *events: Event) -> None:
        self._todo.put(list(events))

    def _run(self) -> None:
        while (events := self._todo.get()) is not None:
            self._builder.append(*events)
            self.written.release()

    def close(self) -> None:
        self._todo.put(None)
        self._thread.join(WAIT)


@pytest.fixture
def writer(builder: RelayBuilder) -> Iterator[_Writer]:
    running = _Writer(builder)
    yield running
    running.close()


def test_streaming_a_consumer_gets_each_event_as_it_is_written(
    builder: RelayBuilder, writer: _Writer
) -> None:
    """STREAM.1: the transaction is handed out right after its GTID event; each event
    reaches the consumer while the next one is not even written."""
    script: list[Event] = [query("BEGIN"), ITEMS]
    script += [rows([n], payload=100) for n in range(1, 6)] + [xid(8)]
    with AsyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=monitor()) as provider:
        writer.write(gtid(8))
        trx = provider.next(WAIT)
        assert trx is not None and trx.state is TransactionState.OPEN
        received: list[Event] = []
        for expected in script:
            with pytest.raises(TimeoutError):
                trx.next_event(0)  # the event does not exist yet
            writer.write(expected)
            event = trx.next_event(WAIT)
            assert event is not None and event.header.type_code == expected.header.type_code
            received.append(event)
        assert trx.next_event(WAIT) is None and state(trx) is TransactionState.COMPLETE
        assert row_ids(received) == [1, 2, 3, 4, 5]
        trx.finish()


def test_event_memory_never_exceeds_the_limit_during_a_burst(builder: RelayBuilder) -> None:
    """T76, RM.3: the provider waits for memory; consumers release each event after use."""
    limit = 8 * 1024
    count = 30
    for gno in range(1, count + 1):
        builder.append(*transaction(gno, [gno * 10, gno * 10 + 1, gno * 10 + 2], payload=700))
    spy = SpyMonitor(limit)
    todo: queue.Queue[FetchableTransaction | None] = queue.Queue()
    results: dict[str, list[int]] = {}

    def consume() -> None:
        assert spy.blocked.wait(WAIT)  # start once the provider had to wait for memory
        while (trx := todo.get()) is not None:
            results[trx.gtid_text] = row_ids(drain(trx))
            assert trx.state is TransactionState.COMPLETE
            trx.finish()

    workers = [threading.Thread(target=consume, name=f"test-worker-{n}") for n in range(2)]
    for worker in workers:
        worker.start()
    with AsyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=spy) as provider:
        for _ in range(count):
            trx = provider.next(WAIT)
            assert trx is not None
            todo.put(trx)
        for _ in workers:
            todo.put(None)
        for worker in workers:
            worker.join(WAIT)
    stats = spy.stats(EVENT_MEMORY)
    assert stats.waits >= 1 and stats.peak <= limit and stats.held == 0
    assert stats.oversized == 0
    assert results == {
        f"{gtid(g).uuid}:{g}": [g * 10, g * 10 + 1, g * 10 + 2] for g in range(1, count + 1)
    }


def test_event_larger_than_the_limit_goes_through_alone(builder: RelayBuilder) -> None:
    """T77: it waits until nothing else is held, then takes more than the whole limit."""
    limit = 1024
    builder.append(*transaction(1, [1], payload=600))
    builder.append(*transaction(2, [2], payload=5000))
    spy = SpyMonitor(limit)
    provider = SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=spy)
    first, second = provider.next(WAIT), provider.next(WAIT)
    assert first is not None and second is not None
    held_by_first = spy.held(EVENT_MEMORY)
    reading = threading.Thread(target=provider.next, args=(0.01,), name="test-provider")
    reading.start()
    assert spy.blocked.wait(WAIT)
    assert row_ids(drain(first)) == [1]
    reading.join(WAIT)
    assert not reading.is_alive()
    events = drain(second)
    assert row_ids(events) == [2] and second.state is TransactionState.COMPLETE
    stats = spy.stats(EVENT_MEMORY)
    assert stats.oversized == 1 and stats.peak > limit >= held_by_first
    assert stats.held == 0
    first.finish()
    second.finish()
    provider.stop()


def test_cached_events_are_not_counted_once_used(builder: RelayBuilder) -> None:
    """A cached transaction keeps its used events for a retry without holding their memory,
    so its own later events never wait for it (here the limit is below the threshold)."""
    spy = SpyMonitor(100)
    builder.append(gtid(1), query("BEGIN"), ITEMS)
    provider = SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=spy)
    trx = provider.next(WAIT)
    assert trx is not None
    assert provider.next(0.01) is None  # BEGIN and the Table_map: 99 of the 100 bytes
    head = [e for e in (trx.next_event(WAIT), trx.next_event(WAIT)) if e is not None]
    with pytest.raises(TimeoutError):
        trx.next_event(0)  # taking nothing more releases what was used
    assert spy.held(EVENT_MEMORY) == 0
    builder.append(rows([1]), xid(1))
    reading = threading.Thread(target=provider.next, args=(0.01,), name="test-provider")
    reading.start()
    reading.join(WAIT)
    assert not reading.is_alive() and not spy.blocked.is_set()
    rest = drain(trx)
    assert trx.cached and types([*head, *rest]) == [Q, TM, WR, XID]
    trx.rewind()
    assert all(a is b for a, b in zip([*head, *rest], drain(trx), strict=True))
    trx.finish()
    assert spy.held(EVENT_MEMORY) == 0
    provider.stop()


def test_finished_transactions_let_their_applied_files_be_purged(builder: RelayBuilder) -> None:
    """T74, PURGE.2/3: F1..F3 fully applied are deleted, the active F4 stays."""
    for gno in range(1, 4):
        builder.append(*transaction(gno))
        builder.rotate()
    builder.append(*transaction(4))
    files = builder.files()
    provider, found = read_all(builder.relay)
    assert len(found) == 4 and len(files) == 4
    assert builder.files() == files  # every file is still held by its transaction
    for trx in found:
        assert drain(trx)
        trx.finish()
    assert builder.files() == files[3:]
    assert [builder.relay.path(f).exists() for f in files] == [False, False, False, True]
    provider.stop()


def test_failed_transaction_keeps_its_file_and_every_later_one(builder: RelayBuilder) -> None:
    """T75, DES.RS.0060: F1 holds a failed transaction, F2 is applied: nothing is purged."""
    builder.append(*transaction(1))
    builder.rotate()
    builder.append(*transaction(2))
    builder.rotate()
    files = builder.files()
    provider, [failed, applied] = read_all(builder.relay)
    failed.finish(success=False)
    applied.finish()
    assert builder.files() == files and builder.relay.purge() == []
    assert builder.relay.tracker.usage(files[0]).failed
    assert all(builder.relay.path(f).exists() for f in files)
    provider.stop()


def test_open_transaction_cannot_be_finished_as_applied(builder: RelayBuilder) -> None:
    builder.append(gtid(1), query("BEGIN"))
    provider = SyncTransactionProvider(builder.relay, channel=CHANNEL, monitor=monitor())
    trx = provider.next(WAIT)
    assert trx is not None
    with pytest.raises(RuntimeError, match="still open"):
        trx.finish()
    begin = trx.next_event(0.01)  # read ahead with the GTID event: it was in the relay log
    assert isinstance(begin, Query) and begin.is_begin
    with pytest.raises(TimeoutError):
        trx.next_event(0.01)
    trx.finish(success=False)  # abandoned: later events are not kept
    builder.append(rows([1], 100), xid(1))
    assert provider.next(0.01) is None
    assert trx.state is TransactionState.COMPLETE and trx.event_count == 1  # BEGIN only
    assert provider.monitor.held(EVENT_MEMORY) == 0
    with pytest.raises(RuntimeError, match="finished"):
        trx.next_event(0)
    provider.stop()
    assert builder.relay.tracker.usage(trx.start.file).failed


def test_a_retry_closes_the_files_it_opened(builder: RelayBuilder) -> None:
    """A retry opens its own file descriptors and closes them at the end."""
    builder.append(*transaction(1, [1, 2], payload=400))
    provider, [trx] = read_all(builder.relay)
    drain(trx)
    before = len(os.listdir("/proc/self/fd"))
    trx.rewind()
    drain(trx)
    trx.finish()
    assert len(os.listdir("/proc/self/fd")) == before
    provider.stop()
