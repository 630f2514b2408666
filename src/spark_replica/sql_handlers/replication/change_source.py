"""CHANGE REPLICATION SOURCE TO: compute a channel's new configuration, or the first error.

https://dev.mysql.com/doc/refman/8.4/en/change-replication-source-to.html

Check order (docs/decisions/0003-change-source-check-order.md): values of single options, then
the Change Stream Applier's own checks (INT.0021, INT.0031), then running threads, then the CSA
prerequisites (INT.0060-0090) judged on the values the channel would have afterwards, then
MySQL's inter-option rules. The first failure wins; nothing is stored before all pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from spark_replica.applier_core.channels.config import (
    AnonymousGtids,
    ApplierSettings,
    ApplierVersion,
    ChannelConfig,
    PrimaryKeyCheck,
    SourceConnection,
)
from spark_replica.applier_core.errors import Diagnostic, ErrorCode, Level, ReplicaError
from spark_replica.applier_core.gtid import canonical_uuid
from spark_replica.sql_handlers.parser.statements import Account, ChangeSource

MAX_DELAY = 0x7FFFFFFF
MAX_HEARTBEAT = 4294967
COMPRESSION_ALGORITHMS = ("zlib", "zstd", "uncompressed")

# Option classes: which running thread an option needs stopped (mysql-reference §4.1).
RECEIVER_OPTIONS = frozenset(
    {
        "SOURCE_HOST", "SOURCE_USER", "SOURCE_PASSWORD", "SOURCE_LOG_FILE", "SOURCE_LOG_POS",
        "SOURCE_BIND", "NETWORK_NAMESPACE", "SOURCE_PORT", "SOURCE_CONNECT_RETRY", "SOURCE_SSL",
        "SOURCE_SSL_CA", "SOURCE_SSL_CAPATH", "SOURCE_SSL_CERT", "SOURCE_SSL_CRL",
        "SOURCE_SSL_CRLPATH", "SOURCE_SSL_KEY", "SOURCE_SSL_CIPHER",
        "SOURCE_SSL_VERIFY_SERVER_CERT", "SOURCE_TLS_VERSION", "SOURCE_TLS_CIPHERSUITES",
        "SOURCE_HEARTBEAT_PERIOD", "SOURCE_RETRY_COUNT", "IGNORE_SERVER_IDS",
        "SOURCE_PUBLIC_KEY_PATH", "GET_SOURCE_PUBLIC_KEY", "SOURCE_COMPRESSION_ALGORITHMS",
        "SOURCE_ZSTD_COMPRESSION_LEVEL", "REQUIRE_ROW_FORMAT",
    }
)  # fmt: skip
APPLIER_OPTIONS = frozenset(
    {
        "RELAY_LOG_FILE", "RELAY_LOG_POS", "SOURCE_DELAY", "PRIVILEGE_CHECKS_USER",
        "REQUIRE_ROW_FORMAT", "REQUIRE_TABLE_PRIMARY_KEY_CHECK", "APPLIER_VERSION",
        "APPLIER_WORKER_COUNT", "APPLIER_EVENT_MEMORY_LIMIT",
    }
)  # fmt: skip
BOTH_OPTIONS = frozenset(
    {
        "ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS", "SOURCE_AUTO_POSITION",
        "SOURCE_CONNECTION_AUTO_FAILOVER", "GTID_ONLY",
    }
)  # fmt: skip
APPLIER_CSA_OPTIONS = ("APPLIER_VERSION", "APPLIER_WORKER_COUNT", "APPLIER_EVENT_MEMORY_LIMIT")

# Option -> SourceConnection field, for options stored as given.
_CONNECTION_FIELDS = {
    "SOURCE_USER": "user", "SOURCE_PASSWORD": "password", "SOURCE_BIND": "bind",
    "NETWORK_NAMESPACE": "network_namespace", "SOURCE_SSL_CA": "ssl_ca",
    "SOURCE_SSL_CAPATH": "ssl_capath", "SOURCE_SSL_CERT": "ssl_cert",
    "SOURCE_SSL_CRL": "ssl_crl", "SOURCE_SSL_CRLPATH": "ssl_crlpath", "SOURCE_SSL_KEY": "ssl_key",
    "SOURCE_SSL_CIPHER": "ssl_cipher", "SOURCE_TLS_VERSION": "tls_version",
    "SOURCE_TLS_CIPHERSUITES": "tls_ciphersuites", "SOURCE_PUBLIC_KEY_PATH": "public_key_path",
    "SOURCE_RETRY_COUNT": "retry_count", "IGNORE_SERVER_IDS": "ignore_server_ids",
}  # fmt: skip
_CONNECTION_FLAGS = {
    "SOURCE_SSL": "ssl", "SOURCE_SSL_VERIFY_SERVER_CERT": "ssl_verify_server_cert",
    "GET_SOURCE_PUBLIC_KEY": "get_public_key", "SOURCE_AUTO_POSITION": "auto_position",
    "SOURCE_CONNECTION_AUTO_FAILOVER": "source_connection_auto_failover", "GTID_ONLY": "gtid_only",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Environment:
    """What the statement is judged against besides the channel itself."""

    io_running: bool
    sql_running: bool
    gtid_mode: str
    replica_net_timeout: int
    replica_max_allowed_packet: int
    client_uses_tls: bool
    #: The legacy applier stopped (with an error, or killed) leaving transactions applied out
    #: of order after its low-water mark: only START REPLICA can fill those gaps.
    stopped_with_gaps: bool = False


@dataclass(slots=True)
class Outcome:
    config: ChannelConfig
    warnings: list[Diagnostic] = field(default_factory=list)
    #: Host or port changed: the receiver position and source identity were reset.
    source_changed: bool = False
    #: Relay logs are purged when both threads are stopped and no relay position was given.
    purge_relay_logs: bool = False


def change_source(statement: ChangeSource, current: ChannelConfig, env: Environment) -> Outcome:
    """The channel after ``statement``, with its warnings; raise the first failing check."""
    opts = statement.options
    name = current.name
    warnings = list(statement.warnings)
    connection, applier = current.connection, current.applier
    conn_changes: dict[str, Any] = {}
    applier_changes: dict[str, Any] = {}

    # 1. Values of single options.
    if "SOURCE_HOST" in opts:
        host = str(opts["SOURCE_HOST"])
        if not host:
            raise ReplicaError.from_code(ErrorCode.WRONG_ARGUMENTS, "SOURCE_HOST")
        conn_changes["host"] = host
    if opts.get("SOURCE_PORT"):
        conn_changes["port"] = _int(opts["SOURCE_PORT"])
    if opts.get("SOURCE_CONNECT_RETRY"):
        conn_changes["connect_retry"] = _int(opts["SOURCE_CONNECT_RETRY"])
    if "SOURCE_DELAY" in opts:
        delay = _int(opts["SOURCE_DELAY"])
        if delay > MAX_DELAY:
            raise ReplicaError.from_code(
                ErrorCode.SOURCE_DELAY_VALUE_OUT_OF_RANGE, str(delay), MAX_DELAY
            )
        applier_changes["sql_delay"] = delay
    if "SOURCE_HEARTBEAT_PERIOD" in opts:
        conn_changes["heartbeat_period"] = _heartbeat(opts, env, warnings)
    if "REQUIRE_ROW_FORMAT" in opts:
        value = _int(opts["REQUIRE_ROW_FORMAT"])
        if value not in (0, 1):
            raise ReplicaError.from_code(ErrorCode.REQUIRE_ROW_FORMAT_INVALID_VALUE, str(value))
        applier_changes["require_row_format"] = bool(value)
    if "SOURCE_COMPRESSION_ALGORITHMS" in opts:
        conn_changes["compression_algorithms"] = _compression(
            str(opts["SOURCE_COMPRESSION_ALGORITHMS"]), name
        )
    if opts.get("SOURCE_ZSTD_COMPRESSION_LEVEL"):
        level = _int(opts["SOURCE_ZSTD_COMPRESSION_LEVEL"])
        if level > 22:
            raise ReplicaError.from_code(
                ErrorCode.CHANGE_SOURCE_WRONG_COMPRESSION_LEVEL_CLIENT, level, name
            )
        conn_changes["zstd_compression_level"] = level
    if "ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS" in opts:
        applier_changes.update(
            _anonymous_gtids(str(opts["ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS"]))
        )
    if "REQUIRE_TABLE_PRIMARY_KEY_CHECK" in opts:
        applier_changes["require_table_primary_key_check"] = PrimaryKeyCheck(
            str(opts["REQUIRE_TABLE_PRIMARY_KEY_CHECK"])
        )
    if "PRIVILEGE_CHECKS_USER" in opts:
        account = opts["PRIVILEGE_CHECKS_USER"]
        if isinstance(account, Account):
            if not account.user:
                raise ReplicaError.from_code(
                    ErrorCode.CLIENT_PRIVILEGE_CHECKS_USER_CANNOT_BE_ANONYMOUS, name, account.host
                )
            applier_changes["privilege_checks_user"] = account.user
            applier_changes["privilege_checks_host"] = account.host
        else:
            applier_changes["privilege_checks_user"] = None
            applier_changes["privilege_checks_host"] = None
    if "APPLIER_VERSION" in opts:
        version = _int(opts["APPLIER_VERSION"])
        if version not in (1, 2):
            raise ReplicaError.from_code(ErrorCode.CRST_UNKNOWN_APPLIER_VERSION)
        applier_changes["applier_version"] = ApplierVersion(version)
    if "APPLIER_WORKER_COUNT" in opts:
        count = _int(opts["APPLIER_WORKER_COUNT"])
        if not 1 <= count <= 1024:
            raise ReplicaError.from_code(ErrorCode.CRST_APPLIER_WORKER_COUNT_OUT_OF_RANGE)
        applier_changes["applier_worker_count"] = count

    # 2. Options that only the Change Stream Applier has (judged on the version afterwards).
    version_after = applier_changes.get("applier_version", applier.applier_version)
    if "APPLIER_WORKER_COUNT" in opts and version_after is not ApplierVersion.CSA:
        raise ReplicaError.from_code(ErrorCode.CRST_APPLIER_WORKER_COUNT_ONLY_FOR_CSA)
    if "APPLIER_EVENT_MEMORY_LIMIT" in opts:
        if version_after is not ApplierVersion.CSA:
            raise ReplicaError.from_code(ErrorCode.CRST_APPLIER_EVENT_MEMORY_LIMIT_ONLY_FOR_CSA)
        limit = _int(opts["APPLIER_EVENT_MEMORY_LIMIT"])
        if limit < env.replica_max_allowed_packet:
            warnings.append(
                Diagnostic.of(
                    Level.WARNING, ErrorCode.WARN_CRST_APPLIER_EVENT_MEMORY_LIMIT_OUT_OF_RANGE
                )
            )
        applier_changes["applier_event_memory_limit"] = limit

    # 3. Running threads.
    _check_threads(opts, name, env)

    # Apply the remaining plain options.
    for option, attr in _CONNECTION_FIELDS.items():
        if option in opts:
            conn_changes[attr] = opts[option]
    for option, attr in _CONNECTION_FLAGS.items():
        if option in opts:
            conn_changes[attr] = bool(_int(opts[option]))
    if "SOURCE_LOG_FILE" in opts:
        conn_changes["source_log_file"] = str(opts["SOURCE_LOG_FILE"])
        if "SOURCE_LOG_POS" not in opts:
            warnings.append(
                Diagnostic.of(Level.WARNING, ErrorCode.WARN_ONLY_SOURCE_LOG_FILE_NO_POS)
            )
    if "SOURCE_LOG_POS" in opts:
        conn_changes["source_log_pos"] = max(4, _int(opts["SOURCE_LOG_POS"]))
    if "RELAY_LOG_FILE" in opts:
        applier_changes["relay_log_file"] = str(opts["RELAY_LOG_FILE"])
    if "RELAY_LOG_POS" in opts:
        applier_changes["relay_log_pos"] = max(4, _int(opts["RELAY_LOG_POS"]))

    source_changed = _host_or_port_changed(connection, conn_changes)
    if source_changed:
        conn_changes.setdefault("source_log_file", "")
        conn_changes.setdefault("source_log_pos", 4)
        conn_changes["source_uuid"] = ""
        conn_changes["source_server_id"] = 0
    if ("SOURCE_HOST" in opts or opts.get("SOURCE_PORT")) and "SOURCE_HEARTBEAT_PERIOD" not in opts:
        # Naming the source again, even unchanged, restores the default heartbeat.
        conn_changes["heartbeat_period"] = min(MAX_HEARTBEAT, env.replica_net_timeout / 2)
    new_connection: SourceConnection = replace(connection, **conn_changes)
    new_applier: ApplierSettings = replace(applier, **applier_changes)

    # 4. Prerequisites of the Change Stream Applier (INT.0060).
    if _csa_checks_apply(opts, applier):
        if new_applier.sql_delay != 0:
            raise ReplicaError.from_code(ErrorCode.CSA_CRST_DELAYED_APPLIER_NOT_SUPPORTED)
        if not new_applier.require_row_format:
            raise ReplicaError.from_code(ErrorCode.CSA_CRST_REQUIREMENT_ROW_FORMAT)
        if not new_connection.gtid_only:
            raise ReplicaError.from_code(ErrorCode.CSA_CRST_REQUIREMENT_GTID_ONLY)

    # 5. MySQL's rules between options.
    _check_gtid_mode(opts, new_applier, name, env)
    _check_inter_option(opts, connection, new_connection, new_applier, name, env, warnings)
    if env.stopped_with_gaps and not env.sql_running:
        raise ReplicaError.from_code(ErrorCode.MTA_CHANGE_SOURCE_CANT_RUN_WITH_GAPS)

    if "SOURCE_USER" in opts or "SOURCE_PASSWORD" in opts:
        if not env.client_uses_tls:
            warnings.append(Diagnostic.of(Level.NOTE, ErrorCode.INSECURE_PLAIN_TEXT))
        warnings.append(Diagnostic.of(Level.NOTE, ErrorCode.INSECURE_CHANGE_SOURCE))
    config = ChannelConfig(name, new_connection, new_applier)
    purge = (
        not env.io_running
        and not env.sql_running
        and "RELAY_LOG_FILE" not in opts
        and "RELAY_LOG_POS" not in opts
    )
    return Outcome(config, warnings, source_changed, purge)


def _int(value: object) -> int:
    assert isinstance(value, int), value
    return value


def _heartbeat(opts: dict[str, object], env: Environment, warnings: list[Diagnostic]) -> float:
    period = opts["SOURCE_HEARTBEAT_PERIOD"]
    assert isinstance(period, float)
    if period < 0 or period > MAX_HEARTBEAT:
        raise ReplicaError.from_code(
            ErrorCode.REPLICA_HEARTBEAT_VALUE_OUT_OF_RANGE, str(MAX_HEARTBEAT)
        )
    if 0 < period < 0.001:
        warnings.append(
            Diagnostic.of(Level.WARNING, ErrorCode.REPLICA_HEARTBEAT_VALUE_OUT_OF_RANGE_MIN)
        )
        return 0.0
    if period > env.replica_net_timeout:
        warnings.append(
            Diagnostic.of(Level.WARNING, ErrorCode.REPLICA_HEARTBEAT_VALUE_OUT_OF_RANGE_MAX)
        )
    return round(period, 3)


def _compression(value: str, channel: str) -> str:
    if len(value) >= 99:
        raise ReplicaError.from_code(
            ErrorCode.CHANGE_RPL_SRC_WRONG_COMPRESSION_ALGORITHM_SIZE, len(value), channel
        )
    names = [n.strip().lower() for n in value.split(",")]
    if len(names) > 3:
        raise ReplicaError.from_code(
            ErrorCode.CHANGE_SOURCE_WRONG_COMPRESSION_ALGORITHM_LIST_CLIENT, value, channel
        )
    if any(n not in COMPRESSION_ALGORITHMS for n in names):
        raise ReplicaError.from_code(
            ErrorCode.CHANGE_SOURCE_WRONG_COMPRESSION_ALGORITHM_CLIENT, value, channel
        )
    return ",".join(names)


def _anonymous_gtids(value: str) -> dict[str, Any]:
    if value.upper() in ("OFF", "LOCAL"):
        return {"assign_gtids_type": AnonymousGtids(value.upper()), "assign_gtids_value": ""}
    uuid = canonical_uuid(value)
    if uuid is None:
        raise ReplicaError.from_code(ErrorCode.WRONG_VALUE, "UUID", value)
    return {"assign_gtids_type": AnonymousGtids.UUID, "assign_gtids_value": uuid}


def _check_threads(opts: dict[str, object], name: str, env: Environment) -> None:
    given = set(opts)
    both = given & BOTH_OPTIONS
    receiver = given & RECEIVER_OPTIONS
    applier = given & APPLIER_OPTIONS
    if (both and (env.io_running or env.sql_running)) or (
        receiver and applier and env.io_running and env.sql_running
    ):
        raise ReplicaError.from_code(ErrorCode.REPLICA_CHANNEL_MUST_STOP, name)
    if receiver and env.io_running:
        raise ReplicaError.from_code(ErrorCode.REPLICA_CHANNEL_IO_THREAD_MUST_STOP, name)
    if applier and env.sql_running:
        raise ReplicaError.from_code(ErrorCode.REPLICA_CHANNEL_SQL_THREAD_MUST_STOP, name)


def _csa_checks_apply(opts: dict[str, object], before: ApplierSettings) -> bool:
    """INT.0060: an explicit APPLIER_VERSION=2, or a CSA channel with no APPLIER_VERSION given."""
    if "APPLIER_VERSION" in opts:
        return opts["APPLIER_VERSION"] == 2
    return before.applier_version is ApplierVersion.CSA


def _check_gtid_mode(
    opts: dict[str, object],
    applier: ApplierSettings,
    name: str,
    env: Environment,
) -> None:
    if env.gtid_mode == "ON":
        return
    if env.gtid_mode == "OFF" and opts.get("SOURCE_AUTO_POSITION"):
        raise ReplicaError.from_code(ErrorCode.AUTO_POSITION_REQUIRES_GTID_MODE_NOT_OFF)
    if "ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS" in opts and (
        applier.assign_gtids_type is not AnonymousGtids.OFF
    ):
        raise ReplicaError.from_code(
            ErrorCode.ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS_REQUIRES_GTID_MODE_ON
        )
    if opts.get("GTID_ONLY"):
        raise ReplicaError.from_code(
            ErrorCode.CHANGE_REPLICATION_SOURCE_NO_OPTIONS_FOR_GTID_ONLY, name
        )
    if opts.get("SOURCE_CONNECTION_AUTO_FAILOVER"):
        raise ReplicaError.from_code(ErrorCode.RPL_ASYNC_RECONNECT_GTID_MODE_OFF)


def _check_inter_option(
    opts: dict[str, object],
    before: SourceConnection,
    connection: SourceConnection,
    applier: ApplierSettings,
    name: str,
    env: Environment,
    warnings: list[Diagnostic],
) -> None:
    positions = {"SOURCE_LOG_FILE", "SOURCE_LOG_POS", "RELAY_LOG_FILE", "RELAY_LOG_POS"}
    if connection.auto_position and positions & set(opts):
        raise ReplicaError.from_code(ErrorCode.BAD_REPLICA_AUTO_POSITION)
    if connection.auto_position and applier.assign_gtids_type is not AnonymousGtids.OFF:
        raise ReplicaError.from_code(ErrorCode.CANT_COMBINE_ANONYMOUS_TO_GTID_AND_AUTOPOSITION)
    if connection.gtid_only and not before.gtid_only:
        if not (connection.auto_position and applier.require_row_format):
            raise ReplicaError.from_code(
                ErrorCode.CHANGE_REPLICATION_SOURCE_NO_OPTIONS_FOR_GTID_ONLY, name
            )
    disabling_auto_position = before.auto_position and not connection.auto_position
    if disabling_auto_position and connection.source_connection_auto_failover:
        raise ReplicaError.from_code(ErrorCode.DISABLE_AUTO_POSITION_REQUIRES_ASYNC_RECONNECT_OFF)
    if connection.source_connection_auto_failover and not connection.auto_position:
        raise ReplicaError.from_code(ErrorCode.RPL_ASYNC_RECONNECT_AUTO_POSITION_OFF)
    if disabling_auto_position and connection.gtid_only:
        raise ReplicaError.from_code(
            ErrorCode.CHANGE_REP_SOURCE_CANT_DISABLE_AUTO_POSITION_WITH_GTID_ONLY, name
        )
    if connection.gtid_only and not applier.require_row_format:
        raise ReplicaError.from_code(
            ErrorCode.CHANGE_REP_SOURCE_CANT_DISABLE_REQ_ROW_FORMAT_WITH_GTID_ONLY, name
        )
    if (
        disabling_auto_position
        and before.gtid_only
        and not ("SOURCE_LOG_FILE" in opts and "SOURCE_LOG_POS" in opts)
    ):
        raise ReplicaError.from_code(
            ErrorCode.CHANGE_REP_SOURCE_CANT_DISABLE_GTID_ONLY_WITHOUT_POSITIONS, name
        )
    if "IGNORE_SERVER_IDS" in opts:
        if connection.gtid_only:
            raise ReplicaError.from_code(
                ErrorCode.WRONG_USAGE, "IGNORE_SERVER_IDS", "GTID_ONLY = 1"
            )
        if env.gtid_mode == "ON" and opts["IGNORE_SERVER_IDS"]:
            warnings.append(
                Diagnostic.of(
                    Level.WARNING,
                    ErrorCode.WARN_DEPRECATED_SYNTAX,
                    "CHANGE REPLICATION SOURCE TO ... IGNORE_SERVER_IDS='...' when "
                    "@@GLOBAL.GTID_MODE = ON",
                    "the transaction filtering of GTIDs",
                )
            )


def _host_or_port_changed(before: SourceConnection, changes: dict[str, Any]) -> bool:
    return ("host" in changes and changes["host"] != before.host) or (
        "port" in changes and changes["port"] != before.port
    )
