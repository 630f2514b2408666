"""Correlated scalar subqueries of a stored function's step, rewritten as grouped joins.

The steps that ``routines`` builds read their variables in scalar subqueries (``SET d = (SELECT
MAX(from_date) FROM dept_emp WHERE emp_no = id)``). Spark 4.3 decorrelates such subqueries
itself, but over those steps (derived tables of derived tables, ``LIMIT 1``) it returned NULL
for rows that have a value. So each one is decorrelated here, the textbook way::

    (SELECT x FROM t WHERE t.a = __s.v AND c LIMIT 1)
        -> __q1.__v  with  LEFT JOIN (SELECT t.a AS __k0, ANY_VALUE(x) AS __v FROM t
                                      WHERE c GROUP BY t.a) AS __q1 ON __q1.__k0 = __s.v

An aggregate is grouped the same way (COUNT gives 0, not NULL, where no row matches). Without
``LIMIT 1``, a subquery that finds several rows fails with MySQL's message ("Subquery returns
more than 1 row"), as in MySQL. What this does not rewrite gives 1235: a correlation other than
``inner = outer`` in the WHERE clause, or with GROUP BY, HAVING, DISTINCT, ORDER BY, OFFSET
or a LIMIT other than 1. A subquery that reads no outer column is left as it is.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from sqlglot import expressions as exp

from spark_replica.sql_handlers.query.routine_bodies import refusal

_KEY = "__k{}"
_VALUE = "__v"


class Decorrelator:
    """Rewrites the subqueries of steps; ``aliases`` names the joined tables (``__q1`` ...)."""

    def __init__(self) -> None:
        self.aliases: Iterator[str] = (f"__q{n}" for n in itertools.count(1))

    def step(self, step: exp.Select, function: str) -> None:
        """Rewrite, in place, each correlated scalar subquery that ``step`` itself evaluates."""
        outer = sources(step)
        for sub in [s for s in step.find_all(exp.Subquery) if _scalar_of(s, step)]:
            if _outer_columns(sub, outer):
                self._rewrite(step, sub, outer, function)

    def _rewrite(self, step: exp.Select, sub: exp.Subquery, outer: set[str], fn: str) -> None:
        select = sub.this
        if not isinstance(select, exp.Select) or len(select.expressions) != 1:
            raise refusal(fn, "a correlated subquery that is not one SELECT of one value")
        for clause in ("group", "having", "distinct", "order", "offset", "windows"):
            if select.args.get(clause):
                raise refusal(fn, f"a correlated subquery with {clause.upper()}")
        limit = select.args.get("limit")
        if limit is not None and limit.expression != exp.Literal.number(1):
            raise refusal(fn, "a correlated subquery with a LIMIT other than 1")
        own = outer - sources(select)
        keys, rest = self._split_where(select, own, fn)
        if any(_outer_columns(part, own) for part in [*select.expressions, *rest]) or any(
            _outer_columns(join, own) for join in select.args.get("joins") or []
        ):
            raise refusal(fn, "a correlated subquery reading outer columns outside its WHERE")
        value = select.expressions[0]
        value = value.this if isinstance(value, exp.Alias) else value
        alias = next(self.aliases)
        grouped = exp.Select(
            expressions=[
                *(exp.alias_(inner.copy(), _KEY.format(i), quoted=True)
                  for i, (inner, _) in enumerate(keys)),
                exp.alias_(_aggregated(value, limit is not None), _VALUE, quoted=True),
            ],
        )  # fmt: skip
        grouped.set("from_", select.args["from_"].copy() if select.args.get("from_") else None)
        grouped.set("joins", [j.copy() for j in select.args.get("joins") or []])
        if rest:
            grouped.set("where", exp.Where(this=exp.and_(*(r.copy() for r in rest))))
        grouped.set("group", exp.Group(expressions=[inner.copy() for inner, _ in keys]))
        on = exp.and_(
            *(
                exp.EQ(this=exp.column(_KEY.format(i), alias, quoted=True), expression=o.copy())
                for i, (_, o) in enumerate(keys)
            )
        )
        table = exp.Subquery(this=grouped, alias=exp.TableAlias(this=exp.to_identifier(alias)))
        step.append("joins", exp.Join(this=table, side="LEFT", on=on))
        found: exp.Expr = exp.column(_VALUE, alias, quoted=True)
        if isinstance(value, exp.Count):
            found = exp.Coalesce(this=found, expressions=[exp.Literal.number(0)])
        sub.replace(found)

    @staticmethod
    def _split_where(
        select: exp.Select, outer: set[str], fn: str
    ) -> tuple[list[tuple[exp.Expr, exp.Expr]], list[exp.Expr]]:
        """The ``inner = outer`` conditions as (inner, outer) pairs, and the others."""
        where = select.args.get("where")
        keys: list[tuple[exp.Expr, exp.Expr]] = []
        rest: list[exp.Expr] = []
        for part in _conjuncts(where.this) if where is not None else []:
            if not _outer_columns(part, outer):
                rest.append(part)
                continue
            if isinstance(part, exp.EQ):
                left, right = part.this, part.expression
                if not _outer_columns(left, outer) and _only_outer(right, outer):
                    keys.append((left, right))
                    continue
                if not _outer_columns(right, outer) and _only_outer(left, outer):
                    keys.append((right, left))
                    continue
            text = part.sql("mysql").replace("`__s`.", "")  # a variable by its own name
            raise refusal(fn, f"the correlated condition {text[:60]}")
        return keys, rest


def _conjuncts(condition: exp.Expr) -> list[exp.Expr]:
    """The operands of a chain of ANDs (parentheses looked through)."""
    condition = condition.unnest()
    if isinstance(condition, exp.And):
        return [*_conjuncts(condition.this), *_conjuncts(condition.expression)]
    return [condition]


def sources(select: exp.Select) -> set[str]:
    """The names the tables and derived tables of ``select``'s FROM and joins go by."""
    items = [select.args.get("from_"), *(select.args.get("joins") or [])]
    return {item.this.alias_or_name for item in items if item is not None}


