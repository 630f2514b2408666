"""A user's MySQL SELECT as Spark SQL over the replicated tables.

``to_spark_sql`` takes the sqlglot MySQL tree of one SELECT, UNION or WITH query (as
mysql-mimic hands it to ``Session.query``) and returns the Spark SQL text to run plus the
replicated tables it reads. The caller's tree is copied, never changed. sqlglot's own
MySQL to Spark translation does most of the work (``LIMIT a, b``, ``IFNULL``, ``IF``,
``DATE_FORMAT``, ``GROUP_CONCAT`` as ``LISTAGG``, ``<=>``, ``REGEXP`` as ``RLIKE``, ``DIV``,
``%``/``MOD``, ``CONCAT``, ``->>``, ``WITH ROLLUP``, window functions); the rules below fix
what it leaves invalid on Spark 4 or different from MySQL. Every identifier is quoted in the
output, so Spark keywords and odd characters in names are safe.

Tables
    Every table reference that is not a CTE in scope is a replicated table
    ``TableRef(db or the current database, name)``; names are case-sensitive. No database
    gives 1046, a table ``resolve`` does not know gives 1146. The reference reads the Spark
    identifier ``resolve`` returns, under the name the query uses for it:
    ``FROM shop.orders`` becomes ``FROM `__replica_v12` AS `orders```, an alias is kept.
    ``shop.orders.id`` becomes ``orders.id``. Two unaliased tables of one FROM with the
    same name (``db1.t JOIN db2.t``) are named ``db1.t`` and ``db2.t`` so that
    ``db1.t.x`` still finds its table. ``FROM dual`` is removed.

Grouped queries
    A column a grouped SELECT reads outside its GROUP BY keys and aggregates is
    ``ANY_VALUE(column)`` (``group_by``): MySQL allows it when the column depends on the
    key, and returns some row's value without ONLY_FULL_GROUP_BY; Spark refuses it.
    ``GROUP_CONCAT(DISTINCT x ORDER BY y)``, which Spark's LISTAGG refuses (with ``y`` not
    ``x``; on Spark 4.1 with ``y`` = ``x`` too, unless ``x`` is a string), is built from
    arrays (``group_concat``).

Scalar subqueries taking a first row
    ``(SELECT x ... [ORDER BY k] LIMIT 1)`` becomes ``ANY_VALUE(x)``, ``MIN_BY``/``MAX_BY``
    (``first_row``): Spark's own decorrelation of LIMIT answers wrong rows when the
    correlation compares different types, so the session turns it off.

Stored functions
    Calls of stored functions the replica keeps become joins with their values
    (``routines``).

Result column names
    Unaliased columns of the result are named as MySQL names them: a column by its name as
    written (``SELECT ID`` gives ``ID``, not Spark's ``id``), a string literal by its value,
    any other expression by its MySQL text as sqlglot prints it (``COUNT(*)``, where Spark
    would say ``count(1)``). An ORDER BY item equal to a renamed expression then refers to
    it by that name (Spark no longer matches ``SELECT DISTINCT a + 1 ... ORDER BY a + 1``).

MySQL has no boolean type
    A comparison is an integer 0/1/NULL and any number is a truth value. So a condition
    (``WHERE``, ``HAVING``, ``ON``, ``AND``/``OR``/``NOT``/``XOR`` operands, ``IF`` and
    ``CASE WHEN`` conditions, ``x IS TRUE``) that is not a predicate becomes
    ``CAST(x AS BOOLEAN)`` (``WHERE active``, ``HAVING COUNT(*)``), and a predicate used as a
    value (the select list, ``SUM(a > 1)``, ``(a > 1) + (b > 1)``) becomes
    ``CAST(p AS BIGINT)``; ``TRUE``/``FALSE`` used as values are 1/0.
    ``a XOR b`` becomes ``(a <> b)`` over those booleans: the same truth table as
    ``(a OR b) AND NOT (a AND b)`` including NULL (NULL when either side is NULL), and each
    operand is evaluated once.

Casts
    ``UNSIGNED [INTEGER]`` is ``PMOD(CAST(x AS DECIMAL(20,0)), 2^64)``: BIGINT UNSIGNED is
    stored as DECIMAL(20,0), fractions round half away from zero as in MySQL, and negative
    results wrap (``CAST(-1 AS UNSIGNED)`` = 18446744073709551615). ``SIGNED [INTEGER]`` is
    ``CAST(CAST(x AS DECIMAL(20,0)) AS BIGINT)``, so 1.5 rounds to 2 as in MySQL (a plain
    BIGINT cast truncates) and long digit strings convert exactly. ``CHAR[(n)]`` (with or
    without CHARACTER SET, also ``NCHAR`` and ``CONVERT(x USING cs)``) is STRING, cut to
    ``n`` characters; ``BINARY(n)`` is BINARY cut to ``n`` bytes. ``DATETIME[(fsp)]`` is
    TIMESTAMP_NTZ: a wall-clock value without time zone, the type DATETIME columns are
    stored as, so no session time zone shifts it. ``TIME``, ``YEAR`` and ``JSON`` casts
    give 1235 (Spark 4.3 has no TIME type; TIME columns are stored as intervals).

Other rules
    ``COLLATE x_bin``/``binary``/``x_cs`` becomes ``COLLATE UTF8_BINARY``, ``x_ci``
    becomes ``COLLATE UTF8_LCASE`` (accent-insensitive ``_ai_ci`` too), other collations
    are dropped. Character set introducers (``_utf8mb4'a'``) are dropped, ``_binary'a'`` is
    a BINARY cast. The modifiers ``SQL_CALC_FOUND_ROWS``, ``SQL_NO_CACHE``,
    ``HIGH_PRIORITY``, ``SQL_BUFFER_RESULT``, ``SQL_SMALL_RESULT``, ``SQL_BIG_RESULT`` and
    ``STRAIGHT_JOIN`` are removed (``SQL_CACHE`` is no keyword since MySQL 8.0.3, so
    ``SELECT SQL_CACHE a`` reads column ``SQL_CACHE`` named ``a``, in MySQL as here),
    ``t1 STRAIGHT_JOIN t2`` is a JOIN, index hints and ``FOR UPDATE``/``FOR SHARE``/
    ``LOCK IN SHARE MODE`` are dropped. ``LIMIT`` beyond 2^31-1 (MySQL's "all rows from
    the offset" idiom) is dropped. The divisor of ``/``, ``DIV``, ``%`` and ``MOD`` is
    wrapped in ``NULLIF(d, 0)``: MySQL returns NULL where Spark's ANSI mode fails.
    ``JSON_EXTRACT``/``->`` in the select list returns JSON text as MySQL does (a string
    keeps its quotes) via ``TO_JSON(VARIANT_GET(PARSE_JSON(doc), path))``; elsewhere
    (comparisons) and for wildcard paths it is ``GET_JSON_OBJECT``, which unquotes strings
    so that ``doc->'$.s' = 'x'`` compares as in MySQL. ``JSON_UNQUOTE(JSON_EXTRACT(...))``
    is ``->>``. ``JSON_EXTRACT`` with several paths gives 1235. ``LENGTH`` (bytes in MySQL)
    is ``OCTET_LENGTH``, ``MID`` is ``SUBSTRING``, ``FROM_UNIXTIME(n, format)`` is
    ``DATE_FORMAT(FROM_UNIXTIME(n), format)`` (sqlglot drops the format). Anything else
    sqlglot reports it cannot express in Spark (``TRUNCATE(x, d)``) gives 1235 rather
    than a silently different query.

Known differences (not emulated)
    - Case-insensitive comparison. MySQL's default collations compare strings ignoring case
      (``WHERE name = 'ALICE'`` matches 'alice'; also LIKE, REGEXP, GROUP BY, DISTINCT,
      ORDER BY, MIN/MAX); Spark compares bytes. A column's collation is not known here, so
      this needs the views to expose ``_ci`` columns as ``STRING COLLATE UTF8_LCASE``, or an
      explicit ``COLLATE x_ci`` in the query. Accents are always significant in Spark.
    - ``/`` gives DOUBLE on integers where MySQL gives DECIMAL with 4 more decimals
      (``1/3`` is 0.3333333333333333, not 0.3333).
    - Spark's ANSI mode raises where MySQL warns: invalid numbers in strings
      (``CAST('abc' AS SIGNED)``, ``'abc' = 0``, a non-numeric string as a condition),
      integer overflow, out-of-range casts (MySQL saturates, and wraps
      ``CAST(18446744073709551615 AS SIGNED)`` to -1).
    - Casts between temporal and numeric values differ (MySQL's ``CAST(d AS SIGNED)`` is
      20240102); a DATETIME(fsp) cast keeps microseconds instead of rounding to ``fsp``;
      ``BINARY(n)`` does not pad with 0x00.
    - JSON text: objects and arrays print without MySQL's spaces (``{"a":1}``, not
      ``{"a": 1}``); ``->>`` of a JSON null is NULL, not 'null'.
    - ``GROUP_CONCAT`` is not cut at ``group_concat_max_len`` (1024).
    - Bitwise operators work on signed BIGINT, MySQL's on unsigned 64-bit integers.
    - Hexadecimal literals (``0x41``) are always binary strings, never numbers.
    - Row order without ORDER BY differs (``WITH ROLLUP`` super-aggregate rows included).
      NULLs sort first ascending and last descending in both.
    - Spark resolves table aliases and CTE names ignoring case, and sqlglot moves nested
      WITH clauses to the top of the query.
    - MySQL functions Spark lacks fail in Spark as unresolved routines: ``WEEK``,
      ``FIELD``, ``STRCMP``, ``ADDDATE``/``SUBDATE``, ``MAKEDATE``, ``TIME_FORMAT``,
      ``SEC_TO_TIME``, ``TIME_TO_SEC``, ``JSON_ARRAY``, ``JSON_OBJECT``, ``JSON_LENGTH``,
      ``JSON_VALID``, ``JSON_TYPE``, ``MATCH ... AGAINST``, ``MEMBER OF``; ``UTC_TIMESTAMP``
      comes out as an invalid ``CURRENT_TIMESTAMP('UTC')``.
    - Unnamed result columns are named from sqlglot's printing of the expression, not the
      exact text typed (``count(*)`` is named ``COUNT(*)``).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

from sqlglot import exp
from sqlglot.errors import ErrorLevel, UnsupportedError
from sqlglot.helper import seq_get

from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.storage import TableRef
from spark_replica.sql_handlers.query.bare_count import counted, counted_table
from spark_replica.sql_handlers.query.first_row import first_rows_as_aggregates
from spark_replica.sql_handlers.query.group_by import any_value_for_ungrouped
from spark_replica.sql_handlers.query.group_concat import distinct_ordered
from spark_replica.sql_handlers.query.routines import FunctionLookup, inline_functions
from spark_replica.sql_handlers.query.views import ViewLookup, expand_views

#: ``resolve(ref)``: the Spark identifier to read for a replicated table, None if unknown.
Resolver = Callable[[TableRef], str | None]
#: A table's rows where the engine knows them without reading the table; None otherwise.
RowCount = Callable[[TableRef], int | None]

_TWO_TO_64 = 2**64
_MAX_SPARK_LIMIT = 2**31 - 1
#: How BIGINT UNSIGNED values are stored.
_BIGINT_UNSIGNED = "DECIMAL(20, 0)"
_UNSIGNED_TYPES = {
    exp.DataType.Type.UBIGINT,
    exp.DataType.Type.UINT,
    exp.DataType.Type.UMEDIUMINT,
    exp.DataType.Type.USMALLINT,
    exp.DataType.Type.UTINYINT,
}
_CHAR_TYPES = {
    exp.DataType.Type.CHAR,
    exp.DataType.Type.NCHAR,
    exp.DataType.Type.CHARACTER_SET,
    exp.DataType.Type.VARCHAR,
    exp.DataType.Type.NVARCHAR,
    exp.DataType.Type.TEXT,
}
_DATETIME_TYPES = {
    exp.DataType.Type.DATETIME,
    exp.DataType.Type.DATETIME2,
    exp.DataType.Type.DATETIME64,
    exp.DataType.Type.TIMESTAMP,
}
_UNSUPPORTED_CASTS = {
    exp.DataType.Type.TIME: "CAST(... AS TIME)",
    exp.DataType.Type.YEAR: "CAST(... AS YEAR)",
    exp.DataType.Type.JSON: "CAST(... AS JSON)",
}
#: Nodes whose value is a truth value (Paren and ESCAPE are looked through).
_BOOLEAN_NODES = (exp.Predicate, exp.Connector, exp.Not, exp.Boolean)
#: Operators whose operands are conditions.
_LOGICAL_NODES = (exp.And, exp.Or, exp.Xor, exp.Not)
_CLAUSES_WITH_CONDITION = (exp.Where, exp.Having, exp.Qualify)


class SparkQuery(NamedTuple):
    """A user's query translated for Spark."""

    #: The Spark SQL text to run.
    sql: str
    #: The replicated tables it reads, without duplicates, in order of appearance.
    tables: tuple[TableRef, ...]


