"""Dump threads of the built-in source (WL5721.LOOP.1-WAIT.1): COM_BINLOG_DUMP_GTID and
COM_BINLOG_DUMP as a MySQL source answers them (fake Rotate, Format_description not in use,
GTID skipping, heartbeats, EOF, MySQL's 1236 refusals), read through the replica's own client.
"""

from __future__ import annotations

import struct
import threading
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.codecs.gtid import encode_gtid_set
from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.events import (
    DEFAULT_FDE,
    Event,
    FormatDescription,
    Gtid,
    Heartbeat,
    PreviousGtids,
    Rotate,
    Xid,
)
from spark_replica.applier_core.binlog.stream import StreamDecoder
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.receiver.client import SourceClient, SourceError
from spark_replica.applier_core.receiver.dump import (
    dump_gtid,
    events,
    prepare_mysql,
    register_replica,
)
from spark_replica.applier_core.receiver.protocol import COM_BINLOG_DUMP_GTID
from spark_replica.tools.generator.simulate import simulate
from spark_replica.tools.source import SourceBinlog, SourceServer
from spark_replica.tools.source.dump import BinlogSender, DumpRequest
from spark_replica.tools.source.live import LiveWorkload
from tests.source.conftest import (
    LOG_EVENT_ARTIFICIAL_F,
    OTHER_UUID,
    REPLICA_SERVER_ID,
    SERVER_ID,
    SPEC,
    TOTAL,
    UUID,
    Connect,
    MakeBinlog,
    StartServer,
    append_workload,
    decode,
    dump_file,
    file_events,
    gnos,
    gtids,
    read_all,
    types,
    workload,
)

FILLED = 50  # transactions in the binary log at the start; the rest are appended by tests


@pytest.fixture
def binlog(make_binlog: MakeBinlog) -> SourceBinlog:
    return make_binlog(FILLED)


@pytest.fixture
def replica(server: SourceServer, connect: Connect) -> SourceClient:
    """A client that did what a MySQL replica does before a dump."""
    client = connect(server)
    prepare_mysql(client)
    register_replica(client, REPLICA_SERVER_ID)
    return client


def _names(binlog: SourceBinlog) -> list[str]:
    return [name for name, _ in binlog.files()]


def _pull(client: SourceClient, have: GtidSet) -> list[Event]:
    dump_gtid(client, REPLICA_SERVER_ID, have, blocking=False)
    return decode(read_all(client))


def _is_fake_rotate(event: Event, file: str, position: int = 4) -> bool:
    """The fake Rotate a dump sends before each file: timestamp 0, log_pos 0, artificial."""
    header = event.header
    return (
        isinstance(event, Rotate)
        and (event.next_file, event.position) == (file, position)
        and (header.timestamp, header.log_pos, header.flags) == (0, 0, LOG_EVENT_ARTIFICIAL_F)
        and header.server_id == SERVER_ID
    )


def _newest_start(binlog: SourceBinlog, have: GtidSet) -> str:
    """The file a GTID dump must start in, worked out from the files on disk: the newest
    whose Previous_gtids the replica has."""
    chosen = ""
    for name in _names(binlog):
        if decode_file_header(binlog, name).is_subset(have):
            chosen = name
    return chosen


def decode_file_header(binlog: SourceBinlog, name: str) -> GtidSet:
    raws = [raw for _, _, raw in file_events(binlog.relay_log.path(name))[:2]]
    previous = decode(raws)[1]
    assert isinstance(previous, PreviousGtids)
    return previous.gtids


# -- GTID dumps ------------------------------------------------------------------------------------


