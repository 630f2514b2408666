"""The built-in source's binary log (``SourceBinlog``): files and their header events,
rotation at transaction ends, gtid_executed recovered at open (a transaction a crash cut is
cut away), PURGE BINARY LOGS and the files a reader holds (WL5721.PURGE.1, T81)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.constants import EventType
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.events import (
    FormatDescription,
    Gtid,
    PreviousGtids,
    Rotate,
)
from spark_replica.applier_core.binlog.file import moved_event
from spark_replica.applier_core.binlog.relaylog import RelayLogReader
from spark_replica.applier_core.binlog.stream import StreamDecoder
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.receiver.convert import MysqlTracker
from spark_replica.tools.source import SourceBinlog
from spark_replica.tools.source.binlog import SERVER_VERSION
from tests.source.conftest import (
    SERVER_ID,
    SMALL_FILES,
    TOTAL,
    UUID,
    MakeBinlog,
    append_workload,
    disk_files,
    file_events,
    gtids,
    workload,
)


def _layout(directory: Path) -> list[tuple[str, list[tuple[int, int, bytes]]]]:
    return [(name, file_events(directory / name)) for name in disk_files(directory)]


def test_files_rotate_at_the_first_transaction_end_past_max_size(
    make_binlog: MakeBinlog, tmp_path: Path
) -> None:
    """WL5721.ROT.1: each file starts with a Format_description (8.4, CRC32) and a
    Previous_gtids holding every GTID before it, holds whole transactions only, and (but the
    last) ends with a Rotate naming the next file at 4, written after the first transaction
    that took the file past max_size: the transaction before that one ended at or below
    max_size. Every event's log_pos is where it ends."""
    binlog = make_binlog(TOTAL)
    directory = tmp_path / "binlog"
    layout = _layout(directory)
    assert len(layout) >= 8
    assert [name for name, _ in layout] == [f"binlog.{n:06d}" for n in range(1, len(layout) + 1)]
    assert (directory / "binlog.index").read_text().split() == [name for name, _ in layout]
    before = GtidSet()
    for number, (_, raws) in enumerate(layout, 1):
        decoder, tracker = StreamDecoder(), MysqlTracker()
        decoded = [decoder.decode(raw) for _, _, raw in raws]
        fde, previous = decoded[0], decoded[1]
        assert isinstance(fde, FormatDescription)
        assert (fde.server_version, fde.checksums, fde.header.server_id) == (
            SERVER_VERSION, True, SERVER_ID)  # fmt: skip
        assert raws[0][0] == 4
        assert isinstance(previous, PreviousGtids)
        assert previous.gtids == before
        for _, _, raw in raws[:2]:
            tracker.convert(raw)
        ends = [raws[1][1]]  # where each transaction (and the header) ends
        for (_, end, raw), event in zip(raws[2:], decoded[2:], strict=True):
            tracker.convert(raw)
            if isinstance(event, Gtid):
                before.add(UUID, "", event.gno)
            if tracker.ended is not None:
                ends.append(end)
            if isinstance(event, Rotate):
                assert tracker.open is None  # never inside a transaction
        for _, end, raw in raws:
            assert int.from_bytes(raw[13:17], "little") == end  # log_pos: where it ends
        if number < len(layout):
            rotate = decoded[-1]
            assert isinstance(rotate, Rotate)
            assert (rotate.next_file, rotate.position) == (f"binlog.{number + 1:06d}", 4)
            assert not rotate.header.artificial
            rotate_at = raws[-1][0]
            assert ends[-1] == rotate_at > SMALL_FILES
            assert ends[-2] <= SMALL_FILES
        else:
            assert not any(isinstance(e, Rotate) for e in decoded)
    assert before == gtids(1, TOTAL)
    assert binlog.executed() == gtids(1, TOTAL)


def test_state_reported_matches_the_files_on_disk(make_binlog: MakeBinlog, tmp_path: Path) -> None:
    binlog = make_binlog(20)
    directory = tmp_path / "binlog"
    names = disk_files(directory)
    assert binlog.files() == [(name, os.stat(directory / name).st_size) for name in names]
    assert binlog.end() == (names[-1], os.stat(directory / names[-1]).st_size)
    for number, name in enumerate(names):
        decoder = StreamDecoder()
        header = [decoder.decode(raw) for _, _, raw in file_events(directory / name)[:2]]
        assert isinstance(header[1], PreviousGtids)
        assert binlog.previous_gtids(name) == header[1].gtids
        assert bool(header[1].gtids) == (number > 0)
    assert binlog.purged() == GtidSet()