def to_spark_sql(
    expression: exp.Expr,
    *,
    database: str | None,
    resolve: Resolver,
    views: ViewLookup | None = None,
    functions: FunctionLookup | None = None,
    count: RowCount | None = None,
) -> SparkQuery:
    """``expression`` (one MySQL SELECT/UNION/WITH query) as Spark SQL over the views;
    ``views`` gives the replicated views, whose references become their queries;
    ``functions`` the stored functions kept, whose calls become joins (``routines``);
    ``count`` the rows of a table where the engine knows them without a scan, which a bare
    ``SELECT COUNT(*) FROM t`` returns (``bare_count``).

    Raises ``ReplicaError`` 1046 (a table without database and no current database), 1146
    (``resolve`` does not know a table), 1235 (a construct Spark cannot run), 1356 or 1462
    (a view that cannot run).
    """
    tree: exp.Expr = expression.copy()
    lookup = functions or (lambda name: None)

    def read_views() -> None:
        if views is not None:
            expand_views(tree, database or None, views, lambda ref: resolve(ref) is not None,
                         _replicated_tables, _name_result_columns, lookup)  # fmt: skip

    read_views()
    _name_result_columns(tree)
    if inline_functions(tree, database or None, lookup):
        read_views()  # the views that the functions' bodies read
    tables = _replace_tables(tree, database or None, resolve)
    if count is not None and len(tables) == 1 and counted_table(tree) is not None:
        rows = count(tables[0])
        if rows is not None:
            assert isinstance(tree, exp.Select)
            return SparkQuery(_generate(counted(tree, rows)), tables)
    any_value_for_ungrouped(tree)
    distinct_ordered(tree)
    first_rows_as_aggregates(tree)
    tree = _rewrite_expressions(tree)
    return SparkQuery(_generate(tree), tables)