def _scalar_of(sub: exp.Subquery, step: exp.Select) -> bool:
    """Whether ``sub`` is a scalar subquery that ``step`` evaluates (not a derived table)."""
    return (
        not isinstance(sub.parent, (exp.From, exp.Join)) and sub.find_ancestor(exp.Select) is step
    )


def _columns(node: exp.Expr) -> list[exp.Column]:
    """The columns ``node`` reads, not those of the derived tables it holds (which have
    names of their own: the function tables' steps are all ``__s``)."""
    derived = (exp.From, exp.Join)
    return [
        n
        for n in node.walk(
            prune=lambda n: isinstance(n, exp.Subquery) and isinstance(n.parent, derived)
        )
        if isinstance(n, exp.Column)
    ]


def _outer_columns(node: exp.Expr, outer: set[str]) -> bool:
    if isinstance(node, exp.Join):
        node = node.args.get("on") or exp.true()
    return any(c.table in outer for c in _columns(node))


def _only_outer(node: exp.Expr, outer: set[str]) -> bool:
    columns = _columns(node)
    return (
        bool(columns)
        and all(c.table in outer for c in columns)
        and not any(node.find_all(exp.Subquery))
    )


def _aggregated(value: exp.Expr, limited: bool) -> exp.Expr:
    """The subquery's value per group of keys: its aggregate, or any row's value (LIMIT 1),
    or MySQL's error where several rows match."""
    if any(isinstance(node, exp.AggFunc) for node in value.walk()):
        return value.copy()
    one = exp.AnyValue(this=value.copy())
    if limited:
        return one
    several = exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(1))
    error = exp.Anonymous(
        this="RAISE_ERROR", expressions=[exp.Literal.string("Subquery returns more than 1 row")]
    )
    return exp.If(this=several, true=error, false=one)