@pytest.mark.parametrize("have_last", [0, 1, 17, 30, 49])
def test_a_gtid_dump_sends_exactly_the_transactions_the_replica_lacks(
    binlog: SourceBinlog, replica: SourceClient, have_last: int
) -> None:
    """Only the GTIDs after the replica's set come, each once, in order; the dump starts with
    the fake Rotate of the newest file whose Previous_gtids the replica has, then that file's
    Format_description (not in use) and Previous_gtids, and ends with EOF (non-blocking).
    When it skipped transactions of that file, a Heartbeat at the end position comes last."""
    have = gtids(1, have_last)
    decoded = _pull(replica, have)
    assert gnos(decoded) == list(range(have_last + 1, FILLED + 1))
    start = _newest_start(binlog, have)
    assert _is_fake_rotate(decoded[0], start)
    assert types(decoded[1:3]) == ["FORMAT_DESCRIPTION", "PREVIOUS_GTIDS"]
    assert decoded[1].header.flags & 0x1 == 0
    assert decoded[2].gtids == decode_file_header(binlog, start)  # type: ignore[attr-defined]
    heartbeats = [e for e in decoded if isinstance(e, Heartbeat)]
    if decode_file_header(binlog, start) == have:  # nothing to skip
        assert heartbeats == []
    else:
        assert heartbeats == [decoded[-1]]
        assert (heartbeats[0].log_file, heartbeats[0].log_position) == binlog.end()


def test_the_start_file_is_the_newest_the_replica_has_every_gtid_before(
    binlog: SourceBinlog, replica: SourceClient
) -> None:
    """The replica has every GTID before binlog.000004 and the first transaction in it, not
    all of binlog.000004: the dump starts there, skips that first transaction, and a
    Heartbeat at the end position follows the last event."""
    names = _names(binlog)
    before_fourth = decode_file_header(binlog, names[3])
    last_before = max(last for _, _, _, last in before_fourth.intervals())
    have = gtids(1, last_before + 1)
    assert not decode_file_header(binlog, names[4]).is_subset(have)
    decoded = _pull(replica, have)
    assert _is_fake_rotate(decoded[0], names[3])
    assert gnos(decoded) == list(range(last_before + 2, FILLED + 1))
    assert isinstance(decoded[-1], Heartbeat)
    assert (decoded[-1].log_file, decoded[-1].log_position) == binlog.end()


def test_a_dump_goes_through_every_file_as_a_mysql_source_sends_it(
    binlog: SourceBinlog, replica: SourceClient
) -> None:
    """From an empty set: for each file, a fake Rotate naming it, then its events byte for
    byte as in the file (its own Rotate last, naming the next file), then EOF."""
    dump_gtid(replica, REPLICA_SERVER_ID, GtidSet(), blocking=False)
    raws = read_all(replica)
    expected: list[bytes] = []
    decoded = decode(raws)
    at = 0
    for name in _names(binlog):
        assert _is_fake_rotate(decoded[at], name)
        in_file = [raw for _, _, raw in file_events(binlog.relay_log.path(name))]
        expected.append(raws[at])
        expected.extend(in_file)
        at += 1 + len(in_file)
    assert raws == expected
    assert gnos(decoded) == list(range(1, FILLED + 1))


def test_gaps_in_the_replica_set_are_filled_and_a_heartbeat_follows_skipped_events(
    binlog: SourceBinlog, replica: SourceClient
) -> None:
    """The replica has 1-10, 14 and 40-45 (and another source's GTIDs): it gets 11-13,
    15-39 and 46-50, and, as the dump skipped transactions, a Heartbeat naming the file and
    position reached, before EOF."""
    have = gtids(1, 10).union(gtids(14, 14)).union(gtids(40, 45)).union(gtids(1, 99, OTHER_UUID))
    decoded = _pull(replica, have)
    expected = [g for g in range(11, FILLED + 1) if g != 14 and not 40 <= g <= 45]
    assert gnos(decoded) == expected
    last = decoded[-1]
    assert isinstance(last, Heartbeat)
    assert (last.log_file, last.log_position) == binlog.end()
    assert last.header.type_code == EventType.HEARTBEAT
    assert sum(isinstance(e, Heartbeat) for e in decoded) == 1


