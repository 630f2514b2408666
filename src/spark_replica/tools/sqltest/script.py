"""Parser for the subset of mysqltest's language that ``sqltest`` runs.

A script is a sequence of SQL statements terminated by ``;`` and of mysqltest commands written
``--command arguments`` on a line of their own (``let $v= ...;`` is also accepted without the
``--``). Lines starting with ``#`` are comments. See ``parse_script`` for the command list.

https://dev.mysql.com/doc/dev/mysql-server/latest/PAGE_MYSQL_TEST_RUN.html
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from spark_replica.tools.sqltest.errors import (
    ExpectedError,
    ScriptError,
    parse_error_list,
)

# ---------------------------------------------------------------------------------------------
# Variables
# ---------------------------------------------------------------------------------------------

_VARIABLE = re.compile(r"\\\$|\$([A-Za-z0-9_]+)")


def substitute(text: str, variables: Mapping[str, str]) -> str:
    """Replace ``$name`` by the variable's value (else the environment's, else nothing).

    ``\\$`` stands for a literal ``$``.
    """

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            return "$"
        if name in variables:
            return variables[name]
        return os.environ.get(name, "")

    return _VARIABLE.sub(value, text)


# ---------------------------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    """A parsed command; ``line`` is where it starts in its file (1-based)."""

    line: int


@dataclass(frozen=True)
class Statement(Command):
    sql: str


@dataclass(frozen=True)
class Echo(Command):
    text: str


@dataclass(frozen=True)
class ExpectError(Command):
    """``--error``; ``errors`` is empty when ``raw`` holds variables resolved at run time."""

    errors: tuple[ExpectedError, ...]
    raw: str = ""


@dataclass(frozen=True)
class SortedResult(Command):
    pass


@dataclass(frozen=True)
class ReplaceColumn(Command):
    """``--replace_column``: ``(column number, text)`` pairs, columns 1-based."""

    replacements: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class SetOption(Command):
    """``--enable_X`` / ``--disable_X`` for X in ``warnings``, ``query_log``, ``result_log``."""

    option: str
    enabled: bool


@dataclass(frozen=True)
class Let(Command):
    name: str
    value: str


@dataclass(frozen=True)
class LetQuery(Command):
    """``let $v= `query`;``: the first row of the result, fields joined by TAB."""

    name: str
    query: str


@dataclass(frozen=True)
class LetQueryGetValue(Command):
    name: str
    query: str
    column: str
    row: str


@dataclass(frozen=True)
class Connect(Command):
    """``--connect (name,host,user,password,db[,port])``; empty fields take the defaults."""

    name: str
    host: str = ""
    user: str = ""
    password: str = ""
    database: str = ""
    port: str = ""


@dataclass(frozen=True)
class SwitchConnection(Command):
    name: str


@dataclass(frozen=True)
class Disconnect(Command):
    name: str


@dataclass(frozen=True)
class Source(Command):
    path: str


@dataclass(frozen=True)
class Exit(Command):
    pass


OPTIONS = ("warnings", "query_log", "result_log")

_LET_KEYWORD = re.compile(r"let(?=[\s$])", re.IGNORECASE)
_LET_BODY = re.compile(r"\s*\$([A-Za-z0-9_]+)\s*=\s*(.*)\Z", re.DOTALL)
_QUERY_GET_VALUE = re.compile(r"query_get_value\s*\((.*)\)", re.DOTALL)
_COMMAND = re.compile(r"([A-Za-z_]+)(.*)\Z", re.DOTALL)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "Z": "\x1a", "$": "\\$"}


def split_arguments(text: str) -> list[str]:
    """Split space-separated arguments; ``"..."``/``'...'`` quote, ``\\`` escapes (mysqltest)."""
    tokens: list[str] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            return tokens
        quote = text[i] if text[i] in "'\"" else None
        if quote is not None:
            i += 1
        chars: list[str] = []
        while i < n:
            c = text[i]
            if c == "\\" and i + 1 < n:
                chars.append(_ESCAPES.get(text[i + 1], text[i + 1]))
                i += 2
                continue
            if quote is None and c.isspace():
                break
            if c == quote:
                if i + 1 < n and text[i + 1] == quote:
                    chars.append(quote)
                    i += 2
                    continue
                i += 1
                break
            chars.append(c)
            i += 1
        tokens.append("".join(chars))


def parse_file(path: Path) -> list[Command]:
    """Parse a ``.test`` (or sourced ``.inc``) file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"Could not open '{path}' for reading: {exc.strerror}") from exc
    return parse_script(text, source=str(path))


def parse_script(text: str, *, source: str | None = None) -> list[Command]:
    """Parse script text into commands.

    Commands: ``--echo``, ``--error``, ``--sorted_result``, ``--replace_column``,
    ``--enable_/--disable_`` ``warnings``/``query_log``/``result_log``, ``--let`` (value,
    `` `query` ``, ``query_get_value(query, column, row)``), ``--connect``, ``--connection``,
    ``--disconnect``, ``--source``, ``--exit``. ``-- `` followed by a space is a comment.
    """
    return _Parser(text, source).parse()