def _generate(tree: exp.Expr) -> str:
    """The Spark SQL text; 1235 where sqlglot would drop or change part of the query."""
    try:
        return tree.sql(dialect="spark", identify=True, unsupported_level=ErrorLevel.RAISE)
    except UnsupportedError as error:
        raise ReplicaError.from_code(ErrorCode.NOT_SUPPORTED_YET, str(error)) from error


# --- result column names ------------------------------------------------------------------


def _name_result_columns(tree: exp.Expr) -> None:
    """Alias the unaliased columns of the result with the names MySQL gives them.

    An ORDER BY item equal to such a column then names its alias: Spark no longer matches
    it to the aliased expression (``SELECT DISTINCT a + 1 ... ORDER BY a + 1``).
    """
    select = _leading_select(tree)
    if select is None:
        return
    renamed: list[tuple[exp.Expr, str]] = []
    projections = []
    for projection in select.expressions:
        named = _named(projection)
        if named is not projection and not isinstance(projection, exp.Column):
            renamed.append((projection, named.alias))
        projections.append(named)
    select.set("expressions", projections)
    order = select.args.get("order")
    for item in order.expressions if order is not None else []:
        alias = next((alias for value, alias in renamed if value == item.this), None)
        if alias is not None:
            item.set("this", exp.column(alias, quoted=True))


