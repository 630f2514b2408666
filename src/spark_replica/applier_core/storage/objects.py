"""Objects the replica keeps but does not run: views, triggers, stored procedures and
functions, and events, as their CREATE, ALTER and DROP statements arrive from the source.

A row-based replica fires no trigger for row events (the source's rows already include their
effects), runs no event (a replicated event is SLAVESIDE_DISABLED on a MySQL replica) and
calls no routine; it keeps their definitions so that SHOW CREATE ..., SHOW TRIGGERS and
information_schema answer as on the source. A view is queried: its SELECT runs over the
replicated tables (``sql_handlers.query``).

``parse_object_statement`` reads the statements with patterns: MySQL's grammar for the
object's header (OR REPLACE, ALGORITHM, DEFINER, SQL SECURITY, IF [NOT] EXISTS, the name, a
view's column list, a trigger's timing and table), the rest kept as text.
https://dev.mysql.com/doc/refman/8.4/en/sql-data-definition-statements.html
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import asdict, dataclass
from typing import NamedTuple

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.interface import EngineError


class ObjectKind(enum.StrEnum):
    VIEW = "VIEW"
    TRIGGER = "TRIGGER"
    PROCEDURE = "PROCEDURE"
    FUNCTION = "FUNCTION"
    EVENT = "EVENT"
    #: Marks a table as a MariaDB sequence (``ddl_sequence``); its statement is the CREATE.
    SEQUENCE = "SEQUENCE"


class ObjectRef(NamedTuple):
    """An object by kind, database and name (names of routines, triggers and events compare
    case-insensitively in MySQL: ``key`` folds them; a view's or sequence's name is a table
    name)."""

    kind: ObjectKind
    schema: str
    name: str

    @property
    def key(self) -> tuple[ObjectKind, str, str]:
        table_name = self.kind in (ObjectKind.VIEW, ObjectKind.SEQUENCE)
        folded = self.name if table_name else self.name.casefold()
        return (self.kind, self.schema, folded)

    def __str__(self) -> str:
        return f"{self.schema}.{self.name}"


@dataclass(frozen=True, slots=True)
class StoredObject:
    """A kept object: ``statement`` is its CREATE statement as the source logged it (an ALTER
    VIEW's new definition written as CREATE VIEW). For a view, ``select`` is its query and
    ``columns`` its column list (empty: the query's names); for a trigger, ``table`` is the
    table it belongs to and ``timing``/``event`` when it would fire."""

    ref: ObjectRef
    statement: str
    definer: str = ""
    select: str = ""
    columns: tuple[str, ...] = ()
    security: str = "DEFINER"
    algorithm: str = "UNDEFINED"
    check_option: str = "NONE"
    table: str = ""
    timing: str = ""
    event: str = ""


def object_to_json(stored: StoredObject) -> str:
    """``stored`` without its reference, as the engine records it."""
    fields = asdict(stored)
    del fields["ref"]
    return json.dumps(fields, separators=(",", ":"))


def object_from_json(ref: ObjectRef, text: str) -> StoredObject:
    fields = json.loads(text)
    fields["columns"] = tuple(fields.get("columns", ()))
    return StoredObject(ref, **fields)


@dataclass(frozen=True, slots=True)
class CreateObject:
    """CREATE [OR REPLACE] ... (``replace``), or ALTER VIEW (``alter``: it must exist)."""

    stored: StoredObject
    replace: bool = False
    if_not_exists: bool = False
    alter: bool = False


@dataclass(frozen=True, slots=True)
class DropObject:
    ref: ObjectRef
    if_exists: bool = False


@dataclass(frozen=True, slots=True)
class AlterObject:
    """ALTER PROCEDURE/FUNCTION/EVENT: the object must exist; an event may be renamed."""

    ref: ObjectRef
    rename_to: str = ""


ObjectOperation = CreateObject | DropObject | AlterObject

_QUOTED = r"`(?:[^`]|``)+`|'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.)*\""
_NAME = r"(?:`(?:[^`]|``)+`|[\w$]+)"
_QUALIFIED = rf"(?P<first>{_NAME})(?:\s*\.\s*(?P<second>{_NAME}))?"
_USER = rf"(?:{_QUOTED}|[\w$.%-]+)(?:\s*@\s*(?:{_QUOTED}|[\w$.%-]+))?|CURRENT_USER(?:\s*\(\s*\))?"
_HEADER = re.compile(
    r"\s*(?P<verb>CREATE|ALTER)\s+(?P<replace>OR\s+REPLACE\s+)?"
    r"(?:ALGORITHM\s*=\s*(?P<algorithm>\w+)\s+)?"
    rf"(?:DEFINER\s*=\s*(?P<definer>{_USER})\s+)?"
    r"(?:SQL\s+SECURITY\s+(?P<security>\w+)\s+)?"
    r"(?:AGGREGATE\s+)?(?P<kind>VIEW|TRIGGER|PROCEDURE|FUNCTION|EVENT)\s+"
    r"(?P<exists>IF\s+NOT\s+EXISTS\s+)?"
    rf"{_QUALIFIED}",
    re.IGNORECASE | re.DOTALL,
)
_DROP = re.compile(
    r"\s*DROP\s+(?P<kind>VIEW|TRIGGER|PROCEDURE|FUNCTION|EVENT)\s+(?P<exists>IF\s+EXISTS\s+)?"
    r"(?P<names>.*?)\s*(?:RESTRICT|CASCADE)?\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_VIEW_BODY = re.compile(
    r"\s*(?:\((?P<columns>[^)]*)\)\s*)?AS\s+(?P<select>.*?)"
    r"(?:\s+WITH\s+(?P<check>CASCADED\s+|LOCAL\s+)?CHECK\s+OPTION)?\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_TRIGGER_BODY = re.compile(
    r"\s*(?P<timing>BEFORE|AFTER)\s+(?P<event>INSERT|UPDATE|DELETE)\s+ON\s+" + _QUALIFIED,
    re.IGNORECASE,
)
_EVENT_RENAME = re.compile(rf"\bRENAME\s+TO\s+{_QUALIFIED}", re.IGNORECASE)


def parse_object_statement(statement: str, database: str | None) -> ObjectOperation | None:
    """The operation of a CREATE/ALTER/DROP of a view, trigger, routine or event; None for
    any other statement.

    Raises:
        EngineError: 1046 when the object's name needs a database and there is none, 1064
            when a view or trigger header cannot be read."""
    dropped = _DROP.match(statement)
    if dropped is not None:
        return _drop(statement, dropped, database)
    header = _HEADER.match(statement)
    if header is None:
        return None
    kind = ObjectKind(header.group("kind").upper())
    ref = ObjectRef(kind, *_qualified(header, database))
    rest = statement[header.end() :]
    if header.group("verb").upper() == "ALTER":
        if kind is ObjectKind.VIEW:
            return CreateObject(_view(statement, ref, header, rest), alter=True)
        if kind is ObjectKind.TRIGGER:
            return None  # MySQL has no ALTER TRIGGER
        renamed = _EVENT_RENAME.search(rest) if kind is ObjectKind.EVENT else None
        new_name = _qualified(renamed, database)[1] if renamed is not None else ""
        return AlterObject(ref, new_name)
    if kind is ObjectKind.VIEW:
        stored = _view(statement, ref, header, rest)
    elif kind is ObjectKind.TRIGGER:
        stored = _trigger(statement, ref, header, rest, database)
    else:
        stored = StoredObject(ref, statement.strip(), _definer(header))
    return CreateObject(stored, bool(header.group("replace")), bool(header.group("exists")))


def _drop(statement: str, found: re.Match[str], database: str | None) -> ObjectOperation:
    kind = ObjectKind(found.group("kind").upper())
    names = [n.strip() for n in _split_names(found.group("names")) if n.strip()]
    if not names:
        raise _syntax(statement)
    if len(names) > 1:  # DROP VIEW a, b: MySQL drops them all or none; kept one at a time
        raise EngineError.of(ErrorCode.NOT_SUPPORTED_YET, f"DROP {kind} of several objects")
    match = re.fullmatch(_QUALIFIED, names[0])
    if match is None:
        raise _syntax(statement)
    return DropObject(ObjectRef(kind, *_qualified(match, database)), bool(found.group("exists")))


def _split_names(text: str) -> list[str]:
    return re.findall(rf"{_NAME}(?:\s*\.\s*{_NAME})?", text)


def _view(statement: str, ref: ObjectRef, header: re.Match[str], rest: str) -> StoredObject:
    body = _VIEW_BODY.match(rest)
    if body is None:
        raise _syntax(statement)
    listed = (body.group("columns") or "").split(",")
    columns = tuple(_unquote(c.strip()) for c in listed if c.strip())
    checked = "CHECK OPTION" in body.group(0).upper()
    check_option = (body.group("check") or "CASCADED").strip().upper() if checked else "NONE"
    algorithm = (header.group("algorithm") or "UNDEFINED").upper()
    security = (header.group("security") or "DEFINER").upper()
    create = statement.strip()
    if header.group("verb").upper() == "ALTER":
        create = "CREATE " + create.lstrip()[len("ALTER") :].lstrip()
    return StoredObject(ref, create, _definer(header), body.group("select").strip(), columns,
                        security, algorithm, check_option)  # fmt: skip


def _trigger(
    statement: str, ref: ObjectRef, header: re.Match[str], rest: str, database: str | None
) -> StoredObject:
    body = _TRIGGER_BODY.match(rest)
    if body is None:
        raise _syntax(statement)
    table = _qualified(body, ref.schema or database)[1]  # in the trigger's database
    timing, event = body.group("timing").upper(), body.group("event").upper()
    return StoredObject(ref, statement.strip(), _definer(header), table=table, timing=timing,
                        event=event)  # fmt: skip


def _definer(header: re.Match[str]) -> str:
    definer = header.group("definer") or ""
    if not definer or definer.upper().startswith("CURRENT_USER"):
        return ""
    parts = [p.strip() for p in definer.split("@", 1)]
    return "@".join(_unquote(p) for p in parts)


def _qualified(found: re.Match[str], database: str | None) -> tuple[str, str]:
    first, second = _unquote(found.group("first")), found.group("second")
    if second is not None:
        return first, _unquote(second)
    if not database:
        raise EngineError.of(ErrorCode.NO_DB_ERROR)
    return database, first


def _unquote(name: str) -> str:
    if len(name) >= 2 and name[0] == name[-1] and name[0] in "`'\"":
        quote = name[0]
        return name[1:-1].replace(quote * 2, quote)
    return name


def _syntax(statement: str) -> EngineError:
    return EngineError.of(ErrorCode.PARSE_ERROR, statement[:80], 1)
