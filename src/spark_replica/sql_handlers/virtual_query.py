"""SELECTs over the virtual tables (performance_schema, mysql.*), and SELECTs that read no
table (``SELECT 1``), on sqlglot's executor with its failures worded as MySQL errors.

Simple single-table queries are answered by :mod:`.virtual_fast`; everything else runs on
sqlglot's executor. Column names are case-insensitive in MySQL but not in the executor, so
the query is lower-cased before execution and the result columns get back MySQL's case (or the
alias or expression text the user wrote), with types taken from the table definitions.

String columns compare, group and sort ignoring case, as under MySQL's default ``_ci``
collations: their values are handed to the executor as :class:`FoldedStr`, and the string
literals compared with them are case-folded first, since sqlglot's optimizer folds comparisons
between literals (``x = 'a' AND x <> 'A'`` becomes ``x = 'a'``) case-sensitively. Still
case-sensitive, unlike MySQL: LIKE, and the strings functions return (``UPPER``, ``CONCAT``...).
On both paths ENUM columns sort by their text, where MySQL sorts them by their position in the
ENUM list.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from sqlglot import expressions as exp
from sqlglot.errors import ExecuteError, OptimizeError
from sqlglot.executor import execute

from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.sql_handlers.gtid_functions import NAMES as GTID_FUNCTIONS
from spark_replica.sql_handlers.gtid_functions import evaluate_gtid_functions
from spark_replica.sql_handlers.mysql_functions import MYSQL_FUNCTIONS
from spark_replica.sql_handlers.tables.definitions import Column, TableDef, ValueKind, get_table
from spark_replica.sql_handlers.virtual_fast import compile_select

VIRTUAL_SCHEMAS = frozenset({"performance_schema", "mysql"})

RowSource = Callable[[TableDef], Sequence[tuple[object, ...]]]
Resolver = Callable[[str, str], Column | None]
Described = list[tuple[str, Column | None]]


_EXECUTOR_TYPES = {
    ValueKind.INTEGER: "BIGINT",
    ValueKind.UNSIGNED: "BIGINT",
    ValueKind.DECIMAL: "DECIMAL",
    ValueKind.FLOAT: "DOUBLE",
    ValueKind.STRING: "TEXT",
    ValueKind.TIMESTAMP: "TEXT",
    ValueKind.BLOB: "TEXT",
}

# MySQL's order for resolving a SELECT's clauses, and how its errors name each clause.
_CLAUSES = (
    ("expressions", "field list"),
    ("joins", "on clause"),
    ("where", "where clause"),
    ("group", "group statement"),
    ("having", "having clause"),
    ("order", "order clause"),
)
# The comparisons whose string literals are case-folded before optimisation.
_COMPARISONS: tuple[type[exp.Expression], ...] = (exp.EQ, exp.NEQ, exp.NullSafeEQ, exp.LT)
_COMPARISONS += (exp.LTE, exp.GT, exp.GTE, exp.In, exp.Between)
_UNRESOLVED = re.compile(r"Column '([^']*)' could not be resolved(?: for table: '([^']*)')?")
_UNKNOWN = re.compile(r"Unknown column: (.*)")
_UNKNOWN_POSITION = re.compile(r"Unknown output column: (.*)")
_UNKNOWN_TABLE = re.compile(r"Unknown table: (.*)")
_STEP = re.compile(r"^Step '.*?' failed: ")
_MISSING_FUNCTION = re.compile(r"name '(\w+)' is not defined")


@dataclass(frozen=True, slots=True)
class ResultField:
    name: str
    kind: ValueKind


class FoldedStr(str):
    """A string that compares, sorts and hashes ignoring case, as MySQL's ``_ci`` collations."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return self.casefold() == other.casefold()
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        if isinstance(other, str):
            return self.casefold() != other.casefold()
        return NotImplemented

    def __lt__(self, other: str) -> bool:
        return self.casefold() < other.casefold()

    def __le__(self, other: str) -> bool:
        return self.casefold() <= other.casefold()

    def __gt__(self, other: str) -> bool:
        return self.casefold() > other.casefold()

    def __ge__(self, other: str) -> bool:
        return self.casefold() >= other.casefold()

    def __hash__(self) -> int:
        return hash(self.casefold())


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
    """Answer ``expression`` over the rows ``source`` gives for each table."""
    if len(tables) == 1:
        fast = compile_select(expression, tables[0], database)
        if fast is not None:
            fields = [ResultField(name, kind) for name, kind in fast.fields]
            return fields, fast.run(source(tables[0]))
    return run_on_executor(expression, tables, source, database)


