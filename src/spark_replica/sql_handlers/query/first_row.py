"""Scalar subqueries that take a first row (``LIMIT 1``), as aggregates Spark computes right.

``(SELECT x FROM t WHERE t.k = outer.k ORDER BY y DESC LIMIT 1)`` is MySQL's idiom for
"the latest x". Spark 4.3 decorrelates a LIMIT in a correlated subquery itself
(``spark.sql.optimizer.decorrelateLimit``), and gets it wrong when the correlation compares
columns of different types: over employees' 1,000 rows, with an INT column compared with a
BIGINT one, 999 answers of the ORDER BY form and 87 of the plain ``LIMIT 1`` form came back
wrong, without an error. The replica's session turns that rewrite off
(``storage.spark.session``), which makes Spark refuse such subqueries; this module writes
the usual shapes as aggregates instead, which Spark decorrelates correctly:

- no ORDER BY: ``ANY_VALUE(x)``, MySQL's "some row" (none: NULL);
- ORDER BY keys all ascending (all descending): ``MIN_BY(x, key)`` (``MAX_BY``) over a
  struct of ``key IS NOT NULL`` and the key per ORDER BY item, so NULL keys come first
  ascending and last descending, as in MySQL; ties give any of the tied rows, as MySQL's
  order among equal keys is undefined.

Left alone: subqueries with an aggregate, GROUP BY, HAVING, DISTINCT, windows, OFFSET,
several columns, or ORDER BY keys in both directions (Spark refuses those when correlated,
1105, rather than answering wrong).
"""

from __future__ import annotations

from sqlglot import expressions as exp

_CLAUSES = ("group", "having", "distinct", "offset", "windows", "qualify")
#: Where a subquery stands for rows, not for one value.
_NOT_VALUES = (exp.From, exp.Join, exp.Lateral, exp.In, exp.Exists, exp.Any, exp.All)


def first_rows_as_aggregates(tree: exp.Expr) -> None:
    """Rewrite, in place, every scalar subquery of ``tree`` that takes its first row."""
    for sub in list(tree.find_all(exp.Subquery)):
        if isinstance(sub.parent, _NOT_VALUES):
            continue  # a derived table or a set of rows, not a value
        select = sub.this
        if isinstance(select, exp.Select) and _first_row(select):
            _rewrite(select)


def _first_row(select: exp.Select) -> bool:
    limit = select.args.get("limit")
    if limit is None or limit.expression != exp.Literal.number(1):
        return False
    if any(select.args.get(clause) for clause in _CLAUSES) or len(select.expressions) != 1:
        return False
    value = select.expressions[0]
    if isinstance(value, exp.Star) or any(isinstance(n, exp.AggFunc) for n in value.walk()):
        return False
    order = select.args.get("order")
    directions = {bool(item.args.get("desc")) for item in (order.expressions if order else [])}
    return len(directions) <= 1


def _rewrite(select: exp.Select) -> None:
    projection = select.expressions[0]
    alias = projection.alias if isinstance(projection, exp.Alias) else None
    value = projection.this if isinstance(projection, exp.Alias) else projection
    order = select.args.get("order")
    items = order.expressions if order is not None else []
    if not items:
        aggregate: exp.Expr = exp.AnyValue(this=value.copy())
    else:
        fields: list[exp.Expr] = []
        for index, item in enumerate(items):
            key = item.this.copy()
            known = exp.Not(this=exp.Is(this=key.copy(), expression=exp.Null()))
            fields += [exp.Literal.string(f"n{index}"), known, exp.Literal.string(f"k{index}"), key]
        rank = exp.Anonymous(this="NAMED_STRUCT", expressions=fields)
        name = "MAX_BY" if items[0].args.get("desc") else "MIN_BY"
        aggregate = exp.Anonymous(this=name, expressions=[value.copy(), rank])
    select.set("expressions", [exp.alias_(aggregate, alias) if alias else aggregate])
    select.set("order", None)
    select.set("limit", None)
