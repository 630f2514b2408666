"""Retrieved_Gtid_Set read back from a relay log after a restart (``receiver/retrieved.py``):
the last file's Previous_gtids plus the transactions written whole after it, a transaction
cut by a rotation counted once it ends, one cut by a crash not counted."""

from __future__ import annotations

from pathlib import Path

from spark_replica.applier_core.binlog.codecs.registry import encode_event_at, remember_table_map
from spark_replica.applier_core.binlog.constants import EventFlag, EventType
from spark_replica.applier_core.binlog.events import Event, PreviousGtids, Rotate, make_header
from spark_replica.applier_core.binlog.relaylog import RelayLog, RelayLogWriter
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.receiver.retrieved import retrieved_gtids
from tests.unit.provider.helpers import CHANNEL, ITEMS, RELAY_FDE, UUID, query, transaction


class Relay:
    """A relay log whose files start as the receiver's do: Format_description, then
    Previous_gtids with ``received`` (what the writer was told was received so far)."""

    def __init__(self, datadir: Path, *, previous_gtids: bool = True) -> None:
        self.datadir = datadir
        self.received = GtidSet()
        self.previous_gtids = previous_gtids
        self.log = RelayLog.for_channel(datadir, CHANNEL)
        self.log.open()
        self.table_maps: dict[int, object] = {ITEMS.table_id: ITEMS}
        self.writer = RelayLogWriter(self.log, make_header=self._header,
                                     make_rotate=self._rotate)  # fmt: skip
        self.writer.open()

    def _header(self) -> bytes:
        data = encode_event_at(RELAY_FDE, 4, checksum=True)
        if not self.previous_gtids:
            return data
        previous = PreviousGtids(make_header(EventType.PREVIOUS_GTIDS), self.received.copy())
        return data + encode_event_at(previous, 4 + len(data), checksum=True)

    def _rotate(self, next_name: str) -> bytes:
        rotate = Rotate(make_header(EventType.ROTATE, flags=EventFlag.RELAY_LOG), 4, next_name)
        return encode_event_at(rotate, self.writer.position.offset, checksum=True)

    def write(self, *events: Event) -> None:
        for event in events:
            data = encode_event_at(event, self.writer.position.offset, checksum=True,
                                   table_maps=self.table_maps)  # fmt: skip
            remember_table_map(event, self.table_maps)
            self.writer.append(data)

    def reopen_writer(self, log: RelayLog) -> RelayLogWriter:
        """Write on ``log`` (the same relay log, opened again) from now on."""
        self.log = log
        self.writer = RelayLogWriter(log, make_header=self._header, make_rotate=self._rotate)
        self.writer.open()
        return self.writer

    def whole(self, gno: int) -> None:
        """A transaction written whole, then counted as received (as the receiver does)."""
        self.write(*transaction(gno))
        self.received.add(UUID, "", gno)

    def retrieved(self) -> GtidSet:
        """What the next server start reads back: the relay log closed, opened again (and
        so recovered), then read."""
        self.writer.close()
        self.log.close()
        log = RelayLog.for_channel(self.datadir, CHANNEL)
        log.open()
        try:
            return retrieved_gtids(log)
        finally:
            log.close()


def _set(*gnos: int) -> GtidSet:
    result = GtidSet()
    for gno in gnos:
        result.add(UUID, "", gno)
    return result


def test_previous_gtids_of_the_last_file_and_the_whole_transactions_after_it(
    tmp_path: Path,
) -> None:
    relay = Relay(tmp_path)
    for gno in range(1, 4):
        relay.whole(gno)
    relay.writer.rotate()  # the new file's Previous_gtids: 1-3
    relay.received.add(UUID, "", 100)  # received long ago, its file purged since
    relay.writer.rotate()  # Previous_gtids: 1-3, 100
    relay.whole(4)
    ddl = transaction(5)[:1] + [query("CREATE TABLE t2 (id INT)")]  # a DDL ends at its Query
    relay.write(*ddl)
    relay.received.add(UUID, "", 5)
    relay.write(*transaction(6)[:-1])  # cut by a crash before its Xid: not received
    assert relay.retrieved() == _set(1, 2, 3, 4, 5, 100)


def test_a_transaction_a_rotation_cut_counts_once_it_ends(tmp_path: Path) -> None:
    relay = Relay(tmp_path)
    relay.whole(1)
    events = transaction(2)
    relay.write(*events[:3])
    relay.writer.rotate()  # Previous_gtids: 1 (2 is not received yet)
    relay.write(*events[3:])
    relay.received.add(UUID, "", 2)
    assert relay.retrieved() == _set(1, 2)