class _Parser:
    def __init__(self, text: str, source: str | None) -> None:
        self.text = text.replace("\r\n", "\n")
        self.source = source
        self.pos = 0
        self.line = 1

    def error(self, message: str, line: int) -> ScriptError:
        return ScriptError(message, line=line, source=self.source)

    def parse(self) -> list[Command]:
        commands: list[Command] = []
        text, n = self.text, len(self.text)
        while self.pos < n:
            c = text[self.pos]
            if c == "\n":
                self.line += 1
                self.pos += 1
            elif c.isspace():
                self.pos += 1
            elif c == "#":
                self.pos = self.end_of_line()
            elif text.startswith("--", self.pos):
                end = self.end_of_line()
                command = self.command(text[self.pos + 2 : end], self.line)
                if command is not None:
                    commands.append(command)
                self.pos = end
            else:
                statement = self.statement()
                if statement is not None:
                    commands.append(statement)
        return commands

    def end_of_line(self) -> int:
        end = self.text.find("\n", self.pos)
        return len(self.text) if end < 0 else end

    def statement(self) -> Command | None:
        start, line = self.pos, self.line
        end = self.find_delimiter(start, line)
        body = self.text[start:end].rstrip()
        self.line += self.text.count("\n", start, end)
        self.pos = end + 1
        if not body:
            return None
        keyword = _LET_KEYWORD.match(body)
        if keyword is not None:
            return self.let(body[keyword.end() :], line)
        return Statement(line, body)

    def find_delimiter(self, start: int, line: int) -> int:
        text, n = self.text, len(self.text)
        quote: str | None = None
        i = start
        while i < n:
            c = text[i]
            if quote is not None:
                if c == "\\" and quote != "`":
                    i += 2
                    continue
                if c == quote:
                    quote = None
            elif c in "'\"`":
                quote = c
            elif c == "/" and text.startswith("/*", i):
                close = text.find("*/", i + 2)
                if close < 0:
                    break
                i = close + 2
                continue
            elif c == ";":
                return i
            i += 1
        raise self.error("Missing delimiter ';' at the end of the statement", line)

    def command(self, body: str, line: int) -> Command | None:
        if not body or body[0].isspace():
            return None  # "-- comment"
        match = _COMMAND.match(body)
        if match is None:
            raise self.error(
                "Found line beginning with -- that didn't contain a valid mysqltest command",
                line,
            )
        word, rest = match.group(1).lower(), match.group(2)
        args = rest.strip()
        if word == "echo":
            return Echo(line, args)
        if word == "let":
            return self.let(rest, line)
        if word == "error":
            if "$" in args:
                return ExpectError(line, (), raw=args)
            try:
                return ExpectError(line, parse_error_list(args))
            except ScriptError as exc:
                raise self.error(exc.message, line) from None
        if word == "replace_column":
            return self.replace_column(args, line)
        if word == "connect":
            return self.connect(args, line)
        if word in ("connection", "disconnect", "source"):
            if not args or (word != "source" and len(args.split()) != 1):
                raise self.error(f"'{word}' expects exactly one argument", line)
            if word == "connection":
                return SwitchConnection(line, args)
            if word == "disconnect":
                return Disconnect(line, args)
            return Source(line, args)
        simple = self.simple_command(word, line)
        if simple is None:
            raise self.error(
                f"Found line beginning with -- that didn't contain a valid mysqltest "
                f"command: '--{word}'",
                line,
            )
        if args:
            raise self.error(f"'{word}' takes no arguments (got '{args}')", line)
        return simple

    @staticmethod
    def simple_command(word: str, line: int) -> Command | None:
        if word == "sorted_result":
            return SortedResult(line)
        if word == "exit":
            return Exit(line)
        action, _, option = word.partition("_")
        if action in ("enable", "disable") and option in OPTIONS:
            return SetOption(line, option, action == "enable")
        return None

    def let(self, rest: str, line: int) -> Command:
        match = _LET_BODY.match(rest)
        if match is None:
            raise self.error("Missing assignment in 'let': expected 'let $name= value'", line)
        name, value = match.group(1), match.group(2).rstrip()
        if len(value) >= 2 and value[0] == "`" and value[-1] == "`":
            return LetQuery(line, name, value[1:-1])
        get_value = _QUERY_GET_VALUE.fullmatch(value)
        if get_value is None:
            return Let(line, name, value)
        parts = [part.strip() for part in get_value.group(1).rsplit(",", 2)]
        if len(parts) != 3 or not all(parts):
            raise self.error("query_get_value expects (query, column name, row number)", line)
        return LetQueryGetValue(line, name, parts[0], parts[1], parts[2])

    def replace_column(self, args: str, line: int) -> Command:
        tokens = split_arguments(args)
        if not tokens or len(tokens) % 2:
            raise self.error("Wrong number of arguments to replace_column", line)
        pairs: list[tuple[int, str]] = []
        for column, text in zip(tokens[::2], tokens[1::2], strict=True):
            if not column.isdigit() or int(column) < 1:
                raise self.error(f"Wrong column number to replace_column: '{column}'", line)
            pairs.append((int(column), text))
        return ReplaceColumn(line, tuple(pairs))

    def connect(self, args: str, line: int) -> Command:
        match = re.fullmatch(r"\((.*)\)", args, re.DOTALL)
        if match is None:
            raise self.error("'connect' expects (name,host,user,password,db[,port])", line)
        fields = [field.strip() for field in match.group(1).split(",")]
        # A seventh field (the socket) is accepted and ignored: connections use TCP.
        if not fields[0] or len(fields) > 7:
            raise self.error("'connect' expects (name,host,user,password,db[,port])", line)
        fields += [""] * (6 - len(fields))
        name, host, user, password, database, port = fields[:6]
        return Connect(line, name, host, user, password, database, port)
