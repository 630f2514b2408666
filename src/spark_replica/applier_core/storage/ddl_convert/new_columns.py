"""A new column's value in existing rows: its DEFAULT, NULL, or MySQL's implicit
default of a NOT NULL column (``fill_converter``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from spark_replica.applier_core.storage.ddl_convert.converters import Converter, converter
from spark_replica.applier_core.storage.ddl_convert.faults import ValueFault, not_implemented
from spark_replica.applier_core.storage.ddl_convert.kinds import (
    BINARIES,
    STRINGS,
    Kind,
    SqlType,
    sql_type,
)
from spark_replica.applier_core.storage.ddl_convert.strings import text_store


@dataclass(frozen=True, slots=True)
class Default:
    """Where a new column's value in existing rows comes from.

    A DEFAULT literal: ``literal`` is a string's text or a number as written (``number``);
    neither (``Default()``) is DEFAULT NULL. ``expression`` is what MySQL computes instead:
    ``CURRENT_TIMESTAMP``, ``(expr)``, ``AUTO_INCREMENT``, a generated column's ``AS (...)``;
    existing rows cannot be filled from it here.
    """

    literal: str | None = None
    number: bool = False
    expression: str | None = None


def fill_converter(name: str, type_text: str, nullable: bool, default: Default | None) -> Converter:
    """The value of new column ``name`` in each existing row (the converter ignores its
    argument): its DEFAULT, NULL without one, or for NOT NULL without one MySQL's implicit
    default (0, '', the first ENUM member ...)."""
    target = sql_type(type_text)
    try:
        value = _fill_value(name, target, nullable, default)
    except ValueFault as fault:
        failure = fault

        def fail(_: object) -> object:
            raise failure

        return fail
    return lambda _: value


def _fill_value(name: str, target: SqlType, nullable: bool, default: Default | None) -> object:
    if default is not None and default.expression is not None:
        raise not_implemented(f"filling existing rows of column '{name}' from {default.expression}")
    if default is not None and default.literal is not None:
        return _literal_value(target, default)
    if default is not None or nullable:
        return None
    return _implicit_default(name, target)


def _literal_value(target: SqlType, default: Default) -> object:
    literal = default.literal
    assert literal is not None
    if default.number and target.kind in STRINGS and not re.search("[eE]", literal):
        convert = text_store(target)
    else:
        convert = converter(SqlType(Kind.VARCHAR, length=1 << 32, text="VARCHAR"), target)
    assert convert is not None
    return convert(literal)


def _implicit_default(name: str, target: SqlType) -> object:
    """MySQL's implicit default of a NOT NULL column, which existing rows get."""
    if target.kind in (Kind.INTEGER, Kind.YEAR):
        return 0
    if target.kind is Kind.DECIMAL:
        return Decimal(0).scaleb(-target.scale)
    if target.kind is Kind.REAL:
        return 0.0
    if target.kind in STRINGS or target.kind is Kind.SET:
        return ""
    if target.kind in BINARIES:
        return b"\0" * target.length if target.kind is Kind.BINARY else b""
    if target.kind is Kind.ENUM and target.members:
        return target.members[0]
    if target.kind is Kind.TIME:
        return timedelta(0)
    raise not_implemented(f"filling existing rows of NOT NULL column '{name}' {target.text}")
