"""Entry points the wire server calls: replication statements, SET, and virtual tables."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlglot import expressions as exp
from sqlglot.executor import execute

from spark_replica.applier_core.channels.manager import ChannelManager
from spark_replica.applier_core.empty_transaction import commit_empty
from spark_replica.applier_core.errors import Diagnostic, ErrorCode, ReplicaError
from spark_replica.applier_core.settings import (
    ALIASES,
    DEFAULT,
    DEFINITIONS,
    SystemVariables,
    Value,
)
from spark_replica.sql_handlers.gtid_next import GTID_NEXT_ADMIN, SessionGtid, parse_gtid_next
from spark_replica.sql_handlers.gtid_owners import Gtid, GtidOwners
from spark_replica.sql_handlers.gtid_purged import PurgedValue, gtids_to_add, parse_gtid_purged
from spark_replica.sql_handlers.parser.statements import (
    ChangeSource,
    ResetReplica,
    ShowRelaylogEvents,
    ShowReplicaStatus,
    StartReplica,
    Statement,
    StopReplica,
)
from spark_replica.sql_handlers.query.interfaces import QueryEngine, TableCatalog
from spark_replica.sql_handlers.replication.relaylog_events import COLUMNS as RELAYLOG_COLUMNS
from spark_replica.sql_handlers.replication.relaylog_events import show_relaylog_events
from spark_replica.sql_handlers.replication.replica_status import (
    mysql_table_rows,
    show_replica_status,
)
from spark_replica.sql_handlers.replication.service import ReplicationService
from spark_replica.sql_handlers.replication.views import PERFORMANCE_SCHEMA_ROWS, Row
from spark_replica.sql_handlers.set_statement import Assignment, Expression, Scope
from spark_replica.sql_handlers.tables.definitions import TableDef, ValueKind
from spark_replica.sql_handlers.virtual_query import ResultField, run, virtual_tables

REPLICATION_ADMIN = "SUPER or REPLICATION_SLAVE_ADMIN"
VARIABLES_ADMIN = "SUPER or SYSTEM_VARIABLES_ADMIN"


class Metadata(Protocol):
    def rows(self, table_name: str) -> tuple[list[str], list[tuple[object, ...]]]: ...

    def save_variables(self, values: dict[str, str]) -> None: ...

    def get_user(self, name: str) -> tuple[str, str] | None: ...


@dataclass(frozen=True, slots=True)
class ReplicaContext:
    """The server-wide objects a session works with."""

    service: ReplicationService
    manager: ChannelManager
    settings: SystemVariables
    metadata: Metadata
    #: The replicated tables (the storage engine); None when no engine is installed.
    tables: TableCatalog | None = None
    #: Runs SELECTs over the replicated tables; None when the engine cannot (in memory).
    queries: QueryEngine | None = None
    #: The GTIDs client sessions own (SET GTID_NEXT).
    gtid_owners: GtidOwners = field(default_factory=GtidOwners)

    def role_of(self, user: str) -> str | None:
        found = self.metadata.get_user(user)
        return found[1] if found else None


@dataclass(slots=True)
class StatementOutcome:
    warnings: list[Diagnostic] = field(default_factory=list)
    affected_rows: int = 0
    columns: list[tuple[str, ValueKind]] | None = None
    rows: list[Row] = field(default_factory=list)


def _require(admin: bool, privileges: str) -> None:
    if not admin:
        raise ReplicaError.from_code(ErrorCode.SPECIFIC_ACCESS_DENIED_ERROR, privileges)


def execute_replication_statement(
    context: ReplicaContext, statement: Statement, *, admin: bool, tls: bool
) -> StatementOutcome:
    """Run one parsed replication statement. Blocking (call it off the event loop), except
    SHOW REPLICA STATUS, which only reads snapshots and takes no lock held for long."""
    if isinstance(statement, ShowRelaylogEvents):
        rows = show_relaylog_events(context.manager, statement)
        return StatementOutcome(list(statement.warnings), 0, list(RELAYLOG_COLUMNS), rows)
    if isinstance(statement, ShowReplicaStatus):
        columns, rows = show_replica_status(
            context.manager,
            context.settings,
            statement.channel,
            legacy_names=statement.legacy_names,
        )
        return StatementOutcome(
            list(statement.warnings), 0, [(c.name, c.kind) for c in columns], rows
        )
    _require(admin, REPLICATION_ADMIN)
    service = context.service
    if isinstance(statement, ChangeSource):
        done = service.change_source(statement, client_uses_tls=tls)
    elif isinstance(statement, StartReplica):
        done = service.start_replica(statement)
    elif isinstance(statement, StopReplica):
        done = service.stop_replica(statement)
    elif isinstance(statement, ResetReplica):
        done = service.reset_replica(statement)
    else:  # pragma: no cover - Statement is a closed union
        raise TypeError(statement)
    return StatementOutcome(done.warnings, done.affected_rows)


async def execute_set(
    context: ReplicaContext,
    assignments: list[Assignment],
    session_variables: MutableMapping[str, Any],
    user_variables: MutableMapping[str, Any],
    evaluate: Callable[[str], Awaitable[Any]],
    *,
    admin: bool,
    gtid: SessionGtid | None = None,
) -> list[Diagnostic]:
    """Validate every assignment, then apply them all (globals persisted in one transaction).
    ``gtid_next`` (a session's, ``gtid``) and ``gtid_purged`` are applied first, in that
    order: each may still fail on the state it finds then."""
    warnings: list[Diagnostic] = []
    globals_: dict[str, Value] = {}
    session: list[tuple[str, Any]] = []
    users: list[tuple[str, Any]] = []
    next_value: str | Gtid | None = None
    purged: PurgedValue | None = None
    for assignment in assignments:
        value = assignment.value
        if isinstance(value, Expression):
            value = await evaluate(value.sql)
        name = assignment.name
        is_replica = name in DEFINITIONS or name in ALIASES
        if assignment.scope is Scope.USER:
            users.append((name, None if value is DEFAULT else value))
            continue
        if name == "gtid_next" and gtid is not None:
            if assignment.scope is not Scope.SESSION:
                raise ReplicaError.from_code(ErrorCode.LOCAL_VARIABLE, name)
            _require(admin, GTID_NEXT_ADMIN)
            next_value = parse_gtid_next(value)
            continue
        if name == "gtid_purged":
            if assignment.scope is Scope.SESSION:
                raise ReplicaError.from_code(ErrorCode.GLOBAL_VARIABLE, name)
            _require(admin, VARIABLES_ADMIN)
            purged = parse_gtid_purged(value)
            continue
        if assignment.scope in (Scope.GLOBAL, Scope.PERSIST, Scope.PERSIST_ONLY):
            if not is_replica:
                if name not in session_variables:
                    raise ReplicaError.from_code(ErrorCode.UNKNOWN_SYSTEM_VARIABLE, name)
                raise ReplicaError.from_code(ErrorCode.NOT_SUPPORTED_YET, f"SET GLOBAL {name}")
            _require(admin, VARIABLES_ADMIN)
            definition, value_, notes = context.settings.prepare(name, value)
            if definition.name == "gtid_mode":
                context.service.check_gtid_mode_change(str(value_))
            if definition.name == "sql_replica_skip_counter" and value_:
                context.service.check_skip_counter()
            warnings.extend(notes)
            globals_[definition.name] = value_
        elif is_replica:
            raise ReplicaError.from_code(
                ErrorCode.GLOBAL_VARIABLE, DEFINITIONS.get(name, None) and name or ALIASES[name]
            )
        else:
            session.append((name, value))
    if next_value is not None and gtid is not None:
        await gtid.set(next_value)
    if purged is not None:
        await _purge(context, purged, name="set-gtid-purged")
    if globals_:
        context.metadata.save_variables({k: str(v) for k, v in globals_.items()})
        context.settings.apply(globals_)
    for name, value in session:
        session_variables[name] = value
    user_variables.update(users)
    return warnings


async def _purge(context: ReplicaContext, value: PurgedValue, *, name: str) -> None:
    """SET GLOBAL gtid_purged: check MySQL's rules, then commit the added GTIDs."""
    executed = context.manager.executed
    async with context.gtid_owners.purge_lock():
        added = gtids_to_add(value, executed.snapshot(), context.gtid_owners.owned())
        engine = context.manager.components.engine
        await asyncio.to_thread(commit_empty, engine, executed, added, name=name)


def filter_rows(
    rows: list[tuple[str, str | None]], columns: list[str], where: exp.Expression
) -> list[tuple[str, str | None]]:
    """Rows of a two-column SHOW result that satisfy a WHERE clause."""
    table = [dict(zip([c.lower() for c in columns], row, strict=True)) for row in rows]
    query = (
        exp.select(*[exp.column(c.lower()) for c in columns])
        .from_("t")
        .where(where.this.copy().transform(_lower_columns))
    )
    result = execute(query, tables={"t": table}, dialect="mysql")
    return [(str(r[0]), r[1]) for r in result.rows]


def _lower_columns(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Column):
        return exp.column(node.name.lower())
    return node


def query_virtual_tables(
    context: ReplicaContext, expression: exp.Expression, database: str | None
) -> tuple[list[ResultField], list[tuple[object, ...]]] | None:
    """Answer a SELECT over performance_schema or mysql.* tables; None for other queries."""
    tables = virtual_tables(expression, database)
    if tables is None:
        return None

    def source(table: TableDef) -> list[Row]:
        if table.schema == "performance_schema":
            return PERFORMANCE_SCHEMA_ROWS[table.name](context.manager, context.settings)
        return mysql_table_rows(context.metadata, table)

    # Run in the event loop: no statement lock (START/STOP REPLICA hold it while they join
    # threads, and waiting for it here would stall every client); the channel list is
    # copied at once and each channel's status is read under its own lock.
    return run(expression, tables, source, database)