def _leading_select(tree: exp.Expr) -> exp.Select | None:
    """The SELECT whose select list names the result's columns (the first of a UNION)."""
    node = tree
    while isinstance(node, (exp.SetOperation, exp.Subquery)):
        node = node.this
    return node if isinstance(node, exp.Select) else None


def _named(projection: exp.Expr) -> exp.Expr:
    if isinstance(projection, (exp.Alias, exp.Star)):
        return projection
    if isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star):
        return projection
    return exp.alias_(projection, _mysql_name(projection), quoted=True, copy=False)


def _mysql_name(projection: exp.Expr) -> str:
    if isinstance(projection, exp.Column):
        return projection.name
    if isinstance(projection, exp.Introducer):
        projection = projection.expression
    if isinstance(projection, exp.Literal) and projection.is_string:
        return projection.name
    return projection.sql(dialect="mysql")


# --- tables ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _Source:
    """A reference to a replicated table and the Spark identifier it reads."""

    table: exp.Table
    ref: TableRef
    view: str


def _replace_tables(
    tree: exp.Expr, database: str | None, resolve: Resolver
) -> tuple[TableRef, ...]:
    """Point every replicated table at its view; the tables read, in order of appearance."""
    sources = [_source(table, database, resolve) for table in _replicated_tables(tree)]
    qualified = _assign_aliases(sources)
    for source in sources:
        source.table.set("this", exp.to_identifier(source.view, quoted=True))
        for key in ("db", "catalog", "hints"):
            source.table.set(key, None)
    _requalify_columns(tree, qualified)
    return tuple(dict.fromkeys(source.ref for source in sources))