def static_select(
    expression: exp.Expression, database: str | None = None
) -> tuple[list[tuple[object, ...]], list[str]] | None:
    """Answer a SELECT that reads no table (``SELECT 1``, ``SELECT @@version``,
    ``SELECT 1 FROM DUAL WHERE 1 = 0``, with any clause) on sqlglot's executor, as mysql-mimic
    does, with MySQL's GTID functions (``gtid_functions.py``) and the executor's failures
    worded as MySQL errors (1054 for an unknown column, in the clause that names it; 1305 for
    an unknown function, ``database`` being the session's); ``None`` for other queries.
    """
    if not reads_no_table(expression):
        return None
    tables = list(expression.find_all(exp.Table))
    query: exp.Expression = expression
    if tables:  # FROM DUAL: MySQL's name for "no table"
        query = expression.copy()
        query.set("from_", None)
        if query.find(exp.Table):
            return None
    if query.find(exp.Anonymous):  # a function sqlglot does not know: maybe one of ours
        query = evaluate_gtid_functions(query.copy() if query is expression else query)
    try:
        result = execute(query)
    except (ExecuteError, OptimizeError) as e:
        raise executor_error(e, expression, database) from e
    return [tuple(row) for row in result.rows], list(result.columns)


def reads_no_table(expression: exp.Expression) -> bool:
    """A SELECT without tables, or FROM DUAL only."""
    return isinstance(expression, exp.Select) and all(
        _is_dual(table) for table in expression.find_all(exp.Table)
    )


def _is_dual(table: exp.Table) -> bool:
    """``FROM DUAL``: the unquoted, unqualified keyword directly in a SELECT's FROM."""
    name = table.this
    return (
        isinstance(name, exp.Identifier)
        and not name.quoted
        and name.name.upper() == "DUAL"
        and not table.args.get("db")
        and isinstance(table.parent, exp.From)
        and table.parent.parent is not None
        and table.parent.arg_key == "from_"
    )


def run_on_executor(
    expression: exp.Expression,
    tables: list[TableDef],
    source: RowSource,
    database: str | None,
) -> tuple[list[ResultField], list[tuple[object, ...]]]:
    """Execute ``expression`` on sqlglot's executor (any query :func:`run` accepts)."""
    data: dict[str, dict[str, list[dict[str, object]]]] = {}
    schema: dict[str, dict[str, dict[str, str]]] = {}
    for table in tables:
        schema.setdefault(table.schema, {})[table.name] = {
            c.name.lower(): _EXECUTOR_TYPES[c.kind] for c in table.columns
        }
        names = [c.name.lower() for c in table.columns]
        folded = [c.kind is ValueKind.STRING for c in table.columns]
        records = [
            {
                name: FoldedStr(value) if fold and isinstance(value, str) else value
                for name, value, fold in zip(names, row, folded, strict=True)
            }
            for row in source(table)
        ]
        data.setdefault(table.schema, {})[table.name] = records
    query = _lowercase(expression.copy(), database)
    _fold_literals(query, _resolver(_sources(query, tables), tables))
    try:
        result = execute(query, schema=schema, tables=data, dialect="mysql")
    except (ExecuteError, OptimizeError) as e:
        raise executor_error(e, expression) from e
    result_rows: list[tuple[object, ...]] = [tuple(row) for row in result.rows]
    fields = _fields(expression, list(result.columns), tables, result_rows)
    rows = [tuple(_mysql_value(v) for v in row) for row in result_rows]
    return fields, rows


def _lowercase(expression: exp.Expression, database: str | None) -> exp.Expression:
    # Aliases too: MySQL matches column and table aliases ignoring case. The result columns
    # are named from the original expression, so the aliases' own case is not lost.
    for table in expression.find_all(exp.Table):
        if not table.db and database:
            table.set("db", exp.to_identifier(database))
    for identifier in expression.find_all(exp.Identifier):
        identifier.set("this", identifier.name.lower())
    return expression


