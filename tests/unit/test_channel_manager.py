"""The ChannelManager with in-test components: start, stop and join, exits, shutdown.

Each fake component runs one real thread that waits on an Event; tests coordinate with
Events only (no sleeps).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from spark_replica.applier_core.channels.components import (
    Components,
    Credentials,
    RunningThreads,
    ThreadContext,
)
from spark_replica.applier_core.channels.config import (
    ApplierSettings,
    ApplierVersion,
    ChannelConfig,
    SourceConnection,
    ThreadType,
    Until,
    UntilKind,
)
from spark_replica.applier_core.channels.manager import ChannelManager
from spark_replica.applier_core.channels.status import ErrorInfo
from spark_replica.applier_core.errors import ReplicaError
from spark_replica.applier_core.settings import SystemVariables

WAIT = 10.0


class FakeThreads:
    """One real thread that runs until asked to stop, or ends by itself with an error."""

    def __init__(self, context: ThreadContext, name: str, *, exit_at_once: bool) -> None:
        self.context = context
        self.name = name
        self.started = threading.Event()
        self.exit_reported = threading.Event()
        self._wake = threading.Event()
        self._stop = False
        self._fail = exit_at_once
        self._error: ErrorInfo | None = ErrorInfo.now(1062, "dup at start")
        self.stop_calls = 0
        self.thread = threading.Thread(target=self._run, name=name)
        self.thread.start()

    def _run(self) -> None:
        self.started.set()
        while True:
            if self._stop:
                return
            if self._fail:
                self.context.exited(self._error)
                self.exit_reported.set()
                return
            self._wake.wait()
            self._wake.clear()

    def request_exit(self, number: int, message: str) -> None:
        """Ask the group to end by itself, as an applier that hit an error does."""
        self._error = ErrorInfo.now(number, message) if number else None
        self._fail = True
        self._wake.set()

    def fail(self, number: int, message: str) -> None:
        """End by itself and wait until the end was reported."""
        self.request_exit(number, message)
        assert self.exit_reported.wait(WAIT)

    def stop(self) -> None:
        self.stop_calls += 1
        self._stop = True
        self._wake.set()
        self.thread.join(WAIT)
        assert not self.thread.is_alive()


class FakeComponents:
    """Factories for both appliers and the receiver; they remember what they started."""

    def __init__(self, *, exit_at_once: bool = False) -> None:
        self.exit_at_once = exit_at_once
        self.started: list[FakeThreads] = []
        self.contexts: list[ThreadContext] = []

    def _start(self, context: ThreadContext, role: str) -> RunningThreads:
        self.contexts.append(context)
        handle = FakeThreads(
            context, f"fake-{role}-{context.config.name}", exit_at_once=self.exit_at_once
        )
        self.started.append(handle)
        if self.exit_at_once:
            # The group has ended (and reported it) before this start call returns.
            assert handle.exit_reported.wait(WAIT)
        else:
            assert handle.started.wait(WAIT)
        return handle

    def start_applier(self, context: ThreadContext) -> RunningThreads:
        return self._start(context, "applier")

    def start_receiver(self, context: ThreadContext) -> RunningThreads:
        return self._start(context, "receiver")

    def components(self) -> Components:
        return Components(
            appliers={ApplierVersion.MTA: self, ApplierVersion.CSA: self}, receiver=self
        )


CONFIG = ChannelConfig("c1", SourceConnection(host="h"), ApplierSettings())


def _thread_names() -> set[str]:
    return {thread.name for thread in threading.enumerate()}


@pytest.fixture
def fake() -> FakeComponents:
    return FakeComponents()


@pytest.fixture
def manager(
    fake: FakeComponents, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ChannelManager]:
    result = ChannelManager(fake.components(), SystemVariables(), str(tmp_path_factory.mktemp("d")))
    yield result
    result.shutdown()


# -- start and stop ---------------------------------------------------------------------------


def test_start_and_stop_join_the_threads(manager: ChannelManager, fake: FakeComponents) -> None:
    channel = manager.add(CONFIG)
    manager.start(channel, ThreadType.IO)
    manager.start(channel, ThreadType.SQL)
    receiver, applier = fake.started
    assert (receiver.name, applier.name) == ("fake-receiver-c1", "fake-applier-c1")
    assert {"fake-receiver-c1", "fake-applier-c1"} <= _thread_names()
    assert channel.io_running and channel.sql_running
    status = channel.status.snapshot()
    assert status.io_thread_id is not None
    assert status.sql_thread_id is not None
    assert status.io_thread_id != status.sql_thread_id
    assert status.io_connecting is True

    assert manager.stop(channel, ThreadType.SQL) is True
    assert not applier.thread.is_alive()
    assert applier.stop_calls == 1
    assert channel.sql_running is False
    assert channel.io_running is True
    assert channel.status.snapshot().sql_thread_id is None

    assert manager.stop(channel, ThreadType.IO) is True
    assert not receiver.thread.is_alive()
    status = channel.status.snapshot()
    assert (status.io_thread_id, status.io_connecting) == (None, False)
    assert not {"fake-receiver-c1", "fake-applier-c1"} & _thread_names()


def test_stop_of_a_stopped_thread_returns_false(manager: ChannelManager) -> None:
    channel = manager.add(CONFIG)
    assert manager.stop(channel, ThreadType.SQL) is False
    assert manager.stop(channel, ThreadType.IO) is False


def test_context_carries_config_until_and_credentials(
    manager: ChannelManager, fake: FakeComponents
) -> None:
    channel = manager.add(CONFIG)
    until = Until(UntilKind.SQL_AFTER_GTIDS, gtids="u:1-3")
    credentials = Credentials(user="repl", password="pw")
    manager.start(channel, ThreadType.SQL, until=until)
    manager.start(channel, ThreadType.IO, credentials=credentials)
    applier_context, receiver_context = fake.contexts
    assert applier_context.config is CONFIG
    assert applier_context.until == until
    assert applier_context.credentials == Credentials()
    assert applier_context.status is channel.status
    assert applier_context.settings is manager.settings
    assert receiver_context.credentials == credentials
    assert receiver_context.data_dir == manager.data_dir


def test_thread_ids_are_new_on_each_start(manager: ChannelManager) -> None:
    channel = manager.add(CONFIG)
    manager.start(channel, ThreadType.SQL)
    first = channel.status.snapshot().sql_thread_id
    manager.stop(channel, ThreadType.SQL)
    manager.start(channel, ThreadType.SQL)
    second = channel.status.snapshot().sql_thread_id
    assert first is not None and second is not None
    assert second > first


def test_applier_is_chosen_by_version(tmp_path_factory: pytest.TempPathFactory) -> None:
    mta, csa = FakeComponents(), FakeComponents()
    components = Components(appliers={ApplierVersion.MTA: mta, ApplierVersion.CSA: csa})
    manager = ChannelManager(components, SystemVariables(), str(tmp_path_factory.mktemp("d")))
    try:
        csa_config = ChannelConfig(
            "c2", applier=ApplierSettings(applier_version=ApplierVersion.CSA)
        )
        manager.start(manager.add(csa_config), ThreadType.SQL)
        manager.start(manager.add(CONFIG), ThreadType.SQL)
        assert [t.name for t in csa.started] == ["fake-applier-c2"]
        assert [t.name for t in mta.started] == ["fake-applier-c1"]
    finally:
        manager.shutdown()


# -- missing components -----------------------------------------------------------------------


def test_start_sql_without_applier_is_1235(tmp_path_factory: pytest.TempPathFactory) -> None:
    manager = ChannelManager(Components(), SystemVariables(), str(tmp_path_factory.mktemp("d")))
    channel = manager.add(CONFIG)
    with pytest.raises(ReplicaError) as caught:
        manager.start(channel, ThreadType.SQL)
    assert (caught.value.code, caught.value.sqlstate) == (1235, "42000")
    assert caught.value.message == (
        "This version of MySQL doesn't yet support 'START REPLICA SQL_THREAD FOR CHANNEL 'c1' "
        "with APPLIER_VERSION=1: no such applier is installed in this server'"
    )
    assert channel.sql_running is False
    assert channel.status.snapshot().sql_thread_id is None
    manager.shutdown()


def test_start_io_without_receiver_is_1235(
    fake: FakeComponents, tmp_path_factory: pytest.TempPathFactory
) -> None:
    components = Components(appliers={ApplierVersion.MTA: fake})
    manager = ChannelManager(components, SystemVariables(), str(tmp_path_factory.mktemp("d")))
    channel = manager.add(CONFIG)
    with pytest.raises(ReplicaError) as caught:
        manager.start(channel, ThreadType.IO)
    assert caught.value.code == 1235
    assert caught.value.message == (
        "This version of MySQL doesn't yet support 'START REPLICA IO_THREAD FOR CHANNEL 'c1': "
        "no receiver is installed in this server'"
    )
    status = channel.status.snapshot()
    assert (status.io_thread_id, status.io_connecting) == (None, False)
    assert channel.io_running is False
    manager.shutdown()


def test_start_csa_without_csa_applier_is_1235(
    fake: FakeComponents, tmp_path_factory: pytest.TempPathFactory
) -> None:
    components = Components(appliers={ApplierVersion.MTA: fake}, receiver=fake)
    manager = ChannelManager(components, SystemVariables(), str(tmp_path_factory.mktemp("d")))
    channel = manager.add(
        ChannelConfig("c1", applier=ApplierSettings(applier_version=ApplierVersion.CSA))
    )
    with pytest.raises(ReplicaError) as caught:
        manager.start(channel, ThreadType.SQL)
    assert caught.value.code == 1235
    assert "with APPLIER_VERSION=2: no such applier is installed" in caught.value.message
    assert channel.status.snapshot().sql_thread_id is None
    assert fake.started == []
    manager.shutdown()


class _Refusing:
    def start_applier(self, context: ThreadContext) -> RunningThreads:
        raise ReplicaError(1105, "cannot start")


def test_a_start_that_raises_leaves_no_thread_id(tmp_path_factory: pytest.TempPathFactory) -> None:
    components = Components(appliers={ApplierVersion.MTA: _Refusing()})
    manager = ChannelManager(components, SystemVariables(), str(tmp_path_factory.mktemp("d")))
    channel = manager.add(CONFIG)
    with pytest.raises(ReplicaError, match="cannot start"):
        manager.start(channel, ThreadType.SQL)
    assert channel.status.snapshot().sql_thread_id is None
    assert channel.sql_running is False
    manager.shutdown()


# -- a group that ends by itself --------------------------------------------------------------


def test_exit_with_an_error_leaves_the_channel_stopped_with_it(
    manager: ChannelManager, fake: FakeComponents
) -> None:
    channel = manager.add(CONFIG)
    manager.start(channel, ThreadType.IO)
    manager.start(channel, ThreadType.SQL)
    receiver, applier = fake.started
    applier.fail(1062, "dup")
    assert channel.sql_running is False
    assert channel.io_running is True
    status = channel.status.snapshot()
    assert status.sql_thread_id is None
    assert (status.sql_error.number, status.sql_error.message) == (1062, "dup")
    assert status.sql_error.timestamp > 0
    assert status.io_thread_id is not None
    # The ended group is joined by the next operation on the channel.
    assert manager.stop(channel, ThreadType.SQL) is False
    assert applier.stop_calls == 1
    assert not applier.thread.is_alive()
    assert channel.status.snapshot().sql_error.number == 1062
    assert receiver.stop_calls == 0


def test_receiver_exit_with_an_error(manager: ChannelManager, fake: FakeComponents) -> None:
    channel = manager.add(CONFIG)
    manager.start(channel, ThreadType.IO)
    (receiver,) = fake.started
    receiver.fail(13122, "Relay log write failure: disk full")
    status = channel.status.snapshot()
    assert channel.io_running is False
    assert (status.io_thread_id, status.io_connecting) == (None, False)
    assert (status.io_error.number, status.io_error.message) == (
        13122,
        "Relay log write failure: disk full",
    )


def test_exit_without_an_error_reports_none(manager: ChannelManager, fake: FakeComponents) -> None:
    channel = manager.add(CONFIG)
    manager.start(channel, ThreadType.SQL)
    (applier,) = fake.started
    applier.fail(0, "")
    status = channel.status.snapshot()
    assert channel.sql_running is False
    assert status.sql_thread_id is None
    assert status.sql_error == ErrorInfo()


def test_restart_after_an_exit_clears_the_error_and_joins_the_old_group(
    manager: ChannelManager, fake: FakeComponents
) -> None:
    channel = manager.add(CONFIG)
    manager.start(channel, ThreadType.SQL)
    first = fake.started[0]
    first.fail(1032, "missing row")
    manager.start(channel, ThreadType.SQL)
    assert first.stop_calls == 1
    assert not first.thread.is_alive()
    assert channel.sql_running is True
    status = channel.status.snapshot()
    assert status.sql_error == ErrorInfo()
    assert status.sql_thread_id is not None


def test_exit_before_start_returns(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The group ends and calls ``exited`` while ``start_applier`` is still running."""
    fake = FakeComponents(exit_at_once=True)
    manager = ChannelManager(
        fake.components(), SystemVariables(), str(tmp_path_factory.mktemp("d"))
    )
    channel = manager.add(CONFIG)
    manager.start(channel, ThreadType.SQL)
    (applier,) = fake.started
    assert channel.sql_running is False
    status = channel.status.snapshot()
    assert status.sql_thread_id is None
    assert (status.sql_error.number, status.sql_error.message) == (1062, "dup at start")
    # STOP finds nothing running but joins the group that ended.
    assert manager.stop(channel, ThreadType.SQL) is False
    assert applier.stop_calls == 1
    assert not applier.thread.is_alive()
    # A later start is not confused by the earlier early exit.
    fake.exit_at_once = False
    manager.start(channel, ThreadType.SQL)
    assert channel.sql_running is True
    manager.shutdown()
    assert channel.sql_running is False


