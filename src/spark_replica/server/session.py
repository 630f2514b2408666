"""One client session: routes each statement and keeps its diagnostics.

Replication statements are recognised on the raw SQL before sqlglot sees it (sqlglot reads
START REPLICA as BEGIN); SET of system variables is parsed here too. Everything else goes
through mysql-mimic's pipeline, with performance_schema and the mysql.* replication tables
answered from live state.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from mysql_mimic import ColumnType, ResultColumn, ResultSet, Session
from mysql_mimic.charset import CharacterSet
from mysql_mimic.results import AllowedResult
from mysql_mimic.schema import InfoSchema
from mysql_mimic.session import Query
from sqlglot import expressions as exp
from sqlglot.errors import ParseError as SqlglotParseError
from sqlglot.errors import TokenError

from spark_replica.applier_core.errors import (
    Diagnostic,
    ErrorCode,
    Level,
    ReplicaError,
)
from spark_replica.applier_core.settings import ALIASES, DEFINITIONS, display
from spark_replica.applier_core.storage import TableRef
from spark_replica.server.account_access import Access
from spark_replica.server.auth import client_host
from spark_replica.server.catalog import catalog_snapshot, query_info_schema
from spark_replica.server.column_defs import ColumnDefinitions
from spark_replica.server.gtid_wait import wait_executed
from spark_replica.server.user_queries import QueryTurns, run_user_query
from spark_replica.server.variables import ReplicaSessionVariables, character_set
from spark_replica.server.wire import ReplicaControl, to_mysql_error
from spark_replica.sql_handlers import (
    STATEMENT_KEYWORDS,
    ReplicaContext,
    check_limit_clauses,
    execute_replication_statement,
    execute_set,
    filter_rows,
    leading_word,
    parse_replication_statement,
    parse_set,
    query_virtual_tables,
    reads_no_table,
    static_select,
)
from spark_replica.sql_handlers.gtid_functions import waits
from spark_replica.sql_handlers.gtid_next import SessionGtid, Verdict
from spark_replica.sql_handlers.parser.statements import ShowRelaylogEvents, ShowReplicaStatus
from spark_replica.sql_handlers.processlist import ClientThread, processlist
from spark_replica.sql_handlers.query.interfaces import TableCatalog
from spark_replica.sql_handlers.query.routines import calls_kept_function
from spark_replica.sql_handlers.query.sequences import (
    SHOW_CREATE_COLUMNS,
    parse_show_create_sequence,
    refuse_sequence_calls,
    refuse_sequence_syntax,
    sequences_of,
    show_create_sequence_row,
)
from spark_replica.sql_handlers.query.views import stored_functions
from spark_replica.sql_handlers.tables.definitions import Column, ValueKind
from spark_replica.sql_handlers.tables.show_objects import KINDS as SHOW_OBJECT_KINDS
from spark_replica.sql_handlers.tables.show_objects import show_objects
from spark_replica.sql_handlers.tables.show_schema import KINDS as SHOW_SCHEMA_KINDS
from spark_replica.sql_handlers.tables.show_schema import show as show_schema

logger = logging.getLogger(__name__)

_KIND_TYPES = {
    ValueKind.INTEGER: ColumnType.LONGLONG,
    ValueKind.UNSIGNED: ColumnType.LONGLONG,
    ValueKind.DECIMAL: ColumnType.NEWDECIMAL,
    ValueKind.FLOAT: ColumnType.DOUBLE,
    ValueKind.STRING: ColumnType.VAR_STRING,
    ValueKind.TIMESTAMP: ColumnType.VAR_STRING,
    ValueKind.BLOB: ColumnType.BLOB,
}

_SYSTEM_SCHEMAS = frozenset({"information_schema", "mysql", "performance_schema"})
_SHOW_COUNT = re.compile(r"\s*SHOW\s+COUNT\s*\(\s*\*\s*\)\s+(WARNINGS|ERRORS)\s*;?\s*$", re.I)
_TRANSACTION = re.compile(
    r"\s*(?:(BEGIN)(?:\s+WORK)?|(START)\s+TRANSACTION(?:\s+[\w\s,]*)?|(COMMIT)(?:\s+WORK)?"
    r"|(ROLLBACK)(?:\s+WORK)?)\s*;?\s*$",
    re.I,
)
_DIAGNOSTIC_QUERIES = ("SHOW WARNINGS", "SHOW ERRORS", "SHOW COUNT", "SELECT @@WARNING_COUNT",
                       "SELECT @@ERROR_COUNT", "SELECT @@SESSION.WARNING_COUNT",
                       "SELECT @@SESSION.ERROR_COUNT")  # fmt: skip


def result_set(
    columns: Sequence[tuple[str, ValueKind]], rows: Sequence[Sequence[object]]
) -> ResultSet:
    rows = [tuple(r) for r in rows]
    return ResultSet(
        rows=rows,
        columns=[
            _column(name, kind, [r[i] for r in rows]) for i, (name, kind) in enumerate(columns)
        ],
    )


def _column(name: str, kind: ValueKind, values: list[object]) -> ResultColumn:
    """A BLOB column of bytes goes out as binary (charset 63), as MySQL sends VARBINARY and
    BLOB columns, so clients hand back bytes, whatever the bytes are."""
    if kind is ValueKind.BLOB and all(v is None or isinstance(v, bytes) for v in values):
        return ResultColumn(name, ColumnType.BLOB, character_set=CharacterSet.binary)
    return ResultColumn(name, _KIND_TYPES[kind])


@dataclass(frozen=True, slots=True)
class ClientInfo:
    user: str
    admin: bool
    tls: bool


class ReplicaSession(Session):
    def __init__(self, context: ReplicaContext, query_turns: QueryTurns) -> None:
        self.context = context
        #: The server's turns for SELECTs over the replicated tables (``spark.max_queries``).
        self.query_turns = query_turns
        self.diagnostics: list[Diagnostic] = []
        self.affected_rows = 0
        #: The column definitions of the result being sent (``column_defs``).
        self.column_definitions = ColumnDefinitions()
        #: (user, whether it is a local account), as last looked up (``_access``).
        self._local_account: tuple[str | None, bool] = (None, False)
        # SHOW WARNINGS and friends report no warnings of their own (clients loop otherwise).
        self._reporting = True
        #: User-defined variables (@name), by lower-case name.
        self.user_variables: dict[str, Any] = {}
        # SHOW PROCESSLIST: the statement running (None between statements), and since when.
        self._statement: str | None = None
        self._since = time.monotonic()
        #: @@session.gtid_next and the transaction it names.
        self.gtid = SessionGtid(
            context.gtid_owners,
            context.manager.executed,
            context.settings,
            context.manager.components.engine,
            name="client",
        )
        super().__init__(
            ReplicaSessionVariables(context.settings, self._counts, lambda: self.gtid.value)
        )
        index = self.middlewares.index(self._info_schema_middleware)
        self.middlewares.insert(index, self._virtual_tables_middleware)
        self.middlewares.insert(0, self._user_variables_middleware)

    # -- diagnostics ---------------------------------------------------------------------------
    def _counts(self) -> tuple[int, int]:
        errors = sum(1 for d in self.diagnostics if d.level is Level.ERROR)
        return len(self.diagnostics), errors

    @property
    def warning_count(self) -> int:
        """The warning count sent in the OK or EOF packet of the current statement."""
        return len(self.diagnostics) if self._reporting else 0

    def _client(self) -> ClientInfo:
        user = self.username or ""
        role = self.context.role_of(user)
        tls = bool(self._connection and self._connection.stream.writer.get_extra_info("sslcontext"))
        return ClientInfo(user, role == "admin", tls)

    def _access(self) -> Access | None:
        """The replicated account this session runs as; None for a local account, which
        reads every replicated table (``account_access``). Whether the user is a local
        account is looked up once per login (a metadata-store query), not per statement."""
        user = self.username
        if user is None:
            return None
        if self._local_account[0] != user:
            self._local_account = (user, self.context.role_of(user) is not None)
        if self._local_account[1]:
            return None
        return Access.of(self.context.manager.components.engine, user, client_host.get())

    def _columns_of(self, schema: str, table: str) -> list[str]:
        """The column names of a replicated table (none for an unknown one)."""
        tables = self.context.tables
        try:
            definition = tables.definition(TableRef(schema, table)) if tables else None
        except ReplicaError:
            return []
        return [c.name for c in definition.columns] if definition is not None else []

    def _visible_tables(self) -> TableCatalog | None:
        """The replicated catalog as this session's account sees it in SHOW and
        information_schema."""
        access = self._access()
        tables = self.context.tables
        return tables if access is None else access.visible(tables)

    def thread(self) -> ClientThread:
        """This connection as SHOW PROCESSLIST lists it."""
        connection = self._connection
        return ClientThread(
            connection.connection_id if connection else 0,
            self.username or "",
            getattr(connection, "client_address", "localhost"),
            self.database,
            self._statement,
            self._since,
        )

    async def handle_query(self, sql: str, attrs: dict[str, str]) -> AllowedResult:
        self._statement, self._since = sql, time.monotonic()
        try:
            return await self._handle_query(sql, attrs)
        finally:
            self._statement, self._since = None, time.monotonic()

    async def _handle_query(self, sql: str, attrs: dict[str, str]) -> AllowedResult:
        normalized = " ".join(sql.split()).upper().rstrip(";").strip()
        self._reporting = not normalized.startswith(_DIAGNOSTIC_QUERIES)
        if self._reporting:
            self.diagnostics = []
        self.affected_rows = 0
        try:
            return await self._dispatch(sql, attrs)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            error = to_mysql_error(e, sql)
            self.diagnostics = [Diagnostic(Level.ERROR, int(error.code), error.msg)]
            self._reporting = True
            raise error from e

    async def _dispatch(self, sql: str, attrs: dict[str, str]) -> AllowedResult:
        if not sql.strip().strip(";").strip():
            raise ReplicaError.from_code(ErrorCode.EMPTY_QUERY)
        first = leading_word(sql)
        if first == "" and not sql.strip().startswith((";", "'", '"', "`")):
            # Only comments: MySQL answers OK without running anything.
            return None
        if first not in STATEMENT_KEYWORDS:
            raise ReplicaError.from_code(ErrorCode.PARSE_ERROR, _near(sql), 1)
        transaction = _TRANSACTION.match(sql)
        if transaction is not None:
            await self._transaction(next(word for word in transaction.groups() if word))
            return None
        statement = parse_replication_statement(sql)
        if statement is not None:
            client = self._client()
            if isinstance(statement, ShowReplicaStatus):  # snapshots only: at once, here
                outcome = execute_replication_statement(
                    self.context, statement, admin=client.admin, tls=client.tls
                )
            else:
                changes = not isinstance(statement, ShowRelaylogEvents)
                if changes and self.gtid.check_statement() is Verdict.SKIP:
                    return None  # its GTID is executed already: skipped, as MySQL does
                outcome = await asyncio.to_thread(
                    execute_replication_statement,
                    self.context,
                    statement,
                    admin=client.admin,
                    tls=client.tls,
                )
                if changes:
                    await self.gtid.after_statement()
            self.diagnostics = list(outcome.warnings)
            self.affected_rows = outcome.affected_rows
            if outcome.columns is None:
                return None
            return result_set(outcome.columns, outcome.rows)
        count = _SHOW_COUNT.match(sql)
        if count is not None:
            kind = count.group(1).lower()
            warnings, errors = self._counts()
            value = warnings if kind == "warnings" else errors
            return [(value,)], [f"@@session.{kind[:-1]}_count"]
        sequence = parse_show_create_sequence(sql, self.database)
        if sequence is not None:
            return self._show_create_sequence(sequence)
        assignments = parse_set(sql)
        if assignments is not None:
            client = self._client()
            self.diagnostics = await execute_set(
                self.context,
                assignments,
                self.variables,
                self.user_variables,
                self._evaluate,
                admin=client.admin,
                gtid=self.gtid,
            )
            return None
        return await super().handle_query(sql, attrs)

    async def _transaction(self, word: str) -> None:
        """BEGIN, START TRANSACTION, COMMIT, ROLLBACK: they matter to a session whose
        gtid_next names a GTID (sql_handlers/gtid_next.py); otherwise they do nothing."""
        word = word.upper()
        if word in ("BEGIN", "START"):
            await self.gtid.begin()
        elif word == "COMMIT":
            await self.gtid.commit()
        else:
            await self.gtid.rollback()

    async def close(self) -> None:
        """The connection ended: a GTID the session owns is given up (not executed)."""
        await self.gtid.close()
        await super().close()

    async def reset(self) -> None:
        """COM_RESET_CONNECTION / COM_CHANGE_USER: gtid_next is AUTOMATIC again."""
        await self.gtid.close()
        await super().reset()

    def _parse(self, sql: str) -> list[exp.Expression]:
        try:
            expressions = super()._parse(sql)
        except SqlglotParseError:
            refuse_sequence_syntax(sql)  # NEXT VALUE FOR s: 1235 rather than 1064
            raise
        except (TokenError, RecursionError):
            raise
        except Exception as e:  # sqlglot's parser crashes on a few cut statements: SHOW REPLICA
            raise ReplicaError.from_code(ErrorCode.PARSE_ERROR, "", 1) from e
        if len(expressions) > 1:
            # The server does not offer CLIENT_MULTI_STATEMENTS: a second statement is an error.
            second = expressions[1].sql(dialect="mysql")
            raise ReplicaError.from_code(ErrorCode.PARSE_ERROR, second, 1)
        for expression in expressions:
            if _incomplete(expression, sql):
                raise ReplicaError.from_code(ErrorCode.PARSE_ERROR, "", 1)
            if expression.find(exp.Limit, exp.Offset):
                check_limit_clauses(sql)
            refuse_sequence_calls(expression, self.database, self._is_sequence)
        return expressions

    def _is_sequence(self, ref: TableRef) -> bool:
        tables = self.context.tables
        return tables is not None and sequences_of(tables.objects())(ref)

    def _show_create_sequence(self, ref: TableRef) -> AllowedResult:
        """SHOW CREATE SEQUENCE, as MariaDB answers it (sql_handlers/query/sequences.py)."""
        tables = self._visible_tables()
        if tables is None:
            raise ReplicaError.from_code(ErrorCode.NO_SUCH_TABLE, ref.schema, ref.table)
        row = show_create_sequence_row(ref, tables.objects(), tables.tables(), tables.rows)
        return [row], list(SHOW_CREATE_COLUMNS)

    async def _evaluate(self, expression_sql: str) -> Any:
        """The value of a SET expression, computed by the static SELECT path."""
        result = await super().handle_query(f"SELECT {expression_sql}", {})
        rows = result[0] if isinstance(result, tuple) else getattr(result, "rows", [])
        rows = list(rows)
        return rows[0][0] if rows else None

    # -- middlewares ---------------------------------------------------------------------------
    async def _user_variables_middleware(self, q: Query) -> AllowedResult:
        """Replace @name by its value (NULL when never set), as MySQL reads user variables."""

        def substitute(node: exp.Expression) -> exp.Expression:
            if isinstance(node, exp.Parameter):
                name = node.name.lower()
                value = cast(exp.Expression, exp.convert(self.user_variables.get(name)))
                if isinstance(node.parent, exp.Select) and node.arg_key == "expressions":
                    alias = exp.to_identifier(f"@{node.name}", quoted=True)
                    return cast(exp.Expression, exp.alias_(value, alias))
                return value
            return node

        q.expression = q.expression.transform(substitute, copy=False)
        return await q.next()

    async def _static_query_middleware(self, q: Query) -> AllowedResult:
        """SELECT without tables (``SELECT 1``); the executor's failures as MySQL errors.
        WAIT_FOR_EXECUTED_GTID_SET calls are waited for first, off the event loop."""
        if reads_no_table(q.expression):
            if self._calls_kept_function(q.expression):
                return await q.next()  # a stored function runs on Spark (query)
            for wait in waits(q.expression):
                result = await wait_executed(self.context.manager.executed, wait)
                q.expression = wait.answer(q.expression, result)
        answer = static_select(q.expression, self.database)
        return await q.next() if answer is None else answer

    async def _virtual_tables_middleware(self, q: Query) -> AllowedResult:
        outcome = query_virtual_tables(self.context, q.expression, self.database)
        if outcome is None:
            return await q.next()
        access = self._access()
        if access is not None:  # performance_schema and mysql.* need SELECT like any table
            access.check_select(q.expression, self.database, self._columns_of)
        fields, rows = outcome
        return result_set([(f.name, f.kind) for f in fields], rows)

    async def query(
        self, expression: exp.Expression, sql: str, attrs: dict[str, str]
    ) -> AllowedResult:
        tables = [t for t in expression.find_all(exp.Table) if t.name]
        access = self._access()
        if access is not None and isinstance(expression, exp.Query):
            access.check_select(expression, self.database, self._columns_of)
        queries = self.context.queries
        if not tables and self._calls_kept_function(expression):
            tables = [exp.to_table("dual")]  # no table, but Spark computes the functions
        if isinstance(expression, exp.Query) and tables and queries is not None:
            connection = self._connection.connection_id if self._connection else 0
            return await run_user_query(queries, expression, self.database, connection,
                                        self.query_turns, self.column_definitions,
                                        self.context.tables)  # fmt: skip
        if isinstance(expression, exp.Query) and tables:
            table = tables[0]
            raise ReplicaError.from_code(
                ErrorCode.NO_SUCH_TABLE, table.db or self.database or "", table.name
            )
        if isinstance(expression, exp.Command | exp.Alias) or not isinstance(expression, exp.Query):
            raise ReplicaError.from_code(ErrorCode.PARSE_ERROR, _near(sql), 1)
        return [], []

    def _calls_kept_function(self, expression: exp.Expression) -> bool:
        catalog = self.context.tables
        if catalog is None or not isinstance(expression, exp.Query):
            return False
        if expression.find(exp.Anonymous) is None:  # no call of a function sqlglot lacks
            return False
        return calls_kept_function(expression, self.database, stored_functions(catalog))

    async def use(self, database: str) -> None:
        """USE db / COM_INIT_DB: 1049 for a database that does not exist, as MySQL answers."""
        access = self._access()
        if access is not None:
            try:
                access.check_use(database)
            except ReplicaError as e:
                raise to_mysql_error(e, "") from e
        known = set(self.context.tables.databases()) if self.context.tables is not None else set()
        if database not in known and database.lower() not in _SYSTEM_SCHEMAS:
            raise to_mysql_error(ReplicaError.from_code(ErrorCode.BAD_DB_ERROR, database), "")
        await super().use(database)

    async def _query_info_schema(self, expression: exp.Expression) -> AllowedResult:
        return await query_info_schema(await self.schema(), expression, self.database)

    async def schema(self) -> InfoSchema:
        """information_schema over the virtual tables and the replicated ones, as they are now."""
        return catalog_snapshot(self._visible_tables()).info_schema

    async def _show(self, expression: exp.Show) -> AllowedResult:
        """SHOW DATABASES/TABLES/COLUMNS/INDEX/CREATE TABLE/PROCESSLIST, and the SHOWs of
        views, triggers, routines and events, as MySQL answers them."""
        kind = expression.name.upper()
        if kind == "PROCESSLIST":
            return self._show_processlist(full=bool(expression.args.get("full")))
        if kind in SHOW_SCHEMA_KINDS or kind in SHOW_OBJECT_KINDS:
            snapshot = catalog_snapshot(self._visible_tables())
            answer = show_schema if kind in SHOW_SCHEMA_KINDS else show_objects
            shown = answer(snapshot.rows, snapshot.catalog, expression, self.database)
            if shown is not None:
                return result_set(*shown)
        return await super()._show(expression)

    def _set_names(self, item: exp.SetItem) -> None:
        """SET NAMES charset [COLLATE collation]: the character set in any case or by number;
        1231 for one the connection cannot encode with, before anything changes."""
        if item.name == "DEFAULT":
            super()._set_names(item)
            return
        charset = character_set("character_set_client", item.name)
        collation = item.text("collate") or charset.default_collation.name
        for name in ("character_set_client", "character_set_connection", "character_set_results"):
            self.variables.set(name, charset.name)
        self.variables.set("collation_connection", collation)

    # -- SHOW ----------------------------------------------------------------------------------
    def _show_processlist(self, *, full: bool) -> AllowedResult:
        connection = self._connection
        control = connection.control if connection else None
        connections = control.connections() if isinstance(control, ReplicaControl) else []
        clients = [c.session.thread() for c in connections if isinstance(c.session, ReplicaSession)]
        client = self._client()
        columns, rows = processlist(clients, self.context.manager, user=client.user,
                                    admin=client.admin, full=full)  # fmt: skip
        return rows, list(columns)

    def _show_warnings(self, show: exp.Show) -> AllowedResult:
        rows = [(d.level.value, d.code, d.message) for d in self.diagnostics]
        return rows, ["Level", "Code", "Message"]

    def _show_errors(self, show: exp.Show) -> AllowedResult:
        rows = [
            (d.level.value, d.code, d.message) for d in self.diagnostics if d.level is Level.ERROR
        ]
        return rows, ["Level", "Code", "Message"]

    def _show_variables(self, show: exp.Show) -> AllowedResult:
        """SHOW [GLOBAL|SESSION] VARIABLES [LIKE 'p' | WHERE expr], booleans as ON/OFF."""
        rows, columns = super()._show_variables(show)
        shown: list[tuple[str, str | None]] = []
        for name, value in rows:
            definition = DEFINITIONS.get(ALIASES.get(name, name))
            raw = self.variables.get(name)
            if definition is not None:
                value = display(definition, self.context.settings.get(definition.name))
            elif isinstance(raw, bool):
                value = "ON" if raw else "OFF"
            elif name in ("gtid_next", "gtid_purged"):  # live values, not the schema's
                value = str(raw)
            shown.append((name, value))
        where = show.args.get("where")
        if where is not None:
            shown = filter_rows(shown, ["Variable_name", "Value"], where)
        return shown, columns


def _near(sql: str) -> str:
    return sql.strip().rstrip(";")


def _incomplete(expression: exp.Expression, sql: str) -> bool:
    """A bare SELECT, or START without TRANSACTION (sqlglot reads it as BEGIN)."""
    if isinstance(expression, exp.Select) and not expression.expressions:
        return True
    words = sql.split()
    return (
        isinstance(expression, exp.Transaction)
        and words[0].upper() == "START"
        and (len(words) < 2 or words[1].upper().rstrip(";") != "TRANSACTION")
    )


__all__ = ["Column", "ReplicaSession", "result_set"]
