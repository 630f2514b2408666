"""SELECTs over the virtual tables (performance_schema, mysql.*), run on sqlglot's executor.

Column names are case-insensitive in MySQL but not in the executor, so the query and the rows
are lower-cased before execution and the result columns get back MySQL's case (or the alias
or expression text the user wrote), with types taken from the table definitions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from sqlglot import expressions as exp
from sqlglot.errors import ExecuteError, OptimizeError
from sqlglot.executor import execute

from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.sql_handlers.tables.definitions import Column, TableDef, ValueKind, get_table

VIRTUAL_SCHEMAS = frozenset({"performance_schema", "mysql"})

RowSource = Callable[[TableDef], Sequence[tuple[object, ...]]]


_EXECUTOR_TYPES = {
    ValueKind.INTEGER: "BIGINT",
    ValueKind.UNSIGNED: "BIGINT",
    ValueKind.DECIMAL: "DECIMAL",
    ValueKind.FLOAT: "DOUBLE",
    ValueKind.STRING: "TEXT",
    ValueKind.TIMESTAMP: "TEXT",
    ValueKind.BLOB: "TEXT",
}


@dataclass(frozen=True, slots=True)
class ResultField:
    name: str
    kind: ValueKind


def virtual_tables(expression: exp.Expression, database: str | None) -> list[TableDef] | None:
    """The virtual tables a query reads; ``None`` when it reads none of them."""
    found: list[TableDef] = []
    others = False
    for table in expression.find_all(exp.Table):
        schema = (table.db or database or "").lower()
        if schema in VIRTUAL_SCHEMAS:
            definition = get_table(schema, table.name)
            if definition is None:
                if schema == "mysql":
                    others = True
                    continue
                raise ReplicaError.from_code(ErrorCode.NO_SUCH_TABLE, schema, table.name)
            if definition not in found:
                found.append(definition)
        elif table.name:
            others = True
    if not found:
        return None
    if others:
        raise ReplicaError.from_code(
            ErrorCode.NOT_SUPPORTED_YET,
            "queries that mix performance_schema or mysql tables with other tables",
        )
    return found


def run(
    expression: exp.Expression,
    tables: list[TableDef],
    source: RowSource,
    database: str | None,
) -> tuple[list[ResultField], list[tuple[object, ...]]]:
    """Execute ``expression`` over the rows ``source`` gives for each table."""
    data: dict[str, dict[str, list[dict[str, object]]]] = {}
    schema: dict[str, dict[str, dict[str, str]]] = {}
    for table in tables:
        schema.setdefault(table.schema, {})[table.name] = {
            c.name.lower(): _EXECUTOR_TYPES[c.kind] for c in table.columns
        }
        names = [c.name.lower() for c in table.columns]
        records = [dict(zip(names, row, strict=True)) for row in source(table)]
        data.setdefault(table.schema, {})[table.name] = records
    query = _lowercase(expression.copy(), database)
    try:
        result = execute(query, schema=schema, tables=data, dialect="mysql")
    except (ExecuteError, OptimizeError) as e:
        raise _as_mysql_error(e) from e
    result_rows: list[tuple[object, ...]] = [tuple(row) for row in result.rows]
    fields = _fields(expression, list(result.columns), _resolver(expression, tables), result_rows)
    rows = [tuple(_mysql_value(v) for v in row) for row in result_rows]
    return fields, rows


def _lowercase(expression: exp.Expression, database: str | None) -> exp.Expression:
    for table in expression.find_all(exp.Table):
        if not table.db and database:
            table.set("db", exp.to_identifier(database))
    for identifier in expression.find_all(exp.Identifier):
        if isinstance(identifier.parent, exp.TableAlias | exp.Alias):
            continue
        identifier.set("this", identifier.name.lower())
    return expression


def _resolver(
    expression: exp.Expression, tables: list[TableDef]
) -> Callable[[str, str], Column | None]:
    """Find a column's definition by name, honouring a table qualifier or alias."""
    by_alias: dict[str, TableDef] = {}
    for node in expression.find_all(exp.Table):
        definition = next((t for t in tables if t.name == node.name.lower()), None)
        if definition is not None:
            by_alias[node.alias_or_name.lower()] = definition

    def resolve(name: str, qualifier: str) -> Column | None:
        candidates = [by_alias[qualifier.lower()]] if qualifier.lower() in by_alias else tables
        for table in candidates:
            try:
                return table.column(name)
            except KeyError:
                continue
        return None

    return resolve


def _fields(
    original: exp.Expression,
    columns: list[str],
    resolve: Callable[[str, str], Column | None],
    rows: Sequence[tuple[object, ...]],
) -> list[ResultField]:
    selects = original.selects if isinstance(original, exp.Query) else []
    has_star = any(isinstance(s, exp.Star) or s.is_star for s in selects)
    fields: list[ResultField] = []
    for i, name in enumerate(columns):
        column: Column | None = None
        shown = name
        if has_star or i >= len(selects):
            column = resolve(name, "")
            shown = column.name if column else name
        else:
            projection = selects[i]
            if isinstance(projection, exp.Alias):
                shown = projection.alias
                inner = projection.this
                if isinstance(inner, exp.Column):
                    column = resolve(inner.name, inner.table)
            elif isinstance(projection, exp.Column):
                column = resolve(projection.name, projection.table)
                shown = column.name if column else projection.name
            else:
                shown = projection.sql(dialect="mysql")
        kind = column.kind if column else _infer_kind([row[i] for row in rows])
        fields.append(ResultField(shown, kind))
    return fields


def _infer_kind(values: list[object]) -> ValueKind:
    for value in values:
        if value is None:
            continue
        if isinstance(value, bool | int):
            return ValueKind.INTEGER
        if isinstance(value, float):
            return ValueKind.FLOAT
        if isinstance(value, Decimal):
            return ValueKind.DECIMAL
        if isinstance(value, bytes):
            return ValueKind.BLOB
        return ValueKind.STRING
    return ValueKind.STRING


def _mysql_value(value: object) -> object:
    if isinstance(value, bool):
        return int(value)
    return value


def _as_mysql_error(error: Exception) -> ReplicaError:
    text = str(error)
    if "could not be resolved" in text:
        name = text.split("'")[1] if "'" in text else text
        return ReplicaError.from_code(ErrorCode.BAD_FIELD_ERROR, name, "field list")
    return ReplicaError.from_code(ErrorCode.UNKNOWN_ERROR, text)
