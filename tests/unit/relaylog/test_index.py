"""Naming, the index file, and reconciling the directory with it after a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.constants import MAGIC
from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.relaylog import (
    RelayLog,
    RelayLogReader,
    relay_log_base_name,
    relay_log_directory,
)
from spark_replica.applier_core.binlog.relaylog.index import numbered_name, split_numbered
from tests.unit.relaylog.conftest import CHANNEL, new_writer
from tests.unit.relaylog.fakes import HEADER, make_event, make_rotate

BASE = f"relay-bin-{CHANNEL}"


def _reopen(datadir: Path) -> RelayLog:
    log = RelayLog.for_channel(datadir, CHANNEL)
    log.open()
    return log


def _index_lines(relay_log: RelayLog) -> list[str]:
    return relay_log.index.index_path.read_text().splitlines()


def test_names_follow_mysql_without_the_host(tmp_path: Path) -> None:
    assert relay_log_base_name("") == "relay-bin"
    assert relay_log_base_name("c1") == "relay-bin-c1"
    assert relay_log_directory(tmp_path, "") == tmp_path / "relay"
    assert relay_log_directory(tmp_path, "c1") == tmp_path / "relay" / "c1"
    assert numbered_name("relay-bin", 7) == "relay-bin.000007"
    assert numbered_name("relay-bin", 1234567) == "relay-bin.1234567"
    assert split_numbered("mysql-bin.000042") == ("mysql-bin", 42)
    assert split_numbered("relay-bin.index") is None
    assert split_numbered("relay-bin.00001") is None


@pytest.mark.parametrize("channel", ["a/b", "..", "a.b", "x\x00"])
def test_channel_names_that_cannot_name_files_are_refused(channel: str) -> None:
    with pytest.raises(ValueError):
        relay_log_base_name(channel)


def test_open_creates_directory_and_empty_index(datadir: Path) -> None:
    log = _reopen(datadir)
    directory = datadir / "relay" / CHANNEL
    assert log.directory == directory
    assert (directory / f"{BASE}.index").read_text() == ""
    assert log.files() == []
    log.close()


def test_default_channel_lives_in_the_relay_directory(datadir: Path) -> None:
    log = RelayLog.for_channel(datadir, "")
    log.open()
    with new_writer(log):
        pass
    assert sorted(p.name for p in (datadir / "relay").iterdir()) == [
        "relay-bin.000001",
        "relay-bin.index",
    ]
    log.close()


def test_index_round_trip(datadir: Path, relay_log: RelayLog) -> None:
    with new_writer(relay_log) as writer:
        writer.append(make_event())
        writer.rotate()
        writer.rotate()
    names = [f"{BASE}.000001", f"{BASE}.000002", f"{BASE}.000003"]
    assert relay_log.files() == names
    assert _index_lines(relay_log) == names
    ordinals = [entry.ordinal for entry in relay_log.index.entries()]
    assert ordinals == sorted(ordinals) and len(set(ordinals)) == 3
    relay_log.close()
    again = _reopen(datadir)
    assert again.files() == names
    again.close()


def test_reopening_keeps_ordinals_increasing(relay_log: RelayLog) -> None:
    with new_writer(relay_log):
        pass
    before = relay_log.index.entries()[-1].ordinal
    relay_log.close()
    relay_log.open()
    assert relay_log.index.entries()[-1].ordinal > before


def test_leftover_temp_index_is_ignored_and_removed(datadir: Path, relay_log: RelayLog) -> None:
    with new_writer(relay_log):
        pass
    relay_log.close()
    temp = relay_log.index.temp_path
    temp.write_text(f"{BASE}.000001\n{BASE}.000002\n")
    again = _reopen(datadir)
    assert again.files() == [f"{BASE}.000001"]
    assert not temp.exists()
    again.close()


def test_listed_file_missing_is_an_error_naming_it(datadir: Path, relay_log: RelayLog) -> None:
    with new_writer(relay_log) as writer:
        writer.rotate()
    relay_log.close()
    relay_log.path(f"{BASE}.000001").unlink()
    log = RelayLog.for_channel(datadir, CHANNEL)
    with pytest.raises(BinlogError) as caught:
        log.open()
    assert caught.value.file == f"{BASE}.000001"
    assert "missing" in str(caught.value)


def test_interrupted_rotation_is_completed(datadir: Path, relay_log: RelayLog) -> None:
    """Crash after the ROTATE was written and the next file created, before it was listed."""
    with new_writer(relay_log) as writer:
        writer.append(make_event(payload=b"kept"))
    relay_log.close()
    first = relay_log.path(f"{BASE}.000001")
    with first.open("ab") as file:
        file.write(make_rotate(f"{BASE}.000002"))
    unlisted = relay_log.path(f"{BASE}.000002")
    unlisted.write_bytes(MAGIC + HEADER[:30])

    log = _reopen(datadir)
    assert not unlisted.exists()
    assert log.files() == [f"{BASE}.000001"]
    with new_writer(log) as writer:
        assert writer.file_name == f"{BASE}.000002"
        writer.append(make_event(payload=b"next"))
    assert log.files() == [f"{BASE}.000001", f"{BASE}.000002"]
    with RelayLogReader(log) as reader:
        payloads = [event.data[19:] for event in reader]
    assert b"kept" in payloads and b"next" in payloads
    log.close()


def test_unlisted_files_before_the_first_listed_are_purge_leftovers(
    datadir: Path, relay_log: RelayLog
) -> None:
    with new_writer(relay_log) as writer:
        writer.rotate()
        writer.rotate()
    relay_log.close()
    index = relay_log.index.index_path
    index.write_text(f"{BASE}.000002\n{BASE}.000003\n")
    stray = relay_log.path(f"{BASE}.000005")
    stray.write_bytes(MAGIC)
    log = _reopen(datadir)
    assert log.files() == [f"{BASE}.000002", f"{BASE}.000003"]
    assert not relay_log.path(f"{BASE}.000001").exists()
    assert not stray.exists()
    log.close()


def test_unlisted_file_between_listed_ones_is_kept(datadir: Path, relay_log: RelayLog) -> None:
    with new_writer(relay_log) as writer:
        writer.rotate()
        writer.rotate()
    relay_log.close()
    relay_log.index.index_path.write_text(f"{BASE}.000001\n{BASE}.000003\n")
    log = _reopen(datadir)
    assert log.files() == [f"{BASE}.000001", f"{BASE}.000003"]
    assert relay_log.path(f"{BASE}.000002").exists()
    log.close()


def test_missing_index_with_relay_files_is_an_error(datadir: Path, relay_log: RelayLog) -> None:
    with new_writer(relay_log):
        pass
    relay_log.close()
    relay_log.index.index_path.unlink()
    with pytest.raises(BinlogError, match="index is missing"):
        RelayLog.for_channel(datadir, CHANNEL).open()


def test_index_accepts_dot_slash_and_blank_lines(datadir: Path, relay_log: RelayLog) -> None:
    with new_writer(relay_log) as writer:
        writer.rotate()
    relay_log.close()
    relay_log.index.index_path.write_text(f"./{BASE}.000001\n\n{BASE}.000002\n")
    log = _reopen(datadir)
    assert log.files() == [f"{BASE}.000001", f"{BASE}.000002"]
    log.close()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (f"{BASE}.000001\n{BASE}.000001\n", "twice"),
        ("notes.txt\n", "not a"),
        ("../elsewhere/mysql-bin.000001\n", "not a"),
    ],
)
def test_malformed_index_is_an_error(
    datadir: Path, relay_log: RelayLog, content: str, message: str
) -> None:
    with new_writer(relay_log):
        pass
    relay_log.close()
    relay_log.index.index_path.write_text(content)
    with pytest.raises(BinlogError, match=message):
        RelayLog.for_channel(datadir, CHANNEL).open()


def test_dba_copied_binlog_listed_by_name_is_read(datadir: Path, relay_log: RelayLog) -> None:
    with new_writer(relay_log) as writer:
        writer.append(make_event(payload=b"ours"))
    relay_log.close()
    copied = relay_log.path("mysql-bin.000042")
    copied.write_bytes(MAGIC + HEADER + make_event(payload=b"copied"))
    relay_log.index.index_path.write_text(f"{BASE}.000001\nmysql-bin.000042\n")

    log = _reopen(datadir)
    with new_writer(log) as writer:
        # A copied file is never appended to: the writer starts its own next file.
        assert writer.file_name == f"{BASE}.000002"
        writer.append(make_event(payload=b"after"))
    assert copied.read_bytes().endswith(b"copied")
    with RelayLogReader(log) as reader:
        events = list(reader)
    bodies = [
        (e.file, e.data[19:]) for e in events if e.data[19:] in {b"ours", b"copied", b"after"}
    ]
    assert bodies == [
        (f"{BASE}.000001", b"ours"),
        ("mysql-bin.000042", b"copied"),
        (f"{BASE}.000002", b"after"),
    ]
    log.close()