def _replicated_tables(tree: exp.Expr) -> list[exp.Table]:
    found = [
        table
        for table in tree.find_all(exp.Table, bfs=False)
        if isinstance(table.this, exp.Identifier)
        and not _is_dual(table)
        and not _is_cte_reference(table)
    ]
    order = {id(table): index for index, table in enumerate(found)}
    return sorted(found, key=lambda table: (_position(table), order[id(table)]))


def _position(table: exp.Table) -> int:
    """Where the table's name starts in the query text (parsed trees carry it)."""
    start = table.this.meta.get("start")
    return start if isinstance(start, int) else sys.maxsize


def _is_dual(table: exp.Table) -> bool:
    return (
        not table.db
        and table.name.lower() == "dual"
        and isinstance(table.parent, exp.From)
        and table.parent.parent is not None
        and not table.parent.parent.args.get("joins")
    )


def _is_cte_reference(table: exp.Table) -> bool:
    """Whether ``table`` names a CTE visible where it stands (MySQL's scoping)."""
    if table.db:
        return False
    child: exp.Expr = table
    for node in _ancestors(table):
        if any(cte.alias == table.name for cte in _visible_ctes(node, child)):
            return True
        child = node
    return False


def _ancestors(node: exp.Expr) -> Iterator[exp.Expr]:
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def _visible_ctes(node: exp.Expr, child: exp.Expr) -> list[exp.CTE]:
    """The CTEs of ``node`` visible from its child ``child``."""
    if isinstance(node, exp.With):
        ctes: list[exp.CTE] = node.expressions
        index = next(i for i, cte in enumerate(ctes) if cte is child)
        # A CTE sees the ones before it; WITH RECURSIVE also lets it see itself.
        return ctes[: index + 1] if node.args.get("recursive") else ctes[:index]
    with_ = node.args.get("with_")
    if isinstance(with_, exp.With) and with_ is not child:
        return list(with_.expressions)
    return []


