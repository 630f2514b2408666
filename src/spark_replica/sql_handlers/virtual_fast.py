"""The fast path for simple SELECTs over one virtual table.

Monitoring tools mostly send queries such as ``SELECT CHANNEL_NAME, SERVICE_STATE FROM
performance_schema.replication_applier_status WHERE CHANNEL_NAME = 'c1'``. Optimising and
planning those on sqlglot's executor costs milliseconds each time; :func:`compile_select`
instead turns the common shape into column positions and predicates once per query, and
:meth:`FastSelect.run` applies them to the rows directly.

The shape recognised:

* one table in FROM (optionally aliased; schema-qualified or found through the default
  database) and nothing else: no JOIN, GROUP BY, HAVING, DISTINCT, window, subquery, UNION,
  hint or lock clause;
* a projection of ``*``, ``t.*`` and plain columns (optionally qualified, optionally aliased);
* a WHERE that is an AND of ``col = literal``, ``col <> literal`` (or ``!=``), ``<``, ``<=``,
  ``>``, ``>=``, ``col [NOT] IN (literals)`` and ``col IS [NOT] NULL``, where a literal is a
  string for a string column, a number for a numeric one, or NULL;
* ORDER BY columns, select-list aliases or positions, ASC or DESC; LIMIT n [OFFSET m].

Anything else, an unknown column included, gives ``None``: the caller then runs the query on
the executor, which also words the errors. The answers are the executor's: string columns
compare and sort ignoring case (as MySQL's ``_ci`` collations do), NULLs sort first ascending
and last descending, and rows that tie keep the order the table gives them.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import expressions as exp

from spark_replica.sql_handlers.tables.columns import TableDef, ValueKind

Row = tuple[object, ...]
Predicate = Callable[[Row], bool]
Operator = Callable[[Any, Any], bool]

_INTEGER = re.compile(r"[0-9]+")
_SELECT_PARTS = frozenset({"expressions", "from_", "where", "order", "limit", "offset"})
_NUMERIC = frozenset({ValueKind.INTEGER, ValueKind.UNSIGNED, ValueKind.DECIMAL, ValueKind.FLOAT})
# Each comparison's operator, and the operator to use when the literal is on the left.
_COMPARISONS: dict[type[exp.Expression], tuple[Operator, Operator]] = {
    exp.EQ: (operator.eq, operator.eq),
    exp.NEQ: (operator.ne, operator.ne),
    exp.LT: (operator.lt, operator.gt),
    exp.LTE: (operator.le, operator.ge),
    exp.GT: (operator.gt, operator.lt),
    exp.GTE: (operator.ge, operator.le),
}


class _Decline(Exception):
    """The query is not of the simple shape; the executor answers it."""


@dataclass(frozen=True, slots=True)
class SortKey:
    """One ORDER BY term: a column position, its direction, where NULLs go, case folding."""

    index: int
    descending: bool
    nulls_first: bool
    fold: bool


@dataclass(frozen=True, slots=True)
class FastSelect:
    """A compiled simple SELECT: result names and kinds, and how to compute its rows."""

    fields: list[tuple[str, ValueKind]]
    picks: tuple[int, ...]
    predicates: tuple[Predicate, ...]
    order: tuple[SortKey, ...]
    offset: int
    limit: int | None

    def run(self, rows: Sequence[Row]) -> list[Row]:
        predicates = self.predicates
        kept = [row for row in rows if all(test(row) for test in predicates)]
        for key in reversed(self.order):
            kept.sort(key=_sort_key(key), reverse=key.descending)
        if self.limit is not None:
            kept = kept[self.offset : self.offset + self.limit]
        picks = self.picks
        return [tuple(_plain(row[i]) for i in picks) for row in kept]


@dataclass(frozen=True, slots=True)
class _Source:
    table: TableDef
    qualifier: str  # the alias, or the table name, in lower case
    positions: dict[str, int]  # lower-case column name -> position in a row


def compile_select(
    expression: exp.Expression, table: TableDef, database: str | None
) -> FastSelect | None:
    """``expression`` compiled for the rows of ``table``; ``None`` if it is not simple."""
    try:
        return _compile(expression, table, database)
    except _Decline:
        return None


def _compile(expression: exp.Expression, table: TableDef, database: str | None) -> FastSelect:
    if type(expression) is not exp.Select:
        raise _Decline
    for key, value in expression.args.items():
        if value and key not in _SELECT_PARTS:
            raise _Decline
    source = _source(expression.args.get("from_"), table, database)
    picks, names, aliases = _projection(expression.expressions, source)
    predicates: list[Predicate] = []
    where = expression.args.get("where")
    if where is not None:
        _only(where, "this")
        _conjuncts(where.this, source, predicates)
    order = _order(expression.args.get("order"), source, picks, aliases)
    limit = _count(expression.args.get("limit"))
    offset = _count(expression.args.get("offset"))
    if offset is not None and limit is None:
        raise _Decline
    columns = table.columns
    return FastSelect(
        fields=[(name, columns[i].kind) for name, i in zip(names, picks, strict=True)],
        picks=tuple(picks),
        predicates=tuple(predicates),
        order=tuple(order),
        offset=offset or 0,
        limit=limit,
    )


def _only(node: exp.Expression, *keys: str) -> None:
    """Decline unless ``node`` sets no argument other than ``keys``."""
    for key, value in node.args.items():
        if value and key not in keys:
            raise _Decline


def _source(from_: object, table: TableDef, database: str | None) -> _Source:
    if not isinstance(from_, exp.From):
        raise _Decline
    _only(from_, "this")
    node = from_.this
    if not isinstance(node, exp.Table) or not isinstance(node.this, exp.Identifier):
        raise _Decline
    _only(node, "this", "db", "alias")
    if (node.db or database or "").lower() != table.schema or node.name.lower() != table.name:
        raise _Decline
    qualifier = node.name
    alias = node.args.get("alias")
    if alias is not None:
        if not isinstance(alias, exp.TableAlias):
            raise _Decline
        _only(alias, "this")
        qualifier = alias.name
    positions = {column.name.lower(): i for i, column in enumerate(table.columns)}
    return _Source(table, qualifier.lower(), positions)


def _column(node: exp.Expression, source: _Source) -> int:
    """The row position of the table column ``node`` names."""
    if not isinstance(node, exp.Column) or not isinstance(node.this, exp.Identifier):
        raise _Decline
    _only(node, "this", "table")
    if node.table and node.table.lower() != source.qualifier:
        raise _Decline
    position = source.positions.get(node.this.name.lower())
    if position is None:
        raise _Decline
    return position


def _projection(
    items: list[exp.Expression], source: _Source
) -> tuple[list[int], list[str], dict[str, list[int]]]:
    """Row positions and names of the result columns, and where each alias is among them."""
    columns = source.table.columns
    picks: list[int] = []
    names: list[str] = []
    aliases: dict[str, list[int]] = {}
    for item in items:
        if isinstance(item, exp.Star) or (
            isinstance(item, exp.Column) and isinstance(item.this, exp.Star)
        ):
            if isinstance(item, exp.Column):
                _only(item, "this", "table")
                if item.table.lower() != source.qualifier:
                    raise _Decline
                item = item.this
            _only(item)
            picks.extend(range(len(columns)))
            names.extend(column.name for column in columns)
        elif isinstance(item, exp.Alias):
            _only(item, "this", "alias")
            aliases.setdefault(item.alias.lower(), []).append(len(picks))
            picks.append(_column(item.this, source))
            names.append(item.alias)
        else:
            position = _column(item, source)
            picks.append(position)
            names.append(columns[position].name)
    return picks, names, aliases


def _conjuncts(node: exp.Expression, source: _Source, out: list[Predicate]) -> None:
    node = _unparen(node)
    if isinstance(node, exp.And):
        _only(node, "this", "expression")
        _conjuncts(node.this, source, out)
        _conjuncts(node.expression, source, out)
        return
    negated = isinstance(node, exp.Not)
    if negated:
        _only(node, "this")
        node = _unparen(node.this)
    if isinstance(node, exp.In):
        out.append(_in(node, source, negated))
    elif isinstance(node, exp.Is):
        _only(node, "this", "expression")
        if not isinstance(node.expression, exp.Null):
            raise _Decline
        position = _column(node.this, source)
        if negated:
            out.append(lambda row: row[position] is not None)
        else:
            out.append(lambda row: row[position] is None)
    elif not negated and type(node) in _COMPARISONS:
        out.append(_comparison(node, source))
    else:
        raise _Decline


def _unparen(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        _only(node, "this")
        node = node.this
    return node


def _comparison(node: exp.Expression, source: _Source) -> Predicate:
    op, swapped = _COMPARISONS[type(node)]
    _only(node, "this", "expression")
    column, literal = node.this, node.expression
    if not isinstance(column, exp.Column):
        column, literal, op = literal, column, swapped
    position = _column(column, source)
    kind = source.table.columns[position].kind
    value = _value(literal, kind)
    if value is None:
        return _never
    if kind is ValueKind.STRING:

        def test_folded(row: Row) -> bool:
            found = row[position]
            if found is None:
                return False
            return op(found.casefold() if isinstance(found, str) else found, value)

        return test_folded

    def test(row: Row) -> bool:
        found = row[position]
        return found is not None and op(found, value)

    return test


def _in(node: exp.In, source: _Source, negated: bool) -> Predicate:
    _only(node, "this", "expressions")
    position = _column(node.this, source)
    kind = source.table.columns[position].kind
    literals = [_value(item, kind) for item in node.expressions]
    values = frozenset(v for v in literals if v is not None)
    if negated and None in literals:
        return _never  # x NOT IN (..., NULL) is never true
    fold = kind is ValueKind.STRING

    def test(row: Row) -> bool:
        found = row[position]
        if found is None:
            return False
        if fold and isinstance(found, str):
            found = found.casefold()
        return (found in values) != negated

    return test


def _value(node: exp.Expression, kind: ValueKind) -> object:
    """The literal ``node`` as compared with a column of ``kind``: folded, parsed or None."""
    if isinstance(node, exp.Null):
        return None
    negative = isinstance(node, exp.Neg)
    if negative:
        _only(node, "this")
        node = node.this
    if not isinstance(node, exp.Literal):
        raise _Decline
    text = node.this
    if node.is_string:
        if negative or kind is not ValueKind.STRING:
            raise _Decline
        return text.casefold()
    if kind not in _NUMERIC:
        raise _Decline
    signed = "-" + text if negative else text
    if _INTEGER.fullmatch(text):
        return int(signed)
    if kind is ValueKind.FLOAT:
        try:
            return float(signed)
        except ValueError:
            raise _Decline from None
    raise _Decline


def _order(
    order: object, source: _Source, picks: list[int], aliases: dict[str, list[int]]
) -> list[SortKey]:
    if order is None:
        return []
    if not isinstance(order, exp.Order):
        raise _Decline
    _only(order, "expressions")
    keys: list[SortKey] = []
    for ordered in order.expressions:
        if not isinstance(ordered, exp.Ordered):
            raise _Decline
        _only(ordered, "this", "desc", "nulls_first")
        target = ordered.this
        if isinstance(target, exp.Literal) and not target.is_string:
            if not _INTEGER.fullmatch(target.this) or not 0 < int(target.this) <= len(picks):
                raise _Decline
            position = picks[int(target.this) - 1]
        elif isinstance(target, exp.Column) and not target.table and target.name.lower() in aliases:
            # A select-list alias comes before a table column of the same name, as in MySQL.
            found = aliases[target.name.lower()]
            if len(found) > 1:
                raise _Decline
            position = picks[found[0]]
        else:
            position = _column(target, source)
        kind = source.table.columns[position].kind
        keys.append(
            SortKey(
                index=position,
                descending=bool(ordered.args.get("desc")),
                nulls_first=bool(ordered.args.get("nulls_first")),
                fold=kind is ValueKind.STRING,
            )
        )
    return keys


def _count(node: object) -> int | None:
    if node is None:
        return None
    if not isinstance(node, exp.Limit | exp.Offset):
        raise _Decline
    _only(node, "expression")
    value = node.expression
    if not isinstance(value, exp.Literal) or value.is_string or not _INTEGER.fullmatch(value.this):
        raise _Decline
    return int(value.this)


def _sort_key(key: SortKey) -> Callable[[Row], tuple[Any, ...]]:
    # Sorted ascending and then reversed for DESC: NULLs go low when they should end up first
    # ascending or last descending.
    null: tuple[Any, ...] = (0,) if key.nulls_first != key.descending else (2,)
    index, fold = key.index, key.fold

    def sort_key(row: Row) -> tuple[Any, ...]:
        value = row[index]
        if value is None:
            return null
        if fold and isinstance(value, str):
            return (1, value.casefold())
        return (1, value)

    return sort_key


def _never(row: Row) -> bool:
    return False


def _plain(value: object) -> object:
    return int(value) if isinstance(value, bool) else value
