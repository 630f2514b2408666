"""Session variables that also see the replica's global variables.

``SELECT @@replica_parallel_workers`` and ``@@global.gtid_executed`` read the live global
values; ``@@warning_count`` and ``@@error_count`` describe the previous statement. Unknown
variables raise 1193 instead of reading as NULL.

The connection encodes and decodes with ``character_set_client``/``character_set_results``
and stamps statements in ``time_zone``, so a value it cannot use is refused when it is set
(1231), never stored to break every later statement of the session. Character sets are
named in any case or by number, as MySQL accepts them, and stored under their canonical name.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from typing import Any

from mysql_mimic import variables as mimic_variables
from mysql_mimic.charset import CharacterSet
from mysql_mimic.errors import MysqlError
from mysql_mimic.variables import (
    SYSTEM_VARIABLES,
    GlobalVariables,
    SessionVariables,
    VariableSchema,
    parse_timezone,
)

from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.settings import (
    ALIASES,
    DEFAULT,
    DEFINITIONS,
    SystemVariables,
    VarKind,
)

SERVER_VERSION = "8.4.0-spark-replica"

_OVERRIDES: dict[str, VariableSchema] = {
    "version": (str, SERVER_VERSION, False),
    "version_comment": (str, "spark-replica", False),
    "default_storage_engine": (str, "Spark", True),
    "default_tmp_storage_engine": (str, "Spark", True),
    "sql_mode": (str, "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE", True),
    "transaction_isolation": (str, "REPEATABLE-READ", True),
    "performance_schema": (bool, True, False),
    "read_only": (bool, True, False),
    "super_read_only": (bool, False, False),
    "lower_case_table_names": (int, 0, False),
    "auto_increment_increment": (int, 1, True),
    "max_allowed_packet": (int, 67108864, True),
    "system_time_zone": (str, "UTC", False),
    "warning_count": (int, 0, False),
    "error_count": (int, 0, False),
    # Answered from the session's gtid_next and from gtid_executed (no binary log here:
    # everything executed counts as purged); set only through their own SET paths.
    "gtid_next": (str, "AUTOMATIC", False),
    "gtid_purged": (str, "", False),
}


def _schema() -> dict[str, VariableSchema]:
    schema = dict(SYSTEM_VARIABLES)
    schema.update(_OVERRIDES)
    for name, definition in DEFINITIONS.items():
        type_: Callable[[Any], Any] = (
            int if definition.kind in (VarKind.INTEGER, VarKind.BOOLEAN) else str
        )
        schema[name] = (type_, definition.default, False)
    for alias, name in ALIASES.items():
        schema[alias] = schema[name]
    return schema


SCHEMA = _schema()

CHARACTER_SET_VARIABLES = frozenset(
    {
        "character_set_client",
        "character_set_connection",
        "character_set_database",
        "character_set_results",
        "character_set_server",
    }
)


def character_set(variable: str, value: object) -> CharacterSet:
    """The character set ``value`` names (any case, or its number), if the connection can
    encode with it; 1231 for ``variable`` otherwise."""
    text = str(value).lower()
    try:
        charset = CharacterSet(int(text)) if text.isdigit() else CharacterSet[text]
        codecs.lookup(charset.codec)
    except (KeyError, ValueError, LookupError) as e:
        raise ReplicaError.from_code(ErrorCode.WRONG_VALUE_FOR_VAR, variable, str(value)) from e
    return charset


def _checked(variable: str, value: Any) -> Any:
    """``value`` as the session stores it; 1231 for one the connection could not work with."""
    if value is DEFAULT:
        return mimic_variables.DEFAULT
    if value is None or value is mimic_variables.DEFAULT:
        return value
    if variable in CHARACTER_SET_VARIABLES:
        return character_set(variable, value).name
    if variable == "time_zone":
        try:
            parse_timezone(str(value))
        except (MysqlError, ValueError) as e:
            raise ReplicaError.from_code(ErrorCode.WRONG_VALUE_FOR_VAR, variable, value) from e
    return value


class ReplicaSessionVariables(SessionVariables):
    def __init__(
        self,
        settings: SystemVariables,
        diagnostics: Callable[[], tuple[int, int]],
        gtid_next: Callable[[], str] = lambda: "AUTOMATIC",
    ) -> None:
        super().__init__(GlobalVariables(SCHEMA))
        self.settings = settings
        self._diagnostics = diagnostics
        self._gtid_next = gtid_next

    def get_variable(self, name: str) -> Any | None:
        key = name.lower()
        key = ALIASES.get(key, key)
        if key in DEFINITIONS:
            return self.settings.get(key)
        if key == "warning_count":
            return self._diagnostics()[0]
        if key == "error_count":
            return self._diagnostics()[1]
        if key == "gtid_next":
            return self._gtid_next()
        if key == "gtid_purged":
            return self.settings.get("gtid_executed")
        if key not in SCHEMA:
            raise ReplicaError.from_code(ErrorCode.UNKNOWN_SYSTEM_VARIABLE, name)
        return super().get_variable(key)

    def get(self, key: str, default: Any = None) -> Any:
        # Mapping.get swallows KeyError; an unknown variable must stay an error.
        return self.get_variable(key)

    def set(self, name: str, value: Any, force: bool = False) -> None:
        key = name.lower()
        if key in DEFINITIONS or key in ALIASES:
            raise ReplicaError.from_code(ErrorCode.GLOBAL_VARIABLE, key)
        if key not in SCHEMA:
            raise ReplicaError.from_code(ErrorCode.UNKNOWN_SYSTEM_VARIABLE, name)
        value = _checked(key, value)
        try:
            super().set(key, value, force)
        except MysqlError as e:
            raise ReplicaError.from_code(
                ErrorCode.INCORRECT_GLOBAL_LOCAL_VAR, key, "read only"
            ) from e
        except (TypeError, ValueError, OverflowError) as e:  # int(1e309) overflows
            raise ReplicaError.from_code(ErrorCode.WRONG_TYPE_FOR_VAR, key) from e