def _source(table: exp.Table, database: str | None, resolve: Resolver) -> _Source:
    schema = table.db or database
    if schema is None:
        raise ReplicaError.from_code(ErrorCode.NO_DB_ERROR)
    ref = TableRef(schema, table.name)
    view = resolve(ref)
    if view is None:
        raise ReplicaError.from_code(ErrorCode.NO_SUCH_TABLE, ref.schema, ref.table)
    return _Source(table, ref, view)


#: ``id(select) -> {(db, table): alias}`` for the unaliased tables of each FROM.
_Qualified = dict[int, dict[tuple[str, str], str]]


def _assign_aliases(sources: list[_Source]) -> _Qualified:
    """Give each table its alias: its own, else its name (``db.name`` when two share it)."""
    by_select: dict[int, list[_Source]] = {}
    for source in sources:
        if not source.table.alias:
            by_select.setdefault(id(_owning_select(source.table)), []).append(source)
    qualified: _Qualified = {}
    for select_id, unaliased in by_select.items():
        counts = Counter(source.ref.table for source in unaliased)
        names = qualified.setdefault(select_id, {})
        for source in unaliased:
            alias = source.ref.table if counts[source.ref.table] == 1 else str(source.ref)
            names[(source.ref.schema, source.ref.table)] = alias
            source.table.set("alias", exp.TableAlias(this=exp.to_identifier(alias, quoted=True)))
    return qualified


def _owning_select(table: exp.Table) -> exp.Expr | None:
    """The SELECT whose FROM/JOIN lists the table, if any."""
    if isinstance(table.parent, (exp.From, exp.Join)):
        return table.parent.parent
    return None


def _requalify_columns(tree: exp.Expr, qualified: _Qualified) -> None:
    """Rewrite ``db.table.col`` to ``alias.col`` (the innermost FROM listing that table)."""
    for column in tree.find_all(exp.Column):
        if not column.args.get("db"):
            continue
        key = (column.text("db"), column.table)
        for node in _ancestors(column):
            alias = qualified.get(id(node), {}).get(key)
            if alias is not None:
                column.set("table", exp.to_identifier(alias, quoted=True))
                column.set("db", None)
                break


# --- expressions ----------------------------------------------------------------------------


def _rewrite_expressions(tree: exp.Expr) -> exp.Expr:
    """Apply the node rules children first, so a rule sees rewritten operands."""
    for node in reversed(list(tree.walk(bfs=False))):
        parent, key, index = node.parent, node.arg_key, node.index
        replacement = _rewrite_node(node)
        if not isinstance(node, exp.Paren):  # what it holds is coerced instead
            replacement = _coerce(replacement, *_slot(node))
        if replacement is node:
            continue
        if parent is None:
            tree = replacement
        else:
            parent.set(key or "this", replacement, index)
    return tree


def _rewrite_node(node: exp.Expr) -> exp.Expr:
    rule = _RULES.get(type(node))
    return rule(node) if rule is not None else node


def _rewrite_select(select: exp.Expr) -> exp.Expr:
    for key in ("operation_modifiers", "locks"):
        select.set(key, None)
    source = select.args.get("from_")
    if source is not None and isinstance(source.this, exp.Table) and _is_dual(source.this):
        select.set("from_", None)
    limit = select.args.get("limit")
    if limit is not None and _int_literal(limit.expression) > _MAX_SPARK_LIMIT:
        select.set("limit", None)
    return select


def _int_literal(node: exp.Expr | None) -> int:
    """The value of an integer literal; -1 for anything else."""
    if isinstance(node, exp.Literal) and node.is_int:
        return int(node.name)
    return -1


def _rewrite_join(join: exp.Expr) -> exp.Expr:
    if str(join.args.get("kind") or "").upper() == "STRAIGHT_JOIN":
        join.set("kind", None)
    return join


