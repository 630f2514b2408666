"""Channels and their receiver and applier threads.

The manager owns every channel's running components: it starts them through the installed
``Components``, stops and joins them, and is the one shutdown path of the replica. Statement
logic (validation, metadata) lives above it; callers serialise statements with ``lock``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from dataclasses import replace

from spark_replica.applier_core.channels.components import (
    Components,
    Credentials,
    RunningThreads,
    SourcePosition,
    ThreadContext,
)
from spark_replica.applier_core.channels.config import (
    ChannelConfig,
    ThreadType,
    Until,
)
from spark_replica.applier_core.channels.relay_logs import RelayLogs
from spark_replica.applier_core.channels.status import (
    ErrorInfo,
    StatusBoard,
    next_thread_id,
)
from spark_replica.applier_core.channels.store import ChannelStore, Checkpoint, WorkerInfo
from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.progress import ExecutedGtids
from spark_replica.applier_core.settings import SystemVariables

logger = logging.getLogger(__name__)


class Channel:
    """One replication channel: its configuration, status and running threads."""

    def __init__(self, config: ChannelConfig) -> None:
        self.config = config
        self.status = StatusBoard()
        # _lock guards _running, _exited and _early_exits.
        self._lock = threading.Lock()
        self._running: dict[ThreadType, RunningThreads] = {}
        self._exited: list[RunningThreads] = []
        self._early_exits: set[ThreadType] = set()

    @property
    def name(self) -> str:
        return self.config.name

    def is_running(self, thread: ThreadType) -> bool:
        with self._lock:
            return thread in self._running

    @property
    def io_running(self) -> bool:
        return self.is_running(ThreadType.IO)

    @property
    def sql_running(self) -> bool:
        return self.is_running(ThreadType.SQL)

    def _attach(self, thread: ThreadType, handle: RunningThreads) -> None:
        with self._lock:
            if thread in self._early_exits:
                # The group ended before its start call returned.
                self._early_exits.discard(thread)
                self._exited.append(handle)
            else:
                self._running[thread] = handle

    def _detach(self, thread: ThreadType) -> RunningThreads | None:
        with self._lock:
            return self._running.pop(thread, None)

    def _on_exit(self, thread: ThreadType, error: ErrorInfo | None) -> None:
        """Called from a component's own thread when it ends without being asked to."""
        with self._lock:
            handle = self._running.pop(thread, None)
            if handle is not None:
                self._exited.append(handle)
            else:
                self._early_exits.add(thread)
        if thread is ThreadType.SQL:
            changes: dict[str, object] = {"sql_thread_id": None, "sql_state_text": ""}
            if error is not None:
                changes["sql_error"] = changes["coordinator_error"] = error
            self.status.update(**changes)
        else:
            changes = {"io_thread_id": None, "io_connecting": False, "io_state_text": ""}
            if error is not None:
                changes["io_error"] = error
            self.status.update(**changes)

    def _join_exited(self) -> None:
        with self._lock:
            exited, self._exited = self._exited, []
        for handle in exited:
            handle.stop()

    def __repr__(self) -> str:
        return f"Channel({self.name!r}, io={self.io_running}, sql={self.sql_running})"


