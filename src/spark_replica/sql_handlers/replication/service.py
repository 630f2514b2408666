"""Executes replication statements against the channels and the metadata store.

Every statement runs under the channel manager's lock, validates everything before it changes
anything, and stores its changes in one metadata transaction before the in-memory channel is
updated, so a rejected or failed statement leaves no trace.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.channels.components import Credentials
from spark_replica.applier_core.channels.config import (
    DEFAULT_CHANNEL,
    MAX_CHANNELS,
    AnonymousGtids,
    ApplierSettings,
    ApplierVersion,
    ChannelConfig,
    ThreadType,
    UntilKind,
    valid_channel_name,
)
from spark_replica.applier_core.channels.manager import Channel, ChannelManager
from spark_replica.applier_core.channels.status import ErrorInfo
from spark_replica.applier_core.channels.store import ChannelChanges, ChannelStore
from spark_replica.applier_core.errors import Diagnostic, ErrorCode, Level, ReplicaError
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.receiver.retrieved import retrieved_gtids
from spark_replica.applier_core.settings import SystemVariables
from spark_replica.sql_handlers.parser.statements import (
    ChangeSource,
    ResetReplica,
    StartReplica,
    StopReplica,
)
from spark_replica.sql_handlers.replication.change_source import Environment, change_source

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class Done:
    """The outcome of a statement that returns no rows."""

    warnings: list[Diagnostic] = field(default_factory=list)
    affected_rows: int = 0


class ReplicationService:
    """CHANGE REPLICATION SOURCE, START/STOP/RESET REPLICA over one channel manager."""

    def __init__(
        self, manager: ChannelManager, store: ChannelStore, settings: SystemVariables
    ) -> None:
        self.manager = manager
        self.store = store
        self.settings = settings

    def load(self) -> None:
        """Create the channels the metadata store holds, plus the default channel, each with
        the Retrieved_Gtid_Set its relay log holds."""
        with self.manager.lock:
            for config in self.store.load_channels():
                self._recover_retrieved(self.manager.add(config))
            if self.manager.get(DEFAULT_CHANNEL) is None:
                self.manager.add(self._new_channel_config(DEFAULT_CHANNEL))

    def _recover_retrieved(self, channel: Channel) -> None:
        """Retrieved_Gtid_Set after a restart, read back from the channel's relay log. A
        relay log that cannot be read leaves it empty (START REPLICA reports why)."""
        relay_logs = self.manager.relay_logs
        if not relay_logs.exists(channel.name):
            return
        try:
            gtids = retrieved_gtids(relay_logs.get(channel.name))
        except (ReplicaError, BinlogError, OSError) as exc:
            message = exc.message if isinstance(exc, ReplicaError) else str(exc)
            logger.warning("channel '%s': Retrieved_Gtid_Set not recovered from its relay "
                           "log: %s", channel.name, message)  # fmt: skip
            return
        channel.status.update(received_transaction_set=gtids.format(","))

    def start_with_server(self) -> list[str]:
        """skip_replica_start=OFF, at server start: every channel with a source configured
        starts both threads, as START REPLICA FOR CHANNEL does (whether or not it ran
        before the server stopped, as in MySQL). A channel that cannot start is logged and
        left stopped: the server starts anyway. Returns the channels started."""
        started = []
        for channel in list(self.manager):
            if not channel.config.connection.configured:
                continue
            both = frozenset({ThreadType.IO, ThreadType.SQL})
            statement = StartReplica(both, None, None, None, None, None, channel.name)
            try:
                self.start_replica(statement)
            except ReplicaError as exc:
                logger.error("Replica channel '%s' did not start with the server: %s",
                             channel.name, exc.message)  # fmt: skip
                continue
            started.append(channel.name)
        return started

    def _new_channel_config(self, name: str) -> ChannelConfig:
        workers = self.settings.get_int("replica_parallel_workers")
        return ChannelConfig(name, applier=ApplierSettings(applier_worker_count=workers))

    def _check_initialised(self) -> None:
        if self.settings.get_int("server_id") == 0:
            raise ReplicaError.from_code(ErrorCode.REPLICA_CONFIGURATION)

    def _channel(self, name: str) -> Channel:
        channel = self.manager.get(name)
        if channel is None:
            raise ReplicaError.from_code(ErrorCode.REPLICA_CHANNEL_DOES_NOT_EXIST, name)
        return channel

    def _targets(self, name: str | None) -> list[Channel]:
        """The named channel, or every channel when no FOR CHANNEL was given."""
        if name is not None:
            return [self._channel(name)]
        return list(self.manager)

    # -- CHANGE REPLICATION SOURCE TO ----------------------------------------------------------
    def change_source(self, statement: ChangeSource, *, client_uses_tls: bool) -> Done:
        """https://dev.mysql.com/doc/refman/8.4/en/change-replication-source-to.html"""
        with self.manager.lock:
            self._check_initialised()
            name = statement.channel
            if name is None:
                if len(self.manager) > 1:
                    raise ReplicaError.from_code(ErrorCode.REPLICA_MULTIPLE_CHANNELS_CMD)
                name = DEFAULT_CHANNEL
            channel = self.manager.get(name)
            if channel is None:
                if len(self.manager) >= MAX_CHANNELS:
                    raise ReplicaError.from_code(ErrorCode.REPLICA_MAX_CHANNELS_EXCEEDED)
                if not valid_channel_name(name):
                    raise ReplicaError.from_code(ErrorCode.REPLICA_CHANNEL_NAME_INVALID_OR_TOO_LONG)
                current = self._new_channel_config(name)
            else:
                current = channel.config
            env = Environment(
                io_running=channel is not None and channel.io_running,
                sql_running=channel is not None and channel.sql_running,
                gtid_mode=self.settings.get_str("gtid_mode"),
                replica_net_timeout=self.settings.get_int("replica_net_timeout"),
                replica_max_allowed_packet=self.settings.get_int("replica_max_allowed_packet"),
                client_uses_tls=client_uses_tls,
                stopped_with_gaps=channel is not None
                and any(w.has_gaps for w in self.store.load_worker_info(name)),
            )
            outcome = change_source(statement, current, env)
            clear = () if env.sql_running else (name,)
            self.store.apply_channel_changes(
                ChannelChanges(save=(outcome.config,), clear_workers=clear)
            )
            if channel is None:
                channel = self.manager.add(outcome.config)
            else:
                channel.config = outcome.config
            channel.status.clear_errors()
            if outcome.source_changed:
                channel.status.update(count_received_heartbeats=0, last_heartbeat=0.0)
            if not env.sql_running:
                channel.status.set_workers([])
            return Done(outcome.warnings)

    # -- START REPLICA -------------------------------------------------------------------------
    def start_replica(self, statement: StartReplica) -> Done:
        """https://dev.mysql.com/doc/refman/8.4/en/start-replica.html"""
        with self.manager.lock:
            self._check_initialised()
            if statement.until is not None and statement.channel is None and len(self.manager) > 1:
                raise ReplicaError.from_code(ErrorCode.REPLICA_MULTIPLE_CHANNELS_CMD)
            warnings = list(statement.warnings)
            targets = self._targets(statement.channel)
            if statement.channel is None:
                configured = [c for c in targets if c.config.connection.configured]
                targets = configured or [self._channel(DEFAULT_CHANNEL)]
            plans = [(c, self._start_plan(c, statement, warnings)) for c in targets]
            skip = self._skip_counter(plans)
            credentials = Credentials(
                statement.user, statement.password, statement.default_auth, statement.plugin_dir
            )
            for channel, threads in plans:
                for thread in threads:
                    until = statement.until if thread is ThreadType.SQL else None
                    self.manager.start(channel, thread, until=until, credentials=credentials)
            if skip:
                self.settings.apply({"sql_replica_skip_counter": 0})  # the SQL thread took it
            return Done(warnings)

    def _skip_counter(self, plans: list[tuple[Channel, list[ThreadType]]]) -> int:
        """sql_replica_skip_counter for the SQL thread about to start: 3086 when several
        start; 1235 for a channel assigning GTIDs to anonymous transactions, whose event
        groups the appliers cannot skip. A GTID channel takes it without effect, as in
        MySQL (with GTIDs, skip by committing an empty transaction: SET GTID_NEXT)."""
        skip = self.settings.get_int("sql_replica_skip_counter")
        starting = [c for c, threads in plans if ThreadType.SQL in threads]
        if not skip or not starting:
            return 0
        if len(starting) > 1:
            raise ReplicaError.from_code(ErrorCode.REPLICA_CHANNEL_SQL_SKIP_COUNTER)
        if starting[0].config.applier.assign_gtids_type is not AnonymousGtids.OFF:
            raise ReplicaError.from_code(
                ErrorCode.NOT_SUPPORTED_YET,
                "sql_replica_skip_counter with ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS",
            )
        return skip

    def _start_plan(
        self, channel: Channel, statement: StartReplica, warnings: list[Diagnostic]
    ) -> list[ThreadType]:
        """Check that ``channel`` may start; the threads to start, IO first."""
        config = channel.config
        if not config.connection.configured:
            raise ReplicaError.from_code(ErrorCode.BAD_REPLICA)
        until = statement.until
        is_csa = config.applier.applier_version is ApplierVersion.CSA
        if until is not None:
            if is_csa and until.kind not in (UntilKind.SQL_BEFORE_GTIDS, UntilKind.SQL_AFTER_GTIDS):
                raise ReplicaError.from_code(ErrorCode.CSA_UNSUPPORTED_UNTIL_COND, channel.name)
            if until.kind in (UntilKind.SQL_BEFORE_GTIDS, UntilKind.SQL_AFTER_GTIDS):
                GtidSet.parse(until.gtids)
        gtid_mode = self.settings.get_str("gtid_mode")
        anonymous = config.applier.assign_gtids_type is not AnonymousGtids.OFF
        if anonymous and gtid_mode != "ON":
            raise ReplicaError.from_code(
                ErrorCode.CANT_USE_ANONYMOUS_TO_GTID_WITH_GTID_MODE_NOT_ON,
                f" for channel '{channel.name}'",
            )
        if (
            anonymous
            and until is not None
            and until.kind in (UntilKind.SQL_BEFORE_GTIDS, UntilKind.SQL_AFTER_GTIDS)
        ):
            raise ReplicaError.from_code(
                ErrorCode.CANT_SET_SQL_AFTER_OR_BEFORE_GTIDS_WITH_ANONYMOUS_TO_GTID
            )
        requested = [t for t in (ThreadType.IO, ThreadType.SQL) if t in statement.threads]
        if ThreadType.IO in requested:
            if config.connection.auto_position and gtid_mode == "OFF":
                raise ReplicaError.from_code(
                    ErrorCode.CANT_USE_AUTO_POSITION_WITH_GTID_MODE_OFF,
                    f" for channel '{channel.name}'",
                )
        if config.connection.gtid_only and gtid_mode != "ON":
            raise ReplicaError.from_code(
                ErrorCode.CANT_USE_GTID_ONLY_WITH_GTID_MODE_NOT_ON, f" for channel '{channel.name}'"
            )
        if (
            ThreadType.SQL in requested
            and not is_csa
            and self.settings.get_str("replica_parallel_type") == "DATABASE"
            and self.settings.get_int("replica_preserve_commit_order")
            and self.settings.get_int("replica_parallel_workers") > 0
        ):
            raise ReplicaError.from_code(
                ErrorCode.DONT_SUPPORT_REPLICA_PRESERVE_COMMIT_ORDER,
                "when replica_parallel_type is DATABASE",
            )
        to_start = [t for t in requested if not channel.is_running(t)]
        for thread in to_start:
            self._check_installed(channel, thread)
        if not to_start:
            warnings.append(
                Diagnostic.of(Level.NOTE, ErrorCode.REPLICA_CHANNEL_WAS_RUNNING, channel.name)
            )
        if until is not None and ThreadType.SQL not in to_start:
            warnings.append(Diagnostic.of(Level.NOTE, ErrorCode.UNTIL_COND_IGNORED))
        return to_start

    def _check_installed(self, channel: Channel, thread: ThreadType) -> None:
        components = self.manager.components
        if thread is ThreadType.SQL:
            version = channel.config.applier.applier_version
            if version not in components.appliers:
                raise ReplicaError.from_code(
                    ErrorCode.NOT_SUPPORTED_YET,
                    f"START REPLICA SQL_THREAD FOR CHANNEL '{channel.name}' with APPLIER_VERSION="
                    f"{int(version)}: no such applier is installed in this server",
                )
        elif components.receiver is None:
            raise ReplicaError.from_code(
                ErrorCode.NOT_SUPPORTED_YET,
                f"START REPLICA IO_THREAD FOR CHANNEL '{channel.name}': no receiver is installed "
                "in this server",
            )

    # -- STOP REPLICA --------------------------------------------------------------------------
    def stop_replica(self, statement: StopReplica) -> Done:
        """https://dev.mysql.com/doc/refman/8.4/en/stop-replica.html"""
        with self.manager.lock:
            self._check_initialised()
            warnings = list(statement.warnings)
            for channel in self._targets(statement.channel):
                stopped = False
                for thread in (ThreadType.IO, ThreadType.SQL):
                    if thread in statement.threads:
                        stopped = self.manager.stop(channel, thread) or stopped
                if not stopped and (
                    statement.channel is not None or channel.config.connection.configured
                ):
                    warnings.append(
                        Diagnostic.of(
                            Level.NOTE, ErrorCode.REPLICA_CHANNEL_WAS_NOT_RUNNING, channel.name
                        )
                    )
            return Done(warnings)

    # -- RESET REPLICA -------------------------------------------------------------------------
    def reset_replica(self, statement: ResetReplica) -> Done:
        """https://dev.mysql.com/doc/refman/8.4/en/reset-replica.html"""
        with self.manager.lock:
            self._check_initialised()
            targets = self._targets(statement.channel)
            for channel in targets:
                if channel.io_running or channel.sql_running:
                    raise ReplicaError.from_code(ErrorCode.REPLICA_CHANNEL_MUST_STOP, channel.name)
            ordered = sorted(targets, key=lambda c: c.name != DEFAULT_CHANNEL)
            for channel in ordered:  # MySQL deletes the relay logs first, and stops on failure
                self.manager.reset_relay_log(channel.name)
            new_configs = {c.name: self._after_reset(c, everything=statement.all) for c in ordered}
            # A default channel without a source has no metadata rows, as in MySQL.
            self.store.apply_channel_changes(
                ChannelChanges(
                    save=tuple(
                        cfg
                        for cfg in new_configs.values()
                        if cfg is not None
                        and (cfg.name != DEFAULT_CHANNEL or cfg.connection.configured)
                    ),
                    delete=tuple(new_configs) if statement.all else (),
                    clear_workers=tuple(new_configs),
                )
            )
            for channel in ordered:
                config = new_configs[channel.name]
                if config is None:
                    self.manager.remove(channel.name)
                    continue
                channel.config = config
                channel.status.reset()
            return Done(list(statement.warnings))

    def _after_reset(self, channel: Channel, *, everything: bool) -> ChannelConfig | None:
        """The configuration after RESET REPLICA [ALL]; None when the channel goes away.

        RESET keeps the connection settings and the applier options but forgets positions
        and resets SOURCE_DELAY; RESET ALL deletes a named channel and empties the default
        one, whose APPLIER_* settings go back to their defaults (INT.0014, INT.0025, INT.0036).
        """
        if everything:
            if channel.name != DEFAULT_CHANNEL:
                return None
            return self._new_channel_config(DEFAULT_CHANNEL)
        config = channel.config
        connection = replace(
            config.connection, source_log_file="", source_log_pos=4, source_uuid=""
        )
        applier = replace(config.applier, sql_delay=0, relay_log_file="", relay_log_pos=4)
        return ChannelConfig(channel.name, connection, applier)

    def check_skip_counter(self) -> None:
        """SET GLOBAL sql_replica_skip_counter > 0: 1858 with GTID_MODE=ON unless a channel
        assigns GTIDs to anonymous transactions (the only transactions it could skip)."""
        if self.settings.get_str("gtid_mode") != "ON":
            return
        with self.manager.lock:
            if not any(c.config.applier.assign_gtids_type is not AnonymousGtids.OFF
                       for c in self.manager):  # fmt: skip
                raise ReplicaError.from_code(
                    ErrorCode.SQL_REPLICA_SKIP_COUNTER_NOT_SETTABLE_IN_GTID_MODE
                )

    def check_gtid_mode_change(self, new_mode: str) -> None:
        """Refuse a GTID_MODE that a channel's configuration cannot run with (3111)."""
        with self.manager.lock:
            for channel in self.manager:
                connection = channel.config.connection
                applier = channel.config.applier
                reason = None
                if new_mode != "ON" and connection.gtid_only:
                    reason = f"replication channel '{channel.name}' has GTID_ONLY = 1"
                elif new_mode != "ON" and applier.assign_gtids_type is not AnonymousGtids.OFF:
                    reason = (
                        f"replication channel '{channel.name}' is configured with "
                        "ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS"
                    )
                elif new_mode == "OFF" and connection.auto_position:
                    reason = (
                        f"replication channel '{channel.name}' is configured in "
                        "SOURCE_AUTO_POSITION mode"
                    )
                if reason is not None:
                    raise ReplicaError.from_code(ErrorCode.CANT_SET_GTID_MODE, new_mode, reason)

    def record_applier_error(self, channel: Channel, number: int, message: str) -> None:
        """Show an applier failure in SHOW REPLICA STATUS (used by appliers' exit path)."""
        channel.status.update(sql_error=ErrorInfo.now(number, message))