def test_a_replica_that_asks_for_heartbeat_v2_gets_it(
    binlog: SourceBinlog, replica: SourceClient
) -> None:
    """USE_HEARTBEAT_EVENT_V2 (flag 2, MySQL 8.0.26+ replicas): the heartbeat after skipped
    events is a HEARTBEAT_LOG_EVENT_V2 carrying the file and the full position."""
    assert decode_file_header(binlog, _names(binlog)[-1]) != gtids(1, FILLED)  # some to skip
    data = encode_gtid_set(gtids(1, FILLED))
    flags = 1 | 2  # non-blocking, heartbeat v2
    body = struct.pack("<HII", flags, REPLICA_SERVER_ID, 0) + struct.pack("<QI", 4, len(data))
    replica.command(COM_BINLOG_DUMP_GTID, body + data)
    decoded = decode(read_all(replica))
    assert gnos(decoded) == []
    last = decoded[-1]
    assert isinstance(last, Heartbeat)
    assert last.header.type_code == EventType.HEARTBEAT_V2
    assert (last.log_file, last.log_position) == binlog.end()


def test_skipped_transactions_send_none_of_their_events(
    binlog: SourceBinlog, replica: SourceClient
) -> None:
    """Every event but the files' own (Format_description, Previous_gtids, Rotate) belongs
    to a transaction sent: the number of Xid events is the number of GTIDs sent that have
    one, and no rows event comes from a skipped transaction."""
    have = gtids(1, 45)
    decoded = _pull(replica, have)
    assert gnos(decoded) == [46, 47, 48, 49, 50]
    expected_events = sum(len(workload()[gno - 1][0]) for gno in range(46, 51))
    in_transactions = [
        e for e in decoded
        if e.header.type_code not in (EventType.FORMAT_DESCRIPTION, EventType.PREVIOUS_GTIDS,
                                      EventType.ROTATE, EventType.HEARTBEAT)
    ]  # fmt: skip
    assert len(in_transactions) == expected_events
    assert sum(isinstance(e, Xid) for e in decoded) == sum(
        1 for gno in range(46, 51) if workload()[gno - 1][0][-1][4] == EventType.XID
    )


def test_a_replica_with_everything_gets_the_last_file_header_and_eof(
    binlog: SourceBinlog, replica: SourceClient
) -> None:
    binlog.rotate()  # the last file holds no transaction: nothing is skipped
    decoded = _pull(replica, gtids(1, FILLED))
    last = _names(binlog)[-1]
    assert _is_fake_rotate(decoded[0], last)
    assert types(decoded) == ["ROTATE", "FORMAT_DESCRIPTION", "PREVIOUS_GTIDS"]
    assert decoded[2].gtids == gtids(1, FILLED)  # type: ignore[attr-defined]


# -- file/position dumps ---------------------------------------------------------------------------


def test_a_file_position_dump_starts_with_the_fake_rotate_and_a_zeroed_format_description(
    binlog: SourceBinlog, replica: SourceClient
) -> None:
    """COM_BINLOG_DUMP from binlog.000003 at the start of its second transaction: the fake
    Rotate names that file and position, the file's Format_description follows with log_pos
    0 and no creation time, then the events from that position on."""
    name = _names(binlog)[2]
    raws = file_events(binlog.relay_log.path(name))
    starts = [start for start, _, raw in raws if raw[4] == EventType.GTID]
    position = starts[1]
    dump_file(replica, name, position)
    received = read_all(replica)
    decoded = decode(received)
    assert _is_fake_rotate(decoded[0], name, position)
    fde = decoded[1]
    assert isinstance(fde, FormatDescription)
    assert (fde.header.log_pos, fde.create_timestamp, fde.header.flags & 1) == (0, 0, 0)
    assert _crc_ok(received[1])
    from_position = [raw for start, _, raw in raws if start >= position]
    assert received[2 : 2 + len(from_position)] == from_position
    assert isinstance(decoded[2], Gtid)
    first_gno = decoded[2].gno
    assert gnos(decoded) == list(range(first_gno, FILLED + 1))


def test_a_file_position_dump_from_4_sends_the_file_as_it_is(
    binlog: SourceBinlog, replica: SourceClient
) -> None:
    name = _names(binlog)[1]
    dump_file(replica, name, 4)
    received = read_all(replica)
    decoded = decode(received)
    assert _is_fake_rotate(decoded[0], name)
    in_file = [raw for _, _, raw in file_events(binlog.relay_log.path(name))]
    assert received[1 : 1 + len(in_file)] == in_file  # the FDE with its own log_pos
    assert decoded[1].header.log_pos == len(in_file[0]) + 4