def test_a_transaction_over_several_files_is_read_from_the_file_it_began_in(
    tmp_path: Path,
) -> None:
    relay = Relay(tmp_path)
    relay.whole(1)
    events = transaction(2, ids=range(1, 9))
    relay.write(*events[:3])
    for event in events[3:-1]:  # each rows event in a file of its own
        relay.writer.rotate()
        relay.write(event)
    relay.writer.rotate()
    relay.write(events[-1])
    relay.received.add(UUID, "", 2)
    assert len(relay.log.files()) > 5
    assert relay.retrieved() == _set(1, 2)


def test_relay_logs_without_previous_gtids_are_read_from_their_first_file(
    tmp_path: Path,
) -> None:
    relay = Relay(tmp_path, previous_gtids=False)
    relay.whole(1)
    relay.writer.rotate()
    relay.whole(2)
    assert relay.retrieved() == _set(1, 2)


def test_an_empty_relay_log_retrieved_nothing(tmp_path: Path) -> None:
    relay = Relay(tmp_path)
    assert relay.retrieved() == GtidSet()


# -- a relay log sealed by its receiver (relaylog/seal.py) ------------------------------------


def _sealed_and_reopened(relay: Relay) -> RelayLog:
    """Stop as the receiver does (writer closed, the relay log sealed with what it received
    whole), then open the relay log as the next server start does."""
    relay.writer.close()
    assert relay.log.seal(relay.received.format(","))
    relay.log.close()
    log = RelayLog.for_channel(relay.datadir, CHANNEL)
    log.open()
    return log


def _read_back(datadir: Path) -> tuple[GtidSet, bool]:
    """The relay log opened as a server start does: its retrieved set, and whether it came
    from a seal."""
    log = RelayLog.for_channel(datadir, CHANNEL)
    log.open()
    try:
        return retrieved_gtids(log), log.sealed_retrieved is not None
    finally:
        log.close()


def test_a_sealed_relay_log_gives_its_set_without_being_read_back(tmp_path: Path) -> None:
    relay = Relay(tmp_path)
    for gno in range(1, 4):
        relay.whole(gno)
    relay.write(*transaction(4)[:-1])  # cut: the receiver stopped inside it
    last = relay.log.path(relay.log.files()[-1])
    size = last.stat().st_size
    log = _sealed_and_reopened(relay)
    assert log.sealed_retrieved is not None
    assert retrieved_gtids(log) == _set(1, 2, 3)
    assert log.end_coordinate() is not None and log.end_coordinate().offset == size
    log.close()
    # Not read: the bytes after the file's header overwritten (same length), the set stands.
    with last.open("r+b") as file:
        file.seek(200)
        file.write(b"\xff" * (size - 200))
    assert _read_back(tmp_path) == (_set(1, 2, 3), True)


def test_a_writer_removes_the_seal_before_it_appends(tmp_path: Path) -> None:
    relay = Relay(tmp_path)
    relay.whole(1)
    log = _sealed_and_reopened(relay)
    assert log.seal_path.exists()
    again = relay.reopen_writer(log)
    assert not log.seal_path.exists()
    assert log.sealed_retrieved is None
    relay.whole(2)
    relay.write(*transaction(3)[:-1])
    again.fsync()  # then a crash: no seal, the files are read back
    assert relay.retrieved() == _set(1, 2)


def test_a_seal_naming_another_length_or_file_is_not_used(tmp_path: Path) -> None:
    relay = Relay(tmp_path)
    relay.whole(1)
    relay.writer.close()
    assert relay.log.seal(relay.received.format(","))
    sealed = relay.log.seal_path.read_bytes()
    relay.log.close()
    # Appended to after the seal (as by a writer whose removal of the seal was lost).
    log = RelayLog.for_channel(tmp_path, CHANNEL)
    log.open()
    writer = relay.reopen_writer(log)
    relay.whole(2)
    relay.writer.rotate()
    relay.whole(3)
    writer.close()
    log.seal_path.write_bytes(sealed)  # names the first file at its former length
    log.close()
    assert _read_back(tmp_path) == (_set(1, 2, 3), False)


def test_reset_replica_removes_the_seal(tmp_path: Path) -> None:
    relay = Relay(tmp_path)
    relay.whole(1)
    log = _sealed_and_reopened(relay)
    log.remove_all()
    assert not log.seal_path.exists()
    assert log.sealed_retrieved is None
    assert retrieved_gtids(log) == GtidSet()
    log.close()
