"""The open relay logs of the channels: one ``RelayLog`` per channel and process.

A channel's receiver writes its relay log and its applier reads it; both must use the same
``RelayLog`` object, whose published end position tells readers what they may read. The
registry opens a channel's relay log the first time a thread asks for it (recovering it after
a crash) and keeps it open until the channel is removed or the server stops.

Two things come from the server and reach every relay log it opens: ``relay_log_purge``, asked
at each purge so SET GLOBAL takes effect at once, and a listener told each relay log's space
(Relay_Log_Space) whenever it changes.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.binlog.relaylog import RelayLog
from spark_replica.applier_core.binlog.relaylog.index import (
    INDEX_SUFFIX,
    RelayLogIndex,
    relay_log_base_name,
    relay_log_directory,
)
from spark_replica.applier_core.binlog.relaylog.seal import remove_seal, seal_path
from spark_replica.applier_core.errors import ErrorCode, ReplicaError


class RelayLogs:
    """Every open relay log, by channel name. Thread-safe."""

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        *,
        purge_enabled: Callable[[], bool] | None = None,
        on_space: Callable[[str, int], None] | None = None,
    ) -> None:
        """``purge_enabled`` is ``relay_log_purge`` (default: on); ``on_space(channel,
        total)`` is called with a channel's relay log space when it changes."""
        self.data_dir = os.fspath(data_dir)
        self._purge_enabled = purge_enabled or (lambda: True)
        self._on_space = on_space
        # _lock guards _open; opening happens under it, so a relay log is opened once.
        self._lock = threading.Lock()
        self._open: dict[str, RelayLog] = {}

    def get(self, channel: str) -> RelayLog:
        """The channel's relay log, opened (and recovered) on first use.

        Raises:
            ReplicaError: ER_RELAY_LOG_INIT (1380), the relay log cannot be recovered (a
                file the index lists is missing, a file is not a binary log) or its directory
                cannot be read or written (a full disk).
        """
        with self._lock:
            found = self._open.get(channel)
            if found is None:
                found = RelayLog.for_channel(self.data_dir, channel,
                                             purge_enabled=self._purge_enabled)  # fmt: skip
                try:
                    found.open()
                except (BinlogError, OSError) as exc:
                    raise ReplicaError.from_code(ErrorCode.RELAY_LOG_INIT, str(exc)) from exc
                self._open[channel] = found
                on_space = self._on_space
                if on_space is not None:
                    found.space.watch(lambda total: on_space(channel, total))
            return found

    def exists(self, channel: str) -> bool:
        """Whether the channel has a relay log on disk (its index file), opened or not."""
        directory = relay_log_directory(self.data_dir, channel)
        return (directory / f"{relay_log_base_name(channel)}{INDEX_SUFFIX}").exists()

    def reset(self, channel: str) -> list[str]:
        """RESET REPLICA: delete the channel's relay log files; the receiver's next write
        starts ``<base>.000001``. Returns the names removed (none when the channel never
        had a relay log). Its threads must be stopped. A relay log that cannot be opened
        (``get`` fails) is deleted without being read: that is the DBA's way out of it.

        Raises:
            ReplicaError: ER_RELAY_LOG_FAIL (1371), the files cannot be removed.
        """
        if not self.exists(channel):
            return []
        directory = relay_log_directory(self.data_dir, channel)
        base_name = relay_log_base_name(channel)
        try:
            relay_log = self.get(channel)
        except ReplicaError:
            relay_log = None
        try:
            if relay_log is None:
                remove_seal(seal_path(directory, base_name))
                return RelayLogIndex(directory, base_name).discard()
            return relay_log.remove_all()
        except (BinlogError, OSError) as exc:
            raise ReplicaError.from_code(ErrorCode.RELAY_LOG_FAIL, str(exc)) from exc

    def close(self, channel: str) -> None:
        """Close the channel's relay log if it is open (its threads are stopped)."""
        with self._lock:
            found = self._open.pop(channel, None)
        if found is not None:
            found.close()

    def close_all(self) -> None:
        """Close every relay log; the server's shutdown path. Idempotent."""
        with self._lock:
            found, self._open = list(self._open.values()), {}
        for relay_log in found:
            relay_log.close()
