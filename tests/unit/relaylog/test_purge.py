"""Concurrent relay log purge: subscribers, fully applied files, the active file (T74, T75)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.relaylog import (
    RelayLog,
    RelayLogIndex,
    RelayLogReader,
    RelayLogWriter,
    Subscription,
)
from tests.unit.relaylog.conftest import CHANNEL, new_writer
from tests.unit.relaylog.fakes import make_event

BASE = f"relay-bin-{CHANNEL}"
F1, F2, F3, F4 = (f"{BASE}.00000{n}" for n in range(1, 5))
WAIT = 10.0


@pytest.fixture
def four_files(relay_log: RelayLog, writer: RelayLogWriter) -> list[str]:
    """F1..F3 complete, F4 active."""
    for _ in range(3):
        writer.append(make_event(payload=b"trx"))
        writer.rotate()
    assert relay_log.files() == [F1, F2, F3, F4]
    return [F1, F2, F3, F4]


def _exists(relay_log: RelayLog, *names: str) -> list[bool]:
    return [relay_log.path(name).exists() for name in names]


def test_t74_applied_files_are_purged_and_the_active_one_stays(
    relay_log: RelayLog, four_files: list[str]
) -> None:
    for name in four_files:  # even the active file marked applied must stay
        relay_log.mark_applied(name)
    assert relay_log.purge() == [F1, F2, F3]
    assert relay_log.files() == [F4]
    assert relay_log.index.index_path.read_text() == f"{F4}\n"
    assert _exists(relay_log, F1, F2, F3, F4) == [False, False, False, True]
    assert relay_log.purge() == []


def test_t75_failed_transaction_keeps_its_file_and_every_later_one(
    relay_log: RelayLog, four_files: list[str]
) -> None:
    failed = relay_log.subscribe(F1)
    assert failed.release(applied=False) is False
    relay_log.mark_applied(F1)
    relay_log.mark_applied(F2)
    assert relay_log.tracker.usage(F1).failed
    assert relay_log.purge() == []
    assert _exists(relay_log, F1, F2) == [True, True]
    relay_log.tracker.reset_failures()  # the applier restarts and applies F1 again
    assert not relay_log.tracker.usage(F1).applied  # F1 is unread until the new run reads it
    assert relay_log.purge() == []
    relay_log.mark_applied(F1)  # the new run read F1 to its end, every transaction ended
    assert relay_log.purge() == [F1, F2]


def test_purge_stops_at_the_first_file_not_applied(
    relay_log: RelayLog, four_files: list[str]
) -> None:
    relay_log.mark_applied(F1)
    relay_log.mark_applied(F3)
    assert relay_log.purge() == [F1]
    assert relay_log.files() == [F2, F3, F4]


def test_subscribed_file_waits_for_every_subscriber(
    relay_log: RelayLog, four_files: list[str]
) -> None:
    spanning = relay_log.subscribe(F1, F2)  # a transaction that crosses into F2
    single = relay_log.subscribe(F1)
    assert relay_log.mark_applied(F1) is False
    assert relay_log.mark_applied(F2) is False
    assert relay_log.purge() == []
    assert single.release() is False
    assert relay_log.purge() == []
    assert spanning.release() is True
    usage = relay_log.tracker.usage(F1)
    assert (usage.subscribers, usage.successful, usage.references) == (2, 2, 0)
    assert relay_log.purge() == [F1, F2]


def test_streamed_transaction_extends_its_subscription(
    relay_log: RelayLog, four_files: list[str]
) -> None:
    relay_log.mark_applied(F1)
    relay_log.mark_applied(F2)
    with relay_log.subscribe(F1) as subscription:
        subscription.extend(F2)
        assert subscription.files == (F1, F2)
        assert relay_log.purge() == []
    assert relay_log.purge() == [F1, F2]


def test_subscription_released_by_an_exception_counts_as_failed(
    relay_log: RelayLog, four_files: list[str]
) -> None:
    relay_log.mark_applied(F1)
    with pytest.raises(KeyError), relay_log.subscribe(F1):
        raise KeyError("apply failed")
    assert relay_log.purge() == []


def test_reader_in_a_file_keeps_it(relay_log: RelayLog, four_files: list[str]) -> None:
    for name in four_files:
        relay_log.mark_applied(name)
    with RelayLogReader(relay_log, (F2, 0)):
        assert relay_log.purge() == [F1]
    assert relay_log.purge() == [F2, F3]


def test_purged_file_cannot_be_subscribed(relay_log: RelayLog, four_files: list[str]) -> None:
    relay_log.mark_applied(F1)
    relay_log.purge()
    with pytest.raises(BinlogError, match="purged") as caught:
        relay_log.subscribe(F1)
    assert caught.value.file == F1


def test_relay_log_purge_off_deletes_nothing(relay_log: RelayLog, four_files: list[str]) -> None:
    relay_log.purge_enabled = False
    relay_log.mark_applied(F1)
    assert relay_log.purge() == []
    assert relay_log.files() == four_files
    relay_log.purge_enabled = True
    assert relay_log.purge() == [F1]


def test_index_is_updated_before_files_are_deleted(
    relay_log: RelayLog, four_files: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    listed_while_deleting: list[str] = []
    real_delete = RelayLogIndex._delete

    def delete(index: RelayLogIndex, names: list[str]) -> None:
        listed_while_deleting.extend(index.index_path.read_text().splitlines())
        assert all(index.path(name).exists() for name in names)
        real_delete(index, names)

    monkeypatch.setattr(RelayLogIndex, "_delete", delete)
    relay_log.mark_applied(F1)
    assert relay_log.purge() == [F1]
    assert listed_while_deleting == [F2, F3, F4]


def test_failed_index_update_deletes_nothing(
    relay_log: RelayLog, four_files: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(index: RelayLogIndex, names: list[str]) -> None:
        raise OSError(28, "No space left on device")

    relay_log.mark_applied(F1)
    with monkeypatch.context() as patch:
        patch.setattr(RelayLogIndex, "_replace", fail)
        with pytest.raises(OSError):
            relay_log.purge()
    assert relay_log.files() == four_files
    assert _exists(relay_log, F1) == [True]
    with relay_log.subscribe(F1):  # not left claimed by the failed purge
        pass
    assert relay_log.purge() == [F1]


def test_file_left_by_a_failed_delete_is_removed_on_next_open(
    datadir: Path, relay_log: RelayLog, four_files: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    relay_log.mark_applied(F1)
    with monkeypatch.context() as patch:
        patch.setattr(RelayLogIndex, "_delete", lambda index, names: None)
        assert relay_log.purge() == [F1]
    assert _exists(relay_log, F1) == [True]
    again = RelayLog.for_channel(datadir, CHANNEL)
    reconciliation = again.open().reconciliation
    assert reconciliation.removed_unlisted == (F1,)
    assert _exists(relay_log, F1) == [False]
    again.close()


def test_jobs_finishing_concurrently_purge_every_applied_file(
    relay_log: RelayLog, writer: RelayLogWriter
) -> None:
    files = 12
    for _ in range(files):
        writer.append(make_event())
        writer.rotate()
    names = relay_log.files()[:-1]
    subscriptions = [relay_log.subscribe(name) for name in names for _ in range(3)]
    for name in names:
        relay_log.mark_applied(name)
    start = threading.Barrier(4, timeout=WAIT)
    errors: list[BaseException] = []
    purged: list[str] = []

    def finish(share: list[Subscription]) -> None:
        try:
            start.wait()
            for subscription in share:
                if subscription.release():
                    purged.extend(relay_log.purge())
        except BaseException as error:
            errors.append(error)

    threads = [
        threading.Thread(target=finish, args=(subscriptions[n::4],), name=f"relay-job-{n}")
        for n in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []
    purged.extend(relay_log.purge())
    assert sorted(purged) == names
    assert relay_log.files() == [writer.file_name]


def test_remove_all_refuses_while_the_writer_is_open(
    relay_log: RelayLog, four_files: list[str]
) -> None:
    with pytest.raises(BinlogError, match="being written"):
        relay_log.remove_all()


def test_remove_all_deletes_every_file_and_restarts_numbering(relay_log: RelayLog) -> None:
    with new_writer(relay_log) as writer:
        writer.rotate()
        writer.rotate()
    holder = relay_log.subscribe(F1)
    with pytest.raises(BinlogError, match="in use"):
        relay_log.remove_all()
    holder.release()
    before = relay_log.end.get()
    assert relay_log.remove_all() == [F1, F2, F3]
    assert relay_log.files() == []
    assert list(relay_log.directory.iterdir()) == [relay_log.index.index_path]
    assert relay_log.index.index_path.read_text() == ""
    assert relay_log.end.get() > before
    with new_writer(relay_log) as writer:
        assert writer.file_name == F1
        writer.append(make_event(payload=b"fresh"))
    with RelayLogReader(relay_log) as reader:
        assert list(reader)[-1].data.endswith(b"fresh")
