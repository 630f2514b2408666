"""The SQL the built-in source answers: what replicas send before a dump, and a DBA's few
binary log statements.

- ``SELECT`` of a list of items: ``@@[GLOBAL.|SESSION.]name``, ``@name`` (user variables),
  ``UNIX_TIMESTAMP()``, ``VERSION()``, numbers and quoted strings;
- ``SET`` of user variables (``@source_heartbeat_period``, ``@source_binlog_checksum`` and
  their ``@master_`` names, ``@replica_uuid``...) to a literal or a system variable, and
  ``SET [SESSION] name = ...`` / ``SET NAMES ...`` (accepted, no effect);
- ``SHOW BINARY LOGS`` (``SHOW MASTER LOGS``), ``SHOW BINARY LOG STATUS`` (``SHOW MASTER
  STATUS``), ``SHOW REPLICAS`` (``SHOW SLAVE HOSTS``);
- ``SHOW [GLOBAL | SESSION] VARIABLES [LIKE 'pattern']``: the system variables above, by
  name, as binlog client libraries (python-mysql-replication) read ``binlog_checksum`` and
  ``binlog_row_metadata``;
- ``FLUSH BINARY LOGS`` and ``PURGE BINARY LOGS TO 'file'``.
Anything else is ER_NOT_SUPPORTED_YET (1235).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from spark_replica.applier_core.binlog.errors import BinlogError
from spark_replica.applier_core.receiver.protocol import SourceError
from spark_replica.tools.source.binlog import SERVER_VERSION, SourceBinlog

ER_NOT_SUPPORTED_YET = 1235
ER_UNKNOWN_SYSTEM_VARIABLE = 1193
ER_UNKNOWN_TARGET_BINLOG = 1373

Value = str | int | None


@dataclass(frozen=True, slots=True)
class Result:
    """A text result set (columns and rows) or, with no columns, an OK packet."""

    columns: tuple[str, ...] = ()
    rows: tuple[tuple[Value, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class Replica:
    """A replica registered with COM_REGISTER_SLAVE."""

    server_id: int
    host: str
    port: int
    uuid: str = ""


@dataclass(slots=True)
class SessionState:
    """One connection's user variables."""

    user_variables: dict[str, Value] = field(default_factory=dict)


class SourceQueries:
    """Answers statements against one built-in source's state."""

    def __init__(
        self,
        binlog: SourceBinlog,
        *,
        server_id: int,
        server_uuid: str,
        replicas: Callable[[], list[Replica]],
    ) -> None:
        self._binlog = binlog
        self._replicas = replicas
        self._server_id = server_id
        self._globals: dict[str, Callable[[], Value]] = {
            "server_id": lambda: server_id,
            "server_uuid": lambda: server_uuid,
            "version": lambda: SERVER_VERSION,
            "version_comment": lambda: "spark-replica built-in binlog source",
            "gtid_mode": lambda: "ON",
            "enforce_gtid_consistency": lambda: "ON",
            "binlog_checksum": lambda: "CRC32",
            "binlog_format": lambda: "ROW",
            # Every Table_map it serves carries the column names (the generator's binlogs).
            "binlog_row_metadata": lambda: "FULL",
            "binlog_row_image": lambda: "FULL",
            "log_bin": lambda: 1,
            "gtid_executed": lambda: binlog.executed().format(",\n"),
            "gtid_purged": lambda: binlog.purged().format(",\n"),
            "max_allowed_packet": lambda: 67108864,
            "time_zone": lambda: "SYSTEM",
            "system_time_zone": lambda: "UTC",
            "lower_case_table_names": lambda: 0,
            "character_set_server": lambda: "utf8mb4",
            "collation_server": lambda: "utf8mb4_0900_ai_ci",
            "rpl_semi_sync_master_enabled": lambda: 0,
            "rpl_semi_sync_source_enabled": lambda: 0,
        }

    def run(self, sql: str, session: SessionState) -> Result:
        """Run one statement. Raises ``SourceError``."""
        text = sql.strip().rstrip(";").strip()
        head = text.split(None, 1)[0].upper() if text else ""
        if head == "SELECT":
            return self._select(text[6:].strip(), session)
        if head == "SET":
            self._set(text[3:].strip(), session)
            return Result()
        upper = " ".join(text.upper().split())
        if upper in ("SHOW BINARY LOGS", "SHOW MASTER LOGS"):
            files = tuple((name, size, "No") for name, size in self._binlog.files())
            return Result(("Log_name", "File_size", "Encrypted"), files)
        if upper in ("SHOW BINARY LOG STATUS", "SHOW MASTER STATUS"):
            file, position = self._binlog.end()
            columns = ("File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB", "Executed_Gtid_Set")
            executed = self._binlog.executed().format(",\n")
            return Result(columns, ((file, position, "", "", executed),))
        if upper in ("SHOW REPLICAS", "SHOW SLAVE HOSTS"):
            columns = ("Server_Id", "Host", "Port", "Source_Id", "Replica_UUID")
            # Source_Id: this server's id, as MySQL shows for a replica that sent 0 for it
            return Result(columns, tuple((r.server_id, r.host, r.port, self._server_id, r.uuid)
                                         for r in self._replicas()))  # fmt: skip
        if upper in ("FLUSH BINARY LOGS", "FLUSH LOGS"):
            self._binlog.rotate()
            return Result()
        variables = _SHOW_VARIABLES.fullmatch(text)
        if variables:
            return self._show_variables(variables.group(1))
        purge = re.fullmatch(r"PURGE\s+(?:BINARY|MASTER)\s+LOGS\s+TO\s+'([^']*)'", text, re.I)
        if purge:
            try:
                self._binlog.purge_to(purge.group(1))
            except BinlogError as exc:
                raise SourceError(ER_UNKNOWN_TARGET_BINLOG, "Target log not found in binlog "
                                  "index", "HY000") from exc  # fmt: skip
            return Result()
        raise _unsupported(text)

    # -- SHOW VARIABLES --------------------------------------------------------------------------

    def _show_variables(self, pattern: str | None) -> Result:
        """``Variable_name``/``Value`` rows of the system variables whose names match the LIKE
        ``pattern`` (all without one), sorted by name as MySQL lists them."""
        matches = _like(_unquote(pattern)) if pattern is not None else None
        rows = tuple((name, _shown(self._globals[name]()))
                     for name in sorted(self._globals)
                     if matches is None or matches.fullmatch(name))  # fmt: skip
        return Result(("Variable_name", "Value"), rows)

    # -- SELECT ----------------------------------------------------------------------------------

    def _select(self, items: str, session: SessionState) -> Result:
        names: list[str] = []
        values: list[Value] = []
        for item in _split(items):
            expression, alias = _alias(item)
            values.append(self._value(expression, session))
            names.append(alias or expression)
        return Result(tuple(names), (tuple(values),))

    def _value(self, expression: str, session: SessionState) -> Value:
        lowered = expression.lower()
        if lowered.startswith("@@"):
            name = re.sub(r"^(global|session|local)\.", "", lowered[2:])
            getter = self._globals.get(name)
            if getter is None:
                raise SourceError(ER_UNKNOWN_SYSTEM_VARIABLE,
                                  f"Unknown system variable '{name}'")  # fmt: skip
            return getter()
        if lowered.startswith("@"):
            return session.user_variables.get(lowered[1:].strip("`"))
        if lowered.replace(" ", "") == "unix_timestamp()":
            return int(time.time())
        if lowered.replace(" ", "") == "version()":
            return SERVER_VERSION
        literal = _literal(expression)
        if literal is _NOT_LITERAL:
            raise _unsupported(f"SELECT {expression}")
        return literal  # type: ignore[return-value]

    # -- SET -------------------------------------------------------------------------------------

    def _set(self, assignments: str, session: SessionState) -> None:
        if assignments.upper().startswith("NAMES ") or assignments.upper().startswith(
            "CHARACTER SET "
        ):
            return
        for assignment in _split(assignments):
            name, _, expression = assignment.partition("=")
            name = name.strip().lower()
            if not expression:
                raise _unsupported(f"SET {assignment}")
            if name.startswith("@") and not name.startswith("@@"):
                value = self._value(expression.strip(), session)
                session.user_variables[name[1:].strip("`")] = value
            # SET [SESSION] system_variable = ...: accepted without effect