def _rewrite_cast(cast: exp.Expr) -> exp.Expr:
    assert isinstance(cast, exp.Cast)
    kind = cast.to.this
    value = cast.this
    if kind in _UNSUPPORTED_CASTS:
        raise ReplicaError.from_code(ErrorCode.NOT_SUPPORTED_YET, _UNSUPPORTED_CASTS[kind])
    if kind in _UNSIGNED_TYPES:
        return exp.Anonymous(
            this="PMOD",
            expressions=[
                exp.cast(value, _BIGINT_UNSIGNED, copy=False),
                exp.Literal.number(_TWO_TO_64),
            ],
        )
    if kind == exp.DataType.Type.BIGINT:
        return exp.cast(
            exp.cast(value, _BIGINT_UNSIGNED, copy=False), exp.DataType.Type.BIGINT, copy=False
        )
    if kind in _CHAR_TYPES:
        return _cut(exp.cast(value, exp.DataType.Type.TEXT, copy=False), _length(cast.to))
    if kind == exp.DataType.Type.BINARY:
        return _cut(exp.cast(value, exp.DataType.Type.BINARY, copy=False), _length(cast.to))
    if kind in _DATETIME_TYPES:
        return exp.cast(value, exp.DataType.Type.TIMESTAMPNTZ, copy=False)
    return cast


def _length(to: exp.DataType) -> exp.Expr | None:
    params = to.expressions
    return params[0].this if params else None


def _cut(value: exp.Expr, length: exp.Expr | None) -> exp.Expr:
    if length is None:
        return value
    return exp.Substring(this=value, start=exp.Literal.number(1), length=length)


def _rewrite_collate(collate: exp.Expr) -> exp.Expr:
    name = _spark_collation(collate.expression.name)
    if name is None:
        return collate.this
    collate.set("expression", exp.var(name))
    return collate


def _spark_collation(mysql_collation: str) -> str | None:
    name = mysql_collation.lower()
    if name == "binary" or name.endswith(("_bin", "_cs")):
        return "UTF8_BINARY"
    if name.endswith("_ci"):
        return "UTF8_LCASE"
    return None


def _rewrite_introducer(introducer: exp.Expr) -> exp.Expr:
    literal = introducer.expression
    if introducer.text("this").lower() == "_binary":
        return exp.cast(literal, exp.DataType.Type.BINARY, copy=False)
    return literal


def _rewrite_xor(xor: exp.Expr) -> exp.Expr:
    """Both operands are already booleans (condition slots): XOR is inequality."""
    return exp.paren(exp.NEQ(this=_wrap(xor.this), expression=_wrap(xor.expression)), copy=False)


def _wrap(node: exp.Expr) -> exp.Expr:
    atomic = (exp.Paren, exp.Func, exp.Column, exp.Literal, exp.Boolean, exp.Null)
    return node if isinstance(node, atomic) else exp.paren(node, copy=False)


def _guard_divisor(division: exp.Expr) -> exp.Expr:
    """MySQL's x / 0, x DIV 0 and x % 0 are NULL; Spark's ANSI mode raises."""
    divisor = division.expression
    if isinstance(divisor, exp.Literal) and not divisor.is_string and float(divisor.name):
        return division
    division.set("expression", exp.Nullif(this=divisor, expression=exp.Literal.number(0)))
    return division


def _rewrite_json_extract(extract: exp.Expr) -> exp.Expr:
    if extract.expressions:
        raise ReplicaError.from_code(ErrorCode.NOT_SUPPORTED_YET, "JSON_EXTRACT with several paths")
    path = extract.expression
    has_wildcard = path.find(exp.JSONPathWildcard, exp.JSONPathRecursive, exp.JSONPathSlice)
    if not _is_projection(extract) or has_wildcard:
        return extract  # GET_JSON_OBJECT: unquoted, compares as MySQL's JSON does
    document = exp.Anonymous(this="PARSE_JSON", expressions=[extract.this])
    value = exp.Anonymous(this="VARIANT_GET", expressions=[document, path])
    return exp.Anonymous(this="TO_JSON", expressions=[value])


def _is_projection(node: exp.Expr) -> bool:
    if isinstance(node.parent, exp.Alias):
        node = node.parent
    return isinstance(node.parent, exp.Select) and node.arg_key == "expressions"


