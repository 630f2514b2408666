"""The parts of a kept routine, trigger or event that SHOW and information_schema show.

The storage engine keeps each object's CREATE statement as the source logged it, with the
header read (``StoredObject``). What MySQL 8.4 shows besides is in the rest of the text: a
routine's parameters, RETURNS type, characteristics and body; a trigger's body and its
FOLLOWS/PRECEDES clause; an event's schedule, ON COMPLETION, COMMENT and body. They are read
here with MySQL's grammar for those clauses, the bodies kept as text.
https://dev.mysql.com/doc/refman/8.4/en/create-procedure.html
https://dev.mysql.com/doc/refman/8.4/en/create-trigger.html
https://dev.mysql.com/doc/refman/8.4/en/create-event.html
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from spark_replica.applier_core.storage.objects import StoredObject

_NAME = r"(?:`(?:[^`]|``)+`|[\w$]+)"
_STRING = r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.)*\""
_USER = rf"(?:`(?:[^`]|``)+`|{_STRING}|[\w$.%-]+)(?:\s*@\s*(?:`(?:[^`]|``)+`|{_STRING}|[\w$.%-]+))?"
#: From CREATE to the object's name, whatever options the source wrote between them.
_HEAD = re.compile(
    r"\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:ALGORITHM\s*=\s*\w+\s+)?"
    rf"(?:DEFINER\s*=\s*(?:{_USER}|CURRENT_USER(?:\s*\(\s*\))?)\s+)?"
    r"(?:SQL\s+SECURITY\s+\w+\s+)?(?:AGGREGATE\s+)?"
    r"(?:VIEW|TRIGGER|PROCEDURE|FUNCTION|EVENT)\s+(?:IF\s+NOT\s+EXISTS\s+)?"
    rf"{_NAME}(?:\s*\.\s*{_NAME})?",
    re.IGNORECASE | re.DOTALL,
)
_RETURNS = re.compile(
    r"\s*RETURNS\s+(?P<type>\w+(?:\s+PRECISION|\s+VARYING)?(?:\s*\([^)]*\))?"
    r"(?:\s+(?:UNSIGNED|SIGNED|ZEROFILL|BINARY))*"
    r"(?:\s+(?:CHARSET|CHARACTER\s+SET)\s+\w+)?(?:\s+COLLATE\s+\w+)?)",
    re.IGNORECASE,
)
_CHARACTERISTIC = re.compile(
    rf"\s*(?:COMMENT\s+(?P<comment>{_STRING})|LANGUAGE\s+SQL|(?P<not>NOT\s+)?DETERMINISTIC"
    r"|(?P<access>CONTAINS\s+SQL|NO\s+SQL|READS\s+SQL\s+DATA|MODIFIES\s+SQL\s+DATA)"
    r"|SQL\s+SECURITY\s+(?P<security>DEFINER|INVOKER))(?=\s|$)",
    re.IGNORECASE,
)
_TRIGGER_BODY = re.compile(
    rf"\bFOR\s+EACH\s+ROW\s+(?:(?P<order>FOLLOWS|PRECEDES)\s+(?P<other>{_NAME})\s+)?(?P<body>.*)",
    re.IGNORECASE | re.DOTALL,
)
_FIELDS = (
    "YEAR_MONTH|DAY_HOUR|DAY_MINUTE|DAY_SECOND|HOUR_MINUTE|HOUR_SECOND|MINUTE_SECOND"
    "|YEAR|QUARTER|MONTH|WEEK|DAY|HOUR|MINUTE|SECOND"
)
_EVENT = re.compile(
    r"\s*ON\s+SCHEDULE\s+(?:AT\s+(?P<at>.+?)|EVERY\s+(?P<value>.+?)\s+"
    rf"(?P<field>{_FIELDS})(?:\s+STARTS\s+(?P<starts>.+?))?(?:\s+ENDS\s+(?P<ends>.+?))?)"
    r"(?:\s+ON\s+COMPLETION\s+(?P<completion>NOT\s+PRESERVE|PRESERVE))?"
    r"(?:\s+(?:ENABLE|DISABLE(?:\s+ON\s+(?:SLAVE|REPLICA))?))?"
    rf"(?:\s+COMMENT\s+(?P<comment>{_STRING}))?\s+DO\s+(?P<body>.*)",
    re.IGNORECASE | re.DOTALL,
)
_DATETIME = re.compile(r"\s*'(\d{4}-\d\d-\d\d(?: \d\d:\d\d:\d\d)?)'\s*$")


@dataclass(frozen=True, slots=True)
class RoutineParts:
    """A stored procedure or function: ``returns`` is empty for a procedure."""

    params: str
    returns: str
    data_access: str
    deterministic: bool
    security: str
    comment: str
    body: str


@dataclass(frozen=True, slots=True)
class TriggerParts:
    """A trigger's body, and the trigger it FOLLOWS or PRECEDES (``order`` empty: none)."""

    body: str
    order: str = ""
    other: str = ""