def _fold_literals(query: exp.Expression, resolve: Resolver) -> None:
    """Case-fold the string literals compared with string columns (see the module docstring)."""
    for literal in list(query.find_all(exp.Literal)):
        comparison = literal.parent
        if not literal.is_string or not isinstance(comparison, _COMPARISONS):
            continue
        if isinstance(comparison, exp.In | exp.Between):
            operands = [comparison.this]
        else:
            operands = [comparison.this, comparison.expression]
        for operand in operands:
            if isinstance(operand, exp.Column):
                column = resolve(operand.name, operand.table)
                if column is not None and column.kind is ValueKind.STRING:
                    literal.set("this", literal.name.casefold())
                    break


def _sources(expression: exp.Expression, tables: list[TableDef]) -> dict[str, TableDef]:
    """Each virtual table the query reads, by its alias (or name) in lower case."""
    by_alias: dict[str, TableDef] = {}
    for node in expression.find_all(exp.Table):
        definition = next((t for t in tables if t.name == node.name.lower()), None)
        if definition is not None:
            by_alias[node.alias_or_name.lower()] = definition
    return by_alias


def _resolver(by_alias: dict[str, TableDef], tables: list[TableDef]) -> Resolver:
    """Find a column's definition by name, honouring a table qualifier or alias."""

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
    tables: list[TableDef],
    rows: Sequence[tuple[object, ...]],
) -> list[ResultField]:
    by_alias = _sources(original, tables)
    resolve = _resolver(by_alias, tables)
    described = _describe(original, by_alias, resolve)
    if described is None or len(described) != len(columns):
        described = []
        for name in columns:
            column = resolve(name, "")
            described.append((column.name if column else name, column))
    return [
        ResultField(shown, column.kind if column else _infer_kind([row[i] for row in rows]))
        for i, (shown, column) in enumerate(described)
    ]


def _describe(
    query: exp.Expression, by_alias: dict[str, TableDef], resolve: Resolver
) -> Described | None:
    """The name and (if it is a table column) definition of each result column."""
    if isinstance(query, exp.SetOperation):
        return _describe(query.this, by_alias, resolve)
    if not isinstance(query, exp.Select):
        return None
    described: Described = []
    for projection in query.expressions:
        if isinstance(projection, exp.Star) or projection.is_star:
            qualifier = projection.table if isinstance(projection, exp.Column) else ""
            expanded = _expand_star(query, qualifier, by_alias, resolve)
            if expanded is None:
                return None
            described.extend(expanded)
        elif isinstance(projection, exp.Alias):
            inner = projection.this
            column = resolve(inner.name, inner.table) if isinstance(inner, exp.Column) else None
            described.append((projection.alias, column))
        elif isinstance(projection, exp.Column):
            column = resolve(projection.name, projection.table)
            described.append((column.name if column else projection.name, column))
        else:
            described.append((projection.sql(dialect="mysql"), None))
    return described


def _expand_star(
    select: exp.Select, qualifier: str, by_alias: dict[str, TableDef], resolve: Resolver
) -> Described | None:
    """The columns ``*`` (or ``qualifier.*``) stands for: each source's, in FROM/JOIN order."""
    from_ = select.args.get("from_")
    joins: list[exp.Join] = select.args.get("joins") or []
    if not isinstance(from_, exp.From) or any(j.args.get("using") or j.method for j in joins):
        return None  # USING and NATURAL joins merge columns: leave those to the executor's names
    expanded: Described = []
    for source in [from_.this, *(join.this for join in joins)]:
        if qualifier and source.alias_or_name.lower() != qualifier.lower():
            continue
        if isinstance(source, exp.Table):
            definition = by_alias.get(source.alias_or_name.lower())
            if definition is None:
                return None
            expanded.extend((column.name, column) for column in definition.columns)
        elif isinstance(source, exp.Subquery):
            inner = _describe(source.this, by_alias, resolve)
            if inner is None:
                return None
            expanded.extend(inner)
        else:
            return None
    return expanded or None


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
    if isinstance(value, FoldedStr):
        return str.__str__(value)
    return value


