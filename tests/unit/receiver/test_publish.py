"""The receiver counts a transaction as received only once its events are published: a relay
log write that fails on the way (a full disk) leaves the received set as it was, so the next
dump asks for those transactions again (nothing is lost). A batch is appended in one call;
a relay log file the writer starts in the middle of it names in its Previous_gtids exactly
the transactions whose last event lies in the files before."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.codecs.registry import encode_event, remember_table_map
from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.events import FormatDescription
from spark_replica.applier_core.binlog.file import read_raw_events
from spark_replica.applier_core.binlog.relaylog import RelayCoordinate, RelayLogWriter
from spark_replica.applier_core.channels.components import ThreadContext
from spark_replica.applier_core.channels.config import ChannelConfig
from spark_replica.applier_core.channels.relay_logs import RelayLogs
from spark_replica.applier_core.channels.status import StatusBoard
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.progress import ExecutedGtids
from spark_replica.applier_core.receiver.retrieved import previous_gtids, retrieved_gtids
from spark_replica.applier_core.receiver.thread import Receiver
from spark_replica.applier_core.settings import SystemVariables
from tests.unit.provider.helpers import UUID, transaction


class FullDisk:
    """A writer whose every append fails: the disk is full."""

    def __init__(self) -> None:
        self.calls = 0

    def append_many(self, events: Sequence[bytes], *, flush: bool = True) -> RelayCoordinate:
        self.calls += 1
        raise OSError(28, "No space left on device")


@pytest.fixture
def receiver(tmp_path: Path) -> Receiver:
    settings = SystemVariables({})
    settings.set_internal("server_id", 2)
    context = ThreadContext(
        config=ChannelConfig("c1"), status=StatusBoard(), settings=settings,
        data_dir=str(tmp_path), exited=lambda error: None, executed=ExecutedGtids(),
        relay_logs=RelayLogs(tmp_path),
    )  # fmt: skip
    return Receiver(context)


def _received(receiver: Receiver, *transactions: list[bytes]) -> list[bytes]:
    """The pending batch of ``transactions`` (each a list of encoded events), noted as the
    receiver notes what it received whole: each GTID with the batch length at its end."""
    pending: list[bytes] = []
    for gno, events in enumerate(transactions, 1):
        pending.extend(events)
        receiver._ended_since.append(((UUID, gno), len(pending)))
    return pending


def _encoded(gno: int, rows: int) -> list[bytes]:
    table_maps: dict[int, object] = {}
    encoded = []
    for event in transaction(gno, ids=range(1, rows + 1)):
        encoded.append(encode_event(event, checksum=True, log_pos=0, table_maps=table_maps))
        remember_table_map(event, table_maps)
    return encoded


def _set(*gnos: int) -> GtidSet:
    result = GtidSet()
    for gno in gnos:
        result.add(UUID, "", gno)
    return result


def test_a_failed_publish_counts_nothing_as_received(receiver: Receiver) -> None:
    writer = FullDisk()
    pending = _received(receiver, _encoded(1, 1), _encoded(2, 1))
    with pytest.raises(OSError):
        receiver._publish(writer, pending)  # type: ignore[arg-type]
    assert writer.calls == 1
    assert receiver.received == GtidSet()
    assert receiver.context.status.snapshot().received_transaction_set == ""


def test_files_started_inside_a_batch_name_the_transactions_written_whole_before_them(
    receiver: Receiver,
) -> None:
    """RCV.* Retrieved_Gtid_Set after a restart: with a tiny max_relay_log_size, one batch of
    five transactions spreads over many files, some starting inside a transaction; each
    file's Previous_gtids is exactly what ended in the files before."""
    log = receiver.relay_log  # opened by RelayLogs.get
    writer = RelayLogWriter(log, make_header=receiver._relay_header,
                            make_rotate=receiver._rotate_event, max_size=400)  # fmt: skip
    receiver._writer = writer
    writer.open()
    batch = [_encoded(gno, rows) for gno, rows in enumerate([1, 6, 1, 12, 2], 1)]
    pending = _received(receiver, *batch)
    receiver._publish(writer, pending)
    assert receiver.received == _set(1, 2, 3, 4, 5)
    assert pending == []

    ends: list[int] = []  # the batch index of each transaction's last event
    for events in batch:
        ends.append((ends[-1] if ends else 0) + len(events))
    total = sum(len(events) for events in batch)
    paths = [log.index.path(name) for name in log.files()]
    assert len(paths) > len(batch)
    written = 0  # batch events in the files before the one looked at
    for path in paths:
        expected = _set(*(gno for gno, end in enumerate(ends, 1) if end <= written))
        assert previous_gtids(path) == expected, path.name
        written += _batch_events_in(path)
    assert written == total
    writer.close()
    log.close()
    log.open()
    assert retrieved_gtids(log) == _set(1, 2, 3, 4, 5)
    log.close()