@dataclass(frozen=True, slots=True)
class EventParts:
    """An event's schedule: ``execute_at`` for a one-time event, else the interval; times are
    MySQL's 'YYYY-MM-DD hh:mm:ss' when the source wrote a literal, None when it wrote none or
    an expression (which only the source evaluated)."""

    execute_at: str | None
    #: The AT expression as the source wrote it (for SHOW CREATE EVENT when it is no literal).
    at_expression: str | None
    interval_value: str | None
    interval_field: str | None
    starts: str | None
    ends: str | None
    preserve: bool
    comment: str
    body: str

    @property
    def recurring(self) -> bool:
        return self.interval_field is not None


def _rest(stored: StoredObject) -> str:
    """The statement after the object's name."""
    head = _HEAD.match(stored.statement)
    return stored.statement[head.end() :] if head is not None else ""


@lru_cache(maxsize=1024)
def routine_parts(stored: StoredObject) -> RoutineParts:
    """The parts of a CREATE PROCEDURE/FUNCTION (MySQL's defaults where it has none:
    CONTAINS SQL, NOT DETERMINISTIC, SQL SECURITY DEFINER)."""
    rest = _rest(stored)
    params, end = _parenthesised(rest)
    rest = rest[end:]
    returns = ""
    found = _RETURNS.match(rest)
    if found is not None:
        returns, rest = found.group("type"), rest[found.end() :]
    access, deterministic, security, comment = "CONTAINS SQL", False, "DEFINER", ""
    while (item := _CHARACTERISTIC.match(rest)) is not None:
        rest = rest[item.end() :]
        if item.group("comment") is not None:
            comment = unquote_string(item.group("comment"))
        elif item.group("access") is not None:
            access = " ".join(item.group("access").upper().split())
        elif item.group("security") is not None:
            security = item.group("security").upper()
        elif "DETERMINISTIC" in item.group(0).upper():
            deterministic = item.group("not") is None
    return RoutineParts(params, returns, access, deterministic, security, comment,
                        _body(rest))  # fmt: skip


@lru_cache(maxsize=1024)
def trigger_parts(stored: StoredObject) -> TriggerParts:
    found = _TRIGGER_BODY.search(_rest(stored))
    if found is None:
        return TriggerParts("")
    other = found.group("other")
    return TriggerParts(_body(found.group("body")), (found.group("order") or "").upper(),
                        _unquote_name(other) if other else "")  # fmt: skip


@lru_cache(maxsize=1024)
def event_parts(stored: StoredObject) -> EventParts:
    found = _EVENT.match(_rest(stored))
    if found is None:
        return EventParts(None, None, None, None, None, None, False, "", "")
    comment = found.group("comment")
    value = found.group("value")
    return EventParts(
        _datetime(found.group("at")),
        found.group("at").strip() if found.group("at") else None,
        unquote_string(value.strip()) if value and value.strip()[:1] in "'\"" else value,
        found.group("field").upper() if found.group("field") else None,
        _datetime(found.group("starts")),
        _datetime(found.group("ends")),
        (found.group("completion") or "").upper() == "PRESERVE",
        unquote_string(comment) if comment else "",
        _body(found.group("body")),
    )


def _parenthesised(text: str) -> tuple[str, int]:
    """The text inside the parentheses ``text`` starts with (after blanks), and where the
    closing one ends; ("", 0) when it does not start with one."""
    start = len(text) - len(text.lstrip())
    if text[start : start + 1] != "(":
        return "", 0
    for index, char, depth in _outside_quotes(text, start):
        if char == ")" and depth == 0:
            return text[start + 1 : index], index + 1
    return text[start + 1 :], len(text)


def split_top_level(text: str, separator: str) -> list[str]:
    """``text`` cut at each ``separator`` outside quotes and parentheses."""
    parts, start = [], 0
    for index, char, depth in _outside_quotes(text):
        if char == separator and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def _outside_quotes(text: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """Each character outside quoted strings and names, with its position and the depth of
    parentheses after it (a backslash escapes in strings, not in backquoted names)."""
    depth, index, quote = 0, start, ""
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\" and quote != "`":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"`":
            quote = char
        else:
            depth += 1 if char == "(" else -1 if char == ")" else 0
            yield index, char, depth
        index += 1


def _body(text: str) -> str:
    """A body as MySQL keeps it: without the blanks around it or a last ';' (a client's
    delimiter, which MySQL does not store)."""
    return text.strip().rstrip(";").rstrip()


def _datetime(text: str | None) -> str | None:
    if text is None:
        return None
    found = _DATETIME.match(text)
    if found is None:
        return None
    value = found.group(1)
    return value if len(value) > 10 else value + " 00:00:00"


def unquote_string(literal: str) -> str:
    """The value of a quoted SQL string literal."""
    quote, inner = literal[0], literal[1:-1]
    inner = inner.replace(quote * 2, quote)
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}.get(
        m.group(1), m.group(1)), inner)  # fmt: skip


def _unquote_name(name: str) -> str:
    return name[1:-1].replace("``", "`") if name.startswith("`") else name


def quote_string(value: str) -> str:
    """A string literal as MySQL prints a COMMENT in SHOW CREATE (``append_unescaped``)."""
    escaped = value.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
    return "'" + escaped.replace("\r", "\\r").replace("\0", "\\0") + "'"
