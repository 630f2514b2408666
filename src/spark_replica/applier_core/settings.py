"""The replica's global system variables: definitions, validation and live values.

https://dev.mysql.com/doc/refman/8.4/en/replication-options-replica.html

Appliers read values here when they start; SET GLOBAL changes them (persisted by the caller)
and never resizes something already running, as MySQL's replica does.
"""

from __future__ import annotations

import enum
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from spark_replica.applier_core.errors import Diagnostic, ErrorCode, ReplicaError, deprecated

Value = int | str


class VarKind(enum.Enum):
    INTEGER = "integer"
    BOOLEAN = "boolean"
    ENUM = "enumeration"
    STRING = "string"


@dataclass(frozen=True, slots=True)
class VariableDef:
    """One global variable: its type, default and accepted range."""

    name: str
    kind: VarKind
    default: Value
    minimum: int = 0
    maximum: int = (1 << 64) - 1
    choices: tuple[str, ...] = ()
    read_only: bool = False
    block_size: int = 1


GTID_MODES = ("OFF", "OFF_PERMISSIVE", "ON_PERMISSIVE", "ON")

DEFINITIONS: dict[str, VariableDef] = {
    d.name: d
    for d in (
        VariableDef("replica_parallel_workers", VarKind.INTEGER, 4, 0, 1024),
        VariableDef(
            "replica_parallel_type",
            VarKind.ENUM,
            "LOGICAL_CLOCK",
            choices=("DATABASE", "LOGICAL_CLOCK"),
        ),
        VariableDef("replica_preserve_commit_order", VarKind.BOOLEAN, 1),
        VariableDef(
            "replica_max_allowed_packet",
            VarKind.INTEGER,
            1073741824,
            1024,
            1073741824,
            block_size=1024,
        ),
        VariableDef(
            "replica_pending_jobs_size_max",
            VarKind.INTEGER,
            134217728,
            1024,
            (1 << 64) - 1,
            block_size=1024,
        ),
        VariableDef("replica_transaction_retries", VarKind.INTEGER, 10),
        VariableDef("replica_checkpoint_group", VarKind.INTEGER, 512, 32, 524280, block_size=8),
        VariableDef("replica_checkpoint_period", VarKind.INTEGER, 300, 1, 4294967295),
        VariableDef("replica_exec_mode", VarKind.ENUM, "STRICT", choices=("STRICT", "IDEMPOTENT")),
        VariableDef("replica_net_timeout", VarKind.INTEGER, 60, 1, 31536000),
        VariableDef("innodb_lock_wait_timeout", VarKind.INTEGER, 50, 1, 1073741824),
        VariableDef("relay_log_purge", VarKind.BOOLEAN, 1),
        # The Change Stream Applier's own (read at START REPLICA; docs/csa.md): prefetch the
        # active relay log file too (complete files are always prefetched), and read the
        # relay log in a thread of its own rather than in the service thread.
        VariableDef("replica_applier_prefetcher", VarKind.BOOLEAN, 0),
        VariableDef("replica_applier_async_provider", VarKind.BOOLEAN, 0),
        # The receiver rotates its relay log file past max_relay_log_size, or past
        # max_binlog_size when that is 0 (read at every batch it writes).
        VariableDef("max_relay_log_size", VarKind.INTEGER, 0, 0, 1073741824, block_size=4096),
        VariableDef(
            "max_binlog_size", VarKind.INTEGER, 1073741824, 4096, 1073741824, block_size=4096
        ),
        # Bytes of relay log after which the receiver waits for purges (0: no limit). Not
        # dynamic in MySQL: set from the server's configuration at start (server/config.py).
        VariableDef("relay_log_space_limit", VarKind.INTEGER, 0, read_only=True),
        VariableDef("server_id", VarKind.INTEGER, 1, 0, 4294967295),
        VariableDef("server_uuid", VarKind.STRING, "", read_only=True),
        VariableDef("gtid_mode", VarKind.ENUM, "ON", choices=GTID_MODES),
        VariableDef("gtid_executed", VarKind.STRING, "", read_only=True),
        # Event groups the next SQL thread to start skips (sql_handlers/replication/service.py:
        # only channels assigning GTIDs to anonymous transactions could use it).
        VariableDef("sql_replica_skip_counter", VarKind.INTEGER, 0, 0, 4294967295),
        # Set from the server's configuration at start (server/config.py).
        VariableDef("skip_replica_start", VarKind.BOOLEAN, 0, read_only=True),
    )
}

#: MySQL 8.0's old names, accepted with warning 1287.
ALIASES = {
    "slave_" + name.removeprefix("replica_"): name
    for name in DEFINITIONS
    if name.startswith("replica_")
    and name != "replica_max_allowed_packet"
    and not name.startswith("replica_applier_")  # our own: no MySQL 8.0 name
} | {
    "slave_max_allowed_packet": "replica_max_allowed_packet",
    "skip_slave_start": "skip_replica_start",
    "sql_slave_skip_counter": "sql_replica_skip_counter",
}

#: Values a statement may not persist: derived from other state or generated once.
NOT_PERSISTED = frozenset(
    {"gtid_executed", "skip_replica_start", "relay_log_space_limit", "sql_replica_skip_counter"}
)