def test_executed_is_recovered_after_close_and_reopen(
    make_binlog: MakeBinlog, tmp_path: Path
) -> None:
    """gtid_executed comes back from the last file (its Previous_gtids and its whole
    transactions); appending goes on in that same file with the next GTID."""
    binlog = make_binlog(20)
    files = binlog.files()
    binlog.close()
    reopened = make_binlog(max_size=1 << 20)
    assert reopened.executed() == gtids(1, 20)
    assert reopened.files() == files
    append_workload(reopened, 21, 21)
    assert [name for name, _ in reopened.files()] == [name for name, _ in files]
    assert reopened.executed() == gtids(1, 21)
    reopened.close()
    assert make_binlog().executed() == gtids(1, 21)


def test_executed_is_recovered_from_a_last_file_with_no_transaction(
    make_binlog: MakeBinlog,
) -> None:
    """FLUSH BINARY LOGS just before a stop: the last file holds only its header, and
    gtid_executed is its Previous_gtids."""
    binlog = make_binlog(12)
    new = binlog.rotate()
    binlog.close()
    reopened = make_binlog()
    assert reopened.end()[0] == new
    assert reopened.executed() == gtids(1, 12)
    assert reopened.previous_gtids(new) == gtids(1, 12)


def _crash_in_transaction(binlog: SourceBinlog, gno: int, keep: int) -> int:
    """Write the first ``keep`` events of transaction ``gno`` to the end of the last file as
    a crashed server leaves them (flushed, never completed), with the binary log closed.
    Returns the size of the file before them."""
    name, size = binlog.end()
    binlog.close()
    path = binlog.relay_log.path(name)
    position = size
    with open(path, "ab") as handle:
        for raw in workload()[gno - 1][0][:keep]:
            position += len(raw)
            handle.write(moved_event(raw, position, True))
    assert os.stat(path).st_size == position > size
    return size


@pytest.mark.parametrize("keep", [1, 3, -1])
def test_a_transaction_cut_by_a_crash_is_cut_away_at_open(
    make_binlog: MakeBinlog, keep: int
) -> None:
    """Recovery (issue 7 §4): the events of a transaction without its commit at the end of
    the last file are truncated away; its GTID is not executed, and appending goes on
    cleanly after the last whole transaction (the same transaction, whole this time)."""
    binlog = make_binlog(20)
    name = binlog.end()[0]
    events_ = workload()[20][0]
    kept = keep if keep > 0 else len(events_) + keep  # all but the Xid
    size = _crash_in_transaction(binlog, 21, kept)
    reopened = make_binlog(max_size=1 << 20)
    assert reopened.end() == (name, size)
    assert os.stat(reopened.relay_log.path(name)).st_size == size
    assert reopened.executed() == gtids(1, 20)
    append_workload(reopened, 21, 23)
    assert reopened.executed() == gtids(1, 23)
    raws = [raw for _, _, raw in file_events(reopened.relay_log.path(name))]
    decoder = StreamDecoder()
    decoded = [decoder.decode(raw) for raw in raws]
    assert [e.gno for e in decoded if isinstance(e, Gtid)][-3:] == [21, 22, 23]
    assert sum(1 for e in decoded if isinstance(e, Gtid) and e.gno == 21) == 1


def test_a_ddl_cut_after_its_gtid_event_is_cut_away(make_binlog: MakeBinlog) -> None:
    """A DDL (a GTID event and one Query) whose Query never reached the file."""
    ddl = next(gno for events_, gno in workload() if len(events_) == 2)
    binlog = make_binlog(ddl - 1)
    name = binlog.end()[0]
    size = _crash_in_transaction(binlog, ddl, 1)
    reopened = make_binlog()
    assert reopened.end() == (name, size)
    assert reopened.executed() == gtids(1, ddl - 1)


