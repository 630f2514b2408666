"""The bodies of kept stored functions that a query can run: parameters, assignments and
one RETURN.

A stored function the replica can compute is one whose body (``BEGIN ... END`` or a single
statement) holds only ``DECLARE name[, ...] type [DEFAULT expr]``, ``SET name = expr``
(local variables, parameters, or user variables ``@name``, which then act as local ones: the
session's are not set) and a final ``RETURN expr``; the expressions may hold scalar
subqueries and calls of other stored functions (employees' ``emp_dept_id``,
``current_manager``). Anything else (IF, loops, cursors, handlers, SELECT ... INTO, a
statement after RETURN) gives 1235 naming the function and the statement.
https://dev.mysql.com/doc/refman/8.4/en/create-procedure.html
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import sqlglot
from sqlglot import expressions as exp
from sqlglot.errors import SqlglotError

from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.storage.objects import StoredObject
from spark_replica.sql_handlers.tables.object_parts import routine_parts, split_top_level

_NAME = r"`(?:[^`]|``)+`|[\w$]+"
_BLOCK = re.compile(
    rf"\s*(?:(?:{_NAME})\s*:\s*)?BEGIN\b(?P<inner>.*)\bEND\s*(?:{_NAME})?\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_DECLARE = re.compile(
    rf"DECLARE\s+(?P<names>(?:{_NAME})(?:\s*,\s*(?:{_NAME}))*)\s+(?P<type>.+?)"
    r"(?:\s+DEFAULT\s+(?P<default>.+))?$",
    re.IGNORECASE | re.DOTALL,
)
_ASSIGNMENT = re.compile(rf"(?P<target>@?(?:{_NAME}))\s*:?=\s*(?P<value>.+)$", re.DOTALL)
_NOT_VARIABLES = re.compile(r"^\s*(?:CURSOR|CONDITION|CONTINUE|EXIT|UNDO)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Assign:
    """``name`` (folded; ``@name`` for a user variable) takes ``value`` (None: NULL), as
    ``type`` when declared with one."""

    name: str
    value: exp.Expr | None
    type: str = ""


@dataclass(frozen=True, slots=True)
class FunctionBody:
    """A stored function as steps: ``params`` (folded name, MySQL type) take the arguments,
    ``steps`` run in order, ``result`` is the RETURN expression, converted to ``returns``."""

    schema: str
    name: str
    params: tuple[tuple[str, str], ...]
    returns: str
    steps: tuple[Assign, ...]
    result: exp.Expr


def refusal(function: str, what: str) -> ReplicaError:
    """1235 for a call of ``function`` that a query cannot compute, saying why."""
    return ReplicaError.from_code(
        ErrorCode.NOT_SUPPORTED_YET,
        f"calling the stored function {function}() in a query, with {what}",
    )


@lru_cache(maxsize=256)
def function_body(stored: StoredObject) -> FunctionBody:
    """The steps of ``stored`` (a kept function); 1235 for a body a query cannot run."""
    ref = stored.ref
    parts = routine_parts(stored)
    reader = _Reader(f"{ref.schema}.{ref.name}")
    listed = split_top_level(parts.params, ",")
    params = tuple(reader.param(text) for text in listed if text.strip())
    body = parts.body.strip()
    block = _BLOCK.match(body)
    statements = split_top_level(block.group("inner"), ";") if block else [body.rstrip(";")]
    steps: list[Assign] = []
    result: exp.Expr | None = None
    for statement in (s.strip() for s in statements):
        if not statement:
            continue
        if result is not None:
            raise reader.refuse(f"{_head(statement)} after RETURN")
        word = _head(statement)
        if word == "DECLARE":
            steps += reader.declare(statement)
        elif word == "SET":
            steps += reader.set(statement[3:])
        elif word == "RETURN":
            result = reader.expression(statement[6:])
        else:
            raise reader.refuse(f"{word} in its body")
    if result is None:
        raise reader.refuse("no RETURN in its body")
    return FunctionBody(ref.schema, ref.name, params, parts.returns, tuple(steps), result)


class _Reader:
    def __init__(self, function: str) -> None:
        self.function = function

    def refuse(self, what: str) -> ReplicaError:
        return refusal(self.function, what)

    def param(self, text: str) -> tuple[str, str]:
        words = text.split(None, 1)
        if len(words) < 2:
            raise self.refuse(f"the parameter {text.strip()!r}")
        return identifier(words[0]), words[1].strip()

    def declare(self, statement: str) -> list[Assign]:
        found = _DECLARE.match(statement)
        if found is None or _NOT_VARIABLES.match(found.group("type")):
            raise self.refuse("a DECLARE of no variable in its body")
        default = found.group("default")
        value = self.expression(default) if default is not None else None
        kind = found.group("type").strip()
        names = split_top_level(found.group("names"), ",")
        return [Assign(identifier(n), value, kind) for n in names]

    def set(self, text: str) -> list[Assign]:
        assigned = []
        for part in split_top_level(text, ","):
            found = _ASSIGNMENT.match(part.strip())
            if found is None or found.group("target").startswith("@@"):
                raise self.refuse(f"SET {part.strip()[:40]} in its body")
            target = found.group("target")
            name = "@" + identifier(target[1:]) if target.startswith("@") else identifier(target)
            assigned.append(Assign(name, self.expression(found.group("value"))))
        return assigned

    def expression(self, text: str) -> exp.Expr:
        try:
            tree = sqlglot.parse_one(f"SELECT {text}", read="mysql")
        except SqlglotError as error:
            raise self.refuse(f"the expression {text.strip()[:40]!r}") from error
        if not isinstance(tree, exp.Select) or len(tree.expressions) != 1:
            raise self.refuse(f"the expression {text.strip()[:40]!r}")
        value = tree.expressions[0]
        return value.this if isinstance(value, exp.Alias) else value


def identifier(text: str) -> str:
    """A routine's name for a variable or parameter, folded (they ignore case)."""
    text = text.strip()
    if text.startswith("`"):
        text = text[1:-1].replace("``", "`")
    return text.casefold()


def _head(statement: str) -> str:
    return statement.split(None, 1)[0].upper()
