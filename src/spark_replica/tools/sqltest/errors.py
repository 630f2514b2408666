"""Script errors, and the errors a script expects (``--error``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from spark_replica.applier_core.errors import ErrorCode


class ScriptError(Exception):
    """A script that cannot be parsed or run: unknown command, bad arguments, unknown error."""

    def __init__(self, message: str, *, line: int | None = None, source: str | None = None) -> None:
        self.message = message
        self.line = line
        self.source = source
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"At line {self.line}: " if self.line is not None else ""
        if self.source is not None:
            where = f'In "{self.source}": {where}'
        return where + self.message


#: Whole-name aliases for errors whose 8.0.22+ name is not a word-for-word rename.
ERROR_ALIASES: dict[str, str] = {
    "MASTER_INFO": "CONNECTION_METADATA",
    "BAD_SLAVE": "BAD_REPLICA",
}

#: Word renames applied to pre-8.0.22 names (``ER_SLAVE_X`` -> ``ER_REPLICA_X``).
_RENAMED_WORDS = {"SLAVE": "REPLICA", "SLAVES": "REPLICAS", "MASTER": "SOURCE", "MTS": "MTA"}


@dataclass(frozen=True)
class ExpectedError:
    """One alternative of an ``--error`` list: an error number or (``S<state>``) a SQLSTATE."""

    spelling: str
    errno: int | None
    sqlstate: str | None = None

    def matches(self, errno: int, sqlstate: str) -> bool:
        if self.errno is not None:
            return self.errno == errno
        return self.sqlstate == sqlstate

    def describe(self) -> str:
        if self.errno is None:
            return f"sqlstate {self.sqlstate}"
        if self.spelling.isdigit():
            return str(self.errno)
        return f"{self.spelling} ({self.errno})"


def resolve_error_name(name: str) -> int | None:
    """The number of a MySQL error symbol (``ER_PARSE_ERROR``), old spellings included."""
    upper = name.upper()
    if not upper.startswith("ER_"):
        return None
    bare = upper[3:]
    renamed = "_".join(_RENAMED_WORDS.get(word, word) for word in bare.split("_"))
    for candidate in (bare, ERROR_ALIASES.get(bare), renamed, ERROR_ALIASES.get(renamed)):
        if candidate is not None and candidate in ErrorCode.__members__:
            return int(ErrorCode[candidate])
    return None


def resolve_error(token: str) -> ExpectedError:
    """Resolve one ``--error`` argument: a number, an ``ER_`` name or ``S`` + SQLSTATE."""
    if token.isdigit():
        return ExpectedError(token, int(token))
    if len(token) == 6 and token[0] == "S" and token[1:].isalnum():
        return ExpectedError(token, None, token[1:])
    errno = resolve_error_name(token)
    if errno is None:
        raise ScriptError(f"Unknown SQL error name '{token}'")
    return ExpectedError(token, errno)


def parse_error_list(text: str) -> tuple[ExpectedError, ...]:
    """Parse the argument of ``--error``: alternatives separated by commas."""
    tokens = [t for t in re.split(r"[\s,]+", text.strip()) if t]
    if not tokens:
        raise ScriptError("Missing argument(s) to 'error'")
    return tuple(resolve_error(token) for token in tokens)