def test_a_file_truncated_inside_the_last_transaction_is_recovered(
    make_binlog: MakeBinlog,
) -> None:
    """The file ends in the middle of an event of its last transaction (a torn write): the
    partial event and the rest of that transaction go, the file ends where the transaction
    before it ended."""
    binlog = make_binlog(20)
    name = binlog.end()[0]
    path = binlog.relay_log.path(name)
    raws = file_events(path)
    starts = [start for start, _, raw in raws if raw[4] == EventType.GTID]
    last_start, file_end = starts[-1], raws[-1][1]
    binlog.close()
    os.truncate(path, file_end - 10)
    reopened = make_binlog(max_size=1 << 20)
    assert reopened.end() == (name, last_start)
    assert os.stat(path).st_size == last_start
    assert reopened.executed() == gtids(1, 19)
    append_workload(reopened, 20, 20)
    assert reopened.executed() == gtids(1, 20)
    assert [raw for _, _, raw in file_events(path)][-1][4] == EventType.XID


def test_purge_to_deletes_the_earlier_files(make_binlog: MakeBinlog, tmp_path: Path) -> None:
    """PURGE BINARY LOGS TO: the files before the target go (from the index and the disk);
    gtid_purged becomes the Previous_gtids of the first file kept."""
    binlog = make_binlog(TOTAL)
    names = [name for name, _ in binlog.files()]
    assert binlog.purge_to(names[3]) == names[:3]
    assert [name for name, _ in binlog.files()] == names[3:]
    assert disk_files(tmp_path / "binlog") == names[3:]
    assert (tmp_path / "binlog" / "binlog.index").read_text().split() == names[3:]
    purged = binlog.purged()
    assert purged == binlog.previous_gtids(names[3])
    assert purged and purged != gtids(1, TOTAL)
    assert binlog.executed() == gtids(1, TOTAL)
    assert binlog.purge_to(names[3]) == []


def test_purge_to_an_unknown_file_is_refused(make_binlog: MakeBinlog) -> None:
    binlog = make_binlog(10)
    before = binlog.files()
    with pytest.raises(BinlogError, match="Target log not found in binlog index"):
        binlog.purge_to("binlog.999999")
    assert binlog.files() == before


def test_purge_to_the_last_file_keeps_it(make_binlog: MakeBinlog) -> None:
    binlog = make_binlog(12)
    names = [name for name, _ in binlog.files()]
    assert binlog.purge_to(names[-1]) == names[:-1]
    assert [name for name, _ in binlog.files()] == names[-1:]
    append_workload(binlog, 13, 13)
    assert binlog.executed() == gtids(1, 13)


def test_purge_stops_at_the_file_a_reader_holds(make_binlog: MakeBinlog, tmp_path: Path) -> None:
    """T81 / WL5721.PURGE.1: while a dump thread's reader is in binlog.000002, PURGE TO a
    later file deletes binlog.000001 only; once the reader has gone, the same PURGE deletes
    the rest."""
    binlog = make_binlog(TOTAL)
    names = [name for name, _ in binlog.files()]
    with RelayLogReader(binlog.relay_log, ("binlog.000002", 4)) as reader:
        assert binlog.purge_to(names[4]) == ["binlog.000001"]
        assert disk_files(tmp_path / "binlog") == names[1:]
        assert binlog.purged() == binlog.previous_gtids("binlog.000002")
        first = reader.poll()  # the file it holds is still whole under it
        assert first is not None and first.file == "binlog.000002" and first.start == 4
    assert binlog.purge_to(names[4]) == names[1:4]
    assert disk_files(tmp_path / "binlog") == names[4:]


def test_purge_to_never_deletes_the_target_file(make_binlog: MakeBinlog, tmp_path: Path) -> None:
    """PURGE BINARY LOGS TO 'x' deletes the files before 'x' and never 'x' or a later file,
    even after an earlier PURGE TO a later file was held back by a reader."""
    binlog = make_binlog(TOTAL)
    names = [name for name, _ in binlog.files()]
    with RelayLogReader(binlog.relay_log, (names[1], 4)):
        assert binlog.purge_to(names[4]) == names[:1]
    assert binlog.purge_to(names[2]) == names[1:2]
    assert [name for name, _ in binlog.files()] == names[2:]
    assert disk_files(tmp_path / "binlog") == names[2:]