def test_remove_joins_an_ended_group(manager: ChannelManager, fake: FakeComponents) -> None:
    channel = manager.add(CONFIG)
    manager.start(channel, ThreadType.SQL)
    (applier,) = fake.started
    applier.fail(1062, "dup")
    manager.remove("c1")
    assert manager.get("c1") is None
    assert applier.stop_calls == 1
    assert not applier.thread.is_alive()


# -- channels and shutdown --------------------------------------------------------------------


def test_channels_in_creation_order(manager: ChannelManager) -> None:
    for name in ("b", "a", "c"):
        manager.add(ChannelConfig(name))
    assert [channel.name for channel in manager] == ["b", "a", "c"]
    assert len(manager) == 3
    manager.remove("a")
    manager.remove("missing")
    assert [channel.name for channel in manager] == ["b", "c"]
    assert repr(manager.get("b")) == "Channel('b', io=False, sql=False)"


def test_shutdown_stops_everything_and_is_idempotent(
    manager: ChannelManager, fake: FakeComponents
) -> None:
    channels = [manager.add(ChannelConfig(name, SourceConnection(host="h"))) for name in "xyz"]
    for channel in channels:
        manager.start(channel, ThreadType.IO)
        manager.start(channel, ThreadType.SQL)
    assert len(fake.started) == 6
    manager.shutdown()
    assert all(not handle.thread.is_alive() for handle in fake.started)
    assert all(handle.stop_calls == 1 for handle in fake.started)
    assert all(not (c.io_running or c.sql_running) for c in channels)
    manager.shutdown()
    assert all(handle.stop_calls == 1 for handle in fake.started)