def _batch_events_in(path: Path) -> int:
    """How many of the batch's events a relay log file holds: all but its header events
    and the ROTATE that closes it."""
    own = (EventType.FORMAT_DESCRIPTION, EventType.PREVIOUS_GTIDS, EventType.ROTATE)
    return sum(1 for _start, _end, event in read_raw_events(path) if event[4] not in own)


class Dump:
    """A source connection in a dump: ``events`` as its packets, then the dump's end; what
    is left of them counts as buffered."""

    def __init__(self, events: list[bytes]) -> None:
        self.packets = [b"\x00" + event for event in events] + [b"\xfe\x00\x00\x00\x00"]

    @property
    def stream(self) -> Dump:
        return self

    @property
    def buffered(self) -> int:
        return sum(map(len, self.packets[:-1]))

    def read_packet(self) -> bytes:
        return self.packets.pop(0)


def _timed(gno: int, original: float, immediate: float) -> list[bytes]:
    """Transaction ``gno`` with the commit times of its GTID event (epoch seconds)."""
    first, *rest = transaction(gno)
    timed = dataclasses.replace(first, original_commit_timestamp=int(original * 1e6),
                                immediate_commit_timestamp=int(immediate * 1e6))  # fmt: skip
    table_maps: dict[int, object] = {}
    encoded = []
    for event in (timed, *rest):
        encoded.append(encode_event(event, checksum=True, log_pos=0, table_maps=table_maps))
        remember_table_map(event, table_maps)
    return encoded


def test_queued_transactions_are_shown_once_published(receiver: Receiver) -> None:
    """RCV.* performance_schema.replication_connection_status: LAST_QUEUED_TRANSACTION with
    its commit times and queueing start and end, QUEUEING_TRANSACTION for one cut short."""
    log = receiver.relay_log
    writer = RelayLogWriter(log, make_header=receiver._relay_header,
                            make_rotate=receiver._rotate_event, max_size=0)  # fmt: skip
    receiver._writer = writer
    writer.open()
    first = _timed(1, 1_700_000_000.25, 1_700_000_001.5)
    second = _timed(2, 1_700_000_002.0, 1_700_000_003.0)[:-1]  # its Xid not sent yet
    source = encode_event(FormatDescription.for_server("8.4.0"), checksum=True, log_pos=0)
    before = time.time()
    receiver._copy(Dump([source, *first, *second]), writer)  # type: ignore[arg-type]
    status = receiver.context.status.snapshot()
    assert status.received_transaction_set == f"{UUID}:1"
    last, queueing = status.last_queued, status.queueing
    assert (last.gtid, last.original_commit, last.immediate_commit) == (
        f"{UUID}:1", 1_700_000_000.25, 1_700_000_001.5,
    )  # fmt: skip
    assert before <= last.start <= last.end <= time.time()
    assert (queueing.gtid, queueing.original_commit, queueing.immediate_commit) == (
        f"{UUID}:2", 1_700_000_002.0, 1_700_000_003.0,
    )  # fmt: skip
    assert last.end <= queueing.start and queueing.end == 0.0
    assert [event[4] for event in _written(log)][-1] == EventType.WRITE_ROWS
    writer.close()
    log.close()


def _written(log: object) -> list[bytes]:
    paths = [log.index.path(name) for name in log.files()]  # type: ignore[attr-defined]
    return [event for path in paths for _start, _end, event in read_raw_events(path)]