def executor_error(
    error: Exception, original: exp.Expression, database: str | None = None
) -> ReplicaError:
    """The MySQL error for a failure of sqlglot's executor on the query ``original``: 1054
    for an unknown column, 1051 for an unknown table qualifier, a function it has no code
    for as ``function_error`` says, 1105 with the executor's text for an expression it
    cannot evaluate."""
    text = str(error)
    missing = _MISSING_FUNCTION.search(text)
    if missing:
        return function_error(original, missing.group(1), database)
    table = _UNKNOWN_TABLE.match(text)
    if table:
        return ReplicaError.from_code(ErrorCode.BAD_TABLE_ERROR, table.group(1))
    position = _UNKNOWN_POSITION.match(text)
    if position:
        return ReplicaError.from_code(
            ErrorCode.BAD_FIELD_ERROR, position.group(1), _positional_clause(original, position)
        )
    unresolved = _UNRESOLVED.match(text)
    unknown = _UNKNOWN.match(text)
    if unresolved:
        name, qualifier = unresolved.group(1), unresolved.group(2) or ""
    elif unknown:
        name, qualifier = unknown.group(1), ""
    else:
        # The executor names the failing step of its plan by object address: not for clients.
        return ReplicaError.from_code(ErrorCode.UNKNOWN_ERROR, _STEP.sub("", text, count=1))
    found = _clause_of(original, name, qualifier)
    clause, qualifier = found if found else ("field list", qualifier)
    shown = f"{qualifier}.{name}" if qualifier else name
    return ReplicaError.from_code(ErrorCode.BAD_FIELD_ERROR, shown.lower(), clause)


def function_error(
    original: exp.Expression, executor_name: str, database: str | None
) -> ReplicaError:
    """A function of ``original`` the executor has no code for (it names it
    ``executor_name``): a name MySQL does not know is 1305 ``FUNCTION db.name does not
    exist`` (1046 without a current database, as MySQL looks it up as a stored function);
    a MySQL function is 1235, naming it and where it cannot run (a GTID function evaluated
    only on constant arguments says so)."""
    for function in original.find_all(exp.Func):
        if isinstance(function, exp.Anonymous):
            name = function.name
            if name.upper() != executor_name.upper():
                continue
            if name.upper() not in MYSQL_FUNCTIONS:
                if not database:
                    return ReplicaError.from_code(ErrorCode.NO_DB_ERROR)
                return ReplicaError.from_code(
                    ErrorCode.SP_DOES_NOT_EXIST, "FUNCTION", f"{database}.{name}"
                )
        elif function.key.upper() == executor_name.upper():
            name = function.sql(dialect="mysql").split("(", 1)[0]
        else:
            continue
        what = "in a SELECT without tables"
        if not reads_no_table(original):
            what = "in queries on the server's system tables"
        if name.upper() in GTID_FUNCTIONS:
            what = "with arguments other than constants and variables"
        return ReplicaError.from_code(ErrorCode.NOT_SUPPORTED_YET, f"{name.upper()}() {what}")
    return ReplicaError.from_code(ErrorCode.UNKNOWN_ERROR, f"cannot evaluate {executor_name}")


def _clause_of(original: exp.Expression, name: str, qualifier: str) -> tuple[str, str] | None:
    """The first clause (in MySQL's order) that refers to column ``name``, and its qualifier."""
    for select in original.find_all(exp.Select):
        for key, clause in _CLAUSES:
            parts = select.args.get(key)
            for part in parts if isinstance(parts, list) else [parts]:
                if not isinstance(part, exp.Expression):
                    continue
                for column in part.find_all(exp.Column):
                    if column.name.lower() == name.lower() and (
                        not qualifier or column.table.lower() == qualifier.lower()
                    ):
                        return clause, column.table
    return None


def _positional_clause(original: exp.Expression, position: re.Match[str]) -> str:
    """Where a column position out of range (``ORDER BY 9``, ``GROUP BY 9``) was written."""
    for group in original.find_all(exp.Group):
        if any(
            isinstance(e, exp.Literal) and e.name == position.group(1) for e in group.expressions
        ):
            return "group statement"
    return "order clause"
