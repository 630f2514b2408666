"""Run mysqltest scripts against a MySQL-protocol server and compare with ``.result`` files."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from spark_replica.tools.sqltest.connection import (
    Connector,
    ConnectParams,
    DbConnection,
    DbError,
    Result,
    close_quietly,
    connect_pymysql,
    query_all,
)
from spark_replica.tools.sqltest.errors import ExpectedError, ScriptError, parse_error_list
from spark_replica.tools.sqltest.output import (
    ServerError,
    diff_outputs,
    format_error,
    format_result,
    format_value,
    format_warnings,
    result_path,
)
from spark_replica.tools.sqltest.script import (
    Command,
    Connect,
    Disconnect,
    Echo,
    Exit,
    ExpectError,
    Let,
    LetQuery,
    LetQueryGetValue,
    ReplaceColumn,
    SetOption,
    SortedResult,
    Source,
    Statement,
    SwitchConnection,
    parse_file,
    substitute,
)

#: How deep ``--source`` may nest (mysqltest's limit).
MAX_SOURCE_DEPTH = 16


@dataclass(frozen=True)
class Outcome:
    """The result of running one test file."""

    path: Path
    passed: bool
    output: str
    diff: str = ""
    error: str | None = None


class _Failure(Exception):
    """The test failed while running (mysqltest "dies"); the message has no location."""


class _ExitScript(Exception):
    """``--exit``: stop running, keep the output."""


class _Run:
    """The state of one test run: connections, variables, options and the output so far."""

    def __init__(self, test: Path, defaults: ConnectParams, connector: Connector) -> None:
        self.test = test
        self.defaults = defaults
        self.connector = connector
        self.lines: list[str] = []
        self.variables: dict[str, str] = {}
        self.connections: dict[str, DbConnection] = {}
        self.current: str | None = None
        self.options = {"warnings": True, "query_log": True, "result_log": True}
        self.frames: list[tuple[Path, int]] = []
        self.expected: tuple[ExpectedError, ...] = ()
        self.sort = False
        self.replace: dict[int, str] = {}
        self.modified = False

    def output(self) -> str:
        return "".join(line + "\n" for line in self.lines)

    def write(self, *lines: str) -> None:
        self.lines.extend(lines)

    def run(self) -> str | None:
        """Run the test; the failure message, or ``None`` if it ran to the end."""
        try:
            commands = parse_file(self.test)
        except ScriptError as exc:
            location = f"At line {exc.line}: " if exc.line is not None else ""
            return f"mysqltest: {location}{exc.message}"
        try:
            self.open("default", self.defaults)
            self.current = "default"
            self.execute_all(commands, self.test, 0)
        except _ExitScript:
            pass
        except _Failure as exc:
            return f"mysqltest: {self.location()}{exc}"
        except Exception as exc:  # a client library crash fails this test, not the whole run
            return f"mysqltest: {self.location()}{type(exc).__name__}: {exc}"
        finally:
            for connection in self.connections.values():
                close_quietly(connection)
            self.connections.clear()
        return None

    def location(self) -> str:
        if not self.frames:
            return ""
        *outer, (path, line) = self.frames
        text = f'In included file "{path}":\n' if outer else ""
        for outer_path, outer_line in reversed(outer):
            text += f"included from {outer_path} at line {outer_line}:\n"
        return f"{text}At line {line}: "

    def execute_all(self, commands: Sequence[Command], path: Path, depth: int) -> None:
        for command in commands:
            self.frames.append((path, command.line))
            self.execute(command, path, depth)
            self.frames.pop()

    def execute(self, command: Command, path: Path, depth: int) -> None:
        if isinstance(command, Statement):
            self.statement(substitute(command.sql, self.variables))
        elif isinstance(command, ExpectError):
            errors = command.errors
            if command.raw:
                try:
                    errors = parse_error_list(substitute(command.raw, self.variables))
                except ScriptError as exc:
                    raise _Failure(exc.message) from None
            self.expected, self.modified = errors, True
        elif isinstance(command, SortedResult):
            self.sort, self.modified = True, True
        elif isinstance(command, ReplaceColumn):
            for column, text in command.replacements:
                self.replace[column] = substitute(text, self.variables)
            self.modified = True
        elif isinstance(command, SetOption):
            self.options[command.option] = command.enabled
        else:
            if self.modified:
                raise _Failure(
                    "--error, --sorted_result and --replace_column apply to the next "
                    "statement; write them just before it"
                )
            self.other(command, path, depth)

    def other(self, command: Command, path: Path, depth: int) -> None:
        if isinstance(command, Echo):
            self.write(substitute(command.text, self.variables))
        elif isinstance(command, Let):
            self.variables[command.name] = substitute(command.value, self.variables)
        elif isinstance(command, LetQuery):
            self.let_query(command)
        elif isinstance(command, LetQueryGetValue):
            self.let_query_get_value(command)
        elif isinstance(command, Connect):
            self.connect(command)
        elif isinstance(command, SwitchConnection):
            name = self.connection_name(command.name)
            self.current = name
        elif isinstance(command, Disconnect):
            name = self.connection_name(command.name)
            close_quietly(self.connections.pop(name))
            if self.current == name:
                self.current = None
        elif isinstance(command, Source):
            self.source(substitute(command.path, self.variables), path, depth)
        elif isinstance(command, Exit):
            raise _ExitScript
        else:  # pragma: no cover - every parsed command is handled above
            raise _Failure(f"unsupported command {type(command).__name__}")

    # -- statements ----------------------------------------------------------------------

    def statement(self, sql: str) -> None:
        expected, sort, replace = self.expected, self.sort, self.replace
        self.expected, self.sort, self.replace, self.modified = (), False, {}, False
        if self.options["query_log"]:
            self.write(f"{sql};")
        connection = self.connection()
        try:
            results, warning_count = query_all(connection, sql)
        except DbError as exc:
            self.statement_failed(sql, ServerError.from_exception(exc), expected)
            return
        if expected and not any(error.errno == 0 for error in expected):
            raise _Failure(
                f"query '{sql}' succeeded - should have failed with error "
                f"{_alternatives(expected)}..."
            )
        if not self.options["result_log"]:
            return
        for columns, rows in results:
            self.write(*format_result(columns, rows, sort=sort, replace=replace))
        if warning_count and self.options["warnings"]:
            warnings = self.query("SHOW WARNINGS")
            self.write(*format_warnings(warnings[0][1] if warnings else []))

    def statement_failed(
        self, sql: str, error: ServerError, expected: tuple[ExpectedError, ...]
    ) -> None:
        if not expected:
            raise _Failure(f"query '{sql}' failed: {error.describe()}: {error.message}")
        if not any(option.matches(error.errno, error.sqlstate) for option in expected):
            raise _Failure(
                f"query '{sql}' failed with wrong errno {error.describe()}: "
                f"'{error.message}', instead of {_alternatives(expected)}..."
            )
        if not self.options["result_log"]:
            return
        if len(expected) == 1:
            self.write(format_error(error.sqlstate, error.message))
        elif expected[0].errno != 0:
            self.write("Got one of the listed errors")

    def query(self, sql: str) -> list[Result]:
        """Run a query for ``let``; any error fails the test."""
        try:
            return query_all(self.connection(), sql)[0]
        except DbError as exc:
            error = ServerError.from_exception(exc)
            raise _Failure(
                f"Error running query '{sql}': {error.describe()}: {error.message}"
            ) from None

    def let_query(self, command: LetQuery) -> None:
        results = self.query(substitute(command.query, self.variables))
        rows = results[0][1] if results else []
        value = "\t".join(format_value(field) for field in rows[0]) if rows else ""
        self.variables[command.name] = value

    def let_query_get_value(self, command: LetQueryGetValue) -> None:
        query = substitute(command.query, self.variables)
        column = substitute(command.column, self.variables)
        row = substitute(command.row, self.variables)
        if not row.isdigit() or int(row) < 1:
            raise _Failure(f"Invalid row number: '{row}'")
        results = self.query(query)
        if not results:
            raise _Failure(f"query_get_value: query '{query}' returned no result set")
        columns, rows = results[0]
        if column not in columns:
            raise _Failure(f"Could not find column '{column}' in the result of '{query}'")
        number = int(row)
        value = "No such row"
        if number <= len(rows):
            value = format_value(rows[number - 1][columns.index(column)])
        self.variables[command.name] = value

    # -- connections ---------------------------------------------------------------------

    def connection(self) -> DbConnection:
        if self.current is None:
            raise _Failure("no current connection: use --connection to choose one")
        return self.connections[self.current]

    def connection_name(self, raw: str) -> str:
        name = substitute(raw, self.variables)
        if name not in self.connections:
            raise _Failure(f"connection '{name}' not found in connection pool")
        return name

    def open(self, name: str, params: ConnectParams) -> None:
        try:
            self.connections[name] = self.connector(params)
        except DbError as exc:
            error = ServerError.from_exception(exc)
            raise _Failure(
                f"Could not open connection '{name}': {error.describe()}: {error.message}"
            ) from None

    def connect(self, command: Connect) -> None:
        def field(value: str) -> str:
            return substitute(value, self.variables)

        name, port, database = field(command.name), field(command.port), field(command.database)
        if name in self.connections:
            raise _Failure(f"Connection {name} already exists")
        if port and not port.isdigit():
            raise _Failure(f"Illegal argument for port: '{port}'")
        defaults = self.defaults
        params = ConnectParams(
            host=field(command.host) or defaults.host,
            port=int(port) if port else defaults.port,
            user=field(command.user) or defaults.user,
            password=field(command.password) or defaults.password,
            database=None if database == "*NO-ONE*" else database or defaults.database,
        )
        self.open(name, params)
        self.current = name

    # -- include -------------------------------------------------------------------------

    def source(self, name: str, including: Path, depth: int) -> None:
        if depth + 1 >= MAX_SOURCE_DEPTH:
            raise _Failure("Source directives are nesting too deep")
        candidate = Path(name)
        candidates = (
            [candidate]
            if candidate.is_absolute()
            else [self.test.parent / candidate, including.parent / candidate]
        )
        path = next((c for c in candidates if c.is_file()), None)
        if path is None:
            raise _Failure(f"Could not open '{name}' for reading")
        try:
            commands = parse_file(path)
        except ScriptError as exc:
            if exc.line is not None:
                self.frames.append((path, exc.line))
            raise _Failure(exc.message) from None
        self.execute_all(commands, path, depth + 1)


def _alternatives(expected: Sequence[ExpectedError]) -> str:
    return " or ".join(error.describe() for error in expected)


def run_file(
    path: Path,
    *,
    host: str,
    port: int,
    user: str,
    password: str,
    database: str | None = None,
    record: bool = False,
    connector: Connector | None = None,
) -> Outcome:
    """Run one ``.test`` file and compare its output with the ``.result`` file.

    With ``record=True`` the output is written to the ``.result`` file instead (unless the
    test failed). ``connector`` replaces the pymysql connection factory.
    """
    defaults = ConnectParams(host, port, user, password, database)
    run = _Run(path, defaults, connector or connect_pymysql)
    error = run.run()
    output = run.output()
    if error is not None:
        return Outcome(path, False, output, error=error)
    expected_path = result_path(path)
    if record:
        expected_path.parent.mkdir(parents=True, exist_ok=True)
        expected_path.write_text(output, encoding="utf-8")
        return Outcome(path, True, output)
    try:
        expected = expected_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        message = f"result file '{expected_path}' does not exist; run with --record to create it"
        return Outcome(path, False, output, error=message)
    if expected == output:
        return Outcome(path, True, output)
    return Outcome(path, False, output, diff=diff_outputs(expected, output, expected_path))


def run_files(
    paths: Iterable[Path],
    *,
    host: str,
    port: int,
    user: str,
    password: str,
    database: str | None = None,
    record: bool = False,
    connector: Connector | None = None,
) -> list[Outcome]:
    """Run several test files, one after the other, each with its own connections."""
    return [
        run_file(
            path,
            host=host,
            port=port,
            user=user,
            password=password,
            database=database,
            record=record,
            connector=connector,
        )
        for path in paths
    ]
