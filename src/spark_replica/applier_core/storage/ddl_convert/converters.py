"""The converter of a column whose type changes: by the old type's kind, the function
that makes the new type's values of the old ones (``type_converter``)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from spark_replica.applier_core.storage.ddl_convert.faults import not_implemented
from spark_replica.applier_core.storage.ddl_convert.kinds import (
    Kind,
    SqlType,
    keeps_values,
    sql_type,
)
from spark_replica.applier_core.storage.ddl_convert.members import (
    enum_to_enum,
    member_names,
    set_to_set,
    text_to_enum,
    text_to_set,
)
from spark_replica.applier_core.storage.ddl_convert.numbers import (
    as_float,
    decimal_store,
    decimal_text,
    exact,
    integer_store,
    number_store,
    real_store,
    real_text,
    rint,
    text_to_number,
    to_year,
)
from spark_replica.applier_core.storage.ddl_convert.strings import binary_store, text_store
from spark_replica.applier_core.storage.ddl_convert.temporal import (
    date_to_datetime,
    datetime_to_date,
    fsp_change,
    temporal_text,
    text_to_temporal,
)

#: Old value → new value (NULL included). Raises ``ValueFault``.
Converter = Callable[[object], object]


def type_converter(old_type: str, new_type: str) -> Converter | None:
    """Old value → new value for a column whose type changes from ``old_type`` to
    ``new_type`` (NULL stays NULL); None when the values stay as they are."""
    old, new = sql_type(old_type), sql_type(new_type)
    if keeps_values(old, new):
        return None
    convert = converter(old, new)

    def converted(value: object) -> object:
        return None if value is None else convert(value)

    return converted


def converter(old: SqlType, new: SqlType) -> Callable[[object], object]:
    """Old value → new value (never called with NULL); a conversion not implemented here
    raises for every value."""
    maker = _BY_SOURCE.get(old.kind)
    found = maker(old, new) if maker is not None else None
    if found is not None:
        return found
    return _refusing(f"converting values of column '{{column}}' from {old.text} to {new.text}")


def _refusing(what: str) -> Callable[[object], object]:
    def refuse(value: object) -> object:
        raise not_implemented(what)

    return refuse


def _from_integer(old: SqlType, new: SqlType) -> Callable[[object], object] | None:
    if new.kind is Kind.YEAR:
        return to_year
    to_text = text_store(new)
    if to_text is not None:
        return lambda value: to_text(str(value))
    store = number_store(new)
    return None if store is None else lambda value: store(exact(value))


def _from_year(old: SqlType, new: SqlType) -> Callable[[object], object] | None:
    to_text = text_store(new)
    if to_text is not None:
        return lambda value: to_text(f"{int(exact(value)):04d}")
    return _from_integer(old, new) if new.kind is not Kind.YEAR else None


def _from_decimal(old: SqlType, new: SqlType) -> Callable[[object], object] | None:
    to_text = text_store(new)
    if to_text is not None:
        return lambda value: to_text(decimal_text(exact(value)))
    store = number_store(new)
    return None if store is None else lambda value: store(exact(value))


def _from_real(old: SqlType, new: SqlType) -> Callable[[object], object] | None:
    to_text = text_store(new)
    if to_text is not None:
        return lambda value: to_text(real_text(as_float(value), old.bits == 32, old.scale))
    if new.kind is Kind.INTEGER:
        store_int = integer_store(new)
        return lambda value: store_int(rint(as_float(value)))
    if new.kind is Kind.DECIMAL:
        store_decimal = decimal_store(new)
        return lambda value: store_decimal(Decimal(repr(as_float(value))))
    if new.kind is Kind.REAL:
        store_real = real_store(new)
        return None if store_real is None else lambda value: store_real(as_float(value))
    return None


def _from_string(old: SqlType, new: SqlType) -> Callable[[object], object] | None:
    maker = _FROM_TEXT.get(new.kind)
    if maker is not None:
        return maker(new)
    return text_store(new)


def _from_binary(old: SqlType, new: SqlType) -> Callable[[object], object] | None:
    return binary_store(new)


def _from_members(old: SqlType, new: SqlType) -> Callable[[object], object] | None:
    names = member_names(old)
    if new.kind is old.kind:
        return enum_to_enum(old, new) if old.kind is Kind.ENUM else set_to_set(old, new)
    to_text = text_store(new)
    return None if to_text is None else lambda value: to_text(names(value))


def _from_temporal(old: SqlType, new: SqlType) -> Callable[[object], object] | None:
    if new.kind is old.kind:
        return fsp_change(old, new)
    if {old.kind, new.kind} == {Kind.DATE, Kind.DATETIME}:
        return date_to_datetime(new.fsp) if new.kind is Kind.DATETIME else datetime_to_date
    to_text = text_store(new)
    if to_text is not None and old.kind in (Kind.DATE, Kind.DATETIME):
        return lambda value: to_text(temporal_text(value, old.fsp))
    return None


_Maker = Callable[[SqlType, SqlType], Callable[[object], object] | None]
_BY_SOURCE: dict[Kind, _Maker] = {
    Kind.INTEGER: _from_integer,
    Kind.YEAR: _from_year,
    Kind.DECIMAL: _from_decimal,
    Kind.REAL: _from_real,
    Kind.CHAR: _from_string,
    Kind.VARCHAR: _from_string,
    Kind.TEXT: _from_string,
    Kind.BINARY: _from_binary,
    Kind.VARBINARY: _from_binary,
    Kind.BLOB: _from_binary,
    Kind.ENUM: _from_members,
    Kind.SET: _from_members,
    Kind.DATE: _from_temporal,
    Kind.DATETIME: _from_temporal,
    Kind.TIMESTAMP: _from_temporal,
    Kind.TIME: _from_temporal,
}
_TextMaker = Callable[[SqlType], Callable[[object], object] | None]
_FROM_TEXT: dict[Kind, _TextMaker] = {
    Kind.INTEGER: text_to_number,
    Kind.DECIMAL: text_to_number,
    Kind.REAL: text_to_number,
    Kind.ENUM: text_to_enum,
    Kind.SET: text_to_set,
    Kind.DATE: text_to_temporal,
    Kind.DATETIME: text_to_temporal,
}