def test_start_after_shutdown_is_refused(manager: ChannelManager, fake: FakeComponents) -> None:
    channel = manager.add(CONFIG)
    manager.shutdown()
    with pytest.raises(ReplicaError) as caught:
        manager.start(channel, ThreadType.SQL)
    assert (caught.value.code, caught.value.message) == (1105, "the server is shutting down")
    assert fake.started == []


class _BrokenStop:
    def __init__(self) -> None:
        self.calls = 0

    def stop(self) -> None:
        self.calls += 1
        raise RuntimeError("stuck")


class _BrokenFactory:
    def __init__(self) -> None:
        self.handle = _BrokenStop()

    def start_receiver(self, context: ThreadContext) -> RunningThreads:
        return self.handle


def test_shutdown_goes_on_when_one_stop_fails(
    fake: FakeComponents, tmp_path_factory: pytest.TempPathFactory, caplog: pytest.LogCaptureFixture
) -> None:
    broken = _BrokenFactory()
    components = Components(appliers={ApplierVersion.MTA: fake}, receiver=broken)
    manager = ChannelManager(components, SystemVariables(), str(tmp_path_factory.mktemp("d")))
    channel = manager.add(CONFIG)
    manager.start(channel, ThreadType.IO)
    manager.start(channel, ThreadType.SQL)
    with caplog.at_level("ERROR"):
        manager.shutdown()
    assert broken.handle.calls == 1
    (applier,) = fake.started
    assert not applier.thread.is_alive()
    assert "stopping IO_THREAD of channel 'c1'" in caplog.text


def test_exit_racing_with_stop(manager: ChannelManager, fake: FakeComponents) -> None:
    """A group that reports its end while STOP runs is joined once and leaves no thread."""
    channel = manager.add(CONFIG)
    manager.start(channel, ThreadType.SQL)
    (applier,) = fake.started
    barrier = threading.Barrier(2)

    def fail() -> None:
        barrier.wait()
        applier.request_exit(1062, "dup")

    racer = threading.Thread(target=fail, name="racer")
    racer.start()
    barrier.wait()
    manager.stop(channel, ThreadType.SQL)
    racer.join(WAIT)
    assert not racer.is_alive()
    manager.stop(channel, ThreadType.SQL)
    assert not applier.thread.is_alive()
    assert channel.sql_running is False
    assert channel.status.snapshot().sql_thread_id is None