def resolve(name: str) -> tuple[VariableDef, list[Diagnostic]]:
    """The definition of ``name`` (any case, old or new spelling); 1193 when unknown."""
    key = name.lower()
    warnings: list[Diagnostic] = []
    if key in ALIASES:
        warnings.append(deprecated(f"@@{key}", ALIASES[key]))
        key = ALIASES[key]
    definition = DEFINITIONS.get(key)
    if definition is None:
        raise ReplicaError.from_code(ErrorCode.UNKNOWN_SYSTEM_VARIABLE, name)
    return definition, warnings


def display(definition: VariableDef, value: Value) -> str:
    """The text SHOW VARIABLES prints."""
    if definition.kind is VarKind.BOOLEAN:
        return "ON" if value else "OFF"
    return str(value)


def coerce(definition: VariableDef, raw: object) -> Value:
    """Convert a SET value (int, float, str, bool) to the variable's type, or raise 1231/1232."""
    name = definition.name
    shown = _shown(raw)
    if definition.kind is VarKind.INTEGER:
        if isinstance(raw, bool) or not isinstance(raw, int):
            if isinstance(raw, float) or isinstance(raw, str):
                raise ReplicaError.from_code(ErrorCode.WRONG_TYPE_FOR_VAR, name)
            raise ReplicaError.from_code(ErrorCode.WRONG_TYPE_FOR_VAR, name)
        if raw < definition.minimum or raw > definition.maximum:
            raise ReplicaError.from_code(ErrorCode.WRONG_VALUE_FOR_VAR, name, shown)
        return raw - raw % definition.block_size if definition.block_size > 1 else raw
    if definition.kind is VarKind.BOOLEAN:
        if isinstance(raw, bool):
            return int(raw)
        if isinstance(raw, int) and raw in (0, 1):
            return raw
        if isinstance(raw, str) and raw.upper() in ("ON", "OFF", "TRUE", "FALSE"):
            return int(raw.upper() in ("ON", "TRUE"))
        if isinstance(raw, float):
            raise ReplicaError.from_code(ErrorCode.WRONG_TYPE_FOR_VAR, name)
        raise ReplicaError.from_code(ErrorCode.WRONG_VALUE_FOR_VAR, name, shown)
    if definition.kind is VarKind.ENUM:
        if isinstance(raw, int) and not isinstance(raw, bool):
            if 0 <= raw < len(definition.choices):
                return definition.choices[raw]
            raise ReplicaError.from_code(ErrorCode.WRONG_VALUE_FOR_VAR, name, shown)
        if isinstance(raw, str) and raw.upper() in definition.choices:
            return raw.upper()
        if isinstance(raw, float):
            raise ReplicaError.from_code(ErrorCode.WRONG_TYPE_FOR_VAR, name)
        raise ReplicaError.from_code(ErrorCode.WRONG_VALUE_FOR_VAR, name, shown)
    if not isinstance(raw, str):
        raise ReplicaError.from_code(ErrorCode.WRONG_TYPE_FOR_VAR, name)
    return raw


def _shown(raw: object) -> str:
    if isinstance(raw, bool):
        return "ON" if raw else "OFF"
    return str(raw)


class SystemVariables:
    """Live values of the global variables; safe to read from any thread."""

    def __init__(self, persisted: Mapping[str, str] | None = None) -> None:
        # _lock guards _values.
        self._lock = threading.Lock()
        self._values: dict[str, Value] = {name: d.default for name, d in DEFINITIONS.items()}
        for name, text in (persisted or {}).items():
            definition = DEFINITIONS.get(name)
            if definition is None:
                continue
            self._values[name] = (
                int(text)
                if definition.kind
                in (
                    VarKind.INTEGER,
                    VarKind.BOOLEAN,
                )
                else text
            )
        if not self._values["server_uuid"]:
            self._values["server_uuid"] = str(uuid.uuid4())

    def get(self, name: str) -> Value:
        with self._lock:
            return self._values[name]

    def get_int(self, name: str) -> int:
        value = self.get(name)
        assert isinstance(value, int)
        return value

    def get_str(self, name: str) -> str:
        return str(self.get(name))

    def set_internal(self, name: str, value: Value) -> None:
        """Set a value the server derives itself (gtid_executed, server_uuid at first start)."""
        with self._lock:
            self._values[name] = value

    def prepare(self, name: str, raw: object) -> tuple[VariableDef, Value, list[Diagnostic]]:
        """Validate ``SET GLOBAL name = raw`` without applying it."""
        definition, warnings = resolve(name)
        if definition.read_only:
            raise ReplicaError.from_code(
                ErrorCode.INCORRECT_GLOBAL_LOCAL_VAR, definition.name, "read only"
            )
        value = definition.default if raw is DEFAULT else coerce(definition, raw)
        if definition.name == "gtid_mode":
            _check_gtid_mode_step(self.get_str("gtid_mode"), str(value))
        return definition, value, warnings

    def apply(self, values: Mapping[str, Value]) -> None:
        with self._lock:
            self._values.update(values)

    def snapshot(self) -> dict[str, Value]:
        with self._lock:
            return dict(self._values)

    def persistable(self) -> dict[str, str]:
        """Every value as the text the metadata store keeps."""
        with self._lock:
            return {k: str(v) for k, v in self._values.items() if k not in NOT_PERSISTED}


class _Default:
    """The DEFAULT keyword of SET."""

    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT = _Default()


def _check_gtid_mode_step(old: str, new: str) -> None:
    if abs(GTID_MODES.index(old) - GTID_MODES.index(new)) > 1:
        raise ReplicaError.from_code(ErrorCode.GTID_MODE_CAN_ONLY_CHANGE_ONE_STEP_AT_A_TIME)
