"""Calls of kept stored functions in a query, computed as joins Spark can run.

Spark runs no stored routine. So each call ``f(a1, ..., an)`` that a SELECT evaluates
becomes a column of a *function table* joined to that SELECT::

    f(a1, a2)  ->  __f1.__r      FROM ... LEFT JOIN (F) AS __f1
                                   ON __f1.__p0 <=> a1 AND __f1.__p1 <=> a2

F computes f once for each distinct argument tuple that the SELECT's FROM clause yields (its
domain), one derived table per step of the body (``routine_bodies``): the arguments as the
parameters' types, then each assignment adding or replacing its variable's column, and last
the RETURN expression as the RETURNS type. A step's scalar subqueries read the previous
step's columns; they become grouped joins (``decorrelate``). Calls inside those expressions
become joins the same way, in the step or subquery that evaluates them (a call whose
arguments read only a step's variables, in that step). In a body, an unqualified name that
names a parameter or variable reads it (MySQL's rule: a routine's variables hide columns of
the same name), and tables and functions without a database are the function's.

Differences from MySQL: a function runs once per distinct argument tuple, so one with side
effects or non-deterministic functions (RAND(), UUID()) gives one value per tuple rather
than per row, and user variables its body sets stay unset in the session. A call whose
arguments read an enclosing query's columns fails in Spark (1105).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator

from sqlglot import expressions as exp

from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.storage.objects import StoredObject
from spark_replica.sql_handlers.query.decorrelate import Decorrelator, sources
from spark_replica.sql_handlers.query.routine_bodies import FunctionBody, function_body, refusal

#: The stored function ``(database, folded name)`` names, if the replica keeps it.
FunctionLookup = Callable[[tuple[str, str]], StoredObject | None]
#: Calls nested deeper than this are refused (MySQL refuses recursive functions: 1424).
_MAX_DEPTH = 16
_STEP = "__s"
_RESULT = "__r"
#: The domain's one column when the function takes no argument.
_NO_ARGUMENTS = "__one"
_TYPE = re.compile(r"\s*(\w+)\s*(?:\(([^)]*)\))?\s*(.*)", re.DOTALL)
_INTEGERS = frozenset({"tinyint", "smallint", "mediumint", "int", "integer", "bigint", "bit",
                       "bool", "boolean"})  # fmt: skip
_TEXT = frozenset({"char", "varchar", "tinytext", "text", "mediumtext", "longtext"})


def qualify_calls(tree: exp.Expr, schema: str, lookup: FunctionLookup) -> None:
    """Name ``schema`` in every unqualified call of a function it keeps (a view's or a
    function's body: their calls are in their own database, wherever they are read)."""
    for call in list(tree.find_all(exp.Anonymous)):
        if not isinstance(call.parent, exp.Dot) and lookup((schema, call.name.casefold())):
            qualifier = exp.to_identifier(schema, quoted=True)
            call.replace(exp.Dot(this=qualifier, expression=call.copy()))


def calls_kept_function(tree: exp.Expr, database: str | None, lookup: FunctionLookup) -> bool:
    """Whether ``tree`` calls a stored function the replica keeps (it then runs on Spark,
    even without a table)."""
    return _Inliner(lookup)._next_call(tree, database) is not None


def inline_functions(tree: exp.Expr, database: str | None, lookup: FunctionLookup) -> bool:
    """Replace, in place, every call of a kept stored function in ``tree`` by a join (above);
    True when there was one.

    Raises:
        ReplicaError: 1235 for a function whose body a query cannot compute, or calls nested
            too deep; 1318 for a call with the wrong number of arguments.
    """
    return _Inliner(lookup).inline(tree, database, 0)


class _Inliner:
    def __init__(self, lookup: FunctionLookup) -> None:
        self.lookup = lookup
        self.aliases: Iterator[str] = (f"__f{n}" for n in itertools.count(1))
        self.decorrelator = Decorrelator()

    def inline(self, tree: exp.Expr, database: str | None, depth: int) -> bool:
        found = False
        while (call := self._next_call(tree, database)) is not None:
            node, stored = call
            if depth >= _MAX_DEPTH:
                name = f"{stored.ref.schema}.{stored.ref.name}"
                raise refusal(name, f"calls nested more than {_MAX_DEPTH} deep")
            self._replace(node, function_body(stored), depth)
            found = True
        return found

    def _next_call(
        self, tree: exp.Expr, database: str | None
    ) -> tuple[exp.Expr, StoredObject] | None:
        for call in tree.find_all(exp.Anonymous):
            parent = call.parent
            dotted = isinstance(parent, exp.Dot) and parent.expression is call
            qualifier = parent.this if dotted and parent is not None else None
            schema = qualifier.name if isinstance(qualifier, exp.Identifier) else database
            stored = self.lookup((schema, call.name.casefold())) if schema else None
            if stored is not None:
                return (parent if dotted and parent is not None else call), stored
        return None

    def _replace(self, node: exp.Expr, body: FunctionBody, depth: int) -> None:
        call = node.expression if isinstance(node, exp.Dot) else node
        args = list(call.expressions)
        function = f"{body.schema}.{body.name}"
        if len(args) != len(body.params):
            raise ReplicaError.from_code(
                ErrorCode.SP_WRONG_NO_OF_ARGS, "FUNCTION", function, len(body.params), len(args)
            )
        select = _scope(node, args)
        if select is None:
            raise refusal(function, "the call outside a SELECT")
        alias = next(self.aliases)
        hidden = [f"__p{i}" for i in range(len(args))] or [_NO_ARGUMENTS]
        domain = exp.Select(
            expressions=[exp.alias_(a.copy(), f"__p{i}", quoted=True) for i, a in enumerate(args)],
            distinct=exp.Distinct(),
        )
        if not args:  # one row: the function's one value
            domain = exp.Select(expressions=[exp.alias_(exp.Literal.number(1), hidden[0])])
        elif select.args.get("from_") is not None:
            domain.set("from_", select.args["from_"].copy())
            domain.set("joins", [j.copy() for j in select.args.get("joins") or []])
        table = exp.Subquery(
            this=self._function_table(body, domain, hidden, depth),
            alias=exp.TableAlias(this=exp.to_identifier(alias, quoted=True)),
        )
        node.replace(exp.column(_RESULT, alias, quoted=True))
        if select.args.get("from_") is None:
            select.set("from_", exp.From(this=table))
            return
        matches = [
            exp.NullSafeEQ(this=exp.column(f"__p{i}", alias, quoted=True), expression=a.copy())
            for i, a in enumerate(args)
        ]
        on = exp.and_(*matches) if matches else exp.true()
        select.append("joins", exp.Join(this=table, side="LEFT", on=on))

    def _function_table(
        self, body: FunctionBody, domain: exp.Select, hidden: list[str], depth: int
    ) -> exp.Select:
        types = dict(body.params)
        values: dict[str, exp.Expr] = {
            name: _cast(exp.column(hidden[i], _STEP, quoted=True), kind)
            for i, (name, kind) in enumerate(body.params)
        }
        step = self._step(domain, hidden, values, body, depth)
        names = list(types)
        for assign in body.steps:
            if assign.type:
                types[assign.name] = assign.type
            value = _cast(self._read(assign.value, names, body.schema), types.get(assign.name, ""))
            if assign.name not in names:
                names.append(assign.name)
            current = {name: exp.column(name, _STEP, quoted=True) for name in names}
            step = self._step(step, hidden, {**current, assign.name: value}, body, depth)
        result = _cast(self._read(body.result, names, body.schema), body.returns)
        return self._step(step, hidden, {_RESULT: result}, body, depth)

    def _step(
        self,
        previous: exp.Select,
        hidden: list[str],
        values: dict[str, exp.Expr],
        body: FunctionBody,
        depth: int,
    ) -> exp.Select:
        """A derived table over ``previous``: the argument columns, then ``values``."""
        projections: list[exp.Expr] = [exp.column(h, _STEP, quoted=True) for h in hidden]
        projections += [exp.alias_(v, name, quoted=True) for name, v in values.items()]
        step = exp.Select(expressions=projections).from_(
            exp.Subquery(this=previous, alias=exp.TableAlias(this=exp.to_identifier(_STEP)))
        )
        self.inline(step, body.schema, depth + 1)
        self.decorrelator.step(step, f"{body.schema}.{body.name}")
        return step

    def _read(self, value: exp.Expr | None, names: list[str], schema: str) -> exp.Expr:
        """``value`` reading the previous step's columns for the variables it names, its
        tables and functions in ``schema``."""
        if value is None:
            return exp.Null()
        root = exp.Paren(this=value.copy())  # so that a lone variable can be replaced
        known = set(names)
        for column in list(root.find_all(exp.Column)):
            if not column.table and column.name.casefold() in known:
                column.replace(exp.column(column.name.casefold(), _STEP, quoted=True))
        for parameter in list(root.find_all(exp.Parameter)):
            name = "@" + parameter.name.casefold()
            if name in known:
                parameter.replace(exp.column(name, _STEP, quoted=True))
        for table in root.find_all(exp.Table):
            if not table.db and isinstance(table.this, exp.Identifier):
                table.set("db", exp.to_identifier(schema, quoted=True))
        qualify_calls(root, schema, self.lookup)
        return root


def _scope(node: exp.Expr, args: list[exp.Expr]) -> exp.Select | None:
    """The SELECT whose rows the call is evaluated on: the nearest one whose FROM clause
    names every table the arguments qualify their columns with (a call in a subquery whose
    arguments read only the enclosing step's variables belongs to that step)."""
    qualifiers = {c.table for a in args for c in a.find_all(exp.Column) if c.table}
    nearest = node.find_ancestor(exp.Select)
    select = nearest
    while select is not None:
        if qualifiers <= sources(select):
            return select
        select = select.find_ancestor(exp.Select)
    return nearest


def _cast(value: exp.Expr, mysql_type: str) -> exp.Expr:
    """``value`` converted to a variable's or RETURNS type as MySQL stores it there (no
    conversion for types a CAST cannot name, such as ENUM or JSON)."""
    target = _cast_target(mysql_type)
    if target is None or isinstance(value, exp.Null):
        return value
    return exp.Cast(this=value, to=exp.DataType.build(target, dialect="mysql"))


def _cast_target(mysql_type: str) -> str | None:
    found = _TYPE.match(mysql_type or "")
    if found is None:
        return None
    name, args, rest = found.group(1).lower(), found.group(2), found.group(3).lower()
    if name in _INTEGERS:
        return "UNSIGNED" if "unsigned" in rest else "SIGNED"
    if name in ("decimal", "numeric", "dec", "fixed"):
        return f"DECIMAL({args})" if args else "DECIMAL"
    if name in _TEXT:
        return f"CHAR({args})" if args and name in ("char", "varchar") else "CHAR"
    if name == "date":
        return "DATE"
    if name in ("datetime", "timestamp"):
        return f"DATETIME({args})" if args else "DATETIME"
    if name in ("double", "real", "float"):
        return "DOUBLE"
    return None