def test_an_empty_file_name_starts_at_the_first_file(
    binlog: SourceBinlog, replica: SourceClient
) -> None:
    dump_file(replica, "", 4)
    decoded = decode(read_all(replica))
    assert _is_fake_rotate(decoded[0], "binlog.000001")
    assert gnos(decoded) == list(range(1, FILLED + 1))


def _crc_ok(raw: bytes) -> bool:
    return zlib.crc32(raw[:-4]) == struct.unpack("<I", raw[-4:])[0]


def _set_in_use(binlog: SourceBinlog, name: str) -> None:
    """Give the file's Format_description the in-use flag (as a MySQL server's open binary
    log has it), its checksum computed again."""
    path = binlog.relay_log.path(name)
    data = bytearray(path.read_bytes())
    length = int.from_bytes(data[4 + 9 : 4 + 13], "little")
    data[4 + 17] |= 0x1
    data[4 + length - 4 : 4 + length] = struct.pack("<I", zlib.crc32(data[4 : 4 + length - 4]))
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("from_start", [True, False])
def test_the_format_description_is_sent_not_in_use(
    binlog: SourceBinlog, replica: SourceClient, from_start: bool
) -> None:
    """LOG_EVENT_BINLOG_IN_USE_F (0x1) is cleared in the Format_description a dump sends,
    and its CRC32 computed again, whether the dump starts at 4 or further in."""
    name = _names(binlog)[1]
    _set_in_use(binlog, name)
    raws = file_events(binlog.relay_log.path(name))
    assert raws[0][2][17] & 0x1
    dump_file(replica, name, 4 if from_start else raws[2][0])
    received = read_all(replica)
    fde, in_file = received[1], raws[0][2]
    assert fde[4] == EventType.FORMAT_DESCRIPTION
    assert fde[17] & 0x1 == 0
    assert _crc_ok(fde)
    if from_start:  # nothing else changed
        assert fde[:17] + fde[18:-4] == in_file[:17] + in_file[18:-4]
    else:
        assert int.from_bytes(fde[13:17], "little") == 0


# -- refusals ------------------------------------------------------------------------------------


def _refusal(run: Callable[[], object]) -> SourceError:
    with pytest.raises(SourceError) as caught:
        run()
    return caught.value


def test_purged_gtids_the_replica_lacks_are_refused(
    binlog: SourceBinlog, replica: SourceClient
) -> None:
    names = _names(binlog)
    binlog.purge_to(names[4])
    purged = binlog.purged()
    last_purged = max(last for _, _, _, last in purged.intervals())
    error = _refusal(lambda: _pull(replica, gtids(1, 3).union(gtids(1, 5, OTHER_UUID))))
    assert (error.code, error.sqlstate) == (1236, "HY000")
    assert error.message == (
        "Cannot replicate because the source purged required binary logs. Replicate the "
        "missing transactions from elsewhere, or provision a new replica from backup. Consider "
        "increasing the source's binary log expiration period. The GTID set sent by the "
        f"replica is '{OTHER_UUID}:1-5,{UUID}:1-3', and the missing transactions are "
        f"'{UUID}:4-{last_purged}'."
    )


def test_an_empty_replica_set_after_a_purge_is_refused(
    binlog: SourceBinlog, replica: SourceClient
) -> None:
    binlog.purge_to(_names(binlog)[2])
    last_purged = max(last for _, _, _, last in binlog.purged().intervals())
    error = _refusal(lambda: _pull(replica, GtidSet()))
    assert error.code == 1236
    assert error.message.endswith(
        f"The GTID set sent by the replica is '', and the missing transactions are "
        f"'{UUID}:1-{last_purged}'."
    )