def _rewrite_anonymous(function: exp.Expr) -> exp.Expr:
    name = function.name.upper()
    arguments = function.expressions
    if name == "JSON_UNQUOTE" and len(arguments) == 1:
        inner = arguments[0]
        if isinstance(inner, exp.JSONExtract) and not inner.expressions:
            return exp.JSONExtractScalar(this=inner.this, expression=inner.expression)
    if name == "MID" and len(arguments) in (2, 3):
        return exp.Substring(this=arguments[0], start=arguments[1], length=seq_get(arguments, 2))
    return function


def _rewrite_length(length: exp.Expr) -> exp.Expr:
    """MySQL's LENGTH counts bytes (CHAR_LENGTH counts characters)."""
    if length.args.get("binary"):
        return exp.Anonymous(this="OCTET_LENGTH", expressions=[length.this])
    return length


def _rewrite_from_unixtime(function: exp.Expr) -> exp.Expr:
    """FROM_UNIXTIME(n, format) is DATE_FORMAT(FROM_UNIXTIME(n), format)."""
    pattern = function.args.get("format")
    if pattern is None:
        return function
    function.set("format", None)
    return exp.TimeToStr(this=function, format=pattern)  # already in sqlglot's notation


_RULES: dict[type[exp.Expr], Callable[[exp.Expr], exp.Expr]] = {
    exp.Select: _rewrite_select,
    exp.Join: _rewrite_join,
    exp.Cast: _rewrite_cast,
    exp.Collate: _rewrite_collate,
    exp.Introducer: _rewrite_introducer,
    exp.Xor: _rewrite_xor,
    exp.Div: _guard_divisor,
    exp.IntDiv: _guard_divisor,
    exp.Mod: _guard_divisor,
    exp.JSONExtract: _rewrite_json_extract,
    exp.Anonymous: _rewrite_anonymous,
    exp.Length: _rewrite_length,
    exp.UnixToTime: _rewrite_from_unixtime,
}


# --- MySQL truth values -------------------------------------------------------------------


def _coerce(replacement: exp.Expr, parent: exp.Expr | None, key: str) -> exp.Expr:
    """Make ``replacement`` a boolean in a condition and a number elsewhere.

    ``parent`` and ``key`` are where the node being replaced stands (see ``_slot``).
    """
    if parent is None or isinstance(replacement, (exp.Select, exp.SetOperation)):
        return replacement
    boolean = _is_boolean(replacement)
    if _is_condition(parent, key):
        return (
            replacement if boolean else exp.cast(replacement, exp.DataType.Type.BOOLEAN, copy=False)
        )
    if not boolean or _keeps_boolean(parent, key):
        return replacement
    if isinstance(replacement, exp.Boolean):
        return exp.Literal.number(1 if replacement.this else 0)
    return exp.cast(replacement, exp.DataType.Type.BIGINT, copy=False)


def _slot(node: exp.Expr) -> tuple[exp.Expr | None, str]:
    """The node's parent and argument name, looking through parentheses."""
    child, parent = node, node.parent
    while isinstance(parent, exp.Paren):
        child, parent = parent, parent.parent
    return parent, child.arg_key or ""


def _is_boolean(node: exp.Expr) -> bool:
    while isinstance(node, (exp.Paren, exp.Escape)):
        node = node.this
    return isinstance(node, _BOOLEAN_NODES)


def _is_condition(parent: exp.Expr, key: str) -> bool:
    if isinstance(parent, _LOGICAL_NODES + _CLAUSES_WITH_CONDITION):
        return True
    if isinstance(parent, exp.Join):
        return key == "on"
    if isinstance(parent, exp.Escape):  # the LIKE of LIKE ... ESCAPE
        return key == "this"
    if isinstance(parent, exp.If):
        simple_case = isinstance(parent.parent, exp.Case) and parent.parent.this is not None
        return key == "this" and not simple_case
    if isinstance(parent, exp.Is):
        return key == "this" and isinstance(parent.expression, exp.Boolean)
    return False


def _keeps_boolean(parent: exp.Expr, key: str) -> bool:
    """The TRUE/FALSE of ``x IS TRUE`` stays a boolean literal."""
    return isinstance(parent, exp.Is) and key == "expression"