def heartbeat_period(session: SessionState) -> float:
    """Seconds between heartbeats the replica asked for (``@source_heartbeat_period``, in
    nanoseconds); 0 for none."""
    variables = session.user_variables
    raw = variables.get("source_heartbeat_period", variables.get("master_heartbeat_period"))
    try:
        return max(0.0, int(str(raw)) / 1e9) if raw is not None else 0.0
    except ValueError:
        return 0.0


def checksum_aware(session: SessionState) -> bool:
    """Whether the replica said it can take the checksum the binary log has."""
    variables = session.user_variables
    value = variables.get("source_binlog_checksum", variables.get("master_binlog_checksum"))
    return str(value or "").upper() == "CRC32"


_NOT_LITERAL = object()
_SHOW_VARIABLES = re.compile(
    r"SHOW\s+(?:(?:GLOBAL|SESSION|LOCAL)\s+)?VARIABLES(?:\s+LIKE\s+('(?:[^'\\]|\\.|'')*'))?",
    re.I | re.S,
)


def _unquote(quoted: str) -> str:
    """A single-quoted SQL string's text (``''`` and ``\\'`` are quotes; other backslash
    pairs stay, for LIKE to read its ``\\%`` and ``\\_`` escapes)."""
    return quoted[1:-1].replace("''", "'").replace("\\'", "'")


def _like(pattern: str) -> re.Pattern[str]:
    """A LIKE pattern as a case-insensitive regular expression: ``%`` any run, ``_`` any one
    character, a backslash makes the next character literal."""
    parts: list[str] = []
    escaped = False
    for char in pattern:
        if escaped:
            parts.append(re.escape(char))
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "%":
            parts.append(".*")
        elif char == "_":
            parts.append(".")
        else:
            parts.append(re.escape(char))
    if escaped:
        parts.append(re.escape("\\"))
    return re.compile("".join(parts), re.I | re.S)


def _shown(value: Value) -> Value:
    """A variable's value as SHOW VARIABLES shows it: text, NULL as the empty string."""
    return "" if value is None else str(value)


def _literal(expression: str) -> object:
    text = expression.strip()
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1].replace("\\'", "'").replace("''", "'")
    if text.upper() == "NULL":
        return None
    return _NOT_LITERAL


def _split(text: str) -> list[str]:
    """``text`` split at the commas outside quotes and parentheses."""
    parts: list[str] = []
    current: list[str] = []
    depth, quote = 0, ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    parts.append("".join(current).strip())
    return [part for part in parts if part]


def _alias(item: str) -> tuple[str, str]:
    match = re.fullmatch(r"(.*?)\s+AS\s+`?(\w+)`?", item, re.I | re.S)
    return (match.group(1).strip(), match.group(2)) if match else (item.strip(), "")


def _unsupported(text: str) -> SourceError:
    shown = " ".join(text.split())[:64]
    return SourceError(ER_NOT_SUPPORTED_YET,
                       f"This version of MySQL doesn't yet support '{shown}'", "42000")  # fmt: skip