def test_a_replica_with_the_purged_gtids_is_served_from_the_first_file_kept(
    binlog: SourceBinlog, replica: SourceClient
) -> None:
    names = _names(binlog)
    binlog.purge_to(names[4])
    decoded = _pull(replica, binlog.purged())
    assert _is_fake_rotate(decoded[0], names[4])
    last_purged = max(last for _, _, _, last in binlog.purged().intervals())
    assert gnos(decoded) == list(range(last_purged + 1, FILLED + 1))


def test_a_replica_with_more_gtids_of_this_source_is_refused(
    binlog: SourceBinlog, replica: SourceClient
) -> None:
    error = _refusal(lambda: _pull(replica, gtids(1, FILLED + 1)))
    assert (error.code, error.sqlstate) == (1236, "HY000")
    assert error.message == (
        "Replica has more GTIDs than the source has, using the source's SERVER_UUID. This may "
        "indicate that the end of the binary log was truncated or that the last binary log "
        "file was lost, e.g., after a power or disk failure when sync_binlog != 1. The source "
        "may or may not have rolled back transactions that were already replicated to the "
        "replica. Suggest to replicate any transactions that source has rolled back from "
        "replica to source, and/or commit empty transactions on source to account for "
        "transactions that have been committed on source but are not included in "
        "GTID_EXECUTED."
    )


def test_an_unknown_file_is_refused(replica: SourceClient) -> None:
    dump_file(replica, "binlog.000099", 4)
    error = _refusal(lambda: read_all(replica))
    assert (error.code, error.sqlstate) == (1236, "HY000")
    assert error.message == "Could not find first log file name in binary log index file"


def test_a_position_past_the_file_size_is_refused(
    binlog: SourceBinlog, replica: SourceClient
) -> None:
    name, size = binlog.files()[0]
    dump_file(replica, name, size + 1)
    error = _refusal(lambda: read_all(replica))
    assert (error.code, error.sqlstate) == (1236, "HY000")
    assert error.message == (
        "Client requested source to start replication from position > file size"
    )


@pytest.mark.parametrize("position", [0, 3])
def test_a_position_before_the_first_event_is_refused(
    binlog: SourceBinlog, replica: SourceClient, position: int
) -> None:
    dump_file(replica, _names(binlog)[0], position)
    error = _refusal(lambda: read_all(replica))
    assert (error.code, error.message) == (
        1236, "Client requested source to start replication from position < 4."
    )  # fmt: skip


def test_a_position_inside_an_event_is_a_1236_not_a_lost_connection(
    binlog: SourceBinlog, replica: SourceClient
) -> None:
    """What the dump thread cannot read (here the middle of the Format_description taken for
    an event header) ends the dump with a 1236 naming the file and position, as a MySQL
    source's "bogus data in log event" does, not with the connection cut."""
    dump_file(replica, _names(binlog)[0], 5)
    error = _refusal(lambda: read_all(replica))
    assert (error.code, error.sqlstate) == (1236, "HY000")
    assert error.message.startswith("corrupt event: ")
    assert error.message.endswith("(file 'binlog.000001', position 5)")


def test_a_position_at_the_file_size_is_accepted(
    binlog: SourceBinlog, replica: SourceClient
) -> None:
    """The end of a file (after its Rotate): the dump goes on with the next file."""
    names = _names(binlog)
    size = binlog.files()[0][1]
    dump_file(replica, names[0], size)
    decoded = decode(read_all(replica))
    assert _is_fake_rotate(decoded[0], names[0], size)
    assert _is_fake_rotate(decoded[2], names[1])


def test_a_replica_that_cannot_take_checksums_is_refused(
    server: SourceServer, connect: Connect
) -> None:
    """No SET @source_binlog_checksum: the replica cannot handle CRC32 events."""
    client = connect(server)
    dump_gtid(client, REPLICA_SERVER_ID, GtidSet(), blocking=False)
    error = _refusal(lambda: read_all(client))
    assert (error.code, error.sqlstate) == (1236, "HY000")
    assert error.message.startswith(
        "Replica can not handle replication events with the checksum that source is "
        "configured to log"
    )


def test_a_malformed_gtid_dump_is_refused(replica: SourceClient) -> None:
    replica.command(COM_BINLOG_DUMP_GTID, b"\x01\x00")
    error = _refusal(lambda: read_all(replica))
    assert (error.code, error.sqlstate, error.message) == (
        1835, "HY000", "Malformed communication packet.")  # fmt: skip


