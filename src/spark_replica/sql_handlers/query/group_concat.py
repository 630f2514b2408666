"""``GROUP_CONCAT(DISTINCT x ORDER BY y)`` as Spark can run it.

sqlglot writes GROUP_CONCAT as Spark's ``LISTAGG(...) WITHIN GROUP (ORDER BY ...)``, which
refuses DISTINCT unless the ordering is the distinct value itself. MySQL keeps each distinct
``x`` once and orders the list by ``y`` (sakila's ``actor_info`` view:
``GROUP_CONCAT(DISTINCT CONCAT(c.name, ': ', ...) ORDER BY c.name SEPARATOR '; ')``). Even
with ``y`` = ``x``, Spark 4.1 refuses it when ``x`` is not a string: LISTAGG's input is then
``CAST(x AS STRING)``, which it does not take for the ordering ``x`` (later Spark versions
do). Casting the ordering too would order numbers as text.

``distinct_ordered`` rewrites every such call, in place, to

    IF(ARRAY_MAX(COLLECT_LIST(s).v) IS NULL, NULL,
       ARRAY_JOIN(ARRAY_DISTINCT(SORT_ARRAY(COLLECT_LIST(s)).v), separator))

with ``s = NAMED_STRUCT('k0', y0, ..., 'v', CAST(x AS STRING))``: the pairs sorted by the
keys (then by value; REVERSE of that for DESC keys), the values kept in that order, each
once (its first place), NULL values skipped by ARRAY_JOIN, and NULL when no value is
left, as MySQL returns. Spark
computes the two identical COLLECT_LISTs once. No higher-order function (lambda) is used,
so ``x`` may hold a correlated subquery, as actor_info's does.

Where MySQL's list holds one ``x`` with several ``y`` values, MySQL places it by the first
row it reads; here by its smallest ``y``. Mixed ASC/DESC keys give 1235.
"""

from __future__ import annotations

from sqlglot import exp

from spark_replica.applier_core.errors import ErrorCode, ReplicaError

_VALUE = "v"


def distinct_ordered(tree: exp.Expr) -> None:
    """Rewrite every GROUP_CONCAT of ``tree`` with both DISTINCT and ORDER BY."""
    for call in list(tree.find_all(exp.GroupConcat)):
        order = call.this
        if not isinstance(order, exp.Order) or not isinstance(order.this, exp.Distinct):
            continue
        call.replace(_as_arrays(call, order.this.expressions, order.expressions))


def _as_arrays(call: exp.GroupConcat, values: list[exp.Expr], by: list[exp.Ordered]) -> exp.Expr:
    directions = {bool(item.args.get("desc")) for item in by}
    if len(directions) > 1:
        raise ReplicaError.from_code(
            ErrorCode.NOT_SUPPORTED_YET,
            "GROUP_CONCAT(DISTINCT ... ORDER BY ...) mixing ASC and DESC",
        )
    value = values[0] if len(values) == 1 else exp.Concat(expressions=values, safe=True)
    fields: list[exp.Expr] = []
    for index, item in enumerate(by):
        fields += [exp.Literal.string(f"k{index}"), item.this.copy()]
    fields += [exp.Literal.string(_VALUE), exp.cast(value.copy(), exp.DataType.Type.TEXT)]
    pairs = _call("COLLECT_LIST", _call("NAMED_STRUCT", *fields))
    ordered = _call("SORT_ARRAY", pairs)
    if directions.pop():
        ordered = _call("REVERSE", ordered)
    separator = call.args.get("separator") or exp.Literal.string(",")
    distinct = _call("ARRAY_DISTINCT", _values(ordered))
    joined = _call("ARRAY_JOIN", distinct, separator.copy())
    none_left = exp.Is(this=_call("ARRAY_MAX", _values(pairs.copy())), expression=exp.Null())
    return exp.If(this=none_left, true=exp.Null(), false=joined)


def _values(pairs: exp.Expr) -> exp.Expr:
    """The ``v`` field of every struct of ``pairs`` (an array of them), without a lambda."""
    return exp.Dot(this=exp.Paren(this=pairs), expression=exp.to_identifier(_VALUE))


def _call(name: str, *arguments: exp.Expr) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(arguments))
