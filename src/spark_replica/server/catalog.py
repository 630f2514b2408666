"""information_schema for the virtual tables and the replicated ones.

mysql-mimic builds information_schema from a list of columns; this module gives it the
performance_schema and mysql replication tables with their real types and nullability, and
reports the mysql.* tables as BASE TABLE as MySQL does (mysql-mimic would say SYSTEM TABLE).

The replicated tables come from the storage engine's catalog, which replicated DDL changes
while the server runs. Their rows (``replica_tables``) are built beside mimic's with MySQL's
values where mimic's ``from_columns`` has none or wrong ones (ORDINAL_POSITION from 1,
DATA_TYPE apart from COLUMN_TYPE, COLUMN_KEY, lengths and precision, the keys in STATISTICS,
TABLE_CONSTRAINTS and KEY_COLUMN_USAGE, the foreign keys in REFERENTIAL_CONSTRAINTS, and
CHECK_CONSTRAINTS, a table mimic lacks), and the kept views, triggers, routines and events
fill VIEWS, TRIGGERS, ROUTINES and EVENTS (``object_rows``). ``catalog_snapshot`` is called
for every statement that reads information_schema or a SHOW, so it rebuilds only when the
catalog changed.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from mysql_mimic.constants import INFO_SCHEMA
from mysql_mimic.results import AllowedResult
from mysql_mimic.schema import Column, InfoSchema
from sqlglot import expressions as exp
from sqlglot.errors import ExecuteError, OptimizeError
from sqlglot.executor import execute
from sqlglot.executor.table import Table
from typing_extensions import override

from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.sql_handlers import executor_error
from spark_replica.sql_handlers.query.interfaces import TableCatalog
from spark_replica.sql_handlers.tables.constraint_rows import CHECK_CONSTRAINTS_COLUMNS
from spark_replica.sql_handlers.tables.ddl import type_text
from spark_replica.sql_handlers.tables.definitions import TABLES
from spark_replica.sql_handlers.tables.replica_tables import InfoRow, InfoRows, ReplicaCatalog

_TABLE_TYPE_COLUMN = 3


@cache
def virtual_info_schema() -> InfoSchema:
    columns = [
        Column(
            name=column.name,
            type=type_text(column.sql_type),
            table=table.name,
            is_nullable=column.nullable,
            schema=table.schema,
        )
        for table in TABLES.values()
        for column in table.columns
    ]
    info = _InfoSchema(InfoSchema.from_columns(columns).tables)
    info.tables["information_schema"]["check_constraints"] = Table(CHECK_CONSTRAINTS_COLUMNS)
    tables = info.tables["information_schema"]["tables"]
    ours = {(t.schema, t.name) for t in TABLES.values()}
    tables.rows = [
        _with_type(row, "BASE TABLE") if (row[1], row[2]) in ours else row for row in tables.rows
    ]
    return info


def _with_type(row: tuple[object, ...], table_type: str) -> tuple[object, ...]:
    return row[:_TABLE_TYPE_COLUMN] + (table_type,) + row[_TABLE_TYPE_COLUMN + 1 :]


@cache
def _virtual_rows() -> InfoRows:
    """The virtual information_schema's listing tables as dict rows."""
    tables = virtual_info_schema().tables["information_schema"]

    def rows(name: str) -> list[InfoRow]:
        table = tables[name]
        return [dict(zip(table.columns, row, strict=True)) for row in table.rows]

    return InfoRows(rows("schemata"), rows("tables"), rows("columns"), rows("statistics"))


@dataclass(frozen=True, slots=True)
class CatalogSnapshot:
    """information_schema as one statement sees it."""

    #: The replicated catalog the snapshot was built from.
    catalog: ReplicaCatalog
    #: What the information_schema middleware queries (mysql-mimic's sqlglot executor).
    info_schema: InfoSchema
    #: The SCHEMATA, TABLES, COLUMNS and STATISTICS rows, for SHOW.
    rows: InfoRows


_lock = threading.Lock()
_last: list[tuple[TableCatalog | None, CatalogSnapshot]] = []


def catalog_snapshot(tables: TableCatalog | None) -> CatalogSnapshot:
    """information_schema over the virtual tables and ``tables``' current content.

    The last snapshot is kept and reused while the catalog reads the same (the server has one
    catalog; tests run several servers in one process, which only costs rebuilds).
    """
    catalog = ReplicaCatalog.read(tables)
    with _lock:
        if _last and _last[0][0] is tables and _last[0][1].catalog == catalog:
            return _last[0][1]
    snapshot = _build(catalog)
    with _lock:
        _last[:] = [(tables, snapshot)]
    return snapshot


def _build(catalog: ReplicaCatalog) -> CatalogSnapshot:
    virtual = _virtual_rows()
    if not catalog.databases:
        return CatalogSnapshot(catalog, virtual_info_schema(), virtual)
    rows = virtual.merged(InfoRows.of(catalog))
    base = virtual_info_schema().tables
    listed = {
        "schemata": rows.schemata,
        "tables": rows.tables,
        "columns": rows.columns,
        "statistics": rows.statistics,
        "table_constraints": rows.constraints,
        "key_column_usage": rows.key_usage,
        "referential_constraints": rows.referential,
        "check_constraints": rows.checks,
        "views": rows.objects.views,
        "triggers": rows.objects.triggers,
        "routines": rows.objects.routines,
        "events": rows.objects.events,
    }
    listing = {
        name: _table(base["information_schema"][name], found) for name, found in listed.items()
    }
    tables = {**base, "information_schema": {**base["information_schema"], **listing}}
    return CatalogSnapshot(catalog, _InfoSchema(tables), rows)


#: mysql-mimic's information_schema columns, and CHECK_CONSTRAINTS, which it has not.
_SCHEMA = {
    **INFO_SCHEMA,
    "information_schema": {
        **INFO_SCHEMA["information_schema"],
        "check_constraints": dict.fromkeys(CHECK_CONSTRAINTS_COLUMNS, "TEXT"),
    },
}


class _InfoSchema(InfoSchema):
    """mysql-mimic's information_schema with the tables it lacks (CHECK_CONSTRAINTS)."""

    @override
    async def query(self, expression: exp.Expression) -> AllowedResult:
        result = execute(self._preprocess(expression), schema=_SCHEMA, tables=self.tables)
        return result.rows, result.columns


def _table(template: Table, rows: Sequence[InfoRow]) -> Table:
    """A sqlglot executor table with ``template``'s columns holding ``rows``."""
    columns = template.columns
    return Table(columns, [tuple(row.get(c) for c in columns) for row in rows])


async def query_info_schema(
    info: InfoSchema, expression: exp.Expression, database: str | None
) -> AllowedResult:
    """Answer a query over information_schema (and mysql-mimic's mysql.user and friends):
    1146 for a table these schemas do not have, the executor's failures as MySQL errors."""
    named = {cte.alias_or_name.lower() for cte in expression.find_all(exp.CTE)}
    for table in expression.find_all(exp.Table):
        schema = (table.db or database or "").lower()
        known = info.tables.get(schema)
        name = table.name.lower()
        if known is not None and name and name not in known and name not in named:
            raise ReplicaError.from_code(ErrorCode.NO_SUCH_TABLE, schema, table.name)
    try:
        return await info.query(expression)
    except (ExecuteError, OptimizeError) as e:
        raise executor_error(e, expression) from e