# -- blocking dumps ------------------------------------------------------------------------------


class _Dump:
    """The events of a dump as they come, decoded in order; every one whole (T80)."""

    def __init__(self, client: SourceClient) -> None:
        self._stream = events(client)
        self._decoder = StreamDecoder(DEFAULT_FDE)
        self.seen: list[Event] = []

    def until(self, done: Callable[[Event], bool]) -> list[Event]:
        """Read until ``done(event)``; the events read."""
        read: list[Event] = []
        for raw in self._stream:
            event = self._decoder.decode(raw)
            assert event.header.event_length == len(raw)
            read.append(event)
            self.seen.append(event)
            if done(event):
                return read
        raise AssertionError("the dump ended")


def test_a_blocking_dump_waits_and_sends_what_is_appended_later(
    binlog: SourceBinlog, replica: SourceClient
) -> None:
    """WL5721.READ.1: once everything is sent the dump waits on the published end; a
    transaction appended afterwards comes whole and alone. The replica has every
    transaction of the last file: one Heartbeat tells where skipping them led, and no other
    comes without a heartbeat period."""
    last = _names(binlog)[-1]
    assert decode_file_header(binlog, last) != gtids(1, FILLED)  # it holds transactions
    dump_gtid(replica, REPLICA_SERVER_ID, gtids(1, FILLED), blocking=True)
    dump = _Dump(replica)
    seen = dump.until(lambda e: isinstance(e, Heartbeat))
    assert types(seen) == ["ROTATE", "FORMAT_DESCRIPTION", "PREVIOUS_GTIDS", "HEARTBEAT"]
    assert (seen[-1].log_file, seen[-1].log_position) == binlog.end()  # type: ignore[attr-defined]
    append_workload(binlog, FILLED + 1, FILLED + 1)
    later = dump.until(lambda e: e.header.type_code in (EventType.XID, EventType.ROTATE))
    assert gnos(later) == [FILLED + 1]
    assert isinstance(later[0], Gtid)
    assert len(later) == len(workload()[FILLED][0])


def test_an_idle_blocking_dump_sends_heartbeats_at_the_replica_period(
    server: SourceServer, binlog: SourceBinlog, connect: Connect
) -> None:
    """@source_heartbeat_period set: while there is nothing to send, Heartbeat events come,
    each naming the file and position reached; then an appended transaction comes whole
    (T80, WL5721.READ.1)."""
    client = connect(server)
    prepare_mysql(client, heartbeat=0.05)
    dump_gtid(client, REPLICA_SERVER_ID, gtids(1, FILLED), blocking=True)
    dump = _Dump(client)
    seen = dump.until(lambda _: sum(isinstance(e, Heartbeat) for e in dump.seen) == 3)
    heartbeats = [e for e in seen if isinstance(e, Heartbeat)]
    assert types(seen[:3]) == ["ROTATE", "FORMAT_DESCRIPTION", "PREVIOUS_GTIDS"]
    assert all(isinstance(e, Heartbeat) for e in seen[3:])
    for heartbeat in heartbeats:
        assert (heartbeat.log_file, heartbeat.log_position) == binlog.end()
        assert heartbeat.header.log_pos == binlog.end()[1]
        assert heartbeat.header.type_code == EventType.HEARTBEAT
    append_workload(binlog, FILLED + 1, FILLED + 2)
    later = dump.until(lambda e: isinstance(e, Xid) and gnos(dump.seen)[-1] == FILLED + 2)
    assert gnos(later) == [FILLED + 1, FILLED + 2]