class ChannelManager:
    """Every channel of the replica, in creation order."""

    def __init__(
        self,
        components: Components,
        settings: SystemVariables,
        data_dir: str,
        *,
        executed: ExecutedGtids | None = None,
        store: ChannelStore | None = None,
    ) -> None:
        self.components = components
        self.store = store
        self.settings = settings
        self.data_dir = data_dir
        self.executed = executed or ExecutedGtids.from_settings(settings)
        self.relay_logs = RelayLogs(
            data_dir,
            purge_enabled=lambda: bool(settings.get_int("relay_log_purge")),
            on_space=self._relay_log_space,
        )
        #: Statements that read or change channels hold this for their whole run.
        self.lock = threading.RLock()
        # _config_lock serialises the running threads' updates of a channel's configuration
        # (the applier's checkpoints, the receiver's positions).
        self._config_lock = threading.Lock()
        self._channels: dict[str, Channel] = {}
        self._closed = False

    def __iter__(self) -> Iterator[Channel]:
        return iter(list(self._channels.values()))

    def __len__(self) -> int:
        return len(self._channels)

    def get(self, name: str) -> Channel | None:
        return self._channels.get(name)

    def add(self, config: ChannelConfig) -> Channel:
        channel = Channel(config)
        self._channels[config.name] = channel
        return channel

    def _relay_log_space(self, name: str, total: int) -> None:
        """Relay_Log_Space follows the channel's relay log files (written, purged, reset)."""
        channel = self._channels.get(name)
        if channel is not None:
            channel.status.update(relay_log_space=total)

    def reset_relay_log(self, name: str) -> None:
        """RESET REPLICA of a stopped channel: its relay log files go (ER_RELAY_LOG_FAIL when
        they cannot)."""
        self.relay_logs.reset(name)

    def remove(self, name: str) -> None:
        channel = self._channels.pop(name, None)
        if channel is not None:
            channel._join_exited()
        self.relay_logs.close(name)

    def start(
        self,
        channel: Channel,
        thread: ThreadType,
        *,
        until: Until | None = None,
        credentials: Credentials | None = None,
    ) -> None:
        """Start one thread group of ``channel``; 1235 when no component is installed for it."""
        if self._closed:
            raise ReplicaError.from_code(ErrorCode.UNKNOWN_ERROR, "the server is shutting down")
        channel._join_exited()
        with channel._lock:
            channel._early_exits.discard(thread)
        context = ThreadContext(
            config=channel.config,
            status=channel.status,
            settings=self.settings,
            data_dir=self.data_dir,
            exited=lambda error: channel._on_exit(thread, error),
            executed=self.executed,
            relay_logs=self.relay_logs,
            until=until,
            credentials=credentials or Credentials(),
            checkpoint=lambda checkpoint: self._checkpoint(channel, checkpoint),
            source_position=lambda position: self._source_position(channel, position),
            workers=self._worker_rows(channel) if thread is ThreadType.SQL else (),
        )
        if thread is ThreadType.SQL:
            version = channel.config.applier.applier_version
            applier = self.components.appliers.get(version)
            if applier is None:
                raise _not_installed(
                    f"START REPLICA SQL_THREAD FOR CHANNEL '{channel.name}' with APPLIER_VERSION="
                    f"{int(version)}: no such applier is installed in this server"
                )
            channel.status.update(
                sql_thread_id=next_thread_id(),
                sql_error=ErrorInfo(),
                until_condition="None" if until is None else until.kind.value,
                until_log_file="" if until is None else until.log_file,
                until_log_pos=0 if until is None else until.log_pos,
            )
            try:
                handle = applier.start_applier(context)
            except BaseException:
                channel.status.update(sql_thread_id=None)
                raise
        else:
            receiver = self.components.receiver
            if receiver is None:
                raise _not_installed(
                    f"START REPLICA IO_THREAD FOR CHANNEL '{channel.name}': no receiver is "
                    "installed in this server"
                )
            channel.status.update(
                io_thread_id=next_thread_id(), io_connecting=True, io_error=ErrorInfo()
            )
            try:
                handle = receiver.start_receiver(context)
            except BaseException:
                channel.status.update(io_thread_id=None, io_connecting=False)
                raise
        channel._attach(thread, handle)

    def _worker_rows(self, channel: Channel) -> list[WorkerInfo]:
        return [] if self.store is None else self.store.load_worker_info(channel.name)

    def _checkpoint(self, channel: Channel, checkpoint: Checkpoint) -> None:
        """(The applier's thread) Move the channel's applier positions to ``checkpoint``'s
        low-water mark; with a store, save them and the worker rows in one transaction."""
        with self._config_lock:
            applier = replace(
                channel.config.applier,
                relay_log_file=checkpoint.relay_log_file,
                relay_log_pos=checkpoint.relay_log_pos,
                source_log_file=checkpoint.source_log_file,
                source_log_pos=checkpoint.source_log_pos,
            )
            config = replace(channel.config, applier=applier)
            if self.store is not None:
                self.store.save_checkpoint(config, checkpoint.workers)
            channel.config = config

    def _source_position(self, channel: Channel, position: SourcePosition) -> None:
        """(The receiver's thread) Move the channel's connection positions; when
        ``position.durable`` and with a store, save them."""
        with self._config_lock:
            connection = replace(
                channel.config.connection,
                source_log_file=position.log_file,
                source_log_pos=position.log_pos,
                source_uuid=position.source_uuid or channel.config.connection.source_uuid,
                source_server_id=position.source_server_id
                or channel.config.connection.source_server_id,
            )
            config = replace(channel.config, connection=connection)
            if position.durable and self.store is not None:
                self.store.save_channel(config)
            channel.config = config

    def stop(self, channel: Channel, thread: ThreadType) -> bool:
        """Stop and join one thread group; False when it was not running."""
        handle = channel._detach(thread)
        if handle is not None:
            handle.stop()
            if thread is ThreadType.SQL:
                channel.status.update(sql_thread_id=None, sql_state_text="")
            else:
                channel.status.update(io_thread_id=None, io_connecting=False, io_state_text="")
        channel._join_exited()
        return handle is not None

    def shutdown(self) -> None:
        """Stop every channel's threads; the one shutdown path, safe to call again."""
        with self.lock:
            self._closed = True
            for channel in self:
                for thread in (ThreadType.IO, ThreadType.SQL):
                    try:
                        self.stop(channel, thread)
                    except Exception:
                        logger.exception("stopping %s of channel %r", thread.value, channel.name)
            self.relay_logs.close_all()
            try:
                self.executed.publish()
            except ReplicaError as exc:  # the metadata store failed: nothing else to stop
                logger.error("the executed GTID set was not stored: %s", exc.message)


def _not_installed(what: str) -> ReplicaError:
    return ReplicaError.from_code(ErrorCode.NOT_SUPPORTED_YET, what)
