"""MySQL's GTID functions in a SELECT without tables, as a DBA uses them on a replica:
``GTID_SUBSET(set1, set2)`` (1 when every GTID of set1 is in set2, else 0),
``GTID_SUBTRACT(set1, set2)`` (the GTIDs of set1 not in set2, in MySQL's normalized text) and
``WAIT_FOR_EXECUTED_GTID_SET(set[, timeout])`` (0 once every GTID of the set is executed, 1
when ``timeout`` seconds pass first; the session does the waiting, see ``waits``).
A NULL argument gives NULL; a malformed set 1772; a wrong argument count 1582.

https://dev.mysql.com/doc/refman/8.4/en/gtid-functions.html

Calls whose arguments are constants (user and system variables are constants by then) are
replaced by their value before the rest of the query is evaluated; nested calls work.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from sqlglot import expressions as exp

from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.gtid import GtidSet

#: The text of a set between GTIDs of different sources, as MySQL's functions return it.
SEPARATOR = ",\n"


def _subset(first: GtidSet, second: GtidSet) -> exp.Expression:
    return exp.Literal.number(int(first.is_subset(second)))


def _subtract(first: GtidSet, second: GtidSet) -> exp.Expression:
    return exp.Literal.string(first.subtract(second).format(SEPARATOR))


FUNCTIONS: dict[str, Callable[[GtidSet, GtidSet], exp.Expression]] = {
    "GTID_SUBSET": _subset,
    "GTID_SUBTRACT": _subtract,
}


def evaluate_gtid_functions(expression: exp.Expression) -> exp.Expression:
    """``expression`` with each GTID function call on constant arguments replaced by its
    value (in place; innermost calls first). Calls on other arguments are left as they are.

    Raises:
        ReplicaError: 1582 for a wrong number of arguments, 1772 for a malformed GTID set.
    """
    calls = [
        node
        for node in expression.find_all(exp.Anonymous, bfs=False)
        if node.name.upper() in FUNCTIONS
    ]
    for call in reversed(calls):  # depth-first order reversed: arguments before their call
        name = call.name.upper()
        arguments = call.expressions
        if len(arguments) != 2:
            raise ReplicaError.from_code(ErrorCode.WRONG_PARAMCOUNT_TO_NATIVE_FCT, name)
        constants = [_constant(argument) for argument in arguments]
        if any(value is _NOT_CONSTANT for value in constants):
            continue
        if any(value is None for value in constants):
            value: exp.Expression = exp.Null()
        else:
            first, second = (GtidSet.parse(str(constant)) for constant in constants)
            value = FUNCTIONS[name](first, second)
        expression = _replace(expression, call, value)
    return expression


def _replace(
    expression: exp.Expression, call: exp.Expression, value: exp.Expression
) -> exp.Expression:
    """``expression`` with ``call`` replaced by ``value`` in place (a result column named
    after the call, as MySQL names it)."""
    if call is expression:
        return value
    if isinstance(call.parent, exp.Select) and call.arg_key == "expressions":
        value = cast(exp.Expression, exp.alias_(value, call.sql(dialect="mysql"), quoted=True))
    call.replace(value)
    return expression


WAIT_FUNCTION = "WAIT_FOR_EXECUTED_GTID_SET"
#: Every function this module evaluates.
NAMES = frozenset({*FUNCTIONS, WAIT_FUNCTION})


@dataclass(frozen=True, slots=True)
class GtidWait:
    """One WAIT_FOR_EXECUTED_GTID_SET call: the set to wait for (None: a NULL argument, the
    answer is NULL at once) and the timeout in seconds (None: no limit)."""

    call: exp.Anonymous
    gtids: GtidSet | None
    timeout: float | None

    def answer(self, expression: exp.Expression, result: int | None) -> exp.Expression:
        """``expression`` with the call replaced by ``result`` (0 done, 1 timed out)."""
        value: exp.Expression = exp.Null() if result is None else exp.Literal.number(result)
        return _replace(expression, self.call, value)


def waits(expression: exp.Expression) -> list[GtidWait]:
    """The WAIT_FOR_EXECUTED_GTID_SET calls of ``expression`` whose arguments are constants.

    Raises:
        ReplicaError: 1582 for a wrong number of arguments, 1772 for a malformed GTID set,
            1210 for a negative timeout.
    """
    found = []
    for call in expression.find_all(exp.Anonymous):
        if call.name.upper() != WAIT_FUNCTION:
            continue
        arguments = call.expressions
        if not 1 <= len(arguments) <= 2:
            raise ReplicaError.from_code(ErrorCode.WRONG_PARAMCOUNT_TO_NATIVE_FCT, WAIT_FUNCTION)
        constants = [_constant(argument) for argument in arguments]
        if any(value is _NOT_CONSTANT for value in constants):
            continue
        if any(value is None for value in constants):
            found.append(GtidWait(call, None, None))
            continue
        gtids = GtidSet.parse(str(constants[0]))
        timeout = None
        if len(constants) == 2:
            try:
                timeout = float(str(constants[1]))
            except ValueError:
                timeout = -1.0
            if timeout < 0:
                raise ReplicaError.from_code(ErrorCode.WRONG_ARGUMENTS, WAIT_FUNCTION)
        found.append(GtidWait(call, gtids, timeout))
    return found


_NOT_CONSTANT = object()


def _constant(argument: exp.Expression) -> object:
    """A literal's text, None for NULL, ``-text`` for a negated number; else _NOT_CONSTANT."""
    if isinstance(argument, exp.Null):
        return None
    if isinstance(argument, exp.Literal):
        return str(argument.this)
    if isinstance(argument, exp.Neg) and isinstance(argument.this, exp.Literal):
        return f"-{argument.this.this}"
    return _NOT_CONSTANT