def test_a_blocking_dump_follows_a_live_workload_without_a_partial_event(
    make_binlog: MakeBinlog, start_server: StartServer, connect: Connect, tmp_path: Path
) -> None:
    """T80 / WL5721.READ.1: transactions appended (with rotations) while a dump reads: every
    event arrives whole, every GTID once and in order, each new file introduced by its fake
    Rotate."""
    binlog = make_binlog(5, max_size=2048)
    server = start_server(binlog)
    client = connect(server)
    prepare_mysql(client, heartbeat=0.01)
    dump_gtid(client, REPLICA_SERVER_ID, GtidSet(), blocking=True)
    dump = _Dump(client)
    transactions = [trx for trx in simulate(SPEC)[0] if trx.gno > 5]
    live = LiveWorkload(binlog, transactions, server_uuid=UUID)
    live.start()
    try:
        seen = dump.until(lambda e: isinstance(e, Xid) and gnos(dump.seen)[-1] == TOTAL)
    finally:
        live.stop()
    assert gnos(seen) == list(range(1, TOTAL + 1))
    rotations = [e for e in seen if isinstance(e, Rotate) and not e.header.artificial]
    assert len(rotations) >= 10
    for index, event in enumerate(seen):
        if isinstance(event, Rotate) and not event.header.artificial:
            following = [e for e in seen[index + 1 :] if not isinstance(e, Heartbeat)]
            assert _is_fake_rotate(following[0], event.next_file)


# -- the dump thread's own file (T81) -----------------------------------------------------------


class _GatedStream:
    """A replica's connection as a dump thread sees it, which stops taking packets at the
    Rotate event that ends the file before ``pause_in`` until ``resume`` is set: the dump
    thread has read the first event of ``pause_in`` by then (it sends a file's last events
    before it introduces the next file)."""

    def __init__(self, pause_in: str) -> None:
        self.packets: list[bytes] = []
        self.pause_in = pause_in
        self.paused = threading.Event()
        self.resume = threading.Event()

    def frame(self, payload: bytes) -> bytes:
        return len(payload).to_bytes(3, "little") + b"\0" + bytes(payload)

    def sock_send(self, data: bytes) -> None:
        """The dump's packets, one by one, as a replica reads them."""
        position = 0
        while position < len(data):
            length = int.from_bytes(data[position : position + 3], "little")
            self.write_packet(data[position + 4 : position + 4 + length])
            position += 4 + length

    def write_packet(self, payload: bytes) -> None:
        data = bytes(payload[1:])
        self.packets.append(bytes(payload))
        if payload[:1] != b"\x00":
            return
        real_rotate = data[4] == EventType.ROTATE and int.from_bytes(data[13:17], "little") != 0
        if real_rotate and data[19 + 8 : -4].decode() == self.pause_in:
            self.paused.set()
            assert self.resume.wait(20)


def test_purge_keeps_the_file_a_dump_thread_is_sending(
    binlog: SourceBinlog, tmp_path: Path
) -> None:
    """T81 / WL5721.PURGE.1: a dump thread (BinlogSender) reading binlog.000002 holds it:
    PURGE BINARY LOGS TO binlog.000005 deletes binlog.000001 only, the dump goes on through
    binlog.000002 and on whole; once it has finished, the same PURGE deletes the rest."""
    names = _names(binlog)
    stream = _GatedStream(names[1])
    request = DumpRequest(REPLICA_SERVER_ID, 1, names[0], 4, None)
    sender = BinlogSender(binlog, stream, request, server_uuid=UUID,  # type: ignore[arg-type]
                          stopping=threading.Event())  # fmt: skip
    failures: list[BaseException] = []

    def run() -> None:
        try:
            sender.run()
        except BaseException as exc:  # reported by the test
            failures.append(exc)

    thread = threading.Thread(target=run, name="test-dump")
    thread.start()
    try:
        assert stream.paused.wait(20)
        assert binlog.purge_to(names[4]) == names[:1]
        assert [name for name, _ in binlog.files()] == names[1:]
    finally:
        stream.resume.set()
        thread.join()
    assert failures == []
    assert stream.packets[-1][:1] == b"\xfe"  # EOF: non-blocking
    decoded = decode([packet[1:] for packet in stream.packets[:-1]])
    assert gnos(decoded) == list(range(1, FILLED + 1))
    for name in names[1:]:  # the dump thread let go of every file
        assert binlog.relay_log.tracker.usage(name).references == 0
    assert binlog.purge_to(names[4]) == names[1:4]
